"""arena.service.matches (in-process: create, play and sweep stored tournaments), the queue
operations it relies on, arena.service.broker's configuration and
arena.match.sandbox.claim_slot_block.

Every database test runs on SQLite and on PostgreSQL (the module's ``backends`` marker), but
the compiled bots' (their compile in the sandbox is the point: SQLite only).
tests/workers/test_tasks.py plays the same service end to end with real Celery workers; here each
part is called directly, bots unsandboxed (the reference bots in bots/).
"""

from __future__ import annotations

import itertools
import multiprocessing
import os
import signal
import tempfile
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event, null, select, update

from arena.compete.entrants import Entrant
from arena.compete.localrun import MatchResult
from arena.compete.localrun import play_one as real_play_one
from arena.compete.names import Reference
from arena.compete.tournaments import Match as ScheduledMatch
from arena.engine.records import verify_record, without_times
from arena.engine.rules import PRESETS
from arena.match import sandbox
from arena.match.play import game_seeds
from arena.match.referee import InfrastructureError
from arena.match.sandbox import SandboxUnavailable, claim_slot_block
from arena.service import broker
from arena.service import matches as service
from arena.service.dispatch import SweepReport, send_pending, sweep_matches
from arena.service.matches import (
    Config,
    MatchSettings,
    create_stored_tournament,
    list_workers,
    resolve_entrants,
    run_match,
    worker_heartbeat,
    worker_stopped,
)
from arena.service.results import load_results
from arena.service.tournaments import entrant_specs
from arena.store.compares import source_hashes
from arena.store.db import Store, connect, upgrade
from arena.store.models import GameRecord, Match, Tournament, TournamentEntrant
from arena.store.queue import (
    claim_match,
    complete_match,
    create_tournament,
    mark_queued,
    release_match,
    requeue_expired,
    unqueued_matches,
    void_match,
)
from arena.store.records import load_records
from tests.paths import REFERENCE_BOTS
from tests.service.conftest import Recorder

# SQL can differ here (the matches' claims, leases and stored results): on SQLite and
# PostgreSQL.
pytestmark = pytest.mark.backends("sqlite", "postgresql")

BOTS = REFERENCE_BOTS
T0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
#: Games of one or two rounds (the preset plays to 100 points): fast matches.
RULES = PRESETS["block"].with_overrides(target=10)
GAME_KEYS = {"index", "seed", "places", "points", "winners", "termination", "verdict"}


# --- helpers ------------------------------------------------------------------------------


def _utc(value: datetime | None) -> datetime | None:
    """SQLite returns stored datetimes naive: they are UTC."""
    if value is None:
        return None
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value


_placeholders = itertools.count()


def _add(store: Store, owner: str, name: str, source: str | None = None) -> int:
    """Store a bot version (a placeholder source unless one is given); return its id."""
    text = source if source is not None else f"# {owner}/{name} #{next(_placeholders)}\n"
    return store.add_bot_version(owner, name, text, {})[0].id


def _add_reference_bots(store: Store, names: Sequence[str] = ("random", "greedy")) -> None:
    for name in names:
        _add(store, "arena", name, (BOTS / f"{name}.py").read_text())


def _create(
    store: Store,
    name: str = "t",
    games: int = 4,
    seed: int = 7,
    entrants: Sequence[str] = ("random", "greedy"),
) -> tuple[int, list[int]]:
    """A round robin of two stored bots (2 matches, the games split between the two seat
    orders); return its id and its match ids."""
    tid, _ = create_stored_tournament(
        store,
        name=name,
        rules=RULES,
        format="round-robin",
        entrants=entrants,
        games_per_match=games,
        seed=seed,
    )
    return tid, _match_ids(store, tid)


def _match_ids(store: Store, tid: int) -> list[int]:
    with store.read() as session:
        query = select(Match.id).where(Match.tournament_id == tid).order_by(Match.id)
        return list(session.scalars(query))


def _match(store: Store, match_id: int) -> Match:
    with store.read() as session:
        match = session.get(Match, match_id)
    assert match is not None
    return match


def _lease(match: Match) -> tuple[str, str | None, datetime | None]:
    return match.status, match.lease_owner, match.lease_expires


def _tournament(store: Store, tid: int) -> Tournament:
    with store.read() as session:
        tournament = session.get(Tournament, tid)
    assert tournament is not None
    return tournament


def _records(store: Store, match_id: int) -> list[dict[str, Any]]:
    with store.read() as session:
        return [r for _, _, r in load_records(store, session, GameRecord.match_id == match_id)]


def _config(tmp_path: Path, **changes: Any) -> Config:
    return Config(bot_cache=tmp_path / "bot-cache", **changes)


# --- Config -------------------------------------------------------------------------------


def test_config_defaults_and_heartbeat_follows_the_lease() -> None:
    assert Config.from_env({}) == Config()
    default = Config()
    assert default.heartbeat_seconds == default.lease_seconds / 3
    assert Config.from_env({"ARENA_LEASE_SECONDS": "9"}).heartbeat_seconds == 3.0
    both = {"ARENA_LEASE_SECONDS": "9", "ARENA_HEARTBEAT_SECONDS": "1.5"}
    assert Config.from_env(both).heartbeat_seconds == 1.5
    assert Config.from_env({"ARENA_SWEEP_SECONDS": ""}) == Config()  # empty: the default


@pytest.mark.parametrize(
    ("variable", "field", "raw", "expected"),
    [
        ("ARENA_LEASE_SECONDS", "lease_seconds", "12.5", 12.5),
        ("ARENA_HEARTBEAT_SECONDS", "heartbeat_seconds", "4", 4.0),
        ("ARENA_SWEEP_SECONDS", "sweep_seconds", "2", 2.0),
        ("ARENA_MAX_ATTEMPTS", "max_attempts", "5", 5),
        ("ARENA_MATCH_TIME_LIMIT", "match_time_limit", "600", 600.0),
        ("ARENA_RESEND_GRACE_SECONDS", "resend_grace_seconds", "0.5", 0.5),
        ("ARENA_NO_WORKER_SECONDS", "no_worker_seconds", "30", 30.0),
        ("ARENA_BOT_CACHE", "bot_cache", "/srv/cache", Path("/srv/cache")),
        ("ARENA_WARM_BOTS", "warm_bots", "0", False),
        ("ARENA_WARM_BOTS", "warm_bots", "1", True),
    ],
)
def test_config_reads_each_variable(variable: str, field: str, raw: str, expected: object) -> None:
    config = Config.from_env({variable: raw})
    assert getattr(config, field) == expected
    assert type(getattr(config, field)) is type(expected)


@pytest.mark.parametrize(
    "variable",
    [
        "ARENA_LEASE_SECONDS",
        "ARENA_HEARTBEAT_SECONDS",
        "ARENA_SWEEP_SECONDS",
        "ARENA_MAX_ATTEMPTS",
        "ARENA_MATCH_TIME_LIMIT",
        "ARENA_RESEND_GRACE_SECONDS",
    ],
)
@pytest.mark.parametrize("raw", ["soon", "0", "-3"])
def test_config_rejects_bad_values_naming_the_variable(variable: str, raw: str) -> None:
    with pytest.raises(ValueError, match=variable):
        Config.from_env({variable: raw})


