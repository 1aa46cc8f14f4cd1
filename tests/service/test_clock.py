"""The competitions' clock (arena.service.clock) on SQLite and PostgreSQL: the ladder's
top-up under its bound, placement at once, the deadline and the final's creation, final
rounds until separated (or tied at the cap) and the published table, and two ticks at once.
Matches are "played" by writing their results (tests/service/ladder_fixtures.py)."""

from __future__ import annotations

import contextlib
import random
import threading
from collections import defaultdict
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from celery import Celery
from sqlalchemy import select

from arena.compete.entrants import Entrant
from arena.compete.tournaments import schedule
from arena.engine.rules import find_rules
from arena.service.broker import install, make_app
from arena.service.clock import ladder_in_flight_bound, tick_competition, tick_competitions
from arena.service.matches import worker_heartbeat
from arena.store import clock as stored
from arena.store.db import Store, connect
from arena.store.models import (
    Competition,
    CompetitionEntry,
    CompetitionRating,
    MatchSeat,
    Tournament,
)
from arena.store.queue import claim_match, create_tournament
from tests.service.ladder_fixtures import (
    add_version,
    enter,
    make_competition,
    matches_of,
    play,
    set_entry,
)

#: Where SQL can differ (the competitions' lock, the claims, what a tick reads and writes),
#: a test runs on SQLite and PostgreSQL; the rounds of a ladder and a final are the
#: service's logic over those and run on SQLite only (tests/conftest.py's default).
BOTH = pytest.mark.backends("sqlite", "postgresql")

OPENS = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
DEADLINE = OPENS + timedelta(hours=2)


@pytest.fixture
def celery(tmp_path: Path) -> Iterator[Celery]:
    """A broker no worker reads, the service's (the whole process's: a test ticks from
    threads) while the test runs."""
    app = make_app(f"filesystem://{tmp_path / 'broker'}")
    previous = install(app)
    yield app
    install(previous)
    app.close()


def _competition(store: Store, **kwargs: Any) -> tuple[int, dict[str, int]]:
    return make_competition(
        store, "cup", kwargs.pop("entrants", ["ann", "bob", "cat", "dan"]), opens=OPENS,
        deadline=DEADLINE, **kwargs,
    )  # fmt: skip


def _row(store: Store, competition_id: int) -> Competition:
    with store.read() as session:
        row = session.get(Competition, competition_id)
    assert row is not None
    return row


def _workers(store: Store, now: datetime, **pools: int) -> None:
    for name, concurrency in pools.items():
        worker_heartbeat(
            store, name.replace("_", "-"), host="h", pid=1, concurrency=concurrency, now=now
        )


@BOTH
def test_top_up_fills_the_bound_and_no_more(store: Store, celery: Celery) -> None:
    """The bound is the live match workers' processes (not the fast worker's), halved while
    another tournament's match waits; each pairing is a duplicate deal (2 rotations, one
    seed); a tick with the bound full writes nothing."""
    now = OPENS + timedelta(minutes=1)
    cid, versions = _competition(store)
    _workers(store, now, arena_1=4, arena_fast_2=1)
    assert ladder_in_flight_bound(store, cid, now=now) == 4
    tick = tick_competition(store, cid, now=now)
    ladder = _row(store, cid).ladder_id
    flight = matches_of(store, ladder, "pending", "running")
    assert len(flight) == 4 == len(tick.added)
    groups: dict[int | None, list[Any]] = {}
    for match in flight:
        groups.setdefault(match.deal_group, []).append(match)
    assert len(groups) == 2
    for group in groups.values():
        assert sorted(m.rotation for m in group) == [0, 1]
        assert len({m.seed for m in group}) == 1
        assert group[0].seats == list(reversed(group[1].seats))
        assert group[0].queued is not None  # sent
    with store.read() as session:  # match_seats written for the added matches
        assert session.scalar(select(MatchSeat.match_id).limit(1)) is not None
    assert tick_competition(store, cid, now=now).added == ()  # bound full
    # another tournament's match waits in the matches lane: the ladder keeps half
    entrants = [Entrant.stored("x", add_version(store, "xo")), Entrant.stored("y", versions["ann"])]
    create_tournament(
        store, name="other", rules=find_rules("draw"), format="round-robin", players=2,
        teams=False, games_per_match=2, seed=1, entrants=entrants,
        matches=schedule("round-robin", entrants, rules=find_rules("draw"), players=2,
                         games_per_match=2, seed=1),
    )  # fmt: skip
    assert ladder_in_flight_bound(store, cid, now=now) == 2
    play(store, [m.id for m in flight], {v: 1500.0 for v in versions.values()}, random.Random(1))
    tick = tick_competition(store, cid, now=now)
    assert len(matches_of(store, ladder, "pending", "running")) == 2
    assert "standings" in tick.actions
    # the settings' override wins
    with store.write() as session:
        row = session.get(Competition, cid)
        assert row is not None
        row.settings = {**row.settings, "in_flight": 6}
    assert ladder_in_flight_bound(store, cid, now=now) == 6
    tick_competition(store, cid, now=now)
    assert len(matches_of(store, ladder, "pending", "running")) == 6


