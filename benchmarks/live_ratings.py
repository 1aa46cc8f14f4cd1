"""The live-ratings lag: from a stored game (its match done) to its effect on the leaderboard.

    ./run python benchmarks/live_ratings.py [--background 143000] [--seconds 120] [--url URL]
        [--broker URL] [--games 4] [--copies 3] [--concurrency 2] [--unsandboxed]
    ./run python benchmarks/live_ratings.py --demo [--seconds 300]

The default mode fills a fresh database (a SQLite file in a temporary directory; ``--url``
for an empty PostgreSQL database) with ``--background`` done games under ``draw`` (2-player
matches of 20 games among 200 bot versions: the size of one rule set of the 1,000,000-game
database of benchmarks/web.py, so every refit reads that many games) and times three
refits by hand (the refit's cost, which sets the interval: docs/ratings.md "Live ratings").
Then it stores the reference bots, creates a round robin of them under ``draw`` (each
``--copies`` times, under labels of their own: 12 entrants, 132 matches) with short matches
(``--games`` a pair), starts a real ``arena worker`` (``--concurrency`` processes,
bots sandboxed unless ``--unsandboxed``) and the fast worker (``--lanes fast``, one process)
as ``arena serve`` does, on the filesystem transport (``--broker`` for Redis), sends the
matches and watches the rule set from this process every 50 ms for ``--seconds``.

A match is covered by the first refit that began after it finished (``rule_sets.refitted``,
the refit's start, which is before it reads the games; so a refit that began after a match
was stored counts it). Its lag is the time from the match's ``finished`` to the moment this
process first saw that refit's ratings stored. Prints the matches played, the refits, their
length and the lag's p50, p95 and maximum. Goal (issue 21): p95 under 10 s.

``--demo`` starts ``arena serve --demo`` on a fresh database in a temporary directory and
prints the seconds from its start to the first non-empty leaderboard (the ``draw`` ratings
as its JSON export shows them), then to the demo tournament's end or ``--seconds``.
"""

from __future__ import annotations

import os

# One BLAS thread, as in the workers (workers/__init__.py), for the refits timed by hand.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse
import json
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
from sqlalchemy import insert, select, text

from arena.compete.ratings import ELO_PER_NAT
from arena.engine.rules import PRESETS
from arena.service.broker import configure
from arena.service.dispatch import dispatch_matches
from arena.service.matches import Config, create_stored_tournament
from arena.service.results import refit_ratings
from arena.store.db import Store, as_utc, connect, upgrade
from arena.store.models import Match, RuleSet, Tournament

RULES = PRESETS["draw"]
GAMES_PER_MATCH = 20
BOTS = 200
CHUNK = 5_000
#: The reference bots the live tournament plays (as ``arena serve --demo``).
REFERENCE = ("random", "greedy", "fives", "counter")
ROOT = Path(__file__).resolve().parent.parent
ARENA = Path(sys.executable).parent / "arena"


def fill(store: Store, games: int, seed: int) -> int:
    """Store ``games`` done games under :data:`RULES` among :data:`BOTS` versions of known
    strength, in one done round robin; return the matches stored."""
    rng = np.random.default_rng(seed)
    truth = 1500.0 + rng.normal(0.0, 200.0, BOTS)
    versions = [
        store.add_bot_version(f"owner{i % 20:02d}", f"bot{i:03d}", f"# bot {i}\n", {})[0].id
        for i in range(BOTS)
    ]
    rule_set = store.ensure_rule_set(RULES)
    with store.write() as session:
        tournament = Tournament(
            name="background", format="round-robin", rule_set_id=rule_set.id, players=2,
            teams=False, games_per_match=GAMES_PER_MATCH, seed=seed, status="done",
        )  # fmt: skip
        session.add(tournament)
        session.flush()
        tournament_id = tournament.id
    matches = games // GAMES_PER_MATCH
    for start in range(0, matches, CHUNK):
        rows = [
            _match(rng, truth, versions, tournament_id, number)
            for number in range(start, min(matches, start + CHUNK))
        ]
        with store.write() as session:
            session.execute(insert(Match), rows)
    with store.engine.connect() as connection:  # statistics, as autovacuum would gather
        connection.execute(text("ANALYZE"))
        connection.commit()
    return matches


