"""The class pages in a real browser (Debian's chromium through Playwright): a teacher creates
a class and shows its join code on a projector; a room of students (six times the server's
line) join from one address within a minute through the real join form; the teacher imports
a roster and prints its logins, starts a class tournament and reads the roster with
ratings; a student reads the class leaderboard, on a phone too. Any JavaScript error, or
anything the Content-Security-Policy blocks, fails the test; screenshots go to
tests/web/screenshots/.

They join with one press each: a post waits in the server's hashing line, and one refused
because the line is full (503) is filled in and posted again by the page itself after its
Retry-After, the page saying so (web/static/js/arena.js)."""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from flask import Flask
from playwright.sync_api import Browser, Page, Request, ViewportSize, expect
from playwright.sync_api import Error as PlaywrightError

from arena.engine.rules import PRESETS
from arena.service.accounts import create_account
from arena.service.classes import NewClass, create_class, join_class
from arena.service.results import refit_ratings
from arena.store.db import Store
from tests.paths import REFERENCE_BOTS
from tests.service.test_class_roster import ROSTERS
from tests.submissions import submitted
from tests.web.conftest import (
    HASHER,
    PASSWORD,
    SlowHasher,
    log_in,
    log_in_by_form,
    make_app,
    play_pending,
    screenshot,
    serving,
)

PHONE: ViewportSize = {"width": 390, "height": 844}
#: The class's size: its students join through the form, one browser context each; four
#: times the crowd server's two places in line, so that the line fills and pages retry by
#: themselves (30 students, on gunicorn with a worker playing, are measured by
#: ``benchmarks/classroom.py --crowd``: a browser context each costs a second here).
STUDENTS = 8
#: The bots the students upload (a few of them: the rest have none yet).
STRATEGIES = ("random", "greedy", "counter")


def _fits_a_phone(page: Page) -> None:
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= PHONE["width"], (page.url, width)


def _new_class(page: Page, live_server: str) -> str:
    """tess creates the class maths; its join code."""
    log_in(page, live_server, "tess")
    page.get_by_role("link", name="Classes").click()
    page.get_by_role("link", name="New class").click()
    page.locator("input[name=name]").fill("maths")
    page.locator("textarea[name=description]").fill("Year 10: beat greedy by Friday.")
    page.locator("select[name=rules]").select_option("block")
    screenshot(page, "class-new")
    page.get_by_role("button", name="Create the class").click()
    expect(page).to_have_url(f"{live_server}/classes/maths/join-code")
    code = page.locator("#join-code").inner_text().strip()
    assert re.fullmatch(r"[A-HJ-KM-NP-Z2-9]{8}", code), code
    return code


def _class_made(store: Store, page: Page, live_server: str, at: str) -> str:
    """tess's class maths made through the service (the room's test walks the form), tess
    logged in on ``at``; its join code."""
    tess = create_account(store, "tess", PASSWORD, role="teacher", hasher=HASHER)
    new = NewClass(name="maths", description="Year 10: beat greedy by Friday.")
    code = create_class(store, tess, new).join_code
    assert code is not None
    log_in(page, live_server, "tess", at=at)
    return code


def _fill(student: Page, number: int) -> None:
    """Student ``number``'s join form filled in (a real name for every other one)."""
    student.locator("input[name=pseudonym]").fill(f"pupil{number:02d}")
    student.locator("input[name=password]").fill(f"pupil {number} passphrase")
    student.locator("input[name=confirm]").fill(f"pupil {number} passphrase")
    if number % 2 == 0:
        student.locator("input[name=real_name]").fill(f"Real Name {number:02d}")


def _desk(
    browser: Browser, live_server: str, code: str, number: int
) -> tuple[Page, list[str], int]:
    """Student ``number``'s browser on the join page, the form filled in (a real name for
    every other one); its page, the JavaScript and console errors it will collect, and the
    number."""
    context = browser.new_context(viewport={"width": 1000, "height": 700}, locale="en-GB")
    student = context.new_page()
    student.set_default_timeout(20_000)
    errors: list[str] = []
    student.on("pageerror", lambda exc: errors.append(str(exc)))
    student.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    student.goto(f"{live_server}/join/{code.lower()}")
    _fill(student, number)
    if number == 0:
        screenshot(student, "class-join-form")
    return student, errors, number


#: What the join page says while the post waits in the server's hashing line, and when the
#: line was full and the page tries again by itself (web/static/js/arena.js).
IN_LINE = "yours is in line"
RETRYING = "trying again by itself in"


