"""The ``arena`` command line: rule sets, local play, record verification.

::

    arena rules                      the presets and their parameters
    arena rules NAME_OR_FILE         one rule set in full (preset or .toml/.json file)
    arena play --rules NAME_OR_FILE  games between bots and built-in strategies, then a summary
    arena replay verify FILE         re-simulate a JSON-lines file of game records
    arena check BOT_FILE             validate a bot as an upload would be
    arena new-bot NAME               write a starter bot file

The only module of ``arena`` that imports ``click`` and ``rich`` (see
docs/architecture.md). Errors in the arguments print one line,
``arena: error: ...``, on stderr and exit with status 2; Ctrl-C exits with 130.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, TextIO

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from arena.compete.tournaments import FORMATS
from arena.engine.game import Game, new_seed
from arena.engine.records import game_record
from arena.engine.rules import PRESETS, GameEnd, Rules, load_rules
from arena.errors import ArenaError, IllegalMoveError, ParseError, RulesError
from arena.match.lineup import check_specs, is_bot_file, make_players, seat_name
from arena.match.play import Summary, play_games
from arena.match.referee import InfrastructureError, TimeControl, Verdict, play_match
from arena.match.sandbox import Limits

__all__ = ["cli", "main"]

#: Runs longer than this many games show a progress bar (when stderr is a terminal).
PROGRESS_MIN_GAMES = 50

#: Exit status for bad arguments (as click and argparse use).
USAGE_ERROR = 2
#: Exit status after Ctrl-C (128 + SIGINT).
INTERRUPTED = 130

_RULE_FILE_SUFFIXES = (".toml", ".json")
#: Width of tables written to a file or pipe (a terminal's own width is used otherwise).
PIPE_WIDTH = 200


def _error(message: str) -> None:
    """Print ``arena: error: message`` as one line on stderr."""
    click.echo(f"arena: error: {' '.join(message.split())}", err=True)


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
        _error(exc.format_message())
        return USAGE_ERROR
    except click.ClickException as exc:
        _error(exc.format_message())
        return exc.exit_code
    except IllegalMoveError as exc:  # a strategy's bug, not the user's arguments
        _error(str(exc))
        return 1
    except InfrastructureError as exc:  # the harness failed: the unfinished games are void
        _error(f"infrastructure failure (no bot's fault; unfinished games are void): {exc}")
        return 1
    except ArenaError as exc:  # unknown preset, bad player count, unreadable file...
        _error(str(exc))
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


def _help_without_command(ctx: click.Context) -> None:
    """Show a group's help when it is given no command (exit status 0)."""
    if ctx.invoked_subcommand is None:
        click.echo(ctx.get_help())


