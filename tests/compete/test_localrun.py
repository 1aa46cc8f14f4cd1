"""The local tournament runner: places, a sandboxed round robin in 2 processes, standings."""

from __future__ import annotations

import dataclasses
import os
import threading
from collections import Counter
from typing import Any

import pytest

from arena.compete import localrun
from arena.compete.compares import compare_schedule, deal_groups
from arena.compete.entrants import Entrant
from arena.compete.localrun import (
    MatchResult,
    Standings,
    by_deal,
    finishing_places,
    play_one,
    run_local,
)
from arena.compete.margins import LUCK_TERMS, seat_lucks
from arena.compete.tournaments import Match, schedule
from arena.engine.events import Outcome, Termination
from arena.engine.records import verify_record, without_times
from arena.engine.rules import find_rules
from arena.match import referee
from arena.match.referee import InfrastructureError
from arena.match.sandbox import check_sandbox
from tests.paths import DOCS, ZOO, own_slot

BOT = str(ZOO / "first.py")
FIRST = Entrant.bot_file(BOT)  # labelled "first"
SLOT = own_slot(200)  # first sandbox slot of these tests
DRAW = find_rules("draw")
T, F = Termination.TARGET, Termination.CRASH


@pytest.mark.parametrize(
    ("outcome", "sides", "forfeit", "places"),
    [
        (Outcome(T, (1,), (40, 100)), (0, 1), None, (1, 0)),
        (Outcome(F, (1,), (80, 20)), (0, 1), 0, (1, 0)),
        (Outcome(T, (2,), (10, 30, 100, 30)), (0, 1, 2, 3), None, (3, 1, 0, 1)),
        (Outcome(F, (0, 2, 3), (50, 0, 20, 60)), (0, 1, 2, 3), 1, (1, 3, 2, 0)),
        (Outcome(T, (1, 3), (70, 150)), (0, 1, 0, 1), None, (1, 0, 1, 0)),
        (Outcome(F, (0, 2), (10, 90)), (0, 1, 0, 1), 3, (0, 1, 0, 1)),
        (Outcome(T, (0,), (61, 5, 5, 5, 9)), (0, 1, 2, 3, 4), None, (0, 2, 2, 2, 1)),
    ],
)
def test_finishing_places(
    outcome: Outcome, sides: tuple[int, ...], forfeit: int | None, places: tuple[int, ...]
) -> None:
    assert finishing_places(outcome, sides, forfeit) == places


def _check_consistent(results: list[MatchResult], standings: Standings) -> None:
    """Standings and crosstable agree with the games; every record verifies."""
    wins: Counter[str] = Counter()
    games: Counter[str] = Counter()
    for result in results:
        for game in result.games:
            assert verify_record(game.record) == []
            assert game.record["seats"] == [e.label for e in result.match.seats]
            assert game.record["seed"] == game.seed
            for seat, entrant in enumerate(result.match.seats):
                games[entrant.label] += 1
                wins[entrant.label] += game.places[seat] == 0
    assert standings.games == sum(len(r.games) for r in results)
    for label, stats in standings.stats.items():
        assert (stats.games, stats.wins) == (games[label], wins[label])
        for other in standings.stats:
            if other != label:
                met = standings.met[label].get(other, 0)
                assert standings.score(label, other) + standings.score(other, label) == met


def untimed(result: MatchResult) -> MatchResult:
    """``result`` without its records' decision times, which differ from run to run."""
    games = tuple(dataclasses.replace(g, record=without_times(g.record)) for g in result.games)
    return dataclasses.replace(result, games=games)


@pytest.mark.skipif(bool(check_sandbox()), reason="no sandbox here")
def test_sandboxed_round_robin_in_two_processes_matches_one_process() -> None:
    entrants = [Entrant.parse("random"), Entrant.parse("greedy"), Entrant.parse(BOT)]
    matches = schedule("round-robin", entrants, rules=DRAW, players=2, games_per_match=4, seed=9)
    assert len(matches) == 6
    pooled = list(run_local(matches, DRAW, workers=2, sandboxed=True, first_slot=SLOT))
    single = list(run_local(matches, DRAW, workers=1, sandboxed=True, first_slot=SLOT))
    assert {r.worker for r in pooled} != {os.getpid()} and len({r.worker for r in pooled}) == 2
    assert {r.worker for r in single} == {os.getpid()}
    assert [r.id for r in single] == [m.id for m in matches]
    # The same games either way; only the decisions' times (in the records) differ.
    assert [untimed(r) for r in sorted(pooled, key=lambda r: r.id)] == [untimed(r) for r in single]
    standings = Standings(e.label for e in entrants)
    for result in pooled:
        standings.add(result)
    assert standings.matches == 6 and standings.games == 12 and not standings.void
    _check_consistent(pooled, standings)
    assert sum(s.wins for s in standings.stats.values()) == 12  # one winner a 2-player game
    assert standings.met["random"]["greedy"] == 4  # games per pairing
    assert (
        standings.ahead["random"]["greedy"]
        == standings.stats["random"].wins - (standings.ahead["random"][FIRST.label])
    )
    assert [s.games for s in standings.ranking()] == [8, 8, 8]