def test_config_from_the_process_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARENA_SWEEP_SECONDS", "2")
    monkeypatch.setenv("ARENA_LEASE_SECONDS", "30")
    config = Config.from_env()
    assert (config.sweep_seconds, config.lease_seconds, config.heartbeat_seconds) == (2, 30, 10)


def test_match_settings_from_json() -> None:
    assert MatchSettings.from_json(None) == MatchSettings()
    assert MatchSettings.from_json({"move_seconds": 2}) == MatchSettings(2.0, 512)
    assert MatchSettings.from_json({"memory_mb": "256"}) == MatchSettings(1.0, 256)


# --- resolving entrants -------------------------------------------------------------------


def test_resolve_entrants_by_name_version_owner_and_label(store: Store) -> None:
    v1 = _add(store, "alice", "greedy")
    v2 = _add(store, "alice", "greedy")
    rand = _add(store, "bob", "random")
    resolved = resolve_entrants(
        store, ["greedy", "greedy@1", "bob/random", "old=alice/greedy@1", "new=greedy"]
    )
    by_label = {entrant.label: entrant.version for entrant in resolved}
    assert by_label == {"greedy": v2, "greedy-v1": v1, "random": rand, "old": v1, "new": v2}
    labels = [entrant.label for entrant in resolved]
    assert labels == ["greedy", "greedy-v1", "random", "old", "new"]  # in spec order
    assert resolved[0] == Entrant.stored("greedy", v2)
    assert resolve_entrants(store, []) == []


def test_resolve_entrants_errors(store: Store) -> None:
    _add(store, "alice", "greedy")
    _add(store, "alice", "greedy")
    _add(store, "bob", "greedy")
    _add(store, "bob", "random")
    with pytest.raises(LookupError, match=r"no bot 'nobody' is stored.*arena bots add"):
        resolve_entrants(store, ["nobody"])
    with pytest.raises(LookupError, match="no version 9 of bot 'random'"):
        resolve_entrants(store, ["random@9"])
    with pytest.raises(LookupError, match="no bot 'random' of 'alice'"):
        resolve_entrants(store, ["alice/random"])
    with pytest.raises(LookupError, match=r"several owners .*'greedy' \(alice, bob\)"):
        resolve_entrants(store, ["random", "greedy"])
    # A version only one owner has, or an owner, settles it.
    settled = resolve_entrants(store, ["greedy@2", "b=bob/greedy"])
    assert [entrant.label for entrant in settled] == ["greedy-v2", "b"]
    with pytest.raises(ValueError, match="two entrants are labelled 'greedy'"):
        resolve_entrants(store, ["alice/greedy", "bob/greedy"])
    with pytest.raises(ValueError, match="two entrants are labelled 'x'"):
        resolve_entrants(store, ["x=random", "x=bob/greedy"])


def test_resolve_entrants_rejects_malformed_specs(store: Store) -> None:
    _add(store, "alice", "greedy")
    for spec in ("", "a/b/c", "greedy@x", "greedy@", "@1", "bad label=greedy", "x=", "/greedy"):
        with pytest.raises(ValueError, match=r"not a valid name|not a number|is not \[LABEL="):
            resolve_entrants(store, [spec])


# --- creating tournaments -----------------------------------------------------------------


def test_create_stored_tournament_stores_matches_labels_and_settings(store: Store) -> None:
    random_id = _add(store, "arena", "random")
    greedy_v1 = _add(store, "arena", "greedy")
    _add(store, "arena", "greedy")
    settings = MatchSettings(move_seconds=0.25, memory_mb=128)
    tid, scheduled = create_stored_tournament(
        store, name="spring", rules=PRESETS["draw"], format="round-robin",
        entrants=["random", "g1=greedy@1"], games_per_match=3, seed=11, settings=settings,
    )  # fmt: skip
    assert [m.id for m in scheduled] == ["r0000-0", "r0000-1"]
    tournament = _tournament(store, tid)
    assert (tournament.name, tournament.format) == ("spring", "round-robin")
    assert tournament.status == "pending"
    assert (tournament.players, tournament.teams, tournament.games_per_match, tournament.seed) == (
        2, False, 3, 11,
    )  # fmt: skip
    assert tournament.settings == {"move_seconds": 0.25, "memory_mb": 128}
    assert tournament.started is None and tournament.finished is None
    with store.read() as session:
        rows = list(session.scalars(select(Match).order_by(Match.id)))
        entrants = session.execute(
            select(TournamentEntrant.label, TournamentEntrant.bot_version_id).order_by(
                TournamentEntrant.label
            )
        ).all()
    assert [tuple(e) for e in entrants] == [("g1", greedy_v1), ("random", random_id)]
    ids = {"random": random_id, "g1": greedy_v1}
    for row, planned in zip(rows, scheduled, strict=True):
        labels = [seat.label for seat in planned.seats]
        assert row.key == planned.id and row.labels == labels
        assert row.seats == [ids[label] for label in labels]
        assert (row.games, row.seed, row.status, row.attempts) == (
            planned.games, planned.seed, "pending", 0,
        )  # fmt: skip
    assert [row.games for row in rows] == [2, 1]  # the odd game goes to the first order
    with pytest.raises(ValueError, match="'spring' exists already"):
        create_stored_tournament(
            store, name="spring", rules=PRESETS["draw"], format="round-robin",
            entrants=["random", "greedy"], seed=1,
        )  # fmt: skip
    with pytest.raises(ValueError, match="needs a name"):
        create_stored_tournament(
            store, name=" ", rules=PRESETS["draw"], format="round-robin",
            entrants=["random", "greedy"], seed=1,
        )  # fmt: skip
    default = create_stored_tournament(
        store, name="summer", rules=PRESETS["draw"], format="round-robin",
        entrants=["random", "greedy"], seed=1,
    )[0]  # fmt: skip
    assert _tournament(store, default).settings == {"move_seconds": 1.0, "memory_mb": 512}
    assert service.tournament_by_name(store, "spring").id == tid
    with pytest.raises(LookupError, match=r"'autumn' \(latest: summer, spring\)"):
        service.tournament_by_name(store, "autumn")


def test_create_stored_gauntlet_with_a_pool(store: Store) -> None:
    ids = {name: _add(store, "arena", name) for name in ("greedy", "random", "fives", "counter")}
    tid, scheduled = create_stored_tournament(
        store, name="g", rules=PRESETS["block"], format="gauntlet", entrants=["greedy"],
        pool=["random", "fives", "counter"], games_per_match=2, seed=3,
    )  # fmt: skip
    assert len(scheduled) == 6  # 3 tables, both seat orders
    with store.read() as session:
        rows = list(session.scalars(select(Match).where(Match.tournament_id == tid)))
        labels = set(session.scalars(select(TournamentEntrant.label)))
    assert labels == {"greedy", "random", "fives", "counter"}
    opponents = set()
    for row in rows:
        assert row.labels is not None and "greedy" in row.labels
        (other,) = set(row.labels) - {"greedy"}
        opponents.add(other)
        assert row.seats == [ids[label] for label in row.labels]
    assert opponents == {"random", "fives", "counter"}
    with pytest.raises(LookupError, match="'missing'"):
        create_stored_tournament(
            store, name="g2", rules=PRESETS["block"], format="gauntlet", entrants=["greedy"],
            pool=["missing"], seed=3,
        )  # fmt: skip
    with pytest.raises(ValueError, match="two entrants are labelled 'random'"):
        create_stored_tournament(
            store, name="g3", rules=PRESETS["block"], format="gauntlet", entrants=["random"],
            pool=["random", "fives"], seed=3,
        )  # fmt: skip


