"""How much an ``arena worker`` costs to start: the CPU of its processes (the command, Celery's
main process, its pool) once it consumes (its log says ``ready``), the wall time to that
point, and its CPU over a few idle seconds after, on the embedded default (SQLite, the
filesystem broker, ``--unsandboxed``: no sandbox needed to run this).

Usage::

    ./run python benchmarks/worker_start.py [--runs N] [--idle S] [--before TREE]

``--before TREE`` also starts the worker of another source tree (the code before a change,
``git archive main | tar -x -C TREE``), put first on ``PYTHONPATH``, each of its starts
right after the same start of this tree's, so that both meet the same load; prints the
medians and their ratio (after / before). Both trees' modules are compiled to bytecode
first, as an installed arena's are after its first run. The machine is shared: the load
average is printed before and after.
"""

from __future__ import annotations

import argparse
import compileall
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ARENA = Path(sys.executable).parent / "arena"
TICKS = os.sysconf("SC_CLK_TCK")


def load() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def group_cpu(group: int) -> float:
    """The CPU seconds (user + system) of the live processes of process group ``group``."""
    total = 0
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            fields = Path(entry.path, "stat").read_text().rpartition(")")[2].split()
        except OSError:
            continue
        if int(fields[2]) == group:  # pgrp; utime and stime follow at 11 and 12
            total += int(fields[11]) + int(fields[12])
    return total / TICKS


def start_once(tree: str | None, idle: float) -> tuple[float, float, float]:
    """One worker's start: (CPU at ready, wall to ready, CPU over ``idle`` seconds after)."""
    env = {
        **os.environ,
        "ARENA_HEARTBEAT_SECONDS": "0.5",
        "ARENA_SWEEP_SECONDS": "1",
        "ARENA_LEASE_SECONDS": "2",
    }
    if tree is not None:
        env["PYTHONPATH"] = tree
    with tempfile.TemporaryDirectory(prefix="worker-start-") as folder:
        url = f"sqlite:///{folder}/arena.db"
        subprocess.run([str(ARENA), "db", "upgrade", "--url", url], check=True, env=env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
        log = Path(folder, "worker.log")
        argv = [str(ARENA), "worker", "--url", url, "--broker", "filesystem://broker",
                "--concurrency", "2", "--unsandboxed"]  # fmt: skip
        with log.open("wb") as out:
            began = time.perf_counter()
            process = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=env,
                                       cwd=folder, start_new_session=True)  # fmt: skip
        try:
            while b"ready." not in log.read_bytes():
                if process.poll() is not None:
                    raise SystemExit(f"the worker exited:\n{log.read_text()}")
                time.sleep(0.02)
            wall = time.perf_counter() - began
            ready = group_cpu(process.pid)
            time.sleep(idle)
            idle_cpu = group_cpu(process.pid) - ready
        finally:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    return ready, wall, idle_cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="Starts of each tree's worker.")
    parser.add_argument("--idle", type=float, default=3.0, help="Idle seconds measured.")
    parser.add_argument("--before", metavar="TREE", help="Also start this tree's worker.")
    args = parser.parse_args()
    here = Path(__file__).resolve().parent.parent
    trees: list[str | None] = [None] if args.before is None else [None, args.before]
    for tree in trees:
        for package in ("arena", "workers"):
            compileall.compile_dir(str(Path(tree or here) / package), quiet=1)
    print(f"arena worker (SQLite, filesystem broker, 2 processes): {args.runs} starts; {load()}")
    results: list[list[tuple[float, float, float]]] = [[] for _ in trees]
    for _ in range(args.runs):
        for tree, found in zip(trees, results, strict=True):
            found.append(start_once(tree, args.idle))
    medians = [[statistics.median(run[i] for run in found) for i in range(3)] for found in results]
    names = ["this tree", f"before ({args.before})"]
    for name, (cpu, wall, idle) in zip(names, medians, strict=False):
        print(f"{name}: CPU at ready {cpu:.2f} s, wall to ready {wall:.2f} s, "
              f"CPU over {args.idle:g} s idle {idle:.2f} s (medians)")  # fmt: skip
    if args.before:
        (cpu, wall, _), (cpu0, wall0, _) = medians
        print(f"ratio after / before: CPU at ready {cpu / cpu0:.2f}, wall {wall / wall0:.2f}")
    print(load())


if __name__ == "__main__":
    main()
