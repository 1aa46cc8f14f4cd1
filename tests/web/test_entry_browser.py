"""An entrant's versions in a real browser (Debian's chromium through Playwright): near the
deadline the page says how long placement takes and warns that a version sent now may not
be placed in time, the countdown ticks with its "left" (never "passed left"), the entrant
chooses its version for the final and the page fits a phone. Any JavaScript error fails the
test; screenshots go to tests/web/screenshots/."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from playwright.sync_api import Page, expect
from sqlalchemy import func, update

from arena.store.db import Store
from arena.store.models import Competition, CompetitionEntry
from tests.web.conftest import log_in, screenshot
from tests.web.test_competition_pages import accounts_and_bots, entered_and_rated


def test_an_entrant_is_warned_near_the_deadline_and_chooses_its_final_version(
    store: Store, live_server: str, page: Page
) -> None:
    accounts_and_bots(store)
    entered_and_rated(store)
    with store.write() as session:  # placed at once, and the deadline 100 s away: a check
        session.execute(update(CompetitionEntry).values(placed=func.now()))  # and placement
        deadline = datetime.now(UTC) + timedelta(seconds=100)  # take 61 s: twice is past it
        session.execute(update(Competition).values(deadline=deadline))
    log_in(page, live_server, "ada", at="/competitions/cup")
    expect(page.locator(".placement-warning")).to_be_visible()  # not behind the entry form
    expect(page.locator(".placement-warning")).to_contain_text(
        "a version sent now may not be placed in time"
    )
    expect(page.locator("time[data-suffix]").first).to_contain_text(" left")
    choice = page.locator("section.final-choice")
    expect(choice.locator("tbody tr")).to_have_count(1)
    expect(choice).to_contain_text("(default)")
    choice.get_by_label("send ada/greedy v1 to the final").check()
    choice.get_by_role("button", name="Save my choice").click()
    expect(page.locator(".flashes")).to_contain_text(
        "Saved: your choice goes to the final; as things stand: ada/greedy v1."
    )
    expect(page.locator("section.final-choice input[type=checkbox]")).to_be_checked()
    screenshot(page, "competition-final-choice")
    page.set_viewport_size({"width": 390, "height": 844})
    page.reload()
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    screenshot(page, "competition-final-choice-phone")
