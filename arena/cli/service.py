"""The service from the command line: ``arena worker`` and the stored tournaments,
``arena tournament create|run NAME|status|standings|list`` (see arena.cli and
docs/workers.md).

A stored tournament is played by Celery workers (``arena worker``, on this machine or many);
``arena tournament run NAME`` sends its matches to them and follows its progress in the
database, sweeping up after dead workers and lost tasks meanwhile, so a tournament
finishes even with no beat running.
"""

from __future__ import annotations

import dataclasses
import os
import socket
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click
from kombu.exceptions import OperationalError as KombuOperationalError
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from sqlalchemy import func, select

from arena.cli.main import (
    _broker_option,
    _console,
    _memory_option,
    _move_time_option,
    _plural,
    _schedule_options,
    _unsandboxed_option,
    _url_option,
    cli,
    resolve_rules,
    tournament_group,
)
from arena.compete.localrun import Standings
from arena.compete.sprt import SPRT, GroupScores
from arena.compete.tournaments import Match as ScheduledMatch
from arena.compete.tournaments import schedule
from arena.engine.game import new_seed
from arena.engine.rules import Rules
from arena.match.sandbox import check_sandbox
from arena.service.matches import (
    Config,
    MatchSettings,
    create_stored_tournament,
    send_and_mark,
    send_pending,
    sweep,
    tournament_by_name,
)
from arena.store.db import Store, as_utc, connect, resolve_url, schema_revisions
from arena.store.models import GameRecord, Match, RuleSet, Tournament, TournamentEntrant
from arena.store.queue import tournament_progress, void_pending


@contextmanager
def _store(url: str | None) -> Iterator[Store]:
    """The database, checked to have the current schema."""
    store = connect(url)
    try:
        try:
            current, head = schema_revisions(store)
        except Exception as exc:
            where = resolve_url(url).split("@")[-1]
            raise click.ClickException(f"cannot open the database {where}: {exc}") from None
        if current != head:
            where = resolve_url(url).split("@")[-1]
            state = "has no arena schema" if current is None else f"is at schema {current}"
            raise click.ClickException(
                f"the database {where} {state}, this arena needs {head}: run `arena db upgrade`"
            )
        yield store
    finally:
        store.close()


def _find(store: Store, name: str) -> Tournament:
    try:
        return tournament_by_name(store, name)
    except LookupError as exc:
        raise click.ClickException(str(exc)) from None


#: What talking to an unreachable broker raises (kombu wraps the socket's errors).
BROKER_ERRORS = (OSError, KombuOperationalError)


# --- arena worker -------------------------------------------------------------------------


@cli.command("worker", short_help="Run a Celery worker that plays stored matches.")
@click.option(
    "--concurrency",
    type=click.IntRange(min=1),
    default=os.cpu_count() or 1,
    show_default="the number of cores",
    help="Matches played at once (pool processes).",
)
@click.option(
    "--beat/--no-beat",
    default=True,
    show_default=True,
    help="Also send the periodic sweep that re-sends dead workers' matches (one beat per "
    "deployment is enough; more do no harm).",
)
@click.option("--loglevel", default="INFO", show_default=True, help="Celery's log level.")
@_url_option
@_broker_option
@_unsandboxed_option
def worker_command(
    concurrency: int,
    beat: bool,
    loglevel: str,
    url: str | None,
    broker: str | None,
    unsandboxed: bool,
) -> None:
    """Start a Celery worker (``celery -A workers.app worker``) that plays the matches of
    stored tournaments: bots in the sandbox, results to the database. Start as many as you
    like, on as many machines as share the database and the broker."""
    from arena.service.broker import BROKER_ENV, resolve_broker_url

    if not unsandboxed:
        missing = check_sandbox()
        if missing:
            raise click.ClickException(
                "a worker runs uploaded bots and needs the sandbox: "
                + "; ".join(missing)
                + " (on your own machine, for your own bots only: --unsandboxed)"
            )
    with _store(url):
        pass
    env = dict(os.environ)
    env["ARENA_DATABASE_URL"] = resolve_url(url)
    try:
        env[BROKER_ENV] = resolve_broker_url(broker)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="'--broker'") from None
    env["ARENA_WORKER_UNSANDBOXED"] = "1" if unsandboxed else "0"
    argv = [
        sys.executable,
        "-m",
        "celery",
        "-A",
        "workers.app",
        "worker",
        "--pool",
        "prefork",
        "--concurrency",
        str(concurrency),
        "--loglevel",
        loglevel,
        "--hostname",
        f"arena-{os.getpid()}@{socket.gethostname()}",
        "--without-gossip",
        "--without-mingle",
    ]
    if beat:
        schedule = Path(tempfile.gettempdir()) / f"arena-beat-{os.getpid()}"
        argv += ["--beat", "--schedule", str(schedule)]
    sys.stdout.flush()
    os.execve(sys.executable, argv, env)


