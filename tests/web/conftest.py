"""What the web tests share: stored bots and tournaments played by the worker's own code
(unsandboxed: the reference bots are trusted), a live server on a real socket, and a real
browser (Debian's chromium in its headless shell, driven by Playwright) that fails a test
on any JavaScript error or Content-Security-Policy violation and saves screenshots."""

from __future__ import annotations

import contextlib
import os
import re
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Literal

import pytest
from argon2 import PasswordHasher
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import select
from werkzeug.serving import make_server

from arena.engine.rules import PRESETS
from arena.service.accounts import create_account, password_hasher
from arena.service.matches import Config, create_stored_tournament, run_match
from arena.store.db import Store
from arena.store.models import Match, Tournament
from tests.paths import REFERENCE_BOTS
from web import create_app

RULES = PRESETS["block"].with_overrides(target=10)
#: Accounts' passwords in the web tests, hashed with argon2's cheapest profile.
PASSWORD = "correct horse"
HASHER = password_hasher(cheap=True)
ENTRANTS = ["reference/random", "alice/greedy@1", "alice/greedy@2", "bob/counter"]
#: How often the live parts of the pages ask again in a test that waits for a page to
#: change by itself (:func:`live_polls`; a deployment's: 1-5 s).
POLL_SECONDS = 0.5
#: Where the browser tests leave their screenshots (kept out of git: look at them).
SCREENSHOTS = Path(__file__).resolve().parent / "screenshots"


class SlowHasher(PasswordHasher):
    """The cheap hasher, each hash and verify taking ``seconds`` as argon2's defaults do on
    a loaded machine; it counts its calls and the most it ran at once."""

    def __init__(self, seconds: float) -> None:
        super().__init__(time_cost=1, memory_cost=8, parallelism=1)
        self.seconds = seconds
        self.calls: list[str] = []
        self.running = self.most = 0
        self._lock = threading.Lock()

    @contextlib.contextmanager
    def _running(self, call: str) -> Iterator[None]:
        with self._lock:
            self.calls.append(call)
            self.running += 1
            self.most = max(self.most, self.running)
        try:
            time.sleep(self.seconds)
            yield
        finally:
            with self._lock:
                self.running -= 1

    def hash(self, password: str | bytes, *, salt: bytes | None = None) -> str:
        with self._running("hash"):
            return super().hash(password, salt=salt)

    def verify(self, hash: str | bytes, password: str | bytes) -> Literal[True]:
        with self._running("verify"):
            return super().verify(hash, password)


def csrf_token(client: FlaskClient, path: str = "/login") -> str:
    """The CSRF token a page of ``path`` gives this client (it is the session's)."""
    return csrf_in(client.get(path).get_data(as_text=True), path)


def csrf_in(page: str, path: str) -> str:
    """The CSRF token of a form on ``page`` (the HTML of ``path``)."""
    found = re.search(r'name="csrf_token" value="([^"]+)"', page)
    assert found, f"no CSRF token on {path}"
    return found.group(1)


def logged_in(app: Flask, name: str | None) -> FlaskClient:
    """A test client logged in as ``name`` (password :data:`PASSWORD`); None: anonymous."""
    client = app.test_client()
    if name is not None:
        data = {"name": name, "password": PASSWORD, "csrf_token": csrf_token(client)}
        assert client.post("/login", data=data).status_code == 302
    return client


def _source(name: str, comment: str = "") -> str:
    return (REFERENCE_BOTS / f"{name}.py").read_text() + comment


def store_bots(store: Store) -> None:
    """reference/random, alice/greedy v1 and v2, bob/counter."""
    store.add_bot_version("reference", "random", _source("random"), {})
    store.add_bot_version("alice", "greedy", _source("greedy"), {})
    store.add_bot_version("alice", "greedy", _source("greedy", "\n# v2\n"), {})
    store.add_bot_version("bob", "counter", _source("counter"), {})


def create(store: Store, name: str, entrants: Sequence[str], games: int, seed: int = 3) -> int:
    """A stored round robin under :data:`RULES`, ``games`` games a pair; its id."""
    tournament_id, _ = create_stored_tournament(
        store,
        name=name,
        rules=RULES,
        format="round-robin",
        entrants=list(entrants),
        games_per_match=games,
        seed=seed,
    )
    return tournament_id


