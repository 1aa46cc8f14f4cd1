"""Built-in strategies, the local runner and its summary (arena.match.strategies and
arena.match.play)."""

from __future__ import annotations

import dataclasses
import json
import random

import pytest

from arena.engine.events import Outcome, Termination
from arena.engine.game import Game
from arena.engine.observation import Observation
from arena.engine.rules import PRESETS, Rules, find_rules
from arena.engine.tiles import Move
from arena.errors import IllegalMoveError, ParseError, RulesError
from arena.match import play as play_module
from arena.match.play import (
    Summary,
    game_seeds,
    iter_game_seeds,
    make_strategies,
    play_game,
    play_games,
    strategy_rng,
)
from arena.match.strategies import (
    STRATEGIES,
    GreedyStrategy,
    RandomStrategy,
    Strategy,
    make_strategy,
)

DRAW = find_rules("draw")


def first_move(observation: Observation, /) -> Move:
    """A plain function is a strategy too."""
    return observation.legal_moves[0]


def some_observation() -> Observation:
    """An observation at the second turn of a draw game (the lead has been played)."""
    game = Game(DRAW, 2, seed=3)
    game.apply(game.legal_moves()[0])
    seat = game.seat
    assert seat is not None
    return game.observation(seat)


# --- strategies -------------------------------------------------------------------------


def test_registry_names_the_built_in_strategies() -> None:
    assert list(STRATEGIES) == ["random", "greedy"]
    assert isinstance(make_strategy("random", random.Random(1)), RandomStrategy)
    assert isinstance(make_strategy("greedy", random.Random(1)), GreedyStrategy)


def test_unknown_strategy_is_a_parse_error_naming_the_choices() -> None:
    with pytest.raises(ParseError, match=r"unknown strategy 'x' \(built-in: random, greedy\)"):
        make_strategy("x", random.Random(1))


def test_greedy_plays_the_heaviest_tile_first_in_legal_order_on_ties() -> None:
    observation = some_observation()
    tied = tuple(Move.parse(text) for text in ("2-1L", "4-2L", "4-2R", "5-1R", "3-0L"))
    choice = GreedyStrategy()(dataclasses.replace(observation, legal_moves=tied))
    assert choice == Move.parse("4-2L")
    single = (Move.parse("6-6"),)
    assert GreedyStrategy()(dataclasses.replace(observation, legal_moves=single)) == single[0]


def test_greedy_choices_over_whole_games() -> None:
    """At every turn greedy's move is legal, heaviest, and the first such in legal order."""
    checked = 0
    greedy = GreedyStrategy()

    def checking(observation: Observation, /) -> Move:
        nonlocal checked
        move = greedy(observation)
        legal = observation.legal_moves
        heaviest = max(m.tile.pips for m in legal)
        assert move.tile.pips == heaviest
        assert move == next(m for m in legal if m.tile.pips == heaviest)
        checked += 1
        return move

    for seed in range(5):
        play_game(DRAW, [checking, checking, checking], seed=seed)
    assert checked > 100


def test_random_is_uniform_among_legal_moves_and_reproducible() -> None:
    observation = some_observation()
    moves = tuple(Move.parse(text) for text in ("2-1L", "4-2L", "4-2R", "5-1R"))
    view = dataclasses.replace(observation, legal_moves=moves)
    picks = [RandomStrategy(random.Random(5))(view) for _ in range(3)]
    assert len(set(picks)) == 1  # same seed, same pick
    strategy = RandomStrategy(random.Random(5))
    counts = {move: 0 for move in moves}
    for _ in range(4000):
        counts[strategy(view)] += 1
    assert all(800 < count < 1200 for count in counts.values()), counts


def test_strategies_satisfy_the_protocol() -> None:
    strategies: list[Strategy] = [first_move, GreedyStrategy(), RandomStrategy(random.Random(0))]
    game = play_game(DRAW, strategies, seed=11)
    assert game.is_terminal()


# --- seeds ----------------------------------------------------------------------------


def test_game_seeds_are_derived_deterministically() -> None:
    seeds = game_seeds(7, 100)
    assert seeds[0] == 7  # game 0 plays with the run's seed itself
    assert seeds == game_seeds(7, 100)
    assert game_seeds(7, 10) == seeds[:10]
    assert len(set(seeds)) == 100
    assert all(0 <= seed < 2**63 for seed in seeds)
    assert game_seeds(8, 100)[1:] != seeds[1:]
    assert game_seeds(7, 0) == []
    with pytest.raises(ValueError, match="games"):
        game_seeds(7, -1)
    with pytest.raises(ValueError, match="games"):
        iter_game_seeds(7, -1)  # at once, not at the first seed
    assert list(iter_game_seeds(7, 100)) == seeds


