"""What the ``arena`` command's modules share: one-line errors and exit statuses, consoles,
the rule-set argument, progress, and the options several commands take."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import click

from arena.compete.tournaments import FORMATS
from arena.engine.rules import PRESETS, Rules, load_rules
from arena.errors import RulesError
from arena.match.runtimes import RUNTIMES

if TYPE_CHECKING:
    from rich.console import Console

# rich is imported where a command prints with it, not by every command's --help (the
# commands start at once: tests/cli/test_lazy.py).

#: Runs longer than this many games show a progress bar (when stderr is a terminal).
PROGRESS_MIN_GAMES = 50


# Exit statuses, the same for every command (README "Exit statuses"). 0, 1 and 2 are results;
# the codes that say the command could not do its job come from sysexits.h, so that
# `arena compare`'s 0 pass / 1 fail / 2 undecided never mean a mistake.

#: The command did its job and the answer is yes (or there was no question).
OK = 0
#: The command did its job and the answer is no: records inconsistent, a bot failed its
#: check, NEW failed the test, a tournament was not done in time.
FAILED = 1
#: ``arena compare`` only: the test was undecided at --max-games (or, on the workers, its
#: compare was cancelled, or its matches void, before the test decided).
UNDECIDED = 2
#: EX_USAGE: the command line or its input is wrong (an option, a value out of range, an
#: option that does not apply, an unknown name or rule set, an unreadable file).
USAGE_ERROR = 64
#: EX_UNAVAILABLE: a database or broker cannot be used as asked (missing, unreachable,
#: another schema).
UNAVAILABLE = 69
#: EX_SOFTWARE: the harness or the arena itself failed (the sandbox could not start, a bug).
INTERNAL_ERROR = 70
#: Ctrl-C (128 + SIGINT).
INTERRUPTED = 130


class UsageError(click.ClickException):
    """The user's input is wrong: exit :data:`USAGE_ERROR` with a one-line message."""

    exit_code = USAGE_ERROR


class UnavailableError(click.ClickException):
    """A database or broker cannot be used: exit :data:`UNAVAILABLE` with the fix."""

    exit_code = UNAVAILABLE


def given(ctx: click.Context, *names: str) -> list[str]:
    """The options among ``names`` (parameter names) set on the command line or from the
    environment, as their flags (``--out``), in the command's order."""
    flags = []
    for param in ctx.command.params:
        if param.name in names and isinstance(param, click.Option):
            source = ctx.get_parameter_source(param.name)
            if source not in (None, click.core.ParameterSource.DEFAULT):
                flags.append(param.opts[0])
    return flags


def refuse(ctx: click.Context, names: tuple[str, ...], why: str) -> None:
    """Raise :class:`UsageError` when any option of ``names`` was given: ``why`` they do not
    apply (e.g. "a stored tournament keeps its own settings")."""
    flags = given(ctx, *names)
    if flags:
        s = "s" if len(flags) > 1 else ""
        raise UsageError(f"option{s} {', '.join(flags)} do{'' if s else 'es'} not apply: {why}")


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
    from rich.console import Console

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
def progress(
    games: int, what: str = "games", *, minimum: int = PROGRESS_MIN_GAMES
) -> Iterator[Callable[..., None]]:
    """Yield a function to call after each game (or with how many more are done): a
    progress bar with the time left on runs longer than ``minimum``, at a terminal."""
    if games <= minimum or not sys.stderr.isatty():
        yield lambda count=1: None
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
    )

    columns = (
        TextColumn(what),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=Console(stderr=True), transient=True) as progress:
        task = progress.add_task(what, total=games)
        yield lambda count=1: progress.advance(task, count)


def warn_once(warned: list[bool], which: int, message: str) -> None:
    """Print ``message`` on stderr unless warning ``which`` of ``warned`` was given."""
    if not warned[which]:
        warned[which] = True
        click.echo(f"arena: {message}", err=True)


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
    help="Broker URL (default: $ARENA_BROKER_URL, else a directory of the database's).",
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


# The ranges every command accepts: beyond them a value is a typo, not a plan.
#: Games one command plays (``play``, ``compare --max-games``).
GAMES = click.IntRange(1, 1_000_000)
#: Games per table of a tournament's match.
TABLE_GAMES = click.IntRange(1, 10_000)
#: Seeds: 63-bit, as the records keep them.
SEED = click.IntRange(0, 2**63 - 1)
#: Processes playing at once.
WORKERS = click.IntRange(1, 256)
#: Seconds a bot may think per move, and its bank per game.
MOVE_SECONDS = click.FloatRange(0, 60, min_open=True)
BANK_SECONDS = click.FloatRange(0, 3600)

move_time_option = click.option(
    "--move-time", type=MOVE_SECONDS, default=1.0, show_default=True, help="Seconds per move."
)


#: The sequential test's hypotheses, the same in ``arena compare`` and ``arena remote push``.
elo0_option = click.option(
    "--elo0", type=float, default=0.0, show_default=True, help="H0: NEW is this much."
)
elo1_option = click.option(
    "--elo1", type=float, default=10.0, show_default=True, help="H1: NEW is this much."
)


memory_option = click.option(
    "--memory",
    type=click.IntRange(64, 65536),
    default=512,
    show_default=True,
    help="A sandboxed bot's memory, MB (a javascript bot's address space gets 1 GB more).",
)

#: ``--runtime``: what a bot file runs under (arena.match.runtimes); default: by its name.
runtime_option = click.option(
    "--runtime",
    type=click.Choice(list(RUNTIMES)),
    default=None,
    help="What the bot file runs under (default: by its suffix: .py python, .js javascript, ...).",
)


#: ``--game N`` of the replay commands: which record of a JSON-lines file (from 1).
game_option = click.option(
    "--game",
    "game_number",
    type=click.IntRange(1),
    default=1,
    show_default=True,
    help="Which record of the file (1 = the first).",
)


def schedule_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """The options that shape a tournament's schedule (``tournament run --local`` and
    ``tournament create``): format, pool, players, teams, games, seed."""
    options = [
        click.option(
            "--format", "fmt", type=click.Choice(FORMATS), default="round-robin", show_default=True
        ),
        click.option("--pool", metavar="X,Y,...", default="", help="A gauntlet's reference bots."),
        click.option(
            "--players", type=click.IntRange(2, 5), default=2, show_default=True, help="Seats."
        ),
        click.option("--teams", is_flag=True, help="2v2: each entrant partners a copy of itself."),
        click.option(
            "--games",
            type=TABLE_GAMES,
            default=10,
            show_default=True,
            help="Games per table (per deal group's match with --format duplicate).",
        ),
        click.option("--seed", type=SEED, help="Tournament seed (default: fresh)."),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def stderr_console() -> Console:
    from rich.console import Console

    return Console(stderr=True)


def split(text: str) -> list[str]:
    return [item.strip() for item in text.split(",") if item.strip()]
