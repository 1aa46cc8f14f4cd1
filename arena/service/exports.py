"""Tables for spreadsheets: a tournament's standings and an assignment's grades, as CSV
and as JSON-ready rows (docs/classes.md).

- :func:`standings_rows` / :func:`standings_csv`: any tournament's standings (the
  tournament's page and ``GET /api/v1/tournaments/NAME/standings``), best first.
- :func:`grade_rows` / :func:`grade_csv`: an assignment's grades, one row a student, with
  a group of columns per reference bot (the teacher's page and the API).

A text cell that a spreadsheet would take for a formula (it starts with ``=``, ``+``,
``-``, ``@``, a tab or a carriage return: a student's real name is free text) is written
with a ``'`` before it (OWASP's advice on CSV injection); numbers are written as numbers.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping, Sequence
from typing import Any

from arena.service.views import TournamentView

__all__ = [
    "STANDINGS_COLUMNS",
    "spreadsheet_csv",
    "standings_csv",
    "standings_rows",
]

#: A tournament's standings, a column each (``entrant``: its label in the tournament;
#: ``name``: the stored version it stands for, as pages show it, else the label).
STANDINGS_COLUMNS = (
    "rank",
    "entrant",
    "name",
    "games",
    "wins",
    "win_rate",
    "points",
    "forfeits",
    "rating",
    "rating_low",
    "rating_high",
)

#: What a text cell may not start with: a spreadsheet would read a formula.
_FORMULA = ("=", "+", "-", "@", "\t", "\r")


def _round(value: float | None, digits: int = 1) -> float | None:
    """A number for a table (None for none, and for NaN and the infinities)."""
    if value is None or value != value or value in (float("inf"), float("-inf")):
        return None
    return round(value, digits)


def standings_rows(view: TournamentView) -> list[dict[str, Any]]:
    """The tournament's standings, best first, as :data:`STANDINGS_COLUMNS` → value."""
    return [
        {
            "rank": row.rank,
            "entrant": row.entrant,
            "name": view.shown(row.entrant),
            "games": row.games,
            "wins": row.wins,
            "win_rate": round(row.win_rate, 4),
            "points": row.points,
            "forfeits": row.forfeits,
            "rating": _round(row.rating),
            "rating_low": _round(row.low),
            "rating_high": _round(row.high),
        }
        for row in view.standings
    ]


def _cell(value: Any) -> Any:
    """A value as a CSV cell: text that a spreadsheet would run as a formula quoted with
    ``'``; None empty; booleans ``true``/``false``."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str) and value.startswith(_FORMULA):
        return "'" + value
    return value


def spreadsheet_csv(rows: Sequence[Mapping[str, Any]], columns: Sequence[str]) -> str:
    """``rows`` as CSV text (a header of ``columns``, then a line a row; ``\\r\\n`` as RFC
    4180 says), each cell made safe for a spreadsheet (see the module's docstring).

    >>> spreadsheet_csv([{"a": "=1+1", "b": -2.5, "c": None}], ["a", "b", "c"])
    "a,b,c\\r\\n'=1+1,-2.5,\\r\\n"
    """
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(columns)
    for row in rows:
        writer.writerow([_cell(row.get(column)) for column in columns])
    return out.getvalue()


def standings_csv(view: TournamentView) -> str:
    """The tournament's standings as CSV (:data:`STANDINGS_COLUMNS`), best first."""
    return spreadsheet_csv(standings_rows(view), STANDINGS_COLUMNS)
