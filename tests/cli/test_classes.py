"""``arena class create|list|roster|join-code|teacher|reset-password`` on a stored database
(both backends): the operator's commands, their one-line refusals, the roster's printed
logins that log in once and must be changed."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from arena.cli.common import USAGE_ERROR
from arena.cli.main import cli
from arena.service.accounts import authenticate, create_account, password_hasher
from arena.store.db import Store
from tests.service.test_class_roster import ROSTERS

HASHER = password_hasher(cheap=True)


@pytest.fixture(autouse=True)
def _wide_tables(monkeypatch: pytest.MonkeyPatch) -> None:
    """pytest-xdist sets COLUMNS=80, which would wrap the tables."""
    monkeypatch.setenv("COLUMNS", "200")


def invoke(url: str, *args: str, input: str | None = None) -> Result:
    return CliRunner().invoke(cli, [*args[:2], "--url", url, *args[2:]], input=input)


def test_a_class_from_creation_to_a_password_reset(url: str, store: Store, tmp_path: Path) -> None:
    create_account(store, "mrs.t", "correct horse", role="teacher", hasher=HASHER)
    made = invoke(url, "class", "create", "5b", "--rules", "block", "--rules", "draw",
                  "--teacher", "mrs.t", "--join-hours", "2")  # fmt: skip
    assert made.exit_code == 0, made.output
    assert "class '5b'" in made.output and "block, draw" in made.output
    code = made.output.split("join code ")[1].split()[0]
    assert f"/join/{code}" in made.output
    listed = json.loads(invoke(url, "class", "list", "--json").output)
    assert [(c["name"], c["teachers"], c["students"], c["join_code"]) for c in listed] == [
        ("5b", ["mrs.t"], 0, code)
    ]
    roster = tmp_path / "canvas.csv"
    roster.write_bytes((ROSTERS / "canvas.csv").read_bytes())  # as Canvas exports it
    preview = invoke(url, "class", "roster", "5b", "--import", str(roster), "--preview")
    assert preview.exit_code == 0, preview.output
    assert "Canvas gradebook" in preview.output and "8 make, 0 update" in preview.output
    imported = invoke(url, "class", "roster", "5b", "--import", str(roster), "--school-logins")
    assert imported.exit_code == 0, imported.output
    logins = list(csv.DictReader(io.StringIO(imported.output)))
    assert [(r["real_name"], r["login"]) for r in logins][:2] == [
        ("Ada Lovelace", "alovelace"), ("Katherine Johnson", "kjohnson")
    ]  # fmt: skip
    # a first-time password logs in (its check reads the hash's own parameters; the login's
    # rehash is the cheap hasher's, not a full one's 0.2 CPU s)
    account = authenticate(store, "alovelace", logins[0]["password"], hasher=HASHER)
    assert account is not None and account.must_change_password
    again = invoke(url, "class", "roster", "5b", "--import", str(roster))
    assert again.exit_code == 0 and list(csv.DictReader(io.StringIO(again.output))) == []
    shown = invoke(url, "class", "roster", "5b")
    assert "Ada Lovelace" in shown.output and "kjohnson" in shown.output
    as_json = json.loads(invoke(url, "class", "roster", "5b", "--json").output)
    assert len(as_json) == 8
    assert ("alovelace", "roster", "S26-0001") in [
        (r["student"], r["via"], r["school_id"]) for r in as_json
    ]
    bad = invoke(url, "class", "roster", "5b", "--import", str(roster), "--columns", "name")
    assert bad.exit_code != 0 and "the roster has 19 columns" in bad.output
    rotated = invoke(url, "class", "join-code", "5b", "--rotate", "--hours", "1")
    assert rotated.exit_code == 0 and code not in rotated.output
    closed = invoke(url, "class", "join-code", "5b", "--close")
    assert "joining by code is closed" in closed.output
    reset = invoke(url, "class", "reset-password", "5b", "kjohnson")
    assert reset.exit_code == 0, reset.output
    password = reset.output.split("first-time password ")[1].split()[0]
    reset_to = authenticate(store, "kjohnson", password, hasher=HASHER)
    assert reset_to is not None and reset_to.must_change_password


def test_mistakes_are_one_line_each(url: str, store: Store) -> None:
    create_account(store, "bob", "correct horse", hasher=HASHER)
    assert invoke(url, "class", "create", "5b").exit_code == 0
    for args, said in [
        (("class", "create", "5b"), "a class called '5b' exists already: choose another name."),
        (("class", "create", "6c", "--rules", "chess"), "choose one or more rule sets among"),
        (("class", "teacher", "5b", "bob"), "bob is not a teacher: an admin gives"),
        (("class", "reset-password", "5b", "bob"), "no student 'bob' in class 5b"),
        (("class", "roster", "nope"), "no class 'nope'"),
        (("class", "join-code", "5b", "--rotate", "--close"), "choose --rotate or --close"),
    ]:
        out = invoke(url, *args)
        assert out.exit_code == USAGE_ERROR, (args, out.output)
        assert said in out.output and out.output.count("\n") == 1, out.output
