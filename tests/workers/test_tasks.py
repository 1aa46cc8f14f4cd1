"""Stored tournaments played by real Celery workers (``arena worker`` processes, prefork
pools, bots in the real sandbox), on the embedded default (SQLite + kombu's filesystem
transport) and on a deployment's parts (PostgreSQL + Redis), with the faults the service
must survive: a worker killed with SIGKILL mid-match, Redis restarted mid-tournament, a
harness that keeps failing. After each: every match stored exactly once.

Where each test runs (the ``service`` fixture; unparametrized, the embedded default): on
both stacks (:data:`on_both`) the tests whose brokers behave differently -- the check's
queue ahead of queued matches (Redis's priority order against the filesystem transport's
turns); on the deployment (:data:`on_deployment`) the fault and lease tests, the remote
compare (a deployment's feature, where its zero-margin failure was seen, issue 29) and a
tournament from the CLI to its ratings (on the embedded default, tests/workers/test_warm.py
runs tournaments from the CLI to the end and tests/cli/test_serve.py's demo to its ratings);
on the embedded default the rest (an unreachable broker is the same closed Redis address on
either), whose SQL the store's tests run on both backends (tests/store, tests/service)."""

from __future__ import annotations

import contextlib
import os
import subprocess
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from sqlalchemy import func, select

from arena.cli.common import UNAVAILABLE, USAGE_ERROR
from arena.cli.main import cli
from arena.compete.margins import LUCK_TERMS
from arena.engine.records import verify_record
from arena.service.results import load_results
from arena.store.db import Store, connect
from arena.store.models import GameRecord, Match, RatingHistory, Tournament
from arena.store.models import Rating as RatingRow
from arena.store.records import load_records
from tests.conftest import Databases
from tests.paths import REFERENCE_BOTS, ZOO
from tests.servers import (
    ARENA,
    FAST,
    Redis,
    Worker,
    running_redis,
    spawn_worker,
    start_worker,
    stop_workers,
    wait_for,
)

BOTS = REFERENCE_BOTS


