"""arena.store.queue on both backends (the fixtures of tests/conftest.py)."""

from __future__ import annotations

import multiprocessing
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import func, select

from arena.compete.tournaments import Match as ScheduledMatch
from arena.compete.tournaments import schedule
from arena.engine.rules import PRESETS
from arena.store.db import Store, connect
from arena.store.models import GameRecord, Match, TournamentEntrant
from arena.store.queue import (
    claim_match,
    complete_match,
    create_tournament,
    heartbeat,
    requeue_expired,
    tournament_progress,
    void_match,
)

# The backend fixtures (a fresh database on SQLite and on PostgreSQL), registered here.

T0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
LEASE = 60.0


def _versions(store: Store, count: int) -> list[int]:
    return [
        store.add_bot_version("alice", f"bot{i}", f"print({i})\n", {})[0].id for i in range(count)
    ]


def _tournament(store: Store, matches: int = 4, name: str = "t1", games: int = 2) -> int:
    a, b = _versions(store, 2)
    scheduled = [
        ScheduledMatch(f"m{i:03d}", ("a", "b") if i % 2 == 0 else ("b", "a"), games, 100 + i)
        for i in range(matches)
    ]
    return create_tournament(
        store,
        name=name,
        rules=PRESETS["block"],
        format="round-robin",
        players=2,
        teams=False,
        games_per_match=games,
        seed=7,
        entrants={"a": a, "b": b},
        matches=scheduled,
    )


def _records(store: Store) -> list[tuple[int, int]]:
    with store.read() as session:
        rows = session.execute(
            select(GameRecord.match_id, GameRecord.game_index).order_by(
                GameRecord.match_id, GameRecord.game_index
            )
        ).all()
    return [(m, i) for m, i in rows]


def test_create_tournament_stores_rows_and_rejects_a_second_one(store: Store) -> None:
    versions = _versions(store, 3)
    entrants = {"x": versions[0], "y": versions[1], "z": versions[2]}
    scheduled = schedule(
        "duplicate",
        ["x=greedy", "y=random", "z=first"],
        rules=PRESETS["block"],
        players=2,
        games_per_match=2,
        seed=5,
    )
    kwargs = dict(
        name="dup", rules=PRESETS["block"], format="duplicate", players=2, teams=False,
        games_per_match=2, seed=5, entrants=entrants, matches=scheduled,
    )  # fmt: skip
    tid = create_tournament(store, **kwargs)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="exists already"):
        create_tournament(store, **kwargs)  # type: ignore[arg-type]
    with store.read() as session:
        rows = session.scalars(select(Match).order_by(Match.id)).all()
        labels = session.scalars(select(TournamentEntrant.label).order_by("label")).all()
    assert list(labels) == ["x", "y", "z"]
    assert [r.key for r in rows] == [m.id for m in scheduled]
    first = scheduled[0]
    assert rows[0].seats == [entrants[s.partition("=")[0]] for s in first.seats]
    assert (rows[0].games, rows[0].seed, rows[0].rotation) == (2, first.seed, 0)
    assert [r.deal_group for r in rows] == [0, 0, 1, 1, 2, 2]
    assert {r.status for r in rows} == {"pending"} and {r.attempts for r in rows} == {0}
    assert tournament_progress(store, tid) == {"pending": 6, "running": 0, "done": 0, "void": 0}
    with pytest.raises(ValueError, match="not one of the entrants"):
        create_tournament(store, **{**kwargs, "name": "other", "entrants": {"x": 1}})  # type: ignore[arg-type]


def test_claims_take_the_oldest_and_never_the_same(store: Store) -> None:
    tid = _tournament(store, matches=3)
    first = claim_match(store, "w1", lease_seconds=LEASE, now=T0)
    second = claim_match(store, "w2", lease_seconds=LEASE, now=T0)
    third = claim_match(store, "w1", lease_seconds=LEASE, now=T0)
    assert first is not None and second is not None and third is not None
    assert [c.key for c in (first, second, third)] == ["m000", "m001", "m002"]
    assert claim_match(store, "w3", lease_seconds=LEASE, now=T0) is None
    assert first.tournament_id == tid and first.games == 2 and first.seed == 100
    assert second.seats == tuple(reversed(first.seats))
    assert first.rules() == PRESETS["block"] and not first.teams
    assert (first.attempts, first.lease_owner) == (1, "w1")
    assert first.lease_expires == T0 + timedelta(seconds=LEASE)
    assert (first.deal_group, first.rotation) == (None, 0)
    assert tournament_progress(store, tid)["running"] == 3


def test_expired_lease_is_reclaimed_and_heartbeat_follows_the_lease(store: Store) -> None:
    _tournament(store, matches=1)
    claimed = claim_match(store, "w1", lease_seconds=LEASE, now=T0)
    assert claimed is not None
    later = T0 + timedelta(seconds=50)
    assert heartbeat(store, claimed.match_id, "w1", lease_seconds=LEASE, now=later)
    # Extended to later + 60: still leased at T0 + 100.
    assert claim_match(store, "w2", lease_seconds=LEASE, now=T0 + timedelta(seconds=100)) is None
    assert not heartbeat(store, claimed.match_id, "w2", lease_seconds=LEASE, now=later)
    expired = T0 + timedelta(seconds=111)
    again = claim_match(store, "w2", lease_seconds=LEASE, now=expired)
    assert again is not None and again.match_id == claimed.match_id
    assert (again.attempts, again.lease_owner) == (2, "w2")
    assert not heartbeat(store, claimed.match_id, "w1", lease_seconds=LEASE, now=expired)
    assert heartbeat(store, claimed.match_id, "w2", lease_seconds=LEASE, now=expired)


