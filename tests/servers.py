"""Real servers and workers for the tests: a throwaway redis-server and ``arena worker``
processes, each started daemonized or in a session of its own with its output in a file
(FACTS.md: a server holding the test run's pipes hangs CI), and stopped by its pid."""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ARENA = Path(sys.executable).parent / "arena"

#: Fast timings for tests: leases run out 2 s after a worker dies; sweeps every second.
FAST = {
    "ARENA_LEASE_SECONDS": "2",
    "ARENA_HEARTBEAT_SECONDS": "0.5",
    "ARENA_SWEEP_SECONDS": "1",
    "ARENA_RESEND_GRACE_SECONDS": "1",
}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def wait_for(
    check: object, timeout: float, what: str, interval: float = 0.05, most: float = 0.2
) -> None:
    """Call ``check()`` until it returns true; fail naming ``what`` after ``timeout`` s.

    The first calls come ``interval`` apart, the next ones a half longer apart each time,
    up to ``most``: a short wait is seen at once, and a long one (a class graded, a final
    published: 30 s) polls 5 times a second, not 20 (each poll is a query: 71 waits of
    the worker tests polled 5,456 times at every 50 ms, 5.5 CPU s of the tests')."""
    assert callable(check)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(interval)
        interval = min(most, interval * 1.5)
    pytest.fail(f"timed out after {timeout} s waiting for {what}")


@dataclass
class Redis:
    """A redis-server of our own on a free port, restartable (same port, same directory)."""

    root: Path
    port: int = field(default_factory=free_port)

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    @property
    def pid_file(self) -> Path:
        return self.root / "redis.pid"

    def start(self, *, persistent: bool = False) -> None:
        """Start it; ``persistent``: with an append-only file, as a deployment runs it."""
        server = shutil.which("redis-server")
        if server is None:
            pytest.fail(
                "these tests need redis-server: install it with 'apt-get install redis-server'"
            )
        args = [server, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.root)]
        args += ["--daemonize", "yes", "--pidfile", str(self.pid_file)]
        args += ["--logfile", str(self.root / "redis.log"), "--save", ""]
        args += ["--appendonly", "yes" if persistent else "no"]
        subprocess.run(args, check=True, capture_output=True, timeout=30)
        wait_for(self.ping, 10, f"redis-server on port {self.port}")

    def ping(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1) as sock:
                sock.sendall(b"PING\r\n")
                return sock.recv(64).startswith(b"+PONG")
        except OSError:
            return False

    def stop(self) -> None:
        """Stop it (SIGTERM to its pid; SIGKILL after 5 s) and wait until it is gone."""
        try:
            pid = int(self.pid_file.read_text())
        except (OSError, ValueError):
            return
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + 5
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.02)
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        wait_for(lambda: not self.ping(), 5, "redis-server to stop")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with contextlib.suppress(OSError):  # a zombie (not reaped by its parent) counts as gone
        if Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] == "Z":
            return False
    return True


@contextmanager
def running_redis(*, persistent: bool = False) -> Iterator[Redis]:
    root = Path(tempfile.mkdtemp(prefix="arena-redis-"))
    redis = Redis(root)
    redis.start(persistent=persistent)
    try:
        yield redis
    finally:
        redis.stop()
        shutil.rmtree(root, ignore_errors=True)


