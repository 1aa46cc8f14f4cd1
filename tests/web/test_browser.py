"""The pages in a real browser (Debian's chromium through Playwright): a tournament finishing
live under the reader's eyes, the leaderboard's toggles and its interval pictures' geometry.
Any JavaScript error, or anything the Content-Security-Policy blocks, fails the test
(tests/web/conftest.py); each test leaves screenshots in tests/web/screenshots/."""

from __future__ import annotations

import re
import threading
from pathlib import Path

from playwright.sync_api import Page, expect

from arena.service.accounts import create_account, password_hasher
from arena.service.results import refit_ratings
from arena.service.uploads import check_in_sandbox
from arena.store.db import Store
from tests.paths import REFERENCE_BOTS, ZOO
from tests.web.conftest import (
    ENTRANTS,
    RULES,
    create,
    log_in,
    play,
    play_pending,
    screenshot,
    store_bots,
)

HASHER = password_hasher(cheap=True)


def _organiser_logged_in(store: Store, live_server: str, page: Page) -> None:
    """The reference bots stored, and the page logged in as olga, an organiser."""
    store_bots(store)
    create_account(store, "olga", "correct horse", role="organiser", hasher=HASHER)
    log_in(page, live_server, "olga")


def test_an_organiser_creates_a_tournament_and_watches_it_finish_live(
    store: Store, live_server: str, live_polls: None, page: Page, tmp_path: Path
) -> None:
    _organiser_logged_in(store, live_server, page)
    page.get_by_role("link", name="Tournaments").click()
    page.get_by_role("link", name="New tournament").click()
    page.locator("input[name=name]").fill("live")
    page.locator("select[name=rules]").select_option("block")
    for bot in ("reference/random", "alice/greedy", "bob/counter"):
        page.get_by_label(bot).check()
    page.locator("input[name=games]").fill("4")
    screenshot(page, "tournament-new")
    page.get_by_role("button", name="Create and start").click()
    expect(page).to_have_url(f"{live_server}/tournaments/live")
    expect(page.locator("#live .status")).to_have_text("pending")
    expect(page.locator("#live")).to_contain_text("0 of 6 matches finished")
    expect(page.locator("#live")).to_contain_text("No worker is alive")
    page.evaluate("window.arenaSamePage = true")  # gone if the page were reloaded
    screenshot(page, "tournament-pending")
    worker = threading.Thread(
        target=play, args=(store, "live", tmp_path / "cache"), kwargs={"pause": 0.3}
    )
    worker.start()
    try:
        expect(page.locator("#live")).to_contain_text("matches finished", timeout=5_000)
        expect(page.locator("#live .status")).to_have_text("done", timeout=60_000)
    finally:
        worker.join()
    expect(page.locator("#live")).to_contain_text("6 of 6 matches finished")
    assert page.evaluate("window.arenaSamePage") is True
    assert page.locator("#live").get_attribute("hx-get") is None  # polling has stopped
    expect(page.locator("table.standings tbody tr")).to_have_count(3)
    expect(page.locator("table.crosstable tbody tr")).to_have_count(3)
    done = page.locator("svg.progress rect.done")
    assert done.get_attribute("width") == "480.0"
    screenshot(page, "tournament-done")


