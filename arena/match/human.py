"""A person at the table: a seat whose moves come from outside the referee's process.

:class:`HumanPlayer` is a :class:`~arena.match.players.Player` like any bot's handle: the
referee asks it for a move and judges the answer, so a game with people in it is played by
the same referee, under the same rules, as any match. When the person is to move it shows
the game (:meth:`TableFeed.publish`: each person's view, :func:`arena.engine.seatview.seat_view`)
and waits for their move (:meth:`TableFeed.wait_move`) for at most its stated move time; a
person who does not answer in time forfeits (``timeout``), which ends the game and releases
the bots. The feed is the deployment's (the service's Redis channel); nothing here knows it.

A person's moves are not timed in the record (their decisions' times are None, like a
built-in strategy's): the bank and the wall clock are the bots'.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from arena.engine.events import Termination
from arena.engine.game import Game
from arena.engine.rules import Rules
from arena.engine.seatview import game_turn
from arena.engine.tiles import Move
from arena.errors import ParseError
from arena.match.players import Request
from arena.match.verdicts import Answer, BotFaultError, TimeControl

__all__ = ["HumanPlayer", "TableFeed"]


class TableFeed(Protocol):
    """Where a table's views go and its people's moves come from."""

    def publish(self, game: Game) -> None:
        """Show the game as it stands to every person at the table (and its spectators)."""

    def wait_move(self, seat: int, turn: int, seconds: float) -> str | None:
        """The move (its notation) the person at ``seat`` sent for decision ``turn``, or
        None when none came within ``seconds``."""


class HumanPlayer:
    """The seat of a person named ``name``, moving through ``feed`` within ``move_seconds``."""

    def __init__(self, name: str, feed: TableFeed, move_seconds: float) -> None:
        self.name = name
        self.feed = feed
        self.move_seconds = move_seconds
        self._seat = 0
        self._asked: Request | None = None
        self._answers: list[Answer] = []

    def open(self, time_control: TimeControl) -> None:
        return

    def start(
        self, game: str, seat: int, players: int, teams: bool, rules: Rules, seed: int
    ) -> None:
        self._seat = seat

    def send(self, requests: Sequence[Request]) -> None:
        if len(requests) != 1:  # a table plays one game
            raise ValueError(f"a person plays one game at a time, not {len(requests)}")
        self._asked = requests[0]
        self.feed.publish(self._asked.state)

    def receive(
        self, time_control: TimeControl, banks: Sequence[float], wall_banks: Sequence[float]
    ) -> list[Answer]:
        assert self._asked is not None
        game = self._asked.state
        self._answers = [self._wait(game)]
        return self._answers

    def _wait(self, game: Game) -> Answer:
        text = self.feed.wait_move(self._seat, game_turn(game), self.move_seconds)
        if text is None:
            return BotFaultError(
                Termination.TIMEOUT,
                f"{self.name} made no move in {self.move_seconds:g} s and forfeits",
            )
        try:
            return Move.parse(text)
        except ParseError as exc:  # the web checks moves: this is a bug, judged as any
            return BotFaultError(Termination.ILLEGAL_MOVE, str(exc))

    def charged(self) -> list[float]:
        return [0.0] * len(self._answers)

    def waited(self) -> list[float]:
        return [0.0] * len(self._answers)

    def end(self, game: str, result: Mapping[str, Any]) -> None:
        return

    def close(self) -> None:
        self._asked = None

    def stderr_tail(self) -> str:
        return ""
