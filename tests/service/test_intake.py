"""The one intake (arena/service/intake.py): each purpose (a placement, a competition entry,
an assignment submission) taken in and settled by the worker's acceptance by the purpose
the upload stores; a placement tied to its upload by a foreign key; the same upload sent
twice (in turn, or at the same instant from threads) stored once."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from celery import Celery
from sqlalchemy import func, select, update

from arena.errors import ArenaError
from arena.service import intake
from arena.service.accounts import Account, create_account, password_hasher
from arena.service.assignments import NewAssignment, create_assignment
from arena.service.classes import ClassError, NewClass, create_class, join_class
from arena.service.competitions import NewCompetition, competition_view, create_competition
from arena.service.intake import REPEAT_WINDOW_SECONDS, Purpose, Received, take_upload
from arena.service.matches import Config
from arena.service.permissions import OPERATOR
from arena.service.uploads import UploadError, placement_name, upload_view
from arena.service.work import accept_upload
from arena.store.db import Store
from arena.store.models import CompetitionEntry, Submission, Tournament, Upload
from tests.paths import REFERENCE_BOTS

HASHER = password_hasher(cheap=True)
GREEDY = (REFERENCE_BOTS / "greedy.py").read_bytes()
NOW = datetime.now(UTC).replace(microsecond=0)


@pytest.fixture
def celery(url: str, tmp_path: Path) -> Iterator[Celery]:
    """A broker no worker reads (a directory of its own), the service's during the test:
    the tests accept as a worker does."""
    from arena.service.broker import make_app, using

    with using(make_app(f"filesystem://{tmp_path / 'broker'}", None, url)) as app:
        yield app


@pytest.fixture
def ada(store: Store) -> Account:
    """A student of class c1 (assignment hw1 open), who may enter competition cup; the
    reference bots stored (a placement's field, the assignment's reference)."""
    for bot in ("random", "greedy", "counter"):
        store.add_bot_version("reference", bot, (REFERENCE_BOTS / f"{bot}.py").read_text(), {})
    teacher = create_account(store, "teach", "correct horse", role="teacher", hasher=HASHER)
    row = create_class(store, teacher, NewClass(name="c1", rule_sets=("block", "draw")))
    assert row.join_code is not None
    student = join_class(store, HASHER, row.join_code, "ada", "correct horse")
    create_assignment(
        store, teacher,
        NewAssignment(class_name="c1", name="hw1", deadline=NOW + timedelta(days=7),
                      opens=NOW - timedelta(hours=1), references=("reference/random",),
                      grades=(("pass", ("random",)), ("fail", ())), max_games=20, batch=2),
    )  # fmt: skip
    cup = NewCompetition(
        name="cup", deadline=NOW + timedelta(days=7), opens=NOW - timedelta(hours=1)
    )
    create_competition(store, OPERATOR, cup)
    return student


PURPOSES = {
    "placement": Purpose(),
    "competition": Purpose.entry("cup"),
    "assignment": Purpose.submission("c1", "hw1"),
}


def _count(store: Store, table: Any) -> int:
    with store.read() as session:
        return int(session.scalar(select(func.count()).select_from(table)) or 0)


def _placements(store: Store) -> list[tuple[str, int | None]]:
    with store.read() as session:
        return [
            (str(name), upload)
            for name, upload in session.execute(
                select(Tournament.name, Tournament.upload_id).where(
                    Tournament.upload_id.is_not(None)
                )
            )
        ]


@pytest.mark.parametrize("purpose", list(PURPOSES))
def test_each_purpose_is_taken_stored_and_settled_by_its_purpose(
    store: Store, celery: Celery, ada: Account, purpose: str
) -> None:
    received = take_upload(store, ada, "greedy.py", GREEDY, purpose=PURPOSES[purpose])
    upload = received.upload
    assert (upload.purpose, upload.status, upload.bot, received.repeated) == (
        purpose, "pending", "greedy", False
    )  # fmt: skip
    assert (upload.competition_id is not None) == (purpose == "competition")
    assert (upload.assignment_id is not None) == (purpose == "assignment")
    assert (received.entry is not None) == (purpose == "competition")
    assert (received.submission is not None) == (purpose == "assignment")
    assert accept_upload(store, upload.id, config=Config(), sandboxed=False) == "accepted"
    view = upload_view(store, upload.id)
    assert view is not None
    if purpose == "placement":  # a placement tournament, naming its upload
        assert _placements(store) == [(placement_name("ada", "greedy", 1), upload.id)]
        assert view.placement == placement_name("ada", "greedy", 1)
        return
    assert _placements(store) == [] and view.placement is None  # no placement
    if purpose == "competition":
        [entry] = competition_view(store, ada, "cup").entries
        assert (entry.status, entry.name) == ("active", "ada/greedy v1")
    else:
        with store.read() as session:
            [status] = session.scalars(select(Submission.status))
        assert status == "grading"  # its gauntlet started


def test_the_acceptance_follows_the_stored_purpose_and_probes_nothing(
    store: Store, celery: Celery, ada: Account, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A placement upload never asks whether it is an entry or a submission, and an entry
    never whether it is a submission: the upload says what it is for."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("probed")

    placement = take_upload(store, ada, "greedy.py", GREEDY).upload.id
    entry = take_upload(
        store, ada, "g2.py", GREEDY + b"\n#2\n", purpose=Purpose.entry("cup")
    ).upload.id
    monkeypatch.setattr(intake, "entry_accepted", refuse)
    monkeypatch.setattr(intake, "submission_accepted", refuse)
    assert accept_upload(store, placement, config=Config(), sandboxed=False) == "accepted"
    assert len(_placements(store)) == 1
    monkeypatch.undo()
    monkeypatch.setattr(intake, "submission_accepted", refuse)
    monkeypatch.setattr(intake, "create_placement", refuse)
    assert accept_upload(store, entry, config=Config(), sandboxed=False) == "accepted"
    assert len(_placements(store)) == 1


def test_a_placement_is_found_by_its_upload_not_by_its_name(
    store: Store, celery: Celery, ada: Account
) -> None:
    """A tournament that has the placement's name already is not the placement (the rule
    before took it for one, and the version was never placed); a renamed placement still
    is the upload's."""
    from arena.engine.rules import PRESETS
    from arena.service.matches import create_stored_tournament

    create_stored_tournament(
        store, name=placement_name("ada", "greedy", 1), rules=PRESETS["draw"],
        format="round-robin", entrants=["reference/random", "reference/greedy"], seed=1,
    )  # fmt: skip
    upload = take_upload(store, ada, "greedy.py", GREEDY).upload.id
    accept_upload(store, upload, config=Config(), sandboxed=False)
    name = f"{placement_name('ada', 'greedy', 1)}-upload-{upload}"
    assert _placements(store) == [(name, upload)]
    with store.write() as session:
        session.execute(update(Tournament).where(Tournament.upload_id == upload).values(name="x"))
    view = upload_view(store, upload)
    assert view is not None and view.placement == "x"  # renamed: still its placement
    assert intake.settle_upload(store, upload) == "accepted"
    assert len(_placements(store)) == 1  # settled again: none made twice


