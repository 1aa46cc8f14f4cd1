"""Issue 20's security findings, each as the attack (a request sequence) and the refusal
expected, on SQLite and PostgreSQL where it touches the store. One section per finding."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import pytest
from argon2 import PasswordHasher
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import select
from sqlalchemy.exc import OperationalError

from arena.service.accounts import create_account, create_token
from arena.store.db import Store
from arena.store.models import Tournament, Upload, User
from tests.paths import REFERENCE_BOTS
from tests.web.conftest import HASHER, PASSWORD, csrf_token, logged_in, make_app, store_bots
from web.limits import LOGIN_ADDRESS_LIMIT, SIGNUP_LIMIT

# --- findings 6, 8: server errors on bad input; the regression test's own edges ---------------

#: What the int converters' routes are asked with: the largest id both databases hold
#: (PostgreSQL's INTEGER: 2^31 - 1), past it (PostgreSQL: "integer out of range"), past
#: SQLite's 2^63 - 1 (OverflowError), and longer than Python's int() reads from text.
IDS = [str(2**31 - 1), str(2**31), str(2**63 - 1), str(2**63), str(10**40), "9" * 5000]


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _organiser(store: Store) -> dict[str, str]:
    """The headers of an organiser's token with every scope."""
    olga = create_account(store, "olga", PASSWORD, role="organiser", hasher=HASHER)
    return _bearer(create_token(store, olga.id, "all", ["read", "upload", "run"]))


def _int_routes(app: Flask) -> list[tuple[str, str]]:
    """(method, rule) of every route with an int converter in its path."""
    found = []
    for rule in app.url_map.iter_rules():
        if "<int:" in rule.rule:
            method = "GET" if "GET" in (rule.methods or set()) else "POST"
            found.append((method, rule.rule))
    return found


def test_ids_past_the_databases_integers_are_404_on_every_route(app: Flask, store: Store) -> None:
    """Each route with a number in its path (games, branches, uploads, versions, tokens, the
    API's), asked for ids past what the databases hold, answers 404 (JSON under /api/),
    never 500 (SQLite) or 503 (PostgreSQL)."""
    store_bots(store)
    headers = _organiser(store)
    create_account(store, "ada", PASSWORD, hasher=HASHER)
    client = logged_in(app, "ada")
    csrf = csrf_token(client, "/account/tokens")
    routes = _int_routes(app)
    assert len(routes) >= 18, routes
    assert ("GET", "/api/v1/bots/<owner>/<name>/versions/<int:version>/source") in routes
    for method, rule in routes:
        for number in IDS:
            path = re.sub(r"<int:\w+>", number, rule)
            path = re.sub(r"<(?:\w+:)?(\w+)>", "alice", path).replace("alice/alice", "alice/greedy")
            if method == "POST":
                reply = client.post(path, data={"csrf_token": csrf})
            else:
                reply = client.get(path, headers=headers if path.startswith("/api/") else {})
            assert reply.status_code == 404, (method, path, reply.status_code)
            if path.startswith("/api/"):
                assert reply.get_json()["error"]["status"] == 404, path


def test_a_source_too_deep_to_compile_is_a_400_sentence(app: Flask, store: Store) -> None:
    """A bot file within the size limit whose compile() overflows the compiler's stack (60k
    terms of a sum) or its memory (200k unary minus signs) is refused with one sentence on
    the page and the API; nothing is stored."""
    create_account(store, "ada", PASSWORD, hasher=HASHER)
    token = create_token(store, 1, "up", ["read", "upload"])
    client = logged_in(app, "ada")
    sources = {
        "sums.py": "x = " + "+".join(["1"] * 60_000) + "\n",
        "minus.py": "x = " + "-" * 200_000 + "1\n",
    }
    for filename, text in sources.items():
        data = {"csrf_token": csrf_token(client, "/upload"), "source": (_file(text), filename)}
        page = client.post("/upload", data=data, content_type="multipart/form-data")
        assert page.status_code == 400, (filename, page.status_code)
        message = f"{filename} is too deeply nested or too long an expression to compile"
        assert message[1:] in page.get_data(as_text=True)  # (the page capitalises it)
        api = app.test_client().post(
            "/api/v1/bots",
            data={"source": (_file(text), filename)},
            headers=_bearer(token),
            content_type="multipart/form-data",
        )
        assert api.status_code == 400, (filename, api.status_code)
        said = api.get_json()["error"]["message"]
        assert said.startswith(message) and said.count(". ") == 0 and said.endswith("."), said
    with store.read() as session:
        assert session.scalar(select(Upload)) is None


