"""``arena compare``: is NEW stronger than OLD? Duplicate deals under a sequential test,
played here in a process pool, or with ``--remote`` as a stored tournament on the workers."""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import sys
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from arena.cli.common import (
    GAMES,
    SEED,
    WORKERS,
    UnavailableError,
    UsageError,
    broker_option,
    elo0_option,
    elo1_option,
    memory_option,
    move_time_option,
    plural,
    refuse,
    resolve_rules,
    unsandboxed_option,
    url_option,
    warn_once,
)
from arena.compete.testspec import STATISTICS

if TYPE_CHECKING:
    from arena.compete.entrants import Entrant
    from arena.compete.localrun import MatchResult
    from arena.compete.sprt import Reading, RegressionTest, Statistic
    from arena.compete.tournaments import Match as ScheduledMatch
    from arena.engine.rules import Rules
    from arena.service.compare_start import CompareRequest
    from arena.service.compares import CompareStep


#: At most this many games of a seat rotation played together, the matches of several
#: looks at once (:func:`arena.compete.localrun.play_chain`; chains of doubling size, so
#: the first looks come as soon as before): more games in flight, fewer round trips to
#: the bots' processes. Only where a seat is a bot file (:func:`chain_games`).
CHAIN_GAMES = 256

#: Exit statuses of ``arena compare`` (for a bot author's CI).
PASSED, FAILED, UNDECIDED = 0, 1, 2