# --- the queue: claiming one match, releasing it, tournament status -----------------------


def test_claim_a_given_match_and_release_it(store: Store) -> None:
    _add_reference_bots(store)
    _, (first, second) = _create(store)
    claimed = claim_match(store, "w1", lease_seconds=60, match_id=second, now=T0)
    assert claimed is not None and claimed.match_id == second and claimed.attempts == 1
    assert claimed.labels == ("greedy", "random") and claimed.settings == {
        "move_seconds": 1.0, "memory_mb": 512,
    }  # fmt: skip
    assert claim_match(store, "w2", lease_seconds=60, match_id=second, now=T0) is None  # held
    assert claim_match(store, "w2", lease_seconds=60, match_id=10**6, now=T0) is None
    assert not release_match(store, second, "w2")  # not w2's
    assert release_match(store, second, "w1")
    released = _match(store, second)
    assert _lease(released) == ("pending", None, None) and released.attempts == 1
    assert not release_match(store, second, "w1")  # pending: nothing to give back
    again = claim_match(store, "w2", lease_seconds=60, match_id=second, now=T0)
    assert again is not None and (again.attempts, again.lease_owner) == (2, "w2")
    later = T0 + timedelta(seconds=61)  # w2's lease ran out: w3 may take it by id
    taken = claim_match(store, "w3", lease_seconds=60, match_id=second, now=later)
    assert taken is not None and taken.attempts == 3
    assert complete_match(store, second, "w3", records=[], result={"ok": 1})
    assert claim_match(store, "w1", lease_seconds=60, match_id=second, now=later) is None
    assert not release_match(store, second, "w3")  # done: stays done
    assert _match(store, first).status == "pending"


def test_tournament_runs_on_the_first_claim_and_is_done_after_the_last_match(
    store: Store,
) -> None:
    _add_reference_bots(store)
    tid, (first, second) = _create(store)
    other_tid, (other,) = _create(store, name="other", games=1)
    t1, t2, t3 = (T0 + timedelta(minutes=m) for m in (1, 2, 3))
    assert claim_match(store, "w1", lease_seconds=600, match_id=first, now=T0) is not None
    tournament = _tournament(store, tid)
    assert tournament.status == "running" and _utc(tournament.started) == T0
    assert tournament.finished is None
    assert _tournament(store, other_tid).status == "pending"  # another tournament: untouched
    assert complete_match(store, first, "w1", records=[], result={}, now=t1)
    assert _tournament(store, tid).status == "running"
    assert claim_match(store, "w2", lease_seconds=600, match_id=second, now=t2) is not None
    assert _utc(_tournament(store, tid).started) == T0  # started once
    assert void_match(store, second, "w2", "broken", now=t3)  # the last one, void: done
    tournament = _tournament(store, tid)
    assert tournament.status == "done" and _utc(tournament.finished) == t3
    assert _utc(tournament.started) == T0
    assert _match(store, other).status == "pending"


# --- the queue: what sweeps send ----------------------------------------------------------


def test_unqueued_matches_and_mark_queued(store: Store) -> None:
    _add_reference_bots(store)
    tid, ids = _create(store, games=6)
    other_tid, other_ids = _create(store, name="other", games=2)
    assert unqueued_matches(store) == [*ids, *other_ids]
    assert unqueued_matches(store, tournament_id=tid) == ids
    mark_queued(store, [])  # nothing to do
    mark_queued(store, ids[:1], now=T0)
    assert _utc(_match(store, ids[0]).queued) == T0
    assert unqueued_matches(store, tournament_id=tid) == ids[1:]
    assert unqueued_matches(store, sent_before=T0) == []  # strictly before
    assert unqueued_matches(store, sent_before=T0 + timedelta(seconds=1)) == ids[:1]
    naive = (T0 + timedelta(seconds=1)).replace(tzinfo=None)  # naive: taken as UTC
    assert unqueued_matches(store, sent_before=naive) == ids[:1]
    assert (
        unqueued_matches(store, tournament_id=other_tid, sent_before=T0 + timedelta(days=1)) == []
    )
    assert claim_match(store, "w", lease_seconds=60, match_id=ids[0]) is not None
    assert unqueued_matches(store, sent_before=T0 + timedelta(seconds=1)) == []  # not pending


def test_send_pending_sends_in_chunks_and_marks_them_sent(store: Store, recorder: Recorder) -> None:
    x = Entrant.stored("x", _add(store, "arena", "x"))
    scheduled = [ScheduledMatch(f"m{i:04d}", (x, x), 1, i) for i in range(501)]
    tid = create_tournament(
        store, name="big", rules=PRESETS["block"], format="round-robin", players=2,
        teams=False, games_per_match=1, seed=1, entrants=[x], matches=scheduled,
    )  # fmt: skip
    sent = recorder.sent
    before = datetime.now(UTC)
    ids = send_pending(store, tournament_id=tid)
    assert [len(chunk) for chunk in sent] == [500, 1]
    assert [*itertools.chain(*sent)] == ids == _match_ids(store, tid)
    queued = _utc(_match(store, ids[-1]).queued)
    assert queued is not None and queued >= before - timedelta(seconds=1)
    assert send_pending(store, tournament_id=tid) == []
    assert len(sent) == 2


def test_sweep_sends_expired_leases_again_but_never_unsent_matches(
    store: Store, recorder: Recorder
) -> None:
    _add_reference_bots(store)
    _, (dead, never_sent) = _create(store)
    now = datetime.now(UTC)
    claimed = claim_match(
        store, "dead", lease_seconds=5, match_id=dead, now=now - timedelta(minutes=1)
    )
    assert claimed is not None
    sent = recorder.sent
    report = sweep_matches(store, queue_empty=True, now=now)
    assert report == SweepReport(expired=(dead,), resent=())
    assert sent == [[dead]]  # the unsent match is left to `arena tournament run`
    requeued = _match(store, dead)
    assert _lease(requeued) == ("pending", None, None)
    queued = _utc(requeued.queued)
    assert queued is not None and queued >= now - timedelta(seconds=1)
    assert _match(store, never_sent).queued is None
    # Sent just now: within the grace, a second sweep sends nothing.
    again = sweep_matches(store, queue_empty=True)
    assert again == SweepReport((), ()) and sent == [[dead]]
    assert requeue_expired(store) == []


