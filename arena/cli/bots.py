"""``arena check`` and ``arena new-bot``: a bot author's first commands ."""

from __future__ import annotations

from pathlib import Path

import click

from arena.cli.common import memory_option, move_time_option, unsandboxed_option
from arena.match.lineup import check_bot
from arena.match.newbot import write_starter_bot
from arena.match.referee import TimeControl
from arena.match.sandbox import Limits

# --- arena check, arena new-bot -----------------------------------------------------------


@click.command("check", short_help="Validate a bot file as an upload would be.")
@click.argument("bot", metavar="BOT_FILE")
@click.option(
    "--games",
    type=click.IntRange(1, 100),
    default=2,
    show_default=True,
    help="Games against random under each preset.",
)
@unsandboxed_option
@move_time_option
@memory_option
def check_command(bot: str, games: int, unsandboxed: bool, move_time: float, memory: int) -> int:
    """Start BOT_FILE, check its handshake, play it against random under every preset, and
    report its timing and any fault with the tail of its stderr. Exit status 0: the bot
    passed; 1: it faulted."""
    if not Path(bot).is_file():
        raise click.BadParameter(f"no bot file {bot!r}", param_hint="'BOT_FILE'")
    clock = TimeControl(move_seconds=move_time)
    report = None
    for preset, report in check_bot(
        bot, sandboxed=not unsandboxed, games=games, time_control=clock, limits=Limits(memory)
    ):
        faulted = [o for name, o in report.faults if name == preset]
        click.echo(f"{preset:<15} {'FAULT' if faulted else 'ok'}")
    assert report is not None
    click.echo(
        f"{report.name}: {report.games} games, start-up {report.startup_seconds * 1000:.0f} ms, "
        f"{report.decisions} moves, {report.mean_move_seconds * 1000:.1f} ms a move on average, "
        f"slowest {report.slowest * 1000:.1f} ms" + ("" if unsandboxed else " (sandboxed)")
    )
    for preset, outcome in report.faults[:5]:
        verdict = outcome.verdict
        assert verdict is not None
        click.echo(f"FAULT in {preset}: {verdict.termination.value}: {verdict.message}")
        if verdict.stderr.strip():
            tail = "\n".join(verdict.stderr.strip().splitlines()[-8:])
            click.echo("  stderr tail:\n" + "\n".join("    " + line for line in tail.splitlines()))
    click.echo("passed" if report.ok else "failed")
    return 0 if report.ok else 1


@click.command("new-bot", short_help="Write a starter bot file.")
@click.argument("name")
def new_bot_command(name: str) -> None:
    """Write NAME.py (or NAME, if it ends in .py): a commented starter bot to edit."""
    path = Path(name if name.endswith(".py") else name + ".py")
    try:
        write_starter_bot(path)
    except FileExistsError:
        raise click.BadParameter(
            f"{path} exists; not overwriting it", param_hint="'NAME'"
        ) from None
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="'NAME'") from None
    except OSError as exc:
        raise click.BadParameter(
            f"cannot write {path}: {exc.strerror}", param_hint="'NAME'"
        ) from None
    click.echo(f"wrote {path}: edit play(), then try `arena check {path}`")
