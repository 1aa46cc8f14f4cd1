"""Live ratings with a real Celery worker (``arena worker``, prefork pool, sandboxed bots)
on a deployment's parts (PostgreSQL + Redis): the rule set's leaderboard changes while a
tournament runs (each done match books a refit within the interval), not only when it
finishes, and the last refit covers every game.

On PostgreSQL only: a refit's claim locks its rule set's row there alone
(arena.store.ratings.book_refit); the embedded default's refits after a tournament are
tests/workers/test_tasks.py's first test (on both stacks), the refits' claim and lease
tests/service/test_live.py (on both backends)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlalchemy import func, select

from arena.cli.main import cli
from arena.engine.rules import PRESETS
from arena.service.broker import make_app, using
from arena.service.dispatch import dispatch_matches
from arena.service.results import rating_table
from arena.store.db import connect
from arena.store.models import Match, Tournament
from tests.conftest import Databases
from tests.paths import REFERENCE_BOTS
from tests.servers import FAST, Worker, running_redis, start_worker, stop_workers, wait_for

BOTS = ("random", "greedy", "fives", "counter")


@pytest.fixture
def deployment(
    postgres_server: str, tmp_path: Path, databases: Databases
) -> Iterator[dict[str, str]]:
    """The environment of a migrated PostgreSQL database holding the reference bots, and a
    Redis broker."""
    with running_redis() as redis:
        database, _ = databases.copy(postgres_server, tmp_path, None)
        yield from _with_bots({"ARENA_DATABASE_URL": database, "ARENA_BROKER_URL": redis.url})


def _with_bots(env: dict[str, str]) -> Iterator[dict[str, str]]:
    store = connect(env["ARENA_DATABASE_URL"])
    try:
        for bot in BOTS:
            source = (REFERENCE_BOTS / f"{bot}.py").read_text()
            store.add_bot_version("arena", bot, source, {"checked": "by the test"})
    finally:
        store.close()
    yield env


def test_the_leaderboard_changes_while_a_tournament_runs(
    deployment: dict[str, str], tmp_path: Path
) -> None:
    # 6 matches of 12 games (72 games, not 180: the same proof): each of the 3 rounds the
    # worker's 2 processes play lasts a second or more on an idle machine, several refit
    # intervals (a loaded machine saw 9 refits while 10-game matches ran)
    created = CliRunner().invoke(  # in this process: the test is not about the command
        cli, ["tournament", "create", "spring", "--rules", "draw", "--bots", ",".join(BOTS),
              "--games", "12", "--seed", "7"], env={**FAST, **deployment},
    )  # fmt: skip
    assert created.exit_code == 0, created.output
    # A refit at most every 0.3 s (not 2 s): on an idle machine the tournament plays in a
    # few seconds, and the leaderboard must be seen changing while it runs.
    env = {**deployment, "ARENA_REFIT_SECONDS": "0.3"}
    workers: list[Worker] = [start_worker(tmp_path, env, "--concurrency", "2")]
    store = connect(deployment["ARENA_DATABASE_URL"])
    try:
        with store.read() as session:
            spring = session.scalar(select(Tournament.id).where(Tournament.name == "spring"))
        assert spring is not None
        broker = make_app(deployment["ARENA_BROKER_URL"], None, deployment["ARENA_DATABASE_URL"])
        with using(broker):  # what `arena tournament run` sends, without its process
            assert dispatch_matches(store, spring)

        def status_now() -> str:
            with store.read() as session:
                return str(
                    session.scalar(select(Tournament.status).where(Tournament.name == "spring"))
                )

        seen: list[tuple[datetime, int, str]] = []  # (fit time, games rated, tournament status)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            status = status_now()
            table = rating_table(store, PRESETS["draw"])
            if table and (not seen or table[0].computed != seen[-1][0]):
                seen.append((table[0].computed, sum(r.games for r in table), status))
            if status == "done":
                break
            time.sleep(0.1)
        assert status == "done", workers[0].output()[-3000:]
        running = [fit for fit in seen if fit[2] != "done"]
        assert len({games for _, games, _ in running}) >= 2, seen  # it changed while running
        with store.read() as session:
            games = session.scalar(select(func.sum(Match.games)).where(Match.status == "done")) or 0

        def covered() -> bool:  # the last refit (within the interval) covers every game
            return sum(r.games for r in rating_table(store, PRESETS["draw"])) == 2 * games

        wait_for(covered, 30, "the last refit to cover every game")
    finally:
        store.close()
        stop_workers(workers)
