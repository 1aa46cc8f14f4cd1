"""The bot side of the arena: what a bot sees, how a bot file is loaded, and the protocol loop.

This module is self-contained (standard library only, no other ``arena``
import): in a sandbox it is the only arena code next to the bot file, run as::

    python3 -I botkit.py path/to/mybot.py

A bot is one Python file with either a module-level function::

    def play(observation):
        return observation.legal_moves[0]

or a class ``Bot`` whose instance lives for one game (for bots with memory)::

    class Bot:
        def __init__(self):          # one instance per game
            self.seen = []
        def start(self, game):       # optional: GameInfo before the first move
            ...
        def play(self, observation): # required: return one of observation.legal_moves
            ...
        def end(self, result):       # optional: the game's result (a dict)
            ...

``play`` returns one of ``observation.legal_moves`` or its notation (``"6-4L"``).
See ``docs/writing-a-bot.md`` and ``docs/protocol.md``.
"""

from __future__ import annotations

import bisect
import collections
import importlib.util
import json
import os
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence
    from types import ModuleType
    from typing import TextIO

# A bot's start-up is paid at every match: the kit imports what answering needs and no
# more (no pathlib; traceback only when a bot's fault is reported: _print_fault).

__all__ = [
    "PROTOCOL_VERSION",
    "BotError",
    "BotRunner",
    "Draw",
    "GameInfo",
    "GameView",
    "Move",
    "Observation",
    "Pass",
    "Play",
    "Tile",
    "load_bot",
    "serve",
]

PROTOCOL_VERSION = 3

# The protocol's own references, bound when the kit is imported, before the bot is loaded:
# a bot shares this interpreter, and one that patches json (json.loads = ...) must break
# only itself, never the handshake or the replies.
_loads = json.loads
_dumps = json.dumps


class BotError(Exception):
    """The bot file cannot be loaded, or a bot answered something unusable."""


# --- values a bot sees -----------------------------------------------------------------


class Tile(NamedTuple):
    """A tile, high half first: ``Tile(6, 4)``, written ``"6-4"``."""

    high: int
    low: int

    @classmethod
    def parse(cls, text: str) -> Tile:
        """Parse ``"6-4"`` (either order)."""
        tile = _TILE_CACHE.get(text)
        if tile is None:
            a, _, b = text.partition("-")
            x, y = int(a), int(b)
            tile = cls(max(x, y), min(x, y))
            if len(_TILE_CACHE) < _CACHE_LIMIT:
                _TILE_CACHE[text] = tile
        return tile

    @property
    def pips(self) -> int:
        """Both halves added: ``6-4`` has 10."""
        return self.high + self.low

    @property
    def is_double(self) -> bool:
        """Whether both halves are equal."""
        return self.high == self.low

    def matches(self, pip: int) -> bool:
        """Whether either half shows ``pip``."""
        return self.high == pip or self.low == pip

    def other(self, pip: int) -> int:
        """The half opposite a half showing ``pip``."""
        if self.high == pip:
            return self.low
        if self.low == pip:
            return self.high
        raise ValueError(f"tile {self} has no half {pip}")

    def __str__(self) -> str:
        return f"{self.high}-{self.low}"


class Move(NamedTuple):
    """``tile`` on ``end`` (``"L"`` or ``"R"``; None for the first tile of a round)."""

    tile: Tile
    end: str | None

    @classmethod
    def parse(cls, text: str) -> Move:
        """Parse ``"6-4L"``, ``"6-4R"`` or a lead ``"6-6"``."""
        move = _MOVE_CACHE.get(text)
        if move is None:
            clean = text.strip()
            end = clean[-1].upper() if clean[-1:].upper() in ("L", "R") else None
            move = cls(Tile.parse(clean[:-1] if end else clean), end)
            if len(_MOVE_CACHE) < _CACHE_LIMIT:
                _MOVE_CACHE[text] = move
        return move

    def __str__(self) -> str:
        return f"{self.tile}{self.end or ''}"


#: Parsed notations (a request repeats the same few hundred): tiles and moves are immutable.
_TILE_CACHE: dict[str, Tile] = {}
_MOVE_CACHE: dict[str, Move] = {}
_CACHE_LIMIT = 4096


class Play(NamedTuple):
    """``seat`` played ``move`` (scoring ``points`` in play, ``muggins`` only)."""

    seat: int
    move: Move
    points: int = 0


