"""Issue 20's security findings, each as the attack (a request sequence) and the refusal
expected, on SQLite and PostgreSQL where it touches the store. One section per finding."""

from __future__ import annotations

import re
from typing import Any

import pytest
from flask import Flask
from sqlalchemy import select
from sqlalchemy.exc import OperationalError

from arena.service.accounts import create_account, create_token
from arena.store.db import Store
from arena.store.models import Tournament, Upload
from tests.paths import REFERENCE_BOTS
from tests.web.conftest import HASHER, PASSWORD, csrf_token, logged_in, store_bots

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