def test_sweep_resends_lost_tasks_only_when_the_queue_is_empty(
    store: Store, recorder: Recorder
) -> None:
    _add_reference_bots(store)
    _, (lost, recent) = _create(store)
    _, (running,) = _create(store, name="other", games=1)
    now = datetime.now(UTC)
    mark_queued(store, [lost, running], now=now - timedelta(seconds=60))
    mark_queued(store, [recent], now=now - timedelta(seconds=5))
    assert claim_match(store, "alive", lease_seconds=600, match_id=running) is not None

    def sent() -> list[int]:
        return [*itertools.chain(*recorder.sent)]

    grace = 10.0
    assert sweep_matches(store, queue_empty=False, resend_grace_seconds=grace) == SweepReport(
        (), ()
    )
    assert sent() == []
    report = sweep_matches(store, queue_empty=True, resend_grace_seconds=grace)
    assert report == SweepReport(expired=(), resent=(lost,)) and sent() == [lost]
    assert sweep_matches(store, queue_empty=True, resend_grace_seconds=grace).resent == ()
    shorter = 1.0
    assert sweep_matches(store, queue_empty=True, resend_grace_seconds=shorter).resent == (recent,)
    assert sent() == [lost, recent]
    assert _match(store, running).status == "running"


@pytest.mark.backends("sqlite")  # the SQL is tests/store/test_queue.py's, on both
def test_the_sweep_runs_a_tournament_done_with_a_match_pending_again_and_sends_it(
    store: Store, recorder: Recorder
) -> None:
    """A tournament left done with a match pending (tests/store/test_queue.py): the sweep
    runs it again before it looks for lost tasks, so the match is sent again once, and a
    claim takes it (in CI it was sent again every second while no claim could take it)."""
    _add_reference_bots(store)
    tid, (played, left) = _create(store)
    now = datetime.now(UTC)
    mark_queued(store, [played, left], now=now - timedelta(seconds=60))
    assert claim_match(store, "w", lease_seconds=60, match_id=played) is not None
    assert complete_match(store, played, "w", records=[], result={"games": []})
    with store.write() as session:
        session.execute(update(Tournament).where(Tournament.id == tid).values(status="done"))
    report = sweep_matches(store, queue_empty=True, now=now)
    assert report == SweepReport(expired=(), resent=(left,), reopened=(tid,))
    assert recorder.sent == [[left]]
    claimed = claim_match(store, "w", lease_seconds=60, lane="matches")
    assert claimed is not None and claimed.match_id == left


# --- playing a match ----------------------------------------------------------------------


@pytest.mark.backends("sqlite")  # the compile in the sandbox is the point, not the SQL
def test_a_worker_plays_a_stored_cpp_version_compiled_in_its_sandbox(
    store: Store, tmp_path: Path
) -> None:
    """A stored cpp version is written to the worker's bot cache as ``<sha256>.cpp``, compiled
    there in its seat's sandbox (or taken from the compile cache) and played."""
    _add_reference_bots(store, ("greedy",))
    store.add_bot_version(
        "arena", "cppgreedy", (BOTS / "greedy.cpp").read_text(), {}, runtime="cpp"
    )
    _, (first, _) = _create(store, games=2, entrants=("cppgreedy", "greedy"))
    assert run_match(store, first, worker="w1", config=_config(tmp_path)) == "done"
    result = _match(store, first).result
    assert result is not None
    assert [game["verdict"] for game in result["games"]] == [None]  # (the other seat order: 1)
    assert sorted(path.suffix for path in (tmp_path / "bot-cache").iterdir()) == [".cpp", ".py"]


@pytest.mark.backends("sqlite")  # the compile in the sandbox is the point, not the SQL
def test_a_worker_plays_a_stored_java_version_compiled_in_its_sandbox(
    store: Store, tmp_path: Path
) -> None:
    """A stored java version is written to the worker's bot cache as ``<sha256>.java`` (a
    name javac would refuse for a public class Greedy: the kit's build does not mind),
    compiled there in its seat's sandbox (or taken from the compile cache) and played."""
    _add_reference_bots(store, ("greedy",))
    store.add_bot_version(
        "arena", "javagreedy", (BOTS / "Greedy.java").read_text(), {}, runtime="java"
    )
    _, (first, _) = _create(store, games=2, entrants=("javagreedy", "greedy"))
    assert run_match(store, first, worker="w1", config=_config(tmp_path)) == "done"
    result = _match(store, first).result
    assert result is not None
    assert [game["verdict"] for game in result["games"]] == [None]
    assert sorted(path.suffix for path in (tmp_path / "bot-cache").iterdir()) == [".java", ".py"]


def test_run_match_plays_stores_and_a_second_call_finds_it_finished(
    store: Store, tmp_path: Path
) -> None:
    _add_reference_bots(store)
    tid, (first, second) = _create(store, games=4)
    config = _config(tmp_path)
    assert run_match(store, first, worker="w1", config=config, sandboxed=False) == "done"
    assert run_match(store, first, worker="w2", config=config, sandboxed=False) == "finished"
    assert run_match(store, 10**6, worker="w2", config=config, sandboxed=False) == "missing"
    match = _match(store, first)
    assert (match.status, match.attempts, match.lease_owner) == ("done", 1, "w1")
    assert _utc(match.finished) is not None and match.lease_expires is None
    result = match.result
    assert result is not None and set(result) == {"games", "seconds", "worker", "sources"}
    assert result["worker"] == "w1"
    hashes = source_hashes(store, match.seats)
    assert result["sources"] == [hashes[seat] for seat in match.seats]  # what each seat ran
    assert isinstance(result["seconds"], float) and 0 <= result["seconds"] < 60
    games = result["games"]
    assert [game["index"] for game in games] == [0, 1]
    assert [game["seed"] for game in games] == game_seeds(match.seed, 2)
    for game in games:
        assert set(game) == GAME_KEYS
        assert sorted(game["places"]) in ([0, 1], [0, 0]) and len(game["points"]) == 2
        assert set(game["winners"]) <= {0, 1} and game["winners"]
        assert game["termination"] == "target" and game["verdict"] is None
    records = _records(store, first)
    assert len(records) == 2
    for game, record in zip(games, records, strict=True):
        assert verify_record(record) == []
        assert record["seed"] == game["seed"] and record["seats"] == match.labels
    cached = sorted(path.name for path in config.bot_cache.glob("*.py*"))
    assert len(cached) == 2 and all(name.endswith(".py") and len(name) == 67 for name in cached)
    tournament = _tournament(store, tid)
    assert tournament.status == "running" and tournament.finished is None
    assert run_match(store, second, config=config, sandboxed=False) == "done"
    worker = _match(store, second).result
    assert worker is not None and worker["worker"] == service.worker_id()
    tournament = _tournament(store, tid)
    assert tournament.status == "done" and tournament.finished is not None


