"""Programs the CLI starts and keeps running: ``arena serve``'s three (its workers and the
web server) and ``arena worker``'s Celery worker (docs/workers.md).

A supervised program that exits when nobody asked it to is started again, with a line on
stderr naming it and its exit status; one that died soon after it started waits first, so
a program that cannot start does not spin. Each dies with its supervisor, however that dies
(a parent-death signal set in the child). A Celery worker does exit by itself on faults
its broker's client does not survive (kombu restoring unacknowledged messages on a dead
Redis connection after a restart: "Unrecoverable error", celery/kombu#970 and #582), and
a production worker must not stay dead of a broker's restart.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import subprocess
import time
from collections.abc import Callable, Sequence
from types import FrameType
from typing import Protocol

import click

from arena.match.sandbox import die_with_parent

__all__ = [
    "RESTART_PAUSE_SECONDS",
    "Child",
    "Forked",
    "Program",
    "run_supervised",
    "signal_group",
    "start_program",
    "stop_all",
]

#: A program that died sooner than this after it started waits this long before it is
#: started again (a program that cannot start must not spin).
RESTART_PAUSE_SECONDS = 5.0


class Child(Protocol):
    """What :class:`Program` needs of a child process (:class:`subprocess.Popen` has it)."""

    @property
    def pid(self) -> int: ...

    @property
    def returncode(self) -> int | None: ...

    def poll(self) -> int | None: ...

    def wait(self, timeout: float | None = None) -> int: ...


class Program:
    """A program a command runs and keeps running: started again when it dies.

    ``start`` starts it (again) and returns the child; ``by`` names the supervisor in the
    lines it writes (``arena serve``)."""

    def __init__(self, name: str, start: Callable[[], Child], by: str) -> None:
        self.name, self.start, self.by = name, start, by
        self.process = start()
        self.started = time.monotonic()
        self.died: float | None = None

    def restart_if_dead(self) -> None:
        """If the program has exited, kill what it left in its session (pool processes,
        bots) and start it again, saying so on stderr; one that died soon after it started
        waits :data:`RESTART_PAUSE_SECONDS` first."""
        if self.process.poll() is None:
            return
        now = time.monotonic()
        if self.died is None:
            self.died = now
            signal_group(self.process, signal.SIGKILL)  # whatever it left behind
            click.echo(
                f"{self.by}: {self.name} exited (exit status {self.process.returncode}); "
                "starting it again",
                err=True,
            )
        if self.died - self.started < RESTART_PAUSE_SECONDS and (
            now - self.died < RESTART_PAUSE_SECONDS
        ):
            return
        self.restart("started again")

    def restart(self, how: str) -> None:
        """Start the program again, saying so (``how``: e.g. ``started again``) on stderr."""
        self.process = self.start()
        self.started, self.died = time.monotonic(), None
        click.echo(f"{self.by}: {self.name} {how} (pid {self.process.pid})", err=True)


def start_program(argv: Sequence[str], env: dict[str, str]) -> subprocess.Popen[bytes]:
    """Run ``argv`` in a session of its own (Ctrl-C reaches its supervisor only, which
    stops each program in turn), dying with its supervisor (a parent-death signal)."""
    return subprocess.Popen(list(argv), env=env, start_new_session=True, preexec_fn=die_with_parent)


class Forked:
    """``run()`` in a forked child of this process (:mod:`multiprocessing`'s fork: the
    child has what this process imported, and exits as a process of its own would, its
    finalizers run: kombu restores its unacknowledged messages in one), dying with it;
    in this process's group (a terminal's Ctrl-C, ``kill -9 -PGID`` and SIGSTOP reach it
    as they reached the program when it ran in this process), or with ``new_session`` in a
    session of its own, as :func:`start_program`'s. :class:`Child`'s methods."""

    def __init__(self, run: Callable[[], object], *, new_session: bool = False) -> None:
        context = multiprocessing.get_context("fork")
        # "MainProcess": the name its log lines give, as when it ran in this process
        self._process = context.Process(
            target=_in_child, args=(run, new_session), name="MainProcess"
        )
        self._process.start()

    @property
    def pid(self) -> int:
        pid = self._process.pid
        assert pid is not None  # started
        return pid

    @property
    def returncode(self) -> int | None:
        return self._process.exitcode

    def poll(self) -> int | None:
        return self._process.exitcode

    def wait(self, timeout: float | None = None) -> int:
        self._process.join(timeout)
        if self._process.exitcode is None:
            raise subprocess.TimeoutExpired(str(self._process.name), timeout or 0.0)
        return self._process.exitcode


def _in_child(run: Callable[[], object], new_session: bool) -> None:
    if new_session:
        os.setsid()
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # not the supervisor's handlers
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGHUP, signal.SIG_DFL)
    die_with_parent()
    run()


def run_supervised(program: Program) -> int:
    """Keep ``program`` (a :class:`Forked` child, in this process's group) running until
    it stops on purpose; return its exit status.

    SIGTERM or SIGINT asks it to stop (SIGTERM, a warm shutdown, sent on; a terminal's
    Ctrl-C reaches it directly too); SIGHUP restarts it (SIGTERM, then started again). It
    stopping by itself with status 0 is a stop too (Celery's remote ``shutdown``); any other
    exit (an unrecoverable error, a signal) is a fault, and it is started again."""
    stopping: list[int] = []
    restarting: list[int] = []

    def stop_on(signum: int, frame: FrameType | None) -> None:
        (restarting if signum == signal.SIGHUP else stopping).append(signum)
        if program.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(program.process.pid, signal.SIGTERM)

    handled = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
    previous = {signum: signal.signal(signum, stop_on) for signum in handled}
    try:
        while True:
            status = program.process.wait()
            if stopping or (status == 0 and not restarting):
                return status
            if restarting:
                restarting.clear()
                program.restart("restarted on SIGHUP")
                continue
            program.restart_if_dead()
            while program.died is not None and not stopping:
                time.sleep(0.2)
                program.restart_if_dead()
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def stop_all(programs: Sequence[Child], seconds: float) -> None:
    """SIGTERM to each program's whole session, then, after ``seconds``, SIGKILL to what
    is left of it."""
    for program in programs:
        signal_group(program, signal.SIGTERM)
    deadline = time.monotonic() + seconds
    for program in programs:
        with contextlib.suppress(subprocess.TimeoutExpired):
            program.wait(timeout=max(0.1, deadline - time.monotonic()))
        signal_group(program, signal.SIGKILL)  # whatever it left behind (pool processes)
        program.wait()


def signal_group(program: Child, signum: int) -> None:
    """``signum`` to the process group ``program`` leads (none for a :class:`Forked`
    child in its supervisor's group: it leaves nothing behind, its pool processes dying
    with it)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(program.pid, signum)
