"""CPU time of a bot's whole process tree, every thread, from /proc: what the referee
charges a bot for its decisions (and for what it burns between them)."""

from __future__ import annotations

import os
from collections.abc import Iterator

__all__ = ["tree_cpu_seconds", "walk_tree"]

_CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def tree_cpu_seconds(root: int) -> float:
    """CPU seconds of ``root`` and its live descendants (every thread), from /proc.

    Nanoseconds from each thread's ``schedstat`` where the kernel keeps them, else
    the clock ticks (10 ms) of ``stat``.
    """
    return sum(
        _task_cpu_seconds(f"/proc/{pid}/task/{tid}")
        for pid, tasks in walk_tree(root)
        for tid in tasks
    )


def walk_tree(root: int) -> Iterator[tuple[int, list[str]]]:
    """``root`` and its live descendants, parents first, each with its threads' ids, from
    /proc (a process gone meanwhile is left out)."""
    stack = [root]
    while stack:
        pid = stack.pop()
        try:
            tasks = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        yield pid, tasks
        for tid in tasks:
            try:
                with open(f"/proc/{pid}/task/{tid}/children", "rb") as handle:
                    stack.extend(int(child) for child in handle.read().split())
            except (OSError, ValueError):
                continue


def _task_cpu_seconds(task: str) -> float:
    try:
        with open(f"{task}/schedstat", "rb") as handle:
            return int(handle.read().split()[0]) / 1e9
    except (OSError, IndexError, ValueError):
        pass
    try:
        with open(f"{task}/stat", "rb") as handle:
            fields = handle.read().rsplit(b")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / _CLOCK_TICKS  # utime, stime
    except (OSError, IndexError, ValueError):
        return 0.0
