"""Domino Arena: the rules engine and library.

One folder per layer, each importing only those below it (docs/architecture.md):
:mod:`arena.engine` <- :mod:`arena.match` <- :mod:`arena.compete` <- :mod:`arena.store`
<- :mod:`arena.service` <- :mod:`arena.cli`; :mod:`arena.errors` is shared by all. This
package re-exports the engine's public names and imports only the standard library. Start
with::

    >>> from arena import Game, find_rules
    >>> game = Game(find_rules("draw"), players=3, seed=7)
    >>> while not game.is_terminal():
    ...     game.apply(game.legal_moves()[0])
    >>> game.outcome().termination
    <Termination.TARGET: 'target'>
"""

from arena.engine.deal import Deal, deal_round
from arena.engine.events import Draw, Event, Outcome, Pass, Play, RoundResult, Termination
from arena.engine.game import Game
from arena.engine.observation import Observation
from arena.engine.round import Round
from arena.engine.rules import (
    PRESETS,
    GameEnd,
    InPlay,
    Lead,
    Rules,
    Scoring,
    find_rules,
    load_rules,
)
from arena.engine.tiles import TILES, End, Move, Tile, tile_set
from arena.errors import ArenaError, DealError, IllegalMoveError, ParseError, RulesError

__version__ = "0.1.0"

__all__ = [
    "PRESETS",
    "TILES",
    "ArenaError",
    "Deal",
    "DealError",
    "Draw",
    "End",
    "Event",
    "Game",
    "GameEnd",
    "IllegalMoveError",
    "InPlay",
    "Lead",
    "Move",
    "Observation",
    "Outcome",
    "ParseError",
    "Pass",
    "Play",
    "Round",
    "RoundResult",
    "Rules",
    "RulesError",
    "Scoring",
    "Termination",
    "Tile",
    "deal_round",
    "find_rules",
    "load_rules",
    "tile_set",
]
