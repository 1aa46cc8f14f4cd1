"""The ``arena`` command's root group: it assembles the commands of the modules beside it.

::

    arena rules [NAME_OR_FILE]       the presets, or one rule set in full   (arena.cli.play)
    arena play --rules NAME_OR_FILE  games between bots and built-in strategies
    arena replay verify FILE         re-simulate a JSON-lines file of game records
    arena check BOT_FILE             validate a bot as an upload would be   (arena.cli.bots)
    arena new-bot NAME               write a starter bot file
    arena tournament run ...         a tournament here (--local) or a stored one
                                     (arena.cli.tournament, arena.cli.stored)
    arena compare NEW OLD            is NEW stronger than OLD?              (arena.cli.compare)
    arena db upgrade, arena bots ... the database                           (arena.cli.store)
    arena worker, arena workers      Celery workers                         (arena.cli.worker)
    arena ratings --rules R          stored ratings                         (arena.cli.ratings)

No command module imports this one: each defines its commands, and this module adds them
to the groups. Errors in the arguments print one line, ``arena: error: ...``, on stderr and
exit with status 2; Ctrl-C exits with 130.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import Any

import click

from arena.cli import bots, compare, play, ratings, store, stored, tournament, worker
from arena.cli.common import INTERRUPTED, USAGE_ERROR, error, help_without_command
from arena.errors import ArenaError, IllegalMoveError
from arena.match.referee import InfrastructureError

__all__ = ["cli", "main"]


class _InterruptedError(Exception):
    """Ctrl-C during a command: carried past click, which would print and re-raise it."""


def _run(invoke: Callable[[], Any]) -> int:
    """Call ``invoke`` (click's non-standalone main) and turn every outcome into an exit status."""
    try:
        status = invoke()
    except (_InterruptedError, click.exceptions.Abort, KeyboardInterrupt):
        if sys.stderr.isatty():
            click.echo(err=True)  # end the line the terminal's "^C" echo started
        return INTERRUPTED
    except click.UsageError as exc:
        error(exc.format_message())
        return USAGE_ERROR
    except click.ClickException as exc:
        error(exc.format_message())
        return exc.exit_code
    except IllegalMoveError as exc:  # a strategy's bug, not the user's arguments
        error(str(exc))
        return 1
    except InfrastructureError as exc:  # the harness failed: the unfinished games are void
        error(f"infrastructure failure (no bot's fault; unfinished games are void): {exc}")
        return 1
    except ArenaError as exc:  # unknown preset, bad player count, unreadable file...
        error(str(exc))
        return USAGE_ERROR
    return status if isinstance(status, int) else 0


class ArenaGroup(click.Group):
    """A click group whose ``main`` reports errors as one line (see :func:`_run`).

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
    cls=ArenaGroup,
    invoke_without_command=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.version_option(package_name="domino-arena", prog_name="arena")
@click.pass_context
def cli(ctx: click.Context) -> None:
    """Domino Arena: play dominoes between bots, locally or on workers."""
    help_without_command(ctx)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line with ``argv`` (default: ``sys.argv[1:]``); return the exit status."""
    status: int = cli.main(argv, prog_name="arena", standalone_mode=False)
    return status


@click.group("tournament", invoke_without_command=True, short_help="Run a tournament.")
@click.pass_context
def tournament_group(ctx: click.Context) -> None:
    """Tournaments: round robin, gauntlet, duplicate deals; here (--local) or stored and
    played by the workers."""
    help_without_command(ctx)


for command in (
    play.rules_command,
    play.play_command,
    play.replay_group,
    bots.check_command,
    bots.new_bot_command,
    tournament_group,
    compare.compare_command,
    store.db_group,
    store.bots_group,
    worker.worker_command,
    worker.workers_command,
    ratings.ratings_command,
):
    cli.add_command(command)
for command in (
    tournament.tournament_run,
    stored.tournament_create,
    stored.tournament_status,
    stored.tournament_standings,
    stored.tournament_list,
):
    tournament_group.add_command(command)