@click.group(
    cls=ArenaGroup,
    invoke_without_command=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.version_option(package_name="domino-arena", prog_name="arena")
@click.pass_context
def cli(ctx: click.Context) -> None:
    """Domino Arena: play dominoes between bots, locally."""
    _help_without_command(ctx)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line with ``argv`` (default: ``sys.argv[1:]``); return the exit status."""
    status: int = cli.main(argv, prog_name="arena", standalone_mode=False)
    return status


def _console() -> Console:
    """Return a console on stdout; wide tables stay on one line when piped (``COLUMNS`` wins)."""
    console = Console(highlight=False)
    if not console.is_terminal and "COLUMNS" not in os.environ:
        console.width = PIPE_WIDTH
    return console


# --- arena rules ------------------------------------------------------------------------


def resolve_rules(name_or_file: str) -> Rules:
    """Return the preset called ``name_or_file``, or the rule set in that file.

    Raises:
        RulesError: neither a preset nor a rule-set file, or an invalid rule set.
        ParseError: the file cannot be read or parsed.
    """
    if name_or_file in PRESETS:
        return PRESETS[name_or_file]
    path = Path(name_or_file)
    if path.suffix.lower() in _RULE_FILE_SUFFIXES or path.exists():
        return load_rules(path)
    raise RulesError(
        f"unknown rule set {name_or_file!r} "
        f"(presets: {', '.join(PRESETS)}; or a .toml or .json rule set file)"
    )


def _players_text(rules: Rules) -> str:
    counts = rules.players
    if len(counts) > 1 and counts == tuple(range(counts[0], counts[-1] + 1)):
        text = f"{counts[0]}-{counts[-1]}"
    else:
        text = ", ".join(map(str, counts))
    return text + (" (4 as teams)" if rules.team_play else "")


def _per_players_text(pairs: tuple[tuple[int, int], ...], players: tuple[int, ...]) -> str:
    table = dict(pairs)
    values = [table.get(n, 0) for n in players]
    if len(set(values)) == 1:
        return str(values[0])
    return " ".join(f"{n}p:{value}" for n, value in zip(players, values, strict=True))


def _draw_text(rules: Rules) -> str:
    if rules.draw_limit == 0:
        return "none: pass"
    if rules.draw_limit is None:
        return "until playable"
    return f"up to {rules.draw_limit} a turn"


def _end_text(rules: Rules) -> str:
    if rules.end is GameEnd.ROUNDS:
        return f"best of {rules.best_of} rounds"
    return f"first to {rules.target}"


def _presets_table() -> Table:
    table = Table(title="Rule set presets")
    for column in ("name", "players", "hand", "draw", "reserve", "scoring", "in-play", "game"):
        table.add_column(column)
    table.add_column("version", no_wrap=True)
    for rules in PRESETS.values():
        table.add_row(
            rules.name,
            _players_text(rules),
            _per_players_text(rules.hand_sizes, rules.players),
            _draw_text(rules),
            _per_players_text(rules.reserves, rules.players),
            rules.scoring.value,
            rules.in_play.value,
            _end_text(rules),
            rules.version,
        )
    return table


def _rules_table(rules: Rules) -> Table:
    kind = "preset" if rules.is_preset else "custom rule set"
    table = Table(
        title=f"{rules.name} ({kind}, version {rules.version})", caption=rules.description
    )
    table.add_column("parameter", no_wrap=True)
    table.add_column("value")
    table.add_column("meaning")
    meanings = {
        "max_pip": f"double-{rules.max_pip} set, {rules.tile_count} tiles",
        "players": _players_text(rules),
        "hand_size": "tiles dealt to each player: "
        + _per_players_text(rules.hand_sizes, rules.players),
        "reserve": "boneyard tiles never drawn: "
        + _per_players_text(rules.reserves, rules.players),
        "lead": rules.lead.value,
        "draw_limit": "draw " + _draw_text(rules),
        "scoring": rules.scoring.value,
        "in_play": rules.in_play.value,
        "team_play": "seats 0+2 v 1+3 with 4 players" if rules.team_play else "no teams",
        "end": _end_text(rules),
        "target": "points that win the game" if rules.target is not None else "",
        "best_of": "rounds of the game" if rules.best_of is not None else "",
    }
    for key, value in rules.params().items():
        table.add_row(key, json.dumps(value), meanings.get(key, ""))
    return table


@cli.command("rules", short_help="List the presets, or show one rule set in full.")
@click.argument("name_or_file", required=False, metavar="[NAME_OR_FILE]")
def rules_command(name_or_file: str | None) -> None:
    """List the presets, or show one rule set (preset name or .toml/.json file) in full."""
    console = _console()
    if name_or_file is None:
        console.print(_presets_table())
    else:
        console.print(_rules_table(resolve_rules(name_or_file)))


# --- arena play -------------------------------------------------------------------------


def _draw_limit(text: str) -> int | None:
    """Parse ``--draw-limit``: a whole number, or ``unlimited`` (None)."""
    if text.strip().lower() == "unlimited":
        return None
    try:
        return int(text)
    except ValueError:
        raise click.BadParameter(
            f"{text!r} is not a whole number nor 'unlimited'", param_hint="'--draw-limit'"
        ) from None


def _bot_names(text: str | None, players: int | None, rules: Rules, teams: bool) -> list[str]:
    """Return one strategy name per seat from ``--bots`` and ``--players``.

    Without ``--players``: 4 with ``--teams``, else one seat per name when several
    are given, else 2. With ``--teams``, two names give one strategy per team.

    Raises:
        click.BadParameter: an unknown or empty name, or a name count that fits no seat count.
        RulesError: the player count or teams are not allowed.
    """
    names = ["random"] if text is None else [name.strip() for name in text.split(",")]
    if any(not name for name in names):
        raise click.BadParameter(f"{text!r} has an empty name", param_hint="'--bots'")
    try:
        check_specs(names)
    except ParseError as exc:
        raise click.BadParameter(str(exc), param_hint="'--bots'") from None
    if players is None:
        players = 4 if teams else len(names) if len(names) > 1 else 2
    rules.check_players(players, teams)
    if len(names) == 1:
        return names * players
    if teams and len(names) == 2:
        return names * 2  # one per team: seats 0 and 2, then seats 1 and 3
    if len(names) != players:
        raise click.BadParameter(
            f"{len(names)} strategies for {players} players "
            "(give one for every seat, one name for all" + (", or one per team)" if teams else ")"),
            param_hint="'--bots'",
        )
    return names


@contextmanager
def _open_out(path: str | None) -> Iterator[TextIO | None]:
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
def _progress(games: int) -> Iterator[Callable[[], None]]:
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


def _summary_table(summary: Summary) -> Table:
    table = Table()
    table.add_column("seat", justify="right")
    table.add_column("bot")
    for column in ("games won", "win %", "points", "avg points/round"):
        table.add_column(column, justify="right")
    for seat, figures in enumerate(summary.seats):
        table.add_row(
            str(seat),
            figures.name,
            str(figures.games_won),
            f"{100 * summary.win_rate(seat):.1f}",
            str(figures.points),
            f"{figures.points_per_round:.2f}",
        )
    return table


def _write_record(
    handle: IO[str], game: Game, names: Sequence[str], verdict: Verdict | None = None
) -> None:
    record = game_record(game, names, verdict=None if verdict is None else verdict.to_dict())
    handle.write(json.dumps(record, separators=(",", ":")) + "\n")


# Options shared by `arena play` and `arena check`.
_broker_option = click.option(
    "--broker",
    metavar="URL",
    default=None,
    help="Broker URL (default: $ARENA_BROKER_URL, else filesystem://arena-broker).",
)
_url_option = click.option(
    "--url",
    metavar="URL",
    default=None,
    help="Database URL (default: $ARENA_DATABASE_URL, else sqlite:///arena.db).",
)
_unsandboxed_option = click.option(
    "--unsandboxed",
    is_flag=True,
    help="Run bot files as plain processes: only your own bots, on your own machine.",
)
_move_time_option = click.option(
    "--move-time", type=float, default=1.0, show_default=True, help="Seconds per move."
)
_memory_option = click.option(
    "--memory",
    type=click.IntRange(min=64),
    default=512,
    show_default=True,
    help="A sandboxed bot's address space, MB (Node.js bots need about 8192).",
)


def _schedule_options(command: Callable[..., Any]) -> Callable[..., Any]:
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


@cli.command("play", short_help="Play games between bots and built-in strategies.")
@click.option(
    "--rules", "rules_name", required=True, metavar="NAME_OR_FILE", help="Preset or rule-set file."
)
@click.option(
    "--players", type=int, help="Seats (default: 4 with --teams, else one per --bots name, else 2)."
)
@click.option("--teams", is_flag=True, help="4 players as 2 teams, seats 0+2 v 1+3.")
@click.option("--games", type=click.IntRange(min=1), default=1, show_default=True, help="Games.")
@click.option("--seed", type=click.IntRange(min=0), help="Seed of the run (default: fresh).")
@click.option(
    "--bots",
    metavar="A,B,...",
    help="Built-in strategies or bot files, one for all seats or one per seat (default: random).",
)
@_unsandboxed_option
@_move_time_option
@click.option("--time-bank", type=float, default=10.0, show_default=True, help="Seconds per game.")
@_memory_option
@click.option("--out", metavar="FILE", help="Write one JSON game record per line.")
@click.option("--target", type=int, help="Override: points that win a game.")
@click.option("--max-pip", type=int, help="Override: the set (6, 9 or 12).")
@click.option("--best-of", type=int, help="Override: rounds of a round-won game.")
@click.option("--draw-limit", metavar="L|unlimited", help="Override: tiles drawn per turn.")
def play_command(
    rules_name: str,
    players: int | None,
    teams: bool,
    games: int,
    seed: int | None,
    bots: str | None,
    unsandboxed: bool,
    move_time: float,
    time_bank: float,
    memory: int,
    out: str | None,
    target: int | None,
    max_pip: int | None,
    best_of: int | None,
    draw_limit: str | None,
) -> None:
    """Play games between built-in strategies (random, greedy) and bot files, and print a
    summary. Bot files run in the sandbox (see docs/writing-a-bot.md).

    The same --seed gives the same deals and, for built-in strategies, the same games.
    """
    overrides: dict[str, int | None] = {
        key: value
        for key, value in (("target", target), ("max_pip", max_pip), ("best_of", best_of))
        if value is not None
    }
    if draw_limit is not None:
        overrides["draw_limit"] = _draw_limit(draw_limit)
    rules = resolve_rules(rules_name).with_overrides(**overrides)
    names = _bot_names(bots, players, rules, teams)
    seed_given = seed is not None
    seed = new_seed() if seed is None else seed
    faults: list[Verdict] = []
    clock = TimeControl(move_seconds=move_time, bank_seconds=time_bank)
    limits = Limits(memory_mb=memory)
    played = _games(
        rules, names, games, seed, teams, sandboxed=not unsandboxed, clock=clock, limits=limits
    )
    names = [seat_name(name) for name in names]
    summary = Summary(names, teams=teams)
    with _open_out(out) as handle, _progress(games) as advance:
        for game, verdict in played:
            summary.add(game)
            if verdict is not None:
                faults.append(verdict)
            if handle is not None:
                _write_record(handle, game, names, verdict)
            advance()
    _print_summary(rules, summary, seed, seed_given, out)
    _print_faults(faults, names)


def _games(
    rules: Rules,
    specs: Sequence[str],
    games: int,
    seed: int,
    teams: bool,
    *,
    sandboxed: bool,
    clock: TimeControl,
    limits: Limits,
) -> Iterator[tuple[Game, Verdict | None]]:
    """The games of a run: in this process for built-in strategies alone, else through
    the referee, with bot files in their own (sandboxed) processes. Checks the setup
    (and the sandbox) at once, before any game."""
    if not any(is_bot_file(spec) for spec in specs):
        local = play_games(rules, specs, games=games, seed=seed, teams=teams)
        return ((game, None) for game in local)
    seats = make_players(specs, sandboxed=sandboxed, limits=limits)
    match = play_match(rules, seats, games=games, seed=seed, teams=teams, time_control=clock)
    return ((outcome.game, outcome.verdict) for outcome in match)


def _print_faults(faults: Sequence[Verdict], names: Sequence[str]) -> None:
    """One line per seat and kind of fault, then the first message and stderr tail of each."""
    seen: dict[tuple[int, str], int] = {}
    for verdict in faults:
        key = (verdict.seat, verdict.termination.value)
        seen[key] = seen.get(key, 0) + 1
    for (seat, kind), count in sorted(seen.items()):
        first = next(v for v in faults if (v.seat, v.termination.value) == (seat, kind))
        click.echo(f"faults: seat {seat} ({names[seat]}): {_plural(count, kind)}: {first.message}")
        if first.stderr.strip():
            click.echo("  stderr tail: " + first.stderr.strip().splitlines()[-1][:200])


def _plural(count: int, noun: str) -> str:
    """``1 game``, ``2 games``; ``2 matches``, ``2 processes``."""
    if count == 1:
        return f"{count} {noun}"
    return f"{count} {noun}{'es' if noun.endswith(('s', 'sh', 'ch', 'x')) else 's'}"


def _print_summary(
    rules: Rules, summary: Summary, seed: int, seed_given: bool, out: str | None
) -> None:
    teams = ", 2 teams" if summary.teams else ""
    click.echo(
        f"{rules.name} (version {rules.version}), {len(summary.seats)} players{teams}, "
        f"{_plural(summary.games, 'game')}, seed {seed}"
        + ("" if seed_given else f" (repeat with --seed {seed})")
    )
    _console().print(_summary_table(summary))
    if summary.teams:
        click.echo("Team play: each seat shows its team's games won and points.")
    click.echo(
        f"rounds: {summary.rounds}, blocked rounds: {summary.blocked}, "
        f"drawn rounds: {summary.drawn}"
    )
    if out is not None:
        click.echo(f"{_plural(summary.games, 'game record')} written to {out}")


# --- arena replay -----------------------------------------------------------------------


@cli.group("replay", invoke_without_command=True, short_help="Game records.")
@click.pass_context
def replay_group(ctx: click.Context) -> None:
    """Game records: verify them."""
    _help_without_command(ctx)


@replay_group.command("verify", short_help="Re-simulate a file of game records.")
@click.argument("file", metavar="FILE")
def verify_command(file: str) -> int:
    """Re-simulate every game record of FILE (JSON lines) and report inconsistencies."""
    from arena.engine.records import verify_file

    report = verify_file(file)
    for problem in report.problems:
        click.echo(problem)
    if report.problems:
        problems = len(report.problems)
        click.echo(
            f"{report.games} games checked, "
            f"{problems} inconsistenc{'y' if problems == 1 else 'ies'}"
        )
        return 1
    click.echo(f"{report.games} games verified, no inconsistencies")
    return 0


@cli.group("tournament", invoke_without_command=True, short_help="Run a tournament.")
@click.pass_context
def tournament_group(ctx: click.Context) -> None:
    """Tournaments: round robin, gauntlet, duplicate deals; here (--local) or stored and
    played by the workers."""
    _help_without_command(ctx)


# The other commands live beside this module and register on ``cli`` when imported.
import arena.cli.bots  # noqa: E402
import arena.cli.ratings  # noqa: E402
import arena.cli.service  # noqa: E402
import arena.cli.store  # noqa: E402
import arena.cli.tournament  # noqa: E402, F401
