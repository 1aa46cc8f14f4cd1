"""The assignments' API (web/api_assignments.py): a teacher creates one, students submit
(a file checked as a worker would; a stored version), read their submissions, the teacher
reads the grade table; who may do what over the API, every error in the API's shape, and
the routes in the OpenAPI document."""

from __future__ import annotations

import io
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from arena.service.accounts import create_account, create_token
from arena.service.assignments import submission_accepted
from arena.service.classes import NewClass, create_class, join_class
from arena.service.uploads import check_upload
from arena.store.db import Store
from tests.paths import REFERENCE_BOTS
from tests.web.conftest import HASHER, PASSWORD

GREEDY = (REFERENCE_BOTS / "greedy.py").read_bytes()
NOW = datetime.now(UTC).replace(microsecond=0)
Headers = dict[str, str]


def _bearer(store: Store, account_id: int) -> Headers:
    token = create_token(store, account_id, "t", ["read", "upload", "run"])
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture
def tokens(store: Store) -> dict[str, Headers]:
    """Class ``c1`` taught by ``tina`` with students ``ann`` and ``bob``; ``tom`` teaches
    another class; the reference bots stored."""
    for bot in ("random", "greedy", "counter"):
        store.add_bot_version("reference", bot, (REFERENCE_BOTS / f"{bot}.py").read_text(), {})
    tina = create_account(store, "tina", PASSWORD, role="teacher", hasher=HASHER)
    tom = create_account(store, "tom", PASSWORD, role="teacher", hasher=HASHER)
    row = create_class(store, tina, NewClass(name="c1"))
    assert row.join_code is not None
    made = {"tina": _bearer(store, tina.id), "tom": _bearer(store, tom.id)}
    for name in ("ann", "bob"):
        made[name] = _bearer(store, join_class(store, HASHER, row.join_code, name, PASSWORD).id)
    return made


def _create(client: FlaskClient, headers: Headers, **changes: Any) -> Any:
    body = {"name": "hw1", "deadline": (NOW + timedelta(days=7)).isoformat(),
            "opens": (NOW - timedelta(hours=1)).isoformat(), **changes}  # fmt: skip
    return client.post("/api/v1/classes/c1/assignments", json=body, headers=headers)


def test_a_teacher_creates_students_submit_and_the_teacher_reads_the_grades(
    app: Flask, store: Store, tokens: dict[str, Headers]
) -> None:
    client = app.test_client()
    grades = [{"grade": "C", "beats": ["random"]}, {"grade": "F", "beats": []}]
    created = _create(client, tokens["tina"], references=["reference/random"], grades=grades)
    assert created.status_code == 201, created.get_json()
    body = created.get_json()
    assert body["teacher"] and body["references"] == [
        {"label": "random", "bot": "reference/random@1"}
    ]
    sent = client.post(
        "/api/v1/classes/c1/assignments/hw1/submissions",
        data={"source": (io.BytesIO(GREEDY), "greedy.py")},
        headers=tokens["ann"],
        content_type="multipart/form-data",
    )
    assert sent.status_code == 202, sent.get_json()
    submission = sent.get_json()
    assert submission["status"] == "pending" and submission["student"] == "ann"
    # the worker's part: check the upload, start the gauntlet
    check_upload(store, submission["upload_id"], sandboxed=False)
    with app.app_context():
        submission_accepted(store, submission["upload_id"])
    mine = client.get(f"/api/v1/submissions/{submission['id']}", headers=tokens["ann"])
    assert mine.status_code == 200
    seen = mine.get_json()
    assert seen["status"] == "grading" and seen["version"] == "ann/greedy@1" and seen["kept"]
    [result] = seen["references"]
    assert result["verdict"] == "running" and result["tournament"].startswith("compare-ann")
    assert client.get(f"/api/v1/submissions/{submission['id']}",
                      headers=tokens["bob"]).status_code == 404  # fmt: skip
    bobs = client.get("/api/v1/classes/c1/assignments/hw1", headers=tokens["bob"]).get_json()
    assert bobs["submissions"] == [] and not bobs["teacher"]
    answer = client.get("/api/v1/classes/c1/assignments/hw1/grades", headers=tokens["tina"])
    assert answer.status_code == 200
    table = answer.get_json()
    assert table["references"] == ["random"]
    assert [(r["student"], r["version"], r["grade"]) for r in table["rows"]] == [
        ("ann", "ann/greedy@1", None), ("bob", None, None)
    ]  # fmt: skip
    forbidden = client.get("/api/v1/classes/c1/assignments/hw1/grades", headers=tokens["ann"])
    assert forbidden.status_code == 403
    assert "teachers" in forbidden.get_json()["error"]["message"]


def test_mistakes_and_strangers_get_the_apis_errors(
    app: Flask, store: Store, tokens: dict[str, Headers]
) -> None:
    client = app.test_client()
    bad = _create(client, tokens["tina"], references=["reference/montecarlo"])
    assert bad.status_code == 400
    assert "is not a stored bot: store it with" in bad.get_json()["error"]["message"]
    assert _create(client, tokens["tom"]).status_code == 404  # not their class
    assert _create(client, tokens["ann"]).status_code == 403  # a student
    assert _create(client, {}).status_code == 401
    assert _create(client, tokens["tina"]).status_code == 201
    teacher = client.post("/api/v1/classes/c1/assignments/hw1/submissions",
                          data={"version": "greedy"}, headers=tokens["tina"],
                          content_type="multipart/form-data")  # fmt: skip
    assert teacher.status_code == 400
    assert "only the students of c1 submit" in teacher.get_json()["error"]["message"]
    neither = client.post("/api/v1/classes/c1/assignments/hw1/submissions", data={},
                          headers=tokens["ann"], content_type="multipart/form-data")  # fmt: skip
    assert neither.status_code == 400
    none = client.post("/api/v1/classes/c1/assignments/hw1/submissions",
                       data={"version": "greedy"}, headers=tokens["ann"],
                       content_type="multipart/form-data")  # fmt: skip
    assert none.status_code == 404
    assert client.get("/api/v1/submissions/99", headers=tokens["ann"]).status_code == 404
    assert (
        client.get("/api/v1/classes/c1/assignments/nope", headers=tokens["ann"]).status_code == 404
    )


def test_the_routes_are_in_the_openapi_document(app: Flask) -> None:
    paths = app.test_client().get("/api/v1/openapi.json").get_json()["paths"]
    base = "/api/v1/classes/{class_name}/assignments"
    for path in (base, f"{base}/{{name}}", f"{base}/{{name}}/submissions",
                 f"{base}/{{name}}/grades", "/api/v1/submissions/{submission_id}"):  # fmt: skip
        assert path in paths, path
