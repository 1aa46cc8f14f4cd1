"""The assignment pages in a real browser (Debian's chromium through Playwright): a student
submits a file and watches it checked, played and graded without reloading (htmx); the
teacher's grade table, the creation form in the teacher's own time zone, and the class's
similarity report with the copied lines marked. Any JavaScript error, or anything the
Content-Security-Policy blocks, fails the test; screenshots go to tests/web/screenshots/."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from flask import Flask
from playwright.sync_api import Browser, Page, ViewportSize, expect
from sqlalchemy import select

from arena.service.accounts import find_account
from arena.service.matches import Config
from arena.service.work import accept_upload
from arena.store.accounts import user_id_named
from arena.store.db import Store
from arena.store.models import Assignment, Submission
from tests.paths import REFERENCE_BOTS, ZOO
from tests.service.test_similarity import OWN, _renamed
from tests.submissions import submitted
from tests.uploads import submit_upload
from tests.web.conftest import log_in, screenshot
from tests.web.test_assignment_pages import graded_class, play_all

pytestmark = pytest.mark.seed(build=graded_class)

PHONE: ViewportSize = {"width": 390, "height": 844}


@pytest.fixture
def paris(browser: object) -> Iterator[Page]:
    """A page whose browser lives in Europe/Paris; any JavaScript or console error fails
    the test."""
    assert isinstance(browser, Browser)
    context = browser.new_context(
        viewport={"width": 1280, "height": 800}, locale="en-GB", timezone_id="Europe/Paris"
    )
    page = context.new_page()
    page.set_default_timeout(10_000)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    yield page
    context.close()
    assert not errors, errors


def _fits_a_phone(page: Page) -> None:
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= PHONE["width"], (page.url, width)


def test_a_student_submits_and_watches_the_grade_arrive(
    app: Flask,
    store: Store,
    live_server: str,
    live_polls: None,
    page: Page,
    seeded: object,
    tmp_path: Path,
) -> None:
    log_in(page, live_server, "dan", at="/classes/5b/assignments/hw1")
    expect(page.locator("h1")).to_have_text("hw1")
    expect(page.locator("#mine")).to_contain_text("Nothing submitted yet.")
    page.locator("input[name=source]").set_input_files(str(REFERENCE_BOTS / "greedy.py"))
    page.locator("input[name=bot_name]").fill("dans")
    page.get_by_role("button", name="Submit").click()
    expect(page.locator("ul.flashes")).to_contain_text("Submitted: it is checked")
    expect(page.locator("#mine article")).to_contain_text("checking")
    screenshot(page, "assignment-student-checking")
    page.evaluate("window.arenaSamePage = true")
    # a worker checks it, then plays its gauntlet: the page follows without a reload
    with store.read() as session:
        upload_id = session.scalars(
            select(Submission.upload_id).order_by(Submission.id.desc()).limit(1)
        ).one()
    assert upload_id is not None
    accept_upload(store, upload_id, config=Config(), sandboxed=False)
    expect(page.locator("#mine article").first).to_contain_text("grading", timeout=15_000)
    play_all(store, tmp_path / "cache", prefix="compare-dan-")
    article = page.locator("#mine article").first
    expect(article).to_contain_text("graded", timeout=15_000)
    expect(article.locator(".outcome.pass")).to_have_count(1)
    expect(article.locator("table.verdicts tbody tr")).to_have_count(2)
    expect(page.locator("#mine")).not_to_have_attribute("data-live", "", timeout=15_000)
    assert page.evaluate("window.arenaSamePage") is True
    screenshot(page, "assignment-student")
    # the verdict links to its games: the compare's page
    article.locator(".outcome.pass a").click()
    expect(page).to_have_url(re.compile(r"/compares/compare-dan-dans-1-v-reference-"))
    expect(page.locator("h1")).to_contain_text("dan/dans")
    page.go_back()
    page.set_viewport_size(PHONE)
    page.reload()
    _fits_a_phone(page)
    screenshot(page, "assignment-student-phone")


def test_the_teacher_reads_the_grades_and_sets_an_assignment(
    store: Store, live_server: str, paris: Page, seeded: object
) -> None:
    """The grade table, its downloads; on a 1920 px window the whole grade table is in
    view, the grade and points columns among the first, with no scroll box, a student whose
    every submission was rejected reading "rejected: crash at import" with 0 points; then a
    new assignment, its deadline typed in the teacher's zone."""
    page = paris
    log_in(page, live_server, "teacher", at="/classes/5b/assignments/hw1")
    table = page.locator("table.grades")
    expect(table.locator("tbody tr")).to_have_count(4)
    ann = table.locator("tbody tr").first
    expect(ann).to_contain_text("Ada Lovelace")
    expect(ann.locator(".outcome.pass")).to_have_count(1)
    expect(page.locator("table.submissions")).to_contain_text("late")
    expect(page.locator("p.facts")).to_contain_text("CET")  # the assignment's zone
    screenshot(page, "assignment-teacher")
    with page.expect_download() as download:
        page.get_by_role("link", name="the whole table").click()
    assert download.value.suggested_filename == "5b-hw1-grades.csv"
    with page.expect_download() as download:
        page.get_by_role("link", name="for Canvas").click()
    assert download.value.suggested_filename == "5b-hw1-canvas.csv"
    assert Path(download.value.path()).read_bytes().startswith(b"\xef\xbb\xbfStudent,ID,")
    broken = (ZOO / "raise_at_import.py").read_bytes()
    account = find_account(store, user_id_named(store, "dan") or 0)
    assert account is not None
    view = submit_upload(store, account, "5b", "hw1", "broken.py", broken)
    assert accept_upload(store, view.upload_id or 0, config=Config(), sandboxed=False) == "rejected"
    page.set_viewport_size({"width": 1920, "height": 1080})
    page.goto(f"{live_server}/classes/5b/assignments/hw1")
    table = page.locator("table.grades")
    rows = table.locator("tbody tr")
    expect(rows).to_have_count(4)
    expect(rows.nth(3)).to_contain_text("rejected: crash at import")
    expect(rows.nth(3).locator("td.num").first).to_have_text("0")
    expect(rows.nth(2)).to_contain_text("checking")  # cy's upload
    headers = [h.strip() for h in table.locator("thead th").all_inner_texts()]
    assert headers[:5] == ["Student", "Real name", "Grade", "Points", "State"], headers
    expect(rows.first.locator("td").nth(3)).to_have_text(re.compile(r"^(100|50)$"))
    # the whole table in the window: no scroll box, the last column's right edge in view
    box = page.locator(".wide-table")
    assert box.evaluate("b => b.scrollWidth <= b.clientWidth"), "the table scrolls"
    last = table.locator("thead th").last.bounding_box()
    assert last is not None and last["x"] + last["width"] <= 1920, last
    screenshot(page, "assignment-teacher-1920")
    page.set_viewport_size({"width": 1280, "height": 800})
    # a new assignment, its deadline typed in the teacher's zone
    page.goto(f"{live_server}/classes/5b/assignments/new")
    expect(page.locator("select[name=time_zone]")).to_have_value("Europe/Paris")
    deadline = datetime.now(ZoneInfo("Europe/Paris")) + timedelta(days=5)
    page.locator("input[name=name]").fill("hw2")
    page.locator("textarea[name=description]").fill("Beat counter.")
    page.locator("input[name=deadline]").fill(deadline.strftime("%Y-%m-%dT%H:%M"))
    screenshot(page, "assignment-new")
    page.get_by_role("button", name="Create the assignment").click()
    expect(page).to_have_url(f"{live_server}/classes/5b/assignments/hw2")
    expect(page.locator("p.facts")).to_contain_text(deadline.strftime("%Y-%m-%d %H:%M %Z"))
    with store.read() as session:
        stored = session.scalars(select(Assignment).where(Assignment.name == "hw2")).one()
    assert stored.time_zone == "Europe/Paris"
    assert abs(stored.deadline.timestamp() - deadline.replace(second=0).timestamp()) < 1