def _file(text: str) -> Any:
    import io

    return io.BytesIO(text.encode())


def test_an_api_upload_without_a_body_is_a_400(app: Flask, store: Store) -> None:
    """POST /api/v1/bots with no form at all (schemathesis's first find) is 400, not 500."""
    reply = app.test_client().post("/api/v1/bots", headers=_organiser(store))
    assert reply.status_code == 400, reply.status_code
    assert reply.get_json()["error"]["message"] == (
        "send the bot as the multipart file field 'source'"
    )


def test_the_api_answers_a_busy_database_in_json(
    app: Flask, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A database that does not answer (locked, unreachable) is a 503 in the API's error
    shape under /api/ (with Retry-After), the HTML page elsewhere."""
    headers = _organiser(store)

    def busy(*_: object, **__: object) -> None:
        raise OperationalError("SELECT", {}, Exception("database is locked"))

    monkeypatch.setattr("web.api.bot_list", busy)
    monkeypatch.setattr("web.bots.bot_list", busy)
    reply = app.test_client().get("/api/v1/bots", headers=headers)
    assert reply.status_code == 503 and reply.mimetype == "application/json"
    error = reply.get_json()["error"]
    assert error["status"] == 503 and "database" in error["message"]
    assert int(reply.headers["Retry-After"]) > 0
    page = app.test_client().get("/bots")
    assert page.status_code == 503 and page.mimetype == "text/html"
    # any other error (a bug) too, as a deployment answers it (not propagated as in tests)
    app.config["PROPAGATE_EXCEPTIONS"] = False

    def bug(*_: object, **__: object) -> None:
        raise RuntimeError("a bug")

    monkeypatch.setattr("web.api.bot_list", bug)
    crashed = app.test_client().get("/api/v1/bots", headers=headers)
    assert crashed.status_code == 500 and crashed.get_json()["error"]["status"] == 500


def test_unsupported_methods_answer_as_the_openapi_document_says(app: Flask, store: Store) -> None:
    """TRACE (and any method an operation does not list) is 405 in the API's error shape
    with an Allow header, and the document says so (docs/api.md, "Errors")."""
    headers = _organiser(store)
    client = app.test_client()
    document = client.get("/api/v1/openapi.json").get_json()
    assert "answers 405 with an `Allow` header (TRACE too)" in document["info"]["description"]
    unsupported = [
        ("TRACE", "/api/v1/bots"),
        ("TRACE", "/api/v1/rule-sets"),
        ("PUT", "/api/v1/compares/x"),
        ("DELETE", "/api/v1/tournaments/x"),
    ]
    for method, path in unsupported:
        reply = client.open(path, method=method, headers=headers)
        assert reply.status_code == 405, (method, path, reply.status_code)
        assert reply.get_json()["error"]["status"] == 405
        assert "GET" in reply.headers["Allow"] or "POST" in reply.headers["Allow"]


def _compare_bots(store: Store) -> dict[str, str]:
    """alice (greedy v1, v2) and bob (first); alice's run token's headers."""
    alice = create_account(store, "alice", PASSWORD, hasher=HASHER)
    create_account(store, "bob", PASSWORD, hasher=HASHER)
    greedy = (REFERENCE_BOTS / "greedy.py").read_text()
    store.add_bot_version("alice", "greedy", greedy, {})
    store.add_bot_version("alice", "greedy", greedy + "\n# v2\n", {})
    store.add_bot_version("bob", "first", (REFERENCE_BOTS / "random.py").read_text(), {})
    return _bearer(create_token(store, alice.id, "run", ["read", "run"]))


def test_a_compare_of_a_version_against_itself_is_refused(app: Flask, store: Store) -> None:
    """NEW = OLD (the same version however it is spelt) is refused with one sentence on
    the page and the API, and nothing is stored; the page offers OLD's versions, by default
    the one before NEW."""
    headers = _compare_bots(store)
    client = logged_in(app, "alice")
    form = client.get("/compares/new?new=alice/greedy").get_data(as_text=True)
    old = form.split('name="old"')[1].split("</select>")[0]
    assert '<option value="alice/greedy@1" selected>' in old, old
    assert '<option value="alice/greedy@2">' in old and '<option value="bob/first@1">' in old
    same = [("alice/greedy", "alice/greedy"), ("alice/greedy", "alice/greedy@2"),
            ("alice/greedy@1", "alice/greedy@v1")]  # fmt: skip
    for new, old_spec in same:
        data = {"csrf_token": csrf_token(client, "/compares/new"), "new": new, "old": old_spec,
                "rules": "draw"}  # fmt: skip
        page = client.post("/compares/new", data=data)
        assert page.status_code == 400, (new, old_spec)
        assert "NEW and OLD are the same version" in page.get_data(as_text=True)
        body = {"new": new, "old": old_spec, "rules": "draw"}
        api = app.test_client().post("/api/v1/compares", json=body, headers=headers)
        assert api.status_code == 400, (new, old_spec, api.status_code)
        assert api.get_json()["error"]["message"].startswith("NEW and OLD are the same version")
    missing = app.test_client().post(
        "/api/v1/compares", json={"new": "alice/greedy", "old": "bob/first@7", "rules": "draw"},
        headers=headers,
    )  # fmt: skip
    assert missing.status_code == 400
    assert "no version 7 of bob/first" in missing.get_json()["error"]["message"]
    with store.read() as session:
        assert session.scalar(select(Tournament)) is None
    started = app.test_client().post(
        "/api/v1/compares",
        json={"new": "alice/greedy", "old": "alice/greedy@1", "rules": "draw"},
        headers=headers,
    )
    assert started.status_code == 202, started.get_json()


# --- findings 2, 7: the work an address can make the server do; limits keyed on what cannot
# --- be made up, counted together by every process ---------------------------------------

#: The checkout (a subprocess runs from it).
ROOT = Path(__file__).resolve().parents[2]
#: A password no checker of common passwords refuses.
STUDENT_PASSWORD = "lantern quiet river 42"


def _allowed(limit: str) -> int:
    """The first amount of a limit string: ``"60 per minute;600 per hour"`` -> 60."""
    return int(limit.split()[0])


def _log_in(client: FlaskClient, name: str, password: str, token: str) -> int:
    data = {"name": name, "password": password, "csrf_token": token}
    return client.post("/login", data=data).status_code


def _sign_up(app: Flask, name: str) -> int:
    client = app.test_client()  # each student's own browser, the class's one address
    data = {
        "name": name,
        "password": STUDENT_PASSWORD,
        "confirm": STUDENT_PASSWORD,
        "csrf_token": csrf_token(client, "/signup"),
    }
    return client.post("/signup", data=data).status_code


class SlowHasher(PasswordHasher):
    """The cheap hasher, each hash and verify taking ``seconds`` as argon2's defaults do on
    a loaded machine; it counts its calls."""

    def __init__(self, seconds: float) -> None:
        super().__init__(time_cost=1, memory_cost=8, parallelism=1)
        self.seconds = seconds
        self.calls: list[str] = []

    def hash(self, password: str | bytes, *, salt: bytes | None = None) -> str:
        self.calls.append("hash")
        time.sleep(self.seconds)
        return super().hash(password, salt=salt)

    def verify(self, hash: str | bytes, password: str | bytes) -> Literal[True]:
        self.calls.append("verify")
        time.sleep(self.seconds)
        return super().verify(hash, password)


@pytest.fixture
def slow_app(store: Store, url: str, tmp_path: Path) -> Iterator[tuple[Flask, SlowHasher]]:
    """The app with one hash at a time, each taking a second."""
    hasher = SlowHasher(1.0)
    app = make_app(url, tmp_path / "broker", ARENA_PASSWORD_HASHER=hasher, ARENA_HASH_SLOTS=1)
    yield app, hasher
    app.extensions["arena_store"].close()


def test_made_up_names_from_one_address_are_limited_whatever_the_name(app: Flask) -> None:
    client = app.test_client()
    token = csrf_token(client)
    allowed = _allowed(LOGIN_ADDRESS_LIMIT)
    statuses = [_log_in(client, f"nobody{i}", "wrong password", token) for i in range(allowed)]
    assert statuses == [401] * allowed  # each name new, so the per-name limit never counts
    refused = client.post("/login", data={"name": "x", "password": "y", "csrf_token": token})
    assert refused.status_code == 429
    assert int(refused.headers["Retry-After"]) > 0
    assert "Too many login attempts" in refused.get_data(as_text=True)


def test_sign_ups_from_one_address_are_limited(app: Flask, store: Store) -> None:
    allowed = _allowed(SIGNUP_LIMIT)
    assert [_sign_up(app, f"signer{i}") for i in range(allowed)] == [302] * allowed
    assert _sign_up(app, "one-too-many") == 429
    with store.read() as session:  # the refused one was not created
        assert session.scalar(select(User).where(User.name == "one-too-many")) is None


def test_a_classroom_behind_one_address_signs_up_and_logs_in_within_a_minute(
    app: Flask,
) -> None:
    # Passes before the fix too: it is the bound the limits above must not cross.
    started = time.monotonic()
    students = [f"student{i:02d}" for i in range(1, 31)]
    assert [_sign_up(app, name) for name in students] == [302] * 30
    logins = []
    for name in students:
        client = app.test_client()
        logins.append(_log_in(client, name, STUDENT_PASSWORD, csrf_token(client)))
    assert logins == [302] * 30
    assert time.monotonic() - started < 60


def test_concurrent_logins_beyond_the_hashing_bound_are_refused_at_once(
    slow_app: tuple[Flask, SlowHasher],
) -> None:
    app, hasher = slow_app
    attackers = [app.test_client() for _ in range(8)]
    tokens = [csrf_token(client) for client in attackers]
    together = threading.Barrier(len(attackers))
    results: list[tuple[int, float, str | None, str]] = []

    def attempt(number: int) -> None:
        data = {"name": f"made-up{number}", "password": "guess", "csrf_token": tokens[number]}
        together.wait()
        started = time.monotonic()
        reply = attackers[number].post("/login", data=data)
        results.append(
            (
                reply.status_code,
                time.monotonic() - started,
                reply.headers.get("Retry-After"),
                reply.get_data(as_text=True),
            )
        )

    threads = [threading.Thread(target=attempt, args=(n,)) for n in range(len(attackers))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    busy = [r for r in results if r[0] == 503]
    assert sorted(r[0] for r in results).count(401) >= 1
    assert len(busy) >= 5, [r[:3] for r in results]  # not queued behind the running hash
    assert all(seconds < 0.8 and retry == "1" for _, seconds, retry, _ in busy), [
        r[:3] for r in busy
    ]
    assert all("busy checking other passwords" in body for *_, body in busy)
    assert hasher.calls.count("verify") == len(results) - len(busy)


def test_an_unknown_name_costs_one_verify_within_the_same_bound(
    slow_app: tuple[Flask, SlowHasher], store: Store
) -> None:
    app, hasher = slow_app
    create_account(store, "ada", PASSWORD, hasher=HASHER)
    client = app.test_client()
    token = csrf_token(client)
    assert _log_in(client, "nobody", "wrong password", token) == 401
    hasher.calls.clear()
    assert _log_in(client, "nobody-else", "wrong password", token) == 401
    assert hasher.calls == ["verify"]  # as a wrong password costs, no more
    guard = app.config["ARENA_PASSWORD_HASHER"].guard
    with guard.slot():  # the bound is taken: unknown and known names alike are refused
        assert _log_in(client, "nobody-else", "wrong password", token) == 503
        assert _log_in(client, "ada", PASSWORD, token) == 503
    assert _log_in(client, "ada", PASSWORD, token) == 302


def test_a_flood_refused_as_busy_still_ends_in_429(store: Store, url: str, tmp_path: Path) -> None:
    # Refusals for busy do not count against the login limits (a class presses again), but
    # they count against the address's posts of password forms: a flood that would keep
    # the bound busy for everyone is cut off.
    app = make_app(
        url, tmp_path / "broker", ARENA_HASH_SLOTS=1, ARENA_PASSWORD_FORM_LIMIT="20 per minute"
    )
    try:
        client = app.test_client()
        token = csrf_token(client)
        with app.config["ARENA_PASSWORD_HASHER"].guard.slot():  # another request is hashing
            statuses = [_log_in(client, f"made-up{i}", "guess", token) for i in range(21)]
        assert statuses == [503] * 20 + [429]
        assert _sign_up(app, "newcomer") == 429  # one budget for the password forms
    finally:
        app.extensions["arena_store"].close()


def test_made_up_tokens_from_one_address_exhaust_one_bucket(
    store: Store, url: str, tmp_path: Path
) -> None:
    app = make_app(url, tmp_path / "broker", ARENA_API_LIMIT="5 per minute")
    try:
        account = create_account(store, "ada", PASSWORD, hasher=HASHER)
        ada = create_token(store, account.id, "ci", ["read"])
        client = app.test_client()
        made_up = [{"Authorization": f"Bearer da_madeup{i}"} for i in range(6)]
        statuses = [client.get("/api/v1/rule-sets", headers=h).status_code for h in made_up]
        assert statuses == [401] * 5 + [429]
        refused = client.get("/api/v1/bots", headers={"Authorization": "Bearer da_other"})
        assert refused.status_code == 429  # the whole API, not one route
        assert refused.get_json()["error"]["status"] == 429
        assert int(refused.headers["Retry-After"]) > 0
        # A verified token counts in its account's bucket, not in the address's.
        real = client.get("/api/v1/rule-sets", headers={"Authorization": f"Bearer {ada}"})
        assert real.status_code == 200
    finally:
        app.extensions["arena_store"].close()


#: One gunicorn process of ``arena serve``: the app as it creates it (its instance folder in
#: the environment), three API requests with made-up tokens; their statuses, printed.
PROCESS = """
import json, sys
from web import create_app
app = create_app(sys.argv[1], {"ARENA_API_LIMIT": "4 per minute"})
client = app.test_client()
statuses = [
    client.get("/api/v1/rule-sets", headers={"Authorization": f"Bearer da_{n}"}).status_code
    for n in range(3)
]
print(json.dumps(statuses))
app.extensions["arena_store"].close()
"""


def test_two_processes_count_in_one_bucket(store: Store, url: str, tmp_path: Path) -> None:
    env = {**os.environ, "ARENA_INSTANCE_PATH": str(tmp_path / "instance")}
    env.pop("ARENA_LIMITER_URL", None)
    env.pop("ARENA_BROKER_URL", None)

    def process() -> list[int]:
        done = subprocess.run(
            [sys.executable, "-c", PROCESS, url],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
        statuses: list[int] = json.loads(done.stdout.strip().splitlines()[-1])
        return statuses

    assert process() == [401, 401, 401]
    assert process() == [401, 429, 429]  # the second process counts on from the first's 3