@click.command(
    "compare", short_help="Is NEW stronger than OLD? A sequential test on duplicate deals."
)
@click.argument("new", metavar="NEW")
@click.argument("old", metavar="OLD")
@click.option("--rules", "rules_name", required=True, metavar="NAME_OR_FILE", help="Rule set.")
@click.option(
    "--players",
    type=int,
    help="Seats: NEW against players - 1 copies of OLD (default: 2; 4 with --teams).",
)
@click.option("--teams", is_flag=True, help="2v2: NEW and OLD each partner a copy of themselves.")
@click.option(
    "--statistic",
    type=click.Choice(STATISTICS),
    default="margin",
    show_default=True,
    help="What the test counts per deal group: point margins less the luck of the draw "
    "(margin), or game results (game, fishtest's pentanomial SPRT). docs/ratings.md.",
)
@elo0_option
@elo1_option
@click.option("--alpha", type=float, default=0.05, show_default=True)
@click.option("--beta", type=float, default=0.05, show_default=True)
@click.option(
    "--max-games",
    type=GAMES,
    default=20000,
    show_default=True,
    help="Play at most this many games (whole deal groups: one game per seat rotation).",
)
@click.option(
    "--batch",
    type=click.IntRange(1, 1000),
    default=16,
    show_default=True,
    help="Deal groups played between two looks at the test.",
)
@click.option("--seed", type=SEED, help="Seed (default: fresh).")
@click.option("--workers", type=WORKERS, default=2, show_default=True)
@click.option(
    "--remote",
    is_flag=True,
    help="Play on the workers: NEW and OLD are stored bots, [OWNER/]NAME[@VERSION].",
)
@click.option(
    "--allow-same-source",
    is_flag=True,
    help="Compare NEW and OLD even when their sources are the same (a bot against itself: "
    "refused otherwise, as it tests nothing).",
)
@url_option
@broker_option
@unsandboxed_option
@move_time_option
@memory_option
def compare_command(
    new: str,
    old: str,
    rules_name: str,
    players: int | None,
    teams: bool,
    statistic: Statistic,
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
    allow_same_source: bool,
) -> int:
    """Play duplicate deals between NEW and OLD (each deal with the seats rotated) under a
    sequential probability ratio test, and stop as soon as it decides. By default the test
    counts each deal group's point margin less its luck of the draw, on the Elo scale, and
    a clearly stronger NEW passes early (a fast pass); --statistic game counts game
    results instead (fishtest's pentanomial SPRT). Exit status: 0 NEW
    passes (H1: at least --elo1 stronger), 1 NEW fails (H0), 2 undecided at --max-games
    (or, with --remote, the compare cancelled elsewhere before its test decided);
    64 for a mistake in the command, 69 when the database or broker cannot be used, 70
    when the harness failed (README "Exit statuses").

    NEW and OLD are bot files or built-in strategies, played here in a process pool; with
    --remote they are stored bots, played by the workers (`arena worker`)."""
    ctx = click.get_current_context()
    # No garbage collection while the command's imports load (modules, classes, functions:
    # kept until it exits, which the collector's passes over them only scanned: 0.08 of
    # --remote's 0.63 CPU s of imports); freeze_heap turns it on again, frozen, and the
    # command's end does whatever ended it (a mistake refused before freeze_heap included).
    gc.disable()
    ctx.call_on_close(gc.enable)
    # The sandbox's trial (its host paths: ldd; one sandboxed process) runs in a thread
    # while this command's imports load; the pool is forked once it has ended.
    trial = None if remote or unsandboxed else _sandbox_trial([new, old])
    if remote:
        refuse(ctx, ("workers", "unsandboxed"), "--remote plays on the workers, in their sandbox")
    else:
        refuse(ctx, ("url", "broker"), "they name the service of --remote")
    from arena.engine.game import new_seed

    rules = resolve_rules(rules_name)
    players = players if players is not None else 4 if teams else 2
    seed = new_seed() if seed is None else seed
    if remote:  # its start goes to the workers first, before the statistics load
        start, sent = _send_start(
            new, old, rules=rules, players=players, teams=teams, statistic=statistic,
            elo0=elo0, elo1=elo1, alpha=alpha, beta=beta, max_games=max_games, batch=batch,
            seed=seed, move_time=move_time, memory=memory,
            allow_same_source=allow_same_source, url=url, broker=broker,
        )  # fmt: skip
    # Imported as the command runs, so that its --help starts at once (tests/cli/test_lazy.py).
    from arena.compete.testspec import check_test, group_size

    rules.check_players(players, teams)
    size = group_size(players, teams)
    if max_games < size:
        raise click.BadParameter(
            f"{max_games} is fewer than one deal group ({size} games: one per seat rotation)",
            param_hint="'--max-games'",
        )
    try:
        check_test(statistic, elo0, elo1, alpha, beta)
    except ValueError as exc:
        raise UsageError(f"the test's parameters: {exc}") from None
    if remote:  # (the statistics are the workers': this command loads none)
        described = describe_test(statistic, elo0, elo1, alpha, beta)
        return compare_remote(
            start, rules=rules, described=described, url=url, broker=broker, sent=sent
        )
    from arena.compete.sprt import make_test

    test = make_test(statistic, elo0, elo1, alpha, beta)
    return _compare_local(
        new,
        old,
        rules=rules,
        players=players,
        teams=teams,
        test=test,
        max_games=max_games,
        batch=batch,
        seed=seed,
        workers=workers,
        unsandboxed=unsandboxed,
        move_time=move_time,
        memory=memory,
        allow_same_source=allow_same_source,
        trial=trial,
    )


def _sandbox_trial(specs: list[str]) -> threading.Thread | None:
    """:func:`arena.match.sandbox.check_sandbox` (cached: its verdict is read later) started
    in a thread, when a spec is a bot file here; None otherwise."""
    if not any(Path(spec).is_file() for spec in specs):
        return None
    # (imported here, not in the thread: two threads importing the same modules at once
    # could each see the other's half-loaded)
    from arena.match.sandbox import check_sandbox

    thread = threading.Thread(target=check_sandbox, name="sandbox-trial", daemon=True)
    thread.start()
    return thread


