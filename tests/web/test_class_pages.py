"""The class pages (web/classes.py, web/joins.py): every route for every role (anonymous, a
stranger, a student, another class's student, the teacher, another teacher, an admin), on
both databases: who sees the roster and the real names (the class's teachers and admins
only), joining by code (a visitor, a logged-in user), the roster import's logins shown once,
a teacher's password reset and the first-time password's redirect, the join code's QR code
and rotation, the class leaderboard and tournament, the bots list and tournament form
filtered to a class, and the teacher role asked for and decided."""

from __future__ import annotations

import csv
import html
import io
import re
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import select
from werkzeug.test import TestResponse

from arena.service.accounts import Account, authenticate, create_account
from arena.service.classes import NewClass, create_class, find_class, join_class
from arena.store.db import Store
from arena.store.models import Tournament, User
from tests.paths import REFERENCE_BOTS
from tests.web.conftest import HASHER, PASSWORD, csrf_token, logged_in
from web.classes import logins_csv, qr_svg

GREEDY = (REFERENCE_BOTS / "greedy.py").read_text()
RANDOM = (REFERENCE_BOTS / "random.py").read_text()

#: The roles of the matrix: who is logged in (None: anonymous).
ROLES: dict[str, str | None] = {
    "anonymous": None,
    "stranger": "stan",
    "student": "sam",
    "other student": "olly",
    "teacher": "tess",
    "other teacher": "toby",
    "admin": "root",
}


def account_named(store: Store, name: str) -> Account:
    found = authenticate(store, name, PASSWORD, hasher=HASHER)
    assert found is not None
    return found


def build(store: Store, directory: Path) -> dict[str, str]:
    """Teachers tess (maths) and toby (art), admin root, organiser olga, user stan; sam a
    student of maths, olly of art (both joined by code, with real names); their bots and
    the reference bot random. The join codes, by class."""
    del directory
    for name, role in (("tess", "teacher"), ("toby", "teacher"), ("root", "admin"),
                       ("olga", "organiser"), ("stan", "user")):  # fmt: skip
        create_account(store, name, PASSWORD, role=role, hasher=HASHER)
    tess, toby = account_named(store, "tess"), account_named(store, "toby")
    maths = create_class(
        store,
        tess,
        NewClass(name="maths", description="Dominoes in maths.", rule_sets=("block", "draw")),
    )
    art = create_class(store, toby, NewClass(name="art"))
    assert maths.join_code and art.join_code
    join_class(store, HASHER, maths.join_code, "sam", PASSWORD, "Samantha Realname")
    join_class(store, HASHER, art.join_code, "olly", PASSWORD, "Oliver Hiddenname")
    store.add_bot_version("sam", "greedy", GREEDY, {})
    store.add_bot_version("olly", "rando", RANDOM, {})
    store.add_bot_version("reference", "random", RANDOM, {})
    return {"maths": maths.join_code, "art": art.join_code}


pytestmark = pytest.mark.seed(build=build)


@pytest.fixture
def codes(seeded: object) -> dict[str, str]:
    assert isinstance(seeded, dict)
    return seeded


def _clients(app: Flask) -> dict[str, FlaskClient]:
    return {role: logged_in(app, name) for role, name in ROLES.items()}


def _post(client: FlaskClient, path: str, page: str = "/login", **fields: Any) -> TestResponse:
    return client.post(path, data={**fields, "csrf_token": csrf_token(client, page)})


def _statuses(clients: dict[str, FlaskClient], path: str) -> dict[str, int]:
    return {role: client.get(path).status_code for role, client in clients.items()}


def _to_login(reply: TestResponse) -> bool:
    return reply.status_code == 302 and "/login" in reply.headers["Location"]


# --- pure parts -------------------------------------------------------------------------------


def test_the_qr_code_is_inline_svg_without_a_style() -> None:
    svg = str(qr_svg("http://127.0.0.1/join/ABCD2345", "QR code of <the link>"))
    assert svg.startswith("<svg") and 'class="qr"' in svg and "viewBox" in svg
    assert "style" not in svg and "<?xml" not in svg
    assert "<title>QR code of &lt;the link&gt;</title>" in svg