class Draw(NamedTuple):
    """``seat`` drew a tile: yours show the tile, others' show None."""

    seat: int
    tile: Tile | None


class Pass(NamedTuple):
    """``seat`` could not play and passed."""

    seat: int


Event = Play | Draw | Pass


@dataclass(frozen=True)
class GameInfo:
    """What a bot knows when a game starts.

    Attributes:
        game: the game's id (unique within a match).
        seat: your seat, 0..players-1; play goes to seat+1.
        players: the number of seats.
        teams: whether seats 0+2 play against 1+3.
        rules: the rule set's name.
        params: the rule set's parameters (see docs/rules.md).
    """

    game: str
    seat: int
    players: int
    teams: bool
    rules: str
    params: dict[str, Any]


@dataclass(frozen=True)
class Observation:
    """What your bot knows when it must move. Never another hand, never the boneyard order.

    Attributes:
        seat: your seat.
        players: the number of seats.
        teams: whether seats 0+2 play against 1+3 (scores are then per team).
        rules: the rule set's name (``"draw"``); ``params`` has its parameters.
        params: the rule set's parameters (``params["target"]`` etc.).
        round: the round's number in the game, from 1.
        leader: the seat that led this round.
        hand: your tiles, ascending.
        line: the played tiles from left to right, each as (left half, right half).
        ends: the open ends (left, right), or None when you lead.
        hand_sizes: how many tiles each seat holds.
        boneyard_size: how many tiles are in the boneyard.
        drawable: how many of them may still be drawn.
        scores: each side's score (per seat, or per team).
        history: this round's public events: plays, draws, passes.
        legal_moves: your legal moves, sorted; return one of them.
    """

    seat: int
    players: int
    teams: bool
    rules: str
    params: dict[str, Any]
    round: int
    leader: int
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
        """Your index into ``scores``: your team in team play, else your seat."""
        return self.seat % 2 if self.teams else self.seat

    @property
    def partner(self) -> int | None:
        """Your partner's seat in team play, else None."""
        return (self.seat + 2) % 4 if self.teams else None

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Observation:
        """Build an observation from its JSON form (``arena.Observation.to_dict()``)."""
        rules = data["rules"]
        history = tuple(_event(e) for e in data["history"])
        return cls.from_fields(data, rules["name"], rules["params"], history)

    @classmethod
    def from_fields(
        cls, data: dict[str, Any], rules: str, params: dict[str, Any], history: tuple[Event, ...]
    ) -> Observation:
        """Build an observation from the JSON fields of either protocol's form, with the
        rule set and the history given apart."""
        ends = data["ends"]
        return cls(
            seat=data["seat"],
            players=data["players"],
            teams=data["teams"],
            rules=rules,
            params=params,
            round=data["round"],
            leader=data["leader"],
            hand=tuple(map(Tile.parse, data["hand"])),
            line=tuple((a, b) for a, b in data["line"]),
            ends=None if ends is None else (ends[0], ends[1]),
            hand_sizes=tuple(data["hand_sizes"]),
            boneyard_size=data["boneyard_size"],
            drawable=data["drawable"],
            scores=tuple(data["scores"]),
            history=history,
            legal_moves=tuple(map(Move.parse, data["legal_moves"])),
        )


def _event(data: dict[str, Any]) -> Event:
    kind = data["type"]
    if kind == "play":
        return Play(data["seat"], Move.parse(data["move"]), data.get("points", 0))
    if kind == "draw":
        tile = data.get("tile")
        return Draw(data["seat"], None if tile is None else Tile.parse(tile))
    return Pass(data["seat"])


# --- loading a bot ------------------------------------------------------------------


class _GameBot(Protocol):
    def play(self, observation: Observation, /) -> object: ...