def test_requeue_expired_and_void(store: Store) -> None:
    tid = _tournament(store, matches=3)
    a = claim_match(store, "w1", lease_seconds=10, now=T0)
    b = claim_match(store, "w1", lease_seconds=100, now=T0)
    assert a is not None and b is not None
    assert requeue_expired(store, now=T0 + timedelta(seconds=5)) == []
    assert requeue_expired(store, now=T0 + timedelta(seconds=20)) == [a.match_id]
    assert tournament_progress(store, tid) == {"pending": 2, "running": 1, "done": 0, "void": 0}
    assert not heartbeat(store, a.match_id, "w1", lease_seconds=10, now=T0)
    retry = claim_match(store, "w2", lease_seconds=10, now=T0 + timedelta(seconds=20))
    assert retry is not None and retry.match_id == a.match_id and retry.attempts == 2
    assert void_match(store, a.match_id, "w2", "sandbox failed 2 times")
    assert not void_match(store, a.match_id, "w2", "again")
    assert not complete_match(store, a.match_id, "w2", records=[{}], result={})
    with store.read() as session:
        voided = session.get(Match, a.match_id)
        assert voided is not None and voided.status == "void"
        assert voided.result == {"void": "sandbox failed 2 times", "worker": "w2", "attempts": 2}
    assert tournament_progress(store, tid) == {"pending": 1, "running": 1, "done": 0, "void": 1}
    assert _records(store) == []


def test_completion_is_idempotent_and_the_first_wins(store: Store) -> None:
    tid = _tournament(store, matches=1)
    stale = claim_match(store, "w1", lease_seconds=LEASE, now=T0)
    assert stale is not None
    fresh = claim_match(store, "w2", lease_seconds=LEASE, now=T0 + timedelta(seconds=61))
    assert fresh is not None and fresh.match_id == stale.match_id and fresh.attempts == 2
    records = [{"game": 0}, {"game": 1}]
    assert complete_match(store, stale.match_id, "w1", records=records, result={"by": "w1"}, now=T0)
    other = [{"game": "x"}, {"game": "y"}]
    assert not complete_match(store, fresh.match_id, "w2", records=other, result={"by": "w2"})
    assert not complete_match(store, stale.match_id, "w1", records=records, result={"by": "w1"})
    assert _records(store) == [(stale.match_id, 0), (stale.match_id, 1)]
    with store.read() as session:
        done = session.get(Match, stale.match_id)
        stored = session.scalars(select(GameRecord.record).order_by(GameRecord.game_index)).all()
    assert done is not None and done.status == "done" and done.result == {"by": "w1"}
    assert done.lease_expires is None and done.finished is not None
    assert list(stored) == records
    assert tournament_progress(store, tid) == {"pending": 0, "running": 0, "done": 1, "void": 0}
    assert not heartbeat(store, fresh.match_id, "w2", lease_seconds=LEASE)
    assert claim_match(store, "w3", lease_seconds=LEASE, now=T0 + timedelta(days=1)) is None


def _work(db_url: str, worker: str, barrier: str) -> tuple[list[int], list[str]]:
    """Wait for the other worker (both create a file in ``barrier``), then claim, "play" for
    a few ms and complete until nothing is left; return (claimed match ids, errors)."""
    store = connect(db_url)
    claimed: list[int] = []
    errors: list[str] = []
    (Path(barrier) / worker).touch()
    deadline = time.monotonic() + 30
    while len(list(Path(barrier).iterdir())) < 2 and time.monotonic() < deadline:
        time.sleep(0.005)
    try:
        while True:
            try:
                match = claim_match(store, worker, lease_seconds=300)
                if match is None:
                    break
                claimed.append(match.match_id)
                time.sleep(0.003)
                records = [{"game": i, "worker": worker} for i in range(match.games)]
                if not complete_match(
                    store, match.match_id, worker, records=records, result={"by": worker}
                ):
                    errors.append(f"completion of {match.match_id} refused")
            except Exception as error:  # reported to the test
                errors.append(repr(error))
                if len(errors) > 5:
                    break
    finally:
        store.close()
    return claimed, errors


def test_two_processes_claim_and_complete_every_match_once(
    url: str, store: Store, tmp_path: Path
) -> None:
    tid = _tournament(store, matches=40)
    barrier = tmp_path / "barrier"
    barrier.mkdir()
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        results = pool.starmap(_work, [(url, "p1", str(barrier)), (url, "p2", str(barrier))])
    (first, first_errors), (second, second_errors) = results
    assert first_errors == [] and second_errors == []
    assert first and second  # both worked: the claims really interleaved
    assert not set(first) & set(second)
    assert len(first) + len(second) == 40 and len(set(first) | set(second)) == 40
    assert tournament_progress(store, tid) == {"pending": 0, "running": 0, "done": 40, "void": 0}
    with store.read() as session:
        assert session.scalar(select(func.count()).select_from(GameRecord)) == 80
        attempts = session.scalars(select(Match.attempts)).all()
    assert set(attempts) == {1}
    assert len(_records(store)) == len(set(_records(store))) == 80