def _joined(student: Page, live_server: str, number: int) -> None:
    """Wait until the student is in the class, without pressing again."""
    expect(student).to_have_url(f"{live_server}/classes/maths", timeout=50_000)
    expect(student.locator("ul.flashes")).to_contain_text(f"Welcome, pupil{number:02d}")


def _count_posts(student: Page, posts: list[int], number: int) -> None:
    """Count the posts of ``student``'s page in ``posts[number]``."""

    def count(request: Request) -> None:
        if request.method == "POST":
            posts[number] += 1

    student.on("request", count)


def _console_errors(errors: list[str]) -> list[str]:
    """The errors but the browser's report of each 503 (a post the page then retried)."""
    return [e for e in errors if "status of 503" not in e]


def _crowd_app(store: Store, url: str, tmp_path: Path, places: int) -> Iterator[str]:
    """The app on a real socket with one hash at a time (0.1 s each: a line forms when
    a room presses together) and ``places`` in line."""
    app = make_app(
        url, tmp_path / "broker", ARENA_PASSWORD_HASHER=SlowHasher(0.1), ARENA_HASH_SLOTS=1,
        ARENA_HASH_QUEUE=places,
    )  # fmt: skip
    try:
        with serving(app) as base:
            yield base
    finally:
        app.extensions["arena_store"].close()


@pytest.fixture
def crowd_server(store: Store, url: str, tmp_path: Path) -> Iterator[str]:
    """The app with two places in its hashing line, far fewer than the class."""
    yield from _crowd_app(store, url, tmp_path, 2)


@pytest.fixture
def one_place(store: Store, url: str, tmp_path: Path) -> Iterator[tuple[str, Flask]]:
    """The app with one place in its hashing line."""
    app = make_app(url, tmp_path / "broker", ARENA_HASH_SLOTS=1, ARENA_HASH_QUEUE=1)
    try:
        with serving(app) as base:
            yield base, app
    finally:
        app.extensions["arena_store"].close()


def test_a_room_of_students_join_from_one_address_with_one_press_each(
    store: Store, crowd_server: str, page: Page, browser: object
) -> None:
    assert isinstance(browser, Browser)
    live_server = crowd_server
    create_account(store, "tess", PASSWORD, role="teacher", hasher=HASHER)
    code = _new_class(page, live_server)
    link = page.locator(".projector .link a")
    expect(link).to_have_text(f"{live_server}/join/{code}")
    qr = page.locator(".projector svg.qr")
    box = qr.bounding_box()
    assert box is not None and box["width"] >= 200 and abs(box["width"] - box["height"]) < 2
    expect(page.locator(".projector")).to_contain_text("Valid until")
    screenshot(page, "class-join-code")
    # the students, each in a browser of their own, from this one address, fill the
    # form in; then each presses Join once, together: more than the line's places, so the
    # server refuses some at once (503), and their pages try again by themselves
    desks = [_desk(browser, live_server, code, number) for number in range(STUDENTS)]
    posts = [0] * STUDENTS
    for student, _, number in desks:
        _count_posts(student, posts, number)
    try:
        started = time.monotonic()
        for student, _, _ in desks:
            student.get_by_role("button", name="Join maths").click(no_wait_after=True)
        for student, errors, number in desks:
            _joined(student, live_server, number)
            if number == 0:
                screenshot(student, "class-joined")
            assert not _console_errors(errors), errors
        elapsed = time.monotonic() - started
        assert elapsed < 60, f"{STUDENTS} joins took {elapsed:.1f} s"
        assert min(posts) >= 1, posts  # every one pressed once; the page posted again
        assert sum(posts) < 3 * STUDENTS, posts
    finally:  # once their pages are idle: a request cut off by a closing browser leaves
        # werkzeug's static file open (a ResourceWarning in a later test)
        for student, _, _ in desks:
            with contextlib.suppress(PlaywrightError):
                student.wait_for_load_state("networkidle", timeout=10_000)
            student.context.close()
    # the teacher's roster has them all, real names where given
    page.goto(f"{live_server}/classes/maths")
    rows = page.locator("table.roster tbody tr")
    expect(rows).to_have_count(STUDENTS)
    expect(page.locator("table.roster")).to_contain_text("Real Name 00")
    expect(page.locator("table.roster")).to_contain_text(f"pupil{STUDENTS - 1:02d}")
    screenshot(page, "class-roster-joined")


