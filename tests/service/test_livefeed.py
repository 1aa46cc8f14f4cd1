"""The live feed (arena.service.livefeed) on a real redis-server: views published while a
match is played, only while watched, throttled; a Redis gone never fails a match."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from arena.engine.game import Game
from arena.engine.rules import find_rules
from arena.match.referee import StrategyPlayer, play_match
from arena.service.livefeed import (
    KEEP,
    TTL_SECONDS,
    Feed,
    FolderFeed,
    MatchPublisher,
    feed_url,
    match_key,
    open_feed,
)
from tests.engine.test_spectate import _named_tiles, _played
from tests.servers import free_port, running_redis


@pytest.fixture(scope="module")
def feed() -> Iterator[Feed]:
    """A feed on a redis-server of the module's own."""
    with running_redis() as server:
        yield Feed.from_url(server.url)


class Recording(Feed):
    """A feed that keeps a copy of each view it publishes (the stream keeps the last
    :data:`KEEP`)."""

    def __init__(self, feed: Feed) -> None:
        super().__init__(feed.client)
        self.views: list[dict[str, Any]] = []

    def publish(self, key: str, view: Mapping[str, Any]) -> str:
        self.views.append(json.loads(json.dumps(view)))
        return super().publish(key, view)


class Clock:
    """A clock the test moves."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_views_are_published_capped_expiring_and_read_back(feed: Feed) -> None:
    """publish, latest, read after an id (and waiting for one), the cap, the expiry."""
    key = "test:feed:basic"
    assert feed.latest(key) is None and feed.read(key) == []
    ids = [feed.publish(key, {"n": n}) for n in range(KEEP * 3)]
    assert feed.latest(key) == (ids[-1], {"n": KEEP * 3 - 1})
    last = KEEP * 3 - 1
    assert feed.read(key, after=ids[-3]) == [(ids[-2], {"n": last - 1}), (ids[-1], {"n": last})]
    assert KEEP <= feed.client.xlen(key) < KEEP * 3
    assert 0 < int(feed.client.ttl(key)) <= TTL_SECONDS
    assert feed.read(key, after=ids[-1], block_seconds=0.05) == []
    assert not feed.watched(key)
    feed.watch(key)
    assert feed.watched(key)


def test_a_publisher_publishes_only_while_watched_and_at_most_so_often(feed: Feed) -> None:
    """Unwatched: nothing, and Redis asked once a check interval; watched: the first step,
    then once an interval, and always the step a game ends, with the games ended."""
    key = "test:feed:throttle"
    clock = Clock()
    publisher = MatchPublisher(feed, key, clock=clock, check_seconds=1.0, publish_seconds=0.25)
    game = Game(find_rules("block"), 2, seed=7)
    publisher(0, game)
    assert publisher.published == 0 and feed.latest(key) is None
    feed.watch(key)
    clock.now = 0.5  # (not asked again before a second)
    publisher(0, game)
    assert publisher.published == 0
    clock.now = 1.0
    publisher(0, game)
    assert publisher.published == 1
    clock.now = 1.1
    publisher(0, game)
    assert publisher.published == 1  # throttled
    while not game.is_terminal():
        game.apply(game.legal_moves()[0])
    publisher(0, game)
    assert publisher.published == 2
    _, view = feed.latest(key) or ("", {})
    assert view["outcome"]["winners"] == list(game.outcome().winners)  # type: ignore[union-attr]
    assert view["ended"] == [{"game": 0, **view["outcome"]}]
    assert view["round"]["hands"] is not None  # the game over: its last round shown


def test_a_watched_match_is_followed_game_after_game_and_never_shows_a_hidden_tile(
    feed: Feed,
) -> None:
    """The referee tells the publisher its first game in flight: the views follow game 0,
    then the next; the round in play never names a tile off the line."""
    key = match_key(987654)
    feed.watch(key)
    recording = Recording(feed)
    publisher = MatchPublisher(recording, key, publish_seconds=0.0)
    players = [StrategyPlayer("random"), StrategyPlayer("greedy")]
    outcomes = list(
        play_match(find_rules("draw"), players, games=3, seed=5, concurrency=2, watch=publisher)
    )
    assert len(outcomes) == 3
    views = recording.views
    assert len(views) == publisher.published > 20
    assert [view for _, view in feed.read(key)] == views[-KEEP:]
    assert [v["game"] for v in views] == sorted(v["game"] for v in views)
    assert {v["game"] for v in views} == {0, 1, 2}
    for view in views:
        current = view["round"]
        if view["outcome"] is None:
            assert current["hands"] is None
            assert _named_tiles(current) <= _played(current)
    assert views[-1]["outcome"] is not None and views[-1]["game"] == 2
    assert json.dumps(views).count('"seed"') == 0


def test_a_redis_gone_never_fails_a_match(caplog: pytest.LogCaptureFixture) -> None:
    """No Redis at the feed's address: the match plays to its end, the fault logged once."""
    publisher = MatchPublisher(Feed.from_url(f"redis://127.0.0.1:{free_port()}/0"), "k")
    players = [StrategyPlayer("random"), StrategyPlayer("random")]
    outcomes = list(play_match(find_rules("block"), players, games=4, seed=1, watch=publisher))
    assert len(outcomes) == 4 and publisher.published == 0
    assert sum("live feed k" in r.getMessage() for r in caplog.records) == 1


def test_a_folder_feed_keeps_the_latest_view_and_the_watching_marks(tmp_path: Path) -> None:
    """arena serve's feed (no Redis): the same methods, the latest view only."""
    feed = open_feed((tmp_path / "live").as_uri())
    assert isinstance(feed, FolderFeed)
    key = match_key(5)
    assert feed.latest(key) is None and feed.read(key) == [] and not feed.watched(key)
    feed.watch(key)
    assert feed.watched(key)
    publisher = MatchPublisher(feed, key, publish_seconds=0.0)
    players = [StrategyPlayer("random"), StrategyPlayer("greedy")]
    list(play_match(find_rules("block"), players, games=2, seed=3, watch=publisher))
    assert publisher.published > 5
    found = feed.latest(key)
    assert found is not None and found[1]["game"] == 1 and found[1]["outcome"] is not None
    assert feed.read(key, after="0-0") == [found] and feed.read(key, after=found[0]) == []
    assert feed.read(key, after=found[0], block_seconds=0.1) == []
    stale = time.time() - TTL_SECONDS - 1
    for path in (tmp_path / "live").iterdir():
        os.utime(path, (stale, stale))
    assert feed.latest(key) is None and not feed.watched(key)  # a view or a mark gone stale
    assert feed.prune() == 2 and list((tmp_path / "live").iterdir()) == []


def test_a_feed_url_names_redis_or_a_folder() -> None:
    with pytest.raises(ValueError, match=r"give a Redis URL .* or a folder"):
        open_feed("memcached://x")


def test_the_feed_is_the_live_url_else_the_brokers_redis_else_the_instance_folder() -> None:
    assert (
        feed_url({"ARENA_LIVE_URL": "redis://a/1", "ARENA_BROKER_URL": "redis://b"})
        == "redis://a/1"
    )
    assert feed_url({"ARENA_BROKER_URL": "redis://b/0"}) == "redis://b/0"
    assert feed_url({"ARENA_BROKER_URL": "filesystem://"}) is None
    assert feed_url({"ARENA_INSTANCE_PATH": "/srv/arena"}) == "file:///srv/arena/live"
    assert feed_url({}) is None
