"""Stored tournaments from the command line: ``arena tournament create|run NAME|status|
standings|list|export`` (docs/workers.md).

The command line acts as the operator (:data:`arena.service.permissions.OPERATOR`, an
admin owning nothing): ``arena tournament create`` stores through the same service action
as the web's form and the API (:func:`arena.service.tournaments.create_tournament`),
without the bounds the web sets for accounts.

A stored tournament is played by Celery workers (``arena worker``, on this machine or many);
``arena tournament run NAME`` sends its matches to them and follows its progress in the
database, sweeping up after dead workers and lost tasks meanwhile, so a tournament
finishes even with no beat running.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import TYPE_CHECKING

import click

from arena.cli.common import (
    FAILED,
    UnavailableError,
    UsageError,
    broker_option,
    console,
    memory_option,
    move_time_option,
    open_out,
    plural,
    resolve_rules,
    schedule_options,
    split,
    stderr_console,
    url_option,
    warn_once,
)
from arena.engine.game import new_seed

# The database, the broker and the service (SQLAlchemy, Celery, numpy) are imported as a
# command runs, never by its --help: the commands start at once (tests/cli/test_lazy.py).
if TYPE_CHECKING:
    from arena.service.matches import Config
    from arena.store.db import Store
    from arena.store.models import Tournament


@contextmanager
def open_store(url: str | None) -> Iterator[Store]:
    """The database, checked to exist at the current schema (a DatabaseError says the fix)."""
    from arena.store import db

    store = db.open_store(url)
    try:
        yield store
    finally:
        store.close()


def find_tournament(store: Store, name: str) -> Tournament:
    from arena.service.matches import tournament_by_name

    try:
        return tournament_by_name(store, name)
    except LookupError as exc:
        raise UsageError(str(exc)) from None


def when(value: datetime) -> str:
    from arena.store.db import as_utc

    return f"{as_utc(value):%Y-%m-%d %H:%M:%S} UTC"


@click.command("create", short_help="Store a tournament between stored bots.")
@click.argument("name")
@click.option("--rules", "rules_name", required=True, metavar="NAME_OR_FILE", help="Rule set.")
@click.option(
    "--bots",
    required=True,
    metavar="A,B,...",
    help="Entrants: stored bots, [LABEL=][OWNER/]NAME[@VERSION].",
)
@schedule_options
@click.option("--run", "run_now", is_flag=True, help="Then run it on the workers at once.")
@url_option
@broker_option
@move_time_option
@memory_option
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
    from arena.service.matches import MatchSettings
    from arena.service.permissions import OPERATOR
    from arena.service.tournaments import NewTournament, create_tournament

    rules = resolve_rules(rules_name)
    seed = new_seed() if seed is None else seed
    new = NewTournament(
        name=name,
        rules=rules,
        format=fmt,
        entrants=tuple(split(bots)),
        pool=tuple(split(pool)),
        players=players,
        teams=teams,
        games_per_match=games,
        seed=seed,
        settings=MatchSettings(move_seconds=move_time, memory_mb=memory),
    )
    with open_store(url) as store:
        try:
            tournament_id, matches = create_tournament(store, OPERATOR, new)
        except (LookupError, ValueError) as exc:
            raise UsageError(str(exc)) from None
    click.echo(
        f"tournament {name!r} (id {tournament_id}): {rules.name}, {fmt}, "
        f"{len(matches)} matches, {plural(sum(m.games for m in matches), 'game')}, "
        f"seed {seed}"
    )
    if run_now:
        return run_stored(name, url=url, broker=broker)
    return 0


#: Seconds between progress lines when stdout is not a terminal.
PROGRESS_SECONDS = 5.0


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
    done, 1 when it timed out or no worker was alive for ``ARENA_NO_WORKER_SECONDS`` (120 s
    by default; it goes on on the workers, or when one starts)."""
    from arena.service.broker import configure
    from arena.service.dispatch import BROKER_ERRORS, send_pending
    from arena.service.matches import Config
    from arena.store.queue import tournament_progress

    config = Config.from_env()
    configure(broker, config, url)
    with open_store(url) as store:
        tournament = find_tournament(store, name)
        try:
            sent = send_pending(store, tournament_id=tournament.id)
        except BROKER_ERRORS as exc:
            raise UnavailableError(unreachable(exc)) from None
        counts = tournament_progress(store, tournament.id)
        total = sum(counts.values())
        click.echo(
            f"{name}: {total} matches, {counts['done'] + counts['void']} finished, "
            f"{len(sent)} sent to the workers"
        )
        started = time.monotonic()
        last_sweep, warned, worker_seen = started, [False, False], started
        with _match_progress(name, total) as update:
            while True:
                counts = tournament_progress(store, tournament.id)
                finished = counts["done"] + counts["void"]
                update(finished, counts["running"])
                if finished == total:
                    break
                now = time.monotonic()
                if timeout is not None and now - started > timeout:
                    click.echo(
                        f"{name}: {finished} of {total} matches finished after {timeout:g} s; "
                        "the workers go on (see `arena tournament status`)"
                    )
                    return FAILED
                if now - worker_seen > config.no_worker_seconds:
                    click.echo(
                        f"{name}: no worker has been alive for {config.no_worker_seconds:g} s, "
                        f"{finished} of {total} matches finished: start one with "
                        f"`arena worker`, then `arena tournament run {name}` again"
                    )
                    return FAILED
                if now - last_sweep >= config.sweep_seconds:
                    last_sweep = now
                    if sweep_and_check(store, config, warned):
                        worker_seen = time.monotonic()
                time.sleep(poll_seconds)
        click.echo(f"{name}: done in {time.monotonic() - started:.1f} s")
        print_standings(store, tournament.id)
    return 0


