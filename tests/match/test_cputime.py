"""The CPU time of a bot's process tree: :class:`TreeClock` reads what
:func:`tree_cpu_seconds` reads, with its /proc files kept open."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

from arena.match import cputime
from arena.match.cputime import TreeClock, tree_cpu_seconds, walk_tree

# A process that spins a little, starts a thread and a child (which spins too), then
# sleeps: its tree's CPU time then stays put. The child exits when its stdin closes.
TREE = """
import os, sys, threading, time
def spin():
    end = time.process_time() + 0.05
    while time.process_time() < end:
        pass
threading.Thread(target=lambda: time.sleep(60), daemon=True).start()
if os.fork() == 0:
    spin()
    sys.stdin.read()
    os._exit(0)
spin()
print("ready", flush=True)
time.sleep(60)
"""


def _states(root: int) -> list[bytes]:
    """Each process's state letter (``R``, ``S``, ``Z``...) in the tree."""
    states = []
    for pid, _ in walk_tree(root):
        with open(f"/proc/{pid}/stat", "rb") as handle:
            states.append(handle.read().rsplit(b")", 1)[1].split()[0])
    return states


def _open_files() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.fixture
def tree() -> Iterator[subprocess.Popen[bytes]]:
    with subprocess.Popen(
        [sys.executable, "-c", TREE], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    ) as proc:
        assert proc.stdout is not None
        assert proc.stdout.readline() == b"ready\n"
        deadline = time.monotonic() + 10
        while len(list(walk_tree(proc.pid))) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.1)  # (the child's spin is over)
        yield proc
        proc.kill()


def test_the_clock_reads_the_trees_cpu_time_as_tree_cpu_seconds(
    tree: subprocess.Popen[bytes],
) -> None:
    before = _open_files()
    clock = TreeClock(tree.pid)
    first = clock.seconds()
    assert first >= 0.09  # the parent's spin and the child's
    assert first == pytest.approx(tree_cpu_seconds(tree.pid), abs=0.005)
    assert clock.seconds() == pytest.approx(first, abs=0.005)  # read again, files kept
    assert _open_files() > before
    assert tree.stdin is not None
    tree.stdin.close()  # the child exits (a zombie: its parent does not reap it)
    deadline = time.monotonic() + 10
    while b"Z" not in _states(tree.pid) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert clock.seconds() == pytest.approx(tree_cpu_seconds(tree.pid), abs=0.005)
    clock.close()
    assert _open_files() == before - 1  # (less the child's stdin, closed)


def test_a_tree_larger_than_the_clock_keeps_is_read_afresh(
    tree: subprocess.Popen[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cputime, "MAX_KEPT_PROCESSES", 1)
    before = _open_files()
    clock = TreeClock(tree.pid)
    assert clock.seconds() == pytest.approx(tree_cpu_seconds(tree.pid), abs=0.005)
    assert _open_files() == before  # nothing kept open


def test_a_gone_process_reads_zero_and_keeps_nothing() -> None:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    before = _open_files()
    assert TreeClock(proc.pid).seconds() == 0.0
    assert _open_files() == before


# A process whose thread spins, ends, and whose child spins, exits and is reaped: the
# work of both is gone from the live threads the clock lists.
GONE = """
import os, sys, threading, time
def spin():
    end = time.process_time() + 0.3
    while time.process_time() < end:
        pass
print("start", flush=True)
sys.stdin.readline()
thread = threading.Thread(target=spin)
thread.start()
thread.join()
pid = os.fork()
if pid == 0:
    spin()  # (the child's own CPU time: 0.3 s)
    os._exit(0)
os.waitpid(pid, 0)
print("done", flush=True)
time.sleep(60)
"""


def test_work_in_a_thread_or_child_that_ended_is_still_charged() -> None:
    with subprocess.Popen(
        [sys.executable, "-c", GONE], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    ) as proc:
        assert proc.stdin is not None and proc.stdout is not None
        assert proc.stdout.readline() == b"start\n"
        clock = TreeClock(proc.pid)
        before = clock.seconds()
        proc.stdin.write(b"go\n")
        proc.stdin.flush()
        assert proc.stdout.readline() == b"done\n"
        # Both spins (0.3 s each) are over and gone from the live threads; ticks are 10 ms.
        try:
            assert clock.seconds() - before >= 0.55
            assert tree_cpu_seconds(proc.pid) - before >= 0.55
        finally:
            clock.close()
            proc.kill()