def test_run_match_leaves_a_held_match_to_its_worker(store: Store, tmp_path: Path) -> None:
    _add_reference_bots(store)
    _, (match_id, expired_id) = _create(store)
    config = _config(tmp_path)
    assert claim_match(store, "other", lease_seconds=600, match_id=match_id) is not None
    assert run_match(store, match_id, worker="w1", config=config, sandboxed=False) == "held"
    held = _match(store, match_id)
    assert (held.status, held.lease_owner, held.attempts) == ("running", "other", 1)
    assert _records(store, match_id) == []
    # A lease that ran out is no longer held: the match is taken over and played.
    long_ago = datetime.now(UTC) - timedelta(hours=1)
    assert claim_match(store, "dead", lease_seconds=60, match_id=expired_id, now=long_ago)
    assert run_match(store, expired_id, worker="w1", config=config, sandboxed=False) == "done"
    taken = _match(store, expired_id)
    assert (taken.status, taken.attempts, taken.lease_owner) == ("done", 2, "w1")


def test_the_same_match_in_two_databases_plays_the_same_games(store: Store, tmp_path: Path) -> None:
    """The seeds fix the deals and the harness's choices; the bots must be deterministic too
    (bots/random.py draws from an unseeded ``random.Random``: its games differ run to run)."""
    copy_url = f"sqlite:///{tmp_path / 'copy.db'}"
    upgrade(copy_url)
    copy = connect(copy_url)
    try:
        results = []
        for db in (store, copy):
            _add_reference_bots(db, ("greedy", "fives"))
            _, ids = _create(db, name="same", games=4, seed=2024, entrants=("greedy", "fives"))
            for match_id in ids:
                played = run_match(db, match_id, config=_config(tmp_path), sandboxed=False)
                assert played == "done"
            matches = [_match(db, match_id) for match_id in ids]
            results.append(
                [
                    # the same games; only the decisions' times may differ
                    (
                        m.key,
                        m.result["games"] if m.result else None,
                        [without_times(r) for r in _records(db, m.id)],
                    )
                    for m in matches
                ]
            )
    finally:
        copy.close()
    assert results[0] == results[1]
    assert all(games for _, games, _ in results[0])


def test_an_infrastructure_fault_puts_the_match_back_then_voids_it(
    store: Store, tmp_path: Path
) -> None:
    _add_reference_bots(store)
    tid, (match_id, _) = _create(store)
    blocked = tmp_path / "a-file"
    blocked.write_text("the bot cache cannot be made under a regular file")
    config = Config(bot_cache=blocked / "cache", max_attempts=2)
    with pytest.raises(InfrastructureError, match=f"match {match_id}: .*cannot write the bots'"):
        run_match(store, match_id, worker="w1", config=config, sandboxed=False)
    pending = _match(store, match_id)
    assert (pending.status, pending.attempts, pending.lease_owner) == ("pending", 1, None)
    assert pending.result is None and pending.lease_expires is None
    assert run_match(store, match_id, worker="w2", config=config, sandboxed=False) == "void"
    void = _match(store, match_id)
    assert (void.status, void.attempts) == ("void", 2)
    assert void.result is not None and set(void.result) == {"void", "worker", "attempts"}
    assert void.result["void"].startswith("InfrastructureError: cannot write the bots' files")
    assert void.result["void"].endswith("(2 attempts)")
    assert (void.result["worker"], void.result["attempts"]) == ("w2", 2)
    assert _records(store, match_id) == []
    assert run_match(store, match_id, worker="w3", config=config, sandboxed=False) == "finished"
    assert _tournament(store, tid).status == "running"  # the other match is still to play


@pytest.mark.parametrize("error", [RuntimeError("a bug"), KeyboardInterrupt()])
def test_any_other_failure_puts_the_match_back_and_is_raised_as_it_is(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, error: BaseException
) -> None:
    _add_reference_bots(store)
    _, (match_id, _) = _create(store)

    def failing(*args: object, **kwargs: object) -> MatchResult:
        raise error

    monkeypatch.setattr(service, "play_one", failing)
    with pytest.raises(type(error)):
        run_match(store, match_id, worker="w1", config=_config(tmp_path), sandboxed=False)
    match = _match(store, match_id)
    assert (match.status, match.attempts, match.lease_owner) == ("pending", 1, None)