def test_with_nothing_else_waiting_the_room_is_rounded_up_to_whole_deals(
    store: Store, celery: Celery
) -> None:
    """3 processes and deals of 2 matches: 2 deals (4 matches, the bound + 1), so no process
    idles while a deal's other rotation plays; none more until fewer than 3 are in flight."""
    cid, versions = _competition(store)
    now = OPENS + timedelta(minutes=1)
    _workers(store, now, arena_1=3)
    tick_competition(store, cid, now=now)
    ladder = _row(store, cid).ladder_id
    flight = matches_of(store, ladder, "pending")
    assert len(flight) == 4
    play(store, [flight[0].id], dict.fromkeys(versions.values(), 1500.0), random.Random(7))
    assert tick_competition(store, cid, now=now).added == ()
    play(store, [flight[1].id], dict.fromkeys(versions.values(), 1500.0), random.Random(7))
    assert len(tick_competition(store, cid, now=now).added) == 2


@BOTH
def test_no_worker_still_keeps_one_match_in_flight(store: Store, celery: Celery) -> None:
    cid, _ = _competition(store)
    now = OPENS + timedelta(minutes=1)
    assert ladder_in_flight_bound(store, cid, now=now) == 1
    tick_competition(store, cid, now=now)  # a group of two when none is in flight
    assert len(matches_of(store, _row(store, cid).ladder_id, "pending")) == 2


def test_a_new_entrant_gets_its_placement_games_at_once(store: Store, celery: Celery) -> None:
    """After the established field played, a new entrant's placement deals come first, and
    it is rated (first_rated, a history point) once they are played."""
    cid, versions = _competition(store, settings={"in_flight": 8})
    strength = {v: 1500.0 + 150 * k for k, v in enumerate(versions.values())}
    rng = random.Random(2)
    ladder = _row(store, cid).ladder_id
    now = OPENS + timedelta(minutes=1)
    for _ in range(6):
        tick_competition(store, cid, now=now)
        play(store, [m.id for m in matches_of(store, ladder, "pending")], strength, rng)
        now += timedelta(minutes=1)
    newcomer = enter(store, cid, "eve", now)
    strength[newcomer] = 1600.0
    tick = tick_competition(store, cid, now=now)
    added = [m for m in matches_of(store, ladder, "pending") if m.id in tick.added]
    with_newcomer = {m.deal_group for m in added if newcomer in m.seats}
    # 8 placement games, 4 a deal (2 rotations x 2 games): 2 deals, in this very tick
    assert len(with_newcomer) == 2
    play(store, [m.id for m in added], strength, rng)
    tick_competition(store, cid, now=now + timedelta(seconds=5))
    with store.read() as session:
        entry = session.scalar(
            select(CompetitionEntry).where(CompetitionEntry.bot_version_id == newcomer)
        )
        points = session.scalars(
            select(CompetitionRating).where(CompetitionRating.bot_version_id == newcomer)
        ).all()
    assert entry is not None and entry.first_rated is not None
    assert len(points) == 1 and points[0].games == 8
    standings = _row(store, cid).standings or []
    row = next(r for r in standings if r["version_id"] == newcomer)
    assert row["games"] == 8 and row["provisional"] is False and row["last_game"]
    # a refit without a new result adds no point
    tick_competition(store, cid, now=now + timedelta(seconds=6))
    with store.read() as session:
        again = session.scalars(
            select(CompetitionRating).where(CompetitionRating.bot_version_id == newcomer)
        ).all()
    assert len(again) == 1


