"""Bots over the web (web/bots.py): uploads screened in the web process and checked in the
sandbox by the worker's code (called here as the worker calls it), bot pages, and who may
read a source. Hostile and malformed files each get a clear message and store nothing."""

from __future__ import annotations

import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import func, select

from arena.service.accounts import create_account, create_token
from arena.service.games import OpponentRow
from arena.service.uploads import MAX_SOURCE_BYTES, check_in_sandbox
from arena.store.db import Store
from arena.store.models import Upload, User
from tests.paths import REFERENCE_BOTS, ZOO
from tests.web.conftest import HASHER, PASSWORD, csrf_token, logged_in
from web.bots import opponent_rows

GREEDY = (REFERENCE_BOTS / "greedy.py").read_bytes()


@pytest.fixture
def app(app: Flask, store: Store) -> Flask:
    """tests/web/conftest.py's app (no worker reads its broker: the tests check uploads
    themselves), with the accounts ada, bob and root (an admin)."""
    for name, role in (("ada", "user"), ("bob", "user"), ("root", "admin")):
        create_account(store, name, PASSWORD, role=role, hasher=HASHER)
    return app


def _upload(client: FlaskClient, filename: str, data: bytes, name: str = "") -> tuple[int, str]:
    import io

    form = {
        "csrf_token": csrf_token(client, "/upload"),
        "name": name,
        "source": (io.BytesIO(data), filename),
    }
    reply = client.post("/upload", data=form, content_type="multipart/form-data")
    return reply.status_code, reply.headers.get("Location", "") or reply.get_data(as_text=True)


def _uploads(store: Store) -> int:
    with store.read() as session:
        return session.scalar(select(func.count()).select_from(Upload)) or 0


def test_an_upload_is_checked_then_stored_and_shown(app: Flask, store: Store) -> None:
    ada = logged_in(app, "ada")
    status, location = _upload(ada, "greedy.py", GREEDY, name="mybot")
    assert status == 302 and location == "/uploads/1"
    page = ada.get(location).get_data(as_text=True)
    assert "pending" in page and 'hx-get="/uploads/1/live"' in page
    with store.read() as session:
        upload = session.get(Upload, 1)
        assert upload is not None and upload.sent is not None  # sent to the broker
    assert check_in_sandbox(store, 1) == "accepted"  # as the worker does, in the sandbox
    live = ada.get("/uploads/1/live").get_data(as_text=True)
    assert "accepted" in live and "Stored as version 1." in live and "hx-get" not in live
    assert "in the sandbox" in live
    bot = ada.get("/bots/ada/mybot").get_data(as_text=True)
    assert "Version 1" in bot and "Not rated yet" in bot
    assert "/bots/ada/mybot/v1/source" in bot
    assert "ada/mybot" in ada.get("/bots").get_data(as_text=True)
    # the same source again at once: the same upload, said so (a double click)
    status, location = _upload(ada, "greedy.py", GREEDY, name="mybot")
    assert status == 302 and location == "/uploads/1"
    assert "Already received: greedy.py as upload 1" in ada.get(location).get_data(as_text=True)
    # another source under the same name: version 2
    _upload(ada, "greedy.py", GREEDY + b"\n# v2\n", name="mybot")
    assert check_in_sandbox(store, 2) == "accepted"
    assert "Version 2" in ada.get("/bots/ada/mybot").get_data(as_text=True)