@dataclass
class Service:
    """A database, a broker and the workers started on them."""

    directory: Path
    database: str
    broker: str
    redis: Redis | None = None
    workers: list[Worker] = field(default_factory=list)
    held: Store | None = None

    @property
    def env(self) -> dict[str, str]:
        return {"ARENA_DATABASE_URL": self.database, "ARENA_BROKER_URL": self.broker}

    def store(self) -> Store:
        return connect(self.database)

    def reader(self) -> Store:
        """One store the test's polls share, open until the test ends (an engine and a
        connection made for each of 20 polls a second cost the test process and PostgreSQL
        more CPU than the queries)."""
        if self.held is None:
            self.held = connect(self.database)
        return self.held

    def worker(self, *args: str, steady: bool = False, wait: bool = True) -> Worker:
        """Start a worker; ``steady``: with a 15 s lease, for tests that count attempts and
        must not see a lease run out on a loaded machine (the fault tests keep FAST's 2 s);
        ``wait=False``: return at once, so that its start (seconds) overlaps what the test
        does next or another worker's start, until :meth:`Worker.wait_ready`."""
        env = dict(self.env)
        if steady:
            env.update(ARENA_LEASE_SECONDS="15", ARENA_HEARTBEAT_SECONDS="1")
        worker = spawn_worker(self.directory, env, *args)
        self.workers.append(worker)
        if wait:
            worker.wait_ready()
        return worker

    def cli(self, *args: str, env: dict[str, str] | None = None) -> Result:
        """``arena ARGS`` in this process (click's runner), in the workers' directory (a
        relative filesystem broker is theirs) with ``env`` added: the same code as the
        console script, errors reported by the same ``main``, without a process's start
        (1.3-1.5 s of CPU). A command that sends (``tournament run``, ``compare``)
        configures the process's broker: the one before it is put back after it. A command
        a test runs beside its own work runs in a process of its own
        (:meth:`run_in_background`), as does the console script's own test
        (tests/cli/test_main.py)."""
        from arena.service.broker import install

        environ: dict[str, str | None] = {**FAST, **self.env, **(env or {}), "COLUMNS": None}
        previous = install(None)
        try:
            with contextlib.chdir(self.directory):
                result = CliRunner().invoke(cli, list(args), env=environ)
        finally:
            configured = install(previous)
            if configured is not None:
                configured.close()
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            raise result.exception
        return result

    @property
    def reachable_broker(self) -> str:
        """The broker's URL as this process reaches it (a relative filesystem broker is the
        workers' directory's)."""
        broker = self.broker
        if broker.startswith("filesystem://") and not broker.startswith("filesystem:///"):
            return f"filesystem://{self.directory / broker.removeprefix('filesystem://')}"
        return broker

    @contextmanager
    def sending(self) -> Iterator[None]:
        """The service (in this process) sends through the workers' broker while the block
        runs."""
        from arena.service.broker import make_app, using

        with using(make_app(self.reachable_broker, None, self.database)):
            yield

    def send(self, name: str) -> None:
        """Send the matches of the tournament ``name`` to the workers, from this process
        (what ``arena tournament run`` sends, without the command's process: 1.5 s of CPU,
        for the tests that are not about the command)."""
        from arena.service.dispatch import dispatch_matches

        store = self.store()
        try:
            with store.read() as session:
                tid = session.scalar(select(Tournament.id).where(Tournament.name == name))
            assert tid is not None, f"no tournament {name!r}"
            with self.sending():
                assert dispatch_matches(store, tid)
        finally:
            store.close()

    def play(self, name: str, timeout: float = 120) -> None:
        """:meth:`send` the tournament ``name`` and wait until the workers finish it."""
        self.send(name)

        def done() -> bool:
            with self.reader().read() as session:
                status = session.scalar(select(Tournament.status).where(Tournament.name == name))
            return status == "done"

        wait_for(done, timeout, f"the workers to finish {name!r}:\n{self.logs()}")

    def run_in_background(self, name: str) -> subprocess.Popen[str]:
        environ = {**os.environ, **FAST, **self.env}
        environ.pop("COLUMNS", None)
        return subprocess.Popen(
            [str(ARENA), "tournament", "run", name],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=environ,
            cwd=self.directory,
        )

    def logs(self) -> str:
        return "\n".join(f"--- {w.log.name}\n{w.output()[-3000:]}" for w in self.workers)


#: The stacks the ``service`` fixture runs: the embedded default, a deployment's parts.
EMBEDDED, DEPLOYMENT = "sqlite+filesystem", "postgresql+redis"
#: A test about the stack itself: once on each.
on_both = pytest.mark.parametrize("service", [EMBEDDED, DEPLOYMENT], indirect=True)
#: A fault or lease test: on a deployment's parts (PostgreSQL's row locks, Redis).
on_deployment = pytest.mark.parametrize("service", [DEPLOYMENT], indirect=True)


@pytest.fixture
def service(
    request: pytest.FixtureRequest, tmp_path: Path, databases: Databases
) -> Iterator[Service]:
    """The embedded default, or (parametrized indirectly: :data:`on_both`,
    :data:`on_deployment`) a deployment's parts, a throwaway PostgreSQL and Redis; on a
    migrated database of the test's own (tests/conftest.py)."""
    stack = getattr(request, "param", EMBEDDED)
    if stack not in (EMBEDDED, DEPLOYMENT):
        raise pytest.UsageError(f"no stack {stack!r}: they are {EMBEDDED}, {DEPLOYMENT}")
    if stack == EMBEDDED:
        database, _ = databases.copy(None, tmp_path, None)
        yield from _running(Service(tmp_path, database, "filesystem://broker"))
        return
    server: str = request.getfixturevalue("postgres_server")
    with running_redis() as redis:
        database, _ = databases.copy(server, tmp_path, None)
        yield from _running(Service(tmp_path, database, redis.url, redis))


