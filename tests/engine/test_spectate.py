"""A spectator's view of a game in play (arena.engine.spectate): never a hidden tile.

Over random seeds and every preset's seat counts: at every step of a game played with
random legal moves, each tile the view of the round in play names is on the line; a round
over (and the game's last, once over) shows its hands as the record does.
"""

from __future__ import annotations

import json
import random
import re
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena.engine.game import Game
from arena.engine.records import game_record
from arena.engine.rules import PRESETS
from arena.engine.spectate import spectator_view
from arena.engine.tiles import Tile
from tests.engine.test_conformance import CONFIGS

_TILE = re.compile(r"\b(\d{1,2}-\d{1,2})[LR]?\b")


def _named_tiles(value: Any) -> set[Tile]:
    """Every tile a JSON value names in text ("6-4", "6-4L")."""
    return {Tile.parse(text) for text in _TILE.findall(json.dumps(value))}


def _played(round_view: dict[str, Any]) -> set[Tile]:
    return {Tile.of(a, b) for a, b in round_view["line"]}


#: Rounds checked at every step (the rest of the game is played unchecked, its end checked).
ROUNDS_CHECKED = 3


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(config=st.sampled_from(CONFIGS), seed=st.integers(2**40, 2**63 - 1))
def test_a_spectator_never_sees_a_hidden_tile(config: tuple[str, int, bool], seed: int) -> None:
    """While a round is played its view names only tiles on the line, no draw shows its
    tile, and neither hands, deal nor seed is there; the round before it shows them."""
    name, players, teams = config
    game = Game(PRESETS[name], players, teams=teams, seed=seed)
    moves = random.Random(seed)
    for _ in range(5000):
        if game.is_terminal():
            break
        if len(game.rounds) > ROUNDS_CHECKED:
            game.apply(moves.choice(game.legal_moves()))
            continue
        view = spectator_view(game)
        current = view["round"]
        assert current["hands"] is None and current["deal"] is None
        assert _named_tiles(current) <= _played(current)
        assert all(e.get("tile") is None for e in current["events"] if e["type"] == "draw")
        assert "seed" not in view and str(game.seed) not in json.dumps(view)
        assert sum(current["hand_sizes"]) + current["boneyard"] + len(current["line"]) == len(
            game.round.deal.boneyard
        ) + sum(len(h) for h in game.round.deal.hands)
        if view["last_round"] is not None:
            number = view["last_round"]["number"]
            shown = game_record(game, ["a"] * players)["rounds"][number - 1]
            assert view["last_round"]["deal"] == shown["deal"]
            assert view["last_round"]["events"] == shown["events"]
            assert view["last_round"]["result"] == shown["result"]
        game.apply(moves.choice(game.legal_moves()))
    assert game.is_terminal()
    over = spectator_view(game)["round"]
    assert over["hands"] == [[str(t) for t in game.round.hand(s)] for s in range(players)]
    assert spectator_view(game)["outcome"]["winners"] == list(game.outcome().winners)  # type: ignore[union-attr]