def _compare_local(
    new: str,
    old: str,
    *,
    rules: Rules,
    players: int,
    teams: bool,
    test: RegressionTest,
    max_games: int,
    batch: int,
    seed: int,
    workers: int,
    unsandboxed: bool,
    move_time: float,
    memory: int,
    allow_same_source: bool,
    trial: threading.Thread | None = None,
) -> int:
    """``arena compare`` here: the duplicate deals played in a process pool (``workers``
    > 1) or in this process. Returns the exit status. ``trial``: the sandbox's trial
    (:func:`_sandbox_trial`), waited for before anything is played (so that the pool is
    forked from one thread, with what the trial found)."""
    from arena.compete.compares import deal_groups, group_of, group_size, same_source_refusal
    from arena.compete.entrants import Entrant
    from arena.compete.localrun import process_pool, run_local
    from arena.compete.sprt import MarginScores, preload_scipy, read_test, statistic_of
    from arena.match.lineup import check_specs, release_kept_players, seat_source
    from arena.match.referee import TimeControl
    from arena.match.sandbox import Limits

    freeze_heap()  # (before the pool forks: its processes inherit it frozen)
    size = group_size(players, teams)
    statistic = statistic_of(test)
    check_specs([new, old])  # a missing bot file is refused before anything is printed
    if seat_source(new) == seat_source(old) and not allow_same_source:
        raise UsageError(same_source_refusal(new, old, seat_source(new)))
    entrants = (Entrant.from_spec(new), Entrant.from_spec(old))  # parsed here, once
    samples = MarginScores()
    reading = read_test(test, samples)
    played, batch_number = 0, 0
    clock = TimeControl(move_seconds=move_time)
    click.echo(
        f"{_table(rules, players, teams)}: NEW {new} against OLD {old}, seed {seed}, "
        f"{_describe(test)}"
    )
    if trial is not None:
        trial.join()
    with contextlib.ExitStack() as stack:
        pool = None
        if workers > 1:  # one pool for every look at the test: its processes start once
            files = any(entrant.file is not None for entrant in entrants)
            pool = process_pool(workers, sandboxed=files and not unsandboxed)
            stack.callback(pool.shutdown, wait=True, cancel_futures=True)
        else:
            stack.callback(release_kept_players)
        preload_scipy(test)  # (in a thread, while the first games are played)
        # Every batch is scheduled up front and the pool plays them in order, a look at
        # the test behind: no worker waits for the slowest match of a batch, and the bots
        # keep running from match to match. Once the test decides, the rest is cancelled.
        batches = _batches(entrants, rules, players, teams, batch, max_games, seed)
        by_batch: dict[int, list[MatchResult]] = {}
        results = run_local(
            [m for matches in batches for m in matches],
            rules,
            workers=workers,
            sandboxed=not unsandboxed,
            time_control=clock,
            limits=Limits(memory_mb=memory),
            keep_going=True,  # a match whose harness failed is void, not the run
            pool=pool,
            keep_games=max_games,
            luck=statistic == "margin",  # the game-level test reads no luck of the draw
            chain_games=chain_games(entrants),
            records=False,  # (the test reads the results' fields and luck)
        )
        with contextlib.closing(results):
            for result in results:
                by_batch.setdefault(_batch_of(result.match), []).append(result)
                while len(by_batch.get(batch_number, ())) == len(batches[batch_number]):
                    groups = deal_groups(
                        by_batch.pop(batch_number),
                        statistic == "margin",
                        allow_same_source=allow_same_source,
                    )
                    for key in sorted(groups):
                        if len(groups[key]) == size:  # (a void match leaves groups short)
                            samples.add(group_of(groups[key]))
                            played += size
                    batch_number += 1
                    reading = read_test(test, samples)
                    _progress_line(played, reading, final=False)
                    if reading.status != "continue" or batch_number == len(batches):
                        break
                if reading.status != "continue" or batch_number == len(batches):
                    break
        # The verdict is printed as soon as the test decides, before the pool's teardown
        # (its processes stop their matches in flight and close their bots meanwhile).
        _progress_line(played, reading, final=True)
        code = _verdict(reading, played)
        sys.stdout.flush()
    return code


def freeze_heap() -> None:
    """Move what is loaded by now (modules, classes, functions: most of the heap, kept until
    the command exits) out of the garbage collector's sight (:func:`gc.freeze`), so that its
    collections scan only what the command makes (a compare's 1,250 stored matches, a row
    each, took 0.16 CPU s to store, 0.09 s frozen); and turn the collector on again (off
    while the command's imports load: :func:`compare_command`)."""
    gc.freeze()
    gc.enable()


