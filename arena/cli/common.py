"""What the ``arena`` command's modules share: one-line errors and exit statuses, consoles,
the rule-set argument, progress, and the options several commands take."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from arena.compete.tournaments import FORMATS
from arena.engine.rules import PRESETS, Rules, load_rules
from arena.errors import RulesError

#: Runs longer than this many games show a progress bar (when stderr is a terminal).
PROGRESS_MIN_GAMES = 50


#: Exit status for bad arguments (as click and argparse use).
USAGE_ERROR = 2


#: Exit status after Ctrl-C (128 + SIGINT).
INTERRUPTED = 130


RULE_FILE_SUFFIXES = (".toml", ".json")


#: Width of tables written to a file or pipe (a terminal's own width is used otherwise).
PIPE_WIDTH = 200


def error(message: str) -> None:
    """Print ``arena: error: message`` as one line on stderr."""
    click.echo(f"arena: error: {' '.join(message.split())}", err=True)


def help_without_command(ctx: click.Context) -> None:
    """Show a group's help when it is given no command (exit status 0)."""
    if ctx.invoked_subcommand is None:
        click.echo(ctx.get_help())


def console() -> Console:
    """Return a console on stdout; wide tables stay on one line when piped (``COLUMNS`` wins)."""
    console = Console(highlight=False)
    if not console.is_terminal and "COLUMNS" not in os.environ:
        console.width = PIPE_WIDTH
    return console


def resolve_rules(name_or_file: str) -> Rules:
    """Return the preset called ``name_or_file``, or the rule set in that file.

    Raises:
        RulesError: neither a preset nor a rule-set file, or an invalid rule set.
        ParseError: the file cannot be read or parsed.
    """
    if name_or_file in PRESETS:
        return PRESETS[name_or_file]
    path = Path(name_or_file)
    if path.suffix.lower() in RULE_FILE_SUFFIXES or path.exists():
        return load_rules(path)
    raise RulesError(
        f"unknown rule set {name_or_file!r} "
        f"(presets: {', '.join(PRESETS)}; or a .toml or .json rule set file)"
    )


@contextmanager
def open_out(path: str | None) -> Iterator[TextIO | None]:
    if path is None:
        yield None
        return
    try:
        handle = open(path, "w", encoding="utf-8", newline="\n")  # noqa: SIM115 - closed below
    except OSError as exc:
        raise click.BadParameter(
            f"cannot write {path!r}: {exc.strerror}", param_hint="'--out'"
        ) from None
    with handle:
        yield handle


@contextmanager
def progress(games: int) -> Iterator[Callable[[], None]]:
    """Yield a function to call after each game: a progress bar on long runs at a terminal."""
    if games <= PROGRESS_MIN_GAMES or not sys.stderr.isatty():
        yield lambda: None
        return
    columns = (
        TextColumn("games"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=Console(stderr=True), transient=True) as progress:
        task = progress.add_task("games", total=games)
        yield lambda: progress.advance(task)


def plural(count: int, noun: str) -> str:
    """``1 game``, ``2 games``; ``2 matches``, ``2 processes``."""
    if count == 1:
        return f"{count} {noun}"
    return f"{count} {noun}{'es' if noun.endswith(('s', 'sh', 'ch', 'x')) else 's'}"


# Options shared by `arena play` and `arena check`.
broker_option = click.option(
    "--broker",
    metavar="URL",
    default=None,
    help="Broker URL (default: $ARENA_BROKER_URL, else filesystem://arena-broker).",
)


url_option = click.option(
    "--url",
    metavar="URL",
    default=None,
    help="Database URL (default: $ARENA_DATABASE_URL, else sqlite:///arena.db).",
)


unsandboxed_option = click.option(
    "--unsandboxed",
    is_flag=True,
    help="Run bot files as plain processes: only your own bots, on your own machine.",
)


move_time_option = click.option(
    "--move-time", type=float, default=1.0, show_default=True, help="Seconds per move."
)


memory_option = click.option(
    "--memory",
    type=click.IntRange(min=64),
    default=512,
    show_default=True,
    help="A sandboxed bot's address space, MB (Node.js bots need about 8192).",
)


def schedule_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """The options that shape a tournament's schedule (``tournament run --local`` and
    ``tournament create``): format, pool, players, teams, games, seed."""
    options = [
        click.option(
            "--format", "fmt", type=click.Choice(FORMATS), default="round-robin", show_default=True
        ),
        click.option("--pool", metavar="X,Y,...", default="", help="A gauntlet's reference bots."),
        click.option("--players", type=int, default=2, show_default=True, help="Seats per game."),
        click.option("--teams", is_flag=True, help="2v2: each entrant partners a copy of itself."),
        click.option(
            "--games",
            type=click.IntRange(min=1),
            default=10,
            show_default=True,
            help="Games per table (per deal group's match with --format duplicate).",
        ),
        click.option(
            "--seed", type=click.IntRange(min=0), help="Tournament seed (default: fresh)."
        ),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def stderr_console() -> Console:
    return Console(stderr=True)


def split(text: str) -> list[str]:
    return [item.strip() for item in text.split(",") if item.strip()]