@pytest.fixture
def deployment(postgres_server: str, tmp_path: Path, databases: Databases) -> Iterator[Service]:
    """PostgreSQL and a restartable Redis: for the broker fault tests."""
    with running_redis() as redis:
        database, _ = databases.copy(postgres_server, tmp_path, None)
        yield from _running(Service(tmp_path, database, redis.url, redis))


@pytest.fixture
def placing(tmp_path: Path, databases: Databases) -> Iterator[Service]:
    """The embedded default with one reference bot stored, greedy: an accepted upload's
    placement plays it and the uploads placed before it, 20 games each (the field of four
    plays four such matches an upload, which the tests of uploads' placements do not
    need)."""
    database, _ = databases.copy(None, tmp_path, None)
    yield from _running(Service(tmp_path, database, "filesystem://broker"), field=("greedy",))


#: The reference bots a service's database holds from the start (arena/NAME@v1).
FIELD = ("random", "greedy", "fives", "counter")


def _running(service: Service, field: Sequence[str] = FIELD) -> Iterator[Service]:
    """``service`` with the reference bots of ``field`` stored; its workers stopped after."""
    store = service.store()
    try:
        for bot in field:
            source = (BOTS / f"{bot}.py").read_text()
            store.add_bot_version("arena", bot, source, {"checked": "by the test"})
    finally:
        store.close()
    try:
        yield service
    finally:
        stop_workers(service.workers)
        if service.held is not None:
            service.held.close()


def _matches(service: Service, name: str) -> list[Match]:
    with service.reader().read() as session:
        tid = session.scalar(select(Tournament.id).where(Tournament.name == name))
        return list(
            session.scalars(select(Match).where(Match.tournament_id == tid).order_by(Match.id))
        )


def _assert_stored_once(service: Service, name: str) -> list[Match]:
    """Every match done, with exactly its games' records (the database's unique constraint
    forbids two records of one game; this checks none is missing or extra), all valid."""
    matches = _matches(service, name)
    store = service.store()
    try:
        with store.read() as session:
            for match in matches:
                assert match.status == "done", (match.id, match.status, match.result)
                assert match.result is not None
                assert [g["index"] for g in match.result["games"]] == list(range(match.games))
                records = list(load_records(store, session, GameRecord.match_id == match.id))
                assert [index for _, index, _ in records] == list(range(match.games))
                for _, _, record in records[:2]:
                    assert verify_record(record) == []
            tournament = session.scalar(select(Tournament).where(Tournament.name == name))
            assert tournament is not None and tournament.status == "done"
            assert tournament.started is not None and tournament.finished is not None
    finally:
        store.close()
    return matches


def _create(service: Service, name: str, bots: str, games: int, *options: str) -> None:
    """``arena tournament create NAME`` (in this process): a round robin of ``bots`` unless
    ``options`` say otherwise."""
    created = service.cli(
        "tournament", "create", name, "--rules", "draw", "--bots", bots,
        "--games", str(games), "--seed", "7", *options,
    )  # fmt: skip
    assert created.exit_code == 0, created.stderr
    assert f"tournament {name!r}" in created.stdout


