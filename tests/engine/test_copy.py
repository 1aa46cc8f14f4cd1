"""Round.copy: a snapshot that plays on independently, and one with the undrawn boneyard in
another order, which is exactly the round dealt with that order and played the same way."""

from __future__ import annotations

import random

import pytest

from arena.engine.round import Round
from arena.engine.rules import PRESETS
from arena.engine.tiles import Move
from arena.errors import DealError
from tests.engine.test_conformance import CONFIGS, config_id


def _state(round_: Round) -> tuple[object, ...]:
    seats = range(round_.players)
    return (
        round_.events,
        round_.result,
        round_.seat,
        round_.legal_moves(),
        round_.scores,
        round_.boneyard,
        round_.line,
        round_.deal,
        tuple(round_.observation(seat) for seat in seats),
        tuple(round_.wire(seat, 0, True) for seat in seats),
        tuple(round_.delta(seat, 0) for seat in seats),
    )


def _play_on(round_: Round, rng: random.Random) -> list[Move]:
    moves = []
    while round_.result is None:
        move = rng.choice(round_.legal_moves())
        round_.apply(move)
        moves.append(move)
    return moves


@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
def test_a_copy_plays_on_as_the_round_and_apart_from_it(config: tuple[str, int, bool]) -> None:
    name, players, teams = config
    rules = PRESETS[name]
    for seed in range(20):
        rng = random.Random(seed)
        original = Round.dealt(rules, players, rng, teams=teams, scores=None)
        stop = rng.randrange(8)
        for _ in range(stop):
            if original.result is not None:
                break
            original.apply(rng.choice(original.legal_moves()))
        copy = original.copy()
        assert _state(copy) == _state(original)
        before = _state(original)
        moves = _play_on(copy, random.Random(seed))
        assert _state(original) == before  # the copy's moves left the round alone
        for move in moves:
            original.apply(move)
        assert _state(original) == _state(copy)


@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
def test_a_copy_with_another_boneyard_is_the_round_dealt_with_it(
    config: tuple[str, int, bool],
) -> None:
    name, players, teams = config
    rules = PRESETS[name]
    for seed in range(20):
        rng = random.Random(seed)
        original = Round.dealt(rules, players, rng, teams=teams, scores=None)
        played = []
        for _ in range(rng.randrange(10)):
            if original.result is not None:
                break
            played.append(rng.choice(original.legal_moves()))
            original.apply(played[-1])
        rest = list(original.boneyard)
        rng.shuffle(rest)
        copy = original.copy(rest)
        assert copy.boneyard == tuple(rest)
        assert copy.deal.hands == original.deal.hands
        assert copy.deal.lead_draw == original.deal.lead_draw
        dealt = Round(rules, copy.deal, teams=teams)
        for move in played:
            dealt.apply(move)
        assert _state(copy) == _state(dealt)
        moves = _play_on(copy, random.Random(seed))
        for move in moves:
            dealt.apply(move)
        assert _state(copy) == _state(dealt)


def test_a_copy_refuses_a_boneyard_of_other_tiles() -> None:
    round_ = Round.dealt(PRESETS["draw"], 2, random.Random(1))
    rest = list(round_.boneyard)
    with pytest.raises(DealError, match="undrawn tiles"):
        round_.copy(rest[1:])
    with pytest.raises(DealError, match="undrawn tiles"):
        round_.copy([*rest[1:], round_.hand(0)[0]])