def test_the_logins_csv_has_a_header_and_quotes_what_needs_it() -> None:
    from types import SimpleNamespace

    rows = [SimpleNamespace(real_name="Lovelace, Ada", login="ada.l", password="a b c")]
    text = logins_csv(rows)
    assert list(csv.reader(io.StringIO(text))) == [
        ["real_name", "login", "password"],
        ["Lovelace, Ada", "ada.l", "a b c"],
    ]


# --- who sees what ----------------------------------------------------------------------------


def test_the_class_list_shows_each_their_classes(app: Flask, codes: dict[str, str]) -> None:
    clients = _clients(app)
    assert _to_login(clients["anonymous"].get("/classes"))
    pages = {
        role: c.get("/classes").get_data(as_text=True)
        for role, c in clients.items()
        if role != "anonymous"
    }
    assert (
        'href="/classes/maths"' in pages["teacher"]
        and 'href="/classes/art"' not in pages["teacher"]
    )
    assert codes["maths"] in pages["teacher"] and "New class" in pages["teacher"]
    assert 'href="/classes/maths"' in pages["student"] and "New class" not in pages["student"]
    assert "Ask to be a teacher" in pages["student"] and "Ask to be a teacher" in pages["stranger"]
    assert "Ask to be a teacher" not in pages["teacher"]
    assert (
        'href="/classes/art"' in pages["other student"]
        and "/classes/maths" not in pages["other student"]
    )
    assert "/classes/maths" in pages["admin"] and "/classes/art" in pages["admin"]
    assert "None yet." in pages["stranger"]
    # the nav link, for those logged in
    assert 'href="/classes">Classes</a>' in pages["stranger"]
    assert 'href="/classes">Classes' not in clients["anonymous"].get("/").get_data(as_text=True)


def test_the_class_page_is_the_roster_for_teachers_and_the_board_for_students(
    app: Flask, codes: dict[str, str]
) -> None:
    clients = _clients(app)
    statuses = _statuses(clients, "/classes/maths")
    assert statuses == {
        "anonymous": 302, "stranger": 404, "student": 200, "other student": 404,
        "teacher": 200, "other teacher": 404, "admin": 200,
    }  # fmt: skip
    roster = clients["teacher"].get("/classes/maths").get_data(as_text=True)
    assert '<table class="list roster">' in roster
    assert "Samantha Realname" in roster and "sam/greedy" in roster
    assert 'href="/bots/sam/greedy/v1/source"' in roster
    assert "/classes/maths/students/sam/password" in roster
    assert "Start a class tournament" in roster and "Add a teacher" in roster
    assert (
        clients["admin"].get("/classes/maths").get_data(as_text=True).count("Samantha Realname")
        == 1
    )
    student = clients["student"].get("/classes/maths").get_data(as_text=True)
    assert "Dominoes in maths." in student and "Assignments" in student
    for secret in (
        "Samantha Realname",
        "roster",
        "/students/sam/password",
        "Start a class tournament",
        codes["maths"],
    ):
        assert secret not in student, secret
    assert clients["teacher"].get("/classes/nope").status_code == 404


def test_the_leaderboard_is_for_members_with_reference_bots_shown_or_hidden(app: Flask) -> None:
    clients = _clients(app)
    statuses = _statuses(clients, "/classes/maths/leaderboard")
    assert statuses == {
        "anonymous": 302, "stranger": 404, "student": 200, "other student": 404,
        "teacher": 200, "other teacher": 404, "admin": 200,
    }  # fmt: skip
    page = (
        clients["student"].get("/classes/maths/leaderboard?reference=hide").get_data(as_text=True)
    )
    assert 'value="hide" checked' in page and "Samantha" not in page


