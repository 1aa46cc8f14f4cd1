"""Submissions that cannot be lost (issue 31, item 1), on SQLite, in-process: a source sent
again (another bot's name, past the repeat window, a stored version of it) is one entry and
costs no daily entry; a new version plays its placement games beside the placed one and
displaces it only once placed, after the deadline too (a grace), or stays out with a
sentence; each entrant chooses which versions play the final (limits, permissions), and the
final's start takes that choice. Ladder matches are "played" by writing their results
(tests/service/ladder_fixtures.py)."""

from __future__ import annotations

import random
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from celery import Celery

from arena.errors import PermissionDenied
from arena.service import competitions as comp
from arena.service import entries
from arena.service.accounts import Account, create_account, password_hasher
from arena.service.broker import install, make_app
from arena.service.clock import tick_competition
from arena.service.competitions import CompetitionError, NewCompetition
from arena.service.intake import REPEAT_WINDOW_SECONDS
from arena.service.matches import Config
from arena.service.permissions import OPERATOR
from arena.service.work import accept_upload
from arena.store import clock as stored
from arena.store.db import Store
from arena.store.models import CompetitionEntry, Upload
from tests.paths import REFERENCE_BOTS
from tests.service.ladder_fixtures import add_version, make_competition, play
from tests.uploads import enter_upload

HASHER = password_hasher(cheap=True)
GREEDY = (REFERENCE_BOTS / "greedy.py").read_bytes()
NOW = datetime.now(UTC).replace(microsecond=0)
OPENS = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
DEADLINE = OPENS + timedelta(hours=2)
ENTRANTS = ("ann", "bob", "cat", "dan")


@pytest.fixture
def celery(tmp_path: Path) -> Iterator[Celery]:
    """A broker no worker reads, the service's while the test runs."""
    app = make_app(f"filesystem://{tmp_path / 'broker'}")
    previous = install(app)
    yield app
    install(previous)
    app.close()


@pytest.fixture
def users(store: Store) -> dict[str, Account]:
    return {
        name: create_account(store, name, "correct horse", hasher=HASHER)
        for name in (*ENTRANTS, "eve")
    }


def _count(store: Store, table: Any) -> int:
    with store.read() as session:
        return len(session.query(table).all())


# --- one entry a source -----------------------------------------------------------------------


def test_the_same_source_sent_again_is_one_entry_and_costs_no_daily_entry(
    store: Store, celery: Celery, users: dict[str, Account]
) -> None:
    new = NewCompetition(
        name="cup", deadline=NOW + timedelta(days=7), opens=NOW - timedelta(hours=1),
        daily_submissions=1,
    )  # fmt: skip
    comp.create_competition(store, OPERATOR, new)
    ann = users["ann"]
    first = enter_upload(store, ann, "cup", "greedy.py", GREEDY)
    # the same bytes as another bot while the first is checked: not a second entry
    with pytest.raises(CompetitionError, match=r"same source as your upload \d+, still being"):
        enter_upload(store, ann, "cup", "twin.py", GREEDY, "twin")
    assert first.upload_id is not None
    accept_upload(store, first.upload_id, config=Config(), sandboxed=False)
    # past the repeat window (a reload, another day's double click): the version it is
    later = datetime.now(UTC) + timedelta(seconds=REPEAT_WINDOW_SECONDS + 1)
    with pytest.raises(CompetitionError) as refused:
        enter_upload(store, ann, "cup", "greedy.py", GREEDY, now=later)
    assert str(refused.value) == (
        "greedy.py is the same source as version 1 of your bot greedy (entry 1 in cup, "
        "active): it is not a new entry, and it costs none of your daily entries."
    )
    # the command line's way: the stored version entered again (the operator for ann)
    [(version_id, *_)] = [(e.version_id,) for e in comp.competition_view(store, ann, "cup").entries]
    assert version_id is not None
    with pytest.raises(CompetitionError, match=r"\(version 1 of your bot greedy\) is entered"):
        comp.enter_with_version(store, OPERATOR, "cup", version_id, owner="ann")
    assert (_count(store, Upload), _count(store, CompetitionEntry)) == (1, 1)
    # none of it cost the daily entry (1 a day): ann's next is refused for the limit only
    view = comp.competition_view(store, ann, "cup")
    assert [e.status for e in view.entries] == ["active"] and view.next_entry is not None
    with pytest.raises(CompetitionError, match="1 entries a user in any 24 hours"):
        enter_upload(store, ann, "cup", "other.py", GREEDY + b"# another\n", "other")


