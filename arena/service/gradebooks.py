"""An assignment's grades as files a school's gradebook imports as they are
(docs/assignments.md, "Into the gradebook"):

- ``table``: the whole grade table (arena.service.exports.grade_csv), for a spreadsheet;
- ``canvas``: Canvas's gradebook import, ``Student,ID,SIS User ID,SIS Login ID,Section``
  then one column named after the assignment holding its points, and a ``Points Possible``
  line. Canvas finds a student by its ID (the arena knows none: empty), else the SIS User
  ID (the school's id), else the SIS Login ID, else the name (the real name, else the
  pseudonym); a column whose name is no assignment of the course becomes a new one;
- ``moodle``: Moodle's CSV grade import, ``ID number,Email address,Full name``, then the
  assignment's points and a feedback column (the letter, or the state). Moodle matches
  students by the one column the teacher maps (ID number or e-mail address, ``by``), and
  a line whose student it cannot match stops the whole import: lines without that
  identifier, or without a grade yet, are left out, and said (:attr:`GradebookFile.left_out`).

Every file is UTF-8 with a byte-order mark (Excel reads UTF-8 only with it: "Núñez"
stays "Núñez"; Canvas and Moodle skip it) and ``\\r\\n`` lines, its text cells safe from
formulas (arena.service.exports.spreadsheet_csv); points are numbers (to 0.01), empty
where there is no grade (Canvas and Moodle then change nothing).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from arena.errors import ArenaError
from arena.service.assignment_views import GradeRow
from arena.service.exports import grade_csv, spreadsheet_csv

__all__ = [
    "BOM",
    "CANVAS_COLUMNS",
    "FORMATS",
    "MOODLE_COLUMNS",
    "MOODLE_KEYS",
    "GradebookError",
    "GradebookFile",
    "canvas_csv",
    "gradebook_file",
    "moodle_csv",
]

#: The byte-order mark Excel needs to read a CSV as UTF-8.
BOM = "\ufeff"
#: The files: the whole table, Canvas's import, Moodle's.
FORMATS = ("table", "canvas", "moodle")
#: Canvas's student columns, before the assignment's.
CANVAS_COLUMNS = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
#: Moodle's identifying columns, before the assignment's points and feedback.
MOODLE_COLUMNS = ("ID number", "Email address", "Full name")
#: What Moodle matches students by: the school's id (ID number) or the e-mail address.
MOODLE_KEYS = ("idnumber", "email")


class GradebookError(ArenaError):
    """An export asked for in a way there is none (the message says which are)."""


@dataclass(frozen=True, slots=True)
class GradebookFile:
    """A grade file: its text (with its byte-order mark), its name, and the students left
    out of it with why (Moodle's file only)."""

    text: str
    filename: str
    left_out: tuple[str, ...] = ()


def _name(row: GradeRow) -> str:
    return row.real_name or row.student


def canvas_csv(rows: Sequence[GradeRow], assignment: str, max_points: float) -> str:
    """The rows as Canvas's gradebook import: a line a student, a points column named
    ``assignment``, the ``Points Possible`` line (``max_points``) first.

    >>> canvas_csv([], "hw1", 10.0).splitlines()
    ['Student,ID,SIS User ID,SIS Login ID,Section,hw1', '    Points Possible,,,,,10.0']
    """
    columns = [*CANVAS_COLUMNS, assignment]
    lines: list[dict[str, Any]] = [{"Student": "    Points Possible", assignment: max_points}]
    lines += [
        {"Student": _name(row), "SIS User ID": row.school_id, "SIS Login ID": row.login,
         "Section": row.section, assignment: row.points}
        for row in rows
    ]  # fmt: skip
    return spreadsheet_csv(lines, columns)


def _feedback(row: GradeRow) -> str:
    if row.grade is None:
        return row.state
    return f"{row.grade}{' (late)' if row.late else ''}"


def moodle_csv(
    rows: Sequence[GradeRow], assignment: str, by: str = "idnumber"
) -> tuple[str, list[str]]:
    """The rows as Moodle's CSV grade import, matched ``by`` the school's id or e-mail: the
    text, and the students left out (no such identifier, or no grade yet), each with why.

    Raises:
        GradebookError: ``by`` is neither of :data:`MOODLE_KEYS`.
    """
    if by not in MOODLE_KEYS:
        raise GradebookError(
            f"Moodle matches students by {' or '.join(MOODLE_KEYS)}, not {by[:40]!r}."
        )
    kept, left_out = [], []
    for row in rows:
        key = row.school_id if by == "idnumber" else row.email
        if not key:
            what = "school id" if by == "idnumber" else "e-mail address"
            left_out.append(f"{row.student}: no {what} known")
        elif row.points is None:
            left_out.append(f"{row.student}: {row.state}, no grade yet")
        else:
            kept.append(
                {"ID number": row.school_id, "Email address": row.email,
                 "Full name": _name(row), assignment: row.points,
                 "Feedback": _feedback(row)}
            )  # fmt: skip
    return spreadsheet_csv(kept, [*MOODLE_COLUMNS, assignment, "Feedback"]), left_out


def gradebook_file(
    rows: Sequence[GradeRow],
    *,
    class_name: str,
    assignment: str,
    references: Sequence[str],
    max_points: float,
    kind: str = "table",
    by: str = "idnumber",
) -> GradebookFile:
    """The grade file ``kind`` (:data:`FORMATS`) of an assignment, with its byte-order
    mark and its name (``CLASS-ASSIGNMENT-grades.csv``, ``...-canvas.csv``,
    ``...-moodle.csv``).

    Raises:
        GradebookError: an unknown ``kind``, or ``by`` (Moodle's).
    """
    stem = f"{class_name}-{assignment}"
    if kind == "table":
        return GradebookFile(BOM + grade_csv(rows, references), f"{stem}-grades.csv")
    if kind == "canvas":
        return GradebookFile(BOM + canvas_csv(rows, assignment, max_points), f"{stem}-canvas.csv")
    if kind == "moodle":
        text, left_out = moodle_csv(rows, assignment, by)
        return GradebookFile(BOM + text, f"{stem}-moodle.csv", tuple(left_out))
    raise GradebookError(f"the grades come as {', '.join(FORMATS)}: not {kind[:40]!r}.")
