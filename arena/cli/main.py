"""The ``arena`` command's root group: it assembles the commands of the modules beside it.

::

    arena rules [NAME_OR_FILE]       the presets, or one rule set in full   (arena.cli.play)
    arena play --rules NAME_OR_FILE  games between bots and built-in strategies
    arena replay verify FILE         re-simulate a JSON-lines file of game records
    arena replay show FILE           print a recorded game in the terminal
    arena replay branch RECORD ...   play a recorded round on from a turn with other bots
    arena check BOT_FILE             validate a bot as an upload would be   (arena.cli.bots)
    arena new-bot NAME               write a starter bot file
    arena tournament run ...         a tournament here (--local) or a stored one
                                     (arena.cli.tournament, arena.cli.stored)
    arena compare NEW OLD            is NEW stronger than OLD?              (arena.cli.compare)
    arena db upgrade, arena bots ... the database                           (arena.cli.store)
    arena worker, arena workers      Celery workers                         (arena.cli.worker)
    arena ratings --rules R          stored ratings                         (arena.cli.ratings)
    arena class create|roster|...    classes: join codes, rosters, teachers (arena.cli.classes)
    arena class similarity NAME      similar sources in a class             (arena.cli.similarity)

No command module imports this one: each defines its commands, and this module names them
in :data:`COMMANDS` with their one-line help. A command's module is imported only when the
command runs (or its own help is asked for), so ``arena --help`` and ``arena --version``
load no command; and a command's module imports the database, the broker, the statistics,
HTTP and the service only as the command runs, so no command's ``--help`` loads numpy,
scipy, SQLAlchemy, Celery or httpx (tests/cli/test_lazy.py; benchmarks/starts.py times
them: 0.5 s a command's help, 0.3 s ``--version``). Errors in the arguments print one line,
``arena: error: ...``, on stderr, with the exit statuses of :mod:`arena.cli.common`.
"""

from __future__ import annotations

import importlib
import os
import sys
import traceback
from collections.abc import Callable, Sequence
from typing import Any

import click

from arena import __version__
from arena.cli.common import (
    INTERNAL_ERROR,
    INTERRUPTED,
    UNAVAILABLE,
    USAGE_ERROR,
    error,
    help_without_command,
)
from arena.errors import ArenaError, DatabaseError, IllegalMoveError, VerdictError

__all__ = ["cli", "main"]


class _InterruptedError(Exception):
    """Ctrl-C during a command: carried past click, which would print and re-raise it."""


def _run(invoke: Callable[[], Any]) -> int:
    """Call ``invoke`` (click's non-standalone main) and turn every outcome into an exit
    status (arena.cli.common: the same mistake exits the same way from every command)."""
    try:
        status = invoke()
    except (_InterruptedError, click.exceptions.Abort, KeyboardInterrupt):
        if sys.stderr.isatty():
            click.echo(err=True)  # end the line the terminal's "^C" echo started
        return INTERRUPTED
    except click.UsageError as exc:  # click's own: a bad option or value
        error(exc.format_message())
        return USAGE_ERROR
    except click.ClickException as exc:  # ours carry their status (common.UsageError...)
        error(exc.format_message())
        return exc.exit_code
    except ArenaError as exc:  # the arena's own: what went wrong, and its status
        return _arena_error(exc)
    except Exception as exc:  # a bug: one line, the traceback on request
        if os.environ.get("ARENA_DEBUG"):
            traceback.print_exc()
        error(
            f"internal error: {type(exc).__name__}: {exc} "
            "(run again with ARENA_DEBUG=1 for the traceback, and please report it)"
        )
        return INTERNAL_ERROR
    return status if isinstance(status, int) else 0


def _arena_error(exc: ArenaError) -> int:
    """Print the one line an error of the arena's own tree gets and return its status (the
    sandbox's and the referee's modules, imported only by the commands that raise their
    errors, are imported here only then)."""
    from arena.match.sandbox import SandboxUnavailable
    from arena.match.verdicts import InfrastructureError

    if isinstance(exc, IllegalMoveError):  # a built-in strategy's bug, not the arguments
        error(f"internal error: {exc}")
        return INTERNAL_ERROR
    if isinstance(exc, InfrastructureError):  # the harness failed: unfinished games are void
        error(f"infrastructure failure (no bot's fault; unfinished games are void): {exc}")
        return INTERNAL_ERROR
    if isinstance(exc, VerdictError):  # a compare's games cannot give its verdict
        error(f"no verdict: {exc}")
        return INTERNAL_ERROR
    error(str(exc))
    if isinstance(exc, DatabaseError | SandboxUnavailable):  # missing, unreachable: the fix
        return UNAVAILABLE
    return USAGE_ERROR  # unknown preset, bad player count, unreadable file...