def test_the_upload_form_sent_twice_makes_one_upload(
    app: Flask, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The form carries a one-time token: sent twice (a double click), even past the
    repeat window (none here), it is one upload; the form shown again has a new token."""
    import io
    import re

    from arena.service import intake

    monkeypatch.setattr(intake, "REPEAT_WINDOW_SECONDS", 0.0)  # only the token repeats
    ada = logged_in(app, "ada")
    page = ada.get("/upload").get_data(as_text=True)
    token = re.search(r'name="upload_token" value="([^"]+)"', page)
    assert token is not None
    assert token.group(1) not in ada.get("/upload").get_data(as_text=True)  # one-time

    def send(upload_token: str | None) -> tuple[int, str]:
        form = {"csrf_token": csrf_token(ada, "/upload"), "source": (io.BytesIO(GREEDY), "g.py")}
        if upload_token is not None:
            form["upload_token"] = upload_token
        reply = ada.post("/upload", data=form, content_type="multipart/form-data")
        return reply.status_code, reply.headers.get("Location", "")

    assert send(token.group(1)) == (302, "/uploads/1")
    assert send(token.group(1)) == (302, "/uploads/1")
    assert "Already received: g.py as upload 1" in ada.get("/uploads/1").get_data(as_text=True)
    assert _uploads(store) == 1
    assert send(None) == (302, "/uploads/2")  # no token, no window: another upload


def test_a_bot_that_faults_its_check_is_rejected_with_the_reason(app: Flask, store: Store) -> None:
    ada = logged_in(app, "ada")
    status, location = _upload(ada, "crash.py", (ZOO / "raise_in_move.py").read_bytes())
    assert status == 302
    assert check_in_sandbox(store, 1) == "rejected"
    page = ada.get(location).get_data(as_text=True)
    assert "rejected" in page and "crash under" in page and "Nothing was stored." in page
    assert "Traceback" in page  # the stderr tail, to its owner
    assert ada.get("/bots/ada/crash").status_code == 404
    # another user, or nobody, does not even learn the upload exists
    assert logged_in(app, "bob").get(location).status_code == 404
    # nobody is asked to log in, as for any upload's number (issue 20, finding 4)
    assert logged_in(app, None).get(location).headers["Location"].startswith("/login?next=")
    assert logged_in(app, "root").get(location).status_code == 200


def test_a_cpp_upload_that_does_not_compile_shows_the_compilers_lines(
    app: Flask, store: Store
) -> None:
    """The page and the API show a C++ upload's compiler errors as the compiler printed them
    (the author's file name, line numbers), never a sandbox path."""
    ada = logged_in(app, "ada")
    broken = b'#include "arena.hpp"\n\narena::Move play(const arena::Observation& o) {\n'
    broken += b"    return o.legal_moves[0] + oops;\n}\n"
    status, location = _upload(ada, "mine.cpp", broken)
    assert status == 302
    assert check_in_sandbox(store, 1) == "rejected"
    page = ada.get(location).get_data(as_text=True)
    assert "It does not compile: the compiler's first lines are below." in page
    assert '<pre class="stderr">mine.cpp: In function' in page and "mine.cpp:4:" in page
    assert "/src/" not in page
    token = create_token(store, ada_id(store), "ci", ["read"])
    api = app.test_client().get("/api/v1/uploads/1", headers={"Authorization": f"Bearer {token}"})
    message = api.get_json()["message"]
    assert message.startswith("Rejected: it does not compile:\nmine.cpp: In function")
    assert "mine.cpp:4:" in message and "oops" in message


def ada_id(store: Store) -> int:
    with store.read() as session:
        found = session.scalar(select(User.id).where(User.name == "ada"))
    assert found is not None
    return int(found)


@pytest.mark.parametrize(
    ("filename", "data", "message"),
    [
        ("bot.txt", GREEDY, "is not a .py, .js, .cpp, .c, .go, .rs or .java file"),
        ("bot.py", b"", "is empty"),
        ("bot.py", b"\x89PNG\r\n\x1a\n\x00\x00", "is not UTF-8"),
        ("bot.py", "def play(o):\n    return 'é'\n".encode("latin-1"), "is not UTF-8"),
        ("bot.py", b"def play(o):\n    return o.legal_moves[0\n", "syntax error on line"),
        (
            "bot.py",
            b"x = 1\n" * (MAX_SOURCE_BYTES // 6 + 1),
            "is over 262,144 bytes (256 KiB): a bot may have at most that much.",
        ),
        ("bot.py", b"def play(o):\x00 pass\n", "NUL byte"),
    ],
    ids=["txt", "empty", "binary", "latin1", "syntax", "too-big", "nul"],
)
def test_malformed_uploads_are_refused_with_a_clear_message(
    app: Flask, store: Store, filename: str, data: bytes, message: str
) -> None:
    status, page = _upload(logged_in(app, "ada"), filename, data)
    assert status == 400
    assert message in page, page[-2000:]
    assert _uploads(store) == 0


def test_a_ten_megabyte_upload_is_413_and_stores_nothing(app: Flask, store: Store) -> None:
    ada = logged_in(app, "ada")
    boundary = "b0undary"
    body = (
        (
            f'--{boundary}\r\nContent-Disposition: form-data; name="source"; filename="big.py"'
            "\r\n\r\n"
        ).encode()
        + b"#" * (10 * 1024 * 1024)
        + f"\r\n--{boundary}--\r\n".encode()
    )
    reply = ada.post("/upload", data=body, content_type=f"multipart/form-data; boundary={boundary}")
    status, page = reply.status_code, reply.get_data(as_text=True)
    assert status == 413 and "larger than 1024 KiB" in page
    assert _uploads(store) == 0


def test_bad_bot_names_and_file_names(app: Flask, store: Store) -> None:
    ada = logged_in(app, "ada")
    status, page = _upload(ada, "greedy.py", GREEDY, name="a/b")
    assert status == 400 and "is not a valid name" in page
    hostile = "<img src=x onerror=alert(1)>.py"
    status, location = _upload(ada, hostile, GREEDY, name="safe")
    assert status == 302
    page = ada.get(location).get_data(as_text=True)
    assert "<img src=x" not in page and "&lt;img src=x onerror=alert(1)&gt;.py" in page


def test_uploading_needs_an_account(app: Flask) -> None:
    reply = logged_in(app, None).get("/upload")
    assert reply.status_code == 302 and reply.headers["Location"].startswith("/login")


def test_who_may_read_a_source(app: Flask, store: Store) -> None:
    ada = logged_in(app, "ada")
    store.add_bot_version("ada", "mybot", GREEDY.decode(), {})  # as an accepted upload stores it
    source = "/bots/ada/mybot/v1/source"
    assert ada.get(source).get_data() == GREEDY
    for who in (None, "bob"):
        other = logged_in(app, who)
        assert other.get(source).status_code == 404  # private: not acknowledged
        assert source not in other.get("/bots/ada/mybot").get_data(as_text=True)
        assert (
            other.post(
                "/bots/ada/mybot/visibility", data={"public": "1", "csrf_token": csrf_token(other)}
            ).status_code
            == 404
        )
    assert logged_in(app, "root").get(source).status_code == 200
    made = ada.post(
        "/bots/ada/mybot/visibility", data={"public": "1", "csrf_token": csrf_token(ada, "/")}
    )
    assert made.status_code == 302
    assert logged_in(app, None).get(source).get_data() == GREEDY
    assert logged_in(app, None).get("/bots/ada/mybot/v9/source").status_code == 404


def test_an_upload_without_a_name_takes_the_name_the_file_sets(app: Flask, store: Store) -> None:
    """The tutorial says: ``NAME = "mybot"`` names the bot, else the file's name does. The
    form's name, when given, wins over both."""
    from arena.match.newbot import declared_name

    ada = logged_in(app, "ada")
    source = GREEDY.replace(b'NAME = "greedy"', b'NAME = "fancy"  # my name')
    assert b'NAME = "fancy"' in source
    assert _upload(ada, "copy_of_greedy.py", source)[0] == 302
    assert _upload(ada, "other.py", source, name="chosen")[0] == 302
    assert _upload(ada, "nameless.py", b"def play(observation):\n    return 0\n")[0] == 302
    with store.read() as session:
        bots = sorted(session.scalars(select(Upload.bot_name)))
    assert bots == ["chosen", "fancy", "nameless"]
    assert declared_name("x = 1\n    NAME = 'inner'\n") is None  # not at the top level
    assert declared_name("NAME = 'a' + 'b'\n") is None  # a literal only
    assert declared_name("NAME = 'first'\nNAME = 'last'\n") == "last"  # as Python


def test_the_upload_form_offers_each_runtime_and_the_bot_page_shows_it(
    app: Flask, store: Store
) -> None:
    import io

    ada = logged_in(app, "ada")
    form_page = ada.get("/upload").get_data(as_text=True)
    for label in ('value="python"', 'value="python-numpy"', 'value="javascript"'):
        assert label in form_page
    numpy = (REFERENCE_BOTS / "numpy_greedy.py").read_bytes()
    form = {
        "csrf_token": csrf_token(ada, "/upload"), "name": "np", "runtime": "python-numpy",
        "source": (io.BytesIO(numpy), "numpy_greedy.py"),
    }  # fmt: skip
    reply = ada.post("/upload", data=form, content_type="multipart/form-data")
    assert reply.status_code == 302, reply.get_data(as_text=True)[-1000:]
    assert check_in_sandbox(store, 1) == "accepted"  # sandboxed, under python-numpy
    page = ada.get("/bots/ada/np").get_data(as_text=True)
    assert "runtime python-numpy (Python 3." in page and "numpy 2.2.6)" in page
    # a .js file is JavaScript whatever the select's Python default says
    status, _ = _upload(ada, "first.js", (ZOO / "first.js").read_bytes(), name="js")
    assert status == 302 and check_in_sandbox(store, 2) == "accepted"
    assert "runtime javascript (Node.js 20." in ada.get("/bots/ada/js").get_data(as_text=True)
    # whichever Python runtime the select names (as the form and the entry form say)
    form = {
        "csrf_token": csrf_token(ada, "/upload"), "runtime": "python-numpy",
        "source": (io.BytesIO(b"function play(o) {}\n"), "x.js"),
    }  # fmt: skip
    assert ada.post("/upload", data=form, content_type="multipart/form-data").status_code == 302
    with store.read() as session:
        assert session.scalar(select(Upload.runtime).where(Upload.id == 3)) == "javascript"
    form = {
        "csrf_token": csrf_token(ada, "/upload"), "runtime": "javascript",
        "source": (io.BytesIO(b"def play(o):\n    pass\n"), "x.py"),
    }  # fmt: skip
    refused = ada.post("/upload", data=form, content_type="multipart/form-data")
    assert refused.status_code == 400
    assert "x.py is not a .js file: a javascript bot is one .js file." in refused.get_data(
        as_text=True
    )


def _upload_as(client: FlaskClient, filename: str, data: bytes, runtime: str) -> tuple[int, str]:
    import io

    form = {
        "csrf_token": csrf_token(client, "/upload"), "name": "same", "runtime": runtime,
        "source": (io.BytesIO(data), filename),
    }  # fmt: skip
    reply = client.post("/upload", data=form, content_type="multipart/form-data")
    return reply.status_code, reply.headers.get("Location", "") or reply.get_data(as_text=True)


def test_a_source_stored_under_one_runtime_keeps_it_and_the_page_says_so(
    app: Flask, store: Store
) -> None:
    """The same source uploaded again under another runtime is "already" its version, which
    keeps its first runtime: the upload is shown under that runtime, with a sentence."""
    ada = logged_in(app, "ada")
    store.add_bot_version("ada", "same", GREEDY.decode(), {})  # as an accepted upload stores it
    status, location = _upload_as(ada, "greedy.py", GREEDY, "python-numpy")
    assert status == 302 and location == "/uploads/1"
    page = ada.get(location).get_data(as_text=True)
    assert "runtime python ·" in page and "already stored" in page
    assert (
        "This source is already version 1, a python bot: it stays python (a version&#39;s "
        "runtime never changes; to run it under python-numpy, upload it as another bot)."
    ) in page
    # hostile selects: a sentence each, nothing stored
    for runtime, sentence in (
        ("Python", "No runtime &#39;Python&#39;: the runtimes are python, python-numpy"),
        ("<b>" * 3000, "No runtime &#39;&lt;b&gt;&lt;b&gt;"),
    ):
        refused, text = _upload_as(ada, "other.py", b"def play(o):\n    pass\n", runtime)
        assert refused == 400 and sentence in text
        assert "<b><b>" not in text
    assert _uploads(store) == 1


#: The Jinja row a bot page's table against each opponent had (a url_for a row), which
#: web.bots.opponent_rows builds as strings now.
OPPONENT_ROW = """{% import "_names.html" as names -%}
{% for o in opponents %}{% set opponent = seat_name(o.opponent) %}
<tr><td>{{ o.rules }}</td><td>{% if opponent %}{{ names.bot_link(opponent) }}{% else %}{{ o.opponent }}{% endif %}</td><td class="num"><a href="{{ url_for('games.game_index', bot=ref, opponent=o.opponent, rules=o.rules) }}" title="The games against {{ o.opponent }}">{{ o.games }}</a></td><td class="num">{{ o.wins }}-{{ o.draws }}-{{ o.losses }}</td><td class="num">{{ "%.1f" | format(100 * o.score) }}%</td></tr>
{% endfor %}"""  # noqa: E501


def test_the_rows_against_each_opponent_read_as_the_template_wrote_them(app: Flask) -> None:
    opponents = [
        OpponentRow("draw", "bob/counter", 12, 7, 1, 4),
        OpponentRow("a b&c'd+é/<x>", "o'brien/x&y", 3, 0, 3, 0),  # quoted and escaped
        OpponentRow("block", "version 12", 1, 0, 0, 1),  # no stored bot: its text
        OpponentRow("block", "ada/zero", 0, 0, 0, 0),
    ]
    for root in ("", "/arena"):
        with app.test_request_context("/bots/ada/x", base_url=f"http://localhost{root}"):
            written = app.jinja_env.from_string(OPPONENT_ROW).render(
                ref="ada/x y", opponents=opponents
            )
            assert str(opponent_rows("ada/x y", opponents)) == written