def sweep_and_check(store: Store, config: Config, warned: list[bool]) -> bool:
    """Sweep as beat does (so a tournament finishes without one), and say once, on stderr,
    when no worker is alive to play anything; return whether one is."""
    from arena.service.dispatch import BROKER_ERRORS, sweep_matches
    from arena.service.matches import list_workers

    try:
        sweep_matches(store, resend_grace_seconds=config.resend_grace_seconds)
    except BROKER_ERRORS as exc:  # a restarting broker: the next sweep will do
        warn_once(warned, 1, unreachable(exc) + "; trying again")
    if any(w.alive for w in list_workers(store, config=config)):
        return True
    warn_once(
        warned,
        0,
        "no worker is alive to play the matches: start one with `arena worker` "
        "(same database and broker)",
    )
    return False


def unreachable(exc: BaseException) -> str:
    """The sentence for a broker that cannot be reached (the process's, configured)."""
    from arena.service.broker import location

    return f"cannot reach the broker {location()}: {exc}"


@contextmanager
def _match_progress(name: str, total: int) -> Iterator[Callable[[int, int], None]]:
    """A live bar of finished matches at a terminal; else (a log, CI) a line on stdout
    every :data:`PROGRESS_SECONDS` while the count changes."""
    if not sys.stderr.isatty():
        last = [time.monotonic(), -1]

        def log(finished: int, running: int) -> None:
            now = time.monotonic()
            if now - last[0] >= PROGRESS_SECONDS and finished != last[1]:
                last[:] = [now, finished]
                click.echo(f"{name}: {finished} of {total} matches finished, {running} running")

        yield log
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    columns = (
        TextColumn("matches"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[running]} running"),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=stderr_console(), transient=True) as progress:
        task = progress.add_task("matches", total=total, running=0)
        yield lambda finished, running: progress.update(task, completed=finished, running=running)


@click.command("status", short_help="A stored tournament's progress.")
@click.argument("name")
@url_option
def tournament_status(name: str, url: str | None) -> None:
    """Where a stored tournament stands: its matches by status, games stored, matches
    played more than once, and the workers holding leases now."""
    from arena.store.queue import tournament_progress
    from arena.store.tournaments import tournament_counts

    with open_store(url) as store:
        tournament = find_tournament(store, name)
        counts = tournament_progress(store, tournament.id)
        summary = tournament_counts(store, tournament)
    total = sum(counts.values())
    click.echo(
        f"{tournament.name} (id {tournament.id}): {tournament.status}; {summary.rules}, "
        f"{tournament.format}, {tournament.players} players"
        + (", teams" if tournament.teams else "")
        + f", {plural(summary.entrants, 'entrant')}, seed {tournament.seed}"
    )
    click.echo(
        f"matches: {total} = {counts['done']} done + {counts['void']} void + "
        f"{counts['running']} running + {counts['pending']} pending; "
        f"{plural(summary.records, 'game record')}; "
        f"{summary.retried} played more than once"
    )
    for owner, count in summary.leases:
        click.echo(f"  {owner}: {plural(count, 'match')} running")
    times = [
        ("created", tournament.created),
        ("started", tournament.started),
        ("finished", tournament.finished),
    ]
    click.echo("; ".join(f"{what} {when(value)}" for what, value in times if value))


@click.command("standings", short_help="A stored tournament's standings.")
@click.argument("name")
@url_option
def tournament_standings(name: str, url: str | None) -> None:
    """The standings of a stored tournament from the games played so far, with ratings
    (Elo scale, 95% intervals) and, for 2 players, the crosstable."""
    with open_store(url) as store:
        tournament = find_tournament(store, name)
        print_standings(store, tournament.id)


def print_standings(store: Store, tournament_id: int) -> None:
    from arena.cli.tables import crosstable, standings_table
    from arena.compete.localrun import Standings, tournament_ratings
    from arena.service.results import load_results
    from arena.store.tournaments import entrant_labels, get_tournament

    tournament = get_tournament(store, tournament_id)
    assert tournament is not None
    labels = entrant_labels(store, tournament_id)
    results = load_results(store, tournament_id)
    standings = Standings(labels)
    for result in results:
        standings.add(result)
    click.echo(
        f"{tournament.name}: {plural(standings.matches, 'match')} counted, "
        f"{plural(standings.games, 'game')}"
    )
    console().print(standings_table(standings, tournament_ratings(results)))
    if tournament.players == 2 and not tournament.teams:
        console().print(crosstable(standings))
    for match_id, reason in standings.void:
        click.echo(f"void (a harness failure, not counted): match {match_id}: {reason}")


@click.command("cancel", short_help="Cancel a stored tournament.")
@click.argument("name")
@url_option
def tournament_cancel(name: str, url: str | None) -> None:
    """Cancel the stored tournament NAME, as the web's cancel button does: every match not
    finished is void (a running one stops at its worker's next heartbeat and stores
    nothing), finished results are kept, and no worker plays it again."""
    from arena.service.permissions import OPERATOR
    from arena.service.tournaments import cancel_tournament

    with open_store(url) as store:
        try:
            voided = cancel_tournament(store, OPERATOR, name)
        except LookupError as exc:
            raise UsageError(str(exc)) from None
    click.echo(f"{name}: cancelled; {plural(voided, 'match')} will not be played")


@click.command("list", short_help="List stored tournaments.")
@url_option
def tournament_list(url: str | None) -> None:
    """Every stored tournament, newest first: name, status, matches finished."""
    from rich.table import Table

    from arena.service.board_views import tournament_list as listed_tournaments

    with open_store(url) as store:
        rows = listed_tournaments(store)
    if not rows:
        click.echo("no tournaments stored")
        return
    table = Table(title="Stored tournaments (newest first)")
    for column in ("tournament", "status", "format", "rule set"):
        table.add_column(column)
    for row in rows:
        table.add_row(row.name, row.status, row.format, row.rules)
    console().print(table)


@click.command("export", short_help="Write a stored tournament's game records as JSON lines.")
@click.argument("name")
@click.option("--out", metavar="FILE", help="Write to FILE (default: standard output).")
@url_option
def tournament_export(name: str, out: str | None, url: str | None) -> None:
    """Write every game record of the stored tournament NAME, one JSON document per line, by
    match then game: the records `arena replay verify` re-simulates (docs/records.md)."""
    from arena.service.results import tournament_records
    from arena.service.retention import pruned_note

    with open_store(url) as store:
        tournament = find_tournament(store, name)
        with open_out(out) as handle:
            target = handle if handle is not None else sys.stdout
            count = 0
            for record in tournament_records(store, tournament.id):
                target.write(json.dumps(record, separators=(",", ":")) + "\n")
                count += 1
        note = pruned_note(store, [tournament.id])
    if out is not None:
        click.echo(f"{plural(count, 'game record')} of {name} written to {out}")
    if note is not None:
        click.echo(f"{name}: {note}", err=True)
