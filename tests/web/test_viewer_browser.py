"""The replay viewer in a real browser (Debian's chromium through Playwright): stepping with
the keyboard, deep links, switching seats' views, a duplicate deal's games stepping together,
and a double-twelve game of five drawn readably. Any JavaScript error or CSP violation fails
the test (tests/web/conftest.py); the screenshots are in tests/web/screenshots/viewer-*.png."""

from __future__ import annotations

import re
from pathlib import Path

from playwright.sync_api import Page, expect

from arena.engine.rules import PRESETS
from arena.service.matches import create_stored_tournament
from arena.store.db import Store
from tests.web.conftest import RULES, play, screenshot, store_bots

BIG = PRESETS["block-and-draw"].with_overrides(max_pip=12, target=40)


def _state(page: Page) -> tuple[int, int, str]:
    state = page.locator("#state")
    return (
        int(state.get_attribute("data-round") or 0),
        int(state.get_attribute("data-step") or 0),
        state.get_attribute("data-seat") or "",
    )


def _first_game(page: Page, live_server: str, tournament: str) -> str:
    page.goto(f"{live_server}/games?tournament={tournament}")
    link = page.locator("table.games a[href^='/games/']").first.get_attribute("href")
    assert link is not None
    return f"{live_server}{link}"


def test_stepping_with_keys_deep_links_and_seat_views(
    store: Store, live_server: str, page: Page, tmp_path: Path
) -> None:
    store_bots(store)
    create_stored_tournament(
        store,
        name="spring",
        rules=RULES.with_overrides(target=30),
        format="duplicate",
        entrants=["reference/random", "alice/greedy@1"],
        games_per_match=1,
        seed=5,
    )
    play(store, "spring", tmp_path / "cache")
    game = _first_game(page, live_server, "spring")
    page.goto(f"{game}?round=1&step=0")
    expect(page.locator(".player")).to_be_visible()
    assert _state(page) == (1, 0, "")
    page.keyboard.press("ArrowRight")
    expect(page.locator("#state")).to_have_attribute("data-step", "1")
    expect(page).to_have_url(re.compile(r"round=1&step=1$"))
    expect(page.locator("svg.board-line g.tile")).to_have_count(1)
    expect(page.locator("#announce")).to_contain_text("Round 1 of")  # for screen readers
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    expect(page.locator("#state")).to_have_attribute("data-step", "3")
    page.keyboard.press("ArrowLeft")
    expect(page.locator("#state")).to_have_attribute("data-step", "2")
    page.keyboard.press("End")
    expect(page.locator(".caption")).to_contain_text("/")
    last = _state(page)
    assert last[0] >= 1
    page.keyboard.press("Home")
    expect(page.locator("#state")).to_have_attribute("data-step", "0")
    expect(page.locator("#state")).to_have_attribute("data-round", "1")
    if last[0] > 1:
        page.keyboard.press("PageDown")
        expect(page.locator("#state")).to_have_attribute("data-round", "2")
        page.keyboard.press("PageUp")
        expect(page.locator("#state")).to_have_attribute("data-round", "1")
    # seat views: 1 = seat 0, 2 = seat 1, 0 = every hand
    page.keyboard.press("ArrowRight")
    page.keyboard.press("2")
    expect(page.locator("#state")).to_have_attribute("data-seat", "1")
    expect(page).to_have_url(re.compile(r"seat=1"))
    hands = page.locator("ol.hands > li")
    expect(hands.nth(0).locator("g.tile.back").first).to_be_visible()
    expect(hands.nth(0).locator("g.tile[data-tile]")).to_have_count(0)
    expect(hands.nth(1).locator("g.tile[data-tile]").first).to_be_visible()
    screenshot(page, "viewer-seat-view")
    page.keyboard.press("0")
    expect(page.locator("#state")).to_have_attribute("data-seat", "")
    expect(hands.nth(0).locator("g.tile.back")).to_have_count(0)
    # a deep link opens that state, and the slider and Space move on from it
    url = page.url
    page.goto(url)
    assert _state(page)[:2] == (1, 1)
    page.locator("[data-slider]").fill("5")
    expect(page.locator("#state")).to_have_attribute("data-index", "5")
    page.keyboard.press(" ")
    expect(page.locator("button[data-go=play]")).to_have_text("Pause")
    page.keyboard.press(" ")
    expect(page.locator("button[data-go=play]")).to_have_text("Play")
    # clicking an event in the list goes there
    page.locator("details.events li a").nth(4).click()  # the first is the deal, step 0
    expect(page.locator("#state")).to_have_attribute("data-step", "4")
    screenshot(page, "viewer-game")
    # the duplicate deal: both games step together
    page.goto(f"{game}/duplicate")
    expect(page.locator("section.column")).to_have_count(2)
    screenshot(page, "viewer-duplicate-divergence")
    page.keyboard.press("Home")
    expect(page.locator("#state")).to_have_attribute("data-index", "0")
    page.keyboard.press("ArrowRight")
    expect(page.locator("#state")).to_have_attribute("data-index", "1")
    for column in range(2):
        expect(
            page.locator("section.column").nth(column).locator("svg.board-line g.tile")
        ).to_have_count(1)
    screenshot(page, "viewer-duplicate")


def test_a_double_twelve_game_of_five_is_readable(
    store: Store, live_server: str, page: Page, tmp_path: Path
) -> None:
    store_bots(store)
    create_stored_tournament(
        store,
        name="big",
        rules=BIG,
        format="round-robin",
        entrants=[
            "reference/random",
            "alice/greedy@1",
            "alice/greedy@2",
            "bob/counter",
            "reference/random@1",
        ],
        players=5,
        games_per_match=1,
        seed=2,
    )
    play(store, "big", tmp_path / "cache")
    game = _first_game(page, live_server, "big")
    page.goto(game)
    page.keyboard.press("End")
    expect(page.locator("#state")).not_to_have_attribute("data-index", "0")
    tiles = page.locator("svg.board-line g.tile")
    assert tiles.count() > 10
    # tiles drawn at a readable size: at least 14 css pixels a half
    box = tiles.first.bounding_box()
    assert box is not None and min(box["width"], box["height"]) >= 14, box
    screenshot(page, "viewer-double-twelve-5")
