"""The live feed: a game's spectator views published while it is played, for pages to read.

A feed is a Redis stream per game in play (a match's, ``match_key(id)``; a human table may
use a key of its own): each entry is one :func:`arena.engine.spectate.spectator_view`,
whole, so a reader needs only the latest entry to draw the game, and the entries after an
id to follow it. Streams are capped (``XADD ... MAXLEN ~`` :data:`KEEP`) and expire
:data:`TTL_SECONDS` after their last entry, so a worker that dies leaves nothing behind.
The engine decides what a spectator sees; nothing here filters.

Publish (what a worker does for a match: :func:`match_watch` gives the referee's ``watch``)::

    feed = Feed.from_url("redis://localhost:6379/0")   # or live_feed(): the deployment's
    feed.publish(match_key(42), spectator_view(game, index=3))

Read (what the web does)::

    feed.watch(match_key(42))          # "someone is watching": publishers skip unwatched games
    latest = feed.latest(match_key(42))        # (entry id, view) or None
    newer = feed.read(match_key(42), after=entry_id, block_seconds=5)   # [(id, view), ...]

A match's publisher (:class:`MatchPublisher`) costs the match almost nothing: it asks
whether anyone watches once every :data:`CHECK_SECONDS` (one ``EXISTS``), and while someone
does, publishes the followed game at most once every :data:`PUBLISH_SECONDS` (and the step
the game ends). A Redis fault never fails a match: the publisher logs it and rests.

The deployment's feed is ``ARENA_LIVE_URL``, else the broker's when it is Redis
(``ARENA_BROKER_URL``), else a folder in ``ARENA_INSTANCE_PATH`` (which ``arena serve``
sets: its web and its workers share one machine); with none of them there is no feed
(:func:`live_feed` is None) and games are not watched live. A folder (``file:///PATH``,
:class:`FolderFeed`) keeps only each key's latest view, one small file replaced whole, and
the watching marks as files' times: the same methods, for one machine with nothing to
install, as the filesystem broker.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import unquote, urlsplit

from arena.engine.game import Game
from arena.engine.spectate import spectator_view

if TYPE_CHECKING:  # (imported by the feed on Redis, which alone needs it)
    import redis

__all__ = [
    "CHECK_SECONDS",
    "FEED_ENV",
    "KEEP",
    "PUBLISH_SECONDS",
    "TTL_SECONDS",
    "WATCH_SECONDS",
    "Feed",
    "FolderFeed",
    "LiveFeed",
    "MatchPublisher",
    "feed_url",
    "live_feed",
    "match_key",
    "match_watch",
    "open_feed",
    "redis_errors",
]

log = logging.getLogger(__name__)

#: The environment variable naming the feed's Redis (else the broker's, if Redis).
FEED_ENV = "ARENA_LIVE_URL"
#: Entries a stream keeps (about: ``MAXLEN ~``); a reader needs only the latest.
KEEP = 64
#: A stream expires this long after its last entry (a worker gone leaves nothing).
TTL_SECONDS = 120
#: A reader's "watching" mark lasts this long (a page renews it as it polls).
WATCH_SECONDS = 15
#: A publisher asks whether anyone watches at most this often.
CHECK_SECONDS = 1.0
#: A watched game is published at most this often (and the step it ends): a page polls
#: about once a second and draws the latest view.
PUBLISH_SECONDS = 0.5
#: A publisher whose Redis failed rests this long before it tries again.
REST_SECONDS = 30.0
#: Games that ended a view lists (the latest last).
ENDED_SHOWN = 5


def redis_errors() -> tuple[type[BaseException], ...]:
    """What a feed or a table's channel raises when it is away or refuses: ``OSError``, and
    Redis's errors once Redis is loaded (only a feed or a channel on Redis loads it, so none
    can be raised before: a worker or a command on the embedded default never loads it,
    ~0.1 CPU s and 90 modules with its asyncio)."""
    loaded = sys.modules.get("redis")
    return (OSError,) if loaded is None else (loaded.RedisError, OSError)


def match_key(match_id: int) -> str:
    """The stream of stored match ``match_id``'s game in play."""
    return f"arena:live:match:{match_id}"


def _watching_key(key: str) -> str:
    return f"{key}:watching"


class LiveFeed(Protocol):
    """What publishers and readers use of a feed (:class:`Feed`, :class:`FolderFeed`)."""

    def publish(self, key: str, view: Mapping[str, Any]) -> str: ...

    def latest(self, key: str) -> tuple[str, dict[str, Any]] | None: ...

    def read(
        self, key: str, after: str = "0-0", *, count: int = KEEP, block_seconds: float = 0.0
    ) -> list[tuple[str, dict[str, Any]]]: ...

    def watch(self, key: str) -> None: ...

    def watched(self, key: str) -> bool: ...