def test_the_join_code_page_is_the_teachers(app: Flask, codes: dict[str, str]) -> None:
    clients = _clients(app)
    statuses = _statuses(clients, "/classes/maths/join-code")
    assert statuses == {
        "anonymous": 302, "stranger": 404, "student": 403, "other student": 404,
        "teacher": 200, "other teacher": 404, "admin": 200,
    }  # fmt: skip
    page = clients["teacher"].get("/classes/maths/join-code").get_data(as_text=True)
    link = f"http://localhost/join/{codes['maths']}"
    assert f'id="join-code">{codes["maths"]}<' in page and f'href="{link}"' in page
    assert 'class="qr"><title>QR code of' in page and "Valid until" in page
    # rotate: a new code; the old one opens nothing
    for role in ("student", "other teacher", "stranger"):
        reply = _post(clients[role], "/classes/maths/join-code", hours="2")
        assert reply.status_code in (403, 404), role
    reply = _post(
        clients["teacher"], "/classes/maths/join-code", "/classes/maths/join-code", hours="2"
    )
    assert reply.status_code == 302
    page = clients["teacher"].get("/classes/maths/join-code").get_data(as_text=True)
    new = re.search(r'id="join-code">([A-Z0-9]+)<', page)
    assert new and new.group(1) != codes["maths"]
    old = clients["anonymous"].get(f"/join/{codes['maths']}")
    assert old.status_code == 404 and "No class has the join code" in old.get_data(as_text=True)
    reply = _post(
        clients["teacher"], "/classes/maths/join-code", "/classes/maths/join-code", hours="-1"
    )
    assert reply.status_code == 302
    assert new.group(1) in clients["teacher"].get("/classes/maths/join-code").get_data(as_text=True)


# --- joining ------------------------------------------------------------------------------------


def test_a_visitor_joins_with_a_pseudonym_and_is_logged_in(
    app: Flask, store: Store, codes: dict[str, str]
) -> None:
    client = app.test_client()
    path = f"/join/{codes['maths'].lower()}"  # typed in any case
    page = client.get(path).get_data(as_text=True)
    assert "Join the class maths" in page and "Pseudonym" in page and "e-mail" in page
    token = csrf_token(client, path)
    fields = {"pseudonym": "newbie", "password": "a long passphrase", "real_name": "New Person"}
    reply = client.post(path, data={**fields, "confirm": "another one", "csrf_token": token})
    assert reply.status_code == 400 and "The two passwords differ." in reply.get_data(as_text=True)
    assert 'value="newbie"' in reply.get_data(as_text=True)
    taken = client.post(
        path,
        data={**fields, "pseudonym": "sam", "confirm": fields["password"], "csrf_token": token},
    )
    assert taken.status_code == 400 and "taken" in taken.get_data(as_text=True)
    reply = client.post(path, data={**fields, "confirm": fields["password"], "csrf_token": token})
    assert reply.status_code == 302 and reply.headers["Location"] == "/classes/maths"
    landing = client.get("/classes/maths").get_data(as_text=True)
    assert "Welcome, newbie" in landing and "Log out" in landing
    roster = logged_in(app, "tess").get("/classes/maths").get_data(as_text=True)
    assert "newbie" in roster and "New Person" in roster


def test_a_logged_in_user_joins_with_one_click(app: Flask, codes: dict[str, str]) -> None:
    stan = logged_in(app, "stan")
    path = f"/join/{codes['maths']}"
    page = stan.get(path).get_data(as_text=True)
    assert "You join as <strong>stan</strong>" in page and "Pseudonym" not in page
    reply = _post(stan, path, path)
    assert reply.status_code == 302 and reply.headers["Location"] == "/classes/maths"
    assert stan.get("/classes/maths").status_code == 200
    tess = logged_in(app, "tess")  # a teacher does not join her own class
    reply = _post(tess, path, path)
    assert reply.status_code == 400 and "you teach maths" in reply.get_data(as_text=True).lower()


def test_an_unknown_code_is_a_404_sentence(app: Flask) -> None:
    reply = app.test_client().get("/join/NOPE2345")
    assert reply.status_code == 404
    assert "No class has the join code" in reply.get_data(as_text=True)


# --- the roster, resets and the first-time password ------------------------------------------