def test_duplicate_multiplayer_groups_share_their_deals() -> None:
    entrants = [Entrant.parse(e) for e in ("a=random", "b=greedy", "c=random", "d=greedy")]
    matches = schedule("duplicate", entrants, rules=DRAW, players=3, games_per_match=2, seed=3)
    results = list(run_local(matches, DRAW, workers=1))
    groups = by_deal(results)
    assert len(groups) == 4 * 2  # 4 tables, 2 games each
    for rotations in groups.values():
        assert sorted(rotations) == [0, 1, 2]
        first_deals = {str(g.record["rounds"][0]["deal"]) for g in rotations.values()}
        assert len(first_deals) == 1
    standings = Standings(e.label for e in entrants)
    for result in results:
        standings.add(result)
    _check_consistent(results, standings)
    assert sum(s.places for s in standings.stats.values()) >= standings.games  # 0 + 1 + 2 or ties
    # Duplicate games carry every seat's luck of the draw, computed where they were played.
    for game in (game for result in results for game in result.games):
        lucks = seat_lucks(game.record)
        assert len(game.luck) == 3 and all(len(luck) == len(LUCK_TERMS) for luck in game.luck)
        for kept, exact in zip(game.luck, lucks, strict=True):
            assert kept == pytest.approx(exact, abs=1e-6)
    plain = schedule("round-robin", entrants[:2], rules=DRAW, players=2, games_per_match=2, seed=3)
    assert all(not g.luck for r in run_local(plain, DRAW, workers=1) for g in r.games)


def test_team_games_count_each_entrant_once() -> None:
    muggins = find_rules("muggins")
    matches = schedule(
        "duplicate", [Entrant.builtin("random"), Entrant.builtin("greedy")], rules=muggins,
        players=4, teams=True, games_per_match=2, seed=1,
    )  # fmt: skip
    results = list(run_local(matches, muggins, workers=1))
    standings = Standings()
    for result in results:
        standings.add(result)
    assert standings.stats["random"].games == standings.stats["greedy"].games == 4
    assert standings.stats["random"].wins + standings.stats["greedy"].wins == 4
    assert standings.met["random"]["greedy"] == 4
    for result in results:
        for game in result.games:
            assert game.places[0] == game.places[2] and game.points[1] == game.points[3]


