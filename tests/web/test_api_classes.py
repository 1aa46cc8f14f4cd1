"""The classes' API (web/api_classes.py): a teacher creates a class, students join with its
code, the teacher reads the roster (real names, latest versions, sources), imports a roster
whose first-time passwords lock the API until changed, resets a password, rotates and
closes the join code, starts a class tournament; role requests; who may do what over the
API (a class is 404 to strangers and 403 to its students where only teachers act); every
mistake in the API's shape; the routes in the OpenAPI document."""

from __future__ import annotations

import io
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from arena.service.accounts import change_own_password, create_account, create_token
from arena.service.uploads import check_in_sandbox
from arena.store.db import Store
from tests.paths import REFERENCE_BOTS
from tests.submissions import submitted
from tests.web.conftest import HASHER, PASSWORD

GREEDY = (REFERENCE_BOTS / "greedy.py").read_bytes()
Headers = dict[str, str]


def _bearer(store: Store, name: str, role: str = "user") -> Headers:
    account = create_account(store, name, PASSWORD, role=role, hasher=HASHER)
    return _token(store, account.id)


def _token(store: Store, user_id: int) -> Headers:
    token = create_token(store, user_id, "t", ["read", "upload", "run"])
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture
def tokens(store: Store) -> dict[str, Headers]:
    return {
        "teacher": _bearer(store, "mrs.t", "teacher"),
        "teacher2": _bearer(store, "mr.u", "teacher"),
        "ada": _bearer(store, "ada"),
        "bob": _bearer(store, "bob"),
        "eve": _bearer(store, "eve"),
        "admin": _bearer(store, "root", "admin"),
    }


def _class(client: FlaskClient, tokens: dict[str, Headers]) -> str:
    made = client.post("/api/v1/classes", json={"name": "5b", "rule_sets": ["block"]},
                       headers=tokens["teacher"])  # fmt: skip
    assert made.status_code == 201, made.get_json()
    code: str = made.get_json()["join_code"]
    for student, real in (("ada", "Ada Lovelace"), ("bob", "")):
        joined = client.post(f"/api/v1/join/{code.lower()}", json={"real_name": real},
                             headers=tokens[student])  # fmt: skip
        assert joined.status_code == 200, joined.get_json()
        assert not joined.get_json()["teaching"] and joined.get_json()["join_code"] is None
    return code


def _upload(client: FlaskClient, headers: Headers) -> Any:
    return client.post("/api/v1/bots", data={"source": (io.BytesIO(GREEDY), "greedy.py")},
                       headers=headers, content_type="multipart/form-data")  # fmt: skip


