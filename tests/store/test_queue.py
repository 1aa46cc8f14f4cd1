"""arena.store.queue on both backends (the fixtures of tests/conftest.py)."""

from __future__ import annotations

import multiprocessing.context
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import delete, func, select, update
from sqlalchemy.exc import IntegrityError

from arena.compete.entrants import Entrant
from arena.compete.tournaments import Match as ScheduledMatch
from arena.compete.tournaments import schedule
from arena.engine.rules import PRESETS
from arena.store.db import Store, connect, insert_rows
from arena.store.models import GameRecord, Match, MatchSeat, Tournament, TournamentEntrant
from arena.store.queue import (
    add_match_seats,
    claim_match,
    complete_match,
    create_tournament,
    heartbeat,
    requeue_expired,
    tournament_progress,
    void_match,
)
from arena.store.records import load_records

# SQL can differ here (the queue's claims and leases): on SQLite and PostgreSQL.
pytestmark = pytest.mark.backends("sqlite", "postgresql")

T0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
LEASE = 60.0


def _versions(store: Store, count: int) -> list[int]:
    return [
        store.add_bot_version("alice", f"bot{i}", f"print({i})\n", {})[0].id for i in range(count)
    ]


def _tournament(store: Store, matches: int = 4, name: str = "t1", games: int = 2) -> int:
    a, b = (Entrant.stored(label, v) for label, v in zip("ab", _versions(store, 2), strict=True))
    scheduled = [
        ScheduledMatch(f"m{i:03d}", (a, b) if i % 2 == 0 else (b, a), games, 100 + i)
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
        entrants=[a, b],
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
    entrants = [Entrant.stored(label, v) for label, v in zip("xyz", versions, strict=True)]
    scheduled = schedule(
        "duplicate",
        entrants,
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
    assert rows[0].seats == [versions["xyz".index(s.label)] for s in first.seats]
    assert (rows[0].games, rows[0].seed, rows[0].rotation) == (2, first.seed, 0)
    assert [r.deal_group for r in rows] == [0, 0, 1, 1, 2, 2]
    assert {r.status for r in rows} == {"pending"} and {r.attempts for r in rows} == {0}
    assert tournament_progress(store, tid) == {"pending": 6, "running": 0, "done": 0, "void": 0}
    with pytest.raises(ValueError, match="not one of the entrants"):
        create_tournament(store, **{**kwargs, "name": "other", "entrants": entrants[:1]})  # type: ignore[arg-type]


def test_create_tournament_stores_every_column_and_seat_in_the_schedules_order(
    store: Store,
) -> None:
    # The rows go to the driver as they are (arena.store.db.insert_rows): each column as the
    # ORM stored it, the ids in the schedule's order (the order claims take), and the seats
    # what add_match_seats writes from the stored matches.
    versions = zip(("a", "b", "ç"), _versions(store, 3), strict=True)
    a, b, c = (Entrant.stored(label, v) for label, v in versions)
    scheduled = [
        ScheduledMatch("z-last", (c, a, c, a), 3, 2**62, "g2", 1, teams=True),
        ScheduledMatch("a-first", (a, b), 1, 7),
        *(ScheduledMatch(f"m{i:04d}", (b, c), 2, i, "g1", i % 2) for i in range(700)),
    ]
    settings = {"move_seconds": 0.5, "sprt": {"new": "a", "old": None, "ü": [1.5, True]}}
    tid = create_tournament(
        store, name="every", rules=PRESETS["block"], format="duplicate", players=4, teams=True,
        games_per_match=3, seed=9, entrants=[a, b, c], matches=scheduled, settings=settings,
    )  # fmt: skip
    bare = create_tournament(
        store, name="bare", rules=PRESETS["block"], format="round-robin", players=2,
        teams=False, games_per_match=1, seed=1, entrants=[a, b], matches=[],
    )  # fmt: skip
    with store.read() as session:
        rows = session.scalars(select(Match).where(Match.tournament_id == tid).order_by(Match.id))
        stored = [
            (r.key, r.seats, r.labels, r.games, r.seed, r.deal_group, r.rotation, r.status,
             r.attempts, r.lease_owner, r.lease_expires, r.result, r.queued, r.finished)
            for r in rows
        ]  # fmt: skip
        created = session.scalars(select(Match.created).where(Match.tournament_id == tid)).all()
        tournament = session.get(Tournament, tid)
        assert tournament is not None and tournament.settings == settings
        assert (tournament.status, tournament.players, tournament.teams) == ("pending", 4, True)
        empty = session.get(Tournament, bare)
        assert empty is not None and empty.settings is None
    version = {e.label: e.version for e in (a, b, c)}
    assert stored == [
        (m.id, [version[e.label] for e in m.seats], [e.label for e in m.seats], m.games, m.seed,
         None if m.deal_group is None else int(m.deal_group == "g1"), m.rotation, "pending", 0,
         None, None, None, None, None)
        for m in scheduled
    ]  # fmt: skip
    assert len(created) == 702 and None not in created
    seats = select(MatchSeat.match_id, MatchSeat.seat, MatchSeat.bot_id, MatchSeat.bot_version_id,
                   MatchSeat.faults).order_by(MatchSeat.match_id, MatchSeat.seat)  # fmt: skip
    with store.write() as session:
        written = session.execute(seats).all()
        session.execute(delete(MatchSeat))
        add_match_seats(session, tid)
        assert session.execute(seats).all() == written
    assert len(written) == 4 + 2 + 2 * 700


def test_rows_handed_to_the_driver_are_refused_as_sqlalchemy_refuses_them(store: Store) -> None:
    # (PostgreSQL's COPY raises psycopg's error: seen as SQLAlchemy's, as any statement's)
    columns = ("match_id", "seat", "bot_id", "bot_version_id", "faults")
    with pytest.raises(IntegrityError, match="match_seats"), store.write() as session:
        insert_rows(session.connection(), MatchSeat, columns, [(987654, 0, 987, 654, 0)])
    tournament = _tournament(store)  # and the store goes on
    assert tournament_progress(store, tournament)["pending"] == 4


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
        stored = [record for _, _, record in load_records(store, session)]
    assert done is not None and done.status == "done" and done.result == {"by": "w1"}
    assert done.lease_expires is None and done.finished is not None
    assert list(stored) == records
    assert tournament_progress(store, tid) == {"pending": 0, "running": 0, "done": 1, "void": 0}
    assert not heartbeat(store, fresh.match_id, "w2", lease_seconds=LEASE)
    assert claim_match(store, "w3", lease_seconds=LEASE, now=T0 + timedelta(days=1)) is None


def _both_claimed(folder: Path, worker: str, deadline: float) -> None:
    """Say this worker has its first match; wait (until ``deadline``) for the other's."""
    (folder / worker).touch()
    while len(list(folder.iterdir())) < 2 and time.monotonic() < deadline:
        time.sleep(0.005)


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
                if len(claimed) == 1:  # the claims interleave, however loaded the machine
                    _both_claimed(Path(f"{barrier}-claimed"), worker, deadline)
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
    url: str, store: Store, tmp_path: Path, processes: multiprocessing.context.ForkServerContext
) -> None:
    tid = _tournament(store, matches=40)
    barrier = tmp_path / "barrier"
    barrier.mkdir()
    (tmp_path / "barrier-claimed").mkdir()
    with processes.Pool(2) as pool:
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


# --- the scheduler: order, lanes, cancelled tournaments (docs/workers.md, "Lanes") ---------


def _ids(store: Store, tournament_id: int) -> list[int]:
    with store.read() as session:
        return list(
            session.scalars(
                select(Match.id).where(Match.tournament_id == tournament_id).order_by(Match.id)
            )
        )


def test_claims_take_the_oldest_sent_tournament_first_whatever_the_tokens_order(
    store: Store,
) -> None:
    """Three tournaments sent in the order second, first, third: every claim takes the
    earliest-sent one's matches until none is left, then the next: no tournament waits
    while one sent after it plays (the broker's order and re-sent tasks do not matter)."""
    from arena.store.queue import mark_queued

    first, second, third = (_tournament(store, 3, name=n) for n in ("first", "second", "third"))
    mark_queued(store, _ids(store, second), T0)
    mark_queued(store, _ids(store, first), T0 + timedelta(seconds=1))
    mark_queued(store, _ids(store, third), T0 + timedelta(seconds=2))
    mark_queued(store, _ids(store, second), T0 + timedelta(seconds=5))  # re-sent: keeps its place
    order = []
    for _ in range(9):
        claimed = claim_match(store, "w", lease_seconds=LEASE, lane="matches", now=T0)
        assert claimed is not None
        order.append(claimed.tournament_id)
    assert order == [second] * 3 + [first] * 3 + [third] * 3
    assert claim_match(store, "w", lease_seconds=LEASE, lane="matches", now=T0) is None


def test_queues_take_turns_on_one_process(store: Store) -> None:
    """A ladder, a placement and two tournaments on one process (a claim after each match
    finished): the queues (the ladder, placements, tournaments) take one claim each in
    turn; within the tournaments' queue the first sent is played first; a queue whose
    tournament ended keeps its turn for the next (docs/workers.md, "Fair shares")."""
    from arena.store.lanes import queue_of, queue_place
    from arena.store.models import Tournament, Upload, User
    from arena.store.queue import mark_queued

    big, ladder, placement, later = (
        _tournament(store, count, name=n)
        for n, count in (("big", 2), ("lad", 3), ("place", 3), ("later", 3))
    )
    with store.write() as session:
        user = session.scalar(select(func.min(User.id)))  # alice, the bots' owner
        upload = Upload(owner_id=user, bot_name="b", filename="b.py", source="", sha256="0" * 64)
        session.add(upload)
        session.flush()
        session.execute(update(Tournament).where(Tournament.id == ladder).values(format="ladder"))
        session.execute(
            update(Tournament).where(Tournament.id == placement).values(upload_id=upload.id)
        )
    for k, tournament in enumerate((big, ladder, placement, later)):
        mark_queued(store, _ids(store, tournament), T0 + timedelta(seconds=k))
    assert queue_of("ladder", ladder, None) == f"ladder-{ladder}"
    assert queue_of("gauntlet", placement, 1) == "placements"
    assert queue_of("round-robin", big, None) == "tournaments"
    place = queue_place(store, later)
    assert place is not None and place.ahead == 1  # big, in its queue; not the others
    order = []
    now = T0 + timedelta(minutes=1)
    for _ in range(11):
        claimed = claim_match(store, "w", lease_seconds=LEASE, lane="matches", now=now)
        assert claimed is not None
        order.append(claimed.tournament_id)
        now += timedelta(seconds=1)
        complete_match(store, claimed.match_id, "w", records=[], result={}, now=now)
    assert order == [ladder, big, placement] * 2 + [ladder, later, placement, later, later]
    assert claim_match(store, "w", lease_seconds=LEASE, lane="matches", now=now) is None


def test_a_compare_is_in_the_interactive_lane(store: Store) -> None:
    from arena.store.lanes import match_lanes, queue_place
    from arena.store.models import Tournament
    from arena.store.queue import mark_queued

    played, compare = _tournament(store, 2, name="cup"), _tournament(store, 2, name="cmp")
    with store.write() as session:
        session.execute(update(Tournament).where(Tournament.id == compare).values(format="compare"))
    mark_queued(store, _ids(store, played) + _ids(store, compare), T0)
    assert match_lanes(store, _ids(store, compare) + _ids(store, played)) == {
        "interactive": _ids(store, compare),
        "matches": _ids(store, played),
    }
    claimed = claim_match(store, "w", lease_seconds=LEASE, lane="interactive", now=T0)
    assert claimed is not None and claimed.tournament_id == compare
    place = queue_place(store, compare)
    assert place is not None and place.lane == "interactive" and place.ahead == 0
    with pytest.raises(ValueError, match="no lane"):
        claim_match(store, "w", lease_seconds=LEASE, lane="slow")


def test_queue_place_counts_the_tournaments_ahead(store: Store) -> None:
    from arena.store.lanes import queue_place
    from arena.store.queue import mark_queued

    ids = [_tournament(store, 2, name=f"t{i}") for i in range(4)]
    for i, tournament in enumerate(ids[:3]):
        mark_queued(store, _ids(store, tournament), T0 + timedelta(seconds=i))
    places = [queue_place(store, t) for t in ids]
    assert [p.ahead for p in places if p] == [0, 1, 2, 0]
    assert [p.sent for p in places if p] == [True, True, True, False]
    for _ in range(2):  # the first one's matches are all taken: it is no longer ahead
        claim_match(store, "w", lease_seconds=LEASE, now=T0)
    second = queue_place(store, ids[1])
    assert second is not None and second.ahead == 0 and second.waiting == 2
    first = queue_place(store, ids[0])
    assert first is not None and first.running == 2 and first.waiting == 0


def test_a_cancelled_tournaments_matches_are_never_played_again_whatever_their_state(
    store: Store,
) -> None:
    """Pending, sent, running with a live lease, running with an expired one: cancel voids
    them all; no claim takes one (by id or by lane), no sweep re-queues one, the running
    one's heartbeat fails (its worker stops) and its late result is not stored."""
    from arena.store.queue import cancel_tournament, mark_queued, unqueued_matches

    tournament = _tournament(store, 4)
    ids = _ids(store, tournament)
    mark_queued(store, ids[:3], T0)
    live = claim_match(store, "live", lease_seconds=LEASE, match_id=ids[0], now=T0)
    stale = claim_match(store, "dead", lease_seconds=1, match_id=ids[1], now=T0)
    assert live is not None and stale is not None
    assert cancel_tournament(store, tournament, by="olga", now=T0) == 4
    later = T0 + timedelta(seconds=30)
    assert requeue_expired(store, now=later) == []
    for match_id in ids:
        assert claim_match(store, "w", lease_seconds=LEASE, match_id=match_id, now=later) is None
    assert claim_match(store, "w", lease_seconds=LEASE, now=later) is None
    assert unqueued_matches(store, sent_before=later) == []
    assert not heartbeat(store, ids[0], "live", lease_seconds=LEASE, now=later)
    assert not complete_match(store, ids[0], "live", records=[{"g": 0}], result={"games": []})
    assert tournament_progress(store, tournament)["void"] == 4
    assert _records(store) == []


def test_an_expired_lease_of_a_cancelled_tournament_left_running_is_voided_by_the_sweep(
    store: Store,
) -> None:
    """A match left running by a cancel from before this rule (or any race) is voided by
    requeue_expired, never put back to pending."""
    from arena.store.models import Tournament

    tournament = _tournament(store, 2)
    stale = claim_match(store, "dead", lease_seconds=1, now=T0)
    assert stale is not None
    with store.write() as session:
        session.execute(
            update(Tournament).where(Tournament.id == tournament).values(status="cancelled")
        )
    assert requeue_expired(store, now=T0 + timedelta(seconds=5)) == []
    progress = tournament_progress(store, tournament)
    assert progress["void"] == 1 and progress["running"] == 0


def test_the_tournament_page_says_its_place_in_the_queue(store: Store) -> None:
    from arena.service.board_views import queue_position
    from arena.store.queue import cancel_tournament, mark_queued

    ids = [_tournament(store, 2, name=f"t{i}") for i in range(4)]
    for i, tournament in enumerate(ids[:3]):
        mark_queued(store, _ids(store, tournament), T0 + timedelta(seconds=i))
    assert queue_position(store, ids[2]) == "waiting: 2 tournaments ahead"
    assert queue_position(store, ids[1]) == "waiting: 1 tournament ahead"
    assert queue_position(store, ids[0]) == "next: waiting for a free worker"
    assert queue_position(store, ids[3]) is not None
    assert "not sent" in (queue_position(store, ids[3]) or "")
    claim_match(store, "w", lease_seconds=LEASE, now=T0)
    assert queue_position(store, ids[0]) == "playing"
    claim_match(store, "w", lease_seconds=LEASE, now=T0)
    assert queue_position(store, ids[0]) == "playing its last matches"
    assert queue_position(store, ids[2]) == "waiting: 1 tournament ahead"
    cancel_tournament(store, ids[1], by="olga", now=T0)
    assert queue_position(store, ids[1]) is None
    assert queue_position(store, ids[2]) == "next: waiting for a free worker"


def test_two_last_matches_finishing_at_once_finish_their_tournament(store: Store) -> None:
    """The two last matches complete in two transactions at once: the first one's commit
    is held until the second has counted the tournament's unfinished matches (or 1 s, if
    the second waits on a lock, as it should). Each must not count the other as unfinished
    and both leave the tournament running, which a run of the worker tests once found on
    PostgreSQL."""
    import threading

    from sqlalchemy import event

    from arena.store.models import Tournament

    tournament = _tournament(store, 2)
    first = claim_match(store, "w1", lease_seconds=LEASE, now=T0)
    second = claim_match(store, "w2", lease_seconds=LEASE, now=T0)
    assert first is not None and second is not None
    counted = threading.Event()
    holder: list[int] = []

    def after_execute(conn: object, cursor: object, statement: str, *args: object) -> None:
        if threading.get_ident() not in holder and "count(" in statement.lower():
            counted.set()

    def before_commit(conn: object) -> None:
        if threading.get_ident() in holder:
            counted.wait(timeout=1.0)

    event.listen(store.engine, "after_cursor_execute", after_execute)
    event.listen(store.engine, "commit", before_commit)
    try:

        def complete_first() -> None:
            holder.append(threading.get_ident())
            complete_match(store, first.match_id, "w1", records=[], result={"games": []})

        thread = threading.Thread(target=complete_first)
        thread.start()
        time.sleep(0.2)  # the first transaction has counted and waits to commit
        assert complete_match(store, second.match_id, "w2", records=[], result={"games": []})
        thread.join(timeout=10)
    finally:
        event.remove(store.engine, "after_cursor_execute", after_execute)
        event.remove(store.engine, "commit", before_commit)
    assert tournament_progress(store, tournament)["done"] == 2
    with store.read() as session:
        stored = session.get(Tournament, tournament)
        assert stored is not None and stored.status == "done" and stored.finished is not None


@pytest.mark.backends("postgresql")
def test_a_match_finishes_while_a_ladder_adds_matches_to_its_tournament(store: Store) -> None:
    """A competition's ladder adds a deal group to its tournament
    (:func:`arena.store.clock.add_deal_groups`) while the tournament's last match finishes.
    Neither waits for the other in a cycle (the finisher's ``FOR UPDATE`` did: a deadlock,
    CI 2026-11-29), and the tournament is left running with the new match to claim: the
    adder locks the tournament's row before it inserts, so the finisher, waiting for it,
    counts the new match. Before, the finisher did not see the uncommitted insert and
    marked the tournament done after the adder had found it running: a done tournament
    with a match pending, which no claim takes and every sweep sent again, for ever (the
    two-host drill's flake, CI 2026-11-29)."""
    import threading

    from sqlalchemy import column, table

    from arena.store.clock import add_deal_groups
    from arena.store.models import Tournament
    from arena.store.queue import mark_queued

    tournament = _tournament(store, 1)
    mark_queued(store, _ids(store, tournament), T0)  # sent: the adder's updates change nothing
    claimed = claim_match(store, "w1", lease_seconds=LEASE, now=T0)
    assert claimed is not None
    with store.read() as session:
        versions = tuple(
            session.scalars(
                select(TournamentEntrant.bot_version_id).where(
                    TournamentEntrant.tournament_id == tournament
                )
            )
        )
    activity = table("pg_stat_activity", column("wait_event_type"), column("datname"))
    waiting = (
        select(func.count())
        .select_from(activity)
        .where(activity.c.wait_event_type == "Lock", activity.c.datname == func.current_database())
    )
    finished: list[bool] = []
    finisher = threading.Thread(
        target=lambda: finished.append(
            complete_match(store, claimed.match_id, "w1", records=[], result={"games": []})
        )
    )
    with store.write() as session:
        add_deal_groups(
            session, tournament, [[versions]], games=1, seed_of=lambda n: n, prefix="L", now=T0
        )
        finisher.start()
        deadline = time.monotonic() + 10
        while not finished and time.monotonic() < deadline:  # done, or waiting for the adder
            with store.read() as other:
                if other.scalar(waiting):
                    break
            time.sleep(0.01)
    finisher.join(timeout=10)
    assert finished == [True]
    with store.read() as session:
        stored = session.get(Tournament, tournament)
        assert stored is not None and stored.status == "running", "done with a match to play"
    again = claim_match(store, "w2", lease_seconds=LEASE, lane="matches", now=T0)
    assert again is not None and again.key == "L000000-0"


def test_what_a_sweep_sends_again_a_claim_can_take(store: Store) -> None:
    """A done tournament with a match pending (a ladder's insert racing its last match's
    finish, before lock_tournament) was counted as lost by every sweep (unqueued_matches)
    and sent again each second, while every claim found nothing to take: the two-host
    drill waited for ever (CI 2026-11-29). Lost and claimable are one condition
    (lanes.playable): the match is not sent again until reopen_unfinished_tournaments has
    the tournament running, and then a claim takes it; a cancelled tournament's pending
    match is void, never sent."""
    from arena.store.models import Tournament
    from arena.store.queue import mark_queued, reopen_unfinished_tournaments, unqueued_matches

    done = _tournament(store, 2, name="done")
    cancelled = _tournament(store, 1, name="gone")
    first, left = _ids(store, done)
    mark_queued(store, [first, left, *_ids(store, cancelled)], T0)
    claimed = claim_match(store, "w", lease_seconds=LEASE, match_id=first, now=T0)
    assert claimed is not None
    assert complete_match(store, first, "w", records=[], result={"games": []}, now=T0)
    with store.write() as session:  # as the race left them
        for tournament, status in ((done, "done"), (cancelled, "cancelled")):
            session.execute(
                update(Tournament).where(Tournament.id == tournament).values(status=status)
            )
    later = T0 + timedelta(minutes=1)
    assert unqueued_matches(store, sent_before=later) == []  # not lost: no claim takes them
    assert claim_match(store, "w", lease_seconds=LEASE, now=later) is None
    assert claim_match(store, "w", lease_seconds=LEASE, match_id=left, now=later) is None
    assert reopen_unfinished_tournaments(store, now=later) == [done]
    assert reopen_unfinished_tournaments(store, now=later) == []
    with store.read() as session:
        reopened, gone = session.get(Tournament, done), session.get(Tournament, cancelled)
        assert reopened is not None and (reopened.status, reopened.finished) == ("running", None)
        assert gone is not None and gone.status == "cancelled" and gone.finished is not None
    assert tournament_progress(store, cancelled)["void"] == 1
    assert unqueued_matches(store, sent_before=later) == [left]
    again = claim_match(store, "w", lease_seconds=LEASE, now=later)
    assert again is not None and again.match_id == left


def test_the_sweep_finishes_a_tournament_left_running_with_every_match_finished(
    store: Store,
) -> None:
    """A database written while two last completions could race holds tournaments left
    running with nothing to play: finish_stalled_tournaments marks them done (once) and
    names their rule sets to refit; a tournament with matches to play is left alone."""
    from arena.store.models import Tournament
    from arena.store.queue import finish_stalled_tournaments

    stalled = _tournament(store, 2)
    waiting = _tournament(store, 2, name="t2")
    for _ in range(2):
        claimed = claim_match(store, "w", lease_seconds=LEASE, now=T0)
        assert claimed is not None and claimed.tournament_id == stalled
        assert complete_match(store, claimed.match_id, "w", records=[], result={"games": []})
    with store.write() as session:
        session.execute(
            update(Tournament)
            .where(Tournament.id == stalled)
            .values(status="running", finished=None)
        )
    assert finish_stalled_tournaments(store) != []
    assert finish_stalled_tournaments(store) == []
    with store.read() as session:
        done, left = session.get(Tournament, stalled), session.get(Tournament, waiting)
        assert done is not None and done.status == "done" and done.finished is not None
        assert left is not None and left.status == "pending"


def test_a_claim_prefers_a_pair_its_process_keeps_warm_within_its_tournament(
    store: Store,
) -> None:
    """``prefer``: within the tournament the queues' order chose, the first waiting match of
    a kept pair is taken before the tournament's first one (either seating: a deal's two
    seatings are one pair); a kept pair of another tournament changes nothing, nor does a
    kept pair with no match waiting."""
    from arena.store.queue import mark_queued

    v = _versions(store, 3)
    a, b, c = (Entrant.stored(label, version) for label, version in zip("abc", v, strict=True))
    pairs = [(a, b), (a, c), (b, c), (c, a), (a, b)]
    scheduled = [ScheduledMatch(f"m{i}", seats, 2, 100 + i) for i, seats in enumerate(pairs)]
    tid = create_tournament(
        store, name="lad", rules=PRESETS["block"], format="round-robin", players=2,
        teams=False, games_per_match=2, seed=7, entrants=[a, b, c], matches=scheduled,
    )  # fmt: skip
    other = _tournament(store, 2, name="other")
    mark_queued(store, _ids(store, tid), T0)
    mark_queued(store, _ids(store, other), T0 + timedelta(seconds=1))
    ac = (tid, tuple(sorted((v[0], v[2]))))

    def claim(*prefer: tuple[int, tuple[int, ...]]) -> str:
        claimed = claim_match(store, "w", lease_seconds=LEASE, lane="matches", now=T0,
                              prefer=prefer)  # fmt: skip
        assert claimed is not None
        return claimed.key

    assert claim((other, tuple(sorted(v[:2])))) == "m0"  # another tournament's pair
    assert claim(ac) == "m1"
    assert claim(ac) == "m3"  # the same pair seated the other way round
    assert claim(ac) == "m2"  # none of it waits: the first
    assert claim((tid, (v[1], v[2]))) == "m4"


def test_a_gathering_claim_takes_the_pair_with_the_most_matches_waiting(store: Store) -> None:
    """``gather``: where no kept pair's match waits, the first match of the pair with the
    most matches waiting (either seating) is taken before the tournament's first one, if it
    has two or more; a kept pair's match still comes first; without it, the first."""
    v = _versions(store, 3)
    a, b, c = (Entrant.stored(label, version) for label, version in zip("abc", v, strict=True))
    pairs = [(a, b), (b, c), (a, c), (c, b), (b, c), (a, b)]
    scheduled = [ScheduledMatch(f"m{i}", seats, 2, 100 + i) for i, seats in enumerate(pairs)]
    tid = create_tournament(
        store, name="lad", rules=PRESETS["block"], format="round-robin", players=2,
        teams=False, games_per_match=2, seed=7, entrants=[a, b, c], matches=scheduled,
    )  # fmt: skip

    def claim(gather: bool, *prefer: tuple[int, tuple[int, ...]]) -> str:
        claimed = claim_match(store, "w", lease_seconds=LEASE, now=T0, prefer=prefer,
                              gather=gather)  # fmt: skip
        assert claimed is not None
        return claimed.key

    assert claim(False) == "m0"
    assert claim(True) == "m1"  # b-c: three waiting
    assert claim(True, (tid, tuple(sorted((v[0], v[2]))))) == "m2"  # a kept pair first
    assert claim(True) == "m3"  # b-c, seated the other way round: two waiting
    assert claim(True) == "m4"  # one match of each pair: the first
    assert claim(True) == "m5"