@on_deployment
def test_a_tournament_created_from_the_cli_runs_to_completion(service: Service) -> None:
    worker = service.worker("--concurrency", "2", steady=True, wait=False)  # starts meanwhile
    _create(service, "spring", "random,greedy,fives", games=4)
    worker.wait_ready()
    ran = service.cli("tournament", "run", "spring")
    assert ran.exit_code == 0, ran.stdout + ran.stderr + service.logs()
    assert "spring: 6 matches, 0 finished, 6 sent to the workers" in ran.stdout
    assert "Standings" in ran.stdout and "Crosstable" in ran.stdout
    matches = _assert_stored_once(service, "spring")
    assert len(matches) == 6
    assert all(match.attempts == 1 for match in matches)
    assert {match.result["worker"].split(":")[0] for match in matches if match.result}
    status = service.cli("tournament", "status", "spring")
    assert status.exit_code == 0, status.stderr
    assert "matches: 6 = 6 done + 0 void + 0 running + 0 pending; 12 game records" in status.stdout
    standings = service.cli("tournament", "standings", "spring")
    assert standings.exit_code == 0 and "greedy" in standings.stdout
    again = service.cli("tournament", "run", "spring")  # nothing left: sends nothing
    assert again.exit_code == 0
    assert "6 finished, 0 sent to the workers" in again.stdout

    def rated() -> bool:  # the refits its matches booked cover its 12 games, 3 versions
        with service.reader().read() as session:
            points = session.scalar(select(func.count()).select_from(RatingHistory)) or 0
            rows = session.execute(select(func.count(), func.sum(RatingRow.games))).one()
        return points >= 3 and tuple(rows) == (3, 2 * 12)

    wait_for(rated, 30, "the ratings to be refitted after the tournament")
    workers = service.cli("workers")
    assert workers.exit_code == 0, workers.stderr
    assert "  alive  2 processes  last seen" in workers.stdout
    service.workers[0].stop()
    workers = service.cli("workers")
    assert "  stopped  2 processes" in workers.stdout
    ratings = service.cli("ratings", "--rules", "draw", "--no-refit")
    assert ratings.exit_code == 0, ratings.stderr
    assert "arena/greedy@v1" in ratings.stdout


@on_deployment
@pytest.mark.slow
def test_a_worker_killed_mid_match_its_match_is_played_again_and_stored_once(
    service: Service,
) -> None:
    """Three matches (two played at once: the victim's pool) are enough for one of them
    to be cut short and claimed again; 16 games a match (a second or more on an idle
    machine) leave the kill, 50 ms after the first seen, in the middle of one."""
    _create(service, "autumn", "random,greedy,fives", games=16)
    victim = service.worker("--concurrency", "2", "--no-beat")
    runner = service.run_in_background("autumn")
    try:

        def victim_playing() -> bool:
            pools = {str(pid) for pid in victim.pool_pids()}
            return any(
                m.status == "running" and (m.lease_owner or ":").split(":")[1] in pools
                for m in _matches(service, "autumn")
            )

        wait_for(victim_playing, 60, "the first worker to start a match")
        victim.kill()
        killed_at = time.monotonic()
        survivor = service.worker("--concurrency", "2")
        out, _ = runner.communicate(timeout=240)
    finally:
        if runner.poll() is None:
            runner.kill()
    assert runner.returncode == 0, out + service.logs()
    matches = _assert_stored_once(service, "autumn")
    replayed = [m for m in matches if m.attempts > 1]
    assert replayed, "the killed worker's match was not claimed again"
    survivor_pools = {str(pid) for pid in survivor.pool_pids()}
    for match in replayed:
        assert match.result is not None
        assert match.result["worker"].split(":")[1] in survivor_pools
    assert time.monotonic() - killed_at < 200
    # The killed worker's heartbeat stopped: it shows as gone; the survivor as alive.
    listed = service.cli("workers").stdout
    assert f"arena-{victim.pid}@" in listed and f"arena-{survivor.pid}@" in listed
    for line in listed.splitlines():
        if line.startswith(f"arena-{victim.pid}@"):
            assert "  gone  " in line
        if line.startswith(f"arena-{survivor.pid}@"):
            assert "  alive  " in line


