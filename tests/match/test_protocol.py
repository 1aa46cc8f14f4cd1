"""Protocol v2 (docs/protocol.md): the bot sees exactly the observation of v1, rebuilt from
deltas; v1 bots keep working."""

from __future__ import annotations

import random

import pytest

from arena.engine.game import Game
from arena.engine.rules import PRESETS
from arena.match import botkit
from arena.match.process import PlainLauncher, ProcessPlayer
from arena.match.referee import StrategyPlayer, TimeControl, play_match
from tests.engine.test_conformance import CONFIGS
from tests.paths import REFERENCE_BOTS, ZOO


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: f"{c[0]}-{c[1]}{'t' if c[2] else ''}")
def test_deltas_rebuild_the_full_observation_at_every_decision(
    config: tuple[str, int, bool],
) -> None:
    """For seeded games of every preset and table, each seat's view rebuilt from the
    deltas it would be sent equals the v1 observation, field by field, at each of its
    decisions (the deltas' safety net)."""
    name, players, teams = config
    rules = PRESETS[name]
    for seed in range(3):
        game = Game(rules, players, teams=teams, seed=seed)
        rng = random.Random(seed)
        views = {
            seat: botkit.GameView(
                botkit.GameInfo("g", seat, players, teams, rules.name, rules.params())
            )
            for seat in range(players)
        }
        sent: dict[int, tuple[int, int]] = {}
        while not game.is_terminal():
            seat = game.seat
            assert seat is not None
            observation = game.observation(seat)
            last = sent.get(seat)
            since = last[1] if last is not None and last[0] == observation.round else 0
            sent[seat] = (observation.round, len(observation.history))
            rebuilt = views[seat].observe(observation.to_delta(since))
            assert rebuilt == botkit.Observation.from_dict(observation.to_dict())
            game.apply(rng.choice(observation.legal_moves))


def test_the_kit_speaks_v2_and_a_v1_bot_still_plays() -> None:
    """The Python kit takes the deltas offered; a bot that answers protocol 1 (the Node
    bot of the zoo speaks v1 itself) gets full observations and plays all its games."""
    kit = ProcessPlayer(REFERENCE_BOTS / "random.py", PlainLauncher())
    node = ProcessPlayer(ZOO / "first.js", PlainLauncher())
    outcomes = list(
        play_match(
            PRESETS["draw"],
            [kit, node, StrategyPlayer("greedy")],
            games=4,
            seed=2,
            time_control=TimeControl(),
        )
    )
    assert (kit.protocol, node.protocol) == (2, 1)
    assert len(outcomes) == 4 and all(o.verdict is None for o in outcomes)