def play(
    store: Store, name: str, cache: Path, pause: float = 0.0, *, warm_bots: bool = True
) -> None:
    """Play every match of the tournament here, as a worker would (``pause`` seconds
    before each: a test can watch it go; ``warm_bots`` False: every match starts its bots
    afresh, as ``ARENA_WARM_BOTS=0`` makes a worker do)."""
    with store.read() as session:
        ids = list(
            session.scalars(
                select(Match.id)
                .join(Tournament, Tournament.id == Match.tournament_id)
                .where(Tournament.name == name)
                .order_by(Match.id)
            )
        )
    config = Config(bot_cache=cache, warm_bots=warm_bots)
    for match_id in ids:
        if pause:
            threading.Event().wait(pause)
        assert run_match(store, match_id, config=config, sandboxed=False) == "done"


def play_pending(
    store: Store, cache: Path, pause: float = 0.0, *, sandboxed: bool = False
) -> list[int]:
    """Play the pending matches (of every tournament) in order as workers would, each
    followed by what a worker does after a match (the compare stop, then an assignment's
    grading), until none is left (``pause`` seconds before each: a test can watch it go);
    the ids of the matches played."""
    from arena.service.assignments import grade_after_match
    from arena.service.compares import stop_if_decided

    config = Config(bot_cache=cache)
    played: list[int] = []
    while True:
        with store.read() as session:
            pending = session.scalar(
                select(Match.id).where(Match.status == "pending").order_by(Match.id).limit(1)
            )
        if pending is None:
            return played
        if pause:
            threading.Event().wait(pause)
        run_match(store, pending, config=config, sandboxed=sandboxed)
        stop_if_decided(store, pending)
        grade_after_match(store, pending)
        played.append(pending)


@pytest.fixture
def app(store: Store, url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Flask]:
    """The app on the test's database, with cheap password hashes and a broker directory of
    its own (no worker reads it: tests check uploads themselves, as a worker would)."""
    app = make_app(url, tmp_path_factory.mktemp("broker"))
    yield app
    app.extensions["arena_store"].close()


def played_spring(store: Store, tmp_path: Path) -> None:
    """A finished round robin of the web tests' bots ("spring", 2 games a pair): match 1's
    game 0 is reference/random against alice/greedy@v1; the accounts alice, bob (whose
    counter is private) and root (an admin). A seed (tests/conftest.py's seed marker):
    built once a run, each test of it reading its own copy."""
    for name, role in (("alice", "user"), ("bob", "user"), ("root", "admin")):
        create_account(store, name, PASSWORD, role=role, hasher=HASHER)
    store_bots(store)
    create(store, "spring", ENTRANTS, 2)
    play(store, "spring", tmp_path / "cache")


def make_app(url: str, broker: Path, **config: object) -> Flask:
    """The app on ``url`` with cheap password hashes, ``config``, and the filesystem broker
    in ``broker`` as the service's (close its store when done)."""
    from arena.service.broker import install
    from arena.service.broker import make_app as make_celery

    app = create_app(url, {"ARENA_PASSWORD_HASHER": HASHER, "TESTING": True, **config})
    install(make_celery(f"filesystem://{broker}", None, url))
    return app


@pytest.fixture
def live_polls(app: Flask) -> None:
    """The app's live parts ask again every :data:`POLL_SECONDS`: for a browser test that
    waits for a page to change by itself (it waits for what the page shows, not for the
    period; the others keep the deployment's, their page still while they measure it)."""
    app.config["ARENA_POLL_SECONDS"] = POLL_SECONDS


@pytest.fixture
def live_server(app: Flask) -> Iterator[str]:
    """The app on a real socket (werkzeug, threaded): its base URL."""
    with serving(app) as base:
        yield base


def _whole_file(file: Any, buffer_size: int = 8192) -> list[bytes]:
    """A ``wsgi.file_wrapper`` that reads the file at once and closes it: werkzeug's
    development server skips closing a response whose client hung up while it drained the
    request (a browser context closed mid-request), and the static file it left open was a
    ResourceWarning in whichever test ran when it was collected."""
    try:
        return [file.read()]
    finally:
        file.close()


