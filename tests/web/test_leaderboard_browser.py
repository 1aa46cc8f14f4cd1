"""The leaderboard follows a tournament's results in a real browser (Chromium through
Playwright), with no reload: the empty leaderboards page opens the first leaderboard once a
game is rated, and its table grows as matches finish and live refits store them. Matches are
played here by the worker's own code, each followed by its refit as a worker books it."""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from playwright.sync_api import Page, expect
from sqlalchemy import select

from arena.service.live import refit_if_changed
from arena.service.matches import Config, run_match
from arena.store import ratings as stored
from arena.store.db import Store
from arena.store.models import Match
from tests.web.conftest import ENTRANTS, RULES, create, screenshot, store_bots


def _at(now: datetime) -> Callable[[stored.RefitClock], datetime]:
    """A refit due at ``now``, whatever the rule set's clock."""
    return lambda _clock: now


def _play_and_refit(
    store: Store, cache: Path, start: threading.Event, stop: threading.Event, pause: float
) -> None:
    """Once ``start`` is set, play the pending matches until ``stop`` is, booking and
    running its rule set's refit after each, ``pause`` seconds apart."""
    start.wait(60)
    with store.read() as session:
        pending = list(
            session.scalars(select(Match.id).where(Match.status == "pending").order_by(Match.id))
        )
    for match_id in pending:
        if stop.wait(pause):
            return
        run_match(store, match_id, config=Config(bot_cache=cache), sandboxed=False)
        now = datetime.now(UTC)
        booked = stored.book_refit(store, match_id, now, _at(now))
        if booked is not None:
            refit_if_changed(store, booked[0])


def test_the_leaderboard_fills_and_grows_without_a_reload(
    store: Store, live_server: str, live_polls: None, page: Page, tmp_path: Path
) -> None:
    store_bots(store)
    create(store, "spring", ENTRANTS, 2)
    page.goto(f"{live_server}/leaderboards")
    expect(page.locator("#no-board")).to_contain_text("No games have been played yet")
    start, stop = threading.Event(), threading.Event()
    worker = threading.Thread(
        target=_play_and_refit, args=(store, tmp_path / "cache", start, stop, 1.0), daemon=True
    )
    worker.start()
    try:
        start.set()
        expect(page).to_have_url(f"{live_server}/leaderboards/{RULES.name}", timeout=20_000)
        page.evaluate("window.arenaSamePage = true")  # gone if the page were reloaded
        rows = page.locator("table.leaderboard tbody tr")
        expect(rows.first).to_be_visible()
        expect(page.locator("#board-live .updated")).to_contain_text("Ratings fitted")
        screenshot(page, "leaderboard-live-first")
        expect(rows).to_have_count(3, timeout=40_000)  # the latest versions of the 4
    finally:
        stop.set()  # (the tournament's other matches would grow nothing more)
        worker.join(60)
    assert page.evaluate("window.arenaSamePage") is True
    screenshot(page, "leaderboard-live-grown")
