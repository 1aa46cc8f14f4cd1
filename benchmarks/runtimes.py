"""The runtimes' cost in the sandbox: compile time, cold start, memory and time a move of a
bot of each runtime.

Usage::

    ./run python benchmarks/runtimes.py [--starts N] [--games N]

For each runtime (arena/match/runtimes.py) and its sample bot -- ``python``:
``bots/greedy.py``; ``python-numpy``: ``bots/numpy_greedy.py`` (imports numpy);
``javascript``: the javascript starter bot (``arena new-bot --runtime javascript``);
``cpp``: ``bots/greedy.cpp`` (the kit arena.hpp); ``c``, ``go``, ``rust``: their starters
(greedy, speaking the protocol themselves); ``java``: ``bots/Greedy.java`` (the kit
arena/match/kits/java; its cold start includes the kit's practice rounds, the JVM's JIT
warm-up) -- prints, from one run:

- for a compiled runtime, the compile in the sandbox (:mod:`arena.match.compiler`), into a
  compile cache of the run's own (so it really compiles);
- the cold start, process start to its handshake reply, median (and the slowest) of
  ``--starts`` starts in the sandbox (the first start of a runtime, which also lists its
  libraries with ``ldd`` once per process, is left out);
- the bot process's peak resident memory (``VmHWM`` of the sandbox's pid 1, the bot) after
  ``--games`` games of ``draw`` against ``random``, and its address space (``VmPeak``),
  which RLIMIT_AS bounds;
- the average time the referee charged it per move, in µs, and as a multiple of python's.

A runtime with a sample bot in :func:`sample_bots` gets a row (the same code for each).
Timings on a shared machine are noisy: compare the runtimes within one run.
Needs the sandbox and every runtime: ``./run test`` installs them as root.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from arena.engine.rules import find_rules
from arena.match.compiler import CACHE_ENV, build
from arena.match.newbot import write_starter_bot
from arena.match.referee import ProcessPlayer, StrategyPlayer, TimeControl, play_match
from arena.match.runtimes import RUNTIMES, find_runtime, runtime_missing
from arena.match.sandbox import Sandbox, check_sandbox, process_slots

ROOT = Path(__file__).resolve().parent.parent
CLOCK = TimeControl()


def _status(pid: int) -> dict[str, int]:
    """The ``Vm*`` lines of a process's status, in KiB."""
    found = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Vm"):
            key, value = line.split(":", 1)
            found[key] = int(value.split()[0])
    return found


def _descendants(pid: int) -> list[int]:
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    return [int(c) for c in children] + [d for c in children for d in _descendants(int(c))]


def cold_starts(path: Path, runtime: str, starts: int, slot: int) -> list[float]:
    """Seconds from starting the bot to its handshake reply, ``starts + 1`` times, the
    first left out."""
    times = []
    for _ in range(starts + 1):
        player = ProcessPlayer(path, Sandbox(slot=slot), runtime)
        began = time.perf_counter()
        player.open(CLOCK)
        times.append(time.perf_counter() - began)
        player.close()
    return times[1:]


def memory(path: Path, runtime: str, games: int, slot: int) -> tuple[int, int, float]:
    """(peak RSS KiB, peak address space KiB, ms a move) of the bot after ``games`` games."""
    player = ProcessPlayer(path, Sandbox(slot=slot), runtime)
    seen: dict[str, int] = {}

    class Watch(StrategyPlayer):
        """The opponent, which reads the bot's memory at each game's end."""

        def end(self, game: str, result: object) -> None:
            proc = player._proc  # the sandbox's bwrap; the bot is its descendant
            if proc is not None:
                for pid in _descendants(proc.pid):
                    status = _status(pid)
                    for key in ("VmHWM", "VmPeak"):
                        seen[key] = max(seen.get(key, 0), status.get(key, 0))

    opponent = Watch("random")
    list(play_match(find_rules("draw"), [player, opponent], games=games, seed=1))
    per_move = player.seconds_spent / max(1, player.decisions) * 1000
    return seen.get("VmHWM", 0), seen.get("VmPeak", 0), per_move


def sample_bots(directory: Path) -> dict[str, Path]:
    """Each runtime's sample bot (starters written to ``directory``, readable by all)."""
    starters = {}
    named = (("javascript", "starter.js"), ("c", "cstarter.c"), ("go", "gostarter.go"),
             ("rust", "ruststarter.rs"))  # fmt: skip
    for runtime, name in named:
        path = directory / name
        write_starter_bot(path, runtime)
        path.chmod(0o644)
        starters[runtime] = path
    return {
        "python": ROOT / "bots" / "greedy.py",
        "python-numpy": ROOT / "bots" / "numpy_greedy.py",
        "javascript": starters["javascript"],
        "cpp": ROOT / "bots" / "greedy.cpp",
        "c": starters["c"],
        "go": starters["go"],
        "rust": starters["rust"],
        "java": ROOT / "bots" / "Greedy.java",
    }


def compile_seconds(path: Path, runtime: str, slot: int) -> float | None:
    """Seconds the compile of ``path`` took in the sandbox (None: not a compiled runtime)."""
    chosen = find_runtime(runtime)
    if chosen.compiler is None:
        return None
    return build(path, chosen, Sandbox(slot=slot)).seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--starts", type=int, default=10, help="cold starts to time (10)")
    parser.add_argument("--games", type=int, default=20, help="games for the memory (20)")
    args = parser.parse_args(argv)
    problems = check_sandbox() + [
        f"{r.name}: {p}" for r in RUNTIMES.values() if (p := runtime_missing(r))
    ]
    if problems:
        print("cannot run: " + "; ".join(problems))
        return 2
    slot = process_slots()
    with (
        tempfile.TemporaryDirectory(prefix="arena-bench-") as directory,
        tempfile.TemporaryDirectory(prefix="arena-bench-cache-") as cache,
    ):
        os.environ[CACHE_ENV] = cache  # a cache of the run's own: every compile is timed
        Path(directory).chmod(0o755)
        print(f"{'runtime':<14} {'compile s':>9} {'cold start ms (median, max)':>28} "
              f"{'peak RSS MB':>12} {'address space MB':>17} {'µs a move':>10} "
              f"{'x python':>9}")  # fmt: skip
        python_move = None
        for runtime, path in sample_bots(Path(directory)).items():
            compiled = compile_seconds(path, runtime, slot)
            times = cold_starts(path, runtime, args.starts, slot)
            rss, peak, per_move = memory(path, runtime, args.games, slot)
            python_move = python_move or per_move
            print(
                f"{runtime:<14} {'-' if compiled is None else f'{compiled:.1f}':>9} "
                f"{statistics.median(times) * 1000:>20.0f} {max(times) * 1000:>7.0f} "
                f"{rss / 1024:>12.1f} {peak / 1024:>17.0f} {per_move * 1000:>10.0f} "
                f"{per_move / python_move:>9.2f}"
            )
    print(f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())} (2 cores here)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
