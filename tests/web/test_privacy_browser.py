"""A private class in a real browser (Debian's chromium through Playwright): the teacher
ticks "Private" on the new-class form, a student of it plays a rated tournament, and a
stranger finds nothing of the student on the site's pages (the bots, the leaderboard, the
games, the bot's own page: "not found"), while the teacher sees the class marked private
and makes it public again, after which the stranger sees the bot. Any JavaScript error,
or anything the Content-Security-Policy blocks, fails the test; screenshots go to
tests/web/screenshots/ (with ARENA_SCREENSHOTS=1)."""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import Browser, Page, expect

from arena.service.accounts import create_account
from arena.service.classes import find_class, join_class
from arena.service.results import refit_ratings
from arena.store.db import Store
from tests.paths import REFERENCE_BOTS
from tests.web.conftest import HASHER, PASSWORD, RULES, create, log_in, play, screenshot


def test_a_private_class_shows_a_stranger_nothing(
    page: Page, browser: Browser, live_server: str, store: Store, tmp_path: Path
) -> None:
    create_account(store, "tess", PASSWORD, role="teacher", hasher=HASHER)
    log_in(page, live_server, "tess", at="/classes/new")
    page.locator("input[name=name]").fill("quiet")
    page.locator("input[name=private]").check()
    screenshot(page, "privacy-1-new-private-class")
    page.get_by_role("button", name="Create the class").click()
    expect(page).to_have_url(f"{live_server}/classes/quiet/join-code")
    code = find_class(store, "quiet").join_code
    assert code is not None and find_class(store, "quiet").settings["private"] is True
    join_class(store, HASHER, code, "sam", PASSWORD)
    store.add_bot_version("sam", "greedy", (REFERENCE_BOTS / "greedy.py").read_text(), {})
    store.add_bot_version("reference", "random", (REFERENCE_BOTS / "random.py").read_text(), {})
    create(store, "spring", ["sam/greedy", "reference/random"], games=2)
    play(store, "spring", tmp_path / "cache")
    refit_ratings(store, RULES)

    page.goto(f"{live_server}/classes/quiet")
    expect(page.locator(".class-controls")).to_contain_text("private")
    screenshot(page, "privacy-2-teacher-class-private")

    stranger = browser.new_context(viewport={"width": 1100, "height": 800}).new_page()
    stranger.goto(f"{live_server}/bots")
    expect(stranger.locator("main")).not_to_contain_text("sam")
    screenshot(stranger, "privacy-3-stranger-bots")
    stranger.goto(f"{live_server}/leaderboards/{RULES.name}")
    expect(stranger.locator("main")).to_contain_text("reference/random")
    expect(stranger.locator("main")).not_to_contain_text("sam")
    screenshot(stranger, "privacy-4-stranger-leaderboard")
    stranger.goto(f"{live_server}/games")
    expect(stranger.locator("main")).not_to_contain_text("sam")
    reply = stranger.goto(f"{live_server}/bots/sam/greedy")
    assert reply is not None and reply.status == 404
    screenshot(stranger, "privacy-5-stranger-bot-page")

    page.get_by_role("button", name="Make it public").click()
    expect(page.locator(".flashes")).to_contain_text("quiet is public")
    screenshot(page, "privacy-6-teacher-made-public")
    stranger.goto(f"{live_server}/leaderboards/{RULES.name}")
    expect(stranger.locator("main")).to_contain_text("sam/greedy")
    screenshot(stranger, "privacy-7-stranger-leaderboard-public")
    stranger.context.close()