def test_a_teacher_sees_the_roster_and_reads_the_students_sources(
    app: Flask, store: Store, tokens: dict[str, Headers]
) -> None:
    client = app.test_client()
    code = _class(client, tokens)
    made = client.get("/api/v1/classes", headers=tokens["teacher"]).get_json()
    [taught] = made["teaching"]
    assert taught["join_code"] == code and taught["join_path"] == f"/join/{code}"
    assert taught["students"] == 2
    mine = client.get("/api/v1/classes", headers=tokens["ada"]).get_json()
    assert mine["teaching"] == [] and [c["name"] for c in mine["joined"]] == ["5b"]
    upload = _upload(client, tokens["ada"]).get_json()
    check_in_sandbox(store, upload["id"], sandboxed=False)
    roster = client.get("/api/v1/classes/5b/roster", headers=tokens["teacher"])
    assert roster.status_code == 200, roster.get_json()
    rows = {r["student"]: r for r in roster.get_json()["students"]}
    assert rows["ada"]["real_name"] == "Ada Lovelace" and rows["bob"]["real_name"] is None
    assert rows["ada"]["version"] == "ada/greedy v1" and rows["ada"]["upload_status"] == "accepted"
    assert rows["bob"]["version"] is None and rows["bob"]["source"] is None
    # a bot uploaded for the site's leaderboard, never submitted to the class: not the
    # teacher's to read (issue 30's security finding), its source not even linked
    assert rows["ada"]["source"] is None and rows["ada"]["submitted"] is False
    path = "/api/v1/bots/ada/greedy/versions/1/source"
    assert client.get(path, headers=tokens["teacher"]).status_code == 404
    report = client.get(f"/api/v1/uploads/{upload['id']}", headers=tokens["teacher"])
    assert report.status_code == 404
    submitted(store, "5b", "ada", "greedy")
    roster = client.get("/api/v1/classes/5b/roster", headers=tokens["teacher"])
    rows = {r["student"]: r for r in roster.get_json()["students"]}
    assert rows["ada"]["source"] == path and rows["ada"]["submitted"] is True
    source = client.get(rows["ada"]["source"], headers=tokens["teacher"])
    assert source.status_code == 200 and source.data == GREEDY
    # another student, another class's teacher and a stranger read none of it
    for who in ("bob", "teacher2", "eve"):
        assert client.get(rows["ada"]["source"], headers=tokens[who]).status_code == 404
        assert client.get(f"/api/v1/uploads/{upload['id']}", headers=tokens[who]).status_code == 404
    assert client.get("/api/v1/classes/5b/roster", headers=tokens["bob"]).status_code == 403
    for who in ("teacher2", "eve"):
        refused = client.get("/api/v1/classes/5b/roster", headers=tokens[who])
        assert refused.status_code == 404
        assert refused.get_json() == {"error": {"status": 404, "message": "no class '5b'"}}
    assert client.get("/api/v1/classes/5b", headers=tokens["eve"]).status_code == 404
    assert client.get("/api/v1/classes/5b", headers=tokens["bob"]).status_code == 200
    board = client.get("/api/v1/classes/5b/leaderboard?reference=false", headers=tokens["bob"])
    assert board.status_code == 200 and board.get_json()["rows"] == []


def test_a_roster_import_locks_the_api_until_the_password_changes(
    app: Flask, store: Store, tokens: dict[str, Headers]
) -> None:
    from arena.service.accounts import authenticate

    client = app.test_client()
    _class(client, tokens)
    roster = {"csv": "real name,login\nAlan Turing,alan.t\nGrace Hopper,gh\n", "logins": "school"}
    made = client.post("/api/v1/classes/5b/roster", json=roster, headers=tokens["teacher"])
    assert made.status_code == 201, made.get_json()
    assert made.headers["Cache-Control"] == "no-store"  # first-time passwords: kept nowhere
    logins = made.get_json()["logins"]
    assert [(r["login"], r["real_name"]) for r in logins] == [
        ("alan.t", "Alan Turing"), ("gh", "Grace Hopper")
    ]  # fmt: skip
    again = client.post("/api/v1/classes/5b/roster", json=roster, headers=tokens["teacher"])
    assert again.status_code == 201 and again.get_json()["logins"] == []
    assert again.get_json()["flagged"] == ["Alan Turing", "Grace Hopper"]  # no ids: namesakes
    alan = authenticate(store, "alan.t", logins[0]["password"], hasher=HASHER)
    assert alan is not None and alan.must_change_password
    headers = _token(store, alan.id)
    locked = client.get("/api/v1/classes", headers=headers)
    assert locked.status_code == 403
    assert locked.get_json()["error"]["message"].startswith("change your first-time password")
    change_own_password(store, alan, logins[0]["password"], "a brand new phrase", hasher=HASHER)
    assert client.get("/api/v1/classes", headers=headers).status_code == 200
    reset = client.post("/api/v1/classes/5b/students/alan.t/password", headers=tokens["teacher"])
    assert reset.status_code == 200, reset.get_json()
    assert reset.headers["Cache-Control"] == "no-store"
    assert client.get("/api/v1/classes", headers=headers).status_code == 403
    refused = client.post("/api/v1/classes/5b/students/eve/password", headers=tokens["teacher"])
    assert refused.status_code == 404
    assert client.post("/api/v1/classes/5b/students/ada/password",
                       headers=tokens["bob"]).status_code == 403  # fmt: skip