def _closing_files(app: Flask) -> Any:
    def wsgi(environ: dict[str, Any], start_response: Any) -> Any:
        environ["wsgi.file_wrapper"] = _whole_file
        return app(environ, start_response)

    return wsgi


@contextlib.contextmanager
def serving(app: Flask) -> Iterator[str]:
    """``app`` on a real socket (werkzeug, threaded) for the block: its base URL."""
    server = make_server("127.0.0.1", 0, _closing_files(app), threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        thread.join()


#: Debian's Chromium in its headless shell (the package chromium-headless-shell: the same
#: build as ``chromium``, without the full browser that ``chromium --headless`` starts, its
#: browser-UI renderer and its profile services). Playwright drives it as it drives its own
#: headless shell, its default for headless Chromium. On the browser tests it spends a third
#: of the CPU that ``chromium --headless`` did (17.0 -> 5.7 CPU s for test_browser.py).
HEADLESS_SHELL = Path("/usr/lib/chromium/chromium-headless-shell")


@pytest.fixture(scope="session")
def browser() -> Iterator[object]:
    """One browser for the test process (each test gets a fresh context: :func:`page`)."""
    from playwright.sync_api import sync_playwright

    assert HEADLESS_SHELL.exists(), (
        "the browser tests need Debian's chromium headless shell: apt-get install "
        "chromium-headless-shell (./run test installs it as root)"
    )
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=HEADLESS_SHELL)
        yield browser
        browser.close()


@pytest.fixture
def page(browser: object) -> Iterator[object]:
    """A fresh page; any JavaScript error or console error (a CSP violation is one) fails
    the test."""
    from playwright.sync_api import Browser

    assert isinstance(browser, Browser)
    context = browser.new_context(
        viewport={"width": 1100, "height": 800},
        locale="en-GB",
        timezone_id="UTC",
        reduced_motion="reduce",
    )
    page = context.new_page()
    page.set_default_timeout(10_000)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on(
        "console",
        lambda message: (
            errors.append(f"{message.text} {message.location.get('url')}")
            if message.type == "error"
            else None
        ),
    )
    yield page
    context.close()
    assert not errors, errors


def log_in(
    page: object, live_server: str, name: str, password: str = PASSWORD, *, at: str = "/"
) -> None:
    """Log ``page``'s browser context in as ``name``, then open ``at`` and wait until it
    shows the account. The login is a real POST to the server's login form (its CSRF token
    taken from the form), sent by the context's own HTTP client (Playwright's
    ``page.request``: the context's cookies, the session cookie kept): the page renders no
    login form, which the tests that log in to reach something else have no use for (a
    third of a browser test's login CPU); :func:`log_in_by_form` types into the form."""
    from playwright.sync_api import Page, expect

    assert isinstance(page, Page)
    form = page.request.get(f"{live_server}/login")
    data: dict[str, str | float | bool] = {
        "name": name,
        "password": password,
        "csrf_token": csrf_in(form.text(), "/login"),
    }
    reply = page.request.post(f"{live_server}/login", form=data, max_redirects=0)
    assert reply.status == 302, (reply.status, reply.text()[:500])
    page.goto(f"{live_server}{at}")
    expect(page.locator("header .account")).to_contain_text(name)


def log_in_by_form(page: object, live_server: str, name: str, password: str = PASSWORD) -> None:
    """Log ``page`` in as ``name`` through the login form, and wait until the page shows
    it (a navigation begun before the login's answer came would cancel it)."""
    from playwright.sync_api import Page, expect

    assert isinstance(page, Page)
    page.goto(f"{live_server}/login")
    page.locator("input[name=name]").fill(name)
    page.locator("input[name=password]").fill(password)
    page.get_by_role("button", name="Log in").click()
    expect(page.locator("header .account")).to_contain_text(name)


def screenshot(page: object, name: str) -> Path:
    """Save a full-page screenshot as ``tests/web/screenshots/NAME.png`` when
    ``ARENA_SCREENSHOTS=1`` (each costs a quarter of a second of the browser's and more on
    a loaded machine, and no test reads them: they are for people to look at)."""
    from playwright.sync_api import Page

    assert isinstance(page, Page)
    path = SCREENSHOTS / f"{name}.png"
    if os.environ.get("ARENA_SCREENSHOTS", "") in ("", "0"):
        return path
    SCREENSHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(path), full_page=True)
    return path
