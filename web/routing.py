"""The app's URL converters: ``<int:...>`` is a database id, 0 to :data:`MAX_ID`.

Flask's own ``int`` converter takes any number of digits, and an id past what the
databases store (SQLite's INTEGER, PostgreSQL's BIGINT: at most 2^63 - 1) then reached the
query and failed there (SQLite's driver raises ``OverflowError``: a 500). Registered once
for the whole app (:func:`init_routing`, before any blueprint), :class:`IdConverter` makes
such a number match no route: a 404 like any other unknown page.
"""

from __future__ import annotations

from flask import Flask
from werkzeug.routing import IntegerConverter, Map

__all__ = ["MAX_ID", "IdConverter", "init_routing"]

#: The largest whole number both databases store (a signed 64-bit integer).
MAX_ID = 2**63 - 1


class IdConverter(IntegerConverter):
    """``<int:name>``: a whole number 0 to :data:`MAX_ID` (a larger one matches no route)."""

    def __init__(
        self,
        map: Map,
        fixed_digits: int = 0,
        min: int | None = None,
        max: int | None = MAX_ID,
        signed: bool = False,
    ) -> None:
        bound = MAX_ID if max is None or max > MAX_ID else max
        super().__init__(map, fixed_digits, min, bound, signed)


def init_routing(app: Flask) -> None:
    """Make ``<int:...>`` :class:`IdConverter` for every route ``app`` adds from now on."""
    app.url_map.converters["int"] = IdConverter