def test_a_long_run_derives_each_games_seed_as_it_plays_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``arena play --games 1000000`` plays its first game at once (all its seeds first
    were 1.4 s of hashes)."""
    derived: list[str] = []
    real = play_module._derive

    def counting(tag: str, *parts: int | str) -> int:
        derived.append(tag)
        return real(tag, *parts)

    monkeypatch.setattr(play_module, "_derive", counting)
    games = play_games(find_rules("draw"), ["random", "greedy"], games=1_000_000, seed=7)
    next(games)
    next(games)
    assert derived.count("game") == 1  # game 0 plays with the run's seed itself


def test_strategy_rngs_depend_on_game_seed_and_seat() -> None:
    def draws(game_seed: int, seat: int) -> list[float]:
        rng = strategy_rng(game_seed, seat)
        return [rng.random() for _ in range(3)]

    assert draws(5, 0) == draws(5, 0)
    assert draws(5, 0) != draws(5, 1)
    assert draws(5, 0) != draws(6, 0)


# --- play_game ------------------------------------------------------------------------


def test_play_game_asks_a_built_in_strategy_for_the_move_its_call_gives() -> None:
    """play_game asks a built-in seat's choose() (no observation built): the same game as
    the same strategies asked through their calls (wrapped, so not seen as built-in)."""
    names = ["random", "greedy", "random"]

    def wrapped(strategy: Strategy) -> Strategy:
        return lambda observation: strategy(observation)

    for seed in (5, 6):
        fast = play_game(DRAW, make_strategies(names, seed), seed=seed)
        slow = play_game(DRAW, [wrapped(s) for s in make_strategies(names, seed)], seed=seed)
        assert events_of(fast) == events_of(slow) and fast.outcome() == slow.outcome()


def events_of(game: Game) -> list[list[object]]:
    return [list(round_.events) for round_ in game.rounds]


def test_play_game_same_seed_same_game_different_seed_different() -> None:
    def play(seed: int) -> Game:
        return play_game(DRAW, make_strategies(["random", "greedy", "random"], seed), seed=seed)

    first, again, other = play(42), play(42), play(43)
    assert first.seed == 42
    assert events_of(first) == events_of(again)
    assert first.outcome() == again.outcome()
    assert events_of(first) != events_of(other)


@pytest.mark.parametrize("rules", PRESETS.values(), ids=list(PRESETS))
def test_every_preset_plays_to_the_end_for_every_player_count(rules: Rules) -> None:
    setups = [(players, False) for players in rules.players]
    if rules.team_play:
        setups.append((4, True))
    for players, teams in setups:
        game = play_game(rules, make_strategies(["random"] * players, 9), teams=teams, seed=9)
        outcome = game.outcome()
        assert outcome is not None and outcome.termination is Termination.TARGET
        assert all(round_.result is not None for round_ in game.rounds)


def test_an_illegal_answer_raises_naming_strategy_and_seat() -> None:
    def stubborn(observation: Observation, /) -> Move:
        return Move.parse("0-0L")

    with pytest.raises(IllegalMoveError, match=r"strategy 'stubborn' \(seat 1\) chose"):
        play_game(DRAW, [first_move, stubborn], seed=1)


def test_an_answer_that_is_not_a_move_is_illegal() -> None:
    class Confused:
        name = "confused"

        def __call__(self, observation: Observation, /) -> Move:
            return str(observation.legal_moves[0])  # type: ignore[return-value]

    with pytest.raises(IllegalMoveError, match=r"strategy 'confused' \(seat 0\)"):
        play_game(DRAW, [Confused(), first_move], seed=1)


def test_play_game_checks_the_setup() -> None:
    with pytest.raises(RulesError, match="not 5"):
        play_game(DRAW, [first_move] * 5, seed=1)
    with pytest.raises(RulesError, match="team"):
        play_game(DRAW, [first_move] * 4, teams=True, seed=1)


def test_play_games_checks_the_setup_before_playing() -> None:
    with pytest.raises(ParseError, match="unknown strategy"):
        play_games(DRAW, ["random", "nope"], games=3, seed=1)
    with pytest.raises(RulesError):
        play_games(DRAW, ["random"], games=3, seed=1)


def test_play_games_plays_the_derived_seeds() -> None:
    games = list(play_games(DRAW, ["random", "greedy"], games=4, seed=99))
    assert [game.seed for game in games] == game_seeds(99, 4)
    alone = play_game(
        DRAW, make_strategies(["random", "greedy"], games[2].seed), seed=games[2].seed
    )
    assert events_of(alone) == events_of(games[2])  # a game's own seed reproduces it


def test_records_are_identical_for_the_same_seed() -> None:
    from arena.engine.records import game_record

    names = ["random", "greedy", "greedy"]

    def lines(seed: int) -> list[str]:
        games = play_games(DRAW, names, games=5, seed=seed)
        return [json.dumps(game_record(game, names)) for game in games]

    assert lines(7) == lines(7)
    assert lines(7) != lines(8)


# --- summary --------------------------------------------------------------------------


def outcome_of(game: Game) -> Outcome:
    outcome = game.outcome()
    assert outcome is not None
    return outcome


def summarise(rules: Rules, names: list[str], *, teams: bool = False) -> tuple[Summary, list[Game]]:
    games = list(play_games(rules, names, games=30, seed=5, teams=teams))
    summary = Summary(names, teams=teams)
    for game in games:
        summary.add(game)
    return summary, games


@pytest.mark.parametrize("preset", ["draw", "block", "muggins", "wooden"])
def test_summary_adds_up_to_the_games(preset: str) -> None:
    names = ["random", "greedy", "random"]
    summary, games = summarise(find_rules(preset), names)
    results = [r.result for game in games for r in game.rounds if r.result is not None]
    assert summary.games == 30
    assert summary.rounds == len(results) == sum(len(game.rounds) for game in games)
    assert summary.blocked == sum(r.termination is Termination.BLOCKED for r in results)
    assert summary.drawn == sum(r.winner is None for r in results)
    assert sum(seat.games_won for seat in summary.seats) == 30
    for seat, figures in enumerate(summary.seats):
        assert figures.name == names[seat]
        assert figures.rounds == summary.rounds
        # Round points add up to the final scores (in-play points included).
        final = sum(outcome_of(game).scores[seat] for game in games)
        assert figures.points == final
        assert figures.points_per_round == pytest.approx(final / summary.rounds)
        won = sum(seat in outcome_of(game).winners for game in games)
        assert figures.games_won == won
        assert summary.win_rate(seat) == pytest.approx(won / 30)


def test_summary_in_team_play_shows_each_seat_its_teams_figures() -> None:
    summary, games = summarise(find_rules("muggins"), ["greedy", "random"] * 2, teams=True)
    zero, one, two, three = summary.seats
    assert (zero.games_won, zero.points) == (two.games_won, two.points)
    assert (one.games_won, one.points) == (three.games_won, three.points)
    assert zero.games_won + one.games_won == 30
    team_points = [sum(outcome_of(game).scores[t] for game in games) for t in (0, 1)]
    assert [zero.points, one.points] == team_points


def test_summary_skips_the_round_a_forfeit_interrupted() -> None:
    game = Game(DRAW, 2, seed=4)
    while len(game.rounds) < 2:
        game.apply(game.legal_moves()[0])
    game.apply(game.legal_moves()[0])
    game.forfeit(1, Termination.TIMEOUT)
    summary = Summary(["a", "b"])
    summary.add(game)
    assert (summary.games, summary.rounds) == (1, 1)
    assert [seat.games_won for seat in summary.seats] == [1, 0]


def test_summary_refuses_unfinished_or_mismatched_games() -> None:
    summary = Summary(["a", "b"])
    with pytest.raises(ValueError, match="not over"):
        summary.add(Game(DRAW, 2, seed=1))
    with pytest.raises(ValueError, match="3-player"):
        summary.add(play_game(DRAW, [first_move] * 3, seed=1))
    assert summary.win_rate(0) == 0.0
    assert summary.seats[0].points_per_round == 0.0


def test_greedy_beats_random_in_two_player_draw() -> None:
    """Over 200 games, half with greedy in each seat, greedy wins clearly more often."""
    greedy_wins = 0
    for names, greedy_seat in ((["greedy", "random"], 0), (["random", "greedy"], 1)):
        summary = Summary(names)
        for game in play_games(DRAW, names, games=100, seed=2024 + greedy_seat):
            summary.add(game)
        greedy_wins += summary.seats[greedy_seat].games_won
    assert greedy_wins >= 110, greedy_wins  # measured: about 115-120 of 200


@pytest.mark.parametrize("name", sorted(STRATEGIES))
def test_a_built_in_strategy_chooses_from_the_legal_moves_as_it_plays(name: str) -> None:
    """choose() (what the referee asks, without an observation) is the strategy's call."""
    called, chosen = make_strategy(name, random.Random(4)), make_strategy(name, random.Random(4))
    game = Game(DRAW, 3, seed=8)
    while (seat := game.seat) is not None:
        move = called(game.observation(seat))
        assert chosen.choose(game.legal_moves()) is move
        game.apply(move)