def chain_games(entrants: tuple[Entrant, ...]) -> int:
    """The chains' games of a local compare (``run_local``'s ``chain_games``):
    :data:`CHAIN_GAMES` where a seat is a bot file, 0 (each match on its own) for built-in
    strategies alone. A chain's results come back as it ends, so its looks wait for its
    last match (up to half the games played after the look that decides); only a bot's
    process gains from a chain, in round trips (half the referee's CPU a game of
    ``counter.py`` against ``greedy.py``), while built-in strategies are asked in this
    process and gain nothing."""
    return CHAIN_GAMES if any(entrant.file is not None for entrant in entrants) else 0


def _table(rules: Rules, players: int, teams: bool) -> str:
    return f"{rules.name}, {'2v2' if teams else f'{players} players'}"


def _describe(test: RegressionTest) -> str:
    """The test, as the first line shows it."""
    from arena.compete.sprt import statistic_of

    return describe_test(statistic_of(test), test.elo0, test.elo1, test.alpha, test.beta)


def describe_test(statistic: str, elo0: float, elo1: float, alpha: float, beta: float) -> str:
    """A test of ``statistic`` with these parameters, as the first line shows it."""
    parameters = f"elo0={elo0:g} elo1={elo1:g} alpha={alpha:g} beta={beta:g}"
    if statistic == "game":
        return f"game-level SPRT {parameters}"
    return f"margin SPRT {parameters} (point margins less the luck of the draw)"


def _verdict(reading: Reading, played: int) -> int:
    """Print the test's verdict; return the exit status."""
    return _say_verdict(dataclasses.asdict(reading), played)


def _say_verdict(reading: Mapping[str, Any], played: int) -> int:
    """:func:`_verdict` of a reading's figures by name (a :class:`Reading`'s fields)."""
    status: str = reading["status"]
    verdict = {"H1 accepted": ("passed", PASSED), "H0 accepted": ("failed", FAILED)}
    word, code = verdict.get(status, ("undecided: game limit reached", UNDECIDED))
    fast = reading.get("fast_llr") is not None and reading.get("fast_upper") is not None
    if status == "H1 accepted" and fast and reading["llr"] < reading["upper"]:
        status += " by the fast pass"
    click.echo(f"NEW {word} ({status}, {plural(played, 'game')})")
    return code


def _batches(
    entrants: tuple[Entrant, Entrant],
    rules: Rules,
    players: int,
    teams: bool,
    batch: int,
    max_games: int,
    seed: int,
) -> list[list[ScheduledMatch]]:
    """The duplicate-deal matches of each look at the test: the schedule of a compare on
    the workers (:func:`arena.service.compares.compare_schedule`: the same seed deals the
    same games here and there) of the ``entrants`` NEW and OLD here."""
    from arena.compete.compares import compare_schedule

    new, old = entrants
    batches: dict[str, list[ScheduledMatch]] = {}
    for match in compare_schedule(
        rules, players, new=new, old=old, max_games=max_games, batch=batch, seed=seed, teams=teams
    ):
        batches.setdefault(str(match.deal_group), []).append(match)
    return [batches[key] for key in sorted(batches)]


def _batch_of(match: ScheduledMatch) -> int:
    return int(str(match.deal_group)[1:])


def _figures(reading: Reading) -> list[str] | None:
    """:func:`figures` of a reading of the test."""
    return figures(dataclasses.asdict(reading))


def figures(reading: Mapping[str, Any]) -> list[str] | None:
    """NEW's Elo with its 95% interval, LOS, the LLR against its bounds (and the fast
    pass's), padded for a live line, or None (not yet: fewer than two deal groups), from a
    reading's figures by name (a :class:`Reading`'s fields; the API's compare: the same
    names)."""
    if any(reading.get(name) is None for name in ("elo", "low", "high", "los", "llr")):
        return None
    shown = [
        f"Elo {reading['elo']:+7.1f} ({reading['low']:+.1f} to {reading['high']:+.1f})",
        f"LOS {100 * reading['los']:5.1f}%",
        f"LLR {reading['llr']:+6.2f} [{reading['lower']:+.2f}, {reading['upper']:+.2f}]",
    ]
    if reading.get("fast_llr") is not None and reading.get("fast_upper") is not None:
        shown.append(f"fast pass {reading['fast_llr']:+6.2f} [{reading['fast_upper']:+.2f}]")
    return shown