def _ladder_played(store: Store, cid: int, strength: dict[int, float]) -> None:
    ladder = _row(store, cid).ladder_id
    rng = random.Random(3)
    now = OPENS + timedelta(minutes=1)
    for _ in range(8):
        tick_competition(store, cid, now=now)
        play(store, [m.id for m in matches_of(store, ladder, "pending")], strength, rng)
        now += timedelta(minutes=5)


def test_the_deadline_closes_the_ladder_and_creates_the_final(store: Store, celery: Celery) -> None:
    """At the deadline: status final, the ladder's pending matches void; the final waits
    for the running one, then takes the top active entries (not a disqualified one, nor
    one accepted after the deadline) and plays its first round: a round robin of deals."""
    names = ["ann", "bob", "cat", "dan", "eve", "fay"]
    cid, versions = _competition(store, entrants=names, final_top=3, settings={"in_flight": 6})
    strength = {versions[n]: 1500.0 + 500 * k for k, n in enumerate(names)}
    _ladder_played(store, cid, strength)
    set_entry(store, cid, versions["fay"], status="disqualified", reason="copied")  # the best
    set_entry(store, cid, versions["eve"], accepted=DEADLINE + timedelta(seconds=1))
    ladder = _row(store, cid).ladder_id
    tick_competition(store, cid, now=DEADLINE - timedelta(minutes=1))
    running = claim_match(store, "w", lease_seconds=60)
    assert running is not None
    assert tick_competitions(store, now=DEADLINE).did("closed") == [cid]
    row = _row(store, cid)
    assert row.status == "final" and row.closed is not None and row.final_id is None
    assert [m.id for m in matches_of(store, ladder, "pending", "running")] == [running.match_id]
    assert all(m.result and m.result.get("void") for m in matches_of(store, ladder, "void"))
    tick_competition(store, cid, now=DEADLINE + timedelta(seconds=1))
    assert _row(store, cid).final_id is None  # the running ladder match finishes first
    play(store, [running.match_id], strength, random.Random(4))
    tick = tick_competition(store, cid, now=DEADLINE + timedelta(seconds=2))
    assert tick.actions[-2:] == ("final", "round")
    row = _row(store, cid)
    assert row.final_id is not None
    finalists = {versions[n] for n in ("dan", "cat", "bob")}
    final = matches_of(store, row.final_id)
    assert {v for m in final for v in m.seats} == finalists
    assert len(final) == 3 * 2 and len({m.deal_group for m in final}) == 3  # every pair, 2 seats
    # no more ladder matches, ever
    tick_competition(store, cid, now=DEADLINE + timedelta(minutes=1))
    assert matches_of(store, ladder, "pending") == []


def _final_played(
    store: Store, cid: int, strength: dict[int, float], rounds: int = 200
) -> Competition:
    rng = random.Random(5)
    now = DEADLINE + timedelta(seconds=1)
    for _ in range(rounds):
        tick_competition(store, cid, now=now)
        row = _row(store, cid)
        if row.status == "done":
            return row
        assert row.final_id is not None
        pending = matches_of(store, row.final_id, "pending")
        assert pending, "a final with nothing in flight must have a next round or be done"
        play(store, [m.id for m in pending], strength, rng)
        now += timedelta(seconds=10)
    raise AssertionError("the final never ended")


def test_the_final_plays_rounds_until_separated_then_publishes(
    store: Store, celery: Celery
) -> None:
    names = ["ann", "bob", "cat", "dan"]
    cid, versions = _competition(store, entrants=names, settings={"in_flight": 4})
    strength = {versions[n]: 1500.0 + 600 * k for k, n in enumerate(names)}
    _ladder_played(store, cid, strength)
    row = _final_played(store, cid, strength)
    table = row.final_table or []
    assert [r["version_id"] for r in table] == [versions[n] for n in reversed(names)]
    assert [r["place"] for r in table] == [1, 2, 3, 4]
    assert not any(r["tie"] for r in table)
    assert table[0]["name"] == "dan/bot v1" and table[0]["low"] < table[0]["rating"]
    assert row.finished is not None
    assert tick_competition(store, cid, now=DEADLINE + timedelta(days=1)).actions == ()


