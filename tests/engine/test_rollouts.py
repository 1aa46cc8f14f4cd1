"""Round.greedy_points: the luck of the draw's rollout on the round's bitmasks, equal to
playing a copy of the round on with greedy at every seat, on every preset and player count."""

from __future__ import annotations

import itertools
import random

import pytest

from arena.engine.events import Draw, Event, Play
from arena.engine.round import Round
from arena.engine.rules import PRESETS, GameEnd
from arena.engine.tiles import Move, Tile
from arena.errors import DealError, IllegalMoveError
from arena.match.strategies import heaviest
from tests.engine.test_conformance import CONFIGS, config_id


def _played_on(round_: Round, move: Move, rest: list[Tile] | None = None) -> tuple[int, ...]:
    """The reference: a copy of the round, ``move``, then greedy to the end."""
    copy = round_.copy(rest)
    copy.apply(move)
    while (result := copy.result) is None:
        copy.apply(heaviest(copy.legal_moves()))
    return result.points


def _start_scores(name: str, players: int, teams: bool, rng: random.Random) -> list[int]:
    """Scores before the round: near the target half the time, so that in-play points
    may win the game mid-round."""
    rules = PRESETS[name]
    sides = 2 if teams else players
    if rules.end is not GameEnd.POINTS or rng.random() < 0.5:
        return [0] * sides
    return [rules.wins_needed - rng.randrange(1, 12) for _ in range(sides)]


@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
def test_greedy_points_are_the_rounds_played_on_with_greedy(
    config: tuple[str, int, bool],
) -> None:
    name, players, teams = config
    rules = PRESETS[name]
    compared = 0
    for seed in range(12):
        rng = random.Random(seed)
        scores = _start_scores(name, players, teams, rng)
        round_ = Round.dealt(rules, players, rng, teams=teams, scores=scores)
        while round_.result is None:
            before = (round_.events, round_.scores, round_.legal_moves(), round_.boneyard)
            for move in round_.legal_moves():
                assert round_.greedy_points(move) == _played_on(round_, move)
                rest = list(round_.boneyard)
                rng.shuffle(rest)
                assert round_.greedy_points(move, rest) == _played_on(round_, move, rest)
                compared += 2
                if len(rest) > 1:  # a swap of two undrawn places: that order as a rest
                    i, j = rng.sample(range(len(rest)), 2)
                    order = list(round_.boneyard)
                    order[i], order[j] = order[j], order[i]
                    assert round_.greedy_points(move, swap=(i, j)) == _played_on(
                        round_, move, order
                    )
                    compared += 1
            after = (round_.events, round_.scores, round_.legal_moves(), round_.boneyard)
            assert after == before  # the round itself is left alone
            round_.apply(rng.choice(round_.legal_moves()))
    assert compared > 100


def test_greedy_points_refuse_what_apply_and_copy_refuse() -> None:
    round_ = Round.dealt(PRESETS["draw"], 2, random.Random(3))
    legal = round_.legal_moves()
    held = round_.hand(round_.seat or 0)
    illegal = next(Move.of(tile) for tile in held if Move.of(tile) not in legal)
    with pytest.raises(IllegalMoveError):
        round_.greedy_points(illegal)
    round_.apply(legal[0])
    rest = list(round_.boneyard)
    with pytest.raises(DealError, match="undrawn tiles"):
        round_.greedy_points(round_.legal_moves()[0], rest[1:])
    with pytest.raises(DealError, match="two places of 0 to"):
        round_.greedy_points(round_.legal_moves()[0], swap=(0, len(rest)))
    with pytest.raises(DealError, match="no other order"):
        round_.greedy_points(round_.legal_moves()[0], rest, swap=(0, 1))


