"""Bodies the API cannot read, and a token's scope for the one write every user may make
(issue 32 item 7): a multipart body without its boundary, or a form where an endpoint
takes JSON, is a 400 with a sentence on every write endpoint (the app's own list of
routes, so a new endpoint is covered as it comes); asking for the teacher role needs a
``run`` token."""

from __future__ import annotations

import re

import pytest
from flask import Flask
from sqlalchemy import select

from arena.service.accounts import create_account, create_token
from arena.store.db import Store
from arena.store.models import User
from tests.web.conftest import HASHER, PASSWORD

WRITES = {"POST", "PUT", "PATCH"}


def _headers(store: Store, name: str, role: str, scopes: list[str]) -> dict[str, str]:
    account = create_account(store, name, PASSWORD, role=role, hasher=HASHER)
    return {"Authorization": f"Bearer {create_token(store, account.id, 't', scopes)}"}


def _filled(parameter: re.Match[str]) -> str:
    """A path parameter's value: the first of an ``any(...)``'s, else 1."""
    choices = re.fullmatch(r"any\(([^,)]+).*\):\w+", parameter.group(1))
    return choices.group(1).strip() if choices else "1"


def _writes(app: Flask) -> list[tuple[str, str]]:
    """Every write of the API: (method, path), each path's parameters filled in."""
    found = []
    for rule in app.url_map.iter_rules():
        if rule.rule.startswith("/api/"):
            path = re.sub(r"<([^>]+)>", _filled, rule.rule)
            found += [(method, path) for method in sorted((rule.methods or set()) & WRITES)]
    return found


def test_every_write_refuses_a_multipart_body_without_its_boundary(
    app: Flask, store: Store
) -> None:
    admin = _headers(store, "root", "admin", ["read", "upload", "run"])
    client = app.test_client()
    writes = _writes(app)
    assert ("POST", "/api/v1/classes") in writes and ("POST", "/api/v1/bots") in writes
    assert len(writes) > 20
    body = b'--x\r\nContent-Disposition: form-data; name="name"\r\n\r\n5b\r\n--x--\r\n'
    for method, path in writes:
        answer = client.open(
            path, method=method, data=body, content_type="multipart/form-data", headers=admin
        )
        assert answer.status_code == 400, (method, path, answer.get_data(as_text=True))
        error = answer.get_json()["error"]
        assert error["status"] == 400 and "needs its boundary" in error["message"], (method, path)


@pytest.mark.parametrize(
    "path", ["/api/v1/classes", "/api/v1/compares", "/api/v1/role-requests", "/api/v1/tournaments"]
)
def test_a_form_sent_where_json_is_taken_is_refused(app: Flask, store: Store, path: str) -> None:
    headers = _headers(store, "mrs.t", "teacher", ["read", "upload", "run"])
    client = app.test_client()
    for content_type in ("multipart/form-data", "application/x-www-form-urlencoded"):
        answer = client.post(
            path, data={"name": "5b", "role": "teacher"}, content_type=content_type,
            headers=headers,
        )  # fmt: skip
        assert answer.status_code == 400, (path, answer.get_data(as_text=True))
        message = answer.get_json()["error"]["message"]
        assert message == (
            f"send this body as JSON (Content-Type: application/json), not {content_type}"
        )


def test_a_form_endpoint_still_takes_its_form(app: Flask, store: Store) -> None:
    headers = _headers(store, "ada", "user", ["read", "upload"])
    answer = app.test_client().post(
        "/api/v1/bots", data={"name": "x"}, content_type="multipart/form-data", headers=headers
    )
    assert answer.status_code == 422  # read as a form: it lacks its file
    assert answer.get_json()["error"]["message"].startswith("source: ")


def test_asking_for_the_teacher_role_needs_a_run_token(app: Flask, store: Store) -> None:
    client = app.test_client()
    reader = _headers(store, "ada", "user", ["read"])
    for body in ({"json": {"role": "teacher"}}, {}):  # with a body, and with none
        refused = client.post("/api/v1/role-requests", headers=reader, **body)
        assert refused.status_code == 403, refused.get_data(as_text=True)
        assert refused.get_json()["error"]["message"] == "this token lacks the 'run' scope"
    assert client.get("/api/v1/role-requests", headers=reader).status_code == 403  # admins'
    runner = _headers(store, "bob", "user", ["run"])
    asked = client.post("/api/v1/role-requests", headers=runner, json={"role": "teacher"})
    assert asked.status_code == 200 and asked.get_json() == {"status": "requested"}
    with store.read() as session:
        ada = session.scalars(select(User).where(User.name == "ada")).one()
        assert ada.requested_role is None  # the read token asked nothing
