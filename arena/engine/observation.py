"""What a bot sees when it is asked to move: an :class:`Observation`.

Exactly the information of RULES.md "What a bot sees": public information plus
the bot's own hand, and its legal moves. Never another seat's tiles nor the
boneyard's order. An observation is a frozen value; :meth:`Observation.to_dict`
gives its JSON form, the one the bot protocol sends.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from arena.engine.events import Draw, Event, Pass, Play
from arena.engine.tiles import Move, Tile

if TYPE_CHECKING:
    from arena.engine.rules import Rules

__all__ = ["Observation", "event_notation", "event_to_dict"]


@dataclass(frozen=True, slots=True)
class Observation:
    """One seat's view of the round, at its turn (or at any time, for spectators).

    Attributes:
        seat: the seat this view belongs to (0..players-1; play goes to seat+1).
        players: the number of seats.
        teams: whether seats 0+2 play against 1+3; then scores are per team.
        rules: the rule set (its ``name``, ``params()`` and so on).
        round: the round's number in the game, from 1.
        leader: the seat that led this round.
        to_move: the seat whose turn it is, None when the round is over.
        hand: this seat's tiles, in ascending order.
        line: the played tiles from the left end to the right, each as
            (left half, right half); a double shows the same number twice.
        ends: the open ends (left, right), or None before the lead.
        hand_sizes: how many tiles each seat holds.
        boneyard_size: how many tiles are in the boneyard.
        drawable: how many of them may still be drawn (``draw`` keeps a reserve;
            0 where the rules never draw).
        scores: each side's game score (per seat, or per team: see ``side``).
        history: this round's public events in order: plays, draws (the tile only
            for this seat's own draws; None for the others'), passes.
        legal_moves: this seat's legal moves, sorted; empty when it is not its turn.
    """

    seat: int
    players: int
    teams: bool
    rules: Rules
    round: int
    leader: int
    to_move: int | None
    hand: tuple[Tile, ...]
    line: tuple[tuple[int, int], ...]
    ends: tuple[int, int] | None
    hand_sizes: tuple[int, ...]
    boneyard_size: int
    drawable: int
    scores: tuple[int, ...]
    history: tuple[Event, ...]
    legal_moves: tuple[Move, ...]

    @property
    def side(self) -> int:
        """This seat's index into ``scores``: its team in team play, else its seat."""
        return self.seat % 2 if self.teams else self.seat

    @property
    def partner(self) -> int | None:
        """The partner's seat in team play, else None."""
        return (self.seat + 2) % 4 if self.teams else None

    @property
    def is_lead(self) -> bool:
        """Whether the move to make is the first tile of the round."""
        return self.ends is None

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON form (tiles as ``"6-4"``, moves as ``"6-4L"``)."""
        return self._fields(
            rules={"name": self.rules.name, "params": self.rules.params()},
            history=[event_to_dict(e) for e in self.history],
        )

    def to_delta(self, since: int) -> dict[str, Any]:
        """The protocol v2 form (docs/protocol.md): :meth:`to_dict` without the rule set
        (the bot has it from ``start``) and with only the history's events from index
        ``since`` on (``events``; ``history_from`` says where they begin), so a request
        carries what changed since the bot's last one in this round, not the whole round."""
        return self._fields(
            history_from=since, events=[event_to_dict(e) for e in self.history[since:]]
        )

    def to_wire(self, since: int, start: bool) -> dict[str, Any]:
        """The protocol v3 form (docs/protocol.md): the history's events from index ``since``
        on in event notation (:func:`event_notation`), the legal moves, and with ``start``
        the round's state as it began (``round``: what the bot folds the events into).

        The round's start is worked out here backwards from this observation and its
        history (the engine's :meth:`arena.engine.round.Round.wire` keeps it instead): the
        two must agree, which ``tests/match/test_protocol.py`` checks."""
        out: dict[str, Any] = {
            "events": [event_notation(e) for e in self.history[since:]],
            "legal_moves": [str(m) for m in self.legal_moves],
        }
        if start:
            out["round"] = self._round_start()
        return out

    def _round_start(self) -> dict[str, Any]:
        """This seat's view of the round's state before its first event."""
        hand = set(self.hand)
        sizes = list(self.hand_sizes)
        scores = list(self.scores)
        draws = 0
        for event in self.history:
            if isinstance(event, Play):
                sizes[event.seat] += 1
                if event.seat == self.seat:
                    hand.add(event.move.tile)
                scores[event.seat % 2 if self.teams else event.seat] -= event.points
            elif isinstance(event, Draw):
                sizes[event.seat] -= 1
                draws += 1
                if event.tile is not None:
                    hand.discard(event.tile)
        return {
            "number": self.round,
            "leader": self.leader,
            "hand": [str(t) for t in sorted(hand, key=lambda t: t.id)],
            "hand_sizes": sizes,
            "boneyard_size": self.boneyard_size + draws,
            "drawable": self.drawable + draws if self.rules.draws else 0,
            "scores": scores,
        }

    def _fields(self, **extra: Any) -> dict[str, Any]:
        """The JSON fields every form has, and ``extra``."""
        return {
            "seat": self.seat,
            "players": self.players,
            "teams": self.teams,
            "round": self.round,
            "leader": self.leader,
            "to_move": self.to_move,
            "hand": [str(t) for t in self.hand],
            "line": [list(pair) for pair in self.line],
            "ends": None if self.ends is None else list(self.ends),
            "hand_sizes": list(self.hand_sizes),
            "boneyard_size": self.boneyard_size,
            "drawable": self.drawable,
            "scores": list(self.scores),
            "legal_moves": [str(m) for m in self.legal_moves],
            **extra,
        }


def event_notation(event: Event) -> str:
    """Return an event's notation (protocol v3): ``"play 0 6-4L"`` (with `` 2`` after
    it when a ``muggins`` play scored 2), ``"draw 1 6-4"`` (``"draw 1"`` when the tile is
    hidden), ``"pass 0"``."""
    if isinstance(event, Play):
        text = f"play {event.seat} {event.move}"
        return f"{text} {event.points}" if event.points else text
    if isinstance(event, Draw):
        return f"draw {event.seat}" if event.tile is None else f"draw {event.seat} {event.tile}"
    assert isinstance(event, Pass)
    return f"pass {event.seat}"


def event_to_dict(event: Event) -> dict[str, Any]:
    """Return an event's JSON form: ``{"type": "play", "seat": 0, "move": "6-4L"}`` etc."""
    if isinstance(event, Play):
        out: dict[str, Any] = {"type": "play", "seat": event.seat, "move": str(event.move)}
        if event.points:
            out["points"] = event.points
        return out
    if isinstance(event, Draw):
        return {
            "type": "draw",
            "seat": event.seat,
            "tile": None if event.tile is None else str(event.tile),
        }
    assert isinstance(event, Pass)
    return {"type": "pass", "seat": event.seat}
