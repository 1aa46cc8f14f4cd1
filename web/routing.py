"""The app's URL converters: ``<int:...>`` is a database id, 0 to :data:`MAX_ID`.

Flask's own ``int`` converter takes any number of digits, and an id past what the id
columns hold then reached the query and failed there: SQLite's driver raises
``OverflowError`` past 2^63 - 1 (a 500), PostgreSQL answers "integer out of range" past
2^31 - 1 (its ``INTEGER`` is 32-bit: a 503 as if the database were down). Registered once
for the whole app (:func:`init_routing`, before any route), :class:`IdConverter` makes such
a number match no route: a 404 like any other unknown page.
"""

from __future__ import annotations

from flask import Flask
from werkzeug.routing import IntegerConverter, Map

__all__ = ["MAX_ID", "IdConverter", "init_routing"]

#: The largest id (or version, or game index) both databases hold: the id columns are
#: ``INTEGER``, 32-bit on PostgreSQL (64-bit on SQLite). Raise it with the columns.
MAX_ID = 2**31 - 1


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