@dataclass
class Worker:
    """An ``arena worker`` process (which supervises Celery's main process, a child in its
    process group, with its pool under that) in a session of its own, its output in
    ``log``."""

    process: subprocess.Popen[bytes]
    log: Path

    @property
    def pid(self) -> int:
        return self.process.pid

    def pool_pids(self) -> set[int]:
        """The pids of its pool processes (its Celery worker's children)."""
        return {pool for celery in children(self.pid) for pool in children(celery)}

    def kill(self) -> None:
        """SIGKILL the whole worker: the main process, its pool, their bots."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.pid, signal.SIGKILL)
        self.process.wait(timeout=10)

    def stop(self) -> None:
        """A warm shutdown (SIGTERM to the main process only: signalling the pool processes
        too can hang Celery's exit), then SIGKILL to whatever is left."""
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=15)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=10)

    def output(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    def wait_ready(self, timeout: float = 60) -> None:
        """Wait until it consumes (its log says ``ready``); fail with its output if it exits
        first (it is stopped if it does not start)."""
        try:
            wait_for(
                lambda: "ready." in self.output() or self.process.poll() is not None,
                timeout,
                "the worker to start",
            )
            if self.process.poll() is not None:
                pytest.fail(f"arena worker exited with {self.process.returncode}:\n{self.output()}")
        except BaseException:
            self.stop()
            raise


def children(pid: int) -> set[int]:
    """The pids of ``pid``'s direct children (none if it is gone)."""
    with contextlib.suppress(OSError):
        return {
            int(child) for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        }
    return set()


def stop_workers(workers: Sequence[Worker], grace: float = 0.0) -> None:
    """What a test's teardown does with its workers: SIGTERM to each main process, then,
    after ``grace`` seconds (none by default), SIGKILL to whatever is left, pool and bots.

    The test is over: nothing needs the warm shutdown (a test that does calls
    :meth:`Worker.stop`), and an idle worker's takes 2-8 s (Celery's loop notices the
    signal at its next 2 s drain timeout, then joins its pool's threads and its timer):
    a 3 s grace ran out at nearly every teardown, 3 s of every worker test."""
    for worker in workers:
        if worker.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(worker.pid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    for worker in workers:
        with contextlib.suppress(subprocess.TimeoutExpired):
            worker.process.wait(timeout=max(0.1, deadline - time.monotonic()))
    for worker in workers:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(worker.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            worker.process.wait(timeout=10)


def start_worker(
    directory: Path,
    env: Mapping[str, str],
    *args: str,
    name: str = "worker",
    host: str | None = None,
) -> Worker:
    """Start ``arena worker ARGS`` with ``env`` added to ours; return once it is consuming
    (its log says ``ready``). ``host``: as a host of that name (:func:`spawn_worker`)."""
    worker = spawn_worker(directory, env, *args, name=name, host=host)
    worker.wait_ready()
    return worker


def spawn_worker(
    directory: Path,
    env: Mapping[str, str],
    *args: str,
    name: str = "worker",
    host: str | None = None,
) -> Worker:
    """Start ``arena worker ARGS`` (in ``directory``, with ``env`` added to ours) and return
    at once: :meth:`Worker.wait_ready` waits for it to consume, so that several start
    together. ``host``: in a UTS namespace of its own whose host name is ``host``
    (``unshare --uts``, as root: a user namespace's root could name it, but its bots could
    not then drop to their slots' uids), so that its Celery node name, its leases
    (``host:pid``) and its row in ``workers`` name that host, as on a machine of its own;
    the process group is still the worker's (``unshare`` and ``sh`` exec it), so
    :meth:`Worker.kill` is ``kill -9`` of the whole host."""
    log = directory / f"{name}-{time.monotonic_ns()}.log"
    environ = {**os.environ, **FAST, **env}
    command = [str(ARENA), "worker", *args]
    if host is not None:
        if os.geteuid() != 0:
            pytest.fail(
                f"a worker host named {host!r} runs in a UTS namespace of its own, which needs "
                "root: run this test as root"
            )
        script = 'hostname "$0" && exec "$@"'
        command = ["unshare", "--uts", "--", "sh", "-c", script, host, *command]
    with log.open("wb") as out:
        process = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            env=environ,
            cwd=directory,
            start_new_session=True,
        )
    return Worker(process, log)


# --- a throwaway PostgreSQL server ------------------------------------------------------


def _as_postgres(args: list[str]) -> list[str]:
    """Run ``args`` as the ``postgres`` OS user when we are root (initdb refuses root)."""
    return ["runuser", "-u", "postgres", "--", *args] if os.geteuid() == 0 else args


@contextmanager
def running_postgres() -> Iterator[str]:
    """Start PostgreSQL in a temporary directory; yield its URL without a database name;
    stop it (by its pid) and delete the directory at the end."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if not found and shutil.which("initdb") is None:
        pytest.fail(
            "the PostgreSQL tests need the PostgreSQL server binaries (initdb, pg_ctl): "
            "install them with 'apt-get install postgresql'"
        )
    bindir = Path(found[-1]).parent if found else Path(str(shutil.which("initdb"))).parent
    root = Path(tempfile.mkdtemp(prefix="arena-pg-"))
    if os.geteuid() == 0:
        owner = pwd.getpwnam("postgres")
        os.chown(root, owner.pw_uid, owner.pw_gid)
    data, log, port = root / "data", root / "server.log", free_port()
    initdb = ["-U", "postgres", "-A", "trust", "--no-sync", "--no-instructions", "-E", "UTF8"]
    subprocess.run(
        _as_postgres([str(bindir / "initdb"), "-D", str(data), *initdb]),
        check=True,
        capture_output=True,
    )
    options = f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -c fsync=off"
    # pg_ctl daemonizes the server with its output in a file, so no pipe is left open.
    start = ["start", "-w", "-D", str(data), "-l", str(log), "-o", options]
    subprocess.run(_as_postgres([str(bindir / "pg_ctl"), *start]), check=True, capture_output=True)
    pid = int((data / "postmaster.pid").read_text().split()[0])
    try:
        yield f"postgresql://postgres@127.0.0.1:{port}"
    finally:
        _stop_postgres(pid, data / "postmaster.pid")
        shutil.rmtree(root, ignore_errors=True)


def _stop_postgres(pid: int, pid_file: Path) -> None:
    """Stop the server: a "fast" shutdown (SIGINT), done when it removes its pid file (it
    may linger as a zombie until init reaps it); SIGKILL after 5 s."""
    try:
        os.kill(pid, signal.SIGINT)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + 5
    while pid_file.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    if pid_file.exists():
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
