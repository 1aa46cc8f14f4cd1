"""The JSON API (web/api.py): bearer tokens made on the account page, scopes, one error
shape, the rate limit, an upload from a bot author's CI; and the whole API fuzzed from its
own OpenAPI document by schemathesis: no 5xx, every status documented."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from sqlalchemy import func, select

from arena.engine.records import verify_record
from arena.service.accounts import create_account, create_token
from arena.service.uploads import check_in_sandbox
from arena.store.db import Store
from arena.store.models import ApiToken, Upload, User
from tests.conftest import soak
from tests.paths import REFERENCE_BOTS, ZOO
from tests.web.conftest import (
    HASHER,
    PASSWORD,
    RULES,
    csrf_token,
    logged_in,
    make_app,
    play_pending,
    played_spring,
    store_bots,
)

GREEDY = (REFERENCE_BOTS / "greedy.py").read_bytes()


@pytest.fixture
def app(app: Flask, store: Store) -> Flask:
    """tests/web/conftest.py's app with the account ada."""
    create_account(store, "ada", PASSWORD, hasher=HASHER)
    return app


def _account_id(store: Store, name: str) -> int:
    with store.read() as session:
        return session.scalars(select(User.id).where(User.name == name)).one()


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def test_a_token_is_made_on_the_account_page_shown_once_and_revocable(
    app: Flask, store: Store
) -> None:
    client = logged_in(app, "ada")
    csrf = csrf_token(client, "/account/tokens")
    made = client.post(
        "/account/tokens",
        data={"name": "ci", "scopes": ["read", "upload"], "csrf_token": csrf},
    ).get_data(as_text=True)
    shown = re.search(r'<pre class="token">(da_[\w-]+)</pre>', made)
    assert shown, made[-2000:]
    token = shown.group(1)
    with store.read() as session:
        stored = session.scalars(select(ApiToken)).one()
        assert token not in (stored.sha256, stored.prefix) and stored.prefix == token[:10]
    assert token not in client.get("/account/tokens").get_data(as_text=True)  # once only
    reply = app.test_client().get("/api/v1/bots", headers=_bearer(token))
    assert reply.status_code == 200
    assert "never" not in client.get("/account/tokens").get_data(as_text=True)  # last used
    revoke = client.post(f"/account/tokens/{stored.id}/revoke", data={"csrf_token": csrf})
    assert revoke.status_code == 302
    reply = app.test_client().get("/api/v1/bots", headers=_bearer(token))
    assert reply.status_code == 401


def test_without_a_token_or_with_a_session_only_it_is_401(app: Flask) -> None:
    anonymous = app.test_client().get("/api/v1/rule-sets")
    assert anonymous.status_code == 401
    assert anonymous.get_json()["error"]["status"] == 401
    assert anonymous.headers["WWW-Authenticate"].startswith("Bearer")
    client = logged_in(app, "ada")  # the session's cookie is not a token
    assert client.get("/api/v1/rule-sets").status_code == 401
    garbage = app.test_client().get("/api/v1/rule-sets", headers=_bearer("da_nonsense"))
    assert garbage.status_code == 401


def test_scopes_and_the_error_shape(app: Flask, store: Store) -> None:
    reader = create_token(store, _account_id(store, "ada"), "r", ["read"])
    client = app.test_client()
    upload = client.post(
        "/api/v1/bots",
        data={"source": (io.BytesIO(GREEDY), "greedy.py")},
        headers=_bearer(reader),
        content_type="multipart/form-data",
    )
    assert upload.status_code == 403
    assert upload.get_json() == {
        "error": {"status": 403, "message": "this token lacks the 'upload' scope"}
    }
    missing = client.get("/api/v1/leaderboards/nosuch", headers=_bearer(reader))
    assert missing.status_code == 404 and "nosuch" in missing.get_json()["error"]["message"]
    bad = client.get("/api/v1/bots?limit=500", headers=_bearer(reader))
    assert bad.status_code == 422
    assert (
        bad.get_json()["error"]["status"] == 422 and "limit" in bad.get_json()["error"]["message"]
    )
    nowhere = client.get("/api/v1/nowhere", headers=_bearer(reader))
    assert nowhere.status_code == 404 and nowhere.get_json()["error"]["status"] == 404


