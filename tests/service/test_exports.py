"""Tables for spreadsheets and gradebooks (arena.service.exports, arena.service.gradebooks):
the grade table's columns as the contract names them, a reference without a result left
empty, text cells a spreadsheet would run as formulas quoted (a real name is free text);
Canvas's and Moodle's imports as their importers read them (Canvas's GradebookImporter:
the header's student columns ending with Section, a Points Possible line, a student found
by SIS User ID, SIS Login ID or name; Moodle's: one identifying column, a line whose
student is unknown or blank stops the whole import), UTF-8 with a byte-order mark."""

from __future__ import annotations

import csv
import io
from datetime import UTC, datetime

import pytest

from arena.service.assignment_views import GradeRow, ReferenceResult
from arena.service.exports import grade_columns, grade_csv, grade_rows, spreadsheet_csv
from arena.service.gradebooks import (
    BOM,
    GradebookError,
    canvas_csv,
    gradebook_file,
    moodle_csv,
)

WHEN = datetime(2026, 11, 24, 7, 20, tzinfo=UTC)


def _result(reference: str, verdict: str, elo: float | None = 55.55) -> ReferenceResult:
    return ReferenceResult(reference, 0.61234, elo, -12.04, 123.46, verdict, 96, f"t-{reference}")


def _row(student: str, real_name: str | None, **changes: object) -> GradeRow:
    values: dict[str, object] = {
        "version": None, "sha256": None, "submitted": None, "late": False, "rating": None,
        "low": None, "high": None, "references": (), "grade": None, "state": "not submitted",
    }  # fmt: skip
    values.update(changes)
    return GradeRow(student, real_name, **values)  # type: ignore[arg-type]


ROWS = [
    _row("ada", "Ada Núñez", version="ada/mine v2", sha256="ab" * 32, submitted=WHEN,
         rating=1512.345, low=1480.0, high=1544.99, grade="C", state="graded", points=33.33,
         references=(_result("random", "pass"), _result("greedy", "fail", None)),
         school_id="S-1001", login="ada.n", email="ada@school.example", section="5B",
         submissions=2),
    _row("bob", "=HYPERLINK(\"x\")", school_id="@SUM(1)", email="bob@school.example"),
    _row("cy", None, version="cy/late v1", sha256="cd" * 32, submitted=WHEN, late=True,
         references=(_result("random", "running"), _result("greedy", "running")),
         state="grading", email="cy@school.example"),
    _row("dee", "Dee Dee", state="rejected: crash at import", points=0.0, school_id="S-1004",
         submissions=3),
]  # fmt: skip


def test_the_grade_columns_are_the_contracts() -> None:
    assert grade_columns(["random", "greedy"]) == [
        "student", "real_name", "school_id", "email", "state", "grade", "points", "version",
        "sha256", "submitted_at", "late", "rating", "rating_low", "rating_high",
        "random_score", "random_elo", "random_elo_low", "random_elo_high", "random_verdict",
        "greedy_score", "greedy_elo", "greedy_elo_low", "greedy_elo_high", "greedy_verdict",
    ]  # fmt: skip


def test_grade_rows_round_and_leave_missing_results_empty() -> None:
    ada, bob, cy, dee = grade_rows(ROWS, ["random", "greedy"])
    assert ada["submitted_at"] == "2026-11-24T07:20:00+00:00" and ada["rating"] == 1512.3
    assert (ada["random_score"], ada["random_elo"], ada["random_elo_low"]) == (0.612, 55.5, -12.0)
    assert ada["random_verdict"] == "pass" and ada["greedy_elo"] is None
    assert ada["greedy_verdict"] == "fail" and (ada["grade"], ada["points"]) == ("C", 33.33)
    assert ada["school_id"] == "S-1001" and ada["state"] == "graded"
    assert all(bob[f"random_{c}"] is None for c in ("score", "elo", "verdict"))
    assert bob["grade"] is None and bob["state"] == "not submitted" and bob["points"] is None
    assert cy["late"] is True and cy["greedy_verdict"] == "running" and cy["state"] == "grading"
    # every submission rejected: a state of its own, and 0 points, never an empty row
    assert (dee["state"], dee["points"], dee["grade"]) == ("rejected: crash at import", 0.0, None)


