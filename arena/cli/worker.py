"""``arena worker`` and ``arena workers``: start a Celery worker that plays stored matches,
and list the workers by their heartbeats (docs/workers.md)."""

from __future__ import annotations

import os
import socket
import sys
from datetime import UTC, datetime

import click

from arena.cli.common import (
    UnavailableError,
    UsageError,
    broker_option,
    plural,
    unsandboxed_option,
    url_option,
)
from arena.cli.stored import open_store, when
from arena.cli.supervise import Forked, Program, run_supervised
from arena.match.sandbox import check_sandbox


@click.command("worker", short_help="Run a Celery worker that plays stored matches.")
@click.option(
    "--concurrency",
    type=click.IntRange(min=1),
    default=os.cpu_count() or 1,
    show_default="the number of cores",
    help="Matches played at once (pool processes).",
)
@click.option(
    "--lanes",
    type=click.Choice(["all", "fast", "tables"]),
    default="all",
    show_default=True,
    help="The work this worker takes: all (upload checks first, then interactive work, "
    "tables, then tournaments' matches), fast (upload checks, compares and branches only: "
    "capacity that long matches cannot take), or tables (people playing bots in the "
    "browser: each holds a process for its game, mostly waiting, so give it a high "
    "--concurrency).",
)
@click.option(
    "--sweep/--no-sweep",
    "--beat/--no-beat",
    default=True,
    show_default=True,
    help="Also sweep, from a thread, every ARENA_SWEEP_SECONDS: re-queue dead workers' "
    "matches and send lost tasks again (every worker may; one is enough).",
)
@click.option("--loglevel", default="INFO", show_default=True, help="Celery's log level.")
@url_option
@broker_option
@unsandboxed_option
def worker_command(
    concurrency: int,
    lanes: str,
    sweep: bool,
    loglevel: str,
    url: str | None,
    broker: str | None,
    unsandboxed: bool,
) -> None:
    """Start a Celery worker (``celery -A workers.app worker``, Celery's own command, run in
    a child of this process, which starts it again if it dies) that plays the matches of
    stored tournaments: bots in the sandbox, results to the database. Start as many as you
    like, on as many machines as share the database and the broker."""
    from arena.service.broker import BROKER_ENV, resolve_broker_url, run_celery
    from arena.store.db import resolve_url

    check_settings()
    if not unsandboxed:
        missing = check_sandbox()
        if missing:
            raise UnavailableError(
                "a worker runs uploaded bots and needs the sandbox: "
                + "; ".join(missing)
                + " (on your own machine, for your own bots only: --unsandboxed)"
            )
    with open_store(url):
        pass
    try:
        broker_url = resolve_broker_url(broker, url)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="'--broker'") from None
    # The worker's settings reach workers.app (its configure()) and the pool's bots through
    # the environment, as a `celery worker` of their own would have them.
    os.environ["ARENA_DATABASE_URL"] = resolve_url(url)
    os.environ[BROKER_ENV] = broker_url
    os.environ["ARENA_WORKER_UNSANDBOXED"] = "1" if unsandboxed else "0"
    os.environ["ARENA_WORKER_SWEEP"] = "1" if sweep else "0"
    sys.stdout.flush()
    args = celery_worker_args(concurrency, loglevel, lanes=lanes)
    # Celery's worker runs in a forked child of this process (what this process imported
    # is not imported again), which this process starts again if it exits by itself on a
    # fault (a broker's restart that kombu does not survive: arena.cli.supervise).
    program = Program("the Celery worker", lambda: Forked(lambda: run_celery(args)), "arena worker")
    sys.exit(run_supervised(program))


def check_settings() -> None:
    """Read the workers' ``ARENA_*`` settings (timings, retention: :class:`Config`) before
    a worker starts, so a wrong one stops the command with its sentence.

    Raises:
        UsageError: a setting is wrong (the message names it).
    """
    from arena.service.matches import Config

    try:
        Config.from_env()
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def celery_worker_argv(
    concurrency: int, loglevel: str, *, lanes: str = "all", quiet: bool = False
) -> list[str]:
    """The command line of a Celery worker of ``workers.app`` consuming ``lanes``' queues
    (``all``; ``fast``: upload checks and interactive work only; ``tables``: the tables'
    queue only; ``quiet``: without Celery's start-up banner): ``python -m workers``, which
    runs Celery's worker command alone (:func:`arena.service.broker.run_celery`). Its node
    name is ``arena-PID@HOST`` (``arena-fast-PID@HOST`` for a fast one,
    ``arena-tables-PID@HOST`` for a tables one), PID this process's."""
    args = celery_worker_args(concurrency, loglevel, lanes=lanes)
    return [sys.executable, "-m", "workers", *(["--quiet"] if quiet else []), *args]


def celery_worker_args(concurrency: int, loglevel: str, *, lanes: str = "all") -> list[str]:
    """The arguments of ``celery`` that :func:`celery_worker_argv` runs."""
    from arena.service.broker import ALL_QUEUES, FAST_QUEUES, TABLES_QUEUE

    queues = {"fast": FAST_QUEUES, "tables": (TABLES_QUEUE,)}.get(lanes, ALL_QUEUES)
    prefix = {"fast": "arena-fast", "tables": "arena-tables"}.get(lanes, "arena")
    return [
        "-A",
        "workers.app",
        "worker",
        "--pool",
        "prefork",
        "--concurrency",
        str(concurrency),
        "--queues",
        ",".join(queues),
        "--loglevel",
        loglevel,
        "--hostname",
        f"{prefix}-{os.getpid()}@{socket.gethostname()}",
        "--without-gossip",
        "--without-mingle",
    ]


@click.command("workers", short_help="The workers and their heartbeats.")
@url_option
def workers_command(url: str | None) -> None:
    """Every worker that has played here: alive (online, and its last heartbeat within the
    lease), stopped, or gone (online but silent: it died, and its matches go to others)."""
    from arena.service.matches import Config, list_workers

    now = datetime.now(UTC)
    with open_store(url) as store:
        workers = list_workers(store, config=Config.from_env(), now=now)
    for worker in workers:
        state = "alive" if worker.alive else "stopped" if worker.status == "stopped" else "gone"
        ago = (now - worker.last_seen).total_seconds()
        click.echo(
            f"{worker.name}  {state}  {plural(worker.concurrency, 'process')}  "
            f"last seen {ago:.0f} s ago  up since {when(worker.started)}"
        )
    if not workers:
        click.echo("no worker has run here yet (start one with `arena worker`)")
