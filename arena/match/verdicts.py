"""What a match is judged by: the time control, a bot's fault and its verdict, and the
harness's own failure (:class:`InfrastructureError`: such games are void, never counted).

Bot faults are data: a timeout, a crash, an illegal move or garbage on the wire ends that
game with the offender forfeiting (:class:`Verdict`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from arena.engine.events import Termination
from arena.engine.game import Game
from arena.engine.tiles import Move
from arena.errors import ArenaError

__all__ = [
    "DECISIONS_PER_GAME",
    "Answer",
    "BotFaultError",
    "DecisionTime",
    "GameOutcome",
    "InfrastructureError",
    "TimeControl",
    "Verdict",
]


class InfrastructureError(ArenaError):
    """The harness failed (not the bot): the games it touched are void."""


#: Decisions of one seat a game is assumed to need at most, for a match's wall bound
#: (:meth:`TimeControl.match_wall_seconds`): the longest 2-player games measured have
#: 186-201 decisions a seat (300 random games of draw, block and block-and-draw to their
#: target scores); 4-player games at most 100.
DECISIONS_PER_GAME = 200


@dataclass(frozen=True)
class TimeControl:
    """How long a bot may think.

    Attributes:
        move_seconds: per decision, charged in CPU time where it can be measured.
        bank_seconds: a per-game reserve that pays for decisions over ``move_seconds``.
        startup_seconds: for starting the bot and answering the handshake (wall clock).
        wall_factor: the wall-clock time a decision may take freely is this many times
            ``move_seconds``; beyond it the excess is charged to the game's wall bank of
            ``wall_factor * bank_seconds`` (:attr:`wall_bank_seconds`), so a bot that
            sleeps (and uses no CPU) also forfeits, in bounded time.
        game_wall_seconds: a game's share of a bot's wall-clock bound for its whole match
            (:meth:`match_wall_seconds`); None (the default) derives it from the clocks
            per decision: :data:`DECISIONS_PER_GAME` decisions at ``move_seconds`` each,
            plus the game's wall bank.
    """

    move_seconds: float = 1.0
    bank_seconds: float = 10.0
    startup_seconds: float = 10.0
    wall_factor: float = 3.0
    game_wall_seconds: float | None = None

    @property
    def wall_seconds(self) -> float:
        """Wall-clock seconds a decision may take without touching its game's wall bank."""
        return self.wall_factor * self.move_seconds

    @property
    def wall_bank_seconds(self) -> float:
        """A game's wall-clock bank: what its decisions may take beyond :attr:`wall_seconds`."""
        return self.wall_factor * self.bank_seconds

    def rule(self) -> str:
        """The time control as people whose bots play under it read it (a competition's
        page, a timeout's verdict): exactly what the referee enforces; a move that finds
        either bank spent loses its game (docs/protocol.md, "Time, and faults")."""
        return (
            f"{_ms(self.move_seconds)} of CPU time a move (the bot's whole process tree), "
            f"with a bank of {_ms(self.bank_seconds)} a game for moves over it; "
            f"{_ms(self.wall_seconds)} of wall-clock time a move, with a wall-clock bank "
            f"of {_ms(self.wall_bank_seconds)} a game beyond it"
        )

    def game_wall(self) -> float:
        """One game's share of a bot's match wall bound, in seconds (see
        ``game_wall_seconds``): ``wall_bank_seconds + DECISIONS_PER_GAME * move_seconds``
        unless set (230 s at the defaults)."""
        if self.game_wall_seconds is not None:
            return self.game_wall_seconds
        return self.wall_bank_seconds + DECISIONS_PER_GAME * self.move_seconds

    def match_wall_seconds(self, games: int) -> float:
        """The wall-clock time the referee may spend waiting on one bot process over a
        match of ``games`` games: ``startup_seconds + games * game_wall()``. Its waits are
        summed (start-up and every reply, however many games a reply answers); a bot that
        exhausts the bound forfeits every game it has left with ``timeout``."""
        return self.startup_seconds + games * self.game_wall()


@dataclass(frozen=True)
class Verdict:
    """A bot's fault in one game: the seat forfeits.

    Attributes:
        seat: the offending seat.
        termination: TIMEOUT, CRASH, ILLEGAL_MOVE or PROTOCOL_ERROR.
        message: what happened, for people.
        stderr: the tail of the bot's stderr (may be empty).
    """

    seat: int
    termination: Termination
    message: str
    stderr: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The JSON form kept in the game record."""
        return {
            "seat": self.seat,
            "termination": self.termination.value,
            "message": self.message,
            "stderr": self.stderr,
        }


class BotFaultError(Exception):
    """A bot misbehaved; carries the verdict's termination and message."""

    def __init__(self, termination: Termination, message: str) -> None:
        super().__init__(message)
        self.termination = termination
        self.message = message


#: One decision's time in seconds: (CPU time charged, wall-clock time taken).
DecisionTime = tuple[float, float]


@dataclass
class GameOutcome:
    """One finished game of a match: the game, and the verdict if a bot forfeited.

    ``times`` holds every decision the referee asked for in this game, in order: one per
    play of the game, then, when the forfeit was a decision that was answered and timed
    (a move over the clock, an illegal move, a crash the bot reported), that decision.
    Each is ``(cpu, wall)`` seconds as the referee charged and measured them (a bot that
    answers several games in one message is charged an even share of it), or None when
    nobody timed it: a built-in strategy's decision, or a play made before the referee
    took the game up. None (not a list) for a game the referee did not play. For
    :func:`arena.engine.records.game_record`'s ``times``.
    """

    index: int
    game: Game
    verdict: Verdict | None = None
    times: list[DecisionTime | None] | None = None


#: What a player answers for one decision: a move, or the fault that stands instead.
Answer = Move | BotFaultError


def _ms(seconds: float) -> str:
    """A duration as people read it: ``200 ms``, ``1 s``, ``2.5 s``."""
    return f"{seconds * 1000:g} ms" if seconds < 1 else f"{seconds:g} s"
