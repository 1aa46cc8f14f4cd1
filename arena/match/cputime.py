"""CPU time of a bot's whole process tree, every thread, from /proc: what the referee
charges a bot for its decisions (and for what it burns between them).

A process's CPU time is the larger of its live threads' nanoseconds (``schedstat``) and
its own totals in ``stat``: user and system time of every thread it ever had, exited
ones included, plus those of the children it has reaped (clock ticks, 10 ms). Without
the totals, work done in a thread or a child that ends before the next reading would
drop out of the sum: never charged, and the move after it charged less than nothing.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

__all__ = ["TreeClock", "tree_cpu_seconds", "walk_tree"]

_CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
#: Processes a :class:`TreeClock` keeps its /proc files open for; a larger tree is read as
#: :func:`tree_cpu_seconds` reads it (a bot that forks many processes costs its referee
#: no more descriptors than that).
MAX_KEPT_PROCESSES = 16
_READ = 1 << 16


def tree_cpu_seconds(root: int) -> float:
    """CPU seconds of ``root`` and its live descendants (every thread), from /proc.

    Nanoseconds from each thread's ``schedstat`` where the kernel keeps them, else
    the clock ticks (10 ms) of ``stat``.
    """
    return sum(
        max(
            sum(_task_cpu_seconds(f"/proc/{pid}/task/{tid}") for tid in tasks),
            _process_totals(f"/proc/{pid}/stat"),
        )
        for pid, tasks in walk_tree(root)
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


def _process_totals(stat: str) -> float:
    """The process's user and system seconds, its exited threads' included, and its reaped
    children's (0 for a process gone)."""
    try:
        with open(stat, "rb") as handle:
            return _totals(handle.read())
    except OSError:
        return 0.0


def _totals(stat: bytes) -> float:
    """utime + stime + cutime + cstime of a ``stat`` line, in seconds."""
    try:
        fields = stat.rsplit(b")", 1)[1].split()
        return sum(int(field) for field in fields[11:15]) / _CLOCK_TICKS
    except (IndexError, ValueError):
        return 0.0


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


class TreeClock:
    """:func:`tree_cpu_seconds` of one ``root``, read again and again (the referee reads a
    bot's after each of its replies): the /proc files of the tree's processes and threads
    are kept open and read again with ``pread``, a third of the system calls of opening,
    reading and closing each one every time. A process's threads are listed again when
    its thread count (``stat``) changes, or a file of a thread gone fails; a process gone
    is dropped; a tree of more than :data:`MAX_KEPT_PROCESSES` processes is read afresh
    each time. :meth:`close` closes the files.
    """

    def __init__(self, root: int) -> None:
        self.root = root
        # pid -> (its stat's descriptor, {tid: (schedstat's, children's descriptors)})
        self._kept: dict[int, tuple[int, dict[str, tuple[int | None, int]]]] = {}

    def seconds(self) -> float:
        """CPU seconds of the root and its live descendants, as :func:`tree_cpu_seconds`."""
        total, stack, seen = 0.0, [self.root], set()
        while stack:
            pid = stack.pop()
            if pid in seen:
                continue
            seen.add(pid)
            if len(seen) > MAX_KEPT_PROCESSES:
                self.close()
                return tree_cpu_seconds(self.root)
            listed = self._tasks(pid)
            if listed is None:
                continue
            tasks, floor = listed
            threads = 0.0
            for tid, (schedstat, children) in tasks.items():
                try:
                    if schedstat is None:
                        threads += _task_cpu_seconds(f"/proc/{pid}/task/{tid}")
                    else:
                        threads += int(os.pread(schedstat, 64, 0).split()[0]) / 1e9
                    stack.extend(int(child) for child in _pread_all(children).split())
                except (OSError, IndexError, ValueError):  # a thread gone: listed again next
                    self._drop(pid)
                    break
            total += max(threads, floor)
        for pid in [pid for pid in self._kept if pid not in seen]:
            self._drop(pid)
        return total

    def _tasks(self, pid: int) -> tuple[dict[str, tuple[int | None, int]], float] | None:
        """The process's threads' open files, listed again when its thread count changed,
        and its own totals (:func:`_totals`); None when it is gone."""
        kept = self._kept.get(pid)
        try:
            if kept is None:
                kept = (os.open(f"/proc/{pid}/stat", os.O_RDONLY), {})
                self._kept[pid] = kept
            stat = os.pread(kept[0], 1024, 0)
            count = int(stat.rsplit(b")", 1)[1].split()[17])
        except (OSError, IndexError, ValueError):
            self._drop(pid)
            return None
        tasks, floor = kept[1], _totals(stat)
        if count == len(tasks):
            return tasks, floor
        try:
            listed = set(os.listdir(f"/proc/{pid}/task"))
        except OSError:
            self._drop(pid)
            return None
        for tid in [tid for tid in tasks if tid not in listed]:
            _close(*tasks.pop(tid))
        for tid in listed - tasks.keys():
            try:
                children = os.open(f"/proc/{pid}/task/{tid}/children", os.O_RDONLY)
            except OSError:
                continue
            try:
                schedstat: int | None = os.open(f"/proc/{pid}/task/{tid}/schedstat", os.O_RDONLY)
            except OSError:
                schedstat = None
            tasks[tid] = (schedstat, children)
        return tasks, floor

    def _drop(self, pid: int) -> None:
        kept = self._kept.pop(pid, None)
        if kept is not None:
            _close(kept[0])
            for files in kept[1].values():
                _close(*files)

    def close(self) -> None:
        """Close every file kept open."""
        for pid in list(self._kept):
            self._drop(pid)


def _pread_all(fd: int) -> bytes:
    data = os.pread(fd, _READ, 0)
    while len(data) % _READ == 0 and data:
        more = os.pread(fd, _READ, len(data))
        if not more:
            break
        data += more
    return data


def _close(*fds: int | None) -> None:
    for fd in fds:
        if fd is not None:
            with contextlib.suppress(OSError):
                os.close(fd)
