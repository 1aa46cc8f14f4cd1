"""A room of thirty at once (issue 30, item 2): the hashing line in the web app.

Thirty students joining a class from one address pressed Join 27 times each: every post
that found the one hashing slot taken was refused (503). Now a post waits in the line
(arena.service.passwords), and a post refused because the line is full is retried by the
page itself after its Retry-After (web/static/js/arena.js: the client below does as it
does). The hasher is the cheap one slowed to a few hundredths of a second: these tests are
about the line, not argon2's cost."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import func, select

from arena.service.accounts import create_account
from arena.service.classes import NewClass, create_class
from arena.store.db import Store
from arena.store.models import ClassMember
from tests.web.conftest import HASHER, PASSWORD, SlowHasher, csrf_token, make_app

STUDENTS = 30
#: A flooder's pause between an answer and its next post: 24 of them offer ~240 posts a
#: second, five times what the line drains (one 0.02 s hash at a time), so the line stays
#: full; without it they spun the test process's core on refusals (5.3 CPU s a run).
FLOOD_PAUSE = 0.1
CLASS_ADDRESS, FLOOD_ADDRESS = "192.0.2.10", "198.51.100.66"


@pytest.fixture
def code(store: Store) -> str:
    teacher = create_account(store, "tess", PASSWORD, role="teacher", hasher=HASHER)
    row = create_class(store, teacher, NewClass(name="maths", rule_sets=("block",)))
    assert row.join_code is not None
    return row.join_code


def crowd_app(store: Store, url: str, tmp_path: Path, places: int) -> tuple[Flask, SlowHasher]:
    """The app with one hash at a time (0.02 s each) and ``places`` in line."""
    hasher = SlowHasher(0.02)
    app = make_app(
        url, tmp_path / "broker", ARENA_PASSWORD_HASHER=hasher, ARENA_HASH_SLOTS=1,
        ARENA_HASH_QUEUE=places,
    )  # fmt: skip
    return app, hasher


@pytest.fixture
def roomy(store: Store, url: str, tmp_path: Path) -> Iterator[tuple[Flask, SlowHasher]]:
    app, hasher = crowd_app(store, url, tmp_path, STUDENTS)
    yield app, hasher
    app.extensions["arena_store"].close()


@pytest.fixture
def narrow(store: Store, url: str, tmp_path: Path) -> Iterator[tuple[Flask, SlowHasher]]:
    app, hasher = crowd_app(store, url, tmp_path, 6)
    yield app, hasher
    app.extensions["arena_store"].close()


def _desk(app: Flask, address: str, path: str) -> tuple[FlaskClient, str]:
    """A browser at ``address`` on ``path``: its client and the form's CSRF token."""
    client = app.test_client()
    client.environ_base["REMOTE_ADDR"] = address
    return client, csrf_token(client, path)


