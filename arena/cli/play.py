"""``arena rules``, ``arena play``, ``arena replay verify`` and ``arena replay branch``: rule
sets, games between bots and built-in strategies, game records and branches from them."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import IO, Any

import click
from rich.table import Table

from arena.cli.common import (
    BANK_SECONDS,
    GAMES,
    SEED,
    console,
    game_option,
    help_without_command,
    memory_option,
    move_time_option,
    open_out,
    plural,
    progress,
    resolve_rules,
    runtime_option,
    unsandboxed_option,
)
from arena.cli.show import show_command
from arena.engine.game import Game, new_seed
from arena.engine.records import game_record
from arena.engine.rulebook import draw_text, end_text, parameters, per_players_text, players_text
from arena.engine.rules import PRESETS, Rules
from arena.errors import ParseError
from arena.match.lineup import check_specs, is_bot_file, make_players, seat_name
from arena.match.play import Summary, play_games
from arena.match.referee import TimeControl, Verdict, play_match
from arena.match.sandbox import Limits
from arena.match.verdicts import DecisionTime


def _presets_table() -> Table:
    table = Table(title="Rule set presets")
    for column in ("name", "players", "hand", "draw", "reserve", "scoring", "in-play", "game"):
        table.add_column(column)
    table.add_column("version", no_wrap=True)
    for rules in PRESETS.values():
        table.add_row(
            rules.name,
            players_text(rules),
            per_players_text(rules.hand_sizes, rules.players),
            draw_text(rules),
            per_players_text(rules.reserves, rules.players),
            rules.scoring.value,
            rules.in_play.value,
            end_text(rules),
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
    for parameter in parameters(rules):
        table.add_row(parameter.name, json.dumps(parameter.value), parameter.meaning)
    return table


@click.command("rules", short_help="List the presets, or show one rule set in full.")
@click.argument("name_or_file", required=False, metavar="[NAME_OR_FILE]")
def rules_command(name_or_file: str | None) -> None:
    """List the presets, or show one rule set (preset name or .toml/.json file) in full."""
    out = console()
    if name_or_file is None:
        out.print(_presets_table())
    else:
        out.print(_rules_table(resolve_rules(name_or_file)))


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
    handle: IO[str],
    game: Game,
    names: Sequence[str],
    verdict: Verdict | None = None,
    times: list[DecisionTime | None] | None = None,
) -> None:
    record = game_record(
        game, names, verdict=None if verdict is None else verdict.to_dict(), times=times
    )
    handle.write(json.dumps(record, separators=(",", ":")) + "\n")


@click.command("play", short_help="Play games between bots and built-in strategies.")
@click.option(
    "--rules", "rules_name", required=True, metavar="NAME_OR_FILE", help="Preset or rule-set file."
)
@click.option(
    "--players", type=int, help="Seats (default: 4 with --teams, else one per --bots name, else 2)."
)
@click.option("--teams", is_flag=True, help="4 players as 2 teams, seats 0+2 v 1+3.")
@click.option("--games", type=GAMES, default=1, show_default=True, help="Games.")
@click.option("--seed", type=SEED, help="Seed of the run (default: fresh).")
@click.option(
    "--bots",
    metavar="A,B,...",
    help="Built-in strategies or bot files, one for all seats or one per seat (default: random).",
)
@unsandboxed_option
@move_time_option
@click.option(
    "--time-bank", type=BANK_SECONDS, default=10.0, show_default=True, help="Seconds per game."
)
@memory_option
@runtime_option
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
    runtime: str | None,
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
        rules, names, games, seed, teams, sandboxed=not unsandboxed, clock=clock, limits=limits,
        runtime=runtime,
    )  # fmt: skip
    names = [seat_name(name) for name in names]
    summary = Summary(names, teams=teams)
    with open_out(out) as handle, progress(games) as advance:
        for game, verdict, times in played:
            summary.add(game)
            if verdict is not None:
                faults.append(verdict)
            if handle is not None:
                _write_record(handle, game, names, verdict, times)
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
    runtime: str | None = None,
) -> Iterator[tuple[Game, Verdict | None, list[DecisionTime | None] | None]]:
    """The games of a run, with their verdicts and decision times: in this process for
    built-in strategies alone (untimed), else through the referee, with bot files in
    their own (sandboxed) processes. Checks the setup (and the sandbox) at once, before
    any game."""
    if not any(is_bot_file(spec) for spec in specs):
        local = play_games(rules, specs, games=games, seed=seed, teams=teams)
        return ((game, None, None) for game in local)
    seats = make_players(specs, sandboxed=sandboxed, limits=limits, runtime=runtime)
    match = play_match(rules, seats, games=games, seed=seed, teams=teams, time_control=clock)
    return ((outcome.game, outcome.verdict, outcome.times) for outcome in match)


def _print_faults(faults: Sequence[Verdict], names: Sequence[str]) -> None:
    """One line per seat and kind of fault, then the first message and stderr tail of each."""
    seen: dict[tuple[int, str], int] = {}
    for verdict in faults:
        key = (verdict.seat, verdict.termination.value)
        seen[key] = seen.get(key, 0) + 1
    for (seat, kind), count in sorted(seen.items()):
        first = next(v for v in faults if (v.seat, v.termination.value) == (seat, kind))
        click.echo(f"faults: seat {seat} ({names[seat]}): {plural(count, kind)}: {first.message}")
        if first.stderr.strip():
            click.echo("  stderr tail: " + first.stderr.strip().splitlines()[-1][:200])


def _print_summary(
    rules: Rules, summary: Summary, seed: int, seed_given: bool, out: str | None
) -> None:
    teams = ", 2 teams" if summary.teams else ""
    click.echo(
        f"{rules.name} (version {rules.version}), {len(summary.seats)} players{teams}, "
        f"{plural(summary.games, 'game')}, seed {seed}"
        + ("" if seed_given else f" (repeat with --seed {seed})")
    )
    console().print(_summary_table(summary))
    if summary.teams:
        click.echo("Team play: each seat shows its team's games won and points.")
    click.echo(
        f"rounds: {summary.rounds}, blocked rounds: {summary.blocked}, "
        f"drawn rounds: {summary.drawn}"
    )
    if out is not None:
        click.echo(f"{plural(summary.games, 'game record')} written to {out}")


@click.group("replay", invoke_without_command=True, short_help="Game records.")
@click.pass_context
def replay_group(ctx: click.Context) -> None:
    """Game records: verify them, show one in the terminal, or branch off one with other bots."""
    help_without_command(ctx)


replay_group.add_command(show_command)


@replay_group.command("verify", short_help="Re-simulate a file of game records.")
@click.argument("file", metavar="FILE")
def verify_command(file: str) -> int:
    """Re-simulate every game record of FILE (JSON lines) and report inconsistencies. Exit
    status 0 when every record is consistent, 1 when one is not or FILE holds none."""
    from arena.engine.records import verify_file

    report = verify_file(file)
    if report.games == 0:
        click.echo(f"{file} holds no game records: nothing to verify")
        return 1
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


def _side_text(side: int | None, names: Sequence[str], teams: bool) -> str:
    """A round winner for people: ``seat 1 (random)``, ``team 0 (greedy+greedy)``."""
    if side is None:
        return "nobody"
    if teams:
        return f"team {side} ({names[side]}+{names[side + 2]})"
    return f"seat {side} ({names[side]})"


def _round_text(result: Any, verdict: Any, names: Sequence[str], teams: bool) -> str:
    """How a recorded round ended (its record's ``result``, or the game's ``verdict`` when
    a forfeit cut it short), in a few words."""
    if not isinstance(result, dict):
        if isinstance(verdict, dict):
            seat = verdict.get("seat")
            name = names[seat] if isinstance(seat, int) and seat < len(names) else "?"
            return f"seat {seat} ({name}) forfeited: {verdict.get('termination')}"
        return "unfinished"
    side = _side_text(result.get("winner"), names, teams)
    termination = result.get("termination")
    if termination == "blocked" and result.get("winner") is None:
        return "blocked, drawn"
    if termination == "blocked":
        return f"blocked, {side} won"
    if termination == "target":
        return f"{side} reached the target"
    return f"{side} won by domino"


def _branch_outcomes_table(
    rows: dict[str, list[list[int]]], times: int, names: Sequence[str], teams: bool
) -> Table:
    """Repetitions by how round R ended, with each side's mean points in them."""
    table = Table()
    table.add_column("round result")
    table.add_column("times", justify="right")
    table.add_column("%", justify="right")
    sides = [f"team {t}" for t in range(2)] if teams else [f"seat {s}" for s in range(len(names))]
    for side in sides:
        table.add_column(f"avg points, {side}", justify="right")
    for text, points in sorted(rows.items(), key=lambda item: -len(item[1])):
        means = [sum(p[side] for p in points) / len(points) for side in range(len(sides))]
        table.add_row(
            text,
            str(len(points)),
            f"{100 * len(points) / times:.1f}",
            *(f"{mean:.1f}" for mean in means),
        )
    return table


