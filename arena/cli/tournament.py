"""``arena tournament run --local`` and ``arena compare``: tournaments and regression tests
on this machine, in a process pool (see arena.cli). Stored tournaments played by the workers
are in arena.cli.service."""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Sequence

import click
from rich.table import Table

from arena.cli.main import (
    _broker_option,
    _console,
    _memory_option,
    _move_time_option,
    _open_out,
    _plural,
    _progress,
    _schedule_options,
    _unsandboxed_option,
    _url_option,
    cli,
    resolve_rules,
    tournament_group,
)
from arena.compete.localrun import GameResult, MatchResult, Standings, run_local
from arena.compete.ratings import Rating
from arena.compete.sprt import SPRT, GroupScores, elo_estimate, los
from arena.compete.tournaments import entrant_name, schedule
from arena.engine.game import new_seed
from arena.match.referee import TimeControl
from arena.match.sandbox import Limits
from arena.service.results import tournament_ratings

#: Exit statuses of ``arena compare`` (for a bot author's CI).
PASSED, FAILED, UNDECIDED = 0, 1, 2


def _split(text: str) -> list[str]:
    return [item.strip() for item in text.split(",") if item.strip()]


# --- arena tournament ---------------------------------------------------------------------


@tournament_group.command(
    "run", short_help="Play a tournament: a stored one on the workers, or --local here."
)
@click.argument("name", required=False)
@click.option("--local", is_flag=True, help="Play here in a process pool (no broker, no database).")
@click.option("--rules", "rules_name", metavar="NAME_OR_FILE", help="Rule set (--local).")
@click.option("--bots", metavar="A,B,...", help="Entrants: SPEC or LABEL=SPEC (--local).")
@_schedule_options
@click.option("--workers", type=click.IntRange(min=1), default=2, show_default=True)
@click.option("--out", metavar="FILE", help="Write one JSON game record per line.")
@_url_option
@_broker_option
@click.option(
    "--timeout",
    type=click.FloatRange(min=0),
    default=None,
    help="Stop following NAME after this many seconds (exit 1; the workers go on).",
)
@_unsandboxed_option
@_move_time_option
@_memory_option
def tournament_run(
    name: str | None,
    local: bool,
    rules_name: str | None,
    bots: str | None,
    fmt: str,
    pool: str,
    players: int,
    teams: bool,
    games: int,
    seed: int | None,
    workers: int,
    out: str | None,
    url: str | None,
    broker: str | None,
    timeout: float | None,
    unsandboxed: bool,
    move_time: float,
    memory: int,
) -> int:
    """Play a tournament and print the standings with ratings (Elo scale, 95% intervals)
    and, for 2 players, the crosstable.

    `arena tournament run NAME` sends the stored tournament NAME (see `arena tournament
    create`) to the workers (`arena worker`) and follows it to the end. `arena tournament run
    --local --rules R --bots A,B,...` schedules one and plays it here, in a process pool,
    with no broker and no database."""
    if not local:
        if name is None:
            raise click.UsageError(
                "name a stored tournament (see `arena tournament create`), or play one here "
                "with --local --rules R --bots A,B,..."
            )
        from arena.cli.service import run_stored

        return run_stored(name, url=url, broker=broker, timeout=timeout)
    if name is not None:
        raise click.UsageError("--local plays a new tournament: give --rules and --bots, no NAME")
    if rules_name is None or bots is None:
        raise click.UsageError("--local needs --rules and --bots")
    rules = resolve_rules(rules_name)
    seed = new_seed() if seed is None else seed
    entrants = _split(bots)
    matches = schedule(
        fmt,
        entrants,
        rules=rules,
        players=4 if teams else players,
        teams=teams,
        games_per_match=games,
        seed=seed,
        pool=_split(pool),
    )
    standings = Standings([*entrants, *_split(pool)])
    results: list[MatchResult] = []
    clock = TimeControl(move_seconds=move_time)
    played = run_local(
        matches,
        rules,
        workers=workers,
        sandboxed=not unsandboxed,
        time_control=clock,
        limits=Limits(memory_mb=memory),
    )
    total = sum(match.games for match in matches)
    with _open_out(out) as handle, _progress(total) as advance:
        for result in played:
            standings.add(result)
            results.append(result)
            for game in result.games:
                if handle is not None:
                    handle.write(json.dumps(game.record, separators=(",", ":")) + "\n")
                advance()
    games_played = sum(len(result.games) for result in results)
    click.echo(
        f"{rules.name}, {fmt}, {_plural(len(entrants), 'entrant')}, "
        f"{len(matches)} matches ({_plural(games_played, 'game')}), seed {seed}"
    )
    ratings = tournament_ratings(results)
    _console().print(_standings_table(standings, ratings))
    if players == 2 and not teams:
        _console().print(_crosstable(standings))
    for match_id, reason in standings.void:
        click.echo(f"void (a harness failure, not counted): match {match_id}: {reason}")
    return 0