@pytest.mark.parametrize("purpose", list(PURPOSES))
def test_the_same_upload_sent_twice_is_one_upload_and_says_so(
    store: Store, celery: Celery, ada: Account, purpose: str
) -> None:
    first = take_upload(store, ada, "greedy.py", GREEDY, purpose=PURPOSES[purpose])
    again = take_upload(store, ada, "greedy.py", GREEDY, purpose=PURPOSES[purpose])
    assert again.repeated and again.upload.id == first.upload.id
    assert again.notice is not None and again.notice.startswith(
        f"already received: greedy.py as upload {first.upload.id} of your bot greedy (pending)"
    )
    assert first.notice is None
    assert (again.entry, again.submission) == (first.entry, first.submission)
    assert (_count(store, Upload), _count(store, CompetitionEntry), _count(store, Submission)) == (
        1, int(purpose == "competition"), int(purpose == "assignment")
    )  # fmt: skip
    # another purpose, another bot or another source is another upload (but the same
    # source is no second entry in a competition: tests/service/test_entries.py)
    if purpose != "competition":
        assert not take_upload(
            store, ada, "greedy.py", GREEDY, purpose=PURPOSES[purpose], name="twin"
        ).repeated
    other = "competition" if purpose != "competition" else "placement"
    assert not take_upload(store, ada, "greedy.py", GREEDY, purpose=PURPOSES[other]).repeated
    assert not take_upload(
        store, ada, "greedy.py", GREEDY + b"\n#\n", purpose=PURPOSES[purpose]
    ).repeated


