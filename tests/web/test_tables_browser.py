"""A person plays a whole game against a bot in a real browser (Debian's chromium through
Playwright): from the bot's page, "Play against this bot", sit down at a 2-seat ``draw``
table, play every move (a click on a highlighted tile, a move's button, or its key) while
the bot answers from the sandbox, refereed here as a worker referees it; a spectator
opens the table's watch link, and half-way the window becomes a phone's. The game ends on
the page without a reload and opens in the viewer. Any JavaScript error or CSP violation
fails the test (tests/web/conftest.py); the screenshots are
tests/web/screenshots/table-*.png."""

from __future__ import annotations

import threading
from pathlib import Path

from playwright.sync_api import Page, ViewportSize, expect

from arena.service.accounts import create_account
from arena.service.matches import Config
from arena.service.tables import run_table
from arena.store.db import Store
from arena.store.models import GameTable
from tests.web.conftest import HASHER, PASSWORD, log_in, screenshot, store_bots

PHONE: ViewportSize = {"width": 390, "height": 844}
#: The table's seed, set before the worker deals: the person's moves (the first legal one)
#: and counter's make the same whole game each run, 34 moves long (a random seed's games
#: took 34 to 90 moves, 6 to 10 CPU s of the browser's, the server's and the referee's).
DEAL_SEED = 4


def test_a_person_plays_a_whole_game_against_a_bot_in_the_browser(
    store: Store, live_server: str, page: Page, tables_channel: str, tmp_path: Path
) -> None:
    store_bots(store)
    create_account(store, "carol", PASSWORD, hasher=HASHER)
    log_in(page, live_server, "carol", at="/bots/bob/counter")
    expect(page.locator(".play-bot")).to_contain_text("Against people: no game yet.")
    page.get_by_role("link", name="Play against this bot").click()
    expect(page.locator("h1")).to_have_text("Play against bots")
    page.locator("select[name=rules]").select_option("draw")
    screenshot(page, "table-form")
    page.get_by_role("button", name="Sit down").click()
    expect(page).to_have_url(f"{live_server}/tables/1")
    expect(page.locator("#table-state")).to_contain_text("Waiting for a worker to deal")
    page.evaluate("window.arenaSamePage = true")  # gone if the page were reloaded
    with store.write() as session:  # a deal of a whole game in 34 moves, not 34 to 90
        table = session.get(GameTable, 1)
        assert table is not None
        table.seed = DEAL_SEED
    config = Config(bot_cache=tmp_path / "bots")
    referee = threading.Thread(target=run_table, args=(store, 1), kwargs={"config": config})
    referee.start()  # as a worker does: the bot in the sandbox
    moves = 0
    try:
        for _ in range(200):
            state = page.locator("#table-state")
            expect(state.locator(".your-turn, .game-over")).to_be_visible(timeout=20_000)
            if state.get_attribute("data-status") == "done":
                break
            turn = state.get_attribute("data-turn")
            buttons = state.locator("button.move")
            if moves == 0:
                expect(state.locator("#my-hand g.tile.legal").first).to_be_visible()
                screenshot(page, "table-your-turn")
                tile = state.locator("#my-hand g.tile.legal").first
                tile.click()  # one end: played; both: the ends to choose are marked
                if state.locator("button.move.chosen").count():
                    page.keyboard.press("l")
            elif moves == 2:  # a spectator with the table's watch link: no hand face up
                watcher = page.context.new_page()
                watcher.goto(page.locator("#watch-url").inner_text())
                expect(watcher.locator("#state[data-round]")).to_be_visible()
                assert watcher.locator("ol.hands:not(.last-hands) [data-tile]").count() == 0
                screenshot(watcher, "table-watch")
                watcher.close()
                buttons.first.click()
            elif moves == 3:
                page.set_viewport_size(PHONE)
                screenshot(page, "table-phone")
                page.keyboard.press("1")
            else:
                buttons.first.click()
            moves += 1
            expect(page.locator("#table-state")).not_to_have_attribute("data-turn", turn or "")
    finally:
        referee.join(60)
    state = page.locator("#table-state")
    expect(state).to_have_attribute("data-status", "done")
    expect(state.locator(".game-over")).to_contain_text("Game over: you")
    assert moves > 3
    assert page.evaluate("window.arenaSamePage") is True  # played in place
    screenshot(page, "table-phone-over")
    page.set_viewport_size({"width": 1100, "height": 800})
    screenshot(page, "table-over")
    page.get_by_role("link", name="Replay it in the viewer").click()
    expect(page).to_have_url(f"{live_server}/tables/1/replay")
    expect(page.locator(".facts")).to_contain_text("0 carol (a person)")
    expect(page.locator(".player")).to_be_visible()  # the viewer's script has started
    page.keyboard.press("ArrowRight")
    expect(page.locator("#state")).to_have_attribute("data-step", "1")
    screenshot(page, "table-replay")
    page.goto(f"{live_server}/bots/bob/counter")
    expect(page.locator(".play-bot")).to_contain_text("of 1 game (not rated)")
