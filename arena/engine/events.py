"""What happens in a round (events) and how rounds and games end (results).

Events are small named tuples, cheap to make on the engine's hot path:
:class:`Play`, :class:`Draw` and :class:`Pass`. In a bot's observation a draw
by another seat shows no tile (``tile`` is None): draws are public only as counts.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import NamedTuple

from arena.engine.tiles import Move, Tile

__all__ = ["Draw", "Event", "Outcome", "Pass", "Play", "RoundResult", "Termination"]


class Play(NamedTuple):
    """``seat`` played ``move``, scoring ``points`` in play (``muggins`` fives)."""

    seat: int
    move: Move
    points: int = 0


class Draw(NamedTuple):
    """``seat`` drew ``tile`` from the boneyard (None when hidden from the viewer)."""

    seat: int
    tile: Tile | None


class Pass(NamedTuple):
    """``seat`` could not play (nor draw any more) and passed."""

    seat: int


Event = Play | Draw | Pass


class Termination(enum.Enum):
    """Why a round or a game ended."""

    #: A player played its last tile.
    DOMINO = "domino"
    #: No seat could play and no seat could draw.
    BLOCKED = "blocked"
    #: A player or team reached the game's target (points or round wins).
    TARGET = "target"
    #: A bot ran out of time (bot fault: the bot forfeits).
    TIMEOUT = "timeout"
    #: A bot's process died or raised (bot fault).
    CRASH = "crash"
    #: A bot chose a move that is not legal (bot fault).
    ILLEGAL_MOVE = "illegal_move"
    #: A bot broke the protocol (bot fault).
    PROTOCOL_ERROR = "protocol_error"

    @property
    def is_fault(self) -> bool:
        """Whether this termination is a bot's fault."""
        return self in _FAULTS


_FAULTS = frozenset(
    {Termination.TIMEOUT, Termination.CRASH, Termination.ILLEGAL_MOVE, Termination.PROTOCOL_ERROR}
)


@dataclass(frozen=True, slots=True)
class RoundResult:
    """How a round ended.

    Attributes:
        termination: DOMINO, BLOCKED, or TARGET (``muggins``: a play reached
            the game's target mid-round; nothing more was scored).
        winner: the side (seat, or team in team play) that won the round; None
            for a drawn round (tied pips and tied lowest tile).
        seat: the seat that went out (DOMINO) or made the target-reaching play
            (TARGET); None when blocked.
        pips: pips left in each seat's hand.
        points: points each side scored in this round, in-play points included
            (round wins for round-won games such as ``wooden``).
    """

    termination: Termination
    winner: int | None
    seat: int | None
    pips: tuple[int, ...]
    points: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Outcome:
    """How a game ended.

    Attributes:
        termination: TARGET when played out; a bot-fault termination when a bot
            forfeited.
        winners: the winning seats (both partners in team play).
        scores: each side's final score (points, or round wins).
    """

    termination: Termination
    winners: tuple[int, ...]
    scores: tuple[int, ...]