def _progress_line(played: int, reading: Reading, *, final: bool) -> None:
    """The live line: NEW's Elo as the test's statistic estimates it, with its 95%
    interval, LOS, the LLR against its bounds (and the fast pass's LLR against its bound)."""
    _show_progress(played, _figures(reading), final=final)


def _show_progress(played: int, figures: list[str] | None, *, final: bool) -> None:
    """:func:`_progress_line` of a reading's :func:`figures`."""
    if figures is None:
        return
    line = " | ".join([f"games {played:>6}", *figures])
    if sys.stdout.isatty():  # one live line, rewritten after each batch
        click.echo("\r" + line, nl=final)
    elif not final:  # a log: one line per batch
        click.echo(line)


# --- arena compare --remote -----------------------------------------------------------------


def _send_start(
    new: str,
    old: str,
    *,
    rules: Rules,
    players: int,
    teams: bool,
    statistic: str,
    elo0: float,
    elo1: float,
    alpha: float,
    beta: float,
    max_games: int,
    batch: int,
    seed: int,
    move_time: float,
    memory: int,
    allow_same_source: bool,
    url: str | None,
    broker: str | None,
) -> tuple[CompareRequest, bool]:
    """``arena compare --remote``'s request (:mod:`arena.service.compare_start`), sent to the
    workers at once when its rule set is a preset (one from a file is stored by the command
    itself): a worker stores the compare and sends its first batches while this command
    loads the statistics, and checks what it asks for as the command would (the command's
    refusals are the worker's too: it stores nothing for them). Returns the request and
    whether the broker took it."""
    from arena.engine.rules import PRESETS
    from arena.service.compare_start import CompareRequest, send_start

    request = CompareRequest.make(
        new=new, old=old, rules=rules.name, rules_version=rules.version, players=players,
        teams=teams, statistic=statistic, elo0=elo0, elo1=elo1, alpha=alpha, beta=beta,
        max_games=max_games, batch=batch, seed=seed, move_seconds=move_time, memory_mb=memory,
        allow_same_source=allow_same_source,
    )  # fmt: skip
    sent = PRESETS.get(rules.name) == rules and send_start(request, broker, url)
    return request, sent


def compare_remote(
    request: CompareRequest,
    *,
    rules: Rules,
    described: str,
    url: str | None,
    broker: str | None,
    sent: bool = False,
) -> int:
    """``arena compare --remote``: the duplicate deals of ``arena compare`` as a stored
    tournament (format ``compare``), played by the workers a few batches ahead of the test;
    once the test decides, the matches not yet started are void. The compare is the one
    ``request`` asks for: stored by a worker for its start (``sent``: the broker took it,
    :func:`_send_start`), or here. A worker that stored it says so, and the readings the
    workers keep after each match come too, on the broker: the command shows them, and a
    verdict that comes within :data:`~arena.service.compare_start.REPLIES_SECONDS`, without
    loading the store; else (no worker said it stored the compare, or its test goes on) it
    follows the compare in the store (the service's loop,
    :func:`arena.service.compares.follow_compare`). Returns the exit status."""
    header = (
        f"{_table(rules, request.players, request.teams)}: NEW {request.new} against OLD "
        f"{request.old} on the workers, seed {request.seed}, {described} "
        f"(tournament {request.name!r})"
    )
    try:
        code, shown, said = None, -1, False
        if sent:
            code, shown, said = _follow_replies(request, header, url=url, broker=broker)
        if code is not None:
            return code
        return _follow_stored(request, rules, header if not said else None, shown, url, broker)
    finally:
        if sent:  # (the workers' readings this command did not read; interrupted too)
            from arena.service.compare_start import drop_replies

            drop_replies(request, broker, url)