def test_a_roster_import_shows_its_logins_once(app: Flask, store: Store) -> None:
    clients = _clients(app)
    statuses = _statuses(clients, "/classes/maths/roster")
    assert statuses == {
        "anonymous": 302, "stranger": 404, "student": 403, "other student": 404,
        "teacher": 200, "other teacher": 404, "admin": 200,
    }  # fmt: skip
    teacher = clients["teacher"]
    empty = _post(teacher, "/classes/maths/roster", "/classes/maths/roster", text=" ")
    assert empty.status_code == 400 and "Paste the roster" in empty.get_data(as_text=True)
    roster = "real name,login\nAda Lovelace\nAlan Turing,alan.t\n"
    # first the preview: nothing made
    shown = _post(teacher, "/classes/maths/roster", "/classes/maths/roster", text=roster,
                  logins="school")  # fmt: skip
    preview = shown.get_data(as_text=True)
    assert shown.status_code == 200 and "Nothing is made yet" in preview
    assert "a list with a header" in preview and "<code>alan.t</code>" in preview
    assert '<option value="login" selected>' in preview
    assert "Alan Turing" not in teacher.get("/classes/maths").get_data(as_text=True)
    bad = _post(teacher, "/classes/maths/roster", "/classes/maths/roster", text=roster,
                column=["name", "name"])  # fmt: skip
    assert bad.status_code == 400 and "Only one column can hold the real name" in bad.get_data(
        as_text=True
    )
    reply = _post(teacher, "/classes/maths/roster", "/classes/maths/roster", text=roster,
                  logins="school", column=["name", "login"], action="import")  # fmt: skip
    assert reply.status_code == 200
    page = reply.get_data(as_text=True)
    assert "Shown this once" in page and "alan.t" in page and "Ada Lovelace" in page
    passwords = re.findall(r"<dt>Password</dt><dd><code>([^<]+)</code>", page)
    logins = re.findall(r"<dt>Login</dt><dd><code>([^<]+)</code>", page)
    assert len(passwords) == 2 and logins[1] == "alan.t"
    assert "Ada Lovelace" not in logins[0]  # never the real name in full
    # its CSV, posted back from the page
    found = re.search(r'name="csv" value="([^"]*)"', page)
    assert found
    csv_text = found.group(1).replace("&#10;", "\n").replace("&#34;", '"')
    download = _post(teacher, "/classes/maths/logins.csv", "/classes/maths", csv=csv_text)
    assert (
        download.mimetype == "text/csv" and "attachment" in download.headers["Content-Disposition"]
    )
    assert "alan.t" in download.get_data(as_text=True)
    assert _post(clients["student"], "/classes/maths/logins.csv", csv="x").status_code == 403
    # a student of the roster logs in: sent to the password page, everywhere, until changed
    alan = app.test_client()
    token = csrf_token(alan)
    reply = alan.post(
        "/login", data={"name": "alan.t", "password": passwords[1], "csrf_token": token}
    )
    assert reply.status_code == 302
    for path in ("/", "/classes/maths", "/bots", "/upload"):
        reply = alan.get(path)
        assert reply.status_code == 302 and reply.headers["Location"] == "/account/password", path
    page = alan.get("/account/password").get_data(as_text=True)
    assert "Choose your own password first" in page
    new = "my very own passphrase"
    reply = _post(
        alan, "/account/password", "/account/password", current=passwords[1], new=new, confirm=new
    )
    assert reply.status_code == 302
    assert alan.get("/classes/maths").status_code == 200
    # the roster shows the real names to the teacher only
    assert "Alan Turing" in teacher.get("/classes/maths").get_data(as_text=True)
    assert "Alan Turing" not in alan.get("/classes/maths").get_data(as_text=True)
    # the login the roster gave him, he may change until his first upload
    mine = alan.get("/classes/maths").get_data(as_text=True)
    assert 'name="login" value="alan.t"' in mine
    assert 'name="login"' not in clients["student"].get("/classes/maths").get_data(as_text=True)
    taken = _post(alan, "/classes/maths/login", "/classes/maths", login="TESS")
    assert taken.status_code == 302
    assert "The login &#39;TESS&#39; is taken" in alan.get("/classes/maths").get_data(as_text=True)
    renamed = _post(alan, "/classes/maths/login", "/classes/maths", login="turing-machine")
    assert renamed.status_code == 302
    page = alan.get("/classes/maths").get_data(as_text=True)
    assert "Your login is now turing-machine" in page
    assert "turing-machine" in teacher.get("/classes/maths").get_data(as_text=True)
    assert _post(clients["stranger"], "/classes/maths/login", "/", login="x").status_code == 404


