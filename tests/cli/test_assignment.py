"""``arena assignment create|status|grades|submit`` on a stored database (both backends):
the operator's commands, their one-line refusals, the grade table and its CSV."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from arena.cli.assignment import parse_grade
from arena.cli.common import USAGE_ERROR
from arena.cli.main import cli
from arena.service.accounts import password_hasher
from arena.service.classes import NewClass, create_class, join_class
from arena.service.permissions import OPERATOR
from arena.store.db import Store
from tests.paths import REFERENCE_BOTS, ZOO

HASHER = password_hasher(cheap=True)


@pytest.fixture(autouse=True)
def _wide_tables(monkeypatch: pytest.MonkeyPatch) -> None:
    """pytest-xdist sets COLUMNS=80, which would wrap the tables."""
    monkeypatch.setenv("COLUMNS", "200")


def invoke(url: str, *args: str) -> Result:
    return CliRunner().invoke(cli, [*args[:2], "--url", url, *args[2:]])


def test_an_assignment_from_creation_to_its_grades(url: str, store: Store, tmp_path: Path) -> None:
    store.add_bot_version("reference", "random", (REFERENCE_BOTS / "random.py").read_text(), {})
    row = create_class(store, OPERATOR, NewClass(name="c1"))
    assert row.join_code is not None
    join_class(store, HASHER, row.join_code, "ann", "correct horse battery", "Ann Smith")
    join_class(store, HASHER, row.join_code, "bob", "correct horse battery")
    made = invoke(url, "assignment", "create", "c1", "hw1", "--deadline", "+7d",
                  "--reference", "reference/random", "--grade", "C=random", "--grade", "F=",
                  "--max-games", "40", "--points", "C=10", "--points", "F=2",
                  "--runtime", "python", "--runtime", "python-numpy")  # fmt: skip
    assert made.exit_code == 0, made.output
    assert (
        "assignment c1/hw1: block" in made.output and "random (reference/random@1)" in made.output
    )
    assert "points C 10, F 2; runtimes python, python-numpy" in made.output
    refused = invoke(url, "assignment", "create", "c1", "hw2", "--deadline", "+7d",
                     "--reference", "reference/counter")  # fmt: skip
    assert refused.exit_code == USAGE_ERROR
    assert "reference/counter is not a stored bot: store it with" in refused.output
    broker = f"filesystem://{tmp_path / 'broker'}"
    js = invoke(url, "assignment", "submit", "c1", "hw1", str(ZOO / "first.js"),
                "--owner", "ann", "--unsandboxed", "--broker", broker)  # fmt: skip
    assert js.exit_code == USAGE_ERROR  # refused before its check: nothing stored
    assert (
        "assignment hw1 takes bots in python (.py files), python-numpy (.py files): "
        "first.js is not one." in js.output
    )
    sent = invoke(url, "assignment", "submit", "c1", "hw1", str(REFERENCE_BOTS / "greedy.py"),
                  "--owner", "ann", "--unsandboxed", "--broker", broker)  # fmt: skip
    assert sent.exit_code == 0, sent.output
    assert "c1/hw1: submission 1 of ann/greedy@1 for ann: grading" in sent.output
    teacher = invoke(url, "assignment", "submit", "c1", "hw1", "--version", "greedy",
                     "--owner", "nobody", "--broker", broker)  # fmt: skip
    assert teacher.exit_code != 0 and "no user called 'nobody'" in teacher.output
    status = invoke(url, "assignment", "status", "c1", "hw1")
    assert status.exit_code == 0, status.output
    assert "ann/greedy@1" in status.output and "random running" in status.output
    listed = json.loads(invoke(url, "assignment", "status", "c1", "hw1", "--json").output)
    assert [(s["student"], s["status"], s["kept"]) for s in listed] == [("ann", "grading", True)]
    table = invoke(url, "assignment", "grades", "c1", "hw1")
    assert "Ann Smith" in table.output and "grading" in table.output
    assert "not submitted" in table.output  # bob
    assert invoke(url, "class", "grades", "c1", "hw1").output == table.output
    rows = list(csv.DictReader(io.StringIO(invoke(url, "assignment", "grades", "c1", "hw1",
                                                  "--csv").output)))  # fmt: skip
    assert [(r["student"], r["real_name"], r["version"], r["random_verdict"], r["grade"])
            for r in rows] == [("ann", "Ann Smith", "ann/greedy@1", "running", ""),
                               ("bob", "", "", "", "")]  # fmt: skip
    assert list(rows[0]) == [
        "student", "real_name", "school_id", "email", "state", "grade", "points", "version",
        "sha256", "submitted_at", "late", "rating", "rating_low", "rating_high",
        "random_score", "random_elo", "random_elo_low", "random_elo_high", "random_verdict",
    ]  # fmt: skip
    assert [r["state"] for r in rows] == ["grading", "not submitted"]
    canvas = invoke(url, "assignment", "grades", "c1", "hw1", "--format", "canvas", "--bom")
    assert canvas.output.startswith("\ufeff") and canvas.output[1:].splitlines() == [
        "Student,ID,SIS User ID,SIS Login ID,Section,hw1", "    Points Possible,,,,,10.0",
        "Ann Smith,,,,,", "bob,,,,,",
    ]  # fmt: skip
    moodle = invoke(url, "assignment", "grades", "c1", "hw1", "--format", "moodle")
    assert moodle.stdout.splitlines() == ["ID number,Email address,Full name,hw1,Feedback"]
    assert "left out of Moodle's file: ann: no school id known" in moodle.stderr


def test_a_grade_is_read_as_typed() -> None:
    assert parse_grade("A=counter") == ("A", ("counter",))
    assert parse_grade("B=greedy+random") == ("B", ("greedy", "random"))
    assert parse_grade("F=") == ("F", ())
    result = CliRunner().invoke(cli, ["assignment", "create", "c", "a", "--deadline", "+1d",
                                      "--grade", "A"])  # fmt: skip
    assert result.exit_code == USAGE_ERROR and "is not GRADE=REF[+REF...]" in result.output