@pytest.mark.slow
def test_redis_restarted_mid_tournament_the_tournament_completes(deployment: Service) -> None:
    assert deployment.redis is not None
    _create(deployment, "winter", "random,greedy,fives,counter", games=10)
    deployment.worker("--concurrency", "2")
    runner = deployment.run_in_background("winter")
    try:
        wait_for(
            lambda: sum(m.status == "done" for m in _matches(deployment, "winter")) >= 2,
            90,
            "two matches to finish",
        )
        deployment.redis.stop()  # not persistent: every queued task is lost with it
        time.sleep(2)
        deployment.redis.start()
        out, _ = runner.communicate(timeout=240)
    finally:
        if runner.poll() is None:
            runner.kill()
    assert runner.returncode == 0, out + deployment.logs()
    matches = _assert_stored_once(deployment, "winter")
    assert len(matches) == 12


@on_deployment
@pytest.mark.slow
def test_a_harness_that_keeps_failing_voids_the_match_after_max_attempts(
    service: Service,
) -> None:
    blocked = service.directory / "not-a-directory"
    blocked.write_text("the bot cache cannot be created under a file")
    _create(service, "broken", "random,greedy", games=2)
    worker = start_worker(
        service.directory,
        {**service.env, "ARENA_BOT_CACHE": str(blocked / "cache"), "ARENA_MAX_ATTEMPTS": "2"},
        "--concurrency",
        "1",
    )
    service.workers.append(worker)
    ran = service.cli("tournament", "run", "broken")
    assert ran.exit_code == 0, ran.stdout + ran.stderr + service.logs()
    matches = _matches(service, "broken")
    assert [m.status for m in matches] == ["void", "void"]
    for match in matches:
        assert match.attempts == 2
        assert match.result is not None and "cannot write the bots' files" in match.result["void"]
    assert "Retry in" in worker.output()  # the first failure was retried by Celery
    store = service.store()
    try:
        with store.read() as session:
            assert session.scalar(select(func.count()).select_from(GameRecord)) == 0
    finally:
        store.close()
    assert "void (a harness failure, not counted)" in ran.stdout


def test_a_bot_fault_is_a_verdict_not_a_retry(service: Service, tmp_path: Path) -> None:
    store = service.store()
    try:
        source = (ZOO / "raise_at_import.py").read_text()
        store.add_bot_version("mallory", "raiser", source, {})
    finally:
        store.close()
    _create(service, "faults", "raiser,greedy", games=3)
    service.worker("--concurrency", "2", steady=True)
    service.play("faults")
    matches = _assert_stored_once(service, "faults")
    for match in matches:
        assert match.attempts == 1
        assert match.result is not None
        raiser = match.labels.index("raiser") if match.labels else -1
        verdicts = [game["verdict"] for game in match.result["games"]]
        assert all(v is not None and v["termination"] == "crash" for v in verdicts)
        assert all(v["seat"] == raiser for v in verdicts)