def test_the_csv_is_safe_in_a_spreadsheet() -> None:
    text = grade_csv(ROWS, ["random", "greedy"])
    rows = list(csv.DictReader(io.StringIO(text)))
    assert [r["student"] for r in rows] == ["ada", "bob", "cy", "dee"]
    assert rows[1]["real_name"] == '\'=HYPERLINK("x")'  # not a formula
    assert rows[1]["school_id"] == "'@SUM(1)"
    assert rows[0]["random_elo_low"] == "-12.0"  # numbers stay numbers, sign and all
    assert rows[1]["version"] == "" and rows[2]["late"] == "True"
    assert rows[3]["state"] == "rejected: crash at import" and rows[3]["points"] == "0.0"
    assert spreadsheet_csv([{"a": "@x", "b": "+1", "c": "\tx"}], ["a", "b", "c"]) == (
        "a,b,c\r\n'@x,'+1,'\tx\r\n"
    )


def _canvas_header_ok(header: list[str]) -> bool:
    """Canvas's GradebookImporter#header?: "Student" then "ID", then (after SIS User ID and
    SIS Login ID) its last student column is Section."""
    return (
        len(header) > 3
        and "Student" in header[0]
        and "ID" in header[1]
        and header[2] == "SIS User ID"
        and header[3] == "SIS Login ID"
        and "Section" in header[4]
    )


def test_canvas_reads_its_gradebook_columns_and_the_points() -> None:
    lines = list(csv.reader(io.StringIO(canvas_csv(ROWS, "hw1", 100.0))))
    header, possible, *students = lines
    assert header == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "hw1"]
    assert _canvas_header_ok(header)
    assert "Points Possible" in possible[0] and possible[5] == "100.0"
    by_name = {line[0]: line for line in students}
    # the arena knows no Canvas user id: Canvas finds the student by SIS id, login, name
    assert by_name["Ada Núñez"] == ["Ada Núñez", "", "S-1001", "ada.n", "5B", "33.33"]
    assert by_name["cy"][5] == "" and by_name["Dee Dee"][5] == "0.0"  # grading; rejected
    assert by_name['\'=HYPERLINK("x")'][2] == "'@SUM(1)"  # formula-safe
    assert len(students) == len(ROWS) and all(len(line) == 6 for line in lines)


def test_moodle_gets_only_the_students_it_can_match() -> None:
    text, left_out = moodle_csv(ROWS, "hw1", "idnumber")
    lines = list(csv.reader(io.StringIO(text)))
    assert lines[0] == ["ID number", "Email address", "Full name", "hw1", "Feedback"]
    assert lines[1:] == [
        ["S-1001", "ada@school.example", "Ada Núñez", "33.33", "C"],
        ["S-1004", "", "Dee Dee", "0.0", "rejected: crash at import"],
    ]
    assert left_out == ["bob: not submitted, no grade yet", "cy: no school id known"]
    text, left_out = moodle_csv(ROWS, "hw1", "email")
    assert [line[1] for line in csv.reader(io.StringIO(text))][1:] == ["ada@school.example"]
    assert "dee: no e-mail address known" in left_out
    with pytest.raises(GradebookError, match="Moodle matches students by idnumber or email"):
        moodle_csv(ROWS, "hw1", "name")


@pytest.mark.parametrize("kind", ["table", "canvas", "moodle"])
def test_every_file_is_utf8_with_a_byte_order_mark(kind: str) -> None:
    found = gradebook_file(
        ROWS, class_name="5b", assignment="hw1", references=["random", "greedy"],
        max_points=100.0, kind=kind,
    )  # fmt: skip
    assert found.text.startswith(BOM) and found.text.count(BOM) == 1
    data = found.text.encode("utf-8")
    assert data.startswith(b"\xef\xbb\xbf")  # what Excel needs to read "Núñez" as such
    assert "Ada Núñez" in data.decode("utf-8-sig") and "\r\n" in found.text
    assert found.filename == {"table": "5b-hw1-grades.csv", "canvas": "5b-hw1-canvas.csv",
                              "moodle": "5b-hw1-moodle.csv"}[kind]  # fmt: skip
    with pytest.raises(GradebookError, match="the grades come as table, canvas, moodle"):
        gradebook_file(ROWS, class_name="5b", assignment="hw1", references=[], max_points=1,
                       kind="excel")  # fmt: skip
