"""Classes (issue 22) as an attacker and a careless user would use them: hostile rosters,
guessed names and ids, inputs that must cost only their sender. Each test failed before
the fix it names."""

from __future__ import annotations

import pytest

from arena.service import classes as cls
from arena.service.accounts import Account, create_account, password_hasher
from arena.service.class_roster import parse_roster
from arena.service.classes import ClassError, NewClass, find_class
from arena.store import classes as stored
from arena.store.db import Store

HASHER = password_hasher(cheap=True)
PASSWORD = "correct horse"


@pytest.fixture
def teacher(store: Store) -> Account:
    """tess, the teacher of class 5b."""
    tess = create_account(store, "tess", PASSWORD, role="teacher", hasher=HASHER)
    cls.create_class(store, tess, NewClass(name="5b"))
    return tess


def test_a_roster_with_a_field_past_csvs_limit_is_one_sentence() -> None:
    # csv's field limit is 128 KiB: a pasted roster of one long line (the web's form takes
    # up to 1 MiB) raised csv.Error, a server error.
    with pytest.raises(ClassError, match="not a CSV"):
        parse_roster("a" * 200_000)


def test_a_roster_real_name_with_a_nul_is_refused_in_a_sentence(
    store: Store, teacher: Account
) -> None:
    # PostgreSQL's text refuses NUL: the import answered "the database did not answer" (503).
    with pytest.raises(ClassError, match="student 2's real name has a NUL"):
        cls.import_roster(store, teacher, "5b", "Ann\nBo\x00b\n", HASHER)
    assert [m.name for m in stored.member_rows(store, find_class(store, "5b").id)] == []