class BotRunner:
    """A loaded bot file: makes one bot per game and asks it for moves.

    Raises:
        BotError: from :meth:`choose` when the bot's answer is not a legal move.
    """

    def __init__(self, module: ModuleType, name: str) -> None:
        self.name = name
        self._module = module
        self._games: dict[str, _GameBot] = {}
        bot_class = getattr(module, "Bot", None)
        play = getattr(module, "play", None)
        if isinstance(bot_class, type) and callable(getattr(bot_class, "play", None)):
            self._factory: Callable[[], _GameBot] = bot_class
        elif callable(play):
            self._factory = lambda: _FunctionBot(play)
        else:
            raise BotError(
                f"{name}: defines neither play(observation) nor a class Bot with a play method"
            )

    def start(self, info: GameInfo) -> None:
        """Make the bot for a new game and tell it the game's setup."""
        bot = self._factory()
        self._games[info.game] = bot
        start = getattr(bot, "start", None)
        if callable(start):
            start(info)

    def choose(
        self, game: str, observation: Observation, given: Sequence[str] | None = None
    ) -> str:
        """Ask the game's bot for a move; return its notation (``given``: the legal moves'
        notations as the request gave them, in order, returned as they are).

        Raises:
            BotError: the answer is not one of ``observation.legal_moves``.
        """
        bot = self._games.get(game)
        if bot is None:  # a request for a game never started: start it now
            raise BotError(f"no game {game!r} was started")
        answer = bot.play(observation)
        if given is not None:  # the kit's own Move from legal_moves: its notation as given
            for move, text in zip(observation.legal_moves, given, strict=True):
                if move is answer:
                    return text
        return _notation(answer, observation.legal_moves)

    def end(self, game: str, result: dict[str, Any]) -> None:
        """Tell the game's bot how the game ended, and drop it."""
        bot = self._games.pop(game, None)
        end = getattr(bot, "end", None)
        if callable(end):
            end(result)


class _FunctionBot:
    def __init__(self, play: Callable[[Observation], object]) -> None:
        self.play = play


def _notation(answer: object, legal: Sequence[Move]) -> str:
    """Return the notation of ``answer`` if it is one of ``legal``."""
    if isinstance(answer, str):
        try:
            answer = Move.parse(answer)
        except (ValueError, IndexError):
            raise BotError(f"answered {answer!r}, which is not a move like '6-4L'") from None
    if isinstance(answer, Move) or (
        isinstance(answer, tuple) and len(answer) == 2 and isinstance(answer[0], tuple)
    ):
        move = Move(Tile(*answer[0]), answer[1])
        if move in legal:
            return str(move)
        raise BotError(f"answered {move}, which is not legal (legal: {', '.join(map(str, legal))})")
    raise BotError(f"answered {answer!r}, which is not a move")


