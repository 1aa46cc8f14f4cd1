"""The referee's handle on one seat's bot (:class:`Player`), and the players that run in the
referee's own process: built-in strategies (trusted code) and a developer's own bot files
loaded through the bot kit (never uploaded bots). Bots in their own process are in
:mod:`arena.match.process`."""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from arena.engine.events import Termination
from arena.engine.game import Game
from arena.engine.observation import Observation
from arena.engine.rules import Rules
from arena.engine.tiles import Move
from arena.match import botkit
from arena.match.play import entrant_rng, strategy_rng
from arena.match.strategies import BuiltinStrategy, make_strategy
from arena.match.verdicts import Answer, BotFaultError, TimeControl

__all__ = ["InProcessPlayer", "Player", "Request", "StrategyPlayer"]

logger = logging.getLogger(__name__)


class Request:
    """One game's question to the seat to move, in whichever form its player needs: the
    whole :class:`Observation`, protocol v2's delta or v3's events (built straight from the
    engine's state, never through an Observation: a match asks this at every move)."""

    __slots__ = ("_round", "game", "round", "seat", "state")

    def __init__(self, game: str, state: Game, seat: int) -> None:
        #: The game's id in the match.
        self.game = game
        self.seat = seat
        #: The game itself (the referee's: a person's seat shows it, a bot never sees it).
        self.state = state
        self._round = state.round
        #: The number of the round being played.
        self.round = self._round.number

    def observation(self) -> Observation:
        """What the seat may know now."""
        return self._round.observation(self.seat)

    def legal_moves(self) -> tuple[Move, ...]:
        """The seat's legal moves (``observation().legal_moves``, without the rest)."""
        return self._round.legal_moves()

    def delta(self, since: int) -> dict[str, Any]:
        """Protocol v2's request: the round's events from ``since`` on, and the rest."""
        return self._round.delta(self.seat, since)

    def wire(self, since: int, start: bool) -> dict[str, Any]:
        """Protocol v3's request: the round's events from ``since`` on in notation, the
        legal moves, and with ``start`` the round's state as it began."""
        return self._round.wire(self.seat, since, start)

    def wire_json(self, since: int, start: bool) -> tuple[str, int]:
        """:meth:`wire` as the members of a JSON object (without the game's id), and the
        round's events so far."""
        return self._round.wire_json(self.seat, since, start)


class Player(Protocol):
    """The referee's handle on one seat's bot for a whole match."""

    name: str

    def open(self, time_control: TimeControl) -> None:
        """Start the bot and check it answers (raises BotFaultError or InfrastructureError)."""

    def start(
        self, game: str, seat: int, players: int, teams: bool, rules: Rules, seed: int
    ) -> None:
        """A new game begins with this bot at ``seat`` (``seed``: the game's seed)."""

    def send(self, requests: Sequence[Request]) -> None:
        """Ask for one move in each of these games (answers come from :meth:`receive`)."""

    def receive(
        self, time_control: TimeControl, banks: Sequence[float], wall_banks: Sequence[float]
    ) -> list[Answer]:
        """Collect the answers to the last :meth:`send`; ``banks`` are each game's CPU bank,
        ``wall_banks`` its wall-clock bank (both what is left).

        Raises:
            BotFaultError: the whole process failed (every pending game forfeits).
        """

    def charged(self) -> list[float]:
        """The CPU seconds charged to each game of the last batch."""

    def waited(self) -> list[float]:
        """The wall-clock seconds each game of the last batch took (its share of the reply's
        wait)."""

    def end(self, game: str, result: Mapping[str, Any]) -> None:
        """A game is over (the bot may learn from ``result``)."""

    def close(self) -> None:
        """Stop the bot and release everything it held."""

    def stderr_tail(self) -> str:
        """The last bytes the bot wrote to stderr."""


