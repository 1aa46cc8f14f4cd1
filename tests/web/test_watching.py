"""Watching a game live (web/watching.py, arena.service.watching): the "Live" lists of the
tournament and competition pages, the live page and its polled fragment, who may watch
(a private class's tournament stays hidden), and a real browser following a match a
worker plays (the one browser test: a game seen to progress, then the replays' links)."""

from __future__ import annotations

import contextlib
import re
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from flask import Flask
from sqlalchemy import select

from arena.engine.game import Game
from arena.engine.spectate import spectator_view
from arena.service import classes as cls
from arena.service.accounts import create_account
from arena.service.classes import NewClass, create_class, join_class
from arena.service.livefeed import Feed, feed_url, match_key, open_feed
from arena.service.matches import Config, run_match
from arena.store.db import Store
from arena.store.models import Match, Tournament
from arena.store.queue import claim_match
from tests.paths import REFERENCE_BOTS
from tests.servers import Redis, free_port, running_redis
from tests.web.conftest import (
    ENTRANTS,
    HASHER,
    PASSWORD,
    RULES,
    create,
    logged_in,
    make_app,
    screenshot,
    serving,
    store_bots,
)
from tests.web.test_competition_pages import (
    accounts_and_bots,
    open_competition,
    version_id_of,
)
from web.limits import HEAVY_KEY, ReadBound


@pytest.fixture(scope="module")
def redis() -> Iterator[Redis]:
    """A redis-server of the module's own: the live feed."""
    with running_redis() as server:
        yield server


@pytest.fixture
def feed(redis: Redis) -> Feed:
    """The live feed, emptied (each test's database numbers its matches from 1 again)."""
    feed = Feed.from_url(redis.url)
    feed.client.flushdb()
    return feed


@pytest.fixture
def app(
    store: Store, url: str, tmp_path_factory: pytest.TempPathFactory, redis: Redis
) -> Iterator[Flask]:
    """The app with the live feed on the module's Redis."""
    app = make_app(url, tmp_path_factory.mktemp("broker"), ARENA_LIVE_URL=redis.url)
    yield app
    app.extensions["arena_store"].close()


def _matches(store: Store, tournament: str) -> list[int]:
    with store.read() as session:
        return list(
            session.scalars(
                select(Match.id)
                .join(Tournament, Tournament.id == Match.tournament_id)
                .where(Tournament.name == tournament)
                .order_by(Match.id)
            )
        )


def _running(store: Store, tournament: str, entrants: list[str]) -> int:
    """A tournament of ``entrants`` (one match, 2 games) whose match a worker claimed."""
    create(store, tournament, entrants, games=2)
    match_id = _matches(store, tournament)[0]
    assert claim_match(store, "w-test", lease_seconds=600, match_id=match_id) is not None
    return match_id


def _publish_mid_round(feed: Feed, match_id: int) -> dict[str, object]:
    """What a worker publishes of its game mid-round (a few moves in); the view."""
    game = Game(RULES, 2, seed=11)
    for _ in range(5):
        game.apply(game.legal_moves()[0])
    view = spectator_view(game, index=0)
    feed.publish(match_key(match_id), {**view, "ended": []})
    return view


def test_a_running_match_is_listed_and_watched_as_a_spectator_sees_it(
    app: Flask, store: Store, feed: Feed
) -> None:
    store_bots(store)
    match_id = _running(store, "live-cup", ENTRANTS[:2])
    client = logged_in(app, None)
    page = client.get("/tournaments/live-cup").get_data(as_text=True)
    assert f'href="/live/{match_id}"' in page and "reference/random v1 v alice/greedy v1" in page
    assert not feed.watched(match_key(match_id))
    waiting = client.get(f"/live/{match_id}").get_data(as_text=True)
    assert "Waiting for the worker" in waiting and "data-live" in waiting
    assert feed.watched(match_key(match_id))  # the page asks the worker to publish
    view = _publish_mid_round(feed, match_id)
    state = client.get(f"/live/{match_id}/state")
    assert state.status_code == 200
    text = state.get_data(as_text=True)
    assert 'data-game="0"' in text and "data-live" in text
    line_tiles = set(re.findall(r'data-tile="(\d+-\d+)"', text))
    assert line_tiles and len(line_tiles) == len(view["round"]["line"])  # type: ignore[index]
    hands = text[text.index('class="hands"') :]
    assert "data-tile" not in hands  # every hand face down while the round is played
    sizes = view["round"]["hand_sizes"]  # type: ignore[index]
    assert f"{sizes[0]} tiles · score 0" in hands and "Boneyard:" in text
    assert "played" in text  # the round's events, described