def test_infrastructure_error_names_the_match_and_void_is_not_counted(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise InfrastructureError("the sandbox would not start")

    matches = schedule("round-robin", [Entrant.builtin("random"), Entrant.builtin("greedy")],
                       rules=DRAW, players=2, games_per_match=2, seed=1)  # fmt: skip
    monkeypatch.setattr(localrun, "play_match", broken)
    monkeypatch.setattr(localrun, "RETRY_SECONDS", 0.0)
    with pytest.raises(InfrastructureError, match=r"match r0000-0: the sandbox would not start"):
        list(run_local(matches, DRAW, workers=1))
    results = list(run_local(matches, DRAW, workers=1, keep_going=True))
    standings = Standings(["random", "greedy"])
    for result in results:
        standings.add(result)
    reason = "the sandbox would not start (played 3 times)"
    assert [r.void for r in results] == [reason] * 2
    assert standings.games == 0 and standings.matches == 0
    assert standings.void == [(m.id, reason) for m in matches]


def test_the_docs_example_runs() -> None:
    text = (DOCS / "tournaments.md").read_text(encoding="utf-8")
    example = text.split("```python\n", 1)[1].split("```", 1)[0]
    exec(compile(example, "docs/tournaments.md", "exec"), {})


def test_play_one_and_bad_arguments() -> None:
    match = schedule("round-robin", [Entrant.builtin("random"), Entrant.builtin("greedy")],
                     rules=DRAW, players=2, games_per_match=3, seed=2)[0]  # fmt: skip
    result = play_one(match, DRAW)
    assert [g.index for g in result.games] == list(range(match.games))
    assert result.void is None
    with pytest.raises(ValueError, match="workers"):
        list(run_local([match], DRAW, workers=0))
    with pytest.raises(ValueError, match="neither a built-in strategy"):
        seats = (Entrant.builtin("random"), Entrant.bot_file("nope.py"))
        list(run_local([match.__class__("x", seats, 1, 1)], DRAW))


def test_chained_matches_play_the_games_of_each_match_alone() -> None:
    """Matches played as chains (several matches' games in one referee session) give each
    match the very games it gives alone, luck included; a void chain is played again match
    by match."""
    entrants = [Entrant.builtin("random"), Entrant.builtin("greedy")]
    matches = schedule("duplicate", entrants, rules=DRAW, players=2, games_per_match=3, seed=5)
    matches += [
        dataclasses.replace(m, id=f"{tag}{m.id}", seed=m.seed + step)
        for tag, step in (("x", 1), ("y", 2))
        for m in matches
    ]
    chains = localrun._chains(matches, 6)
    assert sorted(m.id for chain in chains for m in chain) == sorted(m.id for m in matches)
    assert max(len(chain) for chain in chains) == 2  # 3 games, then up to 6
    for chain in chains:
        assert len({(m.seats, m.teams) for m in chain}) == 1
    alone = {r.id: r for r in run_local(matches, DRAW, workers=1)}
    chained = {r.id: r for r in run_local(matches, DRAW, workers=1, chain_games=6)}
    assert chained.keys() == alone.keys()
    for key, result in alone.items():
        assert [without_times(g.record) for g in chained[key].games] == [
            without_times(g.record) for g in result.games
        ]
        assert [g.luck for g in chained[key].games] == [g.luck for g in result.games]
        assert [g.index for g in chained[key].games] == list(range(3))
    no_luck = list(run_local(matches, DRAW, workers=1, chain_games=6, luck=False))
    assert all(not g.luck for r in no_luck for g in r.games)
    with pytest.raises(ValueError, match="same seats"):
        localrun.play_chain([matches[0], matches[1]], DRAW)


def test_a_void_chain_is_played_again_match_by_match(monkeypatch: pytest.MonkeyPatch) -> None:
    entrants = [Entrant.builtin("random"), Entrant.builtin("greedy")]
    matches = schedule("duplicate", entrants, rules=DRAW, players=2, games_per_match=2, seed=5)
    matches += [
        dataclasses.replace(m, id=f"{tag}{m.id}", seed=m.seed + step)
        for tag, step in (("x", 1), ("y", 2))
        for m in matches
    ]
    real = referee.play_match
    calls: list[int] = []

    def flaky(*args: Any, **kwargs: Any) -> Any:
        calls.append(kwargs["games"])
        if kwargs.get("seeds") is not None:
            raise InfrastructureError("the sandbox would not start")
        return real(*args, **kwargs)

    monkeypatch.setattr(localrun, "play_match", flaky)
    monkeypatch.setattr(localrun, "RETRY_SECONDS", 0.0)
    results = list(run_local(matches, DRAW, workers=1, chain_games=4))
    assert all(r.void is None and len(r.games) == 2 for r in results)
    assert sorted(r.id for r in results) == sorted(m.id for m in matches)
    assert 4 in calls  # a chain was tried, then its matches alone


def test_closing_a_runs_results_early_stops_its_pools_matches() -> None:
    """A caller that stops reading before the last result (a decided compare) stops the
    pool's matches: what has not begun is refused with MatchStopped, not played on."""
    entrants = [Entrant.builtin("random"), Entrant.builtin("greedy")]
    matches = schedule("round-robin", entrants, rules=DRAW, players=2, games_per_match=2, seed=3)
    pool = localrun.process_pool(2)
    try:
        results = run_local(matches * 20, DRAW, pool=pool, sandboxed=False)
        next(results)
        results.close()
        with pytest.raises(localrun.MatchStopped):  # (the pool is only good for shutting down)
            list(run_local(matches[:1], DRAW, pool=pool, sandboxed=False))
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


@pytest.mark.parametrize(("players", "teams"), [(2, False), (3, False), (4, True)])
def test_a_compare_reads_the_same_groups_without_the_records(players: int, teams: bool) -> None:
    rules = find_rules("muggins") if teams else DRAW
    matches = compare_schedule(
        rules, players, new=Entrant.builtin("greedy"), old=Entrant.builtin("random"),
        max_games=24, batch=4, seed=7, teams=teams,
    )  # fmt: skip
    kept = list(run_local(matches, rules, workers=1))
    bare = list(run_local(matches, rules, workers=1, records=False))
    assert all(g.record for r in kept for g in r.games)
    assert not any(g.record for r in bare for g in r.games)
    assert [g.luck for r in bare for g in r.games] == [g.luck for r in kept for g in r.games]
    assert deal_groups(bare) == deal_groups(kept)


@pytest.mark.parametrize("others", [False, True])
def test_a_pool_forks_its_processes_at_once_only_from_a_single_thread(
    monkeypatch: pytest.MonkeyPatch, others: bool
) -> None:
    """A pool forks every process as it starts when this process runs one thread, else
    starts them from a fork server (a fork copies no other thread's locks)."""
    if others:  # another thread alive as the pool starts
        monkeypatch.setattr(threading, "active_count", lambda: 2)
    single = threading.active_count() == 1
    entrants = [Entrant.builtin("random"), Entrant.builtin("greedy")]
    matches = schedule("round-robin", entrants, rules=DRAW, players=2, games_per_match=2, seed=3)
    pool = localrun.process_pool(2)
    try:
        assert pool._mp_context is not None
        assert pool._mp_context.get_start_method() == ("fork" if single else "forkserver")
        assert len(pool._processes) == 2  # (before any match)
        results = list(run_local(matches, DRAW, pool=pool, sandboxed=False))
        assert sorted(r.id for r in results) == sorted(m.id for m in matches)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _stopped_at(question: int, *, in_flight: bool) -> tuple[int, list[Any]]:
    """Play a 64-game match of built-in seats whose stop is set at its ``question``-th
    question (``in_flight``: the referee's games in flight, not a game at a time); it must
    raise MatchStopped. Return how often the stop was asked and the games that ended."""
    entrants = [Entrant.builtin("random"), Entrant.builtin("greedy")]
    match = schedule("round-robin", entrants, rules=DRAW, players=2, games_per_match=64, seed=3)[0]
    stop, asked = threading.Event(), 0

    class Counted:  # the stop, set at that question
        def is_set(self) -> bool:
            nonlocal asked
            asked += 1
            if asked == question:
                stop.set()
            return stop.is_set()

    real, ended = referee.play_match, []

    def counted(*args: Any, **kwargs: Any) -> Any:
        for outcome in real(*args, **kwargs):
            ended.append(outcome)
            yield outcome

    with pytest.MonkeyPatch.context() as patch, pytest.raises(localrun.MatchStopped):
        patch.setattr(localrun, "play_match", counted)
        if in_flight:  # (built-in seats alone are played a game at a time)
            patch.setattr(referee, "StrategyPlayer", type("NotBuiltIn", (), {}))
        localrun.play_one(match, DRAW, sandboxed=False, stop=Counted())  # type: ignore[arg-type]
    return asked, ended


def test_a_stop_set_mid_chain_ends_its_games_in_flight_between_two_moves() -> None:
    """The stop is asked between two moves, not only as a game ends: a chain whose games
    all play at once (no game has ended when the stop comes) stops with MatchStopped
    after a few moves, its bots closed."""
    asked, ended = _stopped_at(5, in_flight=True)
    assert asked == 5 and ended == []  # asked before each step; no game had ended


def test_a_stop_ends_a_match_of_built_in_seats_before_its_next_game() -> None:
    """Built-in seats alone play a game at a time (referee._play_builtins): the stop is
    asked before each game, and the games ended before it are all that was played."""
    _, ended = _stopped_at(3, in_flight=False)
    assert [outcome.index for outcome in ended] == [0]  # (play_chain asks once a game too)


def test_a_stop_set_once_every_game_has_ended_keeps_the_results() -> None:
    entrants = [Entrant.builtin("random"), Entrant.builtin("greedy")]
    match = schedule("round-robin", entrants, rules=DRAW, players=2, games_per_match=4, seed=3)[0]
    stop = threading.Event()
    real = referee.play_match

    def then_stop(*args: Any, **kwargs: Any) -> Any:
        yield from real(*args, **kwargs)
        stop.set()  # (after the last game, before play_chain looks)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(localrun, "play_match", then_stop)
        result = localrun.play_one(match, DRAW, sandboxed=False, stop=stop)
    assert result.void is None and len(result.games) == match.games > 1


def test_a_pool_is_given_a_few_chains_a_process_at_a_time_in_schedule_order() -> None:
    """A long schedule is not submitted whole: a pool has at most CHAINS_AHEAD chains a
    process submitted and not done, in schedule order, and plays every match once, as this
    process plays them."""
    matches = compare_schedule(
        DRAW, 2, new=Entrant.builtin("greedy"), old=Entrant.builtin("random"),
        max_games=60, batch=1, seed=5,
    )  # fmt: skip
    assert len(matches) == 60  # (30 batches of a deal group: a match a seat rotation)
    pool = localrun.process_pool(2)
    submitted: list[str] = []
    pending: set[str] = set()
    most = 0

    def submit(function: Any, chain: list[Match], *args: Any) -> Any:
        nonlocal most
        future = type(pool).submit(pool, function, chain, *args)
        submitted.append(chain[0].id)
        pending.add(chain[0].id)
        most = max(most, len(pending))
        future.add_done_callback(lambda _: pending.discard(chain[0].id))
        return future

    try:
        pool.submit = submit  # type: ignore[method-assign,assignment]
        pooled = list(run_local(matches, DRAW, pool=pool, sandboxed=False))
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    assert submitted == [m.id for m in matches]
    assert most == 2 * localrun.CHAINS_AHEAD
    assert sorted(pooled, key=lambda r: r.id) == sorted(
        run_local(matches, DRAW, workers=1), key=lambda r: r.id
    )