def test_a_teacher_resets_a_students_password(app: Flask) -> None:
    clients = _clients(app)
    path = "/classes/maths/students/sam/password"
    for role, wanted in (("anonymous", 302), ("stranger", 404), ("student", 403),
                         ("other student", 404), ("other teacher", 404)):  # fmt: skip
        assert _post(clients[role], path).status_code == wanted, role
    assert _post(clients["teacher"], "/classes/maths/students/olly/password").status_code == 404
    reply = _post(clients["teacher"], path, "/classes/maths")
    assert reply.status_code == 200
    found = re.search(r'id="new-password">([^<]+)<', reply.get_data(as_text=True))
    assert found
    # sam's session ended; the old password no longer works; the new one sends him to change it
    assert _to_login(clients["student"].get("/classes/maths"))
    sam = app.test_client()
    token = csrf_token(sam)
    assert (
        sam.post(
            "/login", data={"name": "sam", "password": PASSWORD, "csrf_token": token}
        ).status_code
        == 401
    )
    assert (
        sam.post(
            "/login", data={"name": "sam", "password": found.group(1), "csrf_token": token}
        ).status_code
        == 302
    )
    assert sam.get("/classes").headers["Location"] == "/account/password"
    # an admin may too
    assert _post(clients["admin"], path, "/classes/maths").status_code == 200


def test_a_teacher_adds_another(app: Flask) -> None:
    clients = _clients(app)
    assert _post(clients["student"], "/classes/maths/teachers", user="toby").status_code == 403
    assert (
        _post(clients["other teacher"], "/classes/maths/teachers", user="toby").status_code == 404
    )
    reply = _post(clients["teacher"], "/classes/maths/teachers", "/classes/maths", user="nobody")
    assert reply.status_code == 302
    assert "nobody" in clients["teacher"].get("/classes/maths").get_data(as_text=True)  # the flash
    reply = _post(clients["teacher"], "/classes/maths/teachers", "/classes/maths", user="toby")
    assert reply.status_code == 302
    roster = clients["other teacher"].get("/classes/maths")
    assert roster.status_code == 200 and "Samantha Realname" in roster.get_data(as_text=True)


# --- tournaments and the bots list ------------------------------------------------------------


def test_one_click_starts_a_class_tournament(app: Flask, store: Store) -> None:
    clients = _clients(app)
    path = "/classes/maths/tournament"
    for role, wanted in (("anonymous", 302), ("stranger", 404), ("student", 403),
                         ("other teacher", 404)):  # fmt: skip
        assert _post(clients[role], path, games="2").status_code == wanted, role
    store.add_bot_version("tess", "mine", GREEDY, {})  # a teacher's bot is no student's
    clients["stan"] = clients["stranger"]
    join = _post(clients["stranger"], f"/join/{find_class(store, 'maths').join_code}", "/classes")
    assert join.status_code == 302
    store.add_bot_version("stan", "counter", (REFERENCE_BOTS / "counter.py").read_text(), {})
    reply = _post(
        clients["teacher"], path, "/classes/maths", games="2", reference="on", rules="block"
    )
    assert reply.status_code == 302 and reply.headers["Location"].startswith("/tournaments/")
    with store.read() as session:
        tournament = session.scalars(select(Tournament)).one()
    page = clients["teacher"].get(reply.headers["Location"]).get_data(as_text=True)
    assert tournament.name in page
    assert "sam/greedy" in page and "stan/counter" in page and "reference/random" in page
    assert "tess/mine" not in page


def test_the_bots_list_and_tournament_form_filtered_to_a_class(app: Flask) -> None:
    clients = _clients(app)
    statuses = _statuses(clients, "/bots?class=maths")
    assert statuses == {
        "anonymous": 302, "stranger": 404, "student": 200, "other student": 404,
        "teacher": 200, "other teacher": 404, "admin": 200,
    }  # fmt: skip
    page = clients["teacher"].get("/bots?class=maths").get_data(as_text=True)
    assert "Bots of the class maths" in page and "sam/greedy" in page
    assert "olly/rando" not in page and "reference/random" not in page
    everything = clients["anonymous"].get("/bots").get_data(as_text=True)
    assert "olly/rando" in everything and "sam/greedy" in everything
    olga = logged_in(app, "olga")
    assert olga.get("/tournaments/new?class=maths").status_code == 404  # not hers
    form = clients["admin"].get("/tournaments/new?class=maths").get_data(as_text=True)
    assert 'value="sam/greedy"' in form and 'value="reference/random"' in form
    assert 'value="olly/rando"' not in form and 'name="class" value="maths"' in form
    assert 'value="olly/rando"' in clients["admin"].get("/tournaments/new").get_data(as_text=True)


