"""The competitions' API (web/api_competitions.py): create, list, one competition, enter
by upload (checked as a worker would), the organiser's controls, the exports; who may do
what over the API; every error in the API's shape; the routes in the OpenAPI document."""

from __future__ import annotations

import csv
import io
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from arena.service.accounts import create_account, create_token
from arena.service.competitions import competition_view, entry_accepted
from arena.service.uploads import check_in_sandbox
from arena.store.db import Store
from tests.paths import REFERENCE_BOTS
from tests.web.conftest import HASHER, PASSWORD

GREEDY = (REFERENCE_BOTS / "greedy.py").read_bytes()
NOW = datetime.now(UTC).replace(microsecond=0)


def _bearer(store: Store, name: str, role: str = "user") -> dict[str, str]:
    account = create_account(store, name, PASSWORD, role=role, hasher=HASHER)
    token = create_token(store, account.id, "t", ["read", "upload", "run"])
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture
def tokens(store: Store) -> dict[str, dict[str, str]]:
    return {
        "olga": _bearer(store, "olga", "organiser"),
        "oscar": _bearer(store, "oscar", "organiser"),
        "alice": _bearer(store, "alice"),
        "admin": _bearer(store, "root", "admin"),
    }


def _create(client: FlaskClient, headers: dict[str, str], **changes: Any) -> Any:
    body = {"name": "cup", "deadline": (NOW + timedelta(days=7)).isoformat(),
            "opens": (NOW - timedelta(hours=1)).isoformat(), "time_zone": "Europe/Paris",
            **changes}  # fmt: skip
    return client.post("/api/v1/competitions", json=body, headers=headers)


def _enter(client: FlaskClient, headers: dict[str, str], data: bytes = GREEDY) -> Any:
    return client.post(
        "/api/v1/competitions/cup/entries",
        data={"source": (io.BytesIO(data), "greedy.py")},
        headers=headers,
        content_type="multipart/form-data",
    )


def test_an_organiser_creates_users_enter_and_everyone_reads(
    app: Flask, store: Store, tokens: dict[str, dict[str, str]]
) -> None:
    client = app.test_client()
    created = _create(client, tokens["olga"])
    assert created.status_code == 201, created.get_json()
    body = created.get_json()
    assert body["summary"]["status"] == "open" and body["can_manage"] and body["ladder"]
    listed = client.get("/api/v1/competitions", headers=tokens["alice"]).get_json()
    assert [c["name"] for c in listed["competitions"]] == ["cup"]
    entered = _enter(client, tokens["alice"])
    assert entered.status_code == 202, entered.get_json()
    entry = entered.get_json()
    assert entry["status"] == "pending" and entry["upload_id"]
    # the worker's part: check the upload, settle the entry
    check_in_sandbox(store, entry["upload_id"], sandboxed=False)
    entry_accepted(store, entry["upload_id"])
    mine = client.get("/api/v1/competitions/cup", headers=tokens["alice"]).get_json()
    assert [e["status"] for e in mine["entries"]] == ["active"] and mine["can_enter"]
    assert not mine["can_manage"]
    [row] = mine["standings"]
    assert (row["name"], row["label"], row["rating"]) == (
        "alice/greedy v1", "alice-greedy-v1", None
    )  # fmt: skip
    theirs = client.get("/api/v1/competitions/cup", headers=tokens["oscar"]).get_json()
    assert theirs["entries"] == [] and len(theirs["standings"]) == 1
    exported = client.get("/api/v1/competitions/cup/ladder.csv", headers=tokens["oscar"])
    assert exported.mimetype == "text/csv"
    rows = list(csv.DictReader(io.StringIO(exported.get_data(as_text=True))))
    assert [r["name"] for r in rows] == ["alice/greedy v1"]
    as_json = client.get("/api/v1/competitions/cup/ladder.json", headers=tokens["oscar"])
    assert as_json.get_json()["rows"][0]["version_id"] == row["version_id"]
    final = client.get("/api/v1/competitions/cup/final.csv", headers=tokens["oscar"])
    assert final.get_data(as_text=True).startswith("place,tie,name,")
    final_json = client.get("/api/v1/competitions/cup/final.json", headers=tokens["oscar"])
    assert final_json.get_json() == {"rows": []}


def test_mistakes_are_400_with_a_sentence_and_refusals_403(
    app: Flask, store: Store, tokens: dict[str, dict[str, str]]
) -> None:
    client = app.test_client()
    refused = _create(client, tokens["alice"])
    assert refused.status_code == 403
    assert refused.get_json()["error"]["message"] == (
        "only organisers and admins create competitions"
    )
    bad = _create(client, tokens["olga"], players=9)
    assert bad.status_code == 400
    assert bad.get_json()["error"]["message"] == "players must be 2 to 5, not 9."
    naive = _create(client, tokens["olga"], deadline="2099-01-01T00:00:00")
    assert "with their time zone" in naive.get_json()["error"]["message"]
    assert _create(client, tokens["olga"]).status_code == 201
    assert client.get("/api/v1/competitions/nope", headers=tokens["alice"]).status_code == 404
    closed = _enter(client, tokens["alice"], b"x = (")
    assert closed.status_code == 400 and "syntax error" in closed.get_json()["error"]["message"]
    no_file = client.post("/api/v1/competitions/cup/entries", headers=tokens["alice"])
    assert no_file.status_code == 400