def _match(
    rng: np.random.Generator,
    truth: np.typing.NDArray[np.float64],
    versions: list[int],
    tournament_id: int,
    number: int,
) -> dict[str, Any]:
    a, b = rng.choice(len(versions), 2, replace=False)
    p_first = 1.0 / (1.0 + np.exp(-(truth[a] - truth[b]) / ELO_PER_NAT))
    first_wins = rng.random(GAMES_PER_MATCH) < p_first
    games = []
    for index in range(GAMES_PER_MATCH):
        places = [0, 1] if first_wins[index] else [1, 0]
        games.append(
            {"index": index, "seed": number * GAMES_PER_MATCH + index, "places": places,
             "points": [100, 40] if places == [0, 1] else [40, 100],
             "winners": [places.index(0)], "termination": "target", "verdict": None}
        )  # fmt: skip
    return {
        "tournament_id": tournament_id, "key": f"b{number:07d}",
        "seats": [versions[a], versions[b]], "labels": [f"bot{a:03d}", f"bot{b:03d}"],
        "games": GAMES_PER_MATCH, "seed": number, "status": "done", "attempts": 1,
        "result": {"games": games, "seconds": 1.0, "worker": "bench:1"},
        "finished": datetime(2026, 1, 1, tzinfo=UTC),
    }  # fmt: skip


