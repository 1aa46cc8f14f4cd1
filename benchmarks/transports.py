"""Celery transports: task throughput and latency of Redis, filesystem and SQLAlchemy/SQLite.

Usage::

    ./run python benchmarks/transports.py
        [--only redis,filesystem,filesystem-atomic,sqlalchemy] [--tasks N]
        [--latency-samples M] [--polling-interval SECONDS] [--prefetch-multiplier N]

Transports: ``redis``; ``filesystem`` (kombu's own); ``filesystem-atomic`` (the arena's
default, ``arena.service.broker.FilesystemTransport``: messages written then renamed into place,
and claimed by a rename);
``sqlalchemy`` (kombu's, on an SQLite file, with the polling interval set on a
subclass: ``SQLAlchemyTransport`` below).

For each transport, in a temporary directory, starts what the transport needs (Redis: a
daemonized ``redis-server`` on a free port, stopped by its pid) and a real ``celery
worker`` (prefork pool, concurrency 2, in its own session, output to a log file) that
imports this file as the module ``transports``. Then it measures:

- throughput: ``--tasks`` trivial tasks sent at once, from the first send to the last
  task's start, in tasks per second;
- latency: ``--latency-samples`` tasks sent one at a time, from the send to the task's
  start (median and 95th percentile).

Each task appends one line (its tag and start time) to a file opened with ``O_APPEND``;
no result backend is involved. Settings: ``task_acks_late``, prefetch multiplier 1
(``--prefetch-multiplier``), ``task_ignore_result``; the polling transports (filesystem,
SQLAlchemy) poll every ``--polling-interval`` seconds (0.05; kombu's default is 1 s).

A polling worker whose prefetch window is full (2 unacknowledged tasks here) sleeps a
whole polling interval before it looks again, and so does one that found the queue
empty: with trivial tasks the polling transports' throughput measures that sleep more
than the broker, and their latency is about half an interval (each latency sample is
sent after a random pause, so it does not always land just after a poll).

Prints a table, the ratios against Redis measured in the same run, lost or duplicated
tasks, a worker that died (reported, not raised), and what each broker holds after its
worker stopped (files in the filesystem transport's folders, rows in the SQLAlchemy
transport's ``kombu_message`` table, keys in Redis). For the filesystem transports, a
race probe counts the messages a consumer reads before they are written; for the
SQLAlchemy one, whether kombu's own class accepts ``polling_interval`` as a transport
option (kombu 5.7 passes every option to ``create_engine()``, which rejects it).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import multiprocessing
import os
import random
import shutil
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import types
from collections.abc import Iterator
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path
from queue import Empty
from typing import Any

import kombu
import redis
from celery import Celery  # type: ignore[import-untyped, unused-ignore]
from kombu.transport import sqlalchemy as kombu_sqlalchemy

HERE = Path(__file__).resolve().parent
# "filesystem" is kombu's own transport, "filesystem-atomic" arena.service.broker's.
TRANSPORTS = ("redis", "filesystem", "filesystem-atomic", "sqlalchemy")
TASK_NAME = "bench.record"
# The worker (a separate process) builds its Celery app from these variables.
ENV_URL = "TRANSPORTS_BENCH_BROKER_URL"
ENV_TRANSPORT = "TRANSPORTS_BENCH_TRANSPORT"
ENV_OPTIONS = "TRANSPORTS_BENCH_OPTIONS"
ENV_POLLING = "TRANSPORTS_BENCH_POLLING_INTERVAL"
ENV_PREFETCH = "TRANSPORTS_BENCH_PREFETCH_MULTIPLIER"
WORKER_START_SECONDS = 60.0


class SQLAlchemyTransport(kombu_sqlalchemy.Transport):
    """kombu's SQLAlchemy transport with its polling interval set on the class.

    kombu 5.7 hands all of ``broker_transport_options`` to ``sqlalchemy.create_engine()``,
    which raises ``TypeError`` on ``polling_interval``; a class attribute is read instead.
    Select it with Celery's ``broker_transport = "transports:SQLAlchemyTransport"`` and a
    plain SQLAlchemy URL (``sqlite:///...``, no ``sqla+`` prefix: the prefix would pick
    kombu's own class).
    """

    polling_interval = float(os.environ.get(ENV_POLLING, "1.0"))


def make_app(url: str, transport: str | None, options: dict[str, Any], prefetch: int = 1) -> Any:
    """A Celery app on ``url`` with the settings under test (no tasks registered)."""
    app = Celery("transports", broker=url, set_as_current=False)
    app.conf.update(
        broker_transport=transport,
        broker_transport_options=options,
        broker_connection_retry_on_startup=True,
        task_acks_late=True,
        task_ignore_result=True,
        worker_prefetch_multiplier=prefetch,
        worker_hijack_root_logger=False,
    )
    return app


def record(path: str, tag: str) -> None:
    """The task: append ``tag`` and the time it started to ``path`` in one write."""
    started = time.time()
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, f"{tag} {started:.6f}\n".encode())
    finally:
        os.close(fd)


# The worker's app (``celery -A transports``); unused when this file runs as a script.
app = make_app(
    os.environ.get(ENV_URL, "memory://"),
    os.environ.get(ENV_TRANSPORT) or None,
    json.loads(os.environ.get(ENV_OPTIONS, "{}")),
    int(os.environ.get(ENV_PREFETCH, "1")),
)
app.task(name=TASK_NAME)(record)


@dataclass(frozen=True, slots=True)
class Broker:
    """How to reach one transport: URL, Celery's ``broker_transport`` and its options."""

    name: str
    url: str
    transport: str | None
    options: dict[str, Any]
    redis_pid: int | None = None


@dataclass(slots=True)
class Result:
    """The figures measured for one transport."""

    name: str
    throughput: float | None = None
    send_seconds: float | None = None
    median_ms: float | None = None
    p95_ms: float | None = None
    lost: int | None = None
    duplicated: int | None = None
    leftovers: str = ""
    notes: list[str] = field(default_factory=list)


class WorkerDiedError(RuntimeError):
    """The worker exited while the benchmark waited for its tasks."""


class Tail:
    """Reads the lines appended to a file since the last call."""

    def __init__(self, path: Path) -> None:
        """Follow ``path`` (which need not exist yet)."""
        self.path = path
        self.offset = 0
        self.partial = b""
        self.lines: list[str] = []

    def poll(self) -> int:
        """Read what was appended; return the number of complete lines so far."""
        with contextlib.suppress(FileNotFoundError), self.path.open("rb") as file:
            file.seek(self.offset)
            data = file.read()
            self.offset += len(data)
            *complete, self.partial = (self.partial + data).split(b"\n")
            self.lines.extend(line.decode() for line in complete)
        return len(self.lines)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def start_redis(folder: Path) -> Broker:
    """Start a daemonized ``redis-server`` in ``folder``; return its broker.

    Raises:
        RuntimeError: ``redis-server`` is missing or did not answer within 10 s.
    """
    if shutil.which("redis-server") is None:
        raise RuntimeError("redis-server not found: apt-get install redis-server")
    port, pidfile = free_port(), folder / "redis.pid"
    command = ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", ""]
    command += ["--appendonly", "no", "--daemonize", "yes", "--pidfile", str(pidfile)]
    command += ["--logfile", str(folder / "redis.log"), "--dir", str(folder)]
    with (folder / "redis-start.log").open("wb") as log:
        subprocess.run(command, check=True, stdin=subprocess.DEVNULL, stdout=log, stderr=log)
    client = redis.Redis(port=port)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        with contextlib.suppress(redis.ConnectionError, FileNotFoundError, ValueError):
            if client.ping():
                pid = int(pidfile.read_text())
                return Broker("redis", f"redis://127.0.0.1:{port}/0", None, {}, pid)
        time.sleep(0.05)
    raise RuntimeError(f"redis-server on port {port} did not answer; see {folder}/redis.log")


def stop_pid(pid: int, timeout: float = 10.0) -> None:
    """Terminate a daemon (not our child) by its pid and wait until it is gone."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            os.kill(pid, 0)
            time.sleep(0.02)
        os.kill(pid, signal.SIGKILL)


def filesystem_broker(folder: Path, polling: float, atomic: bool) -> Broker:
    """The filesystem transport in ``folder`` (one queue folder for in and out).

    Args:
        folder: where the transport's folders go.
        polling: seconds between polls.
        atomic: ``arena.service.broker.FilesystemTransport`` (what the arena ships: write, then
            rename; claim by rename) rather than kombu's own.
    """
    folders = {name: folder / name for name in ("queue", "processed", "control")}
    for path in folders.values():
        path.mkdir()
    options = {
        "data_folder_in": str(folders["queue"]),
        "data_folder_out": str(folders["queue"]),
        "processed_folder": str(folders["processed"]),
        "control_folder": str(folders["control"]),
        "store_processed": False,
        "polling_interval": polling,
    }
    if atomic:
        return Broker(
            "filesystem-atomic",
            "filesystem://",
            "arena.service.broker:FilesystemTransport",
            options,
        )
    return Broker("filesystem", "filesystem://", None, options)


def sqlalchemy_broker(folder: Path) -> Broker:
    """The SQLAlchemy transport on an SQLite file, through ``SQLAlchemyTransport``."""
    url = f"sqlite:///{folder / 'broker.sqlite'}"
    return Broker("sqlalchemy", url, "transports:SQLAlchemyTransport", {})


def probe_sqlalchemy_option(folder: Path, polling: float) -> str:
    """What kombu's own SQLAlchemy transport does with ``polling_interval`` as an option."""
    url = f"sqla+sqlite:///{folder / 'probe.sqlite'}"
    options = {"polling_interval": polling}
    try:
        with kombu.Connection(url, transport_options=options) as connection:
            connection.SimpleQueue("probe").put({"probe": 1})
    except TypeError as error:
        return f"rejected: TypeError: {str(error).split('.')[0]}"
    return "accepted"


def race_consumer(
    options: dict[str, Any], transport: str | None, count: int, ready: Any, results: Any
) -> None:
    """Take messages off the queue "race" without pausing; report (taken, unreadable)."""
    connection = kombu.Connection("filesystem://", transport=transport, transport_options=options)
    channel: Any = connection.default_channel  # _get is the virtual channel's, not StdChannel's
    taken = unreadable = 0
    deadline = time.monotonic() + 60
    ready.set()
    while taken + unreadable < count and time.monotonic() < deadline:
        try:
            channel._get("race")
            taken += 1
        except Empty:
            pass
        except ValueError:  # json.JSONDecodeError: the file was read before it was written
            unreadable += 1
    results.put((taken, unreadable))
    connection.release()


def probe_filesystem_race(broker: Broker, folder: Path, count: int = 2000) -> str:
    """Put ``count`` messages while another process polls the folder without pausing.

    Returns a line saying how many the consumer read empty or partial: each such read
    would crash a Celery worker and lose the message.
    """
    (folder / "race").mkdir()
    options = dict(broker.options, data_folder_in=str(folder / "race"))
    options["data_folder_out"] = options["data_folder_in"]
    ready = multiprocessing.Event()
    results: multiprocessing.Queue[tuple[int, int]] = multiprocessing.Queue()
    args = (options, broker.transport, count, ready, results)
    consumer = multiprocessing.Process(target=race_consumer, args=args)
    consumer.start()
    try:
        ready.wait(30)
        with kombu.Connection(
            "filesystem://", transport=broker.transport, transport_options=options
        ) as connection:
            channel: Any = connection.default_channel
            for index in range(count):
                channel._put("race", {"body": "x" * 1000, "index": index})
        taken, unreadable = results.get(timeout=90)
    finally:
        consumer.join(timeout=10)
        if consumer.is_alive():
            consumer.kill()
            consumer.join()
    return (
        f"race probe: {count} messages put while another process polls without pause: "
        f"{unreadable} read empty or partial, {taken} read whole"
    )


def start_worker(broker: Broker, folder: Path, args: argparse.Namespace) -> subprocess.Popen[bytes]:
    """Start ``celery -A transports worker`` (prefork, concurrency 2) in its own session."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(HERE), env.get("PYTHONPATH")]))
    env |= {ENV_URL: broker.url, ENV_TRANSPORT: broker.transport or ""}
    env |= {ENV_OPTIONS: json.dumps(broker.options), ENV_POLLING: str(args.polling_interval)}
    env[ENV_PREFETCH] = str(args.prefetch_multiplier)
    # The filesystem transport moves each message it takes into the temporary folder.
    env["TMPDIR"] = str(folder / "tmp")
    (folder / "tmp").mkdir()
    command = [sys.executable, "-m", "celery", "-A", "transports", "worker"]
    command += ["--pool", "prefork", "--concurrency", "2", "--loglevel", "WARNING"]
    command += ["--without-gossip", "--without-mingle", "--without-heartbeat"]
    command += ["--hostname", f"bench-{broker.name}@%h"]
    with (folder / "worker.log").open("wb") as log:
        return subprocess.Popen(
            command,
            cwd=folder,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def stop_worker(worker: subprocess.Popen[bytes]) -> None:
    """Stop the worker: SIGTERM to its main process (warm shutdown), then SIGKILL its group."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(worker.pid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        worker.wait(timeout=15)
    # Whatever is left of its session: pool children of a worker that died, or all of it.
    with contextlib.suppress(ProcessLookupError):
        os.killpg(worker.pid, signal.SIGKILL)
    worker.wait()


def wait_lines(tail: Tail, count: int, worker: subprocess.Popen[bytes], timeout: float) -> float:
    """Wait until ``tail`` has ``count`` lines; return the time.time() it saw them.

    Raises:
        WorkerDiedError: the worker exited.
        RuntimeError: the lines did not come within ``timeout``.
    """
    deadline = time.monotonic() + timeout
    while tail.poll() < count:
        if worker.poll() is not None:
            raise WorkerDiedError(f"the worker exited with status {worker.returncode}")
        if time.monotonic() > deadline:
            raise RuntimeError(f"{tail.poll()} of {count} tasks done after {timeout:.0f} s")
        time.sleep(0.001)
    return time.time()


def measure_throughput(
    app: Any, folder: Path, tasks: int, worker: subprocess.Popen[bytes]
) -> tuple[float, float]:
    """Send ``tasks`` tasks at once; return (tasks per second, seconds spent sending)."""
    path = folder / "throughput.log"
    tail = Tail(path)
    began = time.time()
    for index in range(tasks):
        app.send_task(TASK_NAME, args=(str(path), f"t{index}"))
    sent = time.time()
    wait_lines(tail, tasks, worker, timeout=max(60.0, tasks / 10))
    last_start = max(float(line.split()[1]) for line in tail.lines)
    return tasks / (last_start - began), sent - began


def measure_latency(
    app: Any, folder: Path, samples: int, worker: subprocess.Popen[bytes], pause: float
) -> list[float]:
    """Send ``samples`` tasks one at a time; return each send-to-start delay in ms.

    Before each send, pauses a random time up to ``pause`` (a polling transport's
    interval): a polling worker sleeps a whole interval right after each task, so sends
    timed off the previous task's end would all wait nearly the full interval instead
    of half of it on average.
    """
    path = folder / "latency.log"
    tail = Tail(path)
    pauses = random.Random(1)
    delays = []
    for index in range(samples):
        time.sleep(pauses.uniform(0, pause))
        sent = time.time()
        app.send_task(TASK_NAME, args=(str(path), f"l{index}"))
        wait_lines(tail, index + 1, worker, timeout=30)
        delays.append((float(tail.lines[index].split()[1]) - sent) * 1000)
    return delays


def count_deliveries(path: Path, tasks: int) -> tuple[int, int]:
    """Return (lost, duplicated) tasks of the throughput run from its record file."""
    tags = [line.split()[0] for line in path.read_text().splitlines()]
    distinct = set(tags)
    return tasks - len(distinct), len(tags) - len(distinct)


def leftovers(broker: Broker, folder: Path) -> str:
    """What the broker still holds once its worker has stopped."""
    if broker.name.startswith("filesystem"):
        names = ("queue", "processed", "tmp")
        counts = {name: sorted(os.listdir(folder / name)) for name in names}
        return "files: " + ", ".join(f"{name}/ {files}" for name, files in counts.items())
    if broker.name == "sqlalchemy":
        with contextlib.closing(sqlite3.connect(folder / "broker.sqlite")) as db:
            rows, visible = db.execute(
                "SELECT count(*), coalesce(sum(visible), 0) FROM kombu_message"
            ).fetchone()
        size = (folder / "broker.sqlite").stat().st_size
        return f"kombu_message rows: {rows} ({visible} visible), file {size / 1024:.0f} KiB"
    client = redis.Redis.from_url(broker.url)
    return f"redis keys: {client.dbsize()}, unacked: {client.hlen('unacked')}"


def worker_ready(app: Any, folder: Path, worker: subprocess.Popen[bytes]) -> float:
    """Round-trip one task through the fresh worker; return seconds from its start."""
    began = time.monotonic()
    path = folder / "ready.log"
    app.send_task(TASK_NAME, args=(str(path), "ready"))
    wait_lines(Tail(path), 1, worker, timeout=WORKER_START_SECONDS)
    return time.monotonic() - began


@contextlib.contextmanager
def running(
    broker: Broker, folder: Path, args: argparse.Namespace
) -> Iterator[subprocess.Popen[bytes]]:
    """A worker on ``broker`` for the duration of the block, stopped even on error."""
    worker = start_worker(broker, folder, args)
    try:
        yield worker
    except WorkerDiedError:
        raise
    except BaseException:
        log = (folder / "worker.log").read_text(errors="replace")
        print(f"--- worker log ({broker.name}), last lines:\n{log[-3000:]}", file=sys.stderr)
        raise
    finally:
        stop_worker(worker)


def benchmark(broker: Broker, folder: Path, args: argparse.Namespace) -> Result:
    """Measure one transport with a fresh worker; a worker that dies is reported, not raised."""
    app = make_app(broker.url, broker.transport, broker.options, args.prefetch_multiplier)
    result, load = Result(broker.name), os.getloadavg()[0]
    try:
        with running(broker, folder, args) as worker:
            startup = worker_ready(app, folder, worker)
            result.notes.append(f"worker up and first task done in {startup:.1f} s")
            result.throughput, result.send_seconds = measure_throughput(
                app, folder, args.tasks, worker
            )
            pause = 0.0 if broker.name == "redis" else args.polling_interval
            delays = measure_latency(app, folder, args.latency_samples, worker, pause)
        result.median_ms = statistics.median(delays)
        result.p95_ms = statistics.quantiles(delays, n=20)[18] if len(delays) > 1 else delays[0]
    except WorkerDiedError as error:
        result.notes.append(f"WORKER DIED: {error}; {last_error(folder / 'worker.log')}")
    finally:
        app.close()
    if (folder / "throughput.log").exists():
        result.lost, result.duplicated = count_deliveries(folder / "throughput.log", args.tasks)
    result.leftovers = leftovers(broker, folder)
    result.notes.append(f"load average (1 min) before: {load:.2f}, after: {os.getloadavg()[0]:.2f}")
    result.notes.extend(log_errors(folder / "worker.log"))
    return result


def last_error(path: Path) -> str:
    """The last line of the last traceback in the worker's log."""
    lines = path.read_text(errors="replace").splitlines()
    errors = [line for line in lines if line and not line[0].isspace() and "Error" in line]
    return errors[-1] if errors else "no error in its log"


def log_errors(path: Path) -> list[str]:
    """A count of the error lines in the worker's log, and the first few of them."""
    log = path.read_text(errors="replace").splitlines()
    errors = [line for line in log if "ERROR" in line or "Error" in line]
    return [f"worker log: {len(log)} lines, {len(errors)} errors"] + [
        f"  {line[:300]}" for line in errors[:5]
    ]


def run_one(name: str, root: Path, args: argparse.Namespace) -> Result:
    """Set up transport ``name`` in its own folder under ``root`` and measure it."""
    folder = root / name
    folder.mkdir()
    if name.startswith("filesystem"):
        broker = filesystem_broker(folder, args.polling_interval, name == "filesystem-atomic")
        result = benchmark(broker, folder, args)
        result.notes.append(probe_filesystem_race(broker, folder))
        return result
    if name == "sqlalchemy":
        result = benchmark(sqlalchemy_broker(folder), folder, args)
        option = probe_sqlalchemy_option(folder, args.polling_interval)
        result.notes.append(f"polling_interval in broker_transport_options: {option}")
        return result
    broker = start_redis(folder)
    try:
        return benchmark(broker, folder, args)
    finally:
        assert broker.redis_pid is not None
        stop_pid(broker.redis_pid)


def cell(value: float | None, spec: str) -> str:
    """``value`` formatted with ``spec``, or "-" when it was not measured."""
    return "-" if value is None else format(value, spec)


def ratio(value: float | None, base: float | None) -> str:
    """``value / base`` as "0.42x", or "-" when either was not measured."""
    return "-" if value is None or not base else f"{value / base:.2f}x"


def report(results: list[Result], args: argparse.Namespace) -> None:
    """Print the table, the ratios against Redis and each transport's notes."""
    print(f"\n{'transport':<18} {'tasks/s':>8} {'send s':>7} {'median ms':>10} {'p95 ms':>8}")
    for result in results:
        print(
            f"{result.name:<18} {cell(result.throughput, '8.0f'):>8} "
            f"{cell(result.send_seconds, '7.2f'):>7} {cell(result.median_ms, '10.1f'):>10} "
            f"{cell(result.p95_ms, '8.1f'):>8}"
        )
    base = next((result for result in results if result.name == "redis"), None)
    for result in results if base is not None else []:
        if result is not base:
            assert base is not None
            print(
                f"{result.name}/redis: throughput {ratio(result.throughput, base.throughput)}, "
                f"latency median {ratio(result.median_ms, base.median_ms)}, "
                f"p95 {ratio(result.p95_ms, base.p95_ms)}"
            )
    for result in results:
        print(
            f"\n{result.name}: lost {cell(result.lost, 'd')}, duplicated "
            f"{cell(result.duplicated, 'd')} of {args.tasks}"
        )
        print(f"  after the worker stopped: {result.leftovers}")
        for note in result.notes:
            print(f"  {note}")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--only", default=",".join(TRANSPORTS), help="transports to measure")
    parser.add_argument("--tasks", type=int, default=2000, help="tasks for throughput (2000)")
    parser.add_argument(
        "--latency-samples", type=int, default=200, help="tasks sent one at a time (200)"
    )
    parser.add_argument(
        "--polling-interval", type=float, default=0.05, help="polling transports (0.05 s)"
    )
    parser.add_argument(
        "--prefetch-multiplier", type=int, default=1, help="worker_prefetch_multiplier (1)"
    )
    args = parser.parse_args(argv)
    args.names = [name.strip() for name in args.only.split(",") if name.strip()]
    unknown = sorted(set(args.names) - set(TRANSPORTS))
    if unknown:
        parser.error(f"unknown transport(s) {', '.join(unknown)}: choose from {TRANSPORTS}")
    return args


def interrupt(signum: int, frame: types.FrameType | None) -> None:
    """On SIGTERM, unwind like Ctrl-C so that workers and servers are stopped."""
    raise KeyboardInterrupt(f"signal {signum}")


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; return the exit status."""
    args = parse_args(argv)
    signal.signal(signal.SIGTERM, interrupt)
    load = " ".join(f"{value:.2f}" for value in os.getloadavg())
    print(
        f"celery {version('celery')}, kombu {version('kombu')}, "
        f"SQLAlchemy {version('sqlalchemy')}, redis-py {version('redis')}; "
        f"{os.cpu_count()} CPUs, load average {load}"
    )
    print(
        f"{args.tasks} tasks for throughput, {args.latency_samples} latency samples, "
        f"polling interval {args.polling_interval} s; prefork worker, concurrency 2, "
        f"prefetch multiplier {args.prefetch_multiplier}"
    )
    with tempfile.TemporaryDirectory(prefix="transports-") as root:
        results = [run_one(name, Path(root), args) for name in args.names]
    report(results, args)
    load = " ".join(f"{value:.2f}" for value in os.getloadavg())
    print(f"\nload average at the end: {load}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