def test_only_the_organiser_and_admins_use_the_controls(
    app: Flask, store: Store, tokens: dict[str, dict[str, str]]
) -> None:
    client = app.test_client()
    assert _create(client, tokens["olga"]).status_code == 201
    version = store.add_bot_version("alice", "greedy", GREEDY.decode(), {})[0].id
    from arena.service.competitions import enter_with_version
    from arena.service.permissions import OPERATOR

    enter_with_version(store, OPERATOR, "cup", version, owner="alice")
    later = (NOW + timedelta(days=9)).isoformat()
    controls = [
        ("/api/v1/competitions/cup/deadline", {"deadline": later}),
        ("/api/v1/competitions/cup/disqualify", {"version_id": version, "reason": "copied"}),
        ("/api/v1/competitions/cup/close", None),
    ]
    for path, body in controls:
        for who in ("alice", "oscar"):
            reply = client.post(path, json=body, headers=tokens[who])
            assert reply.status_code == 403, (path, who)
            assert "only its organiser or an admin" in reply.get_json()["error"]["message"]
    for path, body in controls:
        reply = client.post(path, json=body, headers=tokens["olga"])
        assert reply.status_code == 200, (path, reply.get_json())
    assert reply.get_json() == {"name": "cup", "status": "final"}
    view = competition_view(store, None, "cup")
    assert view.standings[0].reason == "copied"
    no_reason = client.post(
        "/api/v1/competitions/cup/disqualify",
        json={"version_id": version, "reason": " "},
        headers=tokens["admin"],
    )
    assert (
        no_reason.status_code == 400
        and "give the reason" in no_reason.get_json()["error"]["message"]
    )
    rerun = client.post(
        "/api/v1/competitions/cup/final/rerun", headers=tokens["admin"], json={"reason": "a bug"}
    )
    assert rerun.status_code == 400 and "no final to rerun" in rerun.get_json()["error"]["message"]
    anonymous = client.post("/api/v1/competitions/cup/close")
    assert anonymous.status_code == 401


def test_the_routes_are_in_the_openapi_document(app: Flask, store: Store) -> None:
    document = app.test_client().get("/api/v1/openapi.json").get_json()
    paths = document["paths"]
    for tail in ("", "/{name}", "/{name}/entries", "/{name}/close", "/{name}/deadline",
                 "/{name}/disqualify", "/{name}/final/rerun", "/{name}/ladder.csv",
                 "/{name}/ladder.json", "/{name}/final.csv", "/{name}/final.json"):  # fmt: skip
        assert f"/api/v1/competitions{tail}" in paths, tail
    assert set(paths["/api/v1/competitions"]) == {"get", "post"}


def test_sources_stay_private_until_a_public_competitions_deadline(
    app: Flask, store: Store, tokens: dict[str, dict[str, str]]
) -> None:
    """An entrant never reads another's private source; with sources_public, everyone does
    once the deadline passed (the API's route and the page's)."""
    from arena.service.competitions import close_now, enter_with_version
    from arena.service.permissions import OPERATOR

    client = app.test_client()
    assert _create(client, tokens["olga"], sources_public=True).status_code == 201
    assert _create(client, tokens["olga"], name="quiet").status_code == 201
    secret = store.add_bot_version("bob", "secret", GREEDY.decode(), {})[0].id
    hidden = store.add_bot_version("bob", "hidden", GREEDY.decode() + "#\n", {})[0].id
    enter_with_version(store, OPERATOR, "cup", secret, owner="bob")
    enter_with_version(store, OPERATOR, "quiet", hidden, owner="bob")
    source = "/api/v1/bots/bob/{}/versions/1/source"
    assert client.get(source.format("secret"), headers=tokens["alice"]).status_code == 404
    assert app.test_client().get("/bots/bob/secret/v1/source").status_code == 404
    close_now(store, OPERATOR, "cup")
    close_now(store, OPERATOR, "quiet")
    opened = client.get(source.format("secret"), headers=tokens["alice"])
    assert opened.status_code == 200 and opened.get_data() == GREEDY
    assert app.test_client().get("/bots/bob/secret/v1/source").status_code == 200
    assert client.get(source.format("hidden"), headers=tokens["alice"]).status_code == 404
    assert app.test_client().get("/bots/bob/hidden/v1/source").status_code == 404