@on_deployment
def test_compare_remote_gives_a_verdict_and_voids_what_it_did_not_need(
    service: Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Counter is far stronger than random in 2-player draw (``arena compare counter random
    --rules draw --elo1 25 --batch 8`` locally, seeds 1-5: each passes in 32 games, the
    fewest the test decides in; greedy took 96 at seed 1, 64-416 at elo1=50); the SPRT
    asks for +25 so that a pass is not a coin toss, and a 10 s move time so that a loaded
    machine's slow moves do not decide games (a forfeit in either seat pulls Elo to 0).
    The command shows the workers' replies and their verdict: it never follows the compare
    in the store (the worker stored it, and kept its batches ahead)."""
    from arena.cli import compare
    from arena.service import compare_start

    def not_stored(*_: object) -> int:
        raise AssertionError("the command followed the compare in the store")

    monkeypatch.setattr(compare, "_follow_stored", not_stored)
    # (a loaded machine's: the workers send readings for REPLIES_SENT_SECONDS, a minute)
    monkeypatch.setattr(compare_start, "REPLIES_SECONDS", compare_start.REPLIES_SENT_SECONDS - 5)
    monkeypatch.setattr(compare_start, "STARTED_SECONDS", 30.0)
    service.worker("--concurrency", "2")
    ran = service.cli(
        "compare", "counter", "random", "--remote", "--rules", "draw", "--elo1", "25",
        "--seed", "1", "--batch", "8", "--max-games", "2000", "--move-time", "10",
    )  # fmt: skip
    assert ran.exit_code == 0, ran.stdout + ran.stderr + _endings(service) + service.logs()
    assert "NEW passed (H1 accepted" in ran.stdout
    assert "LLR" in ran.stdout and "LOS" in ran.stdout
    assert "margin SPRT elo0=0 elo1=25" in ran.stdout and "| fast pass " in ran.stdout
    store = service.store()

    def finished() -> bool:  # the matches running when the test decided finish on their own
        with store.read() as session:
            return session.scalar(select(Tournament.status)) == "done"

    try:
        wait_for(finished, 60, "the matches still running to finish")
        with store.read() as session:
            tournament = session.scalar(select(Tournament))
            assert tournament is not None and tournament.format == "compare"
            statuses = list(
                session.scalars(select(Match.status).where(Match.tournament_id == tournament.id))
            )
            stored = session.scalars(
                select(Match.result).where(Match.status == "done")
            ).all()  # each game keeps its seats' luck of the draw for the margin test
    finally:
        store.close()
    lucks = [game["luck"] for result in stored for game in result["games"]]
    assert all(len(luck) == 2 for luck in lucks)  # a seat's
    assert all(len(seat) == len(LUCK_TERMS) for luck in lucks for seat in luck)
    assert statuses.count("done") >= 4 and statuses.count("void") > 0
    assert set(statuses) == {"done", "void"}


def _endings(service: Service) -> str:
    """How the stored games ended, counted: ``target`` unless a bot faulted."""
    store = service.store()
    try:
        with store.read() as session:
            tournament = session.scalar(select(Tournament))
            if tournament is None:
                return "\nno tournament stored\n"
            results = load_results(store, tournament.id)
    finally:
        store.close()
    counts = Counter(game.termination for result in results for game in result.games)
    return f"\ngame endings: {dict(counts)}\n"


def test_a_compare_start_is_stored_by_a_worker_and_its_command_follows_that_one(
    service: Service,
) -> None:
    """``arena compare --remote`` sends its start before it loads the store
    (arena.service.compare_start): a worker stores the compare and sends its first batches;
    the command, opening the same request once loaded, finds that compare (one stored, by
    the worker) and the workers are already playing it."""
    from arena.engine.rules import PRESETS
    from arena.service.compare_start import CompareRequest, send_start
    from arena.service.compares import open_compare
    from arena.store.matches import tournament_named

    service.worker("--concurrency", "1")
    request = CompareRequest.make(
        new="counter", old="random", rules="draw", rules_version=PRESETS["draw"].version,
        players=2, teams=False, statistic="margin", elo0=0.0, elo1=25.0, alpha=0.05,
        beta=0.05, max_games=64, batch=8, seed=1, move_seconds=10.0, memory_mb=512,
        allow_same_source=False,
    )  # fmt: skip
    assert send_start(request, service.reachable_broker, service.database)
    store = service.reader()
    wait_for(
        lambda: tournament_named(store, request.name) is not None,
        60,
        f"a worker to store the compare:\n{service.logs()}",
    )
    tournament = tournament_named(store, request.name)
    assert tournament is not None
    assert open_compare(store, request) == (tournament.id, False)

    def playing() -> bool:  # its first batches were sent by the worker: no command sent any
        with store.read() as session:
            return bool(
                session.scalar(
                    select(func.count(Match.id)).where(
                        Match.tournament_id == tournament.id, Match.status != "pending"
                    )
                )
            )

    wait_for(playing, 60, f"the workers to play the compare:\n{service.logs()}")
    assert f"compare {request.name!r}: stored" in service.logs()
    with store.read() as session:
        assert session.scalar(select(func.count(Tournament.id))) == 1


def test_compare_remote_names_a_missing_bot(service: Service) -> None:
    ran = service.cli("compare", "nosuchbot", "random", "--remote", "--rules", "draw")
    assert ran.exit_code == USAGE_ERROR
    assert "no bot 'nosuchbot' is stored" in ran.stderr


def test_compare_remote_refuses_one_source_under_two_names(service: Service) -> None:
    """greedy against a copy of its source: a bot against itself, refused before anything
    is stored (issue 29: every deal group's margin would be exactly 0)."""
    store = service.store()
    try:
        store.add_bot_version("arena", "copy", (BOTS / "greedy.py").read_text(), {})
    finally:
        store.close()
    ran = service.cli("compare", "greedy", "copy", "--remote", "--rules", "draw")
    assert ran.exit_code == USAGE_ERROR, ran.stdout + ran.stderr
    assert "NEW greedy and OLD copy have the same source (sha256 " in ran.stderr
    assert "--allow-same-source" in ran.stderr
    store = service.store()
    try:
        with store.read() as session:
            assert session.scalar(select(func.count(Tournament.id))) == 0
    finally:
        store.close()


def test_run_without_workers_says_so_and_times_out(service: Service) -> None:
    """A sweep (which finds no worker alive) every 0.2 s, the first long before the 2 s
    timeout."""
    _create(service, "lonely", "random,greedy", games=2)
    sweeps = {"ARENA_SWEEP_SECONDS": "0.2"}
    ran = service.cli("tournament", "run", "lonely", "--timeout", "2", env=sweeps)
    assert ran.exit_code == 1
    assert "no worker is alive to play the matches: start one with `arena worker`" in ran.stderr
    assert "lonely: 0 of 2 matches finished after 2 s; the workers go on" in ran.stdout
    status = service.cli("tournament", "status", "lonely")
    assert "lonely (id 1): pending;" in status.stdout


def test_run_with_no_worker_gives_up_after_the_default_and_logs_progress(
    service: Service,
) -> None:
    """No --timeout: with no worker alive for ARENA_NO_WORKER_SECONDS the run gives up
    (exit 1) saying what to do, instead of waiting forever."""
    _create(service, "deserted", "random,greedy", games=2)
    limit = {"ARENA_NO_WORKER_SECONDS": "1.5", "ARENA_SWEEP_SECONDS": "0.2"}
    ran = service.cli("tournament", "run", "deserted", env=limit)
    assert ran.exit_code == 1, ran.stdout + ran.stderr
    assert "deserted: no worker has been alive for 1.5 s, 0 of 2 matches finished" in ran.stdout
    assert "`arena worker`, then `arena tournament run deserted` again" in ran.stdout


def test_an_unreachable_broker_is_one_clear_error(service: Service) -> None:
    _create(service, "offline", "random,greedy", games=2)
    closed = "redis://127.0.0.1:1/0"
    ran = service.cli("tournament", "run", "offline", "--broker", closed)
    assert ran.exit_code == UNAVAILABLE
    assert ran.stderr.startswith(f"arena: error: cannot reach the broker {closed}: ")
    assert "Traceback" not in ran.stderr
    compared = service.cli(
        "compare", "greedy", "random", "--remote", "--rules", "draw", "--broker", closed
    )
    assert compared.exit_code == UNAVAILABLE
    assert f"cannot reach the broker {closed}" in compared.stderr
    assert "Traceback" not in compared.stderr


def _pending(store: Store, upload_id: int) -> bool:
    from arena.service.uploads import upload_view

    view = upload_view(store, upload_id)
    return view is not None and view.pending


def test_uploads_are_checked_on_a_worker_and_stored_if_they_pass(placing: Service) -> None:
    """The web stores an upload and sends its check; a real worker checks it in the sandbox:
    a good bot becomes a version, a faulting one is rejected with the reason and its stderr,
    and an upload whose task never left (the broker was down) is sent again by the sweep."""
    from arena.service.broker import make_app, send_uploads
    from arena.service.uploads import mark_sent, upload_view
    from arena.store.models import User
    from tests.uploads import store_upload

    store = placing.store()
    try:
        store.add_user("ada")
        with store.read() as session:
            owner = session.query(User).filter_by(name="ada").one().id
        good = store_upload(store, owner, "mine", "mine.py", (BOTS / "greedy.py").read_text())
        bad = store_upload(store, owner, "bad", "bad.py", (ZOO / "raise_in_move.py").read_text())
        lost = store_upload(store, owner, "late", "late.py", (BOTS / "random.py").read_text())
        app = make_app(placing.reachable_broker, None, placing.database)
        send_uploads(app, [good, bad])
        mark_sent(store, [good, bad])  # "lost" is never sent: the sweep must find it
        placing.worker("--concurrency", "2")
        deadline = time.monotonic() + 120
        while any(_pending(store, i) for i in (good, bad, lost)):
            assert time.monotonic() < deadline, placing.logs()
            time.sleep(0.5)
        accepted, rejected, swept = (upload_view(store, i) for i in (good, bad, lost))
        assert accepted is not None and accepted.status == "accepted", placing.logs()
        assert accepted.version == 1 and accepted.report and accepted.report["sandboxed"]
        assert rejected is not None and rejected.status == "rejected"
        assert rejected.message and "crash" in rejected.message
        assert rejected.report and "Traceback" in rejected.report["faults"][0]["stderr"]
        assert swept is not None and swept.status == "accepted"
        assert [b.bot for b in store.list_bots() if b.owner == "ada"] == ["late", "mine"]
        # each accepted version plays its placement against the field, and is then rated
        from arena.engine.rules import PRESETS
        from arena.service.results import rating_table

        def rated() -> set[str]:
            try:
                return {r.bot for r in rating_table(store, PRESETS["draw"])}
            except LookupError:
                return set()

        while not {"ada/mine@v1", "ada/late@v1"} <= rated():
            assert time.monotonic() < deadline + 120, placing.logs()
            time.sleep(0.5)
    finally:
        store.close()


@on_both
def test_an_uploads_check_does_not_wait_behind_queued_matches(service: Service) -> None:
    """Checks have a queue of their own that a worker looks at first (Redis) or in turn
    (the filesystem transport): an upload sent after 12 matches is checked long before
    they are all played."""
    from arena.service.broker import make_app, send_matches, send_uploads
    from arena.service.uploads import mark_sent, upload_view
    from arena.store.models import User
    from tests.uploads import store_upload

    _create(service, "busy", "random,greedy,fives,counter", games=300)
    store = service.store()
    try:
        app = make_app(service.reachable_broker, None, service.database)
        with store.read() as session:
            matches = list(session.scalars(select(Match.id).order_by(Match.id)))
        assert len(matches) == 12
        send_matches(app, matches)
        store.add_user("ada")
        with store.read() as session:
            owner = session.query(User).filter_by(name="ada").one().id
        upload = store_upload(store, owner, "mine", "mine.py", (BOTS / "greedy.py").read_text())
        send_uploads(app, [upload])
        mark_sent(store, [upload])
        service.worker("--concurrency", "1", steady=True)
        deadline = time.monotonic() + 180
        while _pending(store, upload):
            assert time.monotonic() < deadline, service.logs()
            time.sleep(0.2)
        with store.read() as session:
            done = session.scalar(
                select(func.count()).select_from(Match).where(Match.status == "done")
            )
        view = upload_view(store, upload)
        assert view is not None and view.status == "accepted", service.logs()
        assert done is not None and done <= 3, f"{done} of 12 matches were played first"
    finally:
        store.close()
