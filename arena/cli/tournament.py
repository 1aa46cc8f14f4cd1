"""``arena tournament run``: a tournament played here in a process pool (``--local``), or a
stored one followed while the workers play it (see arena.cli.stored)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import click

from arena.cli.common import (
    WORKERS,
    UsageError,
    broker_option,
    console,
    given,
    memory_option,
    move_time_option,
    open_out,
    plural,
    progress,
    refuse,
    resolve_rules,
    schedule_options,
    split,
    unsandboxed_option,
    url_option,
)
from arena.compete.tournaments import schedule
from arena.engine.game import new_seed

# The local run's modules (numpy, scipy, the referee) are imported as the command runs, not
# by its --help (tests/cli/test_lazy.py).
if TYPE_CHECKING:
    from arena.compete.localrun import MatchResult

#: The options of a tournament played here (--local); a stored one has its own settings.
LOCAL_ONLY = (
    "rules_name",
    "bots",
    "fmt",
    "pool",
    "players",
    "teams",
    "games",
    "seed",
    "workers",
    "unsandboxed",
    "move_time",
    "memory",
)


@click.command("run", short_help="Play a tournament: a stored one on the workers, or --local here.")
@click.argument("name", required=False)
@click.option("--local", is_flag=True, help="Play here in a process pool (no broker, no database).")
@click.option("--rules", "rules_name", metavar="NAME_OR_FILE", help="Rule set (--local).")
@click.option("--bots", metavar="A,B,...", help="Entrants: SPEC or LABEL=SPEC (--local).")
@schedule_options
@click.option("--workers", type=WORKERS, default=2, show_default=True, help="Processes (--local).")
@click.option("--out", metavar="FILE", help="Write one JSON game record per line.")
@url_option
@broker_option
@click.option(
    "--timeout",
    type=click.FloatRange(min=0),
    default=None,
    help="Stop following NAME after this many seconds (exit 1; the workers go on).",
)
@unsandboxed_option
@move_time_option
@memory_option
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
    from arena.cli.tables import crosstable, standings_table
    from arena.compete.entrants import Entrant
    from arena.compete.localrun import Standings, run_local, tournament_ratings
    from arena.match.referee import TimeControl
    from arena.match.sandbox import Limits

    ctx = click.get_current_context()
    if not local:
        if name is None:
            raise click.UsageError(
                "name a stored tournament (see `arena tournament create`), or play one here "
                "with --local --rules R --bots A,B,..."
            )
        if given(ctx, "out"):
            raise UsageError(
                "--out does not apply to a stored tournament: its records are in the "
                f"database (`arena tournament export {name} --out FILE`)"
            )
        refuse(ctx, LOCAL_ONLY, "a stored tournament keeps the settings it was created with")
        from arena.cli.stored import run_stored

        return run_stored(name, url=url, broker=broker, timeout=timeout)
    if name is not None:
        raise click.UsageError("--local plays a new tournament: give --rules and --bots, no NAME")
    if rules_name is None or bots is None:
        raise click.UsageError("--local needs --rules and --bots")
    refuse(ctx, ("url", "broker", "timeout"), "--local plays here, with no database or broker")
    rules = resolve_rules(rules_name)
    seed = new_seed() if seed is None else seed
    entrants = [Entrant.parse(text) for text in split(bots)]  # parsed here, once
    others = [Entrant.parse(text) for text in split(pool)]
    matches = schedule(
        fmt,
        entrants,
        rules=rules,
        players=4 if teams else players,
        teams=teams,
        games_per_match=games,
        seed=seed,
        pool=others,
    )
    standings = Standings(entrant.label for entrant in [*entrants, *others])
    results: list[MatchResult] = []
    clock = TimeControl(move_seconds=move_time)
    played = run_local(
        matches,
        rules,
        workers=workers,
        sandboxed=not unsandboxed,
        time_control=clock,
        limits=Limits(memory_mb=memory),
        keep_going=True,  # a match whose harness failed is void, not the run
    )
    total = sum(match.games for match in matches)
    with open_out(out) as handle, progress(total) as advance:
        for result in played:
            standings.add(result)
            results.append(result)
            for game in result.games:
                if handle is not None:
                    handle.write(json.dumps(game.record, separators=(",", ":")) + "\n")
                advance()
    games_played = sum(len(result.games) for result in results)
    click.echo(
        f"{rules.name}, {fmt}, {plural(len(entrants), 'entrant')}, "
        f"{len(matches)} matches ({plural(games_played, 'game')}), seed {seed}"
    )
    ratings = tournament_ratings(results)
    console().print(standings_table(standings, ratings))
    if players == 2 and not teams:
        console().print(crosstable(standings))
    for match_id, reason in standings.void:
        click.echo(f"void (a harness failure, not counted): match {match_id}: {reason}")
    return 0