def test_a_bot_authors_ci_uploads_a_version_and_follows_its_check(app: Flask, store: Store) -> None:
    token = create_token(store, _account_id(store, "ada"), "ci", ["read", "upload"])
    client = app.test_client()
    reply = client.post(
        "/api/v1/bots",
        data={"source": (io.BytesIO(GREEDY), "greedy.py"), "name": "mine"},
        headers=_bearer(token),
        content_type="multipart/form-data",
    )
    assert reply.status_code == 202, reply.get_json()
    body = reply.get_json()
    assert body["status"] == "pending" and body["bot"] == "mine"
    assert check_in_sandbox(store, body["id"]) == "accepted"  # as the worker does
    status = client.get(f"/api/v1/uploads/{body['id']}", headers=_bearer(token)).get_json()
    assert status["status"] == "accepted" and status["version"] == 1
    bot = client.get("/api/v1/bots/ada/mine", headers=_bearer(token)).get_json()
    assert [v["version"] for v in bot["versions"]] == [1]
    broken = client.post(
        "/api/v1/bots",
        data={"source": (io.BytesIO(b"def play(o:\n"), "broken.py")},
        headers=_bearer(token),
        content_type="multipart/form-data",
    )
    assert (
        broken.status_code == 400
        and "syntax error on line 1" in broken.get_json()["error"]["message"]
    )
    other = create_account(store, "bob", PASSWORD, hasher=HASHER)
    bobs = create_token(store, other.id, "b", ["read"])
    assert client.get(f"/api/v1/uploads/{body['id']}", headers=_bearer(bobs)).status_code == 404