def _standings_table(standings: Standings, ratings: dict[str, Rating]) -> Table:
    table = Table(title="Standings")
    for column in ("rank", "entrant", "games", "wins", "win %", "points", "forfeits"):
        table.add_column(column, justify="left" if column == "entrant" else "right")
    table.add_column("rating (95% interval)", justify="right")
    for rank, stats in enumerate(standings.ranking(), start=1):
        rating = ratings.get(stats.name)
        table.add_row(
            str(rank),
            stats.name,
            str(stats.games),
            str(stats.wins),
            f"{100 * stats.win_rate:.1f}",
            str(stats.points),
            str(stats.forfeits),
            ""
            if rating is None
            else f"{rating.rating:.0f} ({rating.low:.0f} to {rating.high:.0f})",
        )
    return table


def _crosstable(standings: Standings) -> Table:
    entrants = [stats.entrant for stats in standings.ranking()]
    table = Table(title="Crosstable: row's score against column (wins + half draws)")
    table.add_column("")
    for entrant in entrants:
        table.add_column(entrant_name(entrant), justify="right")
    for a in entrants:
        cells = [
            f"{standings.score(a, b):g}" if a != b and standings.met[a].get(b) else ""
            for b in entrants
        ]
        table.add_row(entrant_name(a), *cells)
    return table


# --- arena compare -----------------------------------------------------------------------------


@cli.command(
    "compare", short_help="Is NEW stronger than OLD? A sequential test on duplicate deals."
)
@click.argument("new", metavar="NEW")
@click.argument("old", metavar="OLD")
@click.option("--rules", "rules_name", required=True, metavar="NAME_OR_FILE", help="Rule set.")
@click.option(
    "--players",
    type=int,
    default=2,
    show_default=True,
    help="Seats: NEW against players - 1 copies of OLD.",
)
@click.option("--elo0", type=float, default=0.0, show_default=True, help="H0: NEW is this much.")
@click.option("--elo1", type=float, default=10.0, show_default=True, help="H1: NEW is this much.")
@click.option("--alpha", type=float, default=0.05, show_default=True)
@click.option("--beta", type=float, default=0.05, show_default=True)
@click.option("--max-games", type=click.IntRange(min=2), default=20000, show_default=True)
@click.option(
    "--batch",
    type=click.IntRange(min=1),
    default=16,
    show_default=True,
    help="Deal groups played between two looks at the test.",
)
@click.option("--seed", type=click.IntRange(min=0), help="Seed (default: fresh).")
@click.option("--workers", type=click.IntRange(min=1), default=2, show_default=True)
@click.option(
    "--remote",
    is_flag=True,
    help="Play on the workers: NEW and OLD are stored bots, [OWNER/]NAME[@VERSION].",
)
@_url_option
@_broker_option
@_unsandboxed_option
@_move_time_option
@_memory_option
def compare_command(
    new: str,
    old: str,
    rules_name: str,
    players: int,
    elo0: float,
    elo1: float,
    alpha: float,
    beta: float,
    max_games: int,
    batch: int,
    seed: int | None,
    workers: int,
    remote: bool,
    url: str | None,
    broker: str | None,
    unsandboxed: bool,
    move_time: float,
    memory: int,
) -> int:
    """Play duplicate deals between NEW and OLD (each deal with the seats rotated) under a
    sequential probability ratio test, and stop as soon as it decides. Exit status: 0 NEW
    passes (H1: at least --elo1 stronger), 1 NEW fails (H0), 2 undecided at --max-games.

    NEW and OLD are bot files or built-in strategies, played here in a process pool; with
    --remote they are stored bots, played by the workers (`arena worker`)."""
    rules = resolve_rules(rules_name)
    rules.check_players(players)
    test = SPRT(elo0, elo1, alpha, beta)
    seed = new_seed() if seed is None else seed
    if remote:
        from arena.cli.service import compare_remote

        return compare_remote(
            new,
            old,
            rules=rules,
            players=players,
            test=test,
            max_games=max_games,
            batch=batch,
            seed=seed,
            url=url,
            broker=broker,
            move_time=move_time,
            memory=memory,
        )
    entrants = [f"new={new}", *(f"old{i}={old}" for i in range(1, players))]
    samples = GroupScores()
    played, batch_number, status = 0, 0, "continue"
    clock = TimeControl(move_seconds=move_time)
    click.echo(
        f"{rules.name}, {players} players: NEW {new} against OLD {old}, seed {seed}, "
        f"SPRT elo0={elo0:g} elo1={elo1:g} alpha={alpha:g} beta={beta:g}"
    )
    while status == "continue" and played < max_games:
        matches = schedule(
            "duplicate",
            entrants,
            rules=rules,
            players=players,
            games_per_match=batch,
            seed=_batch_seed(seed, batch_number),
        )
        results = list(
            run_local(
                matches,
                rules,
                workers=workers,
                sandboxed=not unsandboxed,
                time_control=clock,
                limits=Limits(memory_mb=memory),
            )
        )
        batch_number += 1
        for group in _deal_groups(results).values():
            samples.add(sum(group) / len(group))
            played += len(group)
        status = test.status(samples) if samples.n >= 2 else "continue"
        _progress_line(played, samples, test, final=False)
    _progress_line(played, samples, test, final=True)
    return _verdict(status, played)