def test_a_teacher_creates_a_tournament_of_the_class_from_the_form(app: Flask) -> None:
    """A teacher (no organiser) uses the class's tournament form, between its students'
    bots and the reference bots only; without the class, and for others, it stays shut."""
    clients = _clients(app)
    statuses = _statuses(clients, "/tournaments/new?class=maths")
    assert statuses == {
        "anonymous": 302, "stranger": 404, "student": 403, "other student": 404,
        "teacher": 200, "other teacher": 404, "admin": 200,
    }  # fmt: skip
    assert clients["teacher"].get("/tournaments/new").status_code == 403
    teacher = clients["teacher"]
    form = {"name": "maths-cup", "rules": "block", "format": "round-robin", "games": "2",
            "players": "2", "move_seconds": "1000", "class": "maths"}  # fmt: skip
    page = "/tournaments/new?class=maths"
    outside = _post(teacher, "/tournaments/new", page, **form, bots=["sam/greedy", "olly/rando"])
    assert outside.status_code == 403
    assert "not olly/rando" in outside.get_data(as_text=True)
    made = _post(teacher, "/tournaments/new", page, **form, bots=["sam/greedy", "reference/random"])
    assert made.status_code == 302 and made.headers["Location"] == "/tournaments/maths-cup"
    toby = clients["other teacher"]
    again = {**form, "name": "art-cup"}
    assert _post(toby, "/tournaments/new", page, **again, bots=["sam/greedy"]).status_code == 404


# --- the teacher role -------------------------------------------------------------------------


def test_a_user_asks_to_be_a_teacher_and_an_admin_grants_it(app: Flask, store: Store) -> None:
    clients = _clients(app)
    assert _to_login(_post(clients["anonymous"], "/account/teacher-request"))
    reply = _post(clients["stranger"], "/account/teacher-request", "/classes")
    assert reply.status_code == 302
    page = clients["stranger"].get("/classes").get_data(as_text=True)
    assert "an admin will grant or refuse it" in page and "Ask to be a teacher" not in page
    admin = clients["admin"].get("/admin/users").get_data(as_text=True)
    assert "Role requests" in admin and "/admin/users/stan/request" in admin
    for role in ("stranger", "student", "teacher"):
        assert (
            _post(clients[role], "/admin/users/stan/request", decision="grant").status_code == 403
        )
    reply = _post(clients["admin"], "/admin/users/stan/request", "/admin/users", decision="grant")
    assert reply.status_code == 302
    with store.read() as session:
        assert session.scalars(select(User.role).where(User.name == "stan")).one() == "teacher"
    assert "New class" in clients["stranger"].get("/classes").get_data(as_text=True)
    assert "Role requests" not in clients["admin"].get("/admin/users").get_data(as_text=True)


def test_an_admin_refuses_a_request(app: Flask, store: Store) -> None:
    stan, root = logged_in(app, "stan"), logged_in(app, "root")
    assert _post(stan, "/account/teacher-request", "/classes").status_code == 302
    reply = _post(root, "/admin/users/stan/request", "/admin/users", decision="refuse")
    assert reply.status_code == 302
    with store.read() as session:
        assert session.scalars(select(User.role).where(User.name == "stan")).one() == "user"
    assert "Role requests" not in root.get("/admin/users").get_data(as_text=True)


# --- creating a class -------------------------------------------------------------------------