class StrategyPlayer:
    """A built-in strategy (``random``, ``greedy``) of :mod:`~arena.match.strategies`: trusted."""

    def __init__(self, name: str, salt: str | None = None) -> None:
        self.name = name
        self._salt = salt
        self._strategies: dict[str, BuiltinStrategy] = {}
        self._pending: list[Answer] = []
        make_strategy(name, strategy_rng(0, 0))  # an unknown name fails now

    def open(self, time_control: TimeControl) -> None:
        return

    def start(
        self, game: str, seat: int, players: int, teams: bool, rules: Rules, seed: int
    ) -> None:
        self._strategies[game] = self.strategy(seat, seed)

    def strategy(self, seat: int, seed: int) -> BuiltinStrategy:
        """The strategy this player plays at ``seat`` in the game seeded ``seed``: seeded as
        arena.match.play seeds it (the same games as `arena play` gives), or, with a salt (a
        tournament entrant's name), by the entrant wherever it sits (two `random` entrants
        must not mirror each other on duplicate deals). Each game's strategy is its own, so
        a game is the same however many are played at once."""
        rng = strategy_rng(seed, seat) if self._salt is None else entrant_rng(seed, self._salt)
        return make_strategy(self.name, rng)

    def send(self, requests: Sequence[Request]) -> None:
        # (the built-in strategies read only the legal moves: no observation is built)
        self._pending = [self._strategies[r.game].choose(r.legal_moves()) for r in requests]

    def receive(
        self, time_control: TimeControl, banks: Sequence[float], wall_banks: Sequence[float]
    ) -> list[Answer]:
        return self._pending

    def charged(self) -> list[float]:
        return [0.0] * len(self._pending)

    def waited(self) -> list[float]:
        return [0.0] * len(self._pending)

    def end(self, game: str, result: Mapping[str, Any]) -> None:
        self._strategies.pop(game, None)

    def close(self) -> None:
        self._strategies.clear()

    def stderr_tail(self) -> str:
        return ""


class InProcessPlayer:
    """A bot file run in the referee's own process, through :mod:`arena.match.botkit`.

    Never for uploaded bots: only a developer's own code, explicitly (and for
    measuring the protocol's cost against it). Faults are still judged.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.name = path.stem
        self._runner: botkit.BotRunner | None = None
        self._views: dict[str, botkit.GameView] = {}
        self._pending: list[Answer] = []
        self._times: list[float] = []

    def open(self, time_control: TimeControl) -> None:
        try:
            self._runner = botkit.load_bot(self.path)
        except botkit.BotError as exc:
            raise BotFaultError(Termination.CRASH, str(exc)) from None
        self.name = self._runner.name

    def start(
        self, game: str, seat: int, players: int, teams: bool, rules: Rules, seed: int
    ) -> None:
        assert self._runner is not None
        info = botkit.GameInfo(game, seat, players, teams, rules.name, rules.params())
        self._views[game] = botkit.GameView(info)
        self._runner.start(info)

    def send(self, requests: Sequence[Request]) -> None:
        assert self._runner is not None
        self._pending, self._times = [], []
        for request in requests:
            started = time.process_time()
            self._pending.append(self._choose(request))
            self._times.append(time.process_time() - started)

    def _choose(self, request: Request) -> Answer:
        # As over protocol v3: the bot kit keeps the round's view, folding in new events.
        assert self._runner is not None
        view = self._views[request.game]
        start = view.round != request.round
        item = request.wire(0 if start else len(view.history), start)
        try:
            observation = view.fold(item)
            answer = self._runner.choose(request.game, observation, item["legal_moves"])
            return Move.parse(answer)
        except botkit.BotError as exc:
            return BotFaultError(Termination.ILLEGAL_MOVE, str(exc))
        except Exception as exc:  # the bot's own code raised: its crash
            return BotFaultError(Termination.CRASH, f"{type(exc).__name__}: {exc}")

    def receive(
        self, time_control: TimeControl, banks: Sequence[float], wall_banks: Sequence[float]
    ) -> list[Answer]:
        return self._pending

    def charged(self) -> list[float]:
        return self._times

    def waited(self) -> list[float]:
        return self._times

    def end(self, game: str, result: Mapping[str, Any]) -> None:
        self._views.pop(game, None)
        if self._runner is not None:
            try:
                self._runner.end(game, dict(result))
            except Exception:  # the game is over: the bot's error changes nothing
                logger.debug("bot %s raised in end()", self.name, exc_info=True)

    def close(self) -> None:
        self._runner = None
        self._views.clear()

    def stderr_tail(self) -> str:
        return ""