def test_a_match_over_links_its_replays_and_stops_polling(
    app: Flask, store: Store, feed: Feed, tmp_path: Path
) -> None:
    store_bots(store)
    create(store, "done-cup", ENTRANTS[:2], games=2)
    match_id = _matches(store, "done-cup")[0]
    assert run_match(store, match_id, config=Config(bot_cache=tmp_path), sandboxed=False) == "done"
    text = logged_in(app, None).get(f"/live/{match_id}/state").get_data(as_text=True)
    assert "The match is over" in text and "data-live" not in text
    assert f'href="/games/{match_id}/0"' in text  # (a leg of the pair: one game a match)
    assert "/live/" not in logged_in(app, None).get("/tournaments/done-cup").get_data(as_text=True)


def test_a_worker_publishes_the_watched_match_it_plays(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """run_match (a worker's task) publishes its game in play on the deployment's feed
    while it is marked watched, here arena serve's folder: the last view, the game over."""
    monkeypatch.delenv("ARENA_LIVE_URL", raising=False)
    monkeypatch.delenv("ARENA_BROKER_URL", raising=False)
    monkeypatch.setenv("ARENA_INSTANCE_PATH", str(tmp_path / "instance"))
    store_bots(store)
    create(store, "folder-cup", ENTRANTS[:2], games=2)
    match_id = _matches(store, "folder-cup")[0]
    feed = open_feed(feed_url() or "")
    feed.watch(match_key(match_id))
    config = Config(bot_cache=tmp_path / "cache")
    assert run_match(store, match_id, config=config, sandboxed=False) == "done"
    found = feed.latest(match_key(match_id))
    assert found is not None and found[1]["outcome"] is not None
    assert found[1]["ended"][-1]["game"] == found[1]["game"]


def test_without_a_feed_or_with_its_redis_away_the_page_says_so(
    store: Store, url: str, tmp_path: Path
) -> None:
    store_bots(store)
    match_id = _running(store, "quiet-cup", ENTRANTS[:2])
    app = make_app(url, tmp_path / "broker")  # (no ARENA_LIVE_URL, a filesystem broker)
    try:
        text = logged_in(app, None).get(f"/live/{match_id}").get_data(as_text=True)
    finally:
        app.extensions["arena_store"].close()
    assert "This deployment has no live feed" in text
    gone = f"redis://127.0.0.1:{free_port()}/0"  # a feed whose Redis is away: said, not 500
    app = make_app(url, tmp_path / "broker", ARENA_LIVE_URL=gone)
    try:
        reply = logged_in(app, None).get(f"/live/{match_id}/state")
    finally:
        app.extensions["arena_store"].close()
    assert reply.status_code == 200 and "does not answer" in reply.get_data(as_text=True)


def test_unknown_matches_are_not_found(app: Flask, store: Store, feed: Feed) -> None:
    client = logged_in(app, None)
    for path in ("/live/424242", "/live/424242/state", "/live/99999999999999", "/live/x"):
        assert client.get(path).status_code == 404, path


def test_polls_have_their_own_budget_and_wait_for_the_heavy_reads_bound(
    store: Store, url: str, tmp_path: Path, redis: Redis
) -> None:
    """Past ``ARENA_WATCH_LIMIT`` an address's polls are 429 (another address polls on);
    with the process's heavy reads all taken, 503 with Retry-After."""
    store_bots(store)
    match_id = _running(store, "busy-cup", ENTRANTS[:2])
    app = make_app(url, tmp_path / "broker", ARENA_LIVE_URL=redis.url,
                   ARENA_WATCH_LIMIT="2 per minute", ARENA_HEAVY_QUEUE=0)  # fmt: skip
    try:
        client = app.test_client()
        path = f"/live/{match_id}/state"
        assert [client.get(path).status_code for _ in range(3)] == [200, 200, 429]
        assert int(client.get(path).headers["Retry-After"]) > 0
        other = {"REMOTE_ADDR": "192.0.2.9"}
        assert client.get(path, environ_base=other).status_code == 200
        bound: ReadBound = app.extensions[HEAVY_KEY]
        with contextlib.ExitStack() as held:
            for _ in range(bound.slots):
                held.enter_context(bound.slot())
            busy = client.get(f"/live/{match_id}", environ_base=other)
            assert busy.status_code == 503 and busy.headers["Retry-After"] == "2"
    finally:
        app.extensions["arena_store"].close()


def test_a_private_classs_match_is_watched_by_its_members_only(
    app: Flask, store: Store, feed: Feed
) -> None:
    """A tournament holding a private class's student's bot: its page, its live list and
    its matches' live pages are 404 to strangers, as the tournament's own page."""
    create_account(store, "tess", PASSWORD, role="teacher", hasher=HASHER)
    create_account(store, "stan", PASSWORD, hasher=HASHER)
    from arena.service.accounts import authenticate

    tess = authenticate(store, "tess", PASSWORD, hasher=HASHER)
    assert tess is not None
    maths = create_class(store, tess, NewClass(name="maths"))
    assert maths.join_code
    join_class(store, HASHER, maths.join_code, "sam", PASSWORD)
    store.add_bot_version("sam", "greedy", (REFERENCE_BOTS / "greedy.py").read_text(), {})
    store.add_bot_version("reference", "random", (REFERENCE_BOTS / "random.py").read_text(), {})
    match_id = _running(store, "spring", ["sam/greedy", "reference/random"])
    _publish_mid_round(feed, match_id)
    cls.set_private(store, tess, "maths", True)
    paths = ("/tournaments/spring", f"/live/{match_id}", f"/live/{match_id}/state")
    for who in (None, "stan"):
        client = logged_in(app, who)
        for path in paths:
            reply = client.get(path)
            assert reply.status_code == 404, (who, path)
            assert "sam" not in reply.get_data(as_text=True), (who, path)
    for who in ("sam", "tess"):
        client = logged_in(app, who)
        for path in paths:
            assert client.get(path).status_code == 200, (who, path)
        assert f'href="/live/{match_id}"' in client.get("/tournaments/spring").get_data(
            as_text=True
        )


def test_a_competitions_page_lists_its_ladder_matches_being_played(
    app: Flask, store: Store, feed: Feed
) -> None:
    accounts_and_bots(store)
    open_competition(store)
    from arena.service.competition_views import competition_view

    ladder = competition_view(store, None, "cup").ladder
    versions = [version_id_of(store, "ada", "greedy"), version_id_of(store, "bob", "rando")]
    with store.write() as session:
        tournament = session.scalars(select(Tournament).where(Tournament.name == ladder)).one()
        match = Match(tournament_id=tournament.id, key="live-1", seats=versions,
                      labels=["a", "b"], games=2, seed=7, status="running")  # fmt: skip
        session.add(match)
        session.flush()
        match_id = match.id
    client = logged_in(app, None)
    page = client.get("/competitions/cup").get_data(as_text=True)
    assert f'href="/live/{match_id}"' in page and "ada/greedy v1 v bob/rando v1" in page
    live = client.get(f"/live/{match_id}").get_data(as_text=True)
    assert 'href="/competitions/cup"' in live
    assert f'href="/live/{match_id}"' in client.get("/competitions/cup/live").get_data(as_text=True)


SLOW = """
import random, time

_rng = random.Random(5)


def play(observation):
    time.sleep(0.08)
    return _rng.choice(observation.legal_moves)
"""


def test_a_browser_watches_a_game_progress_to_its_replay(
    app: Flask,
    store: Store,
    feed: Feed,
    redis: Redis,
    page: object,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A worker plays a match (its bots a little slow, as real ones think); the tournament
    page's Live list opens the live page, which shows the game move by move, every hand
    face down while its round is played, then the match's replays."""
    from playwright.sync_api import Page, expect

    assert isinstance(page, Page)
    monkeypatch.setenv("ARENA_LIVE_URL", redis.url)  # the worker's feed
    store.add_bot_version("slow", "one", SLOW, {})
    store.add_bot_version("slow", "two", SLOW + "\n# two\n", {})
    create(store, "live-show", ["slow/one", "slow/two"], games=2)
    match_id = _matches(store, "live-show")[0]
    feed.watch(match_key(match_id))  # (the page marks it too: this saves the first second)
    outcome: list[str] = []
    config = Config(bot_cache=tmp_path)
    worker = threading.Thread(
        target=lambda: outcome.append(run_match(store, match_id, config=config, sandboxed=False))
    )
    with serving(app) as base:
        worker.start()
        try:
            page.goto(f"{base}/tournaments/live-show")
            expect(page.locator(".live-games")).to_be_visible()  # (the page polls its list)
            page.get_by_role("link", name=f"Watch match {match_id}").click()
            expect(page.locator("#state[data-game]")).to_be_visible()
            screenshot(page, "live-playing")
            page.set_viewport_size({"width": 390, "height": 800})  # a phone: nothing overflows
            assert page.evaluate("document.documentElement.scrollWidth") <= 390
            screenshot(page, "live-phone")
            seen: set[tuple[str | None, str | None, str]] = set()
            while worker.is_alive() and len(seen) < 3:
                state = page.locator("#state")
                events = state.get_attribute("data-events")
                if events is not None:
                    seen.add(
                        (
                            state.get_attribute("data-game"),
                            state.get_attribute("data-round"),
                            events,
                        )
                    )
                    if state.get_attribute("data-over") is None:
                        assert page.locator("ol.hands:not(.last-hands) [data-tile]").count() == 0
                page.wait_for_timeout(250)
            assert len(seen) >= 2, seen  # the game moved on under the spectator's eyes
            screenshot(page, "live-progress")
        finally:
            worker.join(timeout=60)
        assert outcome == ["done"]
        expect(page.get_by_text("The match is over")).to_be_visible()
        screenshot(page, "live-over")
        page.get_by_role("link", name="Game 0").click()
        expect(page.locator("#viewer")).to_be_visible()
        page.wait_for_load_state("load")  # its scripts in before the server stops