def load_bot(path: str | os.PathLike[str]) -> BotRunner:
    """Import a bot file as a fresh module.

    Raises:
        BotError: the file is missing, fails to import, or defines no bot.
        (Anything the bot's own code raises at import comes out as BotError.)
    """
    path = os.fspath(path)
    name = os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(f"arena_bot_{name}", path)
    if spec is None or spec.loader is None:
        raise BotError(f"{path}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except FileNotFoundError:
        raise BotError(f"{path}: no such file") from None
    except Exception as exc:  # the bot's own code: any error is its fault
        raise BotError(f"{path}: failed at import: {_error_line(exc)}") from exc
    return BotRunner(module, str(getattr(module, "NAME", name)))


def _error_line(exc: BaseException) -> str:
    """``Type: message (line N)``: the line of the bot's file where it went wrong (for a
    SyntaxError the line of the bot's own source, not the kit's import of it)."""
    if isinstance(exc, SyntaxError):
        return f"{type(exc).__name__}: {exc.msg} (line {exc.lineno})"
    import traceback  # (only for a fault: see the imports)

    frames = traceback.extract_tb(exc.__traceback__)
    where = f" (line {frames[-1].lineno})" if frames else ""
    hint = ""
    if isinstance(exc, PermissionError) and exc.errno == 1:
        hint = " (in the sandbox a bot may not start processes: threads only)"
    return f"{type(exc).__name__}: {exc}{where}{hint}"


def _print_fault() -> None:
    """The exception being handled, with its traceback, on stderr (the bot's log)."""
    import traceback  # (only for a fault: see the imports)

    traceback.print_exc(file=sys.stderr)


# --- the protocol loop -----------------------------------------------------------------


def serve(runner: BotRunner, stdin: TextIO, stdout: TextIO) -> int:
    """Answer the referee's messages (docs/protocol.md) until ``quit`` or end of input.

    Returns the process exit status.
    """
    views: dict[str, GameView] = {}
    for message in _messages(stdin):
        kind = message.get("type")
        reply = _handle(runner, kind, message, views)
        if reply is not None:
            stdout.write(_dumps(reply, separators=(",", ":")) + "\n")
            stdout.flush()
        if kind == "quit":
            return 0
    return 0


def _messages(stdin: TextIO) -> Iterator[dict[str, Any]]:
    for line in stdin:
        if not line.isspace():  # (no copy of a long line, as strip() makes)
            yield _loads(line)


class GameView:
    """One game as this bot has seen it: over protocol v2 the rule set from ``start`` and the
    round's history so far, to which each request's new events are added; over v3 also
    the round's state, kept up to date by folding in each new event (nothing is rebuilt
    from the history at a decision)."""

    def __init__(self, info: GameInfo) -> None:
        self.info = info
        self.round = -1
        self.history: list[Event] = []
        self._side = info.seat % 2 if info.teams else info.seat
        self._leader = 0
        self._hand: list[Tile] = []
        self._line: collections.deque[tuple[int, int]] = collections.deque()
        self._left = self._right = -1
        self._sizes: list[int] = []
        self._boneyard = self._drawable = 0
        self._scores: list[int] = []

    def observe(self, delta: dict[str, Any]) -> Observation:
        """The full observation a v2 delta stands for (the same as v1's ``observation``)."""
        if delta["round"] != self.round or delta["history_from"] == 0:
            self.round, self.history = delta["round"], []
        if delta["history_from"] != len(self.history):
            raise ValueError(
                f"history_from {delta['history_from']}, but {len(self.history)} events seen"
            )
        self.history.extend(_event(e) for e in delta["events"])
        info = self.info
        return Observation.from_fields(delta, info.rules, info.params, tuple(self.history))

    def fold(self, request: dict[str, Any]) -> Observation:
        """The full observation a v3 request stands for: a new round's state (``round``)
        if there is one, then each new event folded in (the same as v1's ``observation``).

        Raises:
            ValueError: an event in a notation the kit does not know, or one that does not
                fit the round (a tile played that this seat does not hold).
        """
        start = request.get("round")
        if start is not None:
            self._begin(start)
        history = self.history
        seat = self.info.seat
        for text in request["events"]:
            event = _WIRE_EVENTS.get(text) or _wire_event(text)
            history.append(event)
            kind = type(event)
            if kind is Play:
                self._play(event)  # type: ignore[arg-type]
            elif kind is Draw:
                who = event.seat
                self._sizes[who] += 1
                self._boneyard -= 1
                self._drawable -= 1
                if who == seat and event.tile is not None:  # type: ignore[union-attr]
                    bisect.insort(self._hand, event.tile)  # type: ignore[union-attr]
        info = self.info
        # Made without the frozen __init__ (a setattr per field is half the kit's cost here):
        # the same fields, so the same value, equal and printed alike.
        observation = _new_observation(Observation)
        _set_fields(
            observation,
            "__dict__",
            {
                "seat": seat,
                "players": info.players,
                "teams": info.teams,
                "rules": info.rules,
                "params": info.params,
                "round": self.round,
                "leader": self._leader,
                "hand": tuple(self._hand),
                "line": tuple(self._line),
                "ends": None if self._left < 0 else (self._left, self._right),
                "hand_sizes": tuple(self._sizes),
                "boneyard_size": self._boneyard,
                "drawable": self._drawable,
                "scores": tuple(self._scores),
                "history": tuple(history),
                "legal_moves": tuple(map(Move.parse, request["legal_moves"])),
            },
        )
        return observation

    def _begin(self, start: dict[str, Any]) -> None:
        """A new round, from its state as it began."""
        self.round = start["number"]
        self._leader = start["leader"]
        self._hand = [Tile.parse(text) for text in start["hand"]]
        self._hand.sort()
        self._sizes = list(start["hand_sizes"])
        self._boneyard = start["boneyard_size"]
        self._drawable = start["drawable"]
        self._scores = list(start["scores"])
        self._line = collections.deque()
        self._left = self._right = -1
        self.history = []

    def _play(self, event: Play) -> None:
        who = event.seat
        tile, end = event.move
        if end is None:
            self._left, self._right = tile.high, tile.low
            self._line.append((tile.high, tile.low))
        elif end == "L":
            old = self._left
            self._left = tile.other(old)
            self._line.appendleft((self._left, old))
        else:
            old = self._right
            self._right = tile.other(old)
            self._line.append((old, self._right))
        self._sizes[who] -= 1
        if who == self.info.seat:
            self._hand.remove(tile)
        if event.points:
            info = self.info
            self._scores[who % 2 if info.teams else who] += event.points


_new_observation = object.__new__
_set_fields = object.__setattr__

#: Parsed event notations (protocol v3): a match repeats the same few hundred.
_WIRE_EVENTS: dict[str, Event] = {}


def _wire_event(text: str) -> Event:
    """Parse an event's notation: ``"play 0 6-4L"`` (``"play 0 5-0R 1"`` with points),
    ``"draw 1"``, ``"draw 0 6-4"``, ``"pass 1"``.

    Raises:
        ValueError: not an event's notation.
    """
    parts = text.split(" ")
    kind, seat = parts[0], int(parts[1]) if len(parts) > 1 else -1
    event: Event
    if kind == "play" and len(parts) in (3, 4) and seat >= 0:
        event = Play(seat, Move.parse(parts[2]), int(parts[3]) if len(parts) == 4 else 0)
    elif kind == "draw" and len(parts) in (2, 3) and seat >= 0:
        event = Draw(seat, Tile.parse(parts[2]) if len(parts) == 3 else None)
    elif kind == "pass" and len(parts) == 2 and seat >= 0:
        event = Pass(seat)
    else:
        raise ValueError(f"not an event: {text!r}")
    if len(_WIRE_EVENTS) < _CACHE_LIMIT:
        _WIRE_EVENTS[text] = event
    return event


def _handle(
    runner: BotRunner, kind: object, message: dict[str, Any], views: dict[str, GameView]
) -> dict[str, Any] | None:
    if kind == "hello":
        offered = message.get("max_protocol", message.get("protocol", 1))
        protocol = max(1, min(offered, PROTOCOL_VERSION)) if isinstance(offered, int) else 1
        return {"type": "hello", "protocol": protocol, "bot": runner.name}
    if kind == "start":
        info = GameInfo(
            game=message["game"],
            seat=message["seat"],
            players=message["players"],
            teams=message["teams"],
            rules=message["rules"]["name"],
            params=message["rules"]["params"],
        )
        views[info.game] = GameView(info)
        try:
            runner.start(info)
        except Exception as exc:  # the bot's fault, reported per game
            _print_fault()
            return {"type": "error", "game": info.game, "message": _error_line(exc)}
        return None
    if kind == "act":
        moves = [_act(runner, request, views) for request in message["requests"]]
        return {"type": "moves", "seq": message.get("seq"), "moves": moves}
    if kind == "end":
        views.pop(message["game"], None)
        try:
            runner.end(message["game"], message.get("result") or {})
        except Exception:  # the game is over; only stderr hears of it
            _print_fault()
        return None
    if kind == "quit":
        return None
    return {"type": "error", "message": f"unknown message type {kind!r}"}


def _act(
    runner: BotRunner, request: dict[str, Any], views: dict[str, GameView]
) -> str | dict[str, str]:
    game = request["game"]
    given: list[str] | None = None
    if "events" in request:
        observation = views[game].fold(request)
        given = request["legal_moves"]
    elif "delta" in request:
        observation = views[game].observe(request["delta"])
    else:
        observation = Observation.from_dict(request["observation"])
    try:
        return runner.choose(game, observation, given)
    except BotError as exc:
        return {"error": "illegal", "message": str(exc)}
    except Exception as exc:  # the bot's own code raised: its crash
        _print_fault()
        return {"error": "crash", "message": _error_line(exc)}


def main(argv: list[str] | None = None) -> int:
    """``python3 botkit.py [--path DIR] BOT_FILE``: load the bot (DIR, a runtime's packages
    such as numpy's, first on ``sys.path``) and serve the protocol on stdin/stdout."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) == 3 and args[0] == "--path":
        sys.path.insert(0, args[1])  # -I ignores PYTHONPATH: the runtime's packages come here
        args = args[2:]
    if len(args) != 1:
        print("usage: botkit.py [--path DIR] BOT_FILE", file=sys.stderr)
        return 2
    # The bot's prints must not corrupt the protocol: file descriptor 1 becomes
    # stderr, and the protocol keeps a private copy of the real stdout.
    sys.stdout.flush()
    protocol_out = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    try:
        runner = load_bot(args[0])
    except BotError as exc:
        print(f"botkit: {exc}", file=sys.stderr)
        return 3
    return serve(runner, sys.stdin, protocol_out)


if __name__ == "__main__":
    sys.exit(main())
