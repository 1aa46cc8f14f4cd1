"""What a spectator sees of a game while it is played: the public state, never a hidden tile.

A spectator (a person watching a game live, :mod:`arena.service.livefeed`) sees what
every seat sees of the others (RULES.md "What a bot sees", without a hand of its own): the
line, how many tiles each seat holds, the boneyard's size, the scores, the plays, the
passes, and that a seat drew (not what). A round's hands are shown once the round is over,
as the game's record shows them: its deal and its events with the tiles drawn, and what
each seat held at its end. The seed is never shown (it would deal the rounds to come).

:func:`spectator_view` is the only place that decides it: whatever publishes a game live
publishes this view, and a page draws it as it is.
"""

from __future__ import annotations

from typing import Any

from arena.engine.events import Draw, Event, Play
from arena.engine.game import Game
from arena.engine.observation import event_to_dict
from arena.engine.records import deal_to_dict, result_to_dict
from arena.engine.round import Round
from arena.engine.tiles import End

__all__ = ["public_event", "spectator_view"]


def public_event(event: Event) -> dict[str, Any]:
    """An event's JSON form as a spectator sees it while its round is played: a draw
    without its tile."""
    if type(event) is Draw:
        return {"type": "draw", "seat": event.seat, "tile": None}
    return event_to_dict(event)


def spectator_view(game: Game, *, index: int = 0) -> dict[str, Any]:
    """The JSON-ready view of ``game`` a spectator may have now (``index``: the game's
    number in its match, said back in ``game``).

    ``round`` is the round being played (or the game's last, once it is over);
    ``last_round`` the one before it, over, its hands shown (None in the first round);
    ``outcome`` the game's end (None while it goes on: ``termination``, ``winners``,
    ``scores``). A round's view holds ``number``, ``leader``, ``to_move``, ``line`` (the
    played tiles from the left end, as pairs), ``lead`` (the lead's index in ``line``, -1
    before it), ``hand_sizes``, ``boneyard``, ``drawable``, ``scores``, ``events`` and,
    once the round (or the game) is over, ``result``, ``hands`` (what each seat held at
    the end) and ``deal`` (as the record writes it); until then those three are None and
    no draw shows its tile.
    """
    outcome = game.outcome()
    rounds = game.rounds
    last = None if len(rounds) < 2 else _round_view(rounds[-2], shown=True)
    return {
        "game": index,
        "rules": game.rules.name,
        "players": game.players,
        "teams": game.teams,
        "round": _round_view(rounds[-1], shown=outcome is not None),
        "last_round": last,
        "outcome": None
        if outcome is None
        else {
            "termination": outcome.termination.value,
            "winners": list(outcome.winners),
            "scores": list(outcome.scores),
        },
    }


def _round_view(round_: Round, *, shown: bool) -> dict[str, Any]:
    """One round as a spectator sees it; ``shown`` (or the round over): its hands too."""
    shown = shown or round_.is_terminal()
    events = round_.events
    result = round_.result
    return {
        "number": round_.number,
        "leader": round_.leader,
        "to_move": round_.seat,
        "line": [list(pair) for pair in round_.line],
        "lead": _lead_index(events),
        "hand_sizes": [len(round_.hand(seat)) for seat in range(round_.players)],
        "boneyard": len(round_.boneyard),
        "drawable": round_.drawable,
        "scores": list(round_.scores),
        "events": [event_to_dict(e) if shown else public_event(e) for e in events],
        "result": None if result is None else result_to_dict(result),
        "hands": [[str(t) for t in round_.hand(s)] for s in range(round_.players)]
        if shown
        else None,
        "deal": deal_to_dict(round_.deal) if shown else None,
    }


def _lead_index(events: list[Event]) -> int:
    """The lead's index in the line: one more for every tile played on the left."""
    plays = [e for e in events if type(e) is Play]
    if not plays:
        return -1
    return sum(1 for e in plays if e.move.end is End.LEFT)