class Feed:
    """Spectator views in Redis streams, one a key (see the module's docstring)."""

    def __init__(self, client: redis.Redis) -> None:
        self.client = client

    @classmethod
    def from_url(cls, url: str) -> Feed:
        """A feed on the Redis at ``url`` (connected at its first use; short timeouts, so
        a Redis gone away costs a publisher or a page at most a second)."""
        import redis

        return cls(redis.Redis.from_url(url, socket_timeout=1.0, socket_connect_timeout=1.0))

    def publish(self, key: str, view: Mapping[str, Any]) -> str:
        """Add ``view`` to ``key``'s stream (capped, its expiry renewed); return its id.

        Raises:
            OSError, redis.RedisError: Redis is away or refused (:func:`redis_errors`).
        """
        pipe = self.client.pipeline(transaction=False)
        pipe.xadd(key, {"view": json.dumps(view, separators=(",", ":"))}, maxlen=KEEP)
        pipe.expire(key, TTL_SECONDS)
        entry_id, _ = pipe.execute()
        return _text(entry_id)

    def latest(self, key: str) -> tuple[str, dict[str, Any]] | None:
        """The latest view of ``key`` and its id, or None (nothing published, or expired).

        Raises:
            OSError, redis.RedisError: Redis is away or refused (:func:`redis_errors`).
        """
        entries: Any = self.client.xrevrange(key, count=1)
        return None if not entries else _entry(entries[0])

    def read(
        self, key: str, after: str = "0-0", *, count: int = KEEP, block_seconds: float = 0.0
    ) -> list[tuple[str, dict[str, Any]]]:
        """The views of ``key`` after the id ``after`` (at most ``count``, oldest first);
        with ``block_seconds``, wait that long for one when there is none yet.

        Raises:
            OSError, redis.RedisError: Redis is away or refused (:func:`redis_errors`).
        """
        block = int(block_seconds * 1000) or None
        answer: Any = self.client.xread({key: after}, count=count, block=block)
        return [_entry(entry) for _, entries in answer for entry in entries]

    def watch(self, key: str) -> None:
        """Mark ``key`` watched for :data:`WATCH_SECONDS` (publishers skip unwatched games).

        Raises:
            OSError, redis.RedisError: Redis is away or refused (:func:`redis_errors`).
        """
        self.client.set(_watching_key(key), 1, ex=WATCH_SECONDS)

    def watched(self, key: str) -> bool:
        """Whether a reader marked ``key`` watched in the last :data:`WATCH_SECONDS`.

        Raises:
            OSError, redis.RedisError: Redis is away or refused (:func:`redis_errors`).
        """
        return bool(self.client.exists(_watching_key(key)))


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def _entry(entry: Any) -> tuple[str, dict[str, Any]]:
    """One stream entry, ``(id, {"view": JSON})``, as ``(id, view)``."""
    entry_id, fields = entry
    raw = fields.get(b"view", fields.get("view", b"{}"))
    view: dict[str, Any] = json.loads(raw)
    return _text(entry_id), view


class FolderFeed:
    """A feed in a folder of one machine: each key's latest view in a file (replaced whole,
    so a reader never sees half of one), ignored once :data:`TTL_SECONDS` old; a key's
    watching mark is a file's time. Ids are the views' times in nanoseconds, ``N-0``."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._pruned = float("-inf")

    def _path(self, key: str, suffix: str) -> Path:
        return self.folder / (key.replace("/", "_").replace(":", "_") + suffix)

    def publish(self, key: str, view: Mapping[str, Any]) -> str:
        """Replace ``key``'s view with ``view``; return its id.

        Raises:
            OSError: the folder cannot be written.
        """
        self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        entry_id = f"{time.time_ns()}-0"
        text = json.dumps({"id": entry_id, "view": view}, separators=(",", ":"))
        with tempfile.NamedTemporaryFile("w", dir=self.folder, delete=False) as partial:
            partial.write(text)
        os.replace(partial.name, self._path(key, ".json"))
        return entry_id

    def latest(self, key: str) -> tuple[str, dict[str, Any]] | None:
        """``key``'s view and its id, or None (none, or older than :data:`TTL_SECONDS`)."""
        path = self._path(key, ".json")
        try:
            if time.time() - path.stat().st_mtime > TTL_SECONDS:
                return None
            entry = json.loads(path.read_text())
        except (OSError, ValueError):
            return None
        return str(entry["id"]), dict(entry["view"])

    def read(
        self, key: str, after: str = "0-0", *, count: int = KEEP, block_seconds: float = 0.0
    ) -> list[tuple[str, dict[str, Any]]]:
        """``key``'s view if it is newer than the id ``after`` (only the latest is kept);
        with ``block_seconds``, look again every 50 ms that long for one."""
        deadline = time.monotonic() + block_seconds
        while True:
            found = self.latest(key)
            if found is not None and _order(found[0]) > _order(after):
                return [found]
            if time.monotonic() >= deadline:
                return []
            time.sleep(0.05)

    def watch(self, key: str) -> None:
        """Mark ``key`` watched for :data:`WATCH_SECONDS`.

        Raises:
            OSError: the folder cannot be written.
        """
        self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        self._path(key, ".watching").touch()
        if time.monotonic() - self._pruned > TTL_SECONDS:
            self._pruned = time.monotonic()
            self.prune()

    def prune(self) -> int:
        """Delete the files older than :data:`TTL_SECONDS` (matches over, marks gone
        stale; done by :meth:`watch` at most once in that time); return how many."""
        deleted = 0
        now = time.time()
        for path in self.folder.iterdir():
            with contextlib.suppress(OSError):  # (another process pruned it first)
                if now - path.stat().st_mtime > TTL_SECONDS:
                    path.unlink()
                    deleted += 1
        return deleted

    def watched(self, key: str) -> bool:
        """Whether ``key`` was marked watched in the last :data:`WATCH_SECONDS`."""
        try:
            marked = self._path(key, ".watching").stat().st_mtime
        except OSError:
            return False
        return time.time() - marked <= WATCH_SECONDS


