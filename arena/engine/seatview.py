"""A game as one seat may see it at any moment, as JSON: what a person at a table is shown.

:func:`seat_view` is :func:`arena.engine.spectate.spectator_view` (the public game: the
line, tile counts, the events with every drawn tile hidden, each finished round with its
hands shown for the counting) and what only this seat may know: its hand and, when it is
to move, its legal moves. The worker that referees a table publishes it for each person
(:mod:`arena.service.table_channel`); the web only draws it.
"""

from __future__ import annotations

from typing import Any

from arena.engine.events import Play
from arena.engine.game import Game
from arena.engine.spectate import spectator_view

__all__ = ["game_turn", "seat_view"]


def game_turn(game: Game) -> int:
    """The plays made so far in the whole game: a decision's number, which a move sent for
    an earlier decision does not match."""
    return sum(1 for round_ in game.rounds for event in round_.events if type(event) is Play)


def seat_view(game: Game, seat: int) -> dict[str, Any]:
    """The game so far as ``seat`` may see it, as JSON: the spectator's view with ``seat``,
    ``turn`` (:func:`game_turn`), and in ``round`` the seat's ``hand`` and its
    ``legal_moves`` (empty unless it is to move in a game still played)."""
    view = spectator_view(game)
    moving = not game.is_terminal() and game.seat == seat
    view["seat"] = seat
    view["turn"] = game_turn(game)
    view["round"]["hand"] = [str(t) for t in game.round.hand(seat)]
    view["round"]["legal_moves"] = [str(m) for m in game.legal_moves()] if moving else []
    return view