def test_a_schools_export_is_previewed_then_imported_once(
    app: Flask, store: Store, tokens: dict[str, Headers]
) -> None:
    from tests.service.test_class_roster import NAMES, ROSTERS

    client = app.test_client()
    _class(client, tokens)  # ada joined with the real name Ada Lovelace: her line is flagged
    canvas = {"csv": (ROSTERS / "canvas.csv").read_text(encoding="utf-8-sig")}
    shown = client.post("/api/v1/classes/5b/roster/preview", json=canvas,
                        headers=tokens["teacher"])  # fmt: skip
    assert shown.status_code == 200, shown.get_json()
    preview = shown.get_json()
    assert preview["format"] == "Canvas gradebook" and preview["header_line"] == 1
    assert [c["role"] for c in preview["columns"]][:5] == ["name", "ignore", "id", "login",
                                                           "section"]  # fmt: skip
    assert [s["action"] for s in preview["students"]] == ["flagged"] + ["make"] * 7
    assert preview["skipped"] == [{"line": 2, "reason": "not a student (Points Possible)"},
                                  {"line": 11, "reason": "Canvas's test student"}]  # fmt: skip
    rows = client.get("/api/v1/classes/5b/roster", headers=tokens["teacher"]).get_json()
    assert [r["student"] for r in rows["students"]] == ["ada", "bob"]  # the preview made none
    for bad, said in (({"columns": ["name"]}, "the roster has 19 columns"),
                      ({"logins": "mine"}, "logins are pseudonym or school"),
                      ({"csv": ""}, "the roster is empty")):  # fmt: skip
        refused = client.post("/api/v1/classes/5b/roster/preview", json=canvas | bad,
                              headers=tokens["teacher"])  # fmt: skip
        assert refused.status_code == 400 and said in refused.get_json()["error"]["message"]
    denied = client.post("/api/v1/classes/5b/roster/preview", json=canvas, headers=tokens["bob"])
    assert denied.status_code in (403, 404)
    made = client.post("/api/v1/classes/5b/roster", json=canvas, headers=tokens["teacher"])
    assert made.status_code == 201
    assert [r["real_name"] for r in made.get_json()["logins"]] == NAMES[1:]
    assert made.get_json()["flagged"] == ["Ada Lovelace"]
    again = client.post("/api/v1/classes/5b/roster", json=canvas, headers=tokens["teacher"])
    assert again.status_code == 201 and again.get_json()["logins"] == []
    assert len(again.get_json()["unchanged"]) == 7
    rows = client.get("/api/v1/classes/5b/roster", headers=tokens["teacher"]).get_json()["students"]
    assert {r["real_name"]: r["school_id"] for r in rows}["Katherine Johnson"] == "S26-0002"


def test_join_codes_teachers_and_tournaments(
    app: Flask, store: Store, tokens: dict[str, Headers]
) -> None:
    client = app.test_client()
    code = _class(client, tokens)
    rotated = client.post("/api/v1/classes/5b/join-code", json={"hours": 1},
                          headers=tokens["teacher"])  # fmt: skip
    assert rotated.status_code == 200 and rotated.get_json()["join_code"] != code
    stale = client.post(f"/api/v1/join/{code}", json={}, headers=tokens["eve"])
    assert stale.status_code == 400
    assert stale.get_json()["error"]["message"].startswith("no class has the join code")
    closed = client.delete("/api/v1/classes/5b/join-code", headers=tokens["teacher"])
    assert closed.status_code == 200 and closed.get_json()["join_code"] is None
    assert client.delete("/api/v1/classes/5b/join-code", headers=tokens["ada"]).status_code == 403
    added = client.post("/api/v1/classes/5b/teachers", json={"user": "mr.u"},
                        headers=tokens["teacher"])  # fmt: skip
    assert added.status_code == 200 and added.get_json()["teachers"] == 2
    assert client.get("/api/v1/classes/5b/roster", headers=tokens["teacher2"]).status_code == 200
    not_one = client.post("/api/v1/classes/5b/teachers", json={"user": "eve"},
                          headers=tokens["teacher"])  # fmt: skip
    assert not_one.status_code == 400
    assert not_one.get_json()["error"]["message"] == (
        "eve is not a teacher: an admin gives the teacher role first."
    )
    too_few = client.post("/api/v1/classes/5b/tournaments", json={"reference": False},
                          headers=tokens["teacher"])  # fmt: skip
    assert too_few.status_code == 400
    for name in ("ada", "bob"):
        store.add_bot_version(name, "greedy", GREEDY.decode(), {})  # as an accepted upload does
        submitted(store, "5b", name, "greedy")
    started = client.post("/api/v1/classes/5b/tournaments", json={"reference": False, "games": 2},
                          headers=tokens["teacher"])  # fmt: skip
    assert started.status_code == 202, started.get_json()
    assert started.get_json()["name"].startswith("5b-")
    assert client.post("/api/v1/classes/5b/tournaments", json={},
                       headers=tokens["ada"]).status_code == 403  # fmt: skip