def test_a_student_in_line_is_told_so_and_gets_in_without_pressing_again(
    store: Store, one_place: tuple[str, Flask], page: Page, browser: object
) -> None:
    # Another request holds the one hashing slot: the first student's post waits in line
    # (the page says so), the second finds the line full (the page says it tries again by
    # itself, and does); both get in when the slot is free, each having pressed once.
    assert isinstance(browser, Browser)
    live_server, app = one_place
    code = _class_made(store, page, live_server, "/classes/maths/join-code")
    first, first_errors, _ = _desk(browser, live_server, code, 1)
    second, second_errors, _ = _desk(browser, live_server, code, 2)
    try:
        guard = app.config["ARENA_PASSWORD_HASHER"].guard
        with guard.slot():  # another request hashes
            # pressed, the page says the post waits in line and disables the button (the
            # navigation held back here to look at it: Playwright waits for a pending one)
            first.evaluate("window.addEventListener('submit', (e) => e.preventDefault())")
            first.get_by_role("button", name="Join maths").click()
            status = first.locator(".patience")
            expect(status).to_contain_text(IN_LINE)
            expect(status).to_contain_text("No need to press again")
            expect(first.get_by_role("button", name="Join maths")).to_be_disabled()
            screenshot(first, "class-join-in-line")
            first.evaluate("document.querySelector('form[data-patient]').submit()")
            deadline = time.monotonic() + 10
            while guard.waiting < 1:  # its post is in line
                assert time.monotonic() < deadline
                time.sleep(0.02)
            second.get_by_role("button", name="Join maths").click(no_wait_after=True)
            expect(second.locator(".patience")).to_contain_text(RETRYING)
            expect(second.locator("input[name=pseudonym]")).to_have_value("pupil02")
            screenshot(second, "class-join-retrying")
        _joined(first, live_server, 1)
        _joined(second, live_server, 2)
        assert not _console_errors(first_errors) and not _console_errors(second_errors)
    finally:
        first.context.close()
        second.context.close()


def test_the_teacher_imports_a_roster_and_prints_the_logins(
    store: Store, live_server: str, page: Page, tmp_path: Path
) -> None:
    _class_made(store, page, live_server, "/classes/maths")
    page.get_by_role("link", name="Import a roster", exact=True).click()
    screenshot(page, "class-roster-form")
    page.locator("input[name=roster]").set_input_files(str(ROSTERS / "canvas.csv"))
    page.get_by_role("button", name="Preview").click()
    expect(page.locator(".roster-format")).to_have_text("Canvas gradebook")
    expect(page.locator("table.roster-preview tbody tr")).to_have_count(8)
    expect(page.locator(".roster-counts")).to_contain_text("8 to make")
    screenshot(page, "class-roster-preview")
    # the teacher says the section column is not used, and asks for the school's logins
    page.get_by_label("Column 5 holds").select_option("ignore")
    page.locator("input[name=logins][value=school]").check()
    page.get_by_role("button", name="Preview again").click()
    expect(page.locator("table.roster-preview")).to_contain_text("alovelace")
    expect(page.get_by_label("Column 5 holds")).to_have_value("ignore")
    page.get_by_role("button", name="Import: make 8, update 0").click()
    slips = page.locator("ul.slips li.slip")
    expect(slips).to_have_count(8)
    expect(page.locator("button[data-print]")).to_be_visible()
    screenshot(page, "class-logins")
    page.emulate_media(media="print")
    expect(page.locator("header.top")).to_be_hidden()
    screenshot(page, "class-logins-print")
    page.emulate_media(media="screen")
    with page.expect_download() as download:
        page.get_by_role("button", name="Download the CSV").click()
    saved = tmp_path / "logins.csv"
    download.value.save_as(saved)
    lines = saved.read_text().splitlines()
    assert lines[0] == "real_name,login,password" and len(lines) == 9
    assert lines[2].startswith("Katherine Johnson,kjohnson,")
    password = lines[2].split(",", 2)[2]
    page.goto(f"{live_server}/classes/maths")
    expect(page.locator("table.roster")).to_contain_text("S26-0002")
    screenshot(page, "class-roster-imported")
    # Katherine logs in: first a password of her own
    page.get_by_role("button", name="Log out").click()
    log_in_by_form(page, live_server, "kjohnson", password)
    expect(page).to_have_url(f"{live_server}/account/password")
    expect(page.locator("ul.flashes")).to_contain_text("Choose your own password first")
    page.goto(f"{live_server}/classes/maths")
    expect(page).to_have_url(f"{live_server}/account/password")
    page.locator("input[name=current]").fill(password)
    page.locator("input[name=new]").fill("katherine's own passphrase")
    page.locator("input[name=confirm]").fill("katherine's own passphrase")
    page.get_by_role("button", name="Change it").click()
    page.goto(f"{live_server}/classes/maths")
    expect(page.locator("h1")).to_have_text("maths")
    # the login the school gave her, she may change before her first upload
    page.locator("form.change-login input[name=login]").fill("human-computer")
    page.locator("form.change-login").get_by_role("button", name="Change it").click()
    expect(page.locator("ul.flashes")).to_contain_text("Your login is now human-computer")
    screenshot(page, "class-student-login-changed")