# --- placement before displacement ------------------------------------------------------------

STRENGTH = {"ann": 1700.0, "bob": 1500.0, "cat": 1400.0, "dan": 1300.0}


def _competition(store: Store, **settings: Any) -> tuple[int, dict[str, int]]:
    return make_competition(
        store, "cup", list(ENTRANTS), opens=OPENS, deadline=DEADLINE,
        settings={"in_flight": 8, **settings},
    )  # fmt: skip


def _run(
    store: Store, competition_id: int, strength: dict[int, float], start: datetime, ticks: int
) -> tuple[datetime, list[str]]:
    """Tick and play what each tick added, a minute apart; the time after, the actions."""
    rng, now, actions = random.Random(5), start, list[str]()
    for _ in range(ticks):
        tick = tick_competition(store, competition_id, now)
        actions += tick.actions
        play(store, tick.added, strength, rng, now)
        now += timedelta(minutes=1)
    return now, actions


def _status(store: Store, competition_id: int) -> dict[int, tuple[str, bool]]:
    """Each version's entry: (status, placed)."""
    return {
        v: (e.status, e.placed is not None)
        for v, e in stored.entry_states(store, competition_id).items()
    }


def _finalists(store: Store, competition_id: int) -> list[int]:
    clock = stored.clock_of(store, competition_id)
    assert clock is not None and clock.final_id is not None
    return [int(v) for v in stored.tournament_settings(store, clock.final_id)["finalists"]]


def test_a_new_version_displaces_the_placed_one_only_once_placed_even_at_the_deadline(
    store: Store, celery: Celery, users: dict[str, Account]
) -> None:
    competition_id, versions = _competition(store)
    strength = {versions[n]: s for n, s in STRENGTH.items()}
    now, _ = _run(store, competition_id, strength, OPENS, 6)
    assert all(placed for _, placed in _status(store, competition_id).values())
    v1 = versions["ann"]
    v2 = add_version(store, "ann", source="# ann v2\n")
    strength[v2] = 1650.0
    entry = comp.enter_with_version(store, users["ann"], "cup", v2, now=now)
    assert entry.status == "placing" and any("placement games" in n for n in entry.notices)
    assert _status(store, competition_id)[v1] == ("active", True)  # it plays on meanwhile
    now, _ = _run(store, competition_id, strength, now, 4)
    assert _status(store, competition_id)[v2] == ("active", True)
    assert _status(store, competition_id)[v1] == ("superseded", True)
    # the case: a last version ten seconds before the deadline, with 0 games
    v3 = add_version(store, "ann", source="# ann v3\n")
    strength[v3] = 1600.0
    last = DEADLINE - timedelta(seconds=10)
    assert comp.enter_with_version(store, users["ann"], "cup", v3, now=last).status == "placing"
    _, actions = _run(store, competition_id, strength, DEADLINE, 6)
    assert actions.index("placement") < actions.index("final")  # placed before the final
    assert _status(store, competition_id)[v3] == ("active", True)
    finalists = _finalists(store, competition_id)
    ann = [v for v in finalists if v in (v1, v2, v3)]
    assert v3 in ann and len(ann) == 2  # her latest placed and her best-rated
    assert len(finalists) == 5


