"""How a view is shown as JSON: the service's view dataclasses are the API's response
shapes (declared once; docs/api.md), and a field's ``metadata`` says what JSON needs beyond
its type.

A field's metadata may hold pydantic's ``description``, ``serialization_alias`` (its name in
JSON), ``exclude`` (kept out of JSON: a page's detail, or private) and, for what a request
sends, ``min_length`` and ``max_length``, which pydantic reads for the API's OpenAPI
document and its checks, and :data:`DIGITS`, the digits a float keeps in JSON.
:func:`plain` makes the JSON document of a view by the same metadata: a time in ISO 8601
(:meth:`datetime.isoformat`), a float rounded (an infinity or NaN, which JSON lacks, null),
a tuple a list, a value of :data:`TEXT` its text. Standard library only: the web's API
reads the types with pydantic.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from datetime import datetime
from typing import Any, TypeVar

from arena.service.display import BotName

__all__ = ["DIGITS", "ELO", "HIDDEN", "TEXT", "about", "extend", "plain"]

V = TypeVar("V")

#: The metadata key of the digits a float field keeps in JSON.
DIGITS = "digits"
#: A field left out of JSON.
HIDDEN: Mapping[str, Any] = {"exclude": True}
#: A rating or an Elo difference: one decimal in JSON.
ELO: Mapping[str, Any] = {DIGITS: 1}
#: The types shown in JSON as their text, ``str(value)``: a bot's display name.
TEXT: tuple[type, ...] = (BotName,)


def about(
    description: str | None = None,
    *,
    digits: int | None = None,
    name: str | None = None,
    min_length: int | None = None,
    max_length: int | None = None,
) -> dict[str, Any]:
    """A field's metadata: its ``description`` in the API's document, the ``digits`` it
    keeps in JSON, its ``name`` in JSON (default: the field's); the shortest and longest a
    request's text or list may be."""
    found: dict[str, Any] = {
        "description": description,
        DIGITS: digits,
        "serialization_alias": name,
        "min_length": min_length,
        "max_length": max_length,
    }
    return {key: value for key, value in found.items() if value is not None}


def extend(view: Any, kind: type[V], **more: Any) -> V:
    """``view`` as ``kind``, a subclass of its type adding fields (an answer of the API: a
    view and its URL), with ``more`` (they may also replace the view's own)."""
    given = {f.name: getattr(view, f.name) for f in dataclasses.fields(view) if f.init}
    return kind(**{**given, **more})


def plain(value: Any, digits: int | None = None) -> Any:
    """``value`` (a view, or what one holds) as JSON's values: dicts, lists, strings,
    numbers, booleans and None, by its fields' metadata (the module's docstring)."""
    if isinstance(value, TEXT):
        return str(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            field.metadata.get("serialization_alias", field.name): plain(
                getattr(value, field.name), field.metadata.get(DIGITS)
            )
            for field in dataclasses.fields(value)
            if not field.metadata.get("exclude")
        }
    if isinstance(value, float):
        if not math.isfinite(value):
            return None
        return value if digits is None else round(value, digits)
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, list | tuple):
        return [plain(item, digits) for item in value]
    if isinstance(value, dict):
        return {key: plain(item, digits) for key, item in value.items()}
    return value