def test_the_leaderboard_a_rating_chart_and_the_pages_on_a_phone(
    store: Store, live_server: str, page: Page, tmp_path: Path
) -> None:
    """The leaderboard's interval pictures and toggles; after a second tournament and
    refit, a bot's rating chart; then, at 390 px wide, no page scrolls sideways: wide
    tables scroll inside themselves (one test: the tournaments played serve all three)."""
    store_bots(store)
    create(store, "spring", ENTRANTS, 4)
    play(store, "spring", tmp_path / "cache")
    refit_ratings(store, RULES)
    page.goto(f"{live_server}/")
    page.get_by_role("link", name=RULES.name).first.click()
    rows = page.locator("table.leaderboard tbody tr")
    expect(rows).to_have_count(3)
    screenshot(page, "leaderboard")
    # Geometry: each rating's dot sits inside its whisker, and all share the header's axis.
    axis = page.locator("svg.axis").bounding_box()
    assert axis is not None
    for index in range(3):
        row = rows.nth(index)
        dot = row.locator("svg.interval circle.point").bounding_box()
        whisker = row.locator("svg.interval line.whisker").bounding_box()
        assert dot is not None and whisker is not None
        centre = dot["x"] + dot["width"] / 2
        assert whisker["x"] - 1 <= centre <= whisker["x"] + whisker["width"] + 1
        assert whisker["width"] > 10  # a few games: a wide interval, drawn wide
        assert axis["x"] <= whisker["x"] and whisker["x"] + whisker["width"] <= axis["x"] + 240
    # The toggles: hide the reference bots, then show every version.
    page.get_by_label("hide reference bots").check()
    page.get_by_role("button", name="Apply").click()
    expect(page).to_have_url(f"{live_server}/leaderboards/{RULES.name}?reference=hide")
    expect(rows).to_have_count(2)
    page.get_by_label("hide reference bots").uncheck()
    page.get_by_label("all versions").check()
    page.get_by_role("button", name="Apply").click()
    expect(rows).to_have_count(4)
    expect(page.locator("table.leaderboard")).to_contain_text("alice/greedy v1")
    page.get_by_text("How to read this table").click()
    expect(page.locator("details.help")).to_contain_text("provisional")
    screenshot(page, "leaderboard-all-versions")
    create(store, "summer", ENTRANTS, 2, seed=4)
    play(store, "summer", tmp_path / "cache")
    refit_ratings(store, RULES)  # a second history point
    page.goto(f"{live_server}/bots/alice/greedy")
    chart = page.locator(".rating-chart canvas").first
    expect(chart).to_be_visible()
    box = chart.bounding_box()
    assert box is not None and box["width"] >= 300 and box["height"] >= 100
    geometry = page.evaluate(
        """() => {
            const u = document.querySelector('.rating-chart').uplot;
            const y = (value) => u.valToPos(value, 'y');
            const ys = u.data[1].map((rating, i) => [y(u.data[2][i]), y(rating), y(u.data[3][i])]);
            const xs = u.data[0].map((t) => u.valToPos(t, 'x'));
            return {n: u.data[0].length, ys, xs, ymin: u.scales.y.min, ymax: u.scales.y.max,
                    lows: u.data[2], highs: u.data[3], plot: u.bbox.width / devicePixelRatio};
        }"""
    )
    assert geometry["n"] == 2
    for low, rating, high in geometry["ys"]:
        assert low > rating > high  # the dot inside its band (y grows downwards)
    assert geometry["xs"][0] < geometry["xs"][1] <= geometry["plot"] + 1  # in time order
    assert geometry["ymin"] <= min(geometry["lows"]) and geometry["ymax"] >= max(geometry["highs"])
    # two refits seconds apart: the time axis is labelled with dates and hours, never ":53.800"
    labels = page.evaluate(
        """() => {
            const u = document.querySelector('.rating-chart').uplot;
            const x = u.axes[0];
            return x._values || [];
        }"""
    )
    assert labels and all(re.search(r"\d{1,2}:\d{2}", str(v)) for v in labels), labels
    assert not any(re.match(r"^:\d", str(v)) for v in labels), labels
    legend = page.locator(".rating-chart .u-legend").inner_text()
    assert "rating" in legend and "--" not in legend, legend
    screenshot(page, "bot-chart")
    page.set_viewport_size({"width": 390, "height": 800})
    for path in ("/", f"/leaderboards/{RULES.name}", "/tournaments/spring", "/bots/alice/greedy",
                 "/games/1/0", "/bots", "/tournaments"):  # fmt: skip
        page.goto(f"{live_server}{path}")
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= 390, (path, width)
    screenshot(page, "phone-bot")


def test_sign_up_upload_a_bot_and_watch_its_check(
    store: Store, live_server: str, live_polls: None, page: Page
) -> None:
    page.goto(f"{live_server}/")
    page.get_by_role("link", name="Sign up").click()
    page.locator("input[name=name]").fill("ada")
    page.locator("input[name=password]").fill("correct horse")
    page.locator("input[name=confirm]").fill("correct horse")
    page.get_by_role("button", name="Create the account").click()
    expect(page.locator("ul.flashes")).to_contain_text("Welcome, ada.")
    page.get_by_role("link", name="Upload").click()
    page.locator("input[name=source]").set_input_files(str(REFERENCE_BOTS / "greedy.py"))
    page.get_by_label("Bot name").fill("mine")
    page.get_by_role("button", name="Upload and check").click()
    expect(page).to_have_url(f"{live_server}/uploads/1")
    expect(page.locator("#upload-live .status")).to_have_text("pending")
    screenshot(page, "upload-pending")
    worker = threading.Thread(target=check_in_sandbox, args=(store, 1))  # as a worker does
    worker.start()
    try:
        expect(page.locator("#upload-live .status")).to_have_text("accepted", timeout=60_000)
    finally:
        worker.join()
    expect(page.locator("#upload-live")).to_contain_text("Stored as version 1.")
    expect(page.locator("#upload-live")).to_contain_text("No fault.")
    screenshot(page, "upload-accepted")
    page.get_by_role("link", name="ada/mine").first.click()
    expect(page.locator("h1")).to_have_text("ada/mine")
    expect(page.get_by_role("link", name="source")).to_be_visible()
    screenshot(page, "bot-page")


