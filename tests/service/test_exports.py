"""Tables for spreadsheets (arena.service.exports): the grade table's columns as the
contract names them, a reference without a result left empty, and text cells a spreadsheet
would run as formulas quoted (a real name is free text)."""

from __future__ import annotations

import csv
import io
from datetime import UTC, datetime

from arena.service.assignment_views import GradeRow, ReferenceResult
from arena.service.exports import grade_columns, grade_csv, grade_rows, spreadsheet_csv

WHEN = datetime(2026, 11, 24, 7, 20, tzinfo=UTC)


def _result(reference: str, verdict: str, elo: float | None = 55.55) -> ReferenceResult:
    return ReferenceResult(reference, 0.61234, elo, -12.04, 123.46, verdict, 96, f"t-{reference}")


ROWS = [
    GradeRow("ada", "Ada Lovelace", "ada/mine v2", "ab" * 32, WHEN, False, 1512.345, 1480.0,
             1544.99, (_result("random", "pass"), _result("greedy", "fail", None)), "C"),
    GradeRow("bob", "=HYPERLINK(\"x\")", None, None, None, False, None, None, None, (), None),
    GradeRow("cy", None, "cy/late v1", "cd" * 32, WHEN, True, None, None, None,
             (_result("random", "running"), _result("greedy", "running")), None),
]  # fmt: skip


def test_the_grade_columns_are_the_contracts() -> None:
    assert grade_columns(["random", "greedy"]) == [
        "student", "real_name", "version", "sha256", "submitted_at", "late", "rating",
        "rating_low", "rating_high",
        "random_score", "random_elo", "random_elo_low", "random_elo_high", "random_verdict",
        "greedy_score", "greedy_elo", "greedy_elo_low", "greedy_elo_high", "greedy_verdict",
        "grade",
    ]  # fmt: skip


def test_grade_rows_round_and_leave_missing_results_empty() -> None:
    ada, bob, cy = grade_rows(ROWS, ["random", "greedy"])
    assert ada["submitted_at"] == "2026-11-24T07:20:00+00:00" and ada["rating"] == 1512.3
    assert (ada["random_score"], ada["random_elo"], ada["random_elo_low"]) == (0.612, 55.5, -12.0)
    assert ada["random_verdict"] == "pass" and ada["greedy_elo"] is None
    assert ada["greedy_verdict"] == "fail" and ada["grade"] == "C"
    assert all(bob[f"random_{c}"] is None for c in ("score", "elo", "verdict"))
    assert bob["grade"] is None and cy["late"] is True and cy["greedy_verdict"] == "running"


def test_the_csv_is_safe_in_a_spreadsheet() -> None:
    text = grade_csv(ROWS, ["random", "greedy"])
    rows = list(csv.DictReader(io.StringIO(text)))
    assert [r["student"] for r in rows] == ["ada", "bob", "cy"]
    assert rows[1]["real_name"] == '\'=HYPERLINK("x")'  # not a formula
    assert rows[0]["random_elo_low"] == "-12.0"  # numbers stay numbers, sign and all
    assert rows[1]["version"] == "" and rows[2]["late"] == "True"
    assert spreadsheet_csv([{"a": "@x", "b": "+1", "c": "\tx"}], ["a", "b", "c"]) == (
        "a,b,c\r\n'@x,'+1,'\tx\r\n"
    )