def test_an_idempotency_key_makes_a_retried_upload_one_upload(
    app: Flask, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A request retried with the same ``Idempotency-Key`` answers the first upload (and
    says so in ``Idempotent-Replayed``) even past the repeat window (none here); another
    key makes another upload; a malformed key is a JSON error."""
    from arena.service import intake

    monkeypatch.setattr(intake, "REPEAT_WINDOW_SECONDS", 0.0)  # only the key repeats
    token = create_token(store, _account_id(store, "ada"), "ci", ["read", "upload"])
    client = app.test_client()

    def send(key: str | None) -> Any:
        headers = _bearer(token) | ({} if key is None else {"Idempotency-Key": key})
        return client.post(
            "/api/v1/bots", data={"source": (io.BytesIO(GREEDY), "greedy.py")},
            headers=headers, content_type="multipart/form-data",
        )  # fmt: skip

    first, again = send("retry-1"), send("retry-1")
    assert (first.status_code, again.status_code) == (202, 202)
    assert again.get_json() == first.get_json()
    assert "Idempotent-Replayed" not in first.headers
    assert again.headers["Idempotent-Replayed"] == "true"
    other = send("retry-2")
    assert other.status_code == 202 and other.get_json()["id"] != first.get_json()["id"]
    assert "Idempotent-Replayed" not in send(None).headers  # no key, no window: another
    bad = send("x" * 101)
    assert bad.status_code == 400
    assert "an idempotency key is 1 to 100 printable ASCII" in bad.get_json()["error"]["message"]
    with store.read() as session:
        assert session.scalar(select(func.count()).select_from(Upload)) == 3


@pytest.mark.seed(build=played_spring)
def test_leaderboards_and_tournaments_over_the_api(app: Flask, store: Store) -> None:
    from arena.service.results import refit_ratings

    refit_ratings(store, RULES)
    token = create_token(store, _account_id(store, "ada"), "r", ["read"])
    client = app.test_client()
    names = client.get("/api/v1/rule-sets", headers=_bearer(token)).get_json()["rule_sets"]
    assert names == [RULES.name]
    board = client.get(
        f"/api/v1/leaderboards/{RULES.name}?versions=all", headers=_bearer(token)
    ).get_json()
    assert len(board["rows"]) == 4
    assert all(r["low"] <= r["rating"] <= r["high"] for r in board["rows"])
    listed = client.get("/api/v1/tournaments?limit=1", headers=_bearer(token)).get_json()
    assert listed["total"] == 1 and listed["tournaments"][0]["name"] == "spring"
    page = client.get("/api/v1/bots?limit=2&offset=1", headers=_bearer(token)).get_json()
    assert page["total"] == 3 and len(page["bots"]) == 2


def test_the_rate_limit_answers_429_with_retry_after(
    store: Store, url: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    app = make_app(url, tmp_path_factory.mktemp("broker"), ARENA_API_LIMIT="3 per minute")
    try:
        create_account(store, "ada", PASSWORD, hasher=HASHER)
        token = create_token(store, _account_id(store, "ada"), "r", ["read"])
        client = app.test_client()
        statuses = [
            client.get("/api/v1/rule-sets", headers=_bearer(token)).status_code for _ in range(3)
        ]
        assert statuses == [200, 200, 200]
        limited = client.get("/api/v1/rule-sets", headers=_bearer(token))
        assert limited.status_code == 429
        assert limited.get_json()["error"]["status"] == 429
        assert int(limited.headers["Retry-After"]) > 0
    finally:
        app.extensions["arena_store"].close()


def test_the_documents_are_served_without_a_cdn(app: Flask) -> None:
    client = app.test_client()
    document = client.get("/api/v1/openapi.json").get_json()
    assert document["openapi"].startswith("3.1")
    assert "/api/v1/bots" in document["paths"] and "/login" not in document["paths"]
    assert document["components"]["securitySchemes"]["bearer"]["scheme"] == "bearer"
    page = client.get("/api/v1/docs").get_data(as_text=True)
    assert "/api/v1/leaderboards/{rules}" in page
    assert "cdn" not in page.lower() and '<script src="http' not in page


# --- fuzzing ---------------------------------------------------------------------------------


def test_the_api_fuzzed_from_its_own_document(
    store: Store, url: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Every operation of the OpenAPI document, called with what schemathesis generates from
    it: no request makes the API fail (no 5xx), and every answer is one the document lists,
    in its documented shape and content type (all of schemathesis's checks but one: see
    below). Schemathesis and hypothesis are imported here, and their pytest plugins are off
    (pyproject.toml): the other tests do not pay for loading them."""
    import schemathesis
    from hypothesis import HealthCheck, given, settings
    from schemathesis.core.result import Ok
    from schemathesis.specs.openapi.checks import positive_data_acceptance

    app = make_app(url, tmp_path_factory.mktemp("broker"), ARENA_API_LIMIT="100000 per hour")
    try:
        store_bots(store)
        # an organiser: creating and cancelling tournaments are fuzzed too, not only refused
        owner = create_account(store, "olga", PASSWORD, role="organiser", hasher=HASHER)
        token = create_token(store, owner.id, "fuzz", ["read", "upload", "run"])
        schema = schemathesis.openapi.from_wsgi("/api/v1/openapi.json", app)
        # Strings of any character but a lone surrogate: what schemathesis's default codec
        # (utf-8) allows, without hypothesis working out that codec's alphabet by encoding
        # every code point (1.1 CPU s the first time on a machine: a fresh clone's run).
        schema.config.generation.codec = None
        operations = [r.ok() for r in schema.get_all_operations() if isinstance(r, Ok)]
        assert len(operations) >= 15
        for operation in operations:

            @given(case=operation.as_strategy())
            @settings(
                # 6 examples an operation by default (9 CPU s for the test, 13.5 at 12),
                # 60 with ARENA_TEST_FULL=1 (./run test --full)
                max_examples=soak(6, 60),
                deadline=None,
                database=None,
                suppress_health_check=list(HealthCheck),
            )
            def check(case: schemathesis.Case[Any]) -> None:
                # A bot's file is judged by its content (a .py name, UTF-8, Python): a
                # schema-valid upload may rightly be refused (400, documented).
                case.call_and_validate(
                    headers=_bearer(token), excluded_checks=[positive_data_acceptance]
                )

            check()
    finally:
        app.extensions["arena_store"].close()


@pytest.mark.seed(build=played_spring)
def test_tournaments_matches_and_games_over_the_api(app: Flask, store: Store) -> None:
    olga = create_account(store, "olga", PASSWORD, role="organiser", hasher=HASHER)
    runner = _bearer(create_token(store, olga.id, "ci", ["read", "run"]))
    reader = _bearer(create_token(store, _account_id(store, "ada"), "r", ["read"]))
    user_runner = _bearer(create_token(store, _account_id(store, "ada"), "x", ["run", "read"]))
    client = app.test_client()
    spring = client.get("/api/v1/tournaments/spring", headers=reader).get_json()
    assert spring["status"] == "done" and spring["progress"]["done"] == 12
    assert [row["rank"] for row in spring["standings"]] == [1, 2, 3, 4]
    assert len(spring["crosstable"]["entrants"]) == 4 and spring["faults"] == []
    matches = client.get("/api/v1/tournaments/spring/matches?limit=5", headers=reader).get_json()
    assert matches["total"] == 12 and len(matches["matches"]) == 5
    assert all(m["status"] == "done" and len(m["seats"]) == 2 for m in matches["matches"])
    games = client.get(
        "/api/v1/games?tournament=spring&bot=alice/greedy&limit=100", headers=reader
    ).get_json()
    assert len(games["games"]) == 10 and not games["more"]
    assert {g["outcome"] for g in games["games"]} <= {"win", "draw", "loss"}
    # pages by cursor: "older than the last game of the page before"; offset is refused
    first = client.get("/api/v1/games?tournament=spring&limit=7&offset=0", headers=reader)
    first = first.get_json()
    rest = client.get(
        f"/api/v1/games?tournament=spring&limit=100&before={first['next']}", headers=reader
    ).get_json()
    assert first["more"] and not rest["more"] and rest["next"] is None
    keys = [g["record"] for g in first["games"] + rest["games"]]
    assert len(keys) == len(set(keys)) == 12  # one game a match here
    for query, message in (
        ("offset=50", "offset is gone from the game list: ask for the next page with before="),
        ("before=12", "before must be a game as MATCH-INDEX (e.g. 12-3), not '12'"),
        ("before=99999-0", "no finished match 99999"),
        ("before=2147483648-0", "before must be a game as MATCH-INDEX"),
    ):
        refused = client.get(f"/api/v1/games?{query}", headers=reader)
        assert refused.status_code == 400, query
        assert refused.get_json()["error"]["message"].startswith(message), query
    record = client.get(games["games"][0]["record"], headers=reader)
    assert record.status_code == 200
    verify_record(record.get_json())
    bad = client.get("/api/v1/games?result=win", headers=reader)
    assert bad.status_code == 400
    assert bad.get_json()["error"]["message"] == "a result filter needs a bot (bot=OWNER/NAME)"
    assert client.get("/api/v1/tournaments/nope", headers=reader).status_code == 404
    # creating: organisers, with a run token
    body = {"name": "api-made", "rules": "block", "bots": ["alice/greedy", "bob/counter"],
            "games": 2}  # fmt: skip
    assert client.post("/api/v1/tournaments", json=body, headers=reader).status_code == 403
    refused = client.post("/api/v1/tournaments", json=body, headers=user_runner)
    assert refused.status_code == 403
    assert "only organisers" in refused.get_json()["error"]["message"]
    one = client.post("/api/v1/tournaments", json={**body, "bots": ["alice/greedy", "x/y"]},
                      headers=runner)  # fmt: skip
    assert one.status_code == 400 and "no bot 'y' of 'x'" in one.get_json()["error"]["message"]
    made = client.post("/api/v1/tournaments", json=body, headers=runner)
    assert made.status_code == 201, made.get_json()
    assert made.get_json()["progress"]["pending"] == 2 and made.get_json()["owner"] == "olga"
    custom = {"name": "x", "base": "block", "target": 50}
    ruled = client.post(
        "/api/v1/tournaments", json={**body, "name": "custom", "rule_set": custom}, headers=runner
    )
    assert ruled.status_code == 201 and ruled.get_json()["rules"] == "x"
    bad_rules = client.post(
        "/api/v1/tournaments", json={**body, "name": "c2", "rule_set": {"name": "x", "base": 5}},
        headers=runner,
    )  # fmt: skip
    assert bad_rules.status_code == 400
    assert bad_rules.get_json()["error"]["message"] == (
        "rule_set: base must be a preset's name (block, draw, muggins, giant, block-and-draw, "
        "wooden, three-minute)"
    )
    again = client.post("/api/v1/tournaments", json=body, headers=runner)
    assert again.status_code == 400 and "exists" in again.get_json()["error"]["message"]
    # cancelling: its creator (or an admin)
    assert (
        client.post("/api/v1/tournaments/api-made/cancel", headers=user_runner).status_code == 403
    )
    cancelled = client.post("/api/v1/tournaments/api-made/cancel", headers=runner)
    assert cancelled.get_json() == {"name": "api-made", "voided": 2}
    assert client.post("/api/v1/tournaments/nope/cancel", headers=runner).status_code == 404


def test_a_bot_authors_ci_starts_a_compare_and_polls_its_verdict(
    app: Flask, store: Store, tmp_path: Path
) -> None:
    from tests.paths import ZOO

    ada = _account_id(store, "ada")
    store.add_bot_version("ada", "greedy", GREEDY.decode(), {})
    store.add_bot_version("bob", "first", (ZOO / "first.py").read_text(), {})
    token = _bearer(create_token(store, ada, "ci", ["read", "run"]))
    client = app.test_client()
    body = {"new": "ada/greedy", "old": "bob/first", "rules": "draw", "elo1": 25}
    started = client.post("/api/v1/compares", json=body, headers=token)
    assert started.status_code == 202, started.get_json()
    compare = started.get_json()
    assert compare["verdict"] == "running" and compare["elo1"] == 25
    assert compare["url"] == f"/compares/{compare['name']}"
    theirs = client.post("/api/v1/compares", json={**body, "new": "bob/first"}, headers=token)
    assert theirs.status_code == 403
    wrong = client.post("/api/v1/compares", json={**body, "elo1": -5}, headers=token)
    assert wrong.status_code == 400
    assert "elo0 must be below elo1" in wrong.get_json()["error"]["message"]
    play_pending(store, tmp_path / "cache")
    done = client.get(f"/api/v1/compares/{compare['name']}", headers=token).get_json()
    assert done["verdict"] == "passed" and done["statistic"] == "margin"
    assert done["llr"] >= done["upper"] or done["fast_llr"] >= done["fast_upper"]
    assert done["elo"] > 0 and done["los"] > 0.99 and done["progress"]["void"] > 0
    assert done["teams"] is False
    game = client.post("/api/v1/compares", json={**body, "statistic": "game"}, headers=token)
    assert game.status_code == 202 and game.get_json()["statistic"] == "game"
    assert game.get_json()["fast_llr"] is None
    bad = client.post("/api/v1/compares", json={**body, "statistic": "wins"}, headers=token)
    assert bad.status_code == 422 and "statistic" in bad.get_data(as_text=True)
    broken = client.post(
        "/api/v1/compares", data='{"new": "ada/x",', content_type="application/json",
        headers=token,
    )  # fmt: skip
    message = broken.get_json()["error"]["message"]
    assert broken.status_code == 422 and message.startswith("the body is not valid JSON: ")
    assert "Field required" not in message
    assert client.get("/api/v1/compares/nope", headers=token).status_code == 404


def test_a_compare_of_one_source_is_refused_unless_asked_for(
    app: Flask, store: Store, tmp_path: Path
) -> None:
    """ada's greedy against bob's copy of it: a bot against itself (issue 29)."""
    ada = _account_id(store, "ada")
    store.add_bot_version("ada", "greedy", GREEDY.decode(), {})
    store.add_bot_version("bob", "copy", GREEDY.decode(), {})
    token = _bearer(create_token(store, ada, "ci", ["read", "run"]))
    client = app.test_client()
    # 8 games: four deal groups, each at exactly 0 below (32 proved no more, at 4x the games)
    body = {"new": "ada/greedy", "old": "bob/copy", "rules": "draw", "max_games": 8}
    refused = client.post("/api/v1/compares", json=body, headers=token)
    assert refused.status_code == 400
    message = refused.get_json()["error"]["message"]
    assert message.startswith("NEW ada/greedy and OLD bob/copy have the same source (sha256 ")
    assert "allow_same_source" in message
    allowed = client.post(
        "/api/v1/compares", json={**body, "allow_same_source": True}, headers=token
    )
    assert allowed.status_code == 202, allowed.get_json()
    assert allowed.get_json()["problem"] is None
    play_pending(store, tmp_path / "cache")
    name = allowed.get_json()["name"]
    done = client.get(f"/api/v1/compares/{name}", headers=token).get_json()
    assert done["elo"] == done["low"] == done["high"] == 0.0  # every deal group at exactly 0
    assert done["verdict"] in ("failed", "undecided") and done["problem"] is None


def test_a_source_is_its_owners_until_made_public(app: Flask, store: Store) -> None:
    store.add_bot_version("ada", "greedy", GREEDY.decode(), {})
    bob = create_account(store, "bob", PASSWORD, hasher=HASHER)
    ada_token = _bearer(create_token(store, _account_id(store, "ada"), "r", ["read"]))
    bob_token = _bearer(create_token(store, bob.id, "r", ["read"]))
    client = app.test_client()
    path = "/api/v1/bots/ada/greedy/versions/1/source"
    mine = client.get(path, headers=ada_token)
    assert mine.status_code == 200 and mine.get_data() == GREEDY
    assert mine.mimetype == "text/x-python"
    hidden = client.get(path, headers=bob_token)
    assert hidden.status_code == 404
    assert hidden.get_json()["error"]["message"] == ("no source of ada/greedy version 1 for you")
    assert client.get(path.replace("/1/", "/2/"), headers=ada_token).status_code == 404
    from arena.service.bot_views import bot_view
    from arena.service.bots import set_source_public

    view = bot_view(store, "ada", "greedy")
    assert view is not None
    set_source_public(store, view.id, True)
    assert client.get(path, headers=bob_token).get_data() == GREEDY
    assert 'filename="greedy-v1.py"' in mine.headers["Content-Disposition"]


def test_a_source_is_served_as_its_runtimes_file(app: Flask, store: Store) -> None:
    """Each runtime's source has its own media type and suffix (not text/x-python for all);
    the page shows it as text, named with its suffix."""
    token = _bearer(create_token(store, _account_id(store, "ada"), "r", ["read"]))
    client = app.test_client()
    for runtime, media_type, suffix in (
        ("python-numpy", "text/x-python", ".py"),
        ("javascript", "text/javascript", ".js"),
        ("cpp", "text/x-c++src", ".cpp"),
        ("c", "text/x-csrc", ".c"),
        ("go", "text/x-go", ".go"),
        ("rust", "text/x-rust", ".rs"),
        ("java", "text/x-java", ".java"),
    ):
        store.add_bot_version("ada", runtime, f"// a {runtime} bot", {}, runtime=runtime)
        served = client.get(f"/api/v1/bots/ada/{runtime}/versions/1/source", headers=token)
        assert served.status_code == 200 and served.mimetype == media_type, runtime
        assert served.get_data(as_text=True) == f"// a {runtime} bot"
        assert f'filename="{runtime}-v1{suffix}"' in served.headers["Content-Disposition"]
    page = logged_in(app, "ada").get("/bots/ada/java/v1/source")
    assert page.mimetype == "text/plain"
    assert 'filename="java-v1.java"' in page.headers["Content-Disposition"]


def test_with_the_broker_down_the_api_starts_work_and_writes_no_session(
    app: Flask, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The work is stored (the sweep sends it later) and the answer is the usual one; no
    flash message lands in a session nobody reads (issue 19)."""
    from arena.service import broker

    def down(*_: object) -> None:
        raise OSError("connection refused")

    monkeypatch.setattr(broker, "send_matches", down)
    monkeypatch.setattr(broker, "send_uploads", down)
    ada = _account_id(store, "ada")
    store.add_bot_version("ada", "greedy", GREEDY.decode(), {})
    store_bots(store)
    token = _bearer(create_token(store, ada, "ci", ["read", "run", "upload"]))
    client = app.test_client()
    body = {"new": "ada/greedy", "old": "bob/counter", "rules": "draw"}
    started = client.post("/api/v1/compares", json=body, headers=token)
    assert started.status_code == 202, started.get_json()
    assert started.get_json()["progress"]["pending"] > 0
    source = {"source": (io.BytesIO(GREEDY + b"\n# v9\n"), "greedy.py")}
    uploaded = client.post("/api/v1/bots", data=source, headers=token)
    assert uploaded.status_code == 202 and uploaded.get_json()["status"] == "pending"
    for answer in (started, uploaded):
        assert "Set-Cookie" not in answer.headers
    with client.session_transaction() as session:
        assert "_flashes" not in session


def test_an_upload_names_its_runtime_and_a_wrong_one_is_a_json_error(
    app: Flask, store: Store
) -> None:
    """``runtime`` (python, python-numpy, javascript; default by the suffix): stored with
    the upload and shown in its answers; an unknown runtime or a file not of it is a 400
    with a sentence, and stores nothing."""
    token = create_token(store, _account_id(store, "ada"), "ci", ["read", "upload"])
    client = app.test_client()

    def send(name: str, data: bytes, runtime: str | None) -> Any:
        form: dict[str, Any] = {"source": (io.BytesIO(data), name)}
        if runtime is not None:
            form["runtime"] = runtime
        return client.post(
            "/api/v1/bots", data=form, headers=_bearer(token), content_type="multipart/form-data"
        )

    numpy = send("np.py", b"import numpy\n\ndef play(o):\n    return o.legal_moves[0]\n",
                 "python-numpy")  # fmt: skip
    assert numpy.status_code == 202 and numpy.get_json()["runtime"] == "python-numpy"
    js = send("first.js", (ZOO / "first.js").read_bytes(), None)
    assert js.status_code == 202 and js.get_json()["runtime"] == "javascript"
    status = client.get(f"/api/v1/uploads/{js.get_json()['id']}", headers=_bearer(token))
    assert status.get_json()["runtime"] == "javascript"
    assert check_in_sandbox(store, js.get_json()["id"]) == "accepted"  # as the worker does
    bot = client.get("/api/v1/bots/ada/first", headers=_bearer(token)).get_json()
    assert [v["runtime"] for v in bot["versions"]] == ["javascript"]
    for name, runtime, message in (
        (
            "np.py",
            "cobol",
            "no runtime 'cobol': the runtimes are python, python-numpy, javascript, cpp, c, go, "
            "rust, java.",
        ),
        ("np.js", "python-numpy", "np.js is not a .py file: a python-numpy bot is one .py file."),
        ("np.txt", None, "np.txt is not a .py, .js, .cpp, .c, .go, .rs or .java file"),
    ):
        refused = send(name, b"x = 1\n", runtime)
        assert refused.status_code == 400, refused.get_json()
        assert message in refused.get_json()["error"]["message"]
    with store.read() as session:
        assert session.scalar(select(func.count()).select_from(Upload)) == 2


def test_hostile_runtime_fields_are_json_sentences_and_store_nothing(
    app: Flask, store: Store
) -> None:
    """Whatever ``runtime`` holds (wrong case, huge, twice, a name of a suffix) or the file
    is called (``x.numpy.py``, ``x.py.js``, no suffix), the answer is JSON: a 400 with a
    sentence, or a 202 under the runtime the file's suffix or the field names."""
    token = create_token(store, _account_id(store, "ada"), "ci", ["read", "upload"])
    client = app.test_client()

    def send(name: str, runtime: Any) -> Any:
        form: dict[str, Any] = {"source": (io.BytesIO(b"def play(o):\n    pass\n"), name)}
        if runtime is not None:
            form["runtime"] = runtime
        return client.post(
            "/api/v1/bots", data=form, headers=_bearer(token), content_type="multipart/form-data"
        )

    for name, runtime, message in (
        ("a.py", "Python", "no runtime 'Python': the runtimes are python, python-numpy"),
        ("a.py", "x" * 5000, "runtime"),
        ("a.py", ".py", "no runtime '.py'"),
        ("a.py", "javascript", "a.py is not a .js file: a javascript bot is one .js file."),
        ("a", None, "a is not a .py, .js, .cpp, .c, .go, .rs or .java file"),
        ("a.py.js", "python", "a.py.js is not a .py file: a python bot is one .py file."),
    ):
        refused = send(name, runtime)
        assert refused.status_code in (400, 422), (name, runtime, refused.get_data())
        assert message in json.dumps(refused.get_json()), (name, refused.get_json())
    with store.read() as session:
        assert session.scalar(select(func.count()).select_from(Upload)) == 0
    twice = send("b.py", ["javascript", "python"])  # the field given twice: no string
    assert twice.status_code == 422
    assert twice.get_json()["error"]["message"] == "runtime: Input should be a valid string"
    numpy_name = send("c.numpy.py", None)  # a name is no runtime: python by its suffix
    assert numpy_name.status_code == 202 and numpy_name.get_json()["runtime"] == "python"