def _verdict(status: str, played: int) -> int:
    """Print the test's verdict; return the exit status."""
    verdict = {"H1 accepted": ("passed", PASSED), "H0 accepted": ("failed", FAILED)}
    word, code = verdict.get(status, ("undecided: game limit reached", UNDECIDED))
    click.echo(f"NEW {word} ({status}, {_plural(played, 'game')})")
    return code


def _batch_seed(seed: int, batch: int) -> int:
    digest = hashlib.sha256(f"arena:compare:{seed}:{batch}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def _deal_groups(results: Sequence[MatchResult]) -> dict[tuple[str, int], list[float]]:
    """NEW's score in each game of each deal group (the same deal, seats rotated)."""
    groups: dict[tuple[str, int], list[float]] = {}
    for result in results:
        if result.match.deal_group is None or result.void is not None:
            continue
        seat = [entrant_name(spec) for spec in result.match.seats].index("new")
        for game in result.games:
            key = (result.match.deal_group, game.index)
            groups.setdefault(key, []).append(_new_score(seat, game))
    return groups


def _new_score(seat: int, game: GameResult) -> float:
    """NEW's score in [0, 1] in one game: the share of its opponents it finished ahead of
    (a tie counts half): 1 or 0 for a 2-player win or loss, 0.5 for a draw."""
    mine = game.places[seat]
    others = [place for other, place in enumerate(game.places) if other != seat]
    return sum(1.0 if mine < p else 0.5 if mine == p else 0.0 for p in others) / len(others)


def _progress_line(played: int, samples: GroupScores, test: SPRT, *, final: bool) -> None:
    if samples.n < 2:
        return
    elo, low, high = elo_estimate(samples)
    lower, upper = test.bounds()
    line = (
        f"games {played:>6} | Elo {elo:+7.1f} ({low:+.1f} to {high:+.1f}) | "
        f"LOS {100 * los(samples):5.1f}% | LLR {test.llr(samples):+6.2f} "
        f"[{lower:+.2f}, {upper:+.2f}]"
    )
    if sys.stdout.isatty():  # one live line, rewritten after each batch
        click.echo("\r" + line, nl=final)
    elif not final:  # a log: one line per batch
        click.echo(line)