def test_a_hands_pips_by_table_are_the_sum_of_its_tiles() -> None:
    """_pips_of reads a hand's pips from tables of tile-id chunks (a rollout's end reads
    every hand): the sum of its tiles' pips, for any hand of the double-twelve set."""
    from arena.engine.round import _pips_of
    from arena.engine.tiles import TILES

    rng = random.Random(7)
    hands = [0, (1 << len(TILES)) - 1, 1 << (len(TILES) - 1)]
    hands += [
        sum(1 << t for t in rng.sample(range(len(TILES)), rng.randint(1, 20))) for _ in range(300)
    ]
    hands += [  # the double-six set's hands: the three tables' path
        sum(1 << t for t in rng.sample(range(28), rng.randint(1, 14))) for _ in range(300)
    ]
    for hand in hands:
        assert _pips_of(hand) == sum(t.pips for t in TILES if hand >> t.id & 1)


def _partners(undrawn: int) -> tuple[int, ...]:
    """Swap partners for the test: the next tile, and the last, where there are such."""
    return tuple(sorted({1, undrawn - 1})) if undrawn > 1 else ()


@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
def test_draw_rollouts_are_the_greedy_points_before_each_drawing_play(
    config: tuple[str, int, bool],
) -> None:
    """Round.draw_rollouts, read from a round's log, gives every draw in order with the
    round's greedy_points from just before the play it followed: as drawn, then with the
    tile swapped with each partner's; on every preset and player count, the rounds played
    by greedy (whose rollouts as drawn it shares) and by random moves."""
    name, players, teams = config
    rules = PRESETS[name]
    draws = 0
    for seed in range(12):
        rng = random.Random(seed)
        scores = _start_scores(name, players, teams, rng)
        played = Round.dealt(rules, players, rng, teams=teams, scores=scores)
        replay = played.copy()  # the round as dealt, played again below
        greedy = seed % 3 == 0
        while played.result is None:
            legal = played.legal_moves()
            played.apply(heaviest(legal) if greedy or rng.random() < 0.3 else rng.choice(legal))
        expected: list[tuple[object, ...]] = []
        events = played.events
        boneyard = len(played.deal.boneyard)
        rollouts: list[tuple[tuple[int, ...], ...]] = []  # the next draws'
        for index, event in enumerate(events):
            if type(event) is Draw:
                assert event.tile is not None and replay.ends is not None
                undrawn = boneyard - len(expected)
                draw = (event.seat, event.tile.id, *replay.ends, undrawn, rollouts.pop(0))
                expected.append(draw)
            elif type(event) is Play:
                rollouts = _rollouts_of(replay, event.move, events[index + 1 :])
                replay.apply(event.move)
        assert played.draw_rollouts(_partners) == expected
        draws += len(expected)
    assert draws > 0 or name == "block" or (name, players) == ("three-minute", 4)


def _rollouts_of(
    round_: Round, move: Move, after: list[Event]
) -> list[tuple[tuple[int, ...], ...]]:
    """The rollouts of the draws that follow ``move`` (the events ``after`` it), from
    ``round_`` before it: greedy_points as drawn, then with each partner's swap."""
    draws = sum(type(e) is Draw for e in itertools.takewhile(lambda e: type(e) is not Play, after))
    undrawn = len(round_.boneyard)
    rollouts = []
    for place in range(draws):
        swaps = [
            round_.greedy_points(move, swap=(place, place + o)) for o in _partners(undrawn - place)
        ]
        rollouts.append((round_.greedy_points(move), *swaps))
    return rollouts


def test_draw_rollouts_refuse_a_partner_beyond_the_boneyard() -> None:
    round_ = Round.dealt(PRESETS["draw"], 2, random.Random(1))
    while round_.undrawn == len(round_.deal.boneyard) and round_.result is None:
        round_.apply(heaviest(round_.legal_moves()))
    assert round_.undrawn < len(round_.deal.boneyard)  # a draw was made
    with pytest.raises(DealError, match="no partner"):
        round_.draw_rollouts(lambda undrawn: (undrawn,))
    with pytest.raises(DealError, match="no partner"):
        round_.draw_rollouts(lambda undrawn: (0,))
    assert Round.dealt(PRESETS["block"], 2, random.Random(1)).draw_rollouts(_partners) == []
