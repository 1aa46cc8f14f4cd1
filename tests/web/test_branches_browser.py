"""What if… in a real browser (Debian's chromium through Playwright): from a state of a game
in the viewer, open "What if…", pick a bot for each seat, ask for five repetitions, watch
the branch finish on its page without a reload (played here, in the sandbox, as a worker
plays it), and open a repetition beside the original, stepping both together. Any
JavaScript error or CSP violation fails the test (tests/web/conftest.py); the screenshots
are tests/web/screenshots/branch-*.png."""

from __future__ import annotations

import re
import threading
from pathlib import Path

from playwright.sync_api import Page, expect

from arena.service.accounts import create_account
from arena.service.branches import run_branch
from arena.service.matches import Config
from arena.store.db import Store
from tests.web.conftest import HASHER, PASSWORD, create, log_in, play, screenshot, store_bots


def test_what_if_from_the_viewer_to_the_results_beside_the_original(
    store: Store, live_server: str, live_polls: None, page: Page, tmp_path: Path
) -> None:
    store_bots(store)
    create_account(store, "alice", PASSWORD, hasher=HASHER)
    create(store, "spring", ["reference/random", "alice/greedy@1"], 2)
    play(store, "spring", tmp_path / "cache")
    log_in(page, live_server, "alice", at="/games/1/0?round=1&step=0")
    expect(page.locator(".player")).to_be_visible()
    for step in ("1", "2", "3"):
        page.keyboard.press("ArrowRight")
        expect(page.locator("#state")).to_have_attribute("data-step", step)
    link = page.get_by_role("link", name="What if…")
    expect(link).to_have_attribute("href", "/games/1/0/branch?round=1&step=3")
    screenshot(page, "branch-viewer")
    link.click()
    expect(page).to_have_url(f"{live_server}/games/1/0/branch?round=1&step=3")
    expect(page.locator("h1")).to_have_text("What if other bots had played on?")
    expect(page.locator(".state .table svg").first).to_be_visible()
    # the game's own bots are preselected
    expect(page.locator("select[name=seat0] option:checked")).to_have_text("reference/random@v1")
    expect(page.locator("select[name=seat1] option:checked")).to_have_text("alice/greedy@v1")
    page.locator("select[name=seat0]").select_option(label="alice/greedy@v2")
    page.locator("select[name=seat1]").select_option(label="reference/random@v1")
    page.locator("input[name=times]").fill("5")
    screenshot(page, "branch-form")
    page.get_by_role("button", name="Play it on a worker").click()
    expect(page).to_have_url(f"{live_server}/branches/1")
    expect(page.locator("#branch-live .status")).to_have_text("pending")
    page.evaluate("window.arenaSamePage = true")  # gone if the page were reloaded
    screenshot(page, "branch-pending")
    config = Config(bot_cache=tmp_path / "branch-cache")
    worker = threading.Thread(target=run_branch, args=(store, 1), kwargs={"config": config})
    worker.start()  # as a worker does: the bots in the sandbox
    try:
        expect(page.locator("#branch-live .status")).to_have_text("done", timeout=60_000)
    finally:
        worker.join()
    assert page.evaluate("window.arenaSamePage") is True  # updated in place
    outcomes = page.locator("table.branch-outcomes tbody tr")
    expect(outcomes).to_have_count(6)  # the original and five repetitions
    expect(page.locator("table.branch-summary tbody tr")).to_have_count(2)
    expect(page.locator("#branch-live")).to_contain_text("Over 5 repetitions")
    screenshot(page, "branch-done")
    outcomes.nth(1).get_by_role("link", name="beside the original").click()
    expect(page).to_have_url(f"{live_server}/branches/1/1")
    expect(page.locator("#state section.column")).to_have_count(2)
    expect(page.locator("#state .caption .what")).to_contain_text("The branch takes up here")
    before = page.locator("#state").get_attribute("data-step")
    screenshot(page, "branch-beside-original")
    page.keyboard.press("ArrowRight")
    expect(page.locator("#state")).not_to_have_attribute("data-step", before or "")
    expect(page).to_have_url(re.compile(r"/branches/1/1\?round=1&step=\d+$"))
    expect(page.locator("#state .caption .what")).to_contain_text("The branch takes up at")
    page.keyboard.press("End")
    expect(page.locator("#state .round-result")).to_have_count(2)
    screenshot(page, "branch-beside-original-end")
    page.get_by_role("link", name="Repetition 2 ▶").click()
    expect(page).to_have_url(f"{live_server}/branches/1/2")
    expect(page.locator("h1")).to_contain_text("repetition 2 of 5")
