"""``arena db upgrade`` and ``arena bots add/list``: the database from the command line
(the schema and settings are in docs/storage.md)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import click

from arena.cli.bots import show_check
from arena.cli.common import (
    console,
    help_without_command,
    memory_option,
    move_time_option,
    plural,
    progress,
    runtime_option,
    unsandboxed_option,
    url_option,
)
from arena.compete.names import check_name
from arena.match.lineup import check_bot
from arena.match.referee import TimeControl
from arena.match.runtimes import runtime_for_upload
from arena.match.sandbox import Limits

# The database's and the service's modules (SQLAlchemy) are imported as a command runs, not
# by its --help (tests/cli/test_lazy.py).

# --- arena db ---------------------------------------------------------------------------


@click.group("db", invoke_without_command=True, short_help="Manage the database.")
@click.pass_context
def db_group(ctx: click.Context) -> None:
    """The service's database (SQLite by default, or PostgreSQL)."""
    help_without_command(ctx)


@db_group.command("upgrade", short_help="Create or migrate the database schema.")
@url_option
def db_upgrade_command(url: str | None) -> None:
    """Create the database's tables, or migrate them to the current schema (safe to repeat);
    then convert the game records stored as JSON to compact bytes, a batch at a time, with
    a progress bar (the server may run meanwhile; interrupted, the next upgrade goes on)."""
    from arena.service.database import upgrade_database
    from arena.store.db import check_url, where

    started = time.perf_counter()
    shown = where(check_url(url))

    @contextmanager
    def converting(total: int) -> Iterator[Callable[[int], None]]:
        click.echo(f"{shown}: schema up to date ({time.perf_counter() - started:.2f} s)")
        click.echo(f"converting {plural(total, 'game record')} to compact bytes")
        with progress(total, "records", minimum=0) as advance:
            yield advance

    upgraded = upgrade_database(url, progress=converting)
    done = upgraded.conversion
    if done is None:
        click.echo(f"{shown}: schema up to date ({time.perf_counter() - started:.2f} s)")
        return
    click.echo(
        f"{plural(done.converted, 'game record')} converted in {done.seconds:.1f} s: "
        f"{done.json_bytes / 1e6:,.1f} MB of JSON now {done.compact_bytes / 1e6:,.1f} MB"
    )
    if upgraded.free_bytes:
        click.echo(
            f"the SQLite file keeps its size ({upgraded.free_bytes / 1e6:,.0f} MB now free "
            "inside it, reused by new rows); to give it back to the disk, stop the server "
            f"and run `sqlite3 {shown} VACUUM` (it needs free disk space for a copy of the "
            "database)"
        )


# --- arena bots -------------------------------------------------------------------------


@click.group("bots", invoke_without_command=True, short_help="Stored bots: add, list.")
@click.pass_context
def bots_group(ctx: click.Context) -> None:
    """Bots stored in the database, each with its immutable versions."""
    help_without_command(ctx)


@bots_group.command("add", short_help="Check a bot file and store it as a new version.")
@click.argument("bot", metavar="FILE")
@click.option("--name", required=True, help="The bot's name.")
@click.option("--owner", required=True, help="The owner's user name (created if new).")
@url_option
@unsandboxed_option
@move_time_option
@memory_option
@runtime_option
def bots_add_command(
    bot: str,
    name: str,
    owner: str,
    url: str | None,
    unsandboxed: bool,
    move_time: float,
    memory: int,
    runtime: str | None,
) -> int:
    """Validate FILE as `arena check` does and, if it passes, store it as the next version of
    OWNER's bot NAME. Uploading the same source again stores nothing. Exit status 0: stored
    (or already stored); 1: the bot failed its check (nothing stored)."""
    from arena.service.uploads import check_report_json
    from arena.store.db import open_store

    path = Path(bot)
    if not path.is_file():
        raise click.BadParameter(f"no bot file {bot!r}", param_hint="'FILE'")
    try:
        source = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise click.BadParameter(f"cannot read {bot!r}: {exc}", param_hint="'FILE'") from None
    owner = check_name(owner, "owner name")  # bad names and databases fail before the check
    name = check_name(name, "bot name")
    open_store(url).close()
    report = show_check(
        check_bot(
            bot,
            sandboxed=not unsandboxed,
            time_control=TimeControl(move_seconds=move_time),
            limits=Limits(memory),
            runtime=runtime,
        ),
        sandboxed=not unsandboxed,
    )
    if not report.ok:
        click.echo(f"{bot} failed `arena check`: nothing stored")
        return 1
    from arena.service.bots import add_checked_bot
    from arena.service.permissions import OPERATOR

    store = open_store(url)
    try:
        number, sha256, created = add_checked_bot(
            store, OPERATOR, owner, name, source, check_report_json(report, not unsandboxed),
            runtime=runtime_for_upload(bot, runtime).name,
        )  # fmt: skip
    finally:
        store.close()
    if created:
        click.echo(f"{owner}/{name}: stored as version {number} ({sha256})")
    else:
        click.echo(f"{owner}/{name}: already stored as version {number} ({sha256})")
    return 0


@bots_group.command("list", short_help="List stored bot versions.")
@url_option
def bots_list_command(url: str | None) -> None:
    """Every stored bot version: owner/name, version, source hash, upload time."""
    from rich.table import Table

    from arena.store.db import as_utc, open_store

    store = open_store(url)
    try:
        listings = store.list_bots()
    finally:
        store.close()
    if not listings:
        click.echo("no bots stored")
        return
    table = Table(title="Stored bots")
    for column in ("bot", "version", "source sha256", "uploaded (UTC)"):
        table.add_column(column, justify="right" if column == "version" else "left")
    for item in listings:
        table.add_row(
            f"{item.owner}/{item.bot}",
            f"v{item.version}",
            item.sha256[:12],
            f"{as_utc(item.created):%Y-%m-%d %H:%M}",
        )
    console().print(table)
