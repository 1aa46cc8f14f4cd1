"""``arena check`` and ``arena new-bot``: a bot author's first commands ."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import click

from arena.cli.common import (
    memory_option,
    move_time_option,
    plural,
    runtime_option,
    unsandboxed_option,
)
from arena.match.lineup import CheckReport, check_bot
from arena.match.newbot import java_class_name, write_starter_bot
from arena.match.referee import TimeControl
from arena.match.runtimes import find_runtime
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
@runtime_option
def check_command(
    bot: str, games: int, unsandboxed: bool, move_time: float, memory: int, runtime: str | None
) -> int:
    """Start BOT_FILE under its runtime (--runtime: python, python-numpy, javascript, cpp,
    c, go, rust, java; by default the file's suffix says; a compiled one's file is compiled first,
    its compiler's errors shown as it printed them), check its handshake, play it against
    random under every preset, and report its timing and any fault with the tail of its
    stderr. Exit status 0: the bot passed; 1: it faulted."""
    if not Path(bot).is_file():
        raise click.BadParameter(f"no bot file {bot!r}", param_hint="'BOT_FILE'")
    reports = check_bot(
        bot,
        sandboxed=not unsandboxed,
        games=games,
        time_control=TimeControl(move_seconds=move_time),
        limits=Limits(memory),
        runtime=runtime,
    )
    report = show_check(reports, sandboxed=not unsandboxed)
    click.echo("passed" if report.ok else "failed")
    return 0 if report.ok else 1


def show_check(reports: Iterator[tuple[str, CheckReport]], *, sandboxed: bool) -> CheckReport:
    """Print a check as it goes (a line per preset), then its summary and each distinct
    fault once (with how many games it cost and the tail of the bot's stderr); return the
    final report (``arena check`` and ``arena bots add``)."""
    report = None
    for preset, report in reports:
        if report.compile_error:
            click.echo(f"{report.bot} does not compile:\n{report.compile_error}")
            return report
        faulted = [o for name, o in report.faults if name == preset]
        click.echo(f"{preset:<15} {'FAULT' if faulted else 'ok'}")
    assert report is not None
    if report.compile_seconds:
        click.echo(f"compiled in {report.compile_seconds:.1f} s")
    click.echo(
        f"{report.name}: {plural(report.games, 'game')}, start-up "
        f"{report.startup_seconds * 1000:.0f} ms, {plural(report.decisions, 'move')}, "
        f"{report.mean_move_seconds * 1000:.1f} ms a move on average, "
        f"slowest {report.slowest * 1000:.1f} ms" + (" (sandboxed)" if sandboxed else "")
    )
    seen: dict[tuple[str, str], list[str]] = {}
    for preset, outcome in report.faults:
        verdict = outcome.verdict
        assert verdict is not None
        seen.setdefault((verdict.termination.value, verdict.message), []).append(preset)
    for (kind, message), presets in seen.items():
        where = ", ".join(dict.fromkeys(presets))
        click.echo(f"FAULT: {kind}: {message} ({plural(len(presets), 'game')}: {where})")
        first = next(
            verdict
            for _, o in report.faults
            if (verdict := o.verdict) is not None
            and (verdict.termination.value, verdict.message) == (kind, message)
        )
        if first.stderr.strip():
            tail = "\n".join(first.stderr.strip().splitlines()[-8:])
            click.echo("  stderr tail:\n" + "\n".join("    " + line for line in tail.splitlines()))
    return report


@click.command("new-bot", short_help="Write a starter bot file.")
@click.argument("name")
@runtime_option
def new_bot_command(name: str, runtime: str | None) -> None:
    """Write NAME.py (NAME.js with --runtime javascript, NAME.cpp with --runtime cpp, and so
    on; or NAME, if it ends so): a commented starter bot to edit, for the runtime (python by
    default; python-numpy; javascript; cpp; java; c, go, rust: programs speaking the
    protocol)."""
    runtime = runtime or "python"
    suffix = find_runtime(runtime).suffix
    path = Path(name if name.endswith(suffix) else name + suffix)
    try:
        write_starter_bot(path, runtime)
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
    again = "" if runtime != "python-numpy" else "--runtime python-numpy "
    wrote = str(path)
    if runtime == "java":  # its class is named after NAME, as Java spells classes
        wrote += f" (class {java_class_name(path.name[: -len(suffix)])})"
    click.echo(f"wrote {wrote}: edit play(), then try `arena check {again}{path}`")