def test_the_similarity_report_marks_the_copied_lines(
    store: Store, live_server: str, page: Page, seeded: object
) -> None:
    store.add_bot_version("ann", "mine", OWN, {})
    store.add_bot_version("cy", "copy", _renamed(OWN), {})
    store.add_bot_version("dan", "also", OWN.replace("def play", "def play_it") + "\n# dan\n", {})
    for owner, bot in (("ann", "mine"), ("cy", "copy"), ("dan", "also")):
        submitted(store, "5b", owner, bot)  # the report compares what was submitted to the class
    log_in(page, live_server, "teacher", at="/classes/5b")
    page.get_by_role("link", name="Similar sources").first.click()
    rows = page.locator("table.similar tbody tr")
    expect(rows).to_have_count(3)  # ann, cy and dan: each pair
    expect(rows.first).to_have_class("chosen")
    pair = page.locator("section.pair")
    expect(pair.locator("h2")).to_contain_text("ann/mine v2 and")
    # another pair, side by side in its turn
    rows.nth(2).locator("a").click()
    expect(page).to_have_url(re.compile(r"pair=3#pair$"))
    expect(rows.nth(2)).to_have_class("chosen")
    expect(pair.locator("h2")).not_to_contain_text("ann/")
    page.go_back()
    sides = pair.locator("section.source")
    expect(sides).to_have_count(2)
    expect(sides.first.locator(".ln.match")).to_have_count(len(OWN.splitlines()))
    # side by side: the two sources start at the same height, the second to the right
    left, right = sides.first.bounding_box(), sides.nth(1).bounding_box()
    assert left is not None and right is not None
    assert abs(left["y"] - right["y"]) < 2 and right["x"] > left["x"] + left["width"] - 1
    screenshot(page, "class-similarity")