@cli.command("workers", short_help="The workers and their heartbeats.")
@_url_option
def workers_command(url: str | None) -> None:
    """Every worker that has played here: alive (online, and its last heartbeat within the
    lease), stopped, or gone (online but silent: it died, and its matches go to others)."""
    from arena.service.matches import list_workers

    now = datetime.now(UTC)
    with _store(url) as store:
        workers = list_workers(store, config=Config.from_env(), now=now)
    for worker in workers:
        state = "alive" if worker.alive else "stopped" if worker.status == "stopped" else "gone"
        ago = (now - worker.last_seen).total_seconds()
        click.echo(
            f"{worker.name}  {state}  {_plural(worker.concurrency, 'process')}  "
            f"last seen {ago:.0f} s ago  up since {_when(worker.started)}"
        )
    if not workers:
        click.echo("no worker has run here yet (start one with `arena worker`)")


# --- arena tournament create / run NAME / status / standings / list ---------------------


@tournament_group.command("create", short_help="Store a tournament between stored bots.")
@click.argument("name")
@click.option("--rules", "rules_name", required=True, metavar="NAME_OR_FILE", help="Rule set.")
@click.option(
    "--bots",
    required=True,
    metavar="A,B,...",
    help="Entrants: stored bots, [LABEL=][OWNER/]NAME[@VERSION].",
)
@_schedule_options
@click.option("--run", "run_now", is_flag=True, help="Then run it on the workers at once.")
@_url_option
@_broker_option
@_move_time_option
@_memory_option
def tournament_create(
    name: str,
    rules_name: str,
    bots: str,
    fmt: str,
    pool: str,
    players: int,
    teams: bool,
    games: int,
    seed: int | None,
    run_now: bool,
    url: str | None,
    broker: str | None,
    move_time: float,
    memory: int,
) -> int:
    """Schedule a tournament between stored bots (see `arena bots add`) and store it with
    its matches, ready for the workers (`arena tournament run NAME`)."""
    from arena.cli.tournament import _split

    rules = resolve_rules(rules_name)
    seed = new_seed() if seed is None else seed
    with _store(url) as store:
        try:
            tournament_id, matches = create_stored_tournament(
                store,
                name=name,
                rules=rules,
                format=fmt,
                entrants=_split(bots),
                pool=_split(pool),
                players=players,
                teams=teams,
                games_per_match=games,
                seed=seed,
                settings=MatchSettings(move_seconds=move_time, memory_mb=memory),
            )
        except (LookupError, ValueError) as exc:
            raise click.ClickException(str(exc)) from None
    click.echo(
        f"tournament {name!r} (id {tournament_id}): {rules.name}, {fmt}, "
        f"{len(matches)} matches, {_plural(sum(m.games for m in matches), 'game')}, "
        f"seed {seed}"
    )
    if run_now:
        return run_stored(name, url=url, broker=broker)
    return 0