def test_a_version_not_placed_by_the_close_stays_out_with_a_sentence(
    store: Store, celery: Celery, users: dict[str, Account]
) -> None:
    competition_id, versions = _competition(store, placement_grace_seconds=0)
    strength = {versions[n]: s for n, s in STRENGTH.items()}
    _run(store, competition_id, strength, OPENS, 6)
    late = add_version(store, "ann", source="# ann v2\n")
    last = DEADLINE - timedelta(seconds=10)
    assert comp.enter_with_version(store, users["ann"], "cup", late, now=last).status == "placing"
    _, actions = _run(store, competition_id, strength, DEADLINE, 2)
    assert "final" in actions and "placement" not in actions
    finalists = _finalists(store, competition_id)
    assert late not in finalists and versions["ann"] in finalists  # her placed one plays
    mine = {e.version_id: e for e in comp.competition_view(store, users["ann"], "cup").entries}
    assert (mine[late].reason or "").startswith(
        "not placed when the ladder closed at 2026-01-01 14:00 UTC: it had played 0 of its 8 "
        "placement games"
    )
    assert any(n.startswith("Not placed when the ladder closed") for n in mine[late].notices)


# --- the final's choice -----------------------------------------------------------------------


def test_the_final_choice_is_the_entrants_within_its_limit_and_the_final_takes_it(
    store: Store, celery: Celery, users: dict[str, Account]
) -> None:
    competition_id, versions = _competition(store, final_versions=1)
    strength = {versions[n]: s for n, s in STRENGTH.items()}
    now, _ = _run(store, competition_id, strength, OPENS, 6)
    v1 = versions["ann"]
    v2 = add_version(store, "ann", source="# ann v2\n")
    strength[v2] = 1300.0  # weaker: the default (her best) would be v1
    comp.enter_with_version(store, users["ann"], "cup", v2, now=now)
    now, _ = _run(store, competition_id, strength, now, 4)
    shown = entries.final_choice(store, users["ann"], "cup")
    assert (shown.limit, shown.chosen, shown.open) == (1, (), True)
    assert [(v.version_id, v.goes) for v in shown.versions] == [(v2, False), (v1, True)]
    # the limits and who may choose, each in a sentence
    with pytest.raises(CompetitionError, match="cup takes at most 1 of an entrant's versions"):
        entries.choose_final(store, users["ann"], "cup", [v1, v2])
    with pytest.raises(CompetitionError, match=rf"version {versions['bob']} is not one of your"):
        entries.choose_final(store, users["ann"], "cup", [versions["bob"]])
    with pytest.raises(CompetitionError, match=r"not one of your versions in cup .*none yet"):
        entries.choose_final(store, users["eve"], "cup", [v1])
    with pytest.raises(PermissionDenied):
        entries.choose_final(store, None, "cup", [v1])
    with pytest.raises(CompetitionError, match="name the entrant"):
        entries.choose_final(store, OPERATOR, "cup", [v2])
    chosen = entries.choose_final(store, OPERATOR, "cup", [v2, v2], owner="ann")
    assert chosen.chosen == (v2,)
    assert [(v.version_id, v.chosen, v.goes) for v in chosen.versions] == [
        (v2, True, True), (v1, False, False)
    ]  # fmt: skip
    _run(store, competition_id, strength, DEADLINE, 2)
    finalists = _finalists(store, competition_id)
    assert v2 in finalists and v1 not in finalists
    with pytest.raises(CompetitionError, match="the final of cup has begun"):
        entries.choose_final(store, users["ann"], "cup", [v1])


def test_the_page_says_how_long_placement_takes_and_warns_near_the_deadline(
    store: Store, celery: Celery, users: dict[str, Account]
) -> None:
    competition_id, versions = _competition(store)
    strength = {versions[n]: s for n, s in STRENGTH.items()}
    before = entries.placement_outlook(store, "cup", now=OPENS)
    assert before.seconds is None and "no version has been placed yet" in before.sentence
    _run(store, competition_id, strength, OPENS, 6)
    outlook = entries.placement_outlook(store, "cup", now=OPENS + timedelta(minutes=10))
    assert outlook.samples == 4 and outlook.seconds is not None and outlook.warning is None
    assert "ladder games: about" in outlook.sentence
    near = entries.placement_outlook(store, "cup", now=DEADLINE - timedelta(minutes=1))
    assert near.warning is not None and near.warning.startswith(
        "The deadline is in 60 s: a version sent now may not be placed in time"
    )