def test_equal_finalists_tie_at_the_cap(store: Store, celery: Celery) -> None:
    names = ["ann", "bob", "cat"]
    cid, versions = _competition(
        store, entrants=names, final_max_games=24, settings={"in_flight": 4}
    )
    strength = dict.fromkeys(versions.values(), 1500.0)
    _ladder_played(store, cid, strength)
    row = _final_played(store, cid, strength)
    table = row.final_table or []
    assert len(table) == 3 and any(r["tie"] for r in table)
    games = sum(m.games for m in matches_of(store, row.final_id or 0, "done"))
    assert 24 <= games < 24 + 3 * 4  # capped after the round that reached it


def test_three_seat_tables_and_teams_are_filled_and_rotated(store: Store, celery: Celery) -> None:
    cid, _ = make_competition(
        store, "threes", ["ann", "bob", "cat", "dan"], opens=OPENS, deadline=DEADLINE,
        players=3, settings={"in_flight": 3},
    )  # fmt: skip
    tick_competition(store, cid, now=OPENS + timedelta(minutes=1))
    added = matches_of(store, _row(store, cid).ladder_id)
    assert len(added) == 3 and all(len(set(m.seats)) == 3 for m in added)
    assert {tuple(m.seats) for m in added} == {
        tuple(added[0].seats[r:] + added[0].seats[:r]) for r in range(3)
    }
    tid, _ = make_competition(
        store, "pairs", ["eve", "fay", "gus"], opens=OPENS, deadline=DEADLINE, players=4,
        teams=True, settings={"in_flight": 2},
    )  # fmt: skip
    tick_competition(store, tid, now=OPENS + timedelta(minutes=1))
    teams = matches_of(store, _row(store, tid).ladder_id)
    assert len(teams) == 2
    a, b = teams[0].seats[:2]
    assert [m.seats for m in teams] == [[a, b, a, b], [b, a, b, a]]


@BOTH
def test_nothing_is_written_when_nothing_is_due(
    store: Store, celery: Celery, monkeypatch: pytest.MonkeyPatch
) -> None:
    _competition(store, settings={"in_flight": 2})
    assert tick_competitions(store, now=OPENS - timedelta(seconds=1)).ticks == ()
    now = OPENS + timedelta(minutes=1)
    tick_competitions(store, now=now)
    calls: list[int] = []
    real = stored.lock_competition

    def counting(*args: Any) -> Any:
        calls.append(1)
        return real(*args)

    monkeypatch.setattr(stored, "lock_competition", counting)
    report = tick_competitions(store, now=now)
    assert report.added == 0 and calls == []