def test_from_a_crosstable_cell_to_a_game_and_its_fault(
    store: Store, live_server: str, page: Page, tmp_path: Path
) -> None:
    """A reader follows a crosstable score to that pairing's games, opens one, and copies
    the tournament's plain-text summary; a bot's owner sees its fault's message."""
    create_account(store, "mallory", "correct horse", hasher=HASHER)
    store_bots(store)
    store.add_bot_version("mallory", "raiser", (ZOO / "raise_in_move.py").read_text(), {})
    create(store, "trouble", ["alice/greedy@1", "mallory/raiser", "bob/counter"], 4)
    play(store, "trouble", tmp_path / "cache")
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    page.goto(f"{live_server}/tournaments/trouble")
    expect(page.locator("table.faults")).to_contain_text("crash")
    copy = page.locator("button[data-copy=stat-block]")
    expect(copy).to_be_visible()
    copy.click()
    expect(copy).to_have_text("Copied")
    pasted = page.evaluate("navigator.clipboard.readText()")
    assert pasted.startswith("trouble: block, round-robin, 2 players") and "Faults:" in pasted
    screenshot(page, "tournament-faults")
    page.locator("table.crosstable td a").first.click()  # a score (the row names a bot)
    expect(page).to_have_url(re.compile(r"/games\?tournament=trouble&a=\w+&b=\w+"))
    expect(page.locator("table.games tbody tr")).to_have_count(4)
    screenshot(page, "games-pairing")
    page.goto(f"{live_server}/games?tournament=trouble&by=raiser&fault=crash")
    page.locator("table.games a").first.click()
    expect(page.locator("main")).to_contain_text("forfeited")
    expect(page.locator("main")).to_contain_text("shown to its owner only")
    game = page.url
    log_in(page, live_server, "mallory")
    page.goto(game)
    expect(page.locator("pre.stderr")).to_contain_text("bot gave up on purpose")
    screenshot(page, "game-fault-owner")
    page.goto(f"{live_server}/bots/mallory/raiser")
    expect(page.locator("section", has_text="Its faults")).to_contain_text("crash")
    screenshot(page, "bot-games")


def test_an_owner_starts_a_compare_and_watches_the_test_decide(
    store: Store, live_server: str, live_polls: None, page: Page, tmp_path: Path
) -> None:
    create_account(store, "alice", "correct horse", hasher=HASHER)
    store.add_bot_version("alice", "greedy", (REFERENCE_BOTS / "greedy.py").read_text(), {})
    store.add_bot_version("bob", "first", (ZOO / "first.py").read_text(), {})
    log_in(page, live_server, "alice", at="/bots/alice/greedy")
    page.get_by_role("link", name="Is it stronger? Start a compare").click()
    page.locator("select[name=old]").select_option("bob/first@1")
    page.locator("select[name=rules]").select_option("draw")
    page.locator("input[name=elo1]").fill("25")
    screenshot(page, "compare-new")
    page.get_by_role("button", name="Start the test").click()
    expect(page.locator("#live .verdict")).to_have_text("Running")

    worker = threading.Thread(target=play_pending, args=(store, tmp_path / "cache"))
    worker.start()
    try:
        # (either test may pass it: "NEW passed: H1 accepted by the fast pass" too)
        expect(page.locator("#live .verdict")).to_contain_text(
            "NEW passed: H1 accepted", timeout=90_000
        )
    finally:
        worker.join()
    expect(page.locator("svg.llr")).to_have_count(2)  # the main test's and the fast pass's
    expect(page.locator("svg.llr").first).to_be_visible()
    live = page.locator("#live")
    expect(live).to_contain_text("margin SPRT (point margins less the luck of the draw)")
    expect(live).to_contain_text("Fast pass")
    screenshot(page, "compare-passed")


def test_a_file_too_large_is_refused_in_the_page_and_the_form_is_kept(
    store: Store, live_server: str, page: Page
) -> None:
    _organiser_logged_in(store, live_server, page)
    page.goto(f"{live_server}/tournaments/new")
    page.locator("input[name=name]").fill("kept")
    rules_file = page.locator("input[name=rules_file]")
    rules_file.set_input_files(
        {"name": "big.toml", "mimeType": "text/plain", "buffer": b"#" * 100_000}
    )
    message = rules_file.evaluate("(input) => input.validationMessage")
    assert message == "big.toml is 98 KiB: at most 64 KiB.", message
    page.get_by_role("button", name="Create and start").click()
    expect(page).to_have_url(f"{live_server}/tournaments/new")  # not sent
    expect(page.locator("input[name=name]")).to_have_value("kept")
    rules_file.set_input_files(
        {"name": "small.toml", "mimeType": "text/plain", "buffer": b"# fine\n"}
    )
    assert rules_file.evaluate("(input) => input.validationMessage") == ""
