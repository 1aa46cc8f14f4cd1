"""A ladder-like load on a real worker, cold bots against warm ones (arena.match.warm), in
one run: 20 fast bot files (copies of the reference bots, each a stored version of its
own), matches of 20 games of ``draw`` between random pairs, played for ``--minutes``
minutes by ``arena worker`` (2 pool processes, Redis, SQLite, bots sandboxed) started with
``ARENA_WARM_BOTS=0`` and with ``ARENA_WARM_BOTS=1`` on the same schedule; prints the games
per minute of each and their ratio. Each side's minutes are played in ``--slices`` slices,
in the order cold, warm, warm, cold... (a load that drifts during the run weighs on both
sides alike), each on a fresh worker and database.

``--pairs P`` draws the random pairs from P pairings only (default: every one of the 190):
warm bots pay where a worker process meets a pair again while it still keeps it (its
slot block holds 4 pairs' bots). So it also prints the share of each side's matches whose
pair their process had played within its last 4 pairs (on the warm side: whose bots it
kept), which the claims decide (docs/workers.md, "Claims follow the kept pairs") and the
load moves little.

    ./run python benchmarks/warm_ladder.py [--minutes 5] [--pairs 190] [--games 20]
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import os
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # benchmarks.tournament

from arena.compete.entrants import Entrant
from arena.compete.tournaments import Match
from arena.engine.rules import PRESETS
from arena.match.sandbox import SLOT_BLOCK
from arena.service.broker import configure
from arena.service.dispatch import send_pending
from arena.service.matches import create_stored_tournament
from arena.store.db import Store, connect, upgrade
from arena.store.queue import pair_of, tournament_progress
from arena.store.ratings import finished_matches
from benchmarks.tournament import _redis

ROOT = Path(__file__).resolve().parent.parent
ARENA = Path(sys.executable).parent / "arena"
KINDS = ("random", "greedy", "fives", "counter")
BOTS = 20


@contextlib.contextmanager
def _worker(directory: Path, env: dict[str, str], name: str) -> Iterator[None]:
    log = directory / f"worker-{name}.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [str(ARENA), "worker", "--concurrency", "2", "--no-beat", "--loglevel", "INFO"],
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
            os.killpg(process.pid, signal.SIGKILL)  # the match in hand is not counted
        process.wait()


def _schedule(entrants: Sequence[Entrant], matches: int, pairs: int, games: int) -> list[Match]:
    """``matches`` matches between random pairs (of ``pairs`` pairings drawn once)."""
    rng = random.Random(23)
    pairings = list(itertools.combinations(range(len(entrants)), 2))
    rng.shuffle(pairings)
    chosen = pairings[:pairs]
    schedule = []
    for number in range(matches):
        a, b = rng.choice(chosen)
        seats = (entrants[a], entrants[b]) if rng.random() < 0.5 else (entrants[b], entrants[a])
        schedule.append(Match(f"m{number}", seats, games, rng.randrange(2**31)))
    return schedule


def _task_seconds(directory: Path, kind: str) -> float:
    """The median seconds of the worker's match tasks (Celery's "succeeded in" lines)."""
    log = (directory / f"worker-{kind}.log").read_text(errors="replace")
    times = [float(t) for t in re.findall(r"play_match\[[^]]*\] succeeded in ([\d.]+)s", log)]
    return statistics.median(times) if times else float("nan")


def _met_again(store: Store, tournament_id: int) -> tuple[int, int]:
    """Of the tournament's done matches, how many met a pair their process had played
    within its last ``SLOT_BLOCK // 2`` pairs (whose bots a warm process keeps), and how
    many there are: a share the load moves little."""
    done = [m for m in finished_matches(store, tournament_id).matches if m.status == "done"]
    latest: dict[str, list[tuple[int, ...]]] = {}
    met = 0
    for match in sorted(done, key=lambda m: m.finished.timestamp() if m.finished else 0.0):
        kept = latest.setdefault(str((match.result or {}).get("worker")), [])
        pair = pair_of(match.seats)
        met += pair in kept
        if pair in kept:
            kept.remove(pair)
        kept.append(pair)
        del kept[: -(SLOT_BLOCK // 2)]
    return met, len(done)


def play(
    warm: bool, minutes: float, pairs: int, games: int, directory: Path, slice_: int
) -> tuple[int, float, tuple[int, int]]:
    """Games done by the worker in ``minutes`` minutes, warm or cold, the median seconds
    of its match tasks, and its matches met again (:func:`_met_again`)."""
    kind = f"{'warm' if warm else 'cold'}-{slice_}"
    url = f"sqlite:///{directory / f'{kind}.db'}"
    upgrade(url)
    store = connect(url)
    try:
        entrants = []
        for number in range(BOTS):
            source = (ROOT / "bots" / f"{KINDS[number % len(KINDS)]}.py").read_text()
            version, _ = store.add_bot_version(
                "arena", f"bot{number}", f"{source}\n# copy {number}\n", {"benchmark": True}
            )
            entrants.append(Entrant.stored(f"bot{number}", version.id))
        matches = _schedule(entrants, int(minutes * 400) + 50, pairs, games)
        tournament_id, _ = create_stored_tournament(
            store,
            name=f"warm-ladder-{kind}",
            rules=PRESETS["draw"],
            format="round-robin",
            entrants=entrants,
            games_per_match=games,
            seed=1,
            matches=matches,
        )
        with _redis(directory) as broker:
            env = {
                "ARENA_DATABASE_URL": url,
                "ARENA_BROKER_URL": broker,
                "ARENA_WARM_BOTS": "1" if warm else "0",
            }
            with _worker(directory, env, kind):
                configure(broker)
                send_pending(store, tournament_id=tournament_id)
                time.sleep(minutes * 60)
                done = tournament_progress(store, tournament_id)
        if done["void"]:
            sys.exit(f"{done['void']} matches void: see {directory}/worker-{kind}.log")
        if done["pending"] == 0:
            sys.exit("the worker ran out of matches: schedule more")
        met = _met_again(store, tournament_id)
        return done["done"] * games, _task_seconds(directory, kind), met
    finally:
        store.close()


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=5.0, help="Minutes of play per side.")
    parser.add_argument("--pairs", type=int, default=BOTS * (BOTS - 1) // 2)
    parser.add_argument("--games", type=int, default=20, help="Games per match.")
    parser.add_argument("--slices", type=int, default=2, help="Slices of each side's minutes.")
    args = parser.parse_args(argv)
    directory = Path(tempfile.mkdtemp(prefix="arena-warm-"))
    done: dict[bool, list[int]] = {False: [], True: []}
    tasks: dict[bool, list[float]] = {False: [], True: []}
    met: dict[bool, list[tuple[int, int]]] = {False: [], True: []}
    minutes = args.minutes / args.slices
    try:
        for number in range(args.slices):
            for warm_side in (False, True) if number % 2 == 0 else (True, False):
                games, task, again = play(
                    warm_side, minutes, args.pairs, args.games, directory, number
                )
                done[warm_side].append(games)
                tasks[warm_side].append(task)
                met[warm_side].append(again)
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    cold, warm = sum(done[False]), sum(done[True])
    cold_task, warm_task = statistics.median(tasks[False]), statistics.median(tasks[True])
    print(
        f"{BOTS} bots, random pairs of {args.pairs} pairings, matches of {args.games} games "
        f"(draw), {args.minutes:g} minutes each in {args.slices} slices, 1 worker of 2 "
        f"processes, bots sandboxed; games per slice: cold {done[False]}, warm {done[True]}"
    )
    print(f"cold: {cold / args.minutes:8.1f} games/minute, a match task {cold_task:.3f} s")
    print(f"warm: {warm / args.minutes:8.1f} games/minute, a match task {warm_task:.3f} s")
    print(f"ratio warm/cold: {warm / max(cold, 1):.2f}")
    shares = {
        side: sum(m for m, _ in met[side]) / max(sum(n for _, n in met[side]), 1)
        for side in (False, True)
    }
    print(
        f"matches whose pair their process played within its last {SLOT_BLOCK // 2} pairs "
        f"(warm: its bots kept): cold {shares[False]:.0%}, warm {shares[True]:.0%}"
    )


if __name__ == "__main__":
    main()
