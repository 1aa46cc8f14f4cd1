"""How fast every ``arena`` command starts: ``--help`` of each command and subcommand, and
``arena --version``, each run as a process of its own, as a user runs it.

Usage::

    ./run python benchmarks/starts.py [--runs N] [--only WORD] [--before TREE]

Prints, for every command (walked from the root group, subcommands included), the best and
the median wall time of ``--runs`` runs (3 by default) of ``arena COMMAND --help`` and the
least CPU time (user + system: a loaded machine's estimate of the quiet one's wall time),
beside its bound (issue 33: 0.5 s for a command's help, 0.3 s for ``--version``), and the load
average before and after (the machine is shared: a figure means little without it).
``--only WORD`` times only the commands whose path contains WORD. The console script next
to this interpreter (``.venv/bin/arena``) is what runs, so its start-up counts.
``--before TREE`` also times the arena of another source tree (the code before a change,
``git archive main | tar -x -C TREE``), put first on ``PYTHONPATH``, each of its runs right
after the same run of this tree's, so that both meet the same load. Both trees' modules
are compiled to bytecode first, as an installed arena's are after its first run (with
``PYTHONDONTWRITEBYTECODE`` set, every run would compile the arena's sources again).
"""

from __future__ import annotations

import argparse
import compileall
import os
import resource
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


def timed(
    argv: list[str], trees: list[str | None], runs: int
) -> list[tuple[list[float], list[float]]]:
    """For each of ``trees`` (None: this one; else a tree first on ``PYTHONPATH``), the wall
    seconds and the CPU seconds (user + system) of ``runs`` runs of ``argv`` (each must exit
    0), the trees' runs interleaved. A start-up is one thread's work: its CPU time is about
    its wall time on a quiet machine, and varies far less with the load than its wall time."""
    times: list[tuple[list[float], list[float]]] = [([], []) for _ in trees]
    for _ in range(runs):
        for tree, (walls, cpus) in zip(trees, times, strict=True):
            env = dict(os.environ)
            if tree is not None:
                env["PYTHONPATH"] = tree
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            started = time.perf_counter()
            subprocess.run(
                argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env
            )
            walls.append(time.perf_counter() - started)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return times


def load() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="Runs of each command (3).")
    parser.add_argument("--only", default="", help="Only the commands whose path has this.")
    parser.add_argument("--before", metavar="TREE", help="Also time this tree's arena.")
    args = parser.parse_args()
    trees: list[str | None] = [None] if args.before is None else [None, args.before]
    here = Path(__file__).resolve().parent.parent
    for tree in trees:
        compileall.compile_dir(str(Path(tree or here) / "arena"), quiet=1)
    script = Path(sys.executable).with_name("arena")
    arena = [str(script)] if script.exists() else [sys.executable, "-m", "arena"]
    cases: list[tuple[tuple[str, ...], float]] = [(("--version",), VERSION_BOUND)]
    cases += [((*path, "--help"), HELP_BOUND) for path in command_paths(cli)]
    cases = [case for case in cases if args.only in " ".join(case[0])]
    print(f"{' '.join(arena)}: {len(cases)} commands, {args.runs} runs each; {load()}")
    before = f"  {'before: best':>12} {'median':>7} {'cpu':>6}" if args.before else ""
    print(f"{'seconds':38} {'best':>7} {'median':>7} {'cpu':>6} {'bound':>6}{before}")
    over = over_cpu = 0
    for argv, bound in cases:
        times = timed([*arena, *argv], trees, args.runs)
        walls, cpus = times[0]
        mark = "" if min(walls) <= bound else " OVER"
        over += bool(mark)
        over_cpu += min(cpus) > bound
        line = (
            f"arena {' '.join(argv):32} {min(walls):7.3f} {statistics.median(walls):7.3f} "
            f"{min(cpus):6.3f} {bound:6.1f}{mark:5}"
        )
        if args.before:
            walls, cpus = times[1]
            line += f" {min(walls):12.3f} {statistics.median(walls):7.3f} {min(cpus):6.3f}"
        print(line)
    print(
        f"{len(cases) - over} of {len(cases)} within their bound (best run's wall time), "
        f"{len(cases) - over_cpu} by their CPU time; {load()}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
