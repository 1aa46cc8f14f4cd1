"""The rules' pages in a real browser (Debian's chromium through Playwright), as an entrant
who has not logged in lives them: from the competition's page to its rule set's page, its
file downloaded and read back to the same rules, the kit downloaded, the index from the top
bar. Any JavaScript error, or anything the Content-Security-Policy blocks, fails the test;
screenshots go to tests/web/screenshots/ (with ARENA_SCREENSHOTS=1)."""

from __future__ import annotations

import zipfile
from pathlib import Path

from flask import Flask
from playwright.sync_api import Page, expect

from arena.engine.rules import load_rules
from arena.store.db import Store
from tests.web.conftest import screenshot
from tests.web.test_rules_pages import RULES, competition


def test_an_entrant_reads_and_downloads_the_rules(
    app: Flask, store: Store, live_server: str, page: Page, tmp_path: Path
) -> None:
    competition(store)
    page.goto(f"{live_server}/competitions/cup")
    page.get_by_text("The rule set's parameters").click()  # unfold them
    expect(page.locator("details.rule-parameters table")).to_contain_text("first to 40")
    screenshot(page, "rules-competition")
    with page.expect_download() as kit:
        page.get_by_role("link", name="Download the kit").click()
    kit.value.save_as(tmp_path / "kit.zip")
    with zipfile.ZipFile(tmp_path / "kit.zip") as archive:
        assert "cup-kit/README.md" in archive.namelist()
    page.locator("dd a", has_text="cup-rules").click()
    expect(page).to_have_url(f"{live_server}/rules/cup-rules")
    expect(page.locator("table.parameters")).to_contain_text("tiles dealt to each player: 5")
    screenshot(page, "rules-rule_set")
    with page.expect_download() as toml:
        page.get_by_role("link", name="cup-rules.toml").click()
    toml.value.save_as(tmp_path / toml.value.suggested_filename)
    assert load_rules(tmp_path / "cup-rules.toml") == RULES
    page.locator("header nav").get_by_role("link", name="Rules").click()
    expect(page.locator("table.rule-sets")).to_contain_text("cup-rules")
    screenshot(page, "rules-rules")