def test_create_mistakes_and_who_may_create(app: Flask, tokens: dict[str, Headers]) -> None:
    client = app.test_client()
    refused = client.post("/api/v1/classes", json={"name": "5b"}, headers=tokens["eve"])
    assert refused.status_code == 403
    assert refused.get_json()["error"]["message"] == ("only teachers create classes: ask an admin")
    bad = client.post("/api/v1/classes", json={"name": "x", "rule_sets": ["chess"]},
                      headers=tokens["teacher"])  # fmt: skip
    assert bad.status_code == 400
    assert bad.get_json()["error"]["message"].startswith("choose one or more rule sets among")
    assert client.post("/api/v1/classes", json={"name": "x"}).status_code == 401


def test_role_requests_over_the_api(app: Flask, tokens: dict[str, Headers]) -> None:
    client = app.test_client()
    asked = client.post("/api/v1/role-requests", json={}, headers=tokens["eve"])
    assert asked.status_code == 200 and asked.get_json() == {"status": "requested"}
    assert client.get("/api/v1/role-requests", headers=tokens["eve"]).status_code == 403
    listed = client.get("/api/v1/role-requests", headers=tokens["admin"]).get_json()
    assert [(r["name"], r["requested"]) for r in listed["requests"]] == [("eve", "teacher")]
    decided = client.post("/api/v1/role-requests/eve", json={"grant": True},
                          headers=tokens["admin"])  # fmt: skip
    assert decided.get_json() == {"name": "eve", "role": "teacher"}
    made = client.post("/api/v1/classes", json={"name": "7a"}, headers=tokens["eve"])
    assert made.status_code == 201
    assert client.post("/api/v1/role-requests/eve", json={"grant": True},
                       headers=tokens["admin"]).status_code == 404  # fmt: skip


def test_the_class_routes_are_in_the_openapi_document(app: Flask) -> None:
    document = app.test_client().get("/api/v1/openapi.json").get_json()
    paths = set(document["paths"])
    assert {
        "/api/v1/classes", "/api/v1/classes/{name}", "/api/v1/classes/{name}/roster",
        "/api/v1/classes/{name}/join-code", "/api/v1/classes/{name}/teachers",
        "/api/v1/classes/{name}/students/{student}/password",
        "/api/v1/classes/{name}/leaderboard", "/api/v1/classes/{name}/tournaments",
        "/api/v1/join/{code}", "/api/v1/role-requests", "/api/v1/role-requests/{name}",
    } <= paths  # fmt: skip


def test_the_pages_let_a_teacher_read_a_students_source_and_upload_report(
    app: Flask, store: Store, tokens: dict[str, Headers]
) -> None:
    """The pages' call sites (web/bots.py) ask the same rule as the API's: the bot's
    target has the teachers of the classes it was submitted to
    (arena.service.classes.bot_target)."""
    from tests.web.conftest import logged_in

    client = app.test_client()
    _class(client, tokens)
    upload = _upload(client, tokens["ada"]).get_json()
    check_in_sandbox(store, upload["id"], sandboxed=False)
    # a placement upload is its owner's (and the admins'): never submitted to the class,
    # its teacher reads neither its source nor its report (issue 30's security finding)
    expected = {"mrs.t": 404, "ada": 200, "root": 200, "bob": 404, "mr.u": 404, "eve": 404}
    for name, status in expected.items():
        page = logged_in(app, name)
        assert page.get("/bots/ada/greedy/v1/source").status_code == status, name
        assert page.get(f"/uploads/{upload['id']}").status_code == status, name
        bot_page = page.get("/bots/ada/greedy").get_data(as_text=True)
        assert ("/bots/ada/greedy/v1/source" in bot_page) == (status == 200), name
