"""``arena worker`` keeps its Celery worker running: one that exits by itself (kombu's
"Unrecoverable error" after a broker's restart, a kill) is started again, and plays on."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from arena.engine.rules import PRESETS
from arena.service.broker import make_app, using
from arena.service.dispatch import dispatch_matches
from arena.service.matches import create_stored_tournament
from arena.store.db import connect
from arena.store.models import Tournament
from tests.conftest import Databases
from tests.paths import REFERENCE_BOTS
from tests.servers import children, spawn_worker, stop_workers, wait_for

pytestmark = pytest.mark.slow


def test_a_celery_worker_that_dies_is_started_again_and_plays_the_next_match(
    tmp_path: Path, databases: Databases
) -> None:
    database, _ = databases.copy(None, tmp_path, None)
    broker = f"filesystem://{tmp_path / 'broker'}"
    store = connect(database)
    try:
        for bot in ("random", "greedy"):
            source = (REFERENCE_BOTS / f"{bot}.py").read_text()
            store.add_bot_version("arena", bot, source, {"checked": "by the test"})
        ids = [
            create_stored_tournament(
                store, name=name, rules=PRESETS["draw"], format="round-robin",
                entrants=["arena/random", "arena/greedy"], games_per_match=2, seed=7,
            )[0]
            for name in ("before", "after")
        ]  # fmt: skip

        def done(tournament_id: int) -> bool:
            with store.read() as session:
                tournament = session.get(Tournament, tournament_id)
                return tournament is not None and tournament.status == "done"

        env = {"ARENA_DATABASE_URL": database, "ARENA_BROKER_URL": broker}
        # unsandboxed: the supervision is the subject, not the bots' sandbox
        worker = spawn_worker(tmp_path, env, "--concurrency", "1", "--unsandboxed", "--no-sweep")
        try:
            worker.wait_ready()
            with using(make_app(broker, None, database)):
                assert dispatch_matches(store, ids[0])
                wait_for(lambda: done(ids[0]), 60, f"the first match:\n{worker.output()}")
                [celery] = children(worker.pid)  # the Celery worker, its pool under it
                assert children(celery), "no pool process under the Celery worker"
                os.kill(celery, signal.SIGKILL)  # as an "Unrecoverable error" exits it
                wait_for(lambda: worker.output().count("ready.") == 2, 60, "the worker to be back")
                assert dispatch_matches(store, ids[1])
                wait_for(lambda: done(ids[1]), 60, f"the second match:\n{worker.output()}")
            log = worker.output()
            assert (
                "arena worker: the Celery worker exited (exit status -9); starting it again" in log
            )
            assert "arena worker: the Celery worker started again (pid " in log
            assert worker.process.poll() is None
            # SIGTERM stops it, for good: a warm shutdown of the Celery worker, not a restart
            worker.process.send_signal(signal.SIGTERM)
            assert worker.process.wait(timeout=30) == 0, worker.output()
            assert worker.output().count("started again") == 1
        finally:
            stop_workers([worker])
    finally:
        store.close()