#: The commands of each group: name -> ("module:attribute", its one-line help). The help is
#: repeated here so that listing the commands imports none of them (tests/cli checks that
#: each matches the command's own ``short_help``).
COMMANDS: dict[str, dict[str, tuple[str, str]]] = {
    "arena": {
        "rules": ("play:rules_command", "List the presets, or show one rule set in full."),
        "play": ("play:play_command", "Play games between bots and built-in strategies."),
        "replay": ("play:replay_group", "Game records."),
        "check": ("bots:check_command", "Validate a bot file as an upload would be."),
        "new-bot": ("bots:new_bot_command", "Write a starter bot file."),
        "tournament": ("main:tournament_group", "Run a tournament."),
        "compare": (
            "compare:compare_command",
            "Is NEW stronger than OLD? A sequential test on duplicate deals.",
        ),
        "db": ("store:db_group", "Manage the database."),
        "bots": ("store:bots_group", "Stored bots: add, list."),
        "serve": ("serve:serve_command", "Serve the dashboard, with a worker, on this machine."),
        "worker": ("worker:worker_command", "Run a Celery worker that plays stored matches."),
        "workers": ("worker:workers_command", "The workers and their heartbeats."),
        "ratings": (
            "ratings:ratings_command",
            "Ratings of the stored bot versions under a rule set.",
        ),
        "users": ("users:users_group", "Accounts: add, give a role, list."),
        "remote": ("remote:remote_group", "Upload and test bots on an arena server."),
        "competition": (
            "competition:competition_group",
            "Competitions: create, list, status, enter, close, final.",
        ),
        "assignment": (
            "assignment:assignment_group",
            "Graded assignments of a class: create, status, grades, submit.",
        ),
        "class": (
            "classes:class_group",
            "Classes: create, list, roster, join code, teachers, password resets.",
        ),
    },
    "tournament": {
        "run": (
            "tournament:tournament_run",
            "Play a tournament: a stored one on the workers, or --local here.",
        ),
        "create": ("stored:tournament_create", "Store a tournament between stored bots."),
        "status": ("stored:tournament_status", "A stored tournament's progress."),
        "standings": ("stored:tournament_standings", "A stored tournament's standings."),
        "list": ("stored:tournament_list", "List stored tournaments."),
        "cancel": ("stored:tournament_cancel", "Cancel a stored tournament."),
        "export": (
            "stored:tournament_export",
            "Write a stored tournament's game records as JSON lines.",
        ),
    },
}


def load_command(target: str) -> click.Command:
    """The command ``module:attribute`` names, importing ``arena.cli.<module>``."""
    module, _, attribute = target.partition(":")
    command = getattr(importlib.import_module(f"arena.cli.{module}"), attribute)
    assert isinstance(command, click.Command), target
    return command


class LazyGroup(click.Group):
    """A group whose commands are imported when used, listed from :data:`COMMANDS`
    (click's documented lazy-loading pattern, with the help listed without imports)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS.get(self.name or "", {}))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        entry = COMMANDS.get(self.name or "", {}).get(cmd_name)
        return None if entry is None else load_command(entry[0])

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [
            (name, help) for name, (_, help) in sorted(COMMANDS.get(self.name or "", {}).items())
        ]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


class ArenaGroup(LazyGroup):
    """The root group: its ``main`` reports errors as one line (see :func:`_run`).

    Standalone (the console script, ``CliRunner``) it exits with the status;
    with ``standalone_mode=False`` it returns the status.
    """

    def main(  # type: ignore[override]
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        windows_expand_args: bool = True,
        **extra: Any,
    ) -> int:
        def invoke() -> Any:
            return super(ArenaGroup, self).main(
                args,
                prog_name,
                complete_var,
                standalone_mode=False,
                windows_expand_args=windows_expand_args,
                **extra,
            )

        status = _run(invoke)
        if standalone_mode:
            sys.exit(status)
        return status

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            raise _InterruptedError from None


@click.group(
    "arena",
    cls=ArenaGroup,
    invoke_without_command=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)
# The version from the package itself: asking the installed distribution's metadata for
# it (click's package_name) scans every installed package, a third of the command's start.
@click.version_option(__version__, prog_name="arena")
@click.pass_context
def cli(ctx: click.Context) -> None:
    """Domino Arena: play dominoes between bots, locally or on workers."""
    help_without_command(ctx)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line with ``argv`` (default: ``sys.argv[1:]``); return the exit status."""
    status: int = cli.main(argv, prog_name="arena", standalone_mode=False)
    return status


@click.group(
    "tournament", cls=LazyGroup, invoke_without_command=True, short_help="Run a tournament."
)
@click.pass_context
def tournament_group(ctx: click.Context) -> None:
    """Tournaments: round robin, gauntlet, duplicate deals; here (--local) or stored and
    played by the workers."""
    help_without_command(ctx)
