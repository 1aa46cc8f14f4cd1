"""Classes (issue 22) as an attacker and a careless user would use them: hostile rosters,
guessed names and ids, inputs that must cost only their sender. Each test failed before
the fix it names."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from celery import Celery

from arena.service import classes as cls
from arena.service.accounts import Account, create_account, password_hasher
from arena.service.class_roster import read_roster
from arena.service.classes import ClassError, NewClass, find_class
from arena.store import classes as stored
from arena.store.db import Store
from tests.paths import REFERENCE_BOTS

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
        read_roster("a" * 200_000)


@pytest.mark.backends("sqlite", "postgresql")  # PostgreSQL's text refuses NUL
def test_a_roster_real_name_with_a_nul_is_refused_in_a_sentence(
    store: Store, teacher: Account
) -> None:
    # PostgreSQL's text refuses NUL: the import answered "the database did not answer" (503).
    with pytest.raises(ClassError, match="line 2: the roster has a NUL character"):
        cls.import_roster(store, teacher, "5b", "Ann\nBo\x00b\n", HASHER)
    assert [m.name for m in stored.member_rows(store, find_class(store, "5b").id)] == []


@pytest.fixture
def celery(url: str, tmp_path: Path) -> Iterator[Celery]:
    """A broker no worker reads (a directory of its own), the service's during the test."""
    from arena.service.broker import make_app, using

    with using(make_app(f"filesystem://{tmp_path / 'broker'}", None, url)) as app:
        yield app


def test_submitting_a_stored_version_again_and_again_is_held_to_the_hourly_quota(
    store: Store, teacher: Account, celery: Celery
) -> None:
    # A stored version's submission starts its gauntlet at once (a compare a reference,
    # up to max_games games each) and counted against no quota: a student (or a script
    # with an upload token) could submit one version hundreds of times a minute and
    # fill the workers for everyone. Now the class's uploads_per_hour holds for them too.
    from arena.service import assignments as assign
    from arena.service.accounts import authenticate
    from arena.store.models import Tournament

    store.add_bot_version("reference", "random", (REFERENCE_BOTS / "random.py").read_text(), {})
    cls.create_class(store, teacher, NewClass(name="small", uploads_per_hour=3))
    code = find_class(store, "small").join_code
    assert code is not None
    cls.join_class(store, HASHER, code, "ann", PASSWORD)
    ann = authenticate(store, "ann", PASSWORD, hasher=HASHER)
    assert ann is not None
    store.add_bot_version("ann", "mine", (REFERENCE_BOTS / "greedy.py").read_text(), {})
    now = datetime.now(UTC)
    assign.create_assignment(store, teacher, assign.NewAssignment(
        class_name="small", name="hw", references=("reference/random",),
        grades=(("C", ("random",)), ("F", ())), deadline=now + timedelta(days=1),
    ))  # fmt: skip
    for _ in range(3):
        assign.submit_version(store, ann, "small", "hw", "mine")
    with pytest.raises(ClassError, match="in the last hour"):
        assign.submit_version(store, ann, "small", "hw", "mine")
    with store.read() as session:
        assert session.query(Tournament).count() == 3


def test_a_teacher_cannot_take_over_an_account_that_joined_with_its_own_password(
    store: Store, teacher: Account
) -> None:
    # A user with an account of their own (bots, tokens, a password they chose) who joined
    # a class with one click could have their password reset by its teacher, who then
    # held a first-time password to the account: with ARENA_TEACHER_REQUESTS=open anyone
    # is a teacher, so a "join my class" link was an account takeover. Accounts the class
    # made (joined with the code as a new account, or imported) are still reset.
    from arena.service.accounts import authenticate

    code = find_class(store, "5b").join_code
    assert code is not None
    create_account(store, "vic", PASSWORD, hasher=HASHER)
    vic = authenticate(store, "vic", PASSWORD, hasher=HASHER)
    assert vic is not None
    cls.join_as(store, vic, code, "Victoria")
    cls.join_class(store, HASHER, code, "kid", PASSWORD)
    with pytest.raises(ClassError, match="vic joined with an account of their own"):
        cls.reset_password(store, teacher, "5b", "vic", HASHER)
    assert authenticate(store, "vic", PASSWORD, hasher=HASHER) is not None
    assert cls.reset_password(store, teacher, "5b", "kid", HASHER)


def test_a_roster_import_leaves_the_sites_hashing_slot_to_logins(
    store: Store, teacher: Account
) -> None:
    # A roster's first-time hashes held one slot of the site's hashing bound for the whole
    # batch: on this 2-core machine (1 slot) a roster of 500 (~40 s of hashes here) refused
    # every login, sign-up and join of the site meanwhile (503). Now a roster takes a slot
    # of its own (one import at a time a process; another is told to try again) and a
    # login hashes beside it.
    import threading

    from argon2 import PasswordHasher

    from arena.service.passwords import GuardedHasher, HashGuard, ServerBusy

    started, release = threading.Event(), threading.Event()

    class Gate(PasswordHasher):
        def hash(self, password: str | bytes, *, salt: bytes | None = None) -> str:
            started.set()
            assert release.wait(10)
            return super().hash(password, salt=salt)

    hasher = GuardedHasher(Gate(time_cost=1, memory_cost=8, parallelism=1), HashGuard(1))
    made: list[object] = []

    def run() -> None:
        try:
            made.append(cls.import_roster(store, teacher, "5b", "Ann\nBob\n", hasher))
        except BaseException as exc:
            made.append(exc)
            started.set()

    importing = threading.Thread(target=run)
    importing.start()
    try:
        assert started.wait(10) and not made, made
        with hasher.guard.slot():  # a login's hash, while the roster's are made
            pass
        with pytest.raises(ServerBusy, match="roster"):
            cls.import_roster(store, teacher, "5b", "Cy\n", hasher)
    finally:
        release.set()
        importing.join(10)
    assert len(made) == 1 and isinstance(made[0], cls.RosterImported), made
