"""Accounts on the web (web/auth.py): sign up, log in and out, change password; CSRF on
every form; the login rate limit; sessions that end when the password changes; and the
authorization matrix: every route for anonymous, user, owner, organiser and admin."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from flask import Flask
from flask.testing import FlaskClient

from arena.service.accounts import SESSION_DAYS, Account, create_account
from arena.service.permissions import PERMISSIONS, Target, allowed
from arena.store.db import Store
from tests.conftest import BACKENDS, Databases
from tests.paths import REFERENCE_BOTS
from tests.uploads import store_upload
from tests.web.conftest import HASHER, PASSWORD, csrf_token
from web import create_app
from web.auth import LOGIN_LIMIT


@pytest.fixture
def app(store: Store, url: str) -> Iterator[Flask]:
    app = create_app(url, {"ARENA_PASSWORD_HASHER": HASHER, "SECRET_KEY": "test secret"})
    yield app
    app.extensions["arena_store"].close()


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    return app.test_client()


def _login(client: FlaskClient, name: str, password: str = PASSWORD, **extra: str) -> int:
    data = {"name": name, "password": password, "csrf_token": csrf_token(client), **extra}
    return client.post("/login", data=data).status_code


def test_sign_up_logs_in_and_shows_the_name(client: FlaskClient) -> None:
    token = csrf_token(client, "/signup")
    reply = client.post(
        "/signup",
        data={"name": "ada", "password": PASSWORD, "confirm": PASSWORD, "csrf_token": token},
    )
    assert reply.status_code == 302
    page = client.get("/").get_data(as_text=True)
    assert "Welcome, ada." in page and ">ada</a>" in page and "Log out" in page


@pytest.mark.parametrize(
    ("name", "password", "confirm", "message"),
    [
        ("ada", PASSWORD, "other horse", "The two passwords differ."),
        ("ada", "short", "short", "A password has 12 to 256 characters"),
        ("a/b", PASSWORD, PASSWORD, "is not a valid name"),
        ("", PASSWORD, PASSWORD, "is not a valid name"),
        ("taken", PASSWORD, PASSWORD, "The name &#39;taken&#39; is taken."),
    ],
)
def test_sign_up_refusals_say_why(
    client: FlaskClient, store: Store, name: str, password: str, confirm: str, message: str
) -> None:
    create_account(store, "taken", PASSWORD, hasher=HASHER)
    token = csrf_token(client, "/signup")
    reply = client.post(
        "/signup",
        data={"name": name, "password": password, "confirm": confirm, "csrf_token": token},
    )
    assert reply.status_code == 400
    assert message in reply.get_data(as_text=True)


def test_forms_without_the_csrf_token_are_refused(client: FlaskClient, store: Store) -> None:
    create_account(store, "ada", PASSWORD, hasher=HASHER)
    assert client.post("/login", data={"name": "ada", "password": PASSWORD}).status_code == 400
    assert _login(client, "ada") == 302
    assert client.post("/logout").status_code == 400  # a link cannot log you out
    assert "Log out" in client.get("/").get_data(as_text=True)
    forged = client.post("/logout", data={"csrf_token": "forged"})
    assert forged.status_code == 400
    token = csrf_token(client, "/")
    assert client.post("/logout", data={"csrf_token": token}).status_code == 302
    assert "Log in" in client.get("/").get_data(as_text=True)


def test_the_htmx_header_carries_thecsrf_token(client: FlaskClient) -> None:
    page = client.get("/").get_data(as_text=True)
    assert re.search(r"<body hx-headers='\{\"X-CSRFToken\": \"[^\"]+\"\}'>", page)


def test_a_wrong_password_is_401_and_says_so_without_naming_which(
    client: FlaskClient, store: Store
) -> None:
    create_account(store, "ada", PASSWORD, hasher=HASHER)
    data = {"name": "ada", "password": "wrong one", "csrf_token": csrf_token(client)}
    wrong = client.post("/login", data=data)
    data = {"name": "nobody", "password": PASSWORD, "csrf_token": csrf_token(client)}
    unknown = client.post("/login", data=data)
    for reply in (wrong, unknown):
        assert reply.status_code == 401
        assert "Wrong name or password." in reply.get_data(as_text=True)


def test_logging_in_starts_a_new_session(client: FlaskClient, store: Store) -> None:
    """The login writes the session's cookie, expiring when the session does
    (:data:`SESSION_DAYS` after it); once the first page has stored the session's CSRF
    token, the pages seen write none (nothing in it changed: no cookie signed again on
    each request)."""
    create_account(store, "ada", PASSWORD, hasher=HASHER)
    with client.session_transaction() as session:
        session["planted"] = "by someone else"
    assert _login(client, "ada") == 302
    with client.session_transaction() as session:
        assert "planted" not in session and isinstance(session["sid"], str)
    cookie = client.get_cookie("session")
    assert cookie is not None and cookie.expires is not None
    left = cookie.expires - datetime.now(UTC)
    assert timedelta(days=SESSION_DAYS) - left < timedelta(minutes=5)
    assert client.get("/").status_code == 200  # the first page keeps its CSRF token in it
    for path in ("/", "/account/tokens", "/nowhere"):
        reply = client.get(path)
        assert reply.status_code in (200, 404) and "Set-Cookie" not in reply.headers, path


def test_the_next_page_stays_on_this_site(client: FlaskClient, store: Store) -> None:
    create_account(store, "ada", PASSWORD, hasher=HASHER)
    data = {"name": "ada", "password": PASSWORD, "next": "/tournaments"}
    reply = client.post("/login", data={**data, "csrf_token": csrf_token(client)})
    assert reply.headers["Location"] == "/tournaments"
    for target in ("https://evil.example/", "//evil.example/", "/\\evil.example"):
        client.post("/logout", data={"csrf_token": csrf_token(client, "/")})
        data = {"name": "ada", "password": PASSWORD, "next": target}
        reply = client.post("/login", data={**data, "csrf_token": csrf_token(client)})
        assert reply.headers["Location"] == "/", target


def test_login_attempts_are_rate_limited(client: FlaskClient, store: Store) -> None:
    create_account(store, "ada", PASSWORD, hasher=HASHER)
    allowed_attempts = int(LOGIN_LIMIT.split()[0])
    for _ in range(allowed_attempts):
        assert _login(client, "ada", "wrong one") == 401
    data = {"name": "ada", "password": PASSWORD, "csrf_token": csrf_token(client)}
    blocked = client.post("/login", data=data)
    assert blocked.status_code == 429
    assert _login(client, "someone-else", "wrong one") == 401  # keyed per account name


def test_a_password_change_ends_the_other_sessions(app: Flask, store: Store) -> None:
    create_account(store, "ada", PASSWORD, hasher=HASHER)
    laptop, phone = app.test_client(), app.test_client()
    assert _login(laptop, "ada") == 302 and _login(phone, "ada") == 302
    data = {"current": PASSWORD, "new": "a new password", "confirm": "a new password"}
    reply = laptop.post("/account/password", data={**data, "csrf_token": csrf_token(laptop, "/")})
    assert reply.status_code == 302
    assert "Password changed" in laptop.get("/").get_data(as_text=True)
    assert "Log out" in laptop.get("/").get_data(as_text=True)  # this session goes on
    assert "Log in" in phone.get("/").get_data(as_text=True)  # the other one has ended
    data = {"current": "wrong", "new": "amber kettle sky", "confirm": "amber kettle sky"}
    wrong = laptop.post("/account/password", data={**data, "csrf_token": csrf_token(laptop, "/")})
    assert wrong.status_code == 400
    assert "The current password is not right." in wrong.get_data(as_text=True)


# --- who may do what -------------------------------------------------------------------------

ROLES = ["anonymous", "user", "owner", "organiser", "admin"]


def _accounts(store: Store, directory: Path) -> dict[str, Account]:
    """An account for each role but anonymous; "owner" owns a private bot and an upload
    (built once per test process: tests/conftest.py's seed marker)."""
    made = {
        role: create_account(
            store,
            role,
            PASSWORD,
            role="user" if role == "owner" else role,
            hasher=HASHER,
        )
        for role in ROLES[1:]
    }
    # "owner" owns a bot with a private source, and an upload
    source = (REFERENCE_BOTS / "greedy.py").read_text()
    store.add_bot_version("owner", "mybot", source, {})
    store_upload(store, made["owner"].id, "mybot", "mybot.py", source + "\n# v2\n")
    # "pia" is a student of the private class "quiet": her bot is no one else's to see
    from arena.service.classes import NewClass, create_class, join_class
    from arena.service.permissions import OPERATOR

    quiet = create_class(store, OPERATOR, NewClass(name="quiet", private=True))
    assert quiet.join_code is not None
    join_class(store, HASHER, quiet.join_code, "pia", PASSWORD)
    store.add_bot_version("pia", "secret", source + "\n# pia\n", {})
    return made


#: (method, path, expected status per role: anonymous, user, owner, organiser, admin).
#: 302 for anonymous on account pages: to the login page.
ROUTES = [
    ("GET", "/", [200] * 5),
    ("GET", "/leaderboards", [200] * 5),
    ("GET", "/tournaments", [200] * 5),
    ("GET", "/tournaments/none", [404] * 5),
    ("GET", "/healthz", [200] * 5),
    ("GET", "/login", [200] * 5),
    ("GET", "/signup", [200] * 5),
    ("GET", "/account/password", [302, 200, 200, 200, 200]),
    ("POST", "/logout", [302] * 5),
    ("GET", "/upload", [302, 200, 200, 200, 200]),
    ("GET", "/bots", [200] * 5),
    ("GET", "/bots/owner/mybot", [200] * 5),
    ("GET", "/bots/owner/nobot", [404] * 5),
    # a private class's student's bot: its members', teachers' and admins' only (issue 30)
    ("GET", "/bots/pia/secret", [404, 404, 404, 404, 200]),
    ("GET", "/bots/pia/secret/v1/source", [404, 404, 404, 404, 200]),
    ("GET", "/bots/owner/mybot/v1/source", [404, 404, 200, 404, 200]),
    ("POST", "/bots/owner/mybot/visibility", [404, 404, 302, 404, 302]),
    # anonymous: an old link after logging out asks to log in (issue 20, finding 4)
    ("GET", "/uploads/1", [302, 404, 200, 404, 200]),
    ("GET", "/uploads/1/live", [302, 404, 200, 404, 200]),
    ("GET", "/uploads/99", [302, 404, 404, 404, 404]),
    ("GET", "/leaderboards/nosuchrules", [404] * 5),
    ("GET", "/tournaments/new", [302, 403, 403, 200, 200]),
    ("GET", "/account/tokens", [302, 200, 200, 200, 200]),
    ("POST", "/account/tokens/99/revoke", [302, 404, 404, 404, 404]),
    ("GET", "/api/v1/bots", [401] * 5),  # the API takes tokens, never the session
    ("GET", "/api/v1/openapi.json", [200] * 5),
    ("GET", "/api/v1/docs", [200] * 5),
    ("POST", "/tournaments/none/cancel", [404] * 5),
    ("GET", "/tournaments/none/live", [404] * 5),
    ("POST", "/tournaments/new", [302, 403, 403, 400, 400]),  # no valid form: 400
    ("GET", "/leaderboards/nosuchrules/export.csv", [404] * 5),
    ("GET", "/leaderboards/nosuchrules/export.json", [404] * 5),
    ("GET", "/games", [200] * 5),
    ("GET", "/games/1/0", [404] * 5),
    ("GET", "/games/1/0.json", [404] * 5),
    ("GET", "/games/1/0/state", [404] * 5),
    ("GET", "/games/1/0.html", [404] * 5),
    ("GET", "/games/1/0/duplicate", [404] * 5),
    ("GET", "/games/1/0/duplicate/state", [404] * 5),
    ("POST", "/login", [401] * 5),  # no name or password: not logged in
    ("POST", "/signup", [400] * 5),
    ("POST", "/upload", [302, 400, 400, 400, 400]),  # no file
    ("POST", "/account/password", [302, 400, 400, 400, 400]),
    ("POST", "/account/tokens", [302, 400, 400, 400, 400]),
    ("GET", "/compares/new", [302, 200, 200, 200, 200]),
    ("POST", "/compares/new", [302, 400, 400, 400, 400]),  # no bots chosen
    ("GET", "/compares/none", [404] * 5),
    ("GET", "/compares/none/live", [404] * 5),
    ("GET", "/games/1/0/branch", [302, 404, 404, 404, 404]),  # no such game
    ("POST", "/games/1/0/branch", [302, 404, 404, 404, 404]),
    ("GET", "/branches/99", [404] * 5),  # tests/web/test_branches.py: whose branch
    ("GET", "/branches/99/live", [404] * 5),
    ("GET", "/branches/99.jsonl", [404] * 5),
    ("GET", "/branches/99/1", [404] * 5),
    ("GET", "/branches/99/1/state", [404] * 5),
    ("GET", "/branches/99/1.json", [404] * 5),
    ("GET", "/admin/users", [302, 403, 403, 403, 200]),
    ("POST", "/admin/users/nobody/role", [302, 403, 403, 403, 400]),  # no role chosen
    ("GET", "/leaderboards/nosuchrules/live", [404] * 5),
    ("GET", "/competitions", [200] * 5),
    ("GET", "/competitions/new", [302, 403, 403, 200, 200]),
    ("POST", "/competitions/new", [302, 403, 403, 400, 400]),  # no valid form: 400
    ("GET", "/competitions/none", [404] * 5),
    ("GET", "/competitions/none/live", [404] * 5),
    ("GET", "/competitions/none/ladder.csv", [404] * 5),
    ("GET", "/competitions/none/final.json", [404] * 5),
    ("GET", "/competitions/none/entrants/x", [404] * 5),
    # tests/web/test_competition_pages.py: who may enter and manage an existing one
    ("POST", "/competitions/none/enter", [302, 404, 404, 404, 404]),
    ("POST", "/competitions/none/deadline", [404] * 5),
    ("POST", "/competitions/none/disqualify", [404] * 5),
    ("POST", "/competitions/none/close", [404] * 5),
    ("POST", "/competitions/none/rerun", [404] * 5),
    ("GET", "/competitions/none/kit.zip", [404] * 5),
    ("POST", "/competitions/none/final-choice", [302, 404, 404, 404, 404]),
    # the organiser's tools (tests/web/test_competition_tools.py: an existing one)
    ("GET", "/competitions/none/organiser", [404] * 5),
    ("POST", "/competitions/none/settings", [404] * 5),
    ("POST", "/competitions/none/pause", [404] * 5),
    ("POST", "/competitions/none/announcements", [404] * 5),
    ("GET", "/competitions/none/copies", [404] * 5),
    ("POST", "/competitions/none/withdraw", [302, 404, 404, 404, 404]),
    ("GET", "/competitions/none/games.jsonl", [404] * 5),
    # the rules anyone reads (tests/web/test_rules_pages.py)
    ("GET", "/rules", [200] * 5),
    ("GET", "/rules/block", [200] * 5),
    ("GET", "/rules/block/download.toml", [200] * 5),
    ("GET", "/rules/nosuchrules", [404] * 5),
    # tests/web/test_class_pages.py: every class route for a class's members and strangers
    # (an anonymous visitor is sent to log in there); no such class: 404 for everyone
    ("GET", "/classes", [302, 200, 200, 200, 200]),
    ("GET", "/classes/new", [302, 403, 403, 200, 200]),  # organisers rank above teachers
    ("POST", "/classes/new", [302, 403, 403, 400, 400]),  # no name: 400
    ("GET", "/classes/none", [404] * 5),
    ("GET", "/classes/none/leaderboard", [404] * 5),
    ("GET", "/classes/none/join-code", [404] * 5),
    ("POST", "/classes/none/join-code", [404] * 5),
    ("GET", "/classes/none/roster", [404] * 5),
    ("POST", "/classes/none/roster", [404] * 5),
    ("POST", "/classes/none/logins.csv", [404] * 5),
    ("POST", "/classes/none/login", [302, 404, 404, 404, 404]),  # a student's own login
    ("POST", "/classes/none/students/x/password", [404] * 5),
    ("POST", "/classes/none/teachers", [404] * 5),
    ("POST", "/classes/none/privacy", [404] * 5),
    ("POST", "/classes/quiet/privacy", [302, 404, 404, 404, 302]),
    ("POST", "/classes/none/tournament", [404] * 5),
    ("GET", "/join/NONE2345", [404] * 5),
    ("POST", "/join/NONE2345", [400] * 5),  # no such code: the form again, 400
    ("POST", "/account/teacher-request", [302] * 5),  # asked (or held): back to /classes
    ("POST", "/admin/users/nobody/request", [302, 403, 403, 403, 302]),  # none: a flash
    # the assignment pages, the similarity report, a tournament's standings: no such one
    ("GET", "/classes/none/assignments/new", [404] * 5),
    ("POST", "/classes/none/assignments/new", [404] * 5),
    ("GET", "/classes/none/assignments/x", [404] * 5),
    ("GET", "/classes/none/assignments/x/live", [404] * 5),
    ("POST", "/classes/none/assignments/x/submit", [302, 404, 404, 404, 404]),
    ("GET", "/classes/none/assignments/x/grades.csv", [404] * 5),
    ("GET", "/classes/none/similarity", [404] * 5),
    ("GET", "/tournaments/none/standings.csv", [404] * 5),
    # tables (issue 35): a person's seat, so anonymous is asked to log in; no such table
    ("GET", "/tables", [302, 200, 200, 200, 200]),
    ("GET", "/tables/new", [302, 200, 200, 200, 200]),
    ("POST", "/tables/new", [302, 400, 400, 400, 400]),  # no bot chosen
    ("GET", "/tables/999", [302, 404, 404, 404, 404]),
    ("GET", "/tables/999/state", [302, 404, 404, 404, 404]),
    ("POST", "/tables/999/move", [302, 404, 404, 404, 404]),
    ("GET", "/tables/999/join/NONE", [302, 404, 404, 404, 404]),
    ("POST", "/tables/999/join/NONE", [302, 404, 404, 404, 404]),
    ("GET", "/tables/999/replay", [302, 404, 404, 404, 404]),
    ("GET", "/tables/999/replay/state", [302, 404, 404, 404, 404]),
    ("GET", "/tables/999.json", [302, 404, 404, 404, 404]),
    # watching a table: anyone with its watch link; no such table
    ("GET", "/tables/999/watch/NONE", [404] * 5),
    ("GET", "/tables/999/watch/NONE/state", [404] * 5),
    # watching live: no such match
    ("GET", "/live/999", [404] * 5),
    ("GET", "/live/999/state", [404] * 5),
]


def test_the_matrix_covers_every_page(app: Flask) -> None:
    """Every endpoint of the pages (the API's are token-only: tests/web/test_api.py) is in
    :data:`ROUTES`, so a new page cannot skip the matrix."""
    adapter = app.url_map.bind("localhost")
    covered = {adapter.match(path, method)[0] for method, path, _ in ROUTES}
    pages = {
        rule.endpoint
        for rule in app.url_map.iter_rules()
        if rule.endpoint != "static" and not rule.endpoint.startswith(("api.", "openapi"))
    }
    assert pages - covered == set()


@pytest.fixture(scope="module", params=BACKENDS)
def matrix_clients(
    request: pytest.FixtureRequest,
    databases: Databases,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[dict[str, FlaskClient]]:
    """One app per backend on a copy of :func:`_accounts`'s database, and a client for each
    role, logged in (but anonymous's), made once for the module's matrix tests."""
    server = None if request.param == "sqlite" else request.getfixturevalue("postgres_server")
    url, _ = databases.copy(server, tmp_path_factory.mktemp("matrix"), _accounts)
    app = create_app(url, {"ARENA_PASSWORD_HASHER": HASHER, "SECRET_KEY": "test secret"})
    try:
        clients = {role: app.test_client() for role in ROLES}
        for role, client in clients.items():
            if role != "anonymous":
                assert _login(client, role) == 302, f"{role} could not log in"
        yield clients
    finally:
        app.extensions["arena_store"].close()
        if server is not None:
            databases.drop(server, url.rsplit("/", 1)[1])


@pytest.mark.parametrize("role", ROLES)
def test_the_authorization_matrix(matrix_clients: dict[str, FlaskClient], role: str) -> None:
    """Every route of :data:`ROUTES` as ``role``: each cell is an assert of its own; a
    failing one is collected, and the test fails once naming every failing cell (route,
    role, expected, got). A cell that logs the client out (``POST /logout``) logs it in
    again; no other cell changes what a later one sees (the visibility form without
    ``public`` keeps the source private, as it was). The posts carry the session's CSRF
    token, read once a session (a stale one would turn the cells that expect 302, 403 or
    404, after every 400 cell, into failures)."""
    client = matrix_clients[role]
    token = csrf_token(client)
    failures: list[str] = []
    for method, path, expected in ROUTES:
        if method == "GET":
            reply = client.get(path)
        else:
            reply = client.post(path, data={"csrf_token": token})
        want = expected[ROLES.index(role)]
        try:
            assert reply.status_code == want, (
                f"{method} {path} as {role}: expected {want}, got {reply.status_code}"
            )
            if reply.status_code == 302 and path == "/account/password":
                location = reply.headers["Location"]
                assert location.startswith("/login?next="), (
                    f"{method} {path} as {role}: sent to {location}, not to log in"
                )
        except AssertionError as failed:
            failures.append(str(failed).split("\n")[0])
        if (method, path) == ("POST", "/logout"):
            if role != "anonymous":
                assert _login(client, role) == 302, f"{role} could not log in again"
            token = csrf_token(client)  # the new session's
    assert not failures, f"{len(failures)} of {len(ROUTES)} cells failed:\n" + "\n".join(failures)


@pytest.mark.parametrize("action", sorted(PERMISSIONS))
def test_permissions_by_role_and_ownership(action: str) -> None:
    """The one table every view asks: admins may do everything, anonymous only read public
    pages, owners act on their own resources where the table says so."""
    user = Account(1, "u", "user", 0)
    organiser = Account(2, "o", "organiser", 0)
    admin = Account(3, "a", "admin", 0)
    role, owners_may = PERMISSIONS[action]
    assert allowed(admin, action, Target(99))
    # the actions anyone may do: reading public pages, and signing up, in and out
    assert allowed(None, action) == (role == "anonymous")
    assert allowed(user, action, Target(1)) == (owners_may or role in ("anonymous", "user"))
    assert allowed(user, action, Target(99)) == (role in ("anonymous", "user"))
    assert allowed(organiser, action, Target(99)) == (
        role in ("anonymous", "user", "teacher", "organiser")
    )
    teacher = Account(4, "t", "teacher", 0)
    assert allowed(teacher, action, Target(99)) == (role in ("anonymous", "user", "teacher"))


def test_without_a_configured_key_one_is_generated_and_kept(
    url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ARENA_SECRET_KEY", raising=False)
    monkeypatch.setenv("ARENA_INSTANCE_PATH", str(tmp_path / "instance"))
    first, second = create_app(url), create_app(url)
    try:
        key = (tmp_path / "instance" / "secret_key").read_text()
        assert len(key) == 64 and first.config["SECRET_KEY"] == second.config["SECRET_KEY"] == key
        assert (tmp_path / "instance" / "secret_key").stat().st_mode & 0o777 == 0o600
    finally:
        for app in (first, second):
            app.extensions["arena_store"].close()
    monkeypatch.setenv("ARENA_SECRET_KEY", "from the environment")
    third = create_app(url)
    try:
        assert third.config["SECRET_KEY"] == "from the environment"
    finally:
        third.extensions["arena_store"].close()


def test_admins_list_the_accounts_and_give_roles(app: Flask, store: Store) -> None:
    """/admin/users (issue 20, finding 9): every user with its role; the form changes it."""
    create_account(store, "root", PASSWORD, role="admin", hasher=HASHER)
    create_account(store, "ada", PASSWORD, hasher=HASHER)
    store.add_bot_version("reference", "random", (REFERENCE_BOTS / "random.py").read_text(), {})
    client = app.test_client()
    assert _login(client, "root") == 302
    page = client.get("/admin/users").get_data(as_text=True)
    assert "<td>ada</td><td>yes</td>" in page and "<td>reference</td><td>no password</td>" in page
    token = csrf_token(client, "/admin/users")
    reply = client.post("/admin/users/ada/role", data={"role": "organiser", "csrf_token": token})
    assert reply.status_code == 302
    assert "ada is now organiser." in client.get("/admin/users").get_data(as_text=True)
    ada = app.test_client()
    assert _login(ada, "ada") == 302
    assert ada.get("/tournaments/new").status_code == 200  # an organiser's page now
    assert ada.get("/admin/users").status_code == 403
    refused = client.post("/admin/users/ada/role", data={"role": "king", "csrf_token": token})
    assert refused.status_code == 400