def run_stored(
    name: str,
    *,
    url: str | None,
    broker: str | None,
    poll_seconds: float = 0.5,
    timeout: float | None = None,
) -> int:
    """``arena tournament run NAME``: send the tournament's pending matches to the workers,
    follow its progress (sweeping meanwhile), print its standings. Exit status 0 when it is
    done, 1 when it timed out (it goes on on the workers)."""
    from arena.service.broker import make_app, send_matches

    config = Config.from_env()
    app = make_app(broker, config)
    with _store(url) as store:
        tournament = _find(store, name)

        def send(ids: Sequence[int]) -> None:
            send_matches(app, ids)

        try:
            sent = send_pending(store, send, tournament_id=tournament.id)
        except BROKER_ERRORS as exc:
            raise click.ClickException(_unreachable(app, exc)) from None
        counts = tournament_progress(store, tournament.id)
        total = sum(counts.values())
        click.echo(
            f"{name}: {total} matches, {counts['done'] + counts['void']} finished, "
            f"{len(sent)} sent to the workers"
        )
        started = time.monotonic()
        last_sweep, warned = started, [False, False]
        with _match_progress(total) as update:
            while True:
                counts = tournament_progress(store, tournament.id)
                finished = counts["done"] + counts["void"]
                update(finished, counts["running"])
                if finished == total:
                    break
                if timeout is not None and time.monotonic() - started > timeout:
                    click.echo(
                        f"{name}: {finished} of {total} matches finished after {timeout:g} s; "
                        "the workers go on (see `arena tournament status`)"
                    )
                    return 1
                if time.monotonic() - last_sweep >= config.sweep_seconds:
                    last_sweep = time.monotonic()
                    _sweep_and_check(store, app, send, config, warned)
                time.sleep(poll_seconds)
        click.echo(f"{name}: done in {time.monotonic() - started:.1f} s")
        _print_standings(store, tournament.id)
    return 0


def _sweep_and_check(
    store: Store,
    app: Any,
    send: Callable[[Sequence[int]], None],
    config: Config,
    warned: list[bool],
) -> None:
    """Sweep as beat does (so a tournament finishes without one), and say once, on stderr,
    when no worker is alive to play anything."""
    from arena.service.broker import queue_length
    from arena.service.matches import list_workers

    try:
        empty = queue_length(app) == 0
        sweep(store, send, queue_empty=empty, config=config)
    except BROKER_ERRORS as exc:  # a restarting broker: the next sweep will do
        _warn_once(warned, 1, _unreachable(app, exc) + "; trying again")
    if not any(w.alive for w in list_workers(store, config=config)):
        _warn_once(
            warned,
            0,
            "no worker is alive to play the matches: start one with `arena worker` "
            "(same database and broker)",
        )


def _warn_once(warned: list[bool], which: int, message: str) -> None:
    if not warned[which]:
        warned[which] = True
        click.echo(f"arena: {message}", err=True)


def _unreachable(app: Any, exc: BaseException) -> str:
    where = app.conf.broker_url
    if str(where).startswith("filesystem"):
        where = f"filesystem://{app.conf.broker_transport_options.get('data_folder_in', '')}"
    return f"cannot reach the broker {where}: {exc}"


