"""A 16-bot round robin played two ways in one run: through Celery and Redis by one
``arena worker`` with 2 pool processes (the service), and by ``arena tournament run --local``'s
process pool with 2 workers (no broker, no database). Prints both rates and their ratio
(goal: the service at >= 0.8x the local rate).

Both play the same schedule (same seeds) with the same bot files in the real sandbox; the
service's figure counts from the first task sent to the last match stored, so it includes
the broker, the database (claims, heartbeats, results and records) and the workers' bot
file cache, but not starting the worker.

    ./run python benchmarks/tournament.py [--games 20] [--database sqlite|postgresql URL]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

from arena.compete.entrants import Entrant
from arena.compete.localrun import run_local
from arena.compete.tournaments import schedule
from arena.engine.rules import PRESETS
from arena.service.broker import configure
from arena.service.dispatch import send_pending
from arena.service.matches import create_stored_tournament
from arena.store.db import Store, connect, upgrade
from arena.store.queue import tournament_progress

ROOT = Path(__file__).resolve().parent.parent
ARENA = Path(sys.executable).parent / "arena"
KINDS = ("random", "greedy", "fives", "counter")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextlib.contextmanager
def _redis(directory: Path) -> Iterator[str]:
    server = shutil.which("redis-server")
    if server is None:
        sys.exit("benchmarks/tournament.py needs redis-server (apt-get install redis-server)")
    port, pid_file = _free_port(), directory / "redis.pid"
    subprocess.run(
        [server, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(directory),
         "--daemonize", "yes", "--pidfile", str(pid_file), "--logfile",
         str(directory / "redis.log"), "--save", "", "--appendonly", "no"],
        check=True,
    )  # fmt: skip
    deadline = time.monotonic() + 10
    while not pid_file.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    try:
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        with contextlib.suppress(OSError, ValueError):
            os.kill(int(pid_file.read_text()), signal.SIGTERM)


@contextlib.contextmanager
def _worker(directory: Path, env: dict[str, str], concurrency: int) -> Iterator[None]:
    log = directory / "worker.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [str(ARENA), "worker", "--concurrency", str(concurrency), "--no-beat",
             "--loglevel", "INFO"],
            stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
            env={**os.environ, **env}, cwd=directory, start_new_session=True,
        )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while "ready." not in log.read_text(errors="replace"):
            if process.poll() is not None or time.monotonic() > deadline:
                sys.exit(f"arena worker did not start:\n{log.read_text(errors='replace')}")
            time.sleep(0.05)
        yield
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def _entrants() -> list[str]:
    return [f"{kind[0]}{i}={kind}" for kind in KINDS for i in range(1, 5)]


def play_local(games: int, seed: int, workers: int) -> tuple[int, float]:
    rules = PRESETS["draw"]
    entrants = [
        Entrant.bot_file(ROOT / "bots" / f"{kind}.py", label)
        for label, kind in (e.split("=") for e in _entrants())
    ]
    matches = schedule(
        "round-robin", entrants, rules=rules, players=2, games_per_match=games, seed=seed
    )
    started = time.perf_counter()
    played = sum(len(result.games) for result in run_local(matches, rules, workers=workers))
    return played, time.perf_counter() - started


def play_service(
    games: int, seed: int, workers: int, database: str | None, directory: Path
) -> tuple[int, float]:
    url = database or f"sqlite:///{directory / 'arena.db'}"
    upgrade(url)
    store = connect(url)
    try:
        for kind in KINDS:
            source = (ROOT / "bots" / f"{kind}.py").read_text()
            store.add_bot_version("arena", kind, source, {"benchmark": True})
        name = f"bench-{os.getpid()}-{time.monotonic_ns()}"
        tournament_id, matches = create_stored_tournament(
            store,
            name=name,
            rules=PRESETS["draw"],
            format="round-robin",
            entrants=_entrants(),
            games_per_match=games,
            seed=seed,
        )
        with _redis(directory) as broker:
            env = {"ARENA_DATABASE_URL": url, "ARENA_BROKER_URL": broker}
            with _worker(directory, env, workers):
                configure(broker)
                started = time.perf_counter()
                send_pending(store, tournament_id=tournament_id)
                _wait_done(store, tournament_id, len(matches))
                seconds = time.perf_counter() - started
        return sum(match.games for match in matches), seconds
    finally:
        store.close()


def _wait_done(store: Store, tournament_id: int, total: int) -> None:
    while True:
        counts = tournament_progress(store, tournament_id)
        if counts["void"]:
            sys.exit(f"{counts['void']} matches void: see the worker's log")
        if counts["done"] == total:
            return
        time.sleep(0.1)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=20, help="Games per pairing.")
    parser.add_argument("--workers", type=int, default=2, help="Processes on each side.")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--database", help="The service's database URL (default: SQLite).")
    args = parser.parse_args(argv)
    directory = Path(tempfile.mkdtemp(prefix="arena-bench-"))
    try:
        local_games, local_seconds = play_local(args.games, args.seed, args.workers)
        service_games, service_seconds = play_service(
            args.games, args.seed, args.workers, args.database, directory
        )
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    assert local_games == service_games
    local_rate, service_rate = local_games / local_seconds, service_games / service_seconds
    matches = 16 * 15
    print(f"16-bot round robin, draw, {matches} matches, {local_games} games, bots sandboxed")
    print(f"local (process pool, {args.workers} workers):  {local_seconds:6.1f} s  "
          f"{local_rate:7.1f} games/s")  # fmt: skip
    print(f"service (Celery + Redis, {args.workers} processes): {service_seconds:6.1f} s  "
          f"{service_rate:7.1f} games/s")  # fmt: skip
    print(f"ratio service/local: {service_rate / local_rate:.2f} (goal >= 0.8)")


if __name__ == "__main__":
    main()