def test_the_teachers_and_the_students_views_after_a_class_tournament(
    store: Store, live_server: str, page: Page, tmp_path: Path
) -> None:
    code = _class_made(store, page, live_server, "/classes/maths/join-code")
    for number, strategy in enumerate(STRATEGIES):
        name = f"pupil{number}"
        join_class(store, HASHER, code, name, PASSWORD, f"Real Name {number}")
        source = (REFERENCE_BOTS / f"{strategy}.py").read_text()
        store.add_bot_version(name, strategy, source, {})
        submitted(store, "maths", name, strategy)  # a class tournament plays submissions
    join_class(store, HASHER, code, "lazy", PASSWORD)  # no bot yet
    store.add_bot_version("reference", "random", (REFERENCE_BOTS / "random.py").read_text(), {})
    page.goto(f"{live_server}/classes/maths")
    section = page.locator("section.class-controls")
    section.locator("input[name=games]").fill("2")  # the views are the check, not the play
    section.get_by_label("with the reference bots").check()
    section.get_by_role("button", name="Start a class tournament").click()
    expect(page).to_have_url(re.compile(rf"{live_server}/tournaments/.+"))
    play_pending(store, tmp_path / "cache")
    refit_ratings(store, PRESETS["block"])  # as the workers do after each result
    page.goto(f"{live_server}/classes/maths")
    roster = page.locator("table.roster")
    expect(roster.locator("tbody tr")).to_have_count(4)
    expect(roster).to_contain_text("Real Name 1")
    expect(roster.locator("svg.interval")).to_have_count(3)
    screenshot(page, "class-teacher")
    # a student's view: the leaderboard, no real names, no roster
    page.get_by_role("button", name="Log out").click()
    log_in(page, live_server, "pupil1")
    page.get_by_role("link", name="Classes").click()
    page.get_by_role("link", name="maths").click()
    board = page.locator("table.class-board")
    expect(board.locator("tbody tr")).to_have_count(4)  # three students, one reference bot
    expect(board.locator("tr.reference")).to_have_count(1)
    expect(page.locator("main")).not_to_contain_text("Real Name")
    screenshot(page, "class-student")
    page.goto(f"{live_server}/classes/maths/leaderboard")
    page.get_by_label("hide them").check()
    page.get_by_role("button", name="Apply").click()
    expect(page.locator("table.class-board tbody tr")).to_have_count(3)
    page.set_viewport_size(PHONE)
    page.goto(f"{live_server}/classes/maths")
    _fits_a_phone(page)
    screenshot(page, "class-student-phone")


def test_a_user_asks_to_be_a_teacher_and_an_admin_grants_it(
    store: Store, live_server: str, page: Page
) -> None:
    create_account(store, "stan", PASSWORD, hasher=HASHER)
    create_account(store, "root", PASSWORD, role="admin", hasher=HASHER)
    log_in(page, live_server, "stan")
    page.get_by_role("link", name="Classes").click()
    expect(page.get_by_role("link", name="New class")).to_have_count(0)
    page.get_by_role("button", name="Ask to be a teacher").click()
    expect(page.locator("ul.flashes")).to_contain_text("an admin will grant or refuse it")
    screenshot(page, "class-asked")
    page.get_by_role("button", name="Log out").click()
    log_in(page, live_server, "root", at="/admin/users")
    requests = page.locator("table.requests")
    expect(requests.locator("tbody tr")).to_have_count(1)
    expect(requests).to_contain_text("stan")
    screenshot(page, "class-role-requests")
    requests.get_by_role("button", name="Grant").click()
    expect(page.locator("ul.flashes")).to_contain_text("stan is a teacher now.")
    expect(page.locator("table.requests")).to_have_count(0)
    page.get_by_role("button", name="Log out").click()
    log_in(page, live_server, "stan")
    page.get_by_role("link", name="Classes").click()
    expect(page.get_by_role("link", name="New class")).to_be_visible()


def test_the_join_page_and_the_join_code_fit_a_phone(
    store: Store, live_server: str, page: Page
) -> None:
    code = _class_made(store, page, live_server, "/classes/maths/join-code")
    page.set_viewport_size(PHONE)
    page.reload()
    screenshot(page, "class-join-code-phone")
    _fits_a_phone(page)
    page.get_by_role("button", name="Log out").click()
    page.goto(f"{live_server}/join/{code}")
    _fits_a_phone(page)
    screenshot(page, "class-join-form-phone")
