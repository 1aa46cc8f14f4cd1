"""The organiser's tools in a real browser (Debian's chromium through Playwright): the
organiser reaches her page from the competition's, announces, changes the final's top (the
action log says from what to what), pauses the ladder (confirming first), reads the copies'
report (a byte-for-byte copy flagged); an entrant reads the announcement and the pause and
withdraws (confirming first). Any JavaScript error, or anything the Content-Security-Policy
blocks, fails the test; screenshots go to tests/web/screenshots/ (with ARENA_SCREENSHOTS=1)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from flask import Flask
from playwright.sync_api import expect

from arena.service.accounts import create_account
from arena.service.competitions import NewCompetition, create_competition, enter_with_version
from arena.store.db import Store
from tests.paths import REFERENCE_BOTS
from tests.web.conftest import HASHER, PASSWORD, log_in, screenshot

NOW = datetime.now(UTC).replace(microsecond=0)
SOURCE = (REFERENCE_BOTS / "greedy.py").read_text() + "\n# the original, then copied\n"


def test_the_organiser_uses_her_tools_and_an_entrant_withdraws(
    app: Flask, store: Store, live_server: str, page: Any
) -> None:
    olga = create_account(store, "olga", PASSWORD, role="organiser", hasher=HASHER)
    accounts = {n: create_account(store, n, PASSWORD, hasher=HASHER) for n in ("alice", "bob")}
    new = NewCompetition(
        name="cup", deadline=NOW + timedelta(days=7), opens=NOW - timedelta(hours=1),
        time_zone="Europe/Paris", description="Bots play draw dominoes.",
    )  # fmt: skip
    create_competition(store, olga, new)
    for name, account in accounts.items():  # bob's is a byte-for-byte copy of alice's
        version = store.add_bot_version(name, "greedy", SOURCE, {})[0].id
        enter_with_version(store, account, "cup", version)
    questions: list[str] = []

    def answer(dialog: Any) -> None:
        questions.append(dialog.message)
        dialog.accept()

    page.on("dialog", answer)
    log_in(page, live_server, "olga", at="/competitions/cup")
    page.get_by_role("link", name="Organiser's tools").click()
    expect(page.locator("h1")).to_contain_text("Organiser's tools · cup")
    page.locator("textarea[name=body]").fill("The deadline stays; good luck!")
    page.get_by_role("button", name="Announce").click()
    expect(page.locator(".flashes")).to_contain_text("Announced")
    page.locator("input[name=final_top]").fill("4")
    page.get_by_role("button", name="Save the changes").click()
    expect(page.locator(".flashes")).to_contain_text("Changed: final top from 8 to 4.")
    page.get_by_role("button", name="Pause the ladder").click()
    expect(page.locator(".flashes")).to_contain_text("The ladder is paused.")
    assert questions == ["Pause the ladder of cup?"]
    log = page.locator(".action-log tbody tr")
    expect(log).to_have_count(2)
    expect(log.nth(0)).to_contain_text("pause: ladder")
    expect(log.nth(1)).to_contain_text("settings: final top")
    expect(log.nth(1)).to_contain_text("olga")
    screenshot(page, "tools-organiser")
    page.get_by_role("link", name="Copies across the entrants").click()
    row = page.locator("table.similar tbody tr")
    expect(row).to_have_count(1)
    expect(row).to_contain_text("identical")
    expect(row).to_contain_text("alice/greedy v1")
    expect(row).to_contain_text("bob/greedy v1")
    screenshot(page, "tools-copies")
    # an entrant reads the announcement and the pause, and withdraws
    page.context.clear_cookies()
    log_in(page, live_server, "bob", at="/competitions/cup")
    expect(page.locator("section.announcements")).to_contain_text("good luck!")
    expect(page.locator(".paused")).to_contain_text("The ladder is paused since")
    expect(page.get_by_role("link", name="Organiser's tools")).to_have_count(0)
    page.get_by_role("button", name="Withdraw from the competition").click()
    expect(page.locator(".flashes")).to_contain_text("You withdrew")
    assert questions[-1].startswith("Withdraw from cup?")
    expect(page.locator("tr", has_text="bob/greedy v1")).to_contain_text("withdrawn")
    expect(page.get_by_role("button", name="Withdraw from the competition")).to_have_count(0)
    expect(page.locator("details.enter")).to_have_count(0)  # a withdrawal is final
    screenshot(page, "tools-withdrawn")
