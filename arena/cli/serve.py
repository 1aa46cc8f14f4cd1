"""``arena serve``: the whole service on one machine, in one command (docs/web.md).

It migrates the database, starts two Celery workers -- one that plays everything (sandboxed,
one process per core) and a fast one of a single process that takes only upload checks and
interactive work (compares, branches), so long matches never hold those up -- and the web
app under gunicorn, each in a session of its own, and prints the URL. It supervises them: a
program that dies is started again (a line names it and its exit status), and the site
stays up. Only Ctrl-C (or SIGTERM) stops everything they started before it returns; and
however ``arena serve`` itself dies (SIGKILL, an OOM kill), its programs die with it (a
parent-death signal, set in each child before it runs the program: arena.cli.supervise;
the worker's pool processes set their own, the bots' sandbox dies with them, gunicorn's
workers leave when their arbiter does). ``--demo`` first seeds an empty database with the
reference bots, each checked as an upload is, and two round robins between them that the
worker starts at once:
a short opening, whose results fill the leaderboard within seconds (live ratings), then the
long one to watch.

The web app is a separate program (``web:create_app()`` under gunicorn), started by name;
the workers are forked children of this process that run Celery's worker command on
``workers.app``, named too: the CLI imports neither.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import signal
import socket
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from pathlib import Path
from types import FrameType

import click

from arena.cli.common import UnavailableError, broker_option, unsandboxed_option, url_option
from arena.cli.supervise import Child, Forked, Program, start_program, stop_all
from arena.cli.worker import celery_worker_args, check_settings
from arena.match.sandbox import check_sandbox

# (The database and the service, SQLAlchemy and Celery, are imported as the command runs, not
# by its --help: tests/cli/test_lazy.py.)

__all__ = [
    "DEMO_BOTS",
    "DEMO_TOURNAMENT",
    "WEB_THREADS",
    "instance_folder",
    "serve_command",
    "web_argv",
]

#: The reference bots (``bots/``) ``--demo`` stores, and its tournaments: a short opening,
#: played first, then the long one.
DEMO_BOTS = ("random", "greedy", "fives", "counter")
DEMO_TOURNAMENT = "demo"
#: The demo's rule set: its tournaments are played under it, and each reference bot is
#: checked in the sandbox under it only (the sandbox is what a machine may lack; the bots'
#: play under every preset is the test suite's: tests/match/test_bots.py). Checked under
#: all seven, four bots' 28 sandboxed starts took the first start 40 s on a busy machine.
DEMO_RULES = "draw"
DEMO_OPENING = "demo-opening"
#: Games each pair plays in the opening: 12 matches of 10 games, seconds of play, so the
#: leaderboard fills as soon as the worker starts (the demo's first matches take minutes:
#: 2,000 games each). Measured: the first non-empty leaderboard 260 s after the start
#: without it, on a busy 2-core machine (benchmarks/live_ratings.py --demo).
DEMO_OPENING_GAMES = 20
#: Games each pair of reference bots plays in the demo: about two minutes of play on two
#: cores (24,000 games at about 200 a second), long enough to watch it live.
DEMO_GAMES = 4000
#: Games a match of the demo at most (its pairs' 2,000 games a seating in legs of this many):
#: a worker changes tournament only between matches, so a competition's ladder or a new
#: upload's placement sent while the demo plays waits for one of these, seconds, rather than
#: for a match of 2,000 games (docs/workers.md, "Fair shares").
DEMO_MATCH_GAMES = 100
#: Seconds the web app has to answer its health check after it starts.
START_SECONDS = 60.0
#: Seconds each program has to stop after SIGTERM before it is killed.
STOP_SECONDS = 10.0


@click.command("serve", short_help="Serve the dashboard, with a worker, on this machine.")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=8000,
    show_default=True,
    help="Port to listen on (0: a free one).",
)
@click.option(
    "--demo",
    is_flag=True,
    help="Seed an empty database with the reference bots and a running tournament.",
)
@click.option(
    "--demo-games",
    type=click.IntRange(1, 10000),
    default=DEMO_GAMES,
    show_default=True,
    help="Games a pair plays in the demo tournament.",
)
@click.option(
    "--concurrency",
    type=click.IntRange(min=1),
    default=os.cpu_count() or 1,
    show_default="the number of cores",
    help="Matches the worker plays at once.",
)
@url_option
@broker_option
@unsandboxed_option
def serve_command(
    host: str,
    port: int,
    demo: bool,
    demo_games: int,
    concurrency: int,
    url: str | None,
    broker: str | None,
    unsandboxed: bool,
) -> int:
    """Serve the dashboard at http://HOST:PORT/ with a worker that plays the stored
    tournaments, on the database at --url (SQLite by default) and the broker at --broker (a
    directory beside it by default: nothing to install). Ctrl-C stops everything."""
    from arena.service.broker import BROKER_ENV, resolve_broker_url
    from arena.service.database import upgrade_database
    from arena.store.db import resolve_url

    check_settings()
    if not unsandboxed:
        missing = check_sandbox()
        if missing:
            raise UnavailableError(
                "the worker runs uploaded bots and needs the sandbox: "
                + "; ".join(missing)
                + " (on your own machine, for your own bots only: --unsandboxed)"
            )
    url = resolve_url(url)
    try:
        broker_url = resolve_broker_url(broker, url)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="'--broker'") from None
    # the port first: a server that cannot listen neither creates nor migrates a database
    port = _check_port(host, port)
    # DatabaseError: one line naming the fix (arena.cli.main)
    unconverted = upgrade_database(url, convert=False).unconverted
    if unconverted:
        click.echo(
            f"arena serve: {unconverted:,} game records are stored as JSON (from before the "
            "compact records); `arena db upgrade` converts them while the server serves",
            err=True,
        )
    seeded = _seed_demo(url, demo_games, sandboxed=not unsandboxed) if demo else None
    env = dict(os.environ)
    env.update(
        {
            "ARENA_DATABASE_URL": url,
            BROKER_ENV: broker_url,
            "ARENA_WORKER_UNSANDBOXED": "1" if unsandboxed else "0",
        }
    )
    env.setdefault("ARENA_INSTANCE_PATH", str(instance_folder(url)))
    programs: dict[str, Program] = {}
    stopping: list[int] = []

    def stop_on(signum: int, frame: FrameType | None) -> None:
        stopping.append(signum)

    previous = signal.signal(signal.SIGTERM, stop_on)
    try:
        wanted: dict[str, Callable[[], Child]] = {
            "the worker": _worker(concurrency, "all", env),
            "the fast worker": _worker(1, "fast", env),
            "the web server": functools.partial(start_program, web_argv(host, port), env),
        }
        for name, start in wanted.items():
            programs[name] = Program(name, start, "arena serve")
        address = f"http://{'127.0.0.1' if host in ('0.0.0.0', '') else host}:{port}/"
        _wait_until_healthy(address, list(programs.values()))
        if seeded is not None:
            _send_demo(url, broker_url, seeded)
        click.echo(f"Domino Arena is serving at {address} (Ctrl-C stops it)")
        while not stopping:
            for program in programs.values():
                program.restart_if_dead()
            time.sleep(0.3)
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
        # A second Ctrl-C (or SIGTERM) must not cut the stop short: that would leave the
        # worker and the web server running without anyone to stop them.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        if programs:
            click.echo(f"stopping the worker and the web server (at most {STOP_SECONDS:g} s)")
        stop_all([p.process for p in programs.values()], STOP_SECONDS)
    click.echo("stopped")
    return 0


def instance_folder(url: str) -> Path:
    """Where the web app keeps what it generates (its session key, when
    ``ARENA_SECRET_KEY`` is not set): ``arena-instance/`` beside an SQLite database, else
    ``$XDG_DATA_HOME/domino-arena`` (``~/.local/share/domino-arena``), never the folder the
    code was installed from."""
    from arena.store.db import sqlite_path

    database = sqlite_path(url)
    if database is not None:
        return database.resolve().parent / "arena-instance"
    data = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data) / "domino-arena"


def _check_port(host: str, port: int) -> int:
    """``port`` if it is free on ``host`` (a free one for 0), else a one-line error."""
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            raise UnavailableError(
                f"cannot listen on {host}:{port}: {exc.strerror or exc} (choose another --port)"
            ) from None
        free: int = probe.getsockname()[1]
        return free


#: The web server's threads a process: a request waiting in the hashing line holds one
#: (web.limits.HASH_QUEUE, 12 a process), so more than that, for the pages meanwhile.
WEB_THREADS = 16


def web_argv(host: str, port: int) -> list[str]:
    """The web server's command: gunicorn, 2 processes of :data:`WEB_THREADS` threads, the
    app loaded once before they fork (``--preload``: each process loading it was 1.4 s of
    CPU, and the app opens nothing before a request: web.app.create_app)."""
    # gthread: pages poll while the tab is visible; a thread per request in flight.
    return [
        sys.executable,
        "-m",
        "gunicorn",
        "--bind",
        f"{host}:{port}",
        "--workers",
        "2",
        "--worker-class",
        "gthread",
        "--threads",
        str(WEB_THREADS),
        "--preload",
        "--log-level",
        "warning",
        "web:create_app()",
    ]


def _worker(concurrency: int, lanes: str, env: dict[str, str]) -> Callable[[], Child]:
    """How to start a Celery worker of ``lanes``: Celery's worker command run in a forked
    child of this process, in a session of its own, with ``env`` (this process has
    imported most of what a worker imports: a worker to ready and 3 s idle was 0.7 rather
    than 1.9 CPU s of ``python -m workers``, load 13; ``ps`` shows it under serve's command
    line)."""
    args = ["--quiet", *celery_worker_args(concurrency, "WARNING", lanes=lanes)]

    def run() -> None:
        from arena.service.broker import run_celery

        os.environ.update(env)
        run_celery(args)

    return lambda: Forked(run, new_session=True)


def _wait_until_healthy(address: str, programs: Sequence[Program]) -> None:
    deadline = time.monotonic() + START_SECONDS
    while True:
        for program in programs:
            if program.process.poll() is not None:
                raise UnavailableError(
                    f"{program.name} did not start (exit status {program.process.returncode})"
                )
        try:
            with urllib.request.urlopen(address + "healthz", timeout=2) as reply:
                if reply.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        if time.monotonic() > deadline:
            raise UnavailableError(f"the web server did not answer at {address} in time")
        time.sleep(0.2)


# --- the demo ----------------------------------------------------------------------------


def _reference_bots() -> Path:
    spec = importlib.util.find_spec("bots")
    if spec is None or spec.origin is None:
        raise UnavailableError("the reference bots (the bots package) are not installed")
    return Path(spec.origin).parent


def _seed_demo(url: str, games: int, *, sandboxed: bool) -> list[int] | None:
    """Store the reference bots and the demo's tournaments (the opening, unless the demo is
    no longer than it, then the demo) if the database holds no tournament; return their ids
    in that order (None: the database was not empty, nothing seeded)."""
    from arena.engine.game import new_seed
    from arena.engine.rules import PRESETS
    from arena.match.lineup import check_bot
    from arena.match.referee import TimeControl
    from arena.service.board_views import REFERENCE_OWNER
    from arena.service.bots import add_checked_bot
    from arena.service.matches import create_stored_tournament
    from arena.service.permissions import OPERATOR
    from arena.service.uploads import check_report_json
    from arena.store.db import connect
    from arena.store.tournaments import count_tournaments

    store = connect(url)
    try:
        if count_tournaments(store):
            click.echo("--demo: the database already holds tournaments; nothing seeded")
            return None
        directory = _reference_bots()
        for name in DEMO_BOTS:
            path = directory / f"{name}.py"
            click.echo(f"--demo: checking the reference bot {name} under {DEMO_RULES} ...")
            reports = check_bot(
                str(path), sandboxed=sandboxed, time_control=TimeControl(), presets=[DEMO_RULES]
            )
            report = list(reports)[-1][1]
            if not report.ok:
                raise UnavailableError(f"the reference bot {name} failed its check")
            add_checked_bot(
                store,
                OPERATOR,
                REFERENCE_OWNER,
                name,
                path.read_text(encoding="utf-8"),
                check_report_json(report, sandboxed),
            )
        ids = []
        # no opening before a demo no longer than it: its own first matches are as short
        plan = [(DEMO_OPENING, DEMO_OPENING_GAMES)] if games > DEMO_OPENING_GAMES else []
        for name, per_pair in [*plan, (DEMO_TOURNAMENT, games)]:
            tournament_id, matches = create_stored_tournament(
                store,
                name=name,
                rules=PRESETS[DEMO_RULES],
                format="round-robin",
                entrants=[f"{REFERENCE_OWNER}/{bot}" for bot in DEMO_BOTS],
                games_per_match=per_pair,
                seed=new_seed(),
                match_games=DEMO_MATCH_GAMES,
            )
            ids.append(tournament_id)
            click.echo(
                f"--demo: stored the tournament {name!r} "
                f"(a round robin under {DEMO_RULES}, {per_pair} games a pair, "
                f"{len(matches)} matches)"
            )
        return ids
    finally:
        store.close()


def _send_demo(url: str, broker_url: str, tournament_ids: list[int]) -> None:
    from arena.service.broker import configure
    from arena.service.dispatch import dispatch_matches
    from arena.service.matches import Config
    from arena.store.db import connect

    configure(broker_url, Config.from_env(), url)
    store = connect(url)
    try:
        for tournament_id in tournament_ids:  # the workers play the first sent first
            dispatch_matches(store, tournament_id)
    finally:
        store.close()