def _follow_replies(
    request: CompareRequest, header: str, *, url: str | None, broker: str | None
) -> tuple[int | None, int, bool]:
    """Follow the compare by the workers' replies
    (:func:`arena.service.compare_start.follow_replies`): say the ``header`` once a worker
    stored it, show its readings, and its verdict if one comes. Return the exit status (None:
    no verdict came; the compare is followed in the store), the games shown, and whether
    the header was said."""
    from arena.service.compare_start import REFUSED, follow_replies

    shown, said = -1, False
    for reply in follow_replies(request, broker, url):
        if reply.kind == "stored":
            click.echo(header)
            said = True
        if reply.kind != "reading" or reply.status == REFUSED or reply.reading is None:
            continue  # (a refused test's sentence is the store's to say)
        try:
            shown_figures = figures(reply.reading)
            status = reply.reading["status"]
        except (KeyError, TypeError, ValueError):  # (not a reading of this code's test)
            continue
        if status not in ("continue", "H0 accepted", "H1 accepted"):
            continue
        if reply.played != shown:  # (as the store's loop shows a step: _followed)
            _show_progress(reply.played, shown_figures, final=False)
            shown = reply.played
        if reply.ended:  # the verdict (the workers voided what the test did not need)
            _show_progress(reply.played, shown_figures, final=True)
            code = _say_verdict(reply.reading, reply.played)
            sys.stdout.flush()
            return code, reply.played, said
    return None, shown, said


def _follow_stored(
    request: CompareRequest,
    rules: Rules,
    header: str | None,
    shown: int,
    url: str | None,
    broker: str | None,
) -> int:
    """Follow the compare ``request`` asks for in the store (stored here if no worker did),
    saying ``header`` first unless None (said already), from ``shown`` games shown."""
    # (not arena.cli.stored's open_store: that module loads the tables, boards and
    # rating fit of the other stored commands, seconds on a loaded machine)
    from arena.service.broker import configure, location
    from arena.service.compares import follow_compare, open_compare, stop_compare
    from arena.service.matches import Config
    from arena.store.db import open_store

    freeze_heap()
    config = Config.from_env()
    configure(broker, config, url)

    with contextlib.closing(open_store(url)) as store:
        try:
            tournament_id, _ = open_compare(store, request, rules)
        except (LookupError, ValueError) as exc:
            raise UsageError(str(exc)) from None
        if header is not None:
            click.echo(header)
        code, warned = UNDECIDED, [False, False]
        steps = follow_compare(store, tournament_id, config=config)
        for number, step in enumerate(steps):
            if number == 0 and not step.sent:  # nothing is on its way: say so and stop
                stop_compare(store, tournament_id, "the broker could not be reached")
                raise UnavailableError(f"cannot reach the broker {location()}")
            shown = _followed(step, shown, warned)
            if step.done:  # the verdict at once (the loop then voids what is left)
                _progress_line(step.state.played, step.state.reading, final=True)
                if step.stopped is not None:  # cancelled from elsewhere: no verdict to wait for
                    code = _stopped(step.stopped, step.state.reading, step.state.played)
                else:
                    code = _verdict(step.state.reading, step.state.played)
                sys.stdout.flush()
    return code


def _stopped(why: str, reading: Reading, played: int) -> int:
    """Say that the compare on the workers ended before its test decided (``why``: e.g.
    ``cancelled by alice``), with the games played and the figures so far; return
    :data:`UNDECIDED`."""
    figures = _figures(reading)
    so_far = ": " + ", ".join(" ".join(f.split()) for f in figures) if figures else ""
    click.echo(
        f"NEW undecided: the compare ended before its test decided ({why}), after "
        f"{plural(played, 'game')} in complete deals{so_far}"
    )
    return UNDECIDED


def _followed(step: CompareStep, shown: int, warned: list[bool]) -> int:
    """Show a step of the compare: its progress line when more games are in, and, once
    each, that the broker cannot be reached or that no worker is alive; return the games
    shown."""
    from arena.service.broker import location

    played = step.state.played
    if played != shown:
        _progress_line(played, step.state.reading, final=False)
    if not step.sent or step.sweep is not None:
        reason = f": {step.sweep}" if step.sweep is not None else ""
        warn_once(warned, 1, f"cannot reach the broker {location()}{reason}; trying again")
    if step.workers is False:
        warn_once(
            warned,
            0,
            "no worker is alive to play the matches: start one with `arena worker` "
            "(same database and broker)",
        )
    return played