@replay_group.command("branch", short_help="Play a recorded game on from a turn with other bots.")
@click.argument("file", metavar="RECORD")
@game_option
@click.option("--round", "round_number", type=click.IntRange(1), required=True, help="Round.")
@click.option(
    "--turn",
    type=click.IntRange(0),
    required=True,
    help="Plays of the round kept (0: from its lead).",
)
@click.option(
    "--bots",
    required=True,
    metavar="A,B,...",
    help="Who plays on: built-in strategies or bot files, one for all seats or one per seat.",
)
@click.option(
    "--times",
    type=click.IntRange(1, 10_000),
    default=1,
    show_default=True,
    help="Repetitions (random bots play differently in each).",
)
@click.option("--seed", type=SEED, help="Seeds the bots of every repetition (default: fresh).")
@click.option("--out", metavar="FILE", help="Write the branches' game records (JSON lines).")
@unsandboxed_option
@move_time_option
@click.option(
    "--time-bank", type=BANK_SECONDS, default=10.0, show_default=True, help="Seconds per game."
)
@memory_option
def branch_command(
    file: str,
    game_number: int,
    round_number: int,
    turn: int,
    bots: str,
    times: int,
    seed: int | None,
    out: str | None,
    unsandboxed: bool,
    move_time: float,
    time_bank: float,
    memory: int,
) -> None:
    """Take game --game of RECORD (JSON lines, as `arena play --out` writes) up at round
    --round after --turn of its plays, and let --bots play the rest of that round from
    exactly there: the same deal, the same boneyard order. Prints how the round ended,
    against the original (with --times N, a table of the outcomes), and writes each
    branch as a game record that `arena replay verify` accepts."""
    from arena.engine.branch import branch_game, round_plays
    from arena.engine.records import read_records
    from arena.match.branch import play_branches

    record: dict[str, Any] | None = None
    count = 0
    for _, item in read_records(file):
        count += 1
        if count == game_number:
            if isinstance(item, ParseError):
                raise ParseError(f"{file}, game {game_number}: {item}")
            record = item
            break
    if record is None:
        raise click.BadParameter(
            f"{file} holds {plural(count, 'game record')}, not {game_number}",
            param_hint="'--game'",
        )
    start = branch_game(record, round_number, turn)  # the point is checked before any bot
    names = _bot_names(bots, start.players, start.rules, start.teams)
    seed_given = seed is not None
    seed = new_seed() if seed is None else seed
    seats = make_players(names, sandboxed=not unsandboxed, limits=Limits(memory_mb=memory))
    names = [seat_name(name) for name in names]
    source = f"{file} game {game_number}"
    branches = play_branches(
        record,
        round_number,
        turn,
        seats,
        times=times,
        seed=seed,
        names=names,
        source=source,
        time_control=TimeControl(move_seconds=move_time, bank_seconds=time_bank),
    )
    done = []
    with open_out(out) as handle, progress(times) as advance:
        for branch in branches:
            done.append(branch)
            advance()
        done.sort(key=lambda branch: branch.index)  # in order, whichever ended first
        if handle is not None:
            for branch in done:
                handle.write(json.dumps(branch.record, separators=(",", ":")) + "\n")
    original = [str(name) for name in record.get("seats") or []]
    teams = start.teams
    plays = round_plays(record, round_number)
    click.echo(
        f"{source}: {start.rules.name}, round {round_number} after {turn} of its "
        f"{plural(plays, 'play')}; {', '.join(original)} -> {', '.join(names)}; seed {seed}"
        + ("" if seed_given else f" (repeat with --seed {seed})")
    )
    kept = record["rounds"][round_number - 1]
    last = round_number == len(record["rounds"])
    verdict = (record.get("result") or {}).get("verdict") if last else None
    points = (kept.get("result") or {}).get("points")
    click.echo(
        f"original: {_round_text(kept.get('result'), verdict, original, teams)}"
        + ("" if points is None else f", points {points}")
    )
    rows: dict[str, list[list[int]]] = {}
    for branch in done:
        data = branch.record["rounds"][round_number - 1]
        result = data.get("result")
        text = _round_text(result, (branch.record.get("result") or {}).get("verdict"), names, teams)
        sides = 2 if teams else len(names)
        rows.setdefault(text, []).append(list(result["points"]) if result else [0] * sides)
    if times == 1:
        branch = done[0]
        result = branch.record["rounds"][round_number - 1].get("result")
        line = f"branch: {next(iter(rows))}"
        if result is not None:
            line += f", points {result['points']}, scores {branch.record['rounds'][-1]['scores']}"
        click.echo(line)
        outcome = branch.game.outcome()
        if outcome is not None and branch.verdict is None:
            winners = " and ".join(f"seat {s} ({names[s]})" for s in outcome.winners)
            click.echo(f"the round ended the game: {winners} won")
    else:
        console().print(_branch_outcomes_table(rows, times, names, teams))
    _print_faults([b.verdict for b in done if b.verdict is not None], names)
    if out is not None:
        click.echo(f"{plural(times, 'branch record')} written to {out}")