def test_a_void_match_result_is_an_infrastructure_fault(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _add_reference_bots(store)
    _, (match_id, _) = _create(store)

    def void(match: ScheduledMatch, *args: object, **kwargs: object) -> MatchResult:
        return MatchResult(match, (), "the sandbox died", 0.1, os.getpid())

    monkeypatch.setattr(service, "play_one", void)
    with pytest.raises(InfrastructureError, match="the sandbox died"):
        run_match(store, match_id, worker="w1", config=_config(tmp_path), sandboxed=False)
    match = _match(store, match_id)
    assert (match.status, match.attempts, match.result) == ("pending", 1, None)


def test_a_lease_lost_mid_play_the_first_completion_wins(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _add_reference_bots(store)
    _, (match_id, _) = _create(store)

    def slow_worker(*args: Any, **kwargs: Any) -> MatchResult:
        """w1 plays; meanwhile its lease runs out, w2 claims the match and stores it first."""
        played = real_play_one(*args, **kwargs)
        later = datetime.now(UTC) + timedelta(hours=1)
        assert claim_match(store, "w2", lease_seconds=60, match_id=match_id, now=later)
        records = [game.record for game in played.games]
        assert complete_match(store, match_id, "w2", records=records, result={"worker": "w2"})
        return played

    monkeypatch.setattr(service, "play_one", slow_worker)
    config = _config(tmp_path, heartbeat_seconds=0.1)
    assert run_match(store, match_id, worker="w1", config=config, sandboxed=False) == "stale"
    match = _match(store, match_id)
    assert (match.status, match.attempts, match.result) == ("done", 2, {"worker": "w2"})
    assert len(_records(store, match_id)) == match.games  # stored once, by w2


# --- entrants, from the store to the referee ---------------------------------------------


def test_stored_entrants_reach_play_one_as_scheduled(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The schedule seats stored entrants (a label and a bot version id); the worker claims
    each match and gives play_one those very values, with each version's file; the results
    load back with the same seats."""
    _add_reference_bots(store)
    tid, scheduled = create_stored_tournament(
        store, name="t", rules=RULES, format="round-robin", entrants=["r=random", "greedy"],
        games_per_match=3, seed=3,
    )  # fmt: skip
    labels = {seat.label: seat.version for match in scheduled for seat in match.seats}
    assert set(labels) == {"r", "greedy"} and None not in labels.values()
    seen: list[tuple[ScheduledMatch, dict[int, Path]]] = []

    def spy(match: ScheduledMatch, *args: Any, **kwargs: Any) -> MatchResult:
        seen.append((match, dict(kwargs["files"])))
        return real_play_one(match, *args, **kwargs)

    monkeypatch.setattr(service, "play_one", spy)
    config = _config(tmp_path)
    for match_id in _match_ids(store, tid):  # in schedule order
        assert run_match(store, match_id, worker="w1", config=config, sandboxed=False) == "done"
    assert [match.seats for match, _ in seen] == [match.seats for match in scheduled]
    sources = {name: (BOTS / f"{name}.py").read_text() for name in ("random", "greedy")}
    for match, files in seen:
        assert set(files) == {seat.version for seat in match.seats}
        for seat in match.seats:
            assert seat.version is not None
            bot = "random" if seat.label == "r" else "greedy"
            assert files[seat.version].read_text() == sources[bot]
    loaded = load_results(store, tid, records=True)
    assert [result.match.seats for result in loaded] == [match.seats for match in scheduled]
    for result in loaded:
        for game in result.games:
            assert game.record["seats"] == [seat.label for seat in result.match.seats]


def test_chosen_bots_become_references_labelled_apart(store: Store) -> None:
    """The web's ``owner/name`` choices are parsed once into references (two owners' bots of
    one name labelled ``owner.name``), resolved together; a choice that does not parse is
    left for the tournament's creation to refuse."""
    ada, bob, rand = (
        _add(store, "ada", "greedy"),
        _add(store, "bob", "greedy"),
        _add(store, "bob", "random"),
    )
    chosen = entrant_specs(["ada/greedy", "bob/greedy", "bob/random"])
    assert chosen == (
        Reference("ada.greedy", "ada", "greedy", None),
        Reference("bob.greedy", "bob", "greedy", None),
        Reference("random", "bob", "random", None),
    )
    assert resolve_entrants(store, chosen) == [
        Entrant.stored("ada.greedy", ada), Entrant.stored("bob.greedy", bob),
        Entrant.stored("random", rand),
    ]  # fmt: skip
    assert entrant_specs(["ada/greedy", "a/b/c"]) == (
        Reference("greedy", "ada", "greedy", None), "a/b/c"
    )  # fmt: skip
    with pytest.raises(ValueError, match=r"'a/b/c' is not \[LABEL=\]"):
        resolve_entrants(store, entrant_specs(["a/b/c"]))


def test_resolve_entrants_looks_every_version_up_in_one_query(store: Store) -> None:
    for number in range(6):
        _add(store, "alice", f"bot{number}")
        _add(store, "alice", f"bot{number}")
    asked: list[str] = []

    def count(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        if "bot_versions" in statement:
            asked.append(statement)

    event.listen(store.engine, "before_cursor_execute", count)
    try:
        resolved = resolve_entrants(
            store, [*(f"bot{number}" for number in range(6)), "old=alice/bot0@1", "bot1@v1"]
        )
    finally:
        event.remove(store.engine, "before_cursor_execute", count)
    assert [entrant.label for entrant in resolved] == [
        "bot0", "bot1", "bot2", "bot3", "bot4", "bot5", "old", "bot1-v1"
    ]  # fmt: skip
    assert resolved[0].version != resolved[6].version  # the latest, and version 1
    assert len(asked) == 1


def test_a_match_stored_without_labels_still_loads_and_plays(store: Store, tmp_path: Path) -> None:
    """Matches stored before ``matches.labels`` existed (migration 0002) have none: a worker
    plays them and their results load, each seat labelled by its bot version id, as before."""
    _add_reference_bots(store)
    tid, (first, second) = _create(store)
    with store.write() as session:
        session.execute(update(Match).where(Match.tournament_id == tid).values(labels=null()))
    assert _match(store, first).labels is None
    config = _config(tmp_path)
    assert run_match(store, first, worker="w1", config=config, sandboxed=False) == "done"
    versions = [int(version) for version in _match(store, first).seats]
    (loaded,) = load_results(store, tid, records=True)
    assert loaded.match.seats == tuple(Entrant.stored(str(v), v) for v in versions)
    assert loaded.games[0].record["seats"] == [str(v) for v in versions]
    assert len(loaded.games) == _match(store, first).games
    assert _match(store, second).status == "pending"


# --- the sandbox's slot blocks ------------------------------------------------------------


@pytest.fixture
def own_slot_locks() -> Iterator[None]:
    """Close the lock files this test's claims keep open (claims last for the process)."""
    before = len(sandbox._held_slot_locks)
    yield
    while len(sandbox._held_slot_locks) > before:
        os.close(sandbox._held_slot_locks.pop())


#: A child process's code: claim a block, report it, and hold it until killed. Run by
#: ``exec`` (a builtin, so the spawned child imports arena.match.sandbox only, not this module).
_HOLD_SLOT_BLOCK = """
import time
from pathlib import Path
from arena.match.sandbox import claim_slot_block
conn.send(claim_slot_block(first=100, blocks=3, directory=Path(directory)))
time.sleep(120)
"""


def test_claim_slot_block_skips_blocks_held_by_live_processes(
    tmp_path: Path, own_slot_locks: None
) -> None:
    directory = tmp_path / "slots"
    context = multiprocessing.get_context("spawn")
    receiver, sender = context.Pipe(duplex=False)
    scope = {"directory": str(directory), "conn": sender}
    child = context.Process(target=exec, args=(_HOLD_SLOT_BLOCK, scope), daemon=True)
    child.start()
    sender.close()
    try:
        assert receiver.poll(60), "the child process did not claim a block"
        assert receiver.recv() == 100
        assert claim_slot_block(first=100, blocks=3, directory=directory) == 108
        assert claim_slot_block(first=100, blocks=3, directory=directory) == 116
        with pytest.raises(SandboxUnavailable, match=f"all 3 sandbox slot blocks in {directory}"):
            claim_slot_block(first=100, blocks=3, directory=directory)
        assert child.pid is not None
        os.kill(child.pid, signal.SIGKILL)
        child.join(10)
        assert child.exitcode == -signal.SIGKILL
        # The kernel released the dead child's lock: its block is free again.
        assert claim_slot_block(first=100, blocks=3, directory=directory) == 100
    finally:
        if child.is_alive():
            child.kill()
        child.join(10)
        child.close()
        receiver.close()
    assert sorted(p.name for p in directory.iterdir()) == [f"block-100-{b}.lock" for b in range(3)]


def test_claim_slot_block_defaults_give_distinct_blocks(
    tmp_path: Path, own_slot_locks: None
) -> None:
    first = claim_slot_block(directory=tmp_path)
    second = claim_slot_block(directory=tmp_path)
    assert (first, second) == (0, 8)


# --- the broker's configuration -----------------------------------------------------------


@pytest.fixture
def no_broker_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """No ARENA_BROKER_URL, and a temporary current directory (returned, resolved)."""
    monkeypatch.delenv(broker.BROKER_ENV, raising=False)
    monkeypatch.delenv("ARENA_DATABASE_URL", raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path.resolve()


def test_resolve_broker_url(no_broker_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    here = no_broker_env
    default = broker.default_broker_dir()
    assert broker.resolve_broker_url() == f"filesystem://{default}"
    assert broker.resolve_broker_url("filesystem://") == f"filesystem://{default}"
    assert default.parent == Path(tempfile.gettempdir()) and not default.is_relative_to(here)
    assert broker.resolve_broker_url("filesystem://q/b") == f"filesystem://{here / 'q' / 'b'}"
    assert broker.resolve_broker_url(f"filesystem://{here}/abs") == f"filesystem://{here}/abs"
    for kept in ("redis://redis:6379/0", "rediss://u:p@h:6380/1", "memory://"):
        assert broker.resolve_broker_url(kept) == kept
    for bad in ("amqp://guest@localhost//", "junk", "sqla+sqlite:///x.db", "filesystem:x"):
        with pytest.raises(ValueError, match="unsupported broker URL"):
            broker.resolve_broker_url(bad)
    monkeypatch.setenv(broker.BROKER_ENV, "redis://elsewhere:1/2")
    assert broker.resolve_broker_url() == "redis://elsewhere:1/2"
    assert broker.resolve_broker_url("filesystem://x") == f"filesystem://{here / 'x'}"
    monkeypatch.setenv(broker.BROKER_ENV, "filesystem://from-env")
    assert broker.resolve_broker_url() == f"filesystem://{here / 'from-env'}"
    monkeypatch.setenv(broker.BROKER_ENV, "amqp://x")
    with pytest.raises(ValueError, match="amqp://x"):
        broker.resolve_broker_url()


def test_make_app_reliability_settings_on_redis(no_broker_env: Path) -> None:
    config = Config(match_time_limit=5000, sweep_seconds=7)
    app = broker.make_app("redis://127.0.0.1:1/0", config)
    conf = app.conf
    assert conf.broker_url == "redis://127.0.0.1:1/0"
    assert conf.task_acks_late is True and conf.task_reject_on_worker_lost is True
    assert conf.worker_prefetch_multiplier == 1 and conf.task_ignore_result is True
    assert conf.task_default_queue == broker.QUEUE
    # uploads' checks first, then interactive work and people's tables: before a match
    assert [q.name for q in conf.task_queues] == [
        broker.CHECK_QUEUE,
        broker.INTERACTIVE_QUEUE,
        broker.TABLES_QUEUE,
        broker.QUEUE,
    ]
    assert conf.broker_transport_options["queue_order_strategy"] == "priority"
    assert conf.broker_transport_options["visibility_timeout"] >= 2 * config.match_time_limit
    assert (conf.task_time_limit, conf.task_soft_time_limit) == (5000, 4970)
    # no sweep task in a work queue: each worker's main process sweeps from a thread
    assert not conf.beat_schedule
    default = broker.make_app("redis://127.0.0.1:1/0", Config()).conf
    assert default.broker_transport_options["visibility_timeout"] >= 2 * 1800
    short = broker.make_app("redis://127.0.0.1:1/0", Config(match_time_limit=10)).conf
    assert short.task_soft_time_limit == 1.0
    with pytest.raises(ValueError, match="unsupported"):
        broker.make_app("amqp://localhost", config)
    assert not (no_broker_env / "arena-broker").exists()


def test_make_app_filesystem_transport(
    no_broker_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ARENA_SWEEP_SECONDS", "3")
    monkeypatch.setenv("ARENA_MATCH_TIME_LIMIT", "100")
    app = broker.make_app("filesystem://spool")  # the configuration from the environment
    directory = no_broker_env / "spool"
    assert (directory / "queue").is_dir() and (directory / "control").is_dir()
    conf = app.conf
    assert conf.broker_url == "filesystem://localhost/"
    assert conf.broker_transport_options == {
        "data_folder_in": str(directory / "queue"),
        "data_folder_out": str(directory / "queue"),
        "control_folder": str(directory / "control"),
        "store_processed": False,
        "polling_interval": 0.05,
    }
    assert conf.task_acks_late and conf.task_reject_on_worker_lost
    assert conf.worker_prefetch_multiplier == 1 and conf.task_time_limit == 100
    assert not conf.beat_schedule  # the workers sweep from a thread (workers/tasks.py)
    assert broker.make_app().conf.broker_transport_options["data_folder_in"] == str(
        broker.default_broker_dir() / "queue"
    )
    assert sorted(p.name for p in no_broker_env.iterdir()) == ["spool"]


def test_send_matches_and_queue_length_on_the_filesystem_transport(no_broker_env: Path) -> None:
    app = broker.make_app("filesystem://spool", Config())
    assert broker.queue_length(app) == 0
    broker.send_matches(app, [])
    broker.send_matches(app, [3, 1, 2])
    assert broker.queue_length(app) == 3
    broker.send_uploads(app, [7])  # a queue of its own, counted too
    assert broker.queue_length(app) == 4
    names = sorted(p.name.split(".", 1)[1] for p in (no_broker_env / "spool" / "queue").iterdir())
    assert names == ["arena-checks.msg", "arena.msg", "arena.msg", "arena.msg"]


def test_worker_heartbeats_alive_gone_and_stopped(store: Store) -> None:
    t0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
    config = Config(lease_seconds=60)
    worker_heartbeat(store, "arena-1@a", host="a", pid=1, concurrency=2, now=t0)
    worker_heartbeat(store, "arena-2@b", host="b", pid=2, concurrency=4, now=t0)
    later = t0 + timedelta(seconds=50)
    worker_heartbeat(store, "arena-1@a", host="a", pid=1, concurrency=2, now=later)
    states = list_workers(store, config=config, now=t0 + timedelta(seconds=90))
    assert [(w.name, w.alive, w.status) for w in states] == [
        ("arena-1@a", True, "online"),  # seen 40 s ago: within the lease
        ("arena-2@b", False, "online"),  # silent for 90 s: gone
    ]
    assert states[0].started == t0 and states[0].last_seen == later
    assert (states[1].host, states[1].pid, states[1].concurrency) == ("b", 2, 4)
    worker_stopped(store, "arena-1@a", now=later)
    worker_stopped(store, "no-such-worker", now=later)  # nothing to record
    states = list_workers(store, config=config, now=later)
    assert next((w.name, w.alive, w.status) for w in states) == ("arena-1@a", False, "stopped")
    # Started again under the same name: online, with a new start time.
    again = later + timedelta(seconds=5)
    worker_heartbeat(store, "arena-1@a", host="a", pid=1, concurrency=2, now=again)
    first = list_workers(store, config=config, now=again)[0]
    assert (first.name, first.alive, first.started) == ("arena-1@a", True, again)


def test_a_worker_that_died_and_started_again_under_its_name_shows_its_new_start(
    store: Store,
) -> None:
    """A container restarted after a crash (``kill -9``, the OOM killer) keeps its host name
    and its pids, so its node name: it never said it stopped, yet its start is the new
    life's, and each life's own beats keep it (docs/deployment.md, "More hosts")."""
    t0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
    reborn = t0 + timedelta(seconds=90)  # died after its last beat (t0 + 20 s); restarted
    later = reborn + timedelta(seconds=20)
    for now, started in (
        (t0, t0),
        (t0 + timedelta(seconds=20), t0),
        (reborn, reborn),
        (later, reborn),
    ):
        worker_heartbeat(
            store, "arena-1@c0ffee", host="c0ffee", pid=1, concurrency=2, now=now, started=started
        )
    (state,) = list_workers(store, config=Config(lease_seconds=60), now=later)
    assert (state.alive, state.status, state.started, state.last_seen) == (
        True, "online", reborn, later,
    )  # fmt: skip


def test_the_default_broker_is_the_databases_wherever_it_starts(
    no_broker_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One database, one default queue, from any directory; another database, another
    queue; none of them in the current directory."""
    here = broker.default_broker_dir()  # sqlite:///arena.db in tmp_path
    absolute = broker.default_broker_dir(f"sqlite:///{tmp_path / 'arena.db'}")
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    assert broker.default_broker_dir(f"sqlite:///{tmp_path / 'arena.db'}") == absolute == here
    assert broker.default_broker_dir() != here  # arena.db of another directory
    assert broker.default_broker_dir("postgresql://u@h/a") != broker.default_broker_dir(
        "postgresql://u@h/b"
    )
    monkeypatch.setenv("ARENA_DATABASE_URL", f"sqlite:///{tmp_path / 'arena.db'}")
    assert broker.default_broker_dir() == here


# --- the scheduler ------------------------------------------------------------------------


def test_a_cancelled_match_stops_at_its_next_heartbeat_and_stores_nothing(
    store: Store, tmp_path: Path
) -> None:
    """A match of 2,000 games (about 10 s unsandboxed) is cancelled a moment after it
    starts: its heartbeat finds it void and stops the play, the bots' processes end, and
    nothing is stored."""
    import threading
    import time

    from arena.store.queue import cancel_tournament

    _add_reference_bots(store)
    tid, (first, _) = _create(store, games=4000)
    config = _config(tmp_path, lease_seconds=3.0, heartbeat_seconds=0.2)
    outcome: list[str] = []
    began = time.monotonic()
    player = threading.Thread(
        target=lambda: outcome.append(
            run_match(store, first, worker="w1", config=config, sandboxed=False)
        )
    )
    player.start()
    while _match(store, first).status != "running":
        time.sleep(0.05)
    time.sleep(0.5)
    cancel_tournament(store, tid, by="olga")
    player.join(timeout=60)
    assert outcome == ["stopped"]
    assert time.monotonic() - began < 8, "the match was played on after its cancel"
    assert _match(store, first).status == "void" and _records(store, first) == []


def test_play_next_plays_the_oldest_sent_tournament_first(store: Store, tmp_path: Path) -> None:
    from arena.service.matches import play_next
    from arena.store.queue import mark_queued

    _add_reference_bots(store)
    _, late_ids = _create(store, name="late", games=2)
    _, early_ids = _create(store, name="early", games=2)
    mark_queued(store, early_ids, datetime(2026, 1, 1, tzinfo=UTC))
    mark_queued(store, late_ids, datetime(2026, 1, 2, tzinfo=UTC))
    config = _config(tmp_path)
    played = [play_next(store, "matches", config=config, sandboxed=False) for _ in range(5)]
    assert played == [
        *((match_id, "done") for match_id in early_ids),
        *((match_id, "done") for match_id in late_ids),
        (None, "idle"),
    ]
    assert play_next(store, "interactive", config=config, sandboxed=False) == (None, "idle")


def test_an_upload_being_checked_is_never_sent_again_until_its_lease_runs_out(
    store: Store,
) -> None:
    """The sweep lists a pending upload sent long ago (its task was lost), but not one whose
    check holds a live lease, however long ago it was sent; once the lease runs out (the
    worker died) it is listed, and sending it again drops the dead lease."""
    from arena.service.uploads import (
        claim_upload,
        mark_sent,
        renew_upload,
        unsent_uploads,
    )
    from arena.store.models import Upload
    from tests.uploads import store_upload

    owner = store.add_user("ada").id
    upload = store_upload(store, owner, "mine", "mine.py", (BOTS / "greedy.py").read_text())
    mark_sent(store, [upload])
    later = datetime.now(UTC) + timedelta(seconds=600)
    assert unsent_uploads(store, older_than=120, now=later) == [upload]
    assert claim_upload(store, upload, lease_seconds=60)
    assert not claim_upload(store, upload, lease_seconds=60)  # a second copy of the task
    assert renew_upload(store, upload, lease_seconds=60)
    soon = datetime.now(UTC) + timedelta(seconds=30)
    assert unsent_uploads(store, older_than=0, now=soon) == []
    assert unsent_uploads(store, older_than=120, now=later) == [upload]  # lease ran out
    with store.write() as session:  # as if the lease had run out now
        row = session.get(Upload, upload)
        assert row is not None
        row.lease_expires = datetime.now(UTC) - timedelta(seconds=1)
    mark_sent(store, [upload])
    with store.read() as session:
        row = session.get(Upload, upload)
        assert row is not None and row.lease_expires is None
    assert claim_upload(store, upload, lease_seconds=60)


def test_a_process_prefers_the_pairs_it_keeps_for_a_bounded_streak() -> None:
    """The pairs a worker process keeps warm, as its claims prefer them: the latest played
    to their end, as many as its slot block holds; after WARM_STREAK preferring claims in a
    row (a first one gathers, with no pair kept yet), one claim takes its tournament's
    first waiting match; a match not played to its end keeps nothing; a forked process
    starts with none."""
    from arena.match.sandbox import SLOT_BLOCK
    from arena.service.matches import WARM_STREAK, _KeptPairs

    kept = _KeptPairs()
    assert kept.prefer() == () and kept.asked  # nothing kept: it gathers
    kept.played(1, (2, 1), kept=True)
    assert kept.prefer() == ((1, (1, 2)),)
    kept.played(1, (3, 4), kept=False)  # the head, cold, stopped half-way: not kept
    assert kept.prefer() == ((1, (1, 2)),)
    for pair in range(SLOT_BLOCK):
        kept.played(2, (10 + pair, 20 + pair), kept=True)
    kept.streak = 0  # (a new streak)
    assert len(kept.prefer()) == SLOT_BLOCK // 2
    assert kept.prefer()[-1] == (2, (10 + SLOT_BLOCK - 1, 20 + SLOT_BLOCK - 1))
    latest = kept.prefer()[-1]
    for number in range(WARM_STREAK):
        assert kept.prefer() and kept.asked
        kept.played(latest[0], latest[1] if number % 2 else (5, 6), kept=True)
    assert (kept.prefer(), kept.asked) == ((), False)  # the streak's end: the first waiting
    kept.played(9, (1, 1), kept=True)
    assert (9, (1, 1)) in kept.prefer() and kept.asked  # preferred again
    kept.pid = -1  # as in a forked child
    assert kept.prefer() == ()


def test_a_played_match_is_stored_again_after_a_transient_database_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Storing a played match that fails transiently (a deadlock's victim) is tried again
    with its games in hand, not left for the task's retry to play again; an error that
    outlasts every pause is raised (then the task retries)."""
    from sqlalchemy.exc import OperationalError

    calls: list[int] = []

    def complete(store: object, match_id: int, worker: str, **_: object) -> bool:
        calls.append(match_id)
        if len(calls) < 3:
            raise OperationalError("UPDATE", {}, Exception("deadlock detected"))
        return True

    monkeypatch.setattr(service, "complete_match", complete)
    monkeypatch.setattr(service, "STORE_PAUSES", (0.0, 0.0, 0.0))
    store: Any = object()
    assert service._store_played(store, 7, "w", [], {}) is True
    assert calls == [7, 7, 7]
    calls.clear()
    monkeypatch.setattr(service, "STORE_PAUSES", (0.0,))
    with pytest.raises(OperationalError):
        service._store_played(store, 7, "w", [], {})
    assert calls == [7, 7]