def _together(count: int, attempt: object) -> None:
    """``attempt(number)`` in ``count`` threads started together."""
    assert callable(attempt)
    threads = [threading.Thread(target=attempt, args=(n,)) for n in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
        assert not thread.is_alive()


def _members(store: Store) -> int:
    with store.read() as session:
        return int(session.scalar(select(func.count()).select_from(ClassMember)) or 0)


def test_thirty_joins_at_once_from_one_address_each_get_in_on_one_post(
    roomy: tuple[Flask, SlowHasher], store: Store, code: str
) -> None:
    # Before: 1 of 30 got in, the others were told the server was busy (503) at once.
    app, hasher = roomy
    desks = [_desk(app, CLASS_ADDRESS, f"/join/{code}") for _ in range(STUDENTS)]
    together = threading.Barrier(STUDENTS)
    answers: dict[int, tuple[int, str]] = {}

    def join(number: int) -> None:
        client, token = desks[number]
        form = {"pseudonym": f"pupil{number:02d}", "password": f"pupil {number} passphrase",
                "confirm": f"pupil {number} passphrase", "csrf_token": token}  # fmt: skip
        together.wait()
        reply = client.post(f"/join/{code}", data=form)
        answers[number] = (reply.status_code, reply.headers.get("Location", ""))

    started = time.monotonic()
    _together(STUDENTS, join)
    assert sorted(answers.values()) == [(302, "/classes/maths")] * STUDENTS, answers
    assert _members(store) == STUDENTS
    assert hasher.most == 1 and hasher.calls.count("hash") == STUDENTS  # one at a time
    assert time.monotonic() - started < 30


def _patient_post(client: FlaskClient, path: str, form: dict[str, str]) -> tuple[int, int]:
    """Post as the page's script does: again by itself after each 503's Retry-After (which
    the page carries for it). The status of the last answer and the number of posts."""
    posts = 0
    while True:
        posts += 1
        reply = client.post(path, data=form)
        if reply.status_code != 503:
            return reply.status_code, posts
        retry = int(reply.headers["Retry-After"])
        assert 1 <= retry <= 30
        assert f'data-retry-after="{retry}"' in reply.get_data(as_text=True)
        time.sleep(retry)


def test_a_class_larger_than_the_line_gets_in_by_the_pages_own_retries(
    narrow: tuple[Flask, SlowHasher], store: Store, code: str
) -> None:
    # Six places in line: the others are refused at once, told when to come back, and the
    # page comes back by itself then: one press each, a post or two.
    app, hasher = narrow
    desks = [_desk(app, CLASS_ADDRESS, f"/join/{code}") for _ in range(STUDENTS)]
    together = threading.Barrier(STUDENTS)
    posts: dict[int, tuple[int, int]] = {}

    def join(number: int) -> None:
        client, token = desks[number]
        form = {"pseudonym": f"pupil{number:02d}", "password": f"pupil {number} passphrase",
                "confirm": f"pupil {number} passphrase", "csrf_token": token}  # fmt: skip
        together.wait()
        posts[number] = _patient_post(client, f"/join/{code}", form)

    started = time.monotonic()
    _together(STUDENTS, join)
    assert {status for status, _ in posts.values()} == {302}, posts
    assert _members(store) == STUDENTS and hasher.most == 1
    assert max(count for _, count in posts.values()) <= 6, posts
    assert sum(count for _, count in posts.values()) < 3 * STUDENTS, posts
    assert time.monotonic() - started < 40


def test_a_busy_answer_carries_its_wait_for_the_pages_script(
    store: Store, url: str, tmp_path: Path, code: str
) -> None:
    # The line full (no places here), the join form comes back with what was typed and
    # the wait, for the script to post it again by itself; other answers carry none.
    app, _ = crowd_app(store, url, tmp_path, 0)
    try:
        client, token = _desk(app, CLASS_ADDRESS, f"/join/{code}")
        form = {"pseudonym": "pupil01", "password": "pupil 1 passphrase",
                "confirm": "pupil 1 passphrase", "csrf_token": token}  # fmt: skip
        with app.config["ARENA_PASSWORD_HASHER"].guard.slot():  # another request hashes
            busy = client.post(f"/join/{code}", data=form)
        page = busy.get_data(as_text=True)
        assert busy.status_code == 503
        assert f'data-retry-after="{busy.headers["Retry-After"]}"' in page
        assert 'data-patient="Joining"' in page and 'value="pupil01"' in page
        assert "pupil 1 passphrase" not in page  # the password is not sent back
        assert client.post(f"/join/{code}", data=form).status_code == 302
        assert "data-retry-after" not in client.get(f"/join/{code}").get_data(as_text=True)
    finally:
        app.extensions["arena_store"].close()


def test_a_flood_beside_the_class_stays_bounded_and_the_class_gets_in(
    narrow: tuple[Flask, SlowHasher], store: Store, code: str
) -> None:
    # 24 clients at another address post logins with made-up names, again a tenth of a
    # second after each answer (FLOOD_PAUSE), while 10 students join: one hash at a time
    # whatever the flood, the line filled by the flood but never longer than its places,
    # the flood holding at most its share, and each student in with the page's own retries.
    app, hasher = narrow
    guard = app.config["ARENA_PASSWORD_HASHER"].guard
    stop = threading.Event()
    flood_answers: list[int] = []
    longest = [0]

    def flood(number: int) -> None:
        client, token = _desk(app, FLOOD_ADDRESS, "/login")
        attempt = 0
        while not stop.is_set():
            attempt += 1
            form = {"name": f"made-up-{number}-{attempt}", "password": "guess",
                    "csrf_token": token}  # fmt: skip
            flood_answers.append(client.post("/login", data=form).status_code)
            longest[0] = max(longest[0], guard.waiting)
            stop.wait(FLOOD_PAUSE)

    flooders = [threading.Thread(target=flood, args=(n,)) for n in range(24)]
    for thread in flooders:
        thread.start()
    try:
        time.sleep(0.5)  # the flood has filled the line
        desks = [_desk(app, CLASS_ADDRESS, f"/join/{code}") for _ in range(10)]
        posts: dict[int, tuple[int, int]] = {}

        def join(number: int) -> None:
            client, token = desks[number]
            form = {"pseudonym": f"pupil{number:02d}", "password": f"pupil {number} passphrase",
                    "confirm": f"pupil {number} passphrase", "csrf_token": token}  # fmt: skip
            posts[number] = _patient_post(client, f"/join/{code}", form)

        started = time.monotonic()
        _together(10, join)
        took = time.monotonic() - started
    finally:
        stop.set()
        for thread in flooders:
            thread.join(30)
    assert {status for status, _ in posts.values()} == {302}, posts
    assert _members(store) == 10 and took < 40
    assert hasher.most == 1  # the flood's hashes never more than the bound
    assert longest[0] == 6  # its waiting threads filled the line, and never more
    assert 503 in flood_answers and 401 in flood_answers
    assert set(flood_answers) <= {401, 429, 503}
