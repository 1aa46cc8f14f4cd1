"""A table's channel, over Redis: people's moves from the web to the worker that referees
the table, and what each seat may see from the worker to the web.

Per table and seat, two keys (docs/tables.md):

- ``arena:table:KEY:moves:SEAT`` (KEY: the table's random channel key), a list: the web
  pushes a checked move (with the decision's number it answers); the worker waits on it
  (``BLPOP``, the person's move time at most) and drops a move sent for an earlier
  decision.
- ``arena:table:KEY:views:SEAT``, a stream: the worker adds the seat's view
  (:func:`arena.engine.seatview.seat_view`, with the seats' names and the move's deadline)
  after every move and when the game ends; the web reads the newest, or waits
  (``XREAD BLOCK``) for one after the page's.

- ``arena:table:KEY:views:all`` (:data:`SPECTATORS`), a stream: the spectators' view
  (:func:`arena.engine.spectate.spectator_view`, no hand shown until its round is over),
  added with the seats'; a table's watching page reads the newest
  (:func:`arena.service.tables.watch_table`). It is keyed by the channel, not the table's
  id, so two databases sharing one Redis never meet, and it lives as the seats' do (a
  person may think longer than the live feed keeps a match's stream).

Streams are capped (:data:`STREAM_LENGTH`) and every key expires a day after its last
write: nothing in Redis outlives the table's use. The table's state and record are the
database's; Redis only carries the game while it is played.

The channel's Redis is ``ARENA_TABLES_URL``, else the broker's when it is Redis
(``ARENA_BROKER_URL``); with neither, tables are off (:func:`channel_url` says so).
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from arena.engine.game import Game
from arena.engine.seatview import game_turn, seat_view
from arena.engine.spectate import spectator_view
from arena.errors import ArenaError
from arena.service.broker import BROKER_ENV

if TYPE_CHECKING:  # (imported by channel(), as a table is played or watched)
    import redis

__all__ = [
    "SPECTATORS",
    "STREAM_LENGTH",
    "TABLES_URL_ENV",
    "RedisFeed",
    "TableError",
    "channel",
    "channel_url",
    "latest_view",
    "next_view",
    "push_move",
]

#: The environment variable naming the channel's Redis.
TABLES_URL_ENV = "ARENA_TABLES_URL"
#: The stream's name of the spectators' view (in place of a seat's number).
SPECTATORS = "all"
#: The views kept in a seat's stream.
STREAM_LENGTH = 64
#: A key lives this long after its last write.
KEY_SECONDS = 24 * 3600
#: The longest a blocking read waits at once (a person's move is awaited in such slices),
#: and the socket's timeout above it: a Redis gone away costs a wait at most that.
BLOCK_SECONDS = 15.0
SOCKET_SECONDS = BLOCK_SECONDS + 5


class TableError(ArenaError):
    """A table cannot be opened, joined or played as asked (the message says why, in a
    sentence)."""


_clients: dict[str, redis.Redis] = {}
_lock = threading.Lock()


def channel_url(environ: Mapping[str, str] | None = None) -> str | None:
    """The channel's Redis URL: ``ARENA_TABLES_URL``, else the broker's if it is Redis, else
    None (tables are off)."""
    env = os.environ if environ is None else environ
    url = env.get(TABLES_URL_ENV) or env.get(BROKER_ENV) or ""
    return url if url.startswith(("redis://", "rediss://")) else None


def channel(url: str | None = None) -> redis.Redis:
    """This process's client of the channel's Redis (one a URL, thread-safe).

    Raises:
        TableError: no Redis is configured (the sentence says which variable to set).
    """
    url = url or channel_url()
    if url is None:
        raise TableError(
            "Playing at a table needs Redis: set ARENA_TABLES_URL (or ARENA_BROKER_URL) to "
            "redis://HOST:PORT/DB."
        )
    import redis

    with _lock:
        client = _clients.get(url)
        if client is None:
            client = _clients[url] = redis.Redis.from_url(
                url,
                decode_responses=True,
                socket_timeout=SOCKET_SECONDS,
                socket_connect_timeout=5,
            )
        return client


def _moves(table: str, seat: int) -> str:
    return f"arena:table:{table}:moves:{seat}"


def _views(table: str, seat: int | str) -> str:
    return f"arena:table:{table}:views:{seat}"


def push_move(client: redis.Redis, table: str, seat: int, turn: int, move: str) -> None:
    """Send the move of the person at ``seat`` for decision ``turn`` to the worker."""
    key = _moves(table, seat)
    pipe = client.pipeline()
    pipe.rpush(key, json.dumps({"turn": turn, "move": move}))
    pipe.expire(key, KEY_SECONDS)
    pipe.execute()


def _view(entry: Any) -> tuple[str, dict[str, Any]]:
    entry_id, fields = entry
    return str(entry_id), json.loads(fields["view"])


def latest_view(
    client: redis.Redis, table: str, seat: int | str
) -> tuple[str, dict[str, Any]] | None:
    """The newest view of ``seat`` (or :data:`SPECTATORS`) with its id, or None."""
    entries: Any = client.xrevrange(_views(table, seat), count=1)
    return _view(entries[0]) if entries else None


def next_view(
    client: redis.Redis, table: str, seat: int, after: str, wait_seconds: float
) -> tuple[str, dict[str, Any]] | None:
    """The newest view of ``seat`` after the one with id ``after`` ("0": any), waiting up to
    ``wait_seconds`` for one; None when none came."""
    key = _views(table, seat)
    block = max(1, int(min(wait_seconds, BLOCK_SECONDS) * 1000))
    found: Any = client.xread({key: after}, block=block)
    if not found:
        return None
    entries = found[0][1]
    return _view(entries[-1])


class RedisFeed:
    """The worker's side (:class:`arena.match.human.TableFeed`): the views of the people at
    ``humans`` published after every move (:meth:`step`, the referee's ``watch``) and when a
    person is to move, the spectators' view beside them, the people's moves awaited.

    ``table_id`` is the table's id and ``table`` its channel key; ``names`` are the seats'
    names (the page shows them); ``move_seconds`` is a person's time for a move (the page
    counts it down)."""

    def __init__(
        self,
        client: redis.Redis,
        table_id: int,
        table: str,
        humans: Sequence[int],
        names: Sequence[str],
        move_seconds: float,
    ) -> None:
        self.client = client
        self.table_id = table_id
        self.table = table
        self.humans = list(humans)
        self.names = list(names)
        self.move_seconds = move_seconds
        self._shown: tuple[int, int, str] | None = None

    def step(self, index: int, game: Game) -> None:
        """The referee's ``watch``: publish the game after a move (once a state; the end
        is the table's to publish, with its verdict)."""
        if not game.is_terminal():
            self.publish(game)

    def publish(self, game: Game, *, status: str = "playing", verdict: Any = None) -> None:
        """Add each person's view to their streams, and the spectators' to theirs; nothing
        when this state (its decision and status) was published already."""
        state = (len(game.rounds), game_turn(game), status)
        if state == self._shown:
            return
        self._shown = state
        extra = {
            "names": self.names,
            "humans": self.humans,
            "move_seconds": self.move_seconds,
            "deadline": time.time() + self.move_seconds,
            "status": status,
            "verdict": verdict,
        }
        views: list[tuple[int | str, dict[str, Any]]] = [
            (seat, seat_view(game, seat)) for seat in self.humans
        ]
        views.append((SPECTATORS, spectator_view(game)))
        pipe = self.client.pipeline()  # (MULTI: a reader sees every view of a state, or none)
        for seat, view in views:
            key = _views(self.table, seat)
            entry = json.dumps({**view, **extra})
            pipe.xadd(key, {"view": entry}, maxlen=STREAM_LENGTH, approximate=True)
            pipe.expire(key, KEY_SECONDS)
        pipe.execute()

    def wait_move(self, seat: int, turn: int, seconds: float) -> str | None:
        """The move the person at ``seat`` sent for decision ``turn`` (moves for earlier
        ones are dropped), or None after ``seconds``."""
        deadline = time.monotonic() + seconds
        key = _moves(self.table, seat)
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            popped: Any = self.client.blpop([key], timeout=min(left, BLOCK_SECONDS))
            if popped is None:
                continue
            try:
                sent = json.loads(popped[1])
            except ValueError:
                continue
            if isinstance(sent, dict) and sent.get("turn") == turn:
                move = sent.get("move")
                if isinstance(move, str):
                    return move
