"""Tables for spreadsheets: a tournament's standings and an assignment's grades, as CSV
and as JSON-ready rows (docs/assignments.md).

- :func:`standings_rows` / :func:`standings_csv`: any tournament's standings (the
  tournament's page and ``GET /api/v1/tournaments/NAME/standings``), best first.
- :func:`grade_rows` / :func:`grade_csv`: an assignment's grades, one row a student (its
  school id and e-mail where known, its state, grade and points first), with a group of
  columns per reference bot (the teacher's page and the API). The files for a school's
  gradebook (Canvas, Moodle) are arena.service.gradebooks'.

A text cell that a spreadsheet would take for a formula (it starts with ``=``, ``+``,
``-``, ``@``, a tab or a carriage return: a student's real name is free text) is written
with a ``'`` before it (OWASP's advice on CSV injection); numbers are written as numbers.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from arena.service.assignment_views import GradeRow
from arena.service.board_views import TournamentView
from arena.service.shapes import about

__all__ = [
    "GRADE_COLUMNS",
    "REFERENCE_COLUMNS",
    "STANDINGS_COLUMNS",
    "StandingsLine",
    "grade_columns",
    "grade_csv",
    "grade_rows",
    "spreadsheet_csv",
    "standings_csv",
    "standings_lines",
    "standings_rows",
]


@dataclass(frozen=True, slots=True)
class StandingsLine:
    """An entrant's line of a tournament's exported standings (a CSV's row, the API's)."""

    rank: int
    entrant: str = field(metadata=about("its label in the tournament"))
    name: str = field(metadata=about("the stored version it stands for (owner/bot vN)"))
    games: int
    wins: int
    win_rate: float
    points: int
    forfeits: int
    rating: float | None = field(metadata=about("Elo over this tournament's games"))
    rating_low: float | None = field(metadata=about("the rating's 95% interval"))
    rating_high: float | None


#: A tournament's standings, a column each (``entrant``: its label in the tournament;
#: ``name``: the stored version it stands for, as pages show it, else the label).
STANDINGS_COLUMNS = tuple(f.name for f in fields(StandingsLine))

#: A grade table's columns before the references' (docs/assignments.md).
GRADE_COLUMNS = (
    "student",
    "real_name",
    "school_id",
    "email",
    "state",
    "grade",
    "points",
    "version",
    "sha256",
    "submitted_at",
    "late",
    "rating",
    "rating_low",
    "rating_high",
)
#: Each reference R's columns in a grade table: ``R_score`` ... (in this order).
REFERENCE_COLUMNS = ("score", "elo", "elo_low", "elo_high", "verdict")

#: What a text cell may not start with: a spreadsheet would read a formula.
_FORMULA = ("=", "+", "-", "@", "\t", "\r")


def _round(value: float | None, digits: int = 1) -> float | None:
    """A number for a table (None for none, and for NaN and the infinities)."""
    if value is None or value != value or value in (float("inf"), float("-inf")):
        return None
    return round(value, digits)


def standings_lines(view: TournamentView) -> list[StandingsLine]:
    """The tournament's standings, best first."""
    return [
        StandingsLine(
            rank=row.rank,
            entrant=row.entrant,
            name=view.shown(row.entrant),
            games=row.games,
            wins=row.wins,
            win_rate=round(row.win_rate, 4),
            points=row.points,
            forfeits=row.forfeits,
            rating=_round(row.rating),
            rating_low=_round(row.low),
            rating_high=_round(row.high),
        )
        for row in view.standings
    ]


def standings_rows(view: TournamentView) -> list[dict[str, Any]]:
    """The tournament's standings, best first, as :data:`STANDINGS_COLUMNS` → value."""
    return [asdict(line) for line in standings_lines(view)]


def _cell(value: Any) -> Any:
    """A value as a CSV cell: text that a spreadsheet would run as a formula quoted with
    ``'``; None empty (booleans ``True``/``False``, as the other exports write them)."""
    if value is None:
        return ""
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


def grade_columns(references: Sequence[str]) -> list[str]:
    """A grade table's columns: :data:`GRADE_COLUMNS`, then :data:`REFERENCE_COLUMNS`
    for each reference label (``random_score``, ..., ``random_verdict``).

    >>> grade_columns(["random"])[-5:]
    ['random_score', 'random_elo', 'random_elo_low', 'random_elo_high', 'random_verdict']
    """
    return [
        *GRADE_COLUMNS,
        *(f"{label}_{column}" for label in references for column in REFERENCE_COLUMNS),
    ]


def grade_rows(rows: Sequence[GradeRow], references: Sequence[str]) -> list[dict[str, Any]]:
    """The grade table as :func:`grade_columns` → value, a row a student in ``rows``'
    order: times in ISO 8601, ratings and Elo to 0.1, scores to 0.001; a reference the
    student has no result against (nothing accepted) all None; ``grade`` and ``points``
    None while nothing is accepted or it is being graded (``state`` says which; a student
    whose every submission was rejected has 0 points)."""
    flat = []
    for row in rows:
        item: dict[str, Any] = {
            "student": row.student,
            "real_name": row.real_name,
            "school_id": row.school_id,
            "email": row.email,
            "state": row.state,
            "grade": row.grade,
            "points": row.points,
            "version": row.version,
            "sha256": row.sha256,
            "submitted_at": None if row.submitted is None else row.submitted.isoformat(),
            "late": row.late,
            "rating": _round(row.rating),
            "rating_low": _round(row.low),
            "rating_high": _round(row.high),
        }
        results = {result.reference: result for result in row.references}
        for label in references:
            result = results.get(label)
            values = (
                (None,) * len(REFERENCE_COLUMNS)
                if result is None
                else (
                    _round(result.score, 3),
                    _round(result.elo),
                    _round(result.low),
                    _round(result.high),
                    result.verdict,
                )
            )
            item.update(
                (f"{label}_{column}", value)
                for column, value in zip(REFERENCE_COLUMNS, values, strict=True)
            )
        flat.append(item)
    return flat


def grade_csv(rows: Sequence[GradeRow], references: Sequence[str]) -> str:
    """The grade table as CSV (:func:`grade_columns`, :func:`grade_rows`), safe to open
    in a spreadsheet (a real name is free text)."""
    return spreadsheet_csv(grade_rows(rows, references), grade_columns(references))
