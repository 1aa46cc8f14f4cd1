"""Domino Arena: the rules engine and library.

The core imports only the standard library. Start with::

    >>> from arena import Game, find_rules
    >>> game = Game(find_rules("draw"), players=3, seed=7)
    >>> while not game.is_terminal():
    ...     game.apply(game.legal_moves()[0])
    >>> game.outcome().termination
    <Termination.TARGET: 'target'>
"""

from arena.deal import Deal, deal_round
from arena.errors import ArenaError, DealError, IllegalMoveError, ParseError, RulesError
from arena.events import Draw, Event, Outcome, Pass, Play, RoundResult, Termination
from arena.game import Game
from arena.observation import Observation
from arena.round import Round
from arena.rules import PRESETS, GameEnd, InPlay, Lead, Rules, Scoring, find_rules, load_rules
from arena.tiles import TILES, End, Move, Tile, tile_set

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
