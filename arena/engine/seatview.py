"""A game as one seat may see it at any moment, as JSON: what a person at a table is shown.

:func:`seat_view` is the whole game so far from one seat (or from a spectator's chair,
``seat`` None): the round being played as the seat's observation gives it (its own hand,
the line, every seat's tile count, the round's events with the others' drawn tiles hidden,
its legal moves when it is to move), and every finished round with its result and the hands
shown for the counting. A spectator sees no hand until its round is over. The worker that
referees a table publishes these views; the web only renders them.
"""

from __future__ import annotations

from typing import Any

from arena.engine.events import Draw, Play, RoundResult
from arena.engine.game import Game
from arena.engine.observation import event_to_dict
from arena.engine.round import Round
from arena.engine.tiles import End

__all__ = ["game_turn", "lead_index", "seat_view"]


def game_turn(game: Game) -> int:
    """The plays made so far in the whole game: a decision's number, which a move sent for
    an earlier decision does not match."""
    return sum(1 for round_ in game.rounds for event in round_.events if type(event) is Play)


def lead_index(events: list[Any]) -> int:
    """The index of the round's lead in its line (the plays on the left end before it are
    in front), -1 before the lead; ``events`` as :func:`event_to_dict` writes them."""
    plays = [e for e in events if e.get("type") == "play"]
    if not plays:
        return -1
    return sum(1 for e in plays if str(e.get("move", "")).endswith(End.LEFT.value))


def _result(result: RoundResult) -> dict[str, Any]:
    return {
        "termination": result.termination.value,
        "winner": result.winner,
        "seat": result.seat,
        "pips": list(result.pips),
        "points": list(result.points),
    }


def _finished(round_: Round) -> dict[str, Any]:
    """A round that is over, as everyone may see it: its events, its result, the hands."""
    assert round_.result is not None
    return {
        "number": round_.number,
        "leader": round_.leader,
        "events": [event_to_dict(e) for e in round_.events],
        "line": [list(pair) for pair in round_.line],
        "hands": [[str(t) for t in round_.hand(s)] for s in range(round_.players)],
        "result": _result(round_.result),
        "scores": list(round_.scores),
    }


def seat_view(game: Game, seat: int | None) -> dict[str, Any]:
    """The game so far as ``seat`` may see it (None: a spectator), as JSON.

    Keys: ``players``, ``teams``, ``rules`` (its name), ``seat``, ``turn``
    (:func:`game_turn`), ``round`` (the round being played, or the last one: its number,
    leader, seat to move, this seat's hand, the line and its lead's index, the open ends,
    tile counts, boneyard, events, legal moves, and its result once over), ``rounds``
    (every finished round: :func:`_finished`), ``scores`` and ``outcome`` (None while the
    game goes on; else its termination, winners and scores)."""
    round_ = game.round
    over = round_.result is not None
    observer = 0 if seat is None else seat
    observation = round_.observation(observer)
    if over:
        events = [event_to_dict(e) for e in round_.events]
    else:
        events = [
            event_to_dict(Draw(e.seat, None) if seat is None and type(e) is Draw else e)
            for e in observation.history
        ]
    current: dict[str, Any] = {
        "number": round_.number,
        "leader": round_.leader,
        "to_move": None if game.is_terminal() else observation.to_move,
        "hand": [] if seat is None else [str(t) for t in observation.hand],
        "line": [list(pair) for pair in observation.line],
        "lead": lead_index(events),
        "ends": None if observation.ends is None else list(observation.ends),
        "hand_sizes": list(observation.hand_sizes),
        "boneyard": observation.boneyard_size,
        "drawable": observation.drawable,
        "events": events,
        "legal_moves": (
            [str(m) for m in game.legal_moves()]
            if seat is not None and not game.is_terminal() and observation.to_move == seat
            else []
        ),
        "result": _result(round_.result) if round_.result is not None else None,
        "hands": (
            [[str(t) for t in round_.hand(s)] for s in range(round_.players)] if over else None
        ),
    }
    outcome = game.outcome()
    return {
        "players": game.players,
        "teams": game.teams,
        "rules": game.rules.name,
        "seat": seat,
        "turn": game_turn(game),
        "round": current,
        "rounds": [_finished(r) for r in game.rounds if r.result is not None],
        "scores": list(game.scores),
        "outcome": None
        if outcome is None
        else {
            "termination": outcome.termination.value,
            "winners": list(outcome.winners),
            "scores": list(outcome.scores),
        },
    }