def _order(entry_id: str) -> tuple[int, int]:
    first, _, second = entry_id.partition("-")
    return int(first or 0), int(second or 0)


class MatchPublisher:
    """The referee's ``watch`` for one match (:func:`arena.match.referee.play_match`):
    while someone watches ``key``, publishes the game it is told of, throttled (see the
    module's docstring); each view lists the last games that ended (``ended``)."""

    def __init__(
        self,
        feed: LiveFeed,
        key: str,
        *,
        clock: Callable[[], float] = time.monotonic,
        check_seconds: float = CHECK_SECONDS,
        publish_seconds: float = PUBLISH_SECONDS,
    ) -> None:
        self.feed, self.key, self.clock = feed, key, clock
        self.check_seconds, self.publish_seconds = check_seconds, publish_seconds
        self.watched = False
        self.published = 0
        self._check_at = float("-inf")
        self._publish_at = float("-inf")
        self._index: int | None = None
        self._ended: list[dict[str, Any]] = []

    def __call__(self, index: int, game: Game) -> None:
        now = self.clock()
        if now >= self._check_at:
            self._check_at = now + self.check_seconds
            self.watched = bool(self._safely(self.feed.watched, self.key))
        over = game.is_terminal()
        if not self.watched or (index == self._index and not over and now < self._publish_at):
            return
        self._index, self._publish_at = index, now + self.publish_seconds
        view = spectator_view(game, index=index)
        if over:
            self._ended = [*self._ended, {"game": index, **view["outcome"]}][-ENDED_SHOWN:]
        view["ended"] = self._ended
        if self._safely(self.feed.publish, self.key, view) is not None:
            self.published += 1

    def _safely(self, call: Callable[..., Any], *args: Any) -> Any:
        """``call(*args)``, or None after a Redis fault (logged; no more asking for a while)."""
        try:
            return call(*args)
        except redis_errors() as exc:
            log.warning("live feed %s: %s (resting %g s)", self.key, exc, REST_SECONDS)
            self.watched = False
            self._check_at = self.clock() + REST_SECONDS
            return None


def feed_url(environ: Mapping[str, str] | None = None) -> str | None:
    """The deployment's feed: ``ARENA_LIVE_URL``, else the broker's Redis, else the folder
    ``live`` in ``ARENA_INSTANCE_PATH``, else None."""
    env = os.environ if environ is None else environ
    configured = env.get(FEED_ENV, "").strip()
    if configured:
        return configured
    broker = env.get("ARENA_BROKER_URL", "").strip()  # (broker.BROKER_ENV: it imports us)
    if broker.startswith(("redis://", "rediss://")):
        return broker
    instance = env.get("ARENA_INSTANCE_PATH", "").strip()
    return (Path(instance).resolve() / "live").as_uri() if instance else None


def open_feed(url: str) -> LiveFeed:
    """The feed at ``url``: ``redis://`` or ``rediss://`` (:class:`Feed`), ``file:///PATH``
    (:class:`FolderFeed`).

    Raises:
        ValueError: ``url`` is neither (the sentence names it).
    """
    if url.startswith(("redis://", "rediss://", "unix://")):
        return Feed.from_url(url)
    parts = urlsplit(url)
    if parts.scheme == "file" and parts.path:
        return FolderFeed(Path(unquote(parts.path)))
    raise ValueError(
        f"{FEED_ENV} is {url!r}: give a Redis URL (redis://HOST:PORT/DB) or a folder "
        "(file:///PATH) for the live feed"
    )


_feeds: dict[tuple[int, str], LiveFeed] = {}


def live_feed(url: str | None = None) -> LiveFeed | None:
    """This process's feed on ``url`` (default :func:`feed_url`), made once a process (a
    forked worker makes its own connection); None when the deployment has none.

    Raises:
        ValueError: the URL names no feed (:func:`open_feed`).
    """
    url = url or feed_url()
    if url is None:
        return None
    key = (os.getpid(), url)
    feed = _feeds.get(key)
    if feed is None:
        feed = _feeds[key] = open_feed(url)
    return feed


def match_watch(match_id: int) -> MatchPublisher | None:
    """The referee's ``watch`` for stored match ``match_id`` on the deployment's feed, or
    None without one (or with a setting that names none: logged, the match played)."""
    try:
        feed = live_feed()
    except ValueError as exc:
        log.warning("no live feed: %s", exc)
        return None
    return None if feed is None else MatchPublisher(feed, match_key(match_id))