def test_past_the_window_the_same_file_is_a_new_upload_and_a_key_still_repeats(
    store: Store, celery: Celery, ada: Account
) -> None:
    first = take_upload(store, ada, "greedy.py", GREEDY, key="k-1")
    later = datetime.now(UTC) + timedelta(seconds=REPEAT_WINDOW_SECONDS + 1)
    assert take_upload(store, ada, "greedy.py", GREEDY, key="k-1", now=later).repeated
    second = take_upload(store, ada, "greedy.py", GREEDY, now=later)
    assert not second.repeated and second.upload.id != first.upload.id
    assert take_upload(store, ada, "greedy.py", GREEDY, now=later).repeated


def test_a_key_sent_with_another_file_and_a_malformed_key_are_refused(
    store: Store, celery: Celery, ada: Account
) -> None:
    take_upload(store, ada, "greedy.py", GREEDY, key="k-1")
    with pytest.raises(
        UploadError, match=r"^this idempotency key \(or form\) was sent with another"
    ):
        take_upload(store, ada, "other.py", GREEDY + b"\n#\n", key="k-1")
    for bad in ("", "x" * 101, "é", "a\nb"):
        with pytest.raises(UploadError, match="an idempotency key is 1 to 100 printable ASCII"):
            take_upload(store, ada, "greedy.py", GREEDY, key=bad)
    assert _count(store, Upload) == 1


def test_a_repeat_is_not_a_second_upload_for_the_quota(
    store: Store, celery: Celery, ada: Account
) -> None:
    from arena.service.classes import find_class, join_as

    create_class(store, OPERATOR, NewClass(name="tight", uploads_per_hour=1))
    code = find_class(store, "tight").join_code
    assert code is not None
    join_as(store, ada, code)
    take_upload(store, ada, "greedy.py", GREEDY)
    assert take_upload(store, ada, "greedy.py", GREEDY).repeated
    with pytest.raises(ClassError, match="you have made 1 uploads in the last hour"):
        take_upload(store, ada, "greedy.py", GREEDY + b"\n#\n")


def test_an_unknown_purpose_is_refused(store: Store, celery: Celery, ada: Account) -> None:
    with pytest.raises(UploadError, match="an upload is for one of placement, competition, "):
        take_upload(store, ada, "greedy.py", GREEDY, purpose=Purpose("ladder"))


def _at_once(
    count: int, celery: Celery, send: Callable[[], Received]
) -> list[Received | BaseException]:
    """``send`` called by ``count`` threads released at the same instant, each sending
    through ``celery``; what each got."""
    from arena.service.broker import using

    barrier = threading.Barrier(count)
    results: list[Received | BaseException] = [ArenaError("not run")] * count

    def run(i: int) -> None:
        barrier.wait()
        try:
            with using(celery):  # (a thread starts with a context of its own)
                results[i] = send()
        except BaseException as exc:
            results[i] = exc

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return results


@pytest.mark.backends("sqlite", "postgresql")  # the unique keys under concurrent writers
@pytest.mark.parametrize("key", [None, "same-key"], ids=["window", "client-key"])
@pytest.mark.parametrize("purpose", ["placement", "competition"])
def test_the_same_upload_sent_at_the_same_instant_is_stored_once(
    store: Store, celery: Celery, ada: Account, purpose: str, key: str | None
) -> None:
    """Threads send one upload at once: the unique keys in the database let one insert
    and make every other return it (no check-then-insert race), on both databases."""
    results = _at_once(
        6,
        celery,
        lambda: take_upload(store, ada, "greedy.py", GREEDY, purpose=PURPOSES[purpose], key=key),
    )
    received = [r for r in results if isinstance(r, Received)]
    assert len(received) == 6, [r for r in results if not isinstance(r, Received)]
    assert len({r.upload.id for r in received}) == 1
    assert sorted(r.repeated for r in received) == [False] + [True] * 5
    assert _count(store, Upload) == 1
    assert _count(store, CompetitionEntry) == int(purpose == "competition")


def test_the_intake_is_the_one_place_that_stores_an_upload() -> None:
    """Every upload (the pages, the API, entries, submissions) enters through
    arena.service.intake: no other module of the arena, the web or the workers stores one."""
    from tests.paths import REPO

    callers = sorted(
        str(path.relative_to(REPO))
        for folder in ("arena", "web", "workers")
        for path in (REPO / folder).rglob("*.py")
        if "insert_upload(" in path.read_text(encoding="utf-8")
    )
    assert callers == ["arena/service/intake.py", "arena/store/uploads.py"]