def test_a_teacher_creates_a_class(app: Flask, store: Store) -> None:
    clients = _clients(app)
    statuses = _statuses(clients, "/classes/new")
    assert statuses == {
        "anonymous": 302, "stranger": 403, "student": 403, "other student": 403,
        "teacher": 200, "other teacher": 200, "admin": 200,
    }  # fmt: skip
    teacher = clients["teacher"]
    fields: dict[str, Any] = {
        "name": "physics",
        "description": "Fast bots.",
        "rules": "draw",
        "more_rules": ["block", "draw"],
        "hours": "3",
    }
    reply = _post(teacher, "/classes/new", "/classes/new", **fields)
    assert reply.status_code == 302 and reply.headers["Location"] == "/classes/physics/join-code"
    row = find_class(store, "physics")
    assert row.rule_sets == ("draw", "block") and row.description == "Fast bots."
    assert row.join_code and row.join_expires is not None
    again = _post(teacher, "/classes/new", "/classes/new", **fields)
    assert again.status_code == 400 and 'value="physics"' in again.get_data(as_text=True)
    bad = _post(teacher, "/classes/new", "/classes/new", **{**fields, "name": "no spaces here"})
    assert bad.status_code == 400
    assert _post(clients["student"], "/classes/new", **fields).status_code == 403


# --- assignments and the similarity report: links from the class's page ----------------------


def test_the_class_page_lists_its_assignments(app: Flask, store: Store) -> None:
    from datetime import UTC, datetime, timedelta

    from arena.service.assignments import NewAssignment, create_assignment

    clients = _clients(app)
    assert "None yet." in clients["student"].get("/classes/maths").get_data(as_text=True)
    deadline = datetime.now(UTC).replace(microsecond=0) + timedelta(days=3)
    new = NewAssignment(
        class_name="maths",
        name="week1",
        deadline=deadline,
        references=("reference/random",),
        grades=(("C", ("random",)), ("F", ())),
    )
    create_assignment(store, account_named(store, "tess"), new)
    for role in ("student", "teacher"):
        page = clients[role].get("/classes/maths").get_data(as_text=True)
        assert 'href="/classes/maths/assignments/week1"' in page, role
        assert deadline.strftime("%Y-%m-%d %H:%M UTC") in page and "data-countdown" in page
    teacher = clients["teacher"].get("/classes/maths").get_data(as_text=True)
    assert 'href="/classes/maths/assignments/new"' in teacher
    assert 'href="/classes/maths/similarity"' in teacher
    student = clients["student"].get("/classes/maths").get_data(as_text=True)
    assert "/assignments/new" not in student and "/similarity" not in student
    assert "week1" not in clients["other student"].get("/classes/art").get_data(as_text=True)


def test_a_schools_file_uploaded_is_previewed_then_imported(app: Flask) -> None:
    """Moodle's export saved again by Excel (Windows-1252) is uploaded as it is: the preview
    shows its students' accented names and a column to change, nothing made; the confirm
    carries the file's text and makes each student once; a second upload makes none."""
    from tests.service.test_class_roster import NAMES, ROSTERS

    teacher = _clients(app)["teacher"]
    data = (ROSTERS / "moodle_excel.csv").read_bytes()

    def upload(**fields: Any) -> TestResponse:
        form = {"roster": (io.BytesIO(data), "participants.csv"), **fields}
        form["csrf_token"] = csrf_token(teacher, "/classes/maths/roster")
        return teacher.post("/classes/maths/roster", data=form, content_type="multipart/form-data")

    shown = upload()
    page = shown.get_data(as_text=True)
    assert shown.status_code == 200 and shown.headers["Cache-Control"] == "no-store"
    assert '<strong class="roster-format">Moodle</strong>' in page
    assert "José Núñez" in page and "Siobhán O&#39;Brien" in page
    assert page.count('<span class="status accepted">made</span>') == 8
    assert "José Núñez" not in teacher.get("/classes/maths").get_data(as_text=True)
    carried = re.search(r'<textarea name="text" hidden>([^<]*)</textarea>', page)
    assert carried is not None
    text = html.unescape(carried.group(1))
    done = _post(teacher, "/classes/maths/roster", "/classes/maths/roster", text=text,
                 action="import")  # fmt: skip
    slips = re.findall(r'<p class="who">([^<]*)</p>', done.get_data(as_text=True))
    assert [html.unescape(s) for s in slips] == NAMES
    again = upload(action="import").get_data(as_text=True)
    assert re.findall(r'<p class="who">', again) == []
    roster = teacher.get("/classes/maths").get_data(as_text=True)
    assert roster.count("ada.lovelace@students.example.edu") == 1
    binary = _post(teacher, "/classes/maths/roster", "/classes/maths/roster", text="\x00PK")
    assert binary.status_code == 400 and "NUL character" in binary.get_data(as_text=True)