@contextmanager
def _match_progress(total: int) -> Iterator[Callable[[int, int], None]]:
    """A live bar of finished matches at a terminal; nothing otherwise."""
    if not sys.stderr.isatty():
        yield lambda finished, running: None
        return
    columns = (
        TextColumn("matches"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[running]} running"),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=_stderr_console(), transient=True) as progress:
        task = progress.add_task("matches", total=total, running=0)
        yield lambda finished, running: progress.update(task, completed=finished, running=running)


def _stderr_console() -> Console:
    return Console(stderr=True)


@tournament_group.command("status", short_help="A stored tournament's progress.")
@click.argument("name")
@_url_option
def tournament_status(name: str, url: str | None) -> None:
    """Where a stored tournament stands: its matches by status, games stored, matches
    played more than once, and the workers holding leases now."""
    with _store(url) as store:
        tournament = _find(store, name)
        counts = tournament_progress(store, tournament.id)
        with store.read() as session:
            rules = session.scalar(select(RuleSet.name).where(RuleSet.id == tournament.rule_set_id))
            entrants = session.scalar(
                select(func.count())
                .select_from(TournamentEntrant)
                .where(TournamentEntrant.tournament_id == tournament.id)
            )
            records = session.scalar(
                select(func.count())
                .select_from(GameRecord)
                .join(Match, Match.id == GameRecord.match_id)
                .where(Match.tournament_id == tournament.id)
            )
            retried = session.scalar(
                select(func.count())
                .select_from(Match)
                .where(Match.tournament_id == tournament.id, Match.attempts > 1)
            )
            leases = session.execute(
                select(Match.lease_owner, func.count())
                .where(Match.tournament_id == tournament.id, Match.status == "running")
                .group_by(Match.lease_owner)
            ).all()
    total = sum(counts.values())
    click.echo(
        f"{tournament.name} (id {tournament.id}): {tournament.status}; {rules}, "
        f"{tournament.format}, {tournament.players} players"
        + (", teams" if tournament.teams else "")
        + f", {_plural(entrants or 0, 'entrant')}, seed {tournament.seed}"
    )
    click.echo(
        f"matches: {total} = {counts['done']} done + {counts['void']} void + "
        f"{counts['running']} running + {counts['pending']} pending; "
        f"{_plural(records or 0, 'game record')}; "
        f"{retried or 0} played more than once"
    )
    for owner, count in leases:
        click.echo(f"  {owner}: {_plural(count, 'match')} running")
    times = [
        ("created", tournament.created),
        ("started", tournament.started),
        ("finished", tournament.finished),
    ]
    click.echo("; ".join(f"{what} {_when(value)}" for what, value in times if value))


def _when(value: datetime) -> str:
    return f"{as_utc(value):%Y-%m-%d %H:%M:%S} UTC"


@tournament_group.command("standings", short_help="A stored tournament's standings.")
@click.argument("name")
@_url_option
def tournament_standings(name: str, url: str | None) -> None:
    """The standings of a stored tournament from the games played so far, with ratings
    (Elo scale, 95% intervals) and, for 2 players, the crosstable."""
    with _store(url) as store:
        tournament = _find(store, name)
        _print_standings(store, tournament.id)


def _print_standings(store: Store, tournament_id: int) -> None:
    from arena.cli.tournament import _crosstable, _standings_table
    from arena.service.results import label_entrant, load_results, tournament_ratings

    with store.read() as session:
        tournament = session.get(Tournament, tournament_id)
        assert tournament is not None
        labels = list(
            session.scalars(
                select(TournamentEntrant.label)
                .where(TournamentEntrant.tournament_id == tournament_id)
                .order_by(TournamentEntrant.label)
            )
        )
    results = load_results(store, tournament_id)
    standings = Standings(label_entrant(label) for label in labels)
    for result in results:
        standings.add(result)
    click.echo(
        f"{tournament.name}: {_plural(standings.matches, 'match')} counted, "
        f"{_plural(standings.games, 'game')}"
    )
    _console().print(_standings_table(standings, tournament_ratings(results)))
    if tournament.players == 2 and not tournament.teams:
        _console().print(_crosstable(standings))
    for match_id, reason in standings.void:
        click.echo(f"void (a harness failure, not counted): match {match_id}: {reason}")


@tournament_group.command("list", short_help="List stored tournaments.")
@_url_option
def tournament_list(url: str | None) -> None:
    """Every stored tournament, newest first: name, status, matches finished."""
    with _store(url) as store, store.read() as session:
        rows = session.execute(
            select(Tournament.name, Tournament.status, Tournament.format, RuleSet.name)
            .join(RuleSet, RuleSet.id == Tournament.rule_set_id)
            .order_by(Tournament.id.desc())
        ).all()
    for name, status, fmt, rules in rows:
        click.echo(f"{name}  {status}  {rules}  {fmt}")
    if not rows:
        click.echo("no tournaments stored")


# --- arena compare --remote -----------------------------------------------------------------

#: Batches of deal groups sent ahead of those finished, so the workers never run dry.
COMPARE_AHEAD = 4


def compare_remote(
    new: str,
    old: str,
    *,
    rules: Rules,
    players: int,
    test: SPRT,
    max_games: int,
    batch: int,
    seed: int,
    url: str | None,
    broker: str | None,
    move_time: float,
    memory: int,
    poll_seconds: float = 0.25,
) -> int:
    """``arena compare --remote``: the duplicate deals of ``arena compare`` as a stored
    tournament (format ``compare``), played by the workers a few batches ahead of the test;
    once the test decides, the matches not yet started are void. Returns the exit status."""
    from arena.cli.tournament import _batch_seed, _deal_groups, _progress_line, _verdict
    from arena.service.broker import make_app, send_matches
    from arena.service.results import load_results

    entrants = [f"new={new}", *(f"old{i}={old}" for i in range(1, players))]
    labels = [entrant.partition("=")[0] for entrant in entrants]
    per_batch = batch * players  # every deal of the batch, once per seat rotation
    batches = -(-max_games // per_batch)
    matches: list[ScheduledMatch] = []
    for number in range(batches):
        tag = f"b{number:05d}"
        for match in schedule(
            "duplicate",
            labels,
            rules=rules,
            players=players,
            games_per_match=batch,
            seed=_batch_seed(seed, number),
        ):
            matches.append(dataclasses.replace(match, id=f"{tag}-{match.id}", deal_group=f"{tag}"))
    config = Config.from_env()
    app = make_app(broker, config)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
    name = f"compare {new} v {old} {rules.name} seed {seed} {stamp}"

    def send(ids: Sequence[int]) -> None:
        send_matches(app, ids)

    with _store(url) as store:
        try:
            tournament_id, _ = create_stored_tournament(
                store,
                name=name,
                rules=rules,
                format="compare",
                entrants=entrants,
                players=players,
                games_per_match=batch,
                seed=seed,
                settings=MatchSettings(move_seconds=move_time, memory_mb=memory),
                matches=matches,
            )
        except (LookupError, ValueError) as exc:
            raise click.ClickException(str(exc)) from None
        with store.read() as session:
            keyed = session.execute(
                select(Match.id, Match.key).where(Match.tournament_id == tournament_id)
            ).all()
        by_batch: dict[str, list[int]] = {}
        for match_id, key in keyed:
            by_batch.setdefault(key.partition("-")[0], []).append(match_id)
        order = sorted(by_batch)
        click.echo(
            f"{rules.name}, {players} players: NEW {new} against OLD {old} on the workers, "
            f"seed {seed}, SPRT elo0={test.elo0:g} elo1={test.elo1:g} "
            f"alpha={test.alpha:g} beta={test.beta:g} (tournament {name!r})"
        )
        sent, played, status, shown = 0, 0, "continue", -1
        samples = GroupScores()
        last_sweep, warned = time.monotonic(), [False, False]
        while True:
            groups = _deal_groups(load_results(store, tournament_id))
            complete = [scores for scores in groups.values() if len(scores) == players]
            finished_batches = len({key[0] for key, s in groups.items() if len(s) == players})
            samples = GroupScores(sum(scores) / len(scores) for scores in complete)
            played = sum(len(scores) for scores in complete)
            if samples.n >= 2:
                status = test.status(samples)
                if played != shown:
                    _progress_line(played, samples, test, final=False)
                    shown = played
            if status != "continue" or played >= max_games or finished_batches == len(order):
                break
            while sent < len(order) and sent - finished_batches < COMPARE_AHEAD:
                ids = by_batch[order[sent]]
                try:
                    send_and_mark(store, send, ids)
                except BROKER_ERRORS as exc:
                    if not sent:  # nothing is on its way: say so and stop
                        raise click.ClickException(_unreachable(app, exc)) from None
                    _warn_once(warned, 1, _unreachable(app, exc) + "; trying again")
                    break
                sent += 1
            if time.monotonic() - last_sweep >= config.sweep_seconds:
                last_sweep = time.monotonic()
                _sweep_and_check(store, app, send, config, warned)
            time.sleep(poll_seconds)
        void_pending(store, tournament_id, f"the test ended: {status}")
    _progress_line(played, samples, test, final=True)
    return _verdict(status, played)