@BOTH
def test_two_ticks_at_once_add_the_matches_once(
    url: str, celery: Celery, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two workers tick the same competition at the same moment, both having read an empty
    ladder before either locks it: the second, under the lock, finds the first's matches."""
    setup = connect(url)
    try:
        cid, _ = _competition(setup, settings={"in_flight": 4})
    finally:
        setup.close()
    barrier = threading.Barrier(2)
    real = stored.lock_competition

    def together(*args: Any) -> Any:
        # both have read the empty ladder; SQLite's first writer may hold the lock already
        with contextlib.suppress(threading.BrokenBarrierError):
            barrier.wait(timeout=2)
        return real(*args)

    now = OPENS + timedelta(minutes=1)
    added: list[tuple[int, ...]] = []
    errors: list[BaseException] = []

    def tick() -> None:
        store = connect(url)
        try:
            added.append(tick_competition(store, cid, now=now).added)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)
        finally:
            store.close()

    monkeypatch.setattr(stored, "lock_competition", together)
    threads = [threading.Thread(target=tick) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    assert sorted(len(a) for a in added) == [0, 4]
    check = connect(url)
    try:
        ladder = _row(check, cid).ladder_id
        assert len(matches_of(check, ladder, "pending")) == 4
    finally:
        check.close()


def _other(store: Store, name: str, sent: datetime) -> int:
    """A round robin of three bots of their own, sent at ``sent``."""
    from arena.store.queue import mark_queued

    entrants = [Entrant.stored(n, add_version(store, f"{name}{n}")) for n in ("xa", "xb", "xc")]
    other = create_tournament(
        store, name=name, rules=find_rules("draw"), format="round-robin", players=2,
        teams=False, games_per_match=2, seed=1, entrants=entrants,
        matches=schedule("round-robin", entrants, rules=find_rules("draw"), players=2,
                         games_per_match=2, seed=1),
    )  # fmt: skip
    mark_queued(store, [m.id for m in matches_of(store, other)], now=sent)
    return other


@BOTH
def test_one_process_serves_a_ladder_and_a_tournament_in_turn(store: Store, celery: Celery) -> None:
    """One worker process, an open competition's ladder and a tournament: the tournament
    gets the process within one ladder match (docs/workers.md, "Fair shares"), sent before
    the ladder's first deal or after it, and so does the ladder: one claim each in turn
    while both have work, the ladder topped up after each of its matches (as the worker
    that finished it does), never starving the other."""
    cid, _ = _competition(store)
    strength: defaultdict[int, float] = defaultdict(lambda: 1500.0)  # every bot alike
    ladder = _row(store, cid).ladder_id
    now = OPENS + timedelta(minutes=1)
    _workers(store, now, arena_1=1)
    tick_competition(store, cid, now=now)
    other = _other(store, "other", now)  # sent after the ladder's first deal
    owners = []
    for _ in range(8):
        now += timedelta(seconds=3)
        claimed = claim_match(store, "w", lease_seconds=60, lane="matches", now=now)
        assert claimed is not None
        owners.append(claimed.tournament_id)
        play(store, [claimed.match_id], strength, random.Random(5), now=now + timedelta(seconds=2))
        if claimed.tournament_id == ladder:
            tick_competition(store, cid, now=now + timedelta(seconds=2))
    assert owners == [ladder, other] * 4
    from arena.store.lanes import queue_place

    place = queue_place(store, other)
    assert place is not None and place.ahead == 0 and place.waiting == 2


@BOTH
def test_four_processes_share_between_the_ladder_and_a_tournament(
    store: Store, celery: Celery
) -> None:
    """A tournament sent before the competition opened cannot starve its ladder, and the
    ladder, bounded to half the workers while the tournament waits, leaves it the other
    half: claims at once alternate between them."""
    cid, _ = _competition(store)
    early = _other(store, "early", OPENS)
    now = OPENS + timedelta(minutes=1)
    _workers(store, now, arena_1=4)
    tick_competition(store, cid, now=now)
    ladder = _row(store, cid).ladder_id
    assert len(matches_of(store, ladder, "pending")) == 2  # half of 4: the tournament waits
    claimed = [claim_match(store, f"w{k}", lease_seconds=60, lane="matches", now=now)
               for k in range(4)]  # fmt: skip
    assert [c.tournament_id for c in claimed if c is not None] == [ladder, early] * 2


def test_a_rerun_final_is_made_again_by_the_next_tick(store: Store, celery: Celery) -> None:
    """The organiser's rerun (arena.store.competitions.reset_final) clears the final: the
    next tick makes a new one from the ladder's standings, under a name of its own."""
    from arena.store.competitions import reset_final

    names = ["ann", "bob", "cat"]
    cid, versions = _competition(store, entrants=names, settings={"in_flight": 4})
    strength = {versions[n]: 1500.0 + 600 * k for k, n in enumerate(names)}
    _ladder_played(store, cid, strength)
    first = _final_played(store, cid, strength)
    reset_final(store, cid, by="the organiser", reason="a test")
    tick = tick_competition(store, cid, now=DEADLINE + timedelta(days=1))
    assert "final" in tick.actions
    row = _row(store, cid)
    assert row.status == "final" and row.final_id not in (None, first.final_id)
    with store.read() as session:
        final = session.get(Tournament, row.final_id)
    assert final is not None and final.name == "cup-final-2"
    assert len(matches_of(store, row.final_id or 0, "pending")) == 3 * 2


def test_a_finished_ladder_match_ticks_its_competition_at_once(
    store: Store, celery: Celery, tmp_path: Path
) -> None:
    """The worker that plays a ladder match (play_token) ticks the competition: the new
    result is in the standings and a new deal is in flight, with no sweep."""
    from arena.service.matches import Config
    from arena.service.work import play_token
    from tests.paths import REFERENCE_BOTS

    sources = {o: (REFERENCE_BOTS / f"{b}.py").read_text() for o, b in (("ann", "greedy"),
               ("bob", "random"), ("cat", "fives"))}  # fmt: skip
    cid, _ = make_competition(
        store, "quick", list(sources), opens=datetime.now(UTC) - timedelta(minutes=1),
        deadline=datetime.now(UTC) + timedelta(hours=1), sources=sources,
        settings={"in_flight": 2, "games_per_deal": 1, "move_seconds": 5.0},
    )  # fmt: skip
    tick_competition(store, cid)
    ladder = _row(store, cid).ladder_id
    first = matches_of(store, ladder, "pending")
    assert len(first) == 2
    config = Config(bot_cache=tmp_path / "bots")
    for match in first:
        assert play_token(store, match.id, config=config, sandboxed=False).endswith("done")
    row = _row(store, cid)
    assert row.standings and sum(r["games"] for r in row.standings) == 2 * 2  # 2 games, 2 seats
    assert len(matches_of(store, ladder, "pending")) == 2  # the next deal, at once


def test_a_finalist_disqualified_during_the_final_plays_no_more(
    store: Store, celery: Celery
) -> None:
    """Issue 21: a disqualified version never plays again, in the final either: its
    pending final matches are void, no later round seats it, the table leaves it out."""
    from arena.service.competitions import disqualify
    from arena.service.permissions import OPERATOR

    names = ["ann", "bob", "cat", "dan"]
    cid, versions = _competition(store, entrants=names, settings={"in_flight": 4})
    strength = {versions[n]: 1500.0 + 600 * k for k, n in enumerate(names)}
    _ladder_played(store, cid, strength)
    tick_competition(store, cid, now=DEADLINE + timedelta(seconds=1))
    final_id = _row(store, cid).final_id
    assert final_id is not None
    cheat = versions["dan"]
    assert any(cheat in m.seats for m in matches_of(store, final_id, "pending"))
    disqualify(store, OPERATOR, "cup", cheat, "copied")
    assert not any(cheat in m.seats for m in matches_of(store, final_id, "pending"))
    with store.write() as session:  # the same version sent again: a rejected entry
        first = session.scalars(
            select(CompetitionEntry).where(CompetitionEntry.bot_version_id == cheat)
        ).one()
        session.add(
            CompetitionEntry(
                competition_id=cid, user_id=first.user_id, bot_version_id=cheat,
                status="rejected", reason="this version was disqualified: copied",
                created=DEADLINE + timedelta(seconds=2),
            )
        )  # fmt: skip
    before = {m.id for m in matches_of(store, final_id)}
    row = _final_played(store, cid, strength)
    later = [m for m in matches_of(store, final_id) if m.id not in before]
    assert later and not any(cheat in m.seats for m in later)
    assert [r["version_id"] for r in row.final_table or []] == [
        versions[n] for n in ("cat", "bob", "ann")
    ]


def test_a_superseded_version_plays_no_more_ladder_matches(store: Store, celery: Celery) -> None:
    """Issue 21: only each user's latest accepted version plays. A new version of
    ann's supersedes the one on the ladder: the old one's pending ladder matches are
    void (its finished games stay); the next tick pairs the new one instead."""
    from arena.service.competitions import enter_with_version
    from arena.service.permissions import OPERATOR

    cid, versions = _competition(store, settings={"in_flight": 8})
    ladder = _row(store, cid).ladder_id
    now = OPENS + timedelta(minutes=1)
    tick_competition(store, cid, now=now)
    old = versions["ann"]
    assert any(old in m.seats for m in matches_of(store, ladder, "pending"))
    new = add_version(store, "ann", source="def play(observation):\n    return 0  # v2\n")
    entry = enter_with_version(store, OPERATOR, "cup", new, owner="ann", now=now)
    assert entry.status == "active"
    assert not any(old in m.seats for m in matches_of(store, ladder, "pending"))
    voided = matches_of(store, ladder, "void")
    assert voided and all(m.result and "superseded" in m.result["void"] for m in voided)
    tick_competition(store, cid, now=now + timedelta(seconds=1))
    pending = matches_of(store, ladder, "pending")
    assert any(new in m.seats for m in pending) and not any(old in m.seats for m in pending)
