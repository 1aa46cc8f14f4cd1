"""How fast every ``arena`` command starts: ``--help`` of each command and subcommand, and
``arena --version``, each run as a process of its own, as a user runs it.

Usage::

    ./run python benchmarks/starts.py [--runs N] [--only WORD]

Prints, for every command (walked from the root group, subcommands included), the best and
the median wall time of ``--runs`` runs (3 by default) of ``arena COMMAND --help``, beside
its bound (issue 33: 0.5 s for a command's help, 0.3 s for ``--version``), and the load
average before and after (the machine is shared: a figure means little without it).
``--only WORD`` times only the commands whose path contains WORD. The console script next
to this interpreter (``.venv/bin/arena``) is what runs, so its start-up counts; with
``PYTHONPATH=TREE`` it runs the arena of another source tree (the code before a change,
from ``git archive``), to compare the two in one sitting.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import click

from arena.cli.main import cli

#: Seconds within which a command's --help must print (issue 33).
HELP_BOUND = 0.5
#: Seconds within which ``arena --version`` must print.
VERSION_BOUND = 0.3


def command_paths(command: click.Command, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    """Every command's path under ``command``, the root's ``()`` first (this imports every
    command's module, here in the benchmark's process only)."""
    yield path
    if isinstance(command, click.Group):
        ctx = click.Context(command)
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            if sub is not None:
                yield from command_paths(sub, (*path, name))


def timed(argv: list[str], runs: int) -> list[float]:
    """Wall seconds of ``runs`` runs of ``argv`` (each must exit 0)."""
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - started)
    return times


def load() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="Runs of each command (3).")
    parser.add_argument("--only", default="", help="Only the commands whose path has this.")
    args = parser.parse_args()
    script = Path(sys.executable).with_name("arena")
    arena = [str(script)] if script.exists() else [sys.executable, "-m", "arena"]
    cases: list[tuple[tuple[str, ...], float]] = [(("--version",), VERSION_BOUND)]
    cases += [((*path, "--help"), HELP_BOUND) for path in command_paths(cli)]
    cases = [case for case in cases if args.only in " ".join(case[0])]
    print(f"{' '.join(arena)}: {len(cases)} commands, {args.runs} runs each; {load()}")
    print(f"{'command':44} {'best':>7} {'median':>7} {'bound':>6}")
    over = []
    for argv, bound in cases:
        times = timed([*arena, *argv], args.runs)
        best, median = min(times), statistics.median(times)
        mark = "" if best <= bound else "  OVER"
        if mark:
            over.append(" ".join(argv))
        print(f"arena {' '.join(argv):38} {best:7.3f} {median:7.3f} {bound:6.1f}{mark}")
    print(f"{len(cases) - len(over)} of {len(cases)} within their bound (best run); {load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