def start_worker(env: dict[str, str], *args: str) -> subprocess.Popen[bytes]:
    """``arena worker ARGS`` in a session of its own, its output discarded."""
    return subprocess.Popen(
        [str(ARENA), "worker", "--loglevel", "WARNING", *args],
        env=env, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip


def stop(program: subprocess.Popen[bytes]) -> None:
    """SIGTERM to the program's session, SIGKILL after 20 s."""
    for signum, wait in ((signal.SIGTERM, 20.0), (signal.SIGKILL, 10.0)):
        try:
            os.killpg(program.pid, signum)
        except ProcessLookupError:
            return
        try:
            program.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def live(args: argparse.Namespace) -> None:
    """The default mode (the module's docstring)."""
    directory = Path(tempfile.mkdtemp(prefix="live-ratings-"))
    url = args.url or f"sqlite:///{directory / 'arena.db'}"
    broker = args.broker or f"filesystem://{directory / 'broker'}"
    upgrade(url)
    store = connect(url)
    began = time.perf_counter()
    matches = fill(store, args.background, args.seed) if args.background else 0
    print(f"filled {matches * GAMES_PER_MATCH:,} background games under {RULES.name} "
          f"({BOTS} versions) in {time.perf_counter() - began:.0f} s")  # fmt: skip
    if args.background:
        for _ in range(3):
            refit = refit_ratings(store, RULES)
            print(f"refit by hand: {refit.games:,} games, load {refit.load_seconds:.2f} s, "
                  f"fit {refit.fit_seconds:.2f} s, write {refit.write_seconds:.2f} s, "
                  f"total {refit.seconds:.2f} s")  # fmt: skip
    for name in REFERENCE:
        source = (ROOT / "bots" / f"{name}.py").read_text()
        store.add_bot_version("reference", name, source, {"checked": "by the benchmark"})
    tournament_id, scheduled = create_stored_tournament(
        store, name="live", rules=RULES, format="round-robin",
        entrants=[
            f"{name}{copy}=reference/{name}" for name in REFERENCE for copy in range(args.copies)
        ],
        games_per_match=args.games,
        seed=args.seed,
    )  # fmt: skip
    env = {
        **os.environ, "ARENA_DATABASE_URL": url, "ARENA_BROKER_URL": broker,
        "ARENA_WORKER_UNSANDBOXED": "1" if args.unsandboxed else "0",
    }  # fmt: skip
    unsandboxed = ["--unsandboxed"] if args.unsandboxed else []
    workers = [
        start_worker(env, "--concurrency", str(args.concurrency), *unsandboxed),
        start_worker(env, "--concurrency", "1", "--lanes", "fast", *unsandboxed),
    ]
    seen: list[tuple[datetime, datetime, float | None]] = []  # (refitted, seen at, seconds)
    try:
        time.sleep(3)  # the workers start
        configure(broker, Config.from_env(), url)
        dispatch_matches(store, tournament_id)
        rule_set = store.ensure_rule_set(RULES).id
        deadline = time.monotonic() + args.seconds
        while time.monotonic() < deadline:
            with store.read() as session:
                row = session.get(RuleSet, rule_set)
                assert row is not None
                refitted, seconds = row.refitted, row.refit_seconds
                status = session.scalar(
                    select(Tournament.status).where(Tournament.id == tournament_id)
                )
            now = datetime.now(UTC)
            if refitted is not None and (not seen or as_utc(refitted) != seen[-1][0]):
                seen.append((as_utc(refitted), now, seconds))
            if status == "done" and seen and seen[-1][0] >= _last_finished(store, tournament_id):
                break
            time.sleep(0.05)
    finally:
        for worker in workers:
            stop(worker)
    with store.read() as session:
        finished = [
            as_utc(when)
            for when in session.scalars(
                select(Match.finished).where(
                    Match.tournament_id == tournament_id, Match.status == "done"
                )
            )
            if when is not None
        ]
    lags = []
    for when in finished:
        covering = [at for refitted, at, _ in seen if refitted >= when]
        if covering:
            lags.append((min(covering) - when).total_seconds())
    lengths = [s for _, _, s in seen if s is not None]
    never = len(finished) - len(lags)
    print(
        f"live: {len(finished)} of {len(scheduled)} matches done ({args.games} games a pair), "
        f"{len(seen)} refits seen, each {min(lengths, default=0):.2f}-"
        f"{max(lengths, default=0):.2f} s; {never} matches never covered"
    )
    if lags:
        print(
            "lag from a match stored to its refit's ratings stored: "
            f"p50 {percentile(lags, 0.5):.2f} s, p95 {percentile(lags, 0.95):.2f} s, "
            f"max {max(lags):.2f} s, mean {statistics.fmean(lags):.2f} s (goal: p95 under 10 s)"
        )
    store.close()


def _last_finished(store: Store, tournament_id: int) -> datetime:
    with store.read() as session:
        last = session.scalar(
            select(Match.finished)
            .where(Match.tournament_id == tournament_id)
            .order_by(Match.finished.desc())
            .limit(1)
        )
    return as_utc(last) if last is not None else datetime.now(UTC)


def demo(args: argparse.Namespace) -> None:
    """``--demo`` (the module's docstring)."""
    directory = Path(tempfile.mkdtemp(prefix="live-demo-"))
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = {**os.environ, "ARENA_DATABASE_URL": f"sqlite:///{directory / 'arena.db'}"}
    env.pop("ARENA_BROKER_URL", None)
    unsandboxed = ["--unsandboxed"] if args.unsandboxed else []
    began = time.monotonic()
    server = subprocess.Popen(
        [str(ARENA), "serve", "--demo", "--port", str(port), *unsandboxed], env=env,
        cwd=directory, start_new_session=True, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    first = None
    try:
        while time.monotonic() - began < args.seconds:
            time.sleep(0.5)
            try:
                with urllib.request.urlopen(
                    f"http://127.0.0.1:{port}/leaderboards/draw/export.json", timeout=5
                ) as response:
                    board = json.load(response)
            except OSError:
                continue
            if board.get("rows"):
                first = time.monotonic() - began
                print(f"demo: the first non-empty leaderboard after {first:.1f} s "
                      f"({len(board['rows'])} bots, fitted {board.get('computed')})")  # fmt: skip
                break
        if first is None:
            print(f"demo: the leaderboard was still empty after {args.seconds:.0f} s")
    finally:
        stop(server)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", help="an empty database (default: SQLite, a temporary file)")
    parser.add_argument("--broker", help="the broker (default: the filesystem transport)")
    parser.add_argument("--background", type=int, default=143_000, help="done games stored first")
    parser.add_argument("--games", type=int, default=4, help="games a pair in the live round robin")
    parser.add_argument("--copies", type=int, default=3, help="entrants a reference bot")
    parser.add_argument("--concurrency", type=int, default=2, help="the match worker's processes")
    parser.add_argument("--seconds", type=float, default=180.0, help="how long to watch")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--unsandboxed", action="store_true", help="bots not sandboxed")
    parser.add_argument("--demo", action="store_true", help="time arena serve --demo instead")
    args = parser.parse_args()
    demo(args) if args.demo else live(args)


if __name__ == "__main__":
    main()
