"""Issue 34's "done when", walked on the web as a Java class and a C++ olympiad group would:
an organiser offers java and cpp in a competition's form, a .java and a .cpp enter it through
the page and play on its ladder; a teacher's assignment takes cpp, a student submits a .cpp
that is graded against the references; a broken .cpp upload's report shows g++'s lines.

Each check runs in the sandbox as the worker's task does (called here in-process), the
sources compiled there; the matches reuse the artefacts the checks compiled (the compile
cache is the machine's: later runs of this test compile nothing)."""

from __future__ import annotations

import io
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import select

from arena.service import assignments as assign
from arena.service.accounts import create_account, create_token
from arena.service.assignments import NewAssignment
from arena.service.classes import NewClass, create_class, join_class
from arena.service.clock import tick_competition
from arena.service.matches import Config
from arena.service.work import accept_upload
from arena.store.accounts import user_id_named
from arena.store.db import Store
from arena.store.models import Competition, Match, Submission
from tests.paths import REFERENCE_BOTS
from tests.web.conftest import HASHER, PASSWORD, csrf_token, logged_in, play_pending

NOW = datetime.now(UTC).replace(microsecond=0)


def _post_file(client: FlaskClient, path: str, page: str, filename: str, data: bytes) -> int:
    """Post ``data`` as ``filename`` through the form on ``page``; the reply's status."""
    form = {"source": (io.BytesIO(data), filename), "csrf_token": csrf_token(client, page)}
    reply = client.post(path, data=form, content_type="multipart/form-data")
    return reply.status_code


def _last_upload(client: FlaskClient, page: str) -> int:
    found = re.findall(r'href="/uploads/(\d+)"', client.get(page).get_data(as_text=True))
    assert found, f"no upload linked from {page}"
    return int(found[-1])


def _play_pending(store: Store, cache: Path) -> list[Match]:
    """Play every pending match in the sandbox as a worker would; the matches played."""
    played = play_pending(store, cache, sandboxed=True)
    with store.read() as session:
        matches = [session.get(Match, match_id) for match_id in played]
    assert all(match is not None for match in matches)
    return [match for match in matches if match is not None]


@pytest.mark.slow
def test_java_and_cpp_bots_enter_a_competition_and_an_assignment_on_the_web(
    app: Flask, store: Store, tmp_path: Path
) -> None:
    create_account(store, "olga", PASSWORD, role="organiser", hasher=HASHER)
    for name in ("jan", "cyd"):
        create_account(store, name, PASSWORD, hasher=HASHER)
    # the organiser offers java and cpp in the form
    olga = logged_in(app, "olga")
    form = olga.get("/competitions/new").get_data(as_text=True)
    assert 'value="java"' in form and 'value="cpp"' in form
    reply = olga.post("/competitions/new", data={
        "name": "poly", "rules": "draw", "players": "2", "runtimes": ["java", "cpp"],
        "time_zone": "UTC", "deadline": (NOW + timedelta(days=7)).strftime("%Y-%m-%dT%H:%M"),
        "csrf_token": csrf_token(olga, "/competitions/new"),
    })  # fmt: skip
    assert reply.status_code == 302, reply.get_data(as_text=True)
    page = olga.get("/competitions/poly").get_data(as_text=True)
    assert "java" in page and "cpp" in page
    # a Java student and a C++ one enter through the page; each check compiles in the sandbox
    for who, filename in (("jan", "Greedy.java"), ("cyd", "greedy.cpp")):
        client = logged_in(app, who)
        data = (REFERENCE_BOTS / filename).read_bytes()
        assert _post_file(client, "/competitions/poly/enter", "/competitions/poly", filename, data)
        upload = _last_upload(client, "/competitions/poly")
        assert accept_upload(store, upload, config=Config()) == "accepted"
        assert "accepted" in client.get(f"/uploads/{upload}").get_data(as_text=True)
    # a python file is refused where only java and cpp are offered, in a sentence
    jan = logged_in(app, "jan")
    greedy_py = (REFERENCE_BOTS / "greedy.py").read_bytes()
    refused = jan.post("/competitions/poly/enter", data={
        "source": (io.BytesIO(greedy_py), "g.py"),
        "csrf_token": csrf_token(jan, "/competitions/poly"),
    }, content_type="multipart/form-data")  # fmt: skip
    assert refused.status_code == 400
    said = "poly takes bots in java (.java files), cpp (.cpp files): g.py is not one."
    assert said in refused.get_data(as_text=True)
    # the clock pairs them on the ladder; the worker plays them, compiled once
    with store.read() as session:
        competition_id = session.scalars(select(Competition.id)).one()
    tick_competition(store, competition_id)
    played = _play_pending(store, tmp_path / "cache")
    assert played, "the clock scheduled no ladder match"
    for match in played:
        assert match.result is not None
        assert [g["verdict"] for g in match.result["games"]] == [None] * len(match.result["games"])
    assert set(played[0].labels or ()) == {"jan-greedy-java-v1", "cyd-greedy-v1"}

    # a teacher's assignment takes cpp; a student submits a .cpp through the page
    store.add_bot_version("reference", "random", (REFERENCE_BOTS / "random.py").read_text(), {})
    teacher = create_account(store, "teacher", PASSWORD, role="teacher", hasher=HASHER)
    row = create_class(store, teacher, NewClass(name="oly", rule_sets=("block",)))
    assert row.join_code is not None
    join_class(store, HASHER, row.join_code, "kim", PASSWORD, "")
    new = NewAssignment(
        class_name="oly", name="hw", deadline=NOW + timedelta(days=7),
        opens=NOW - timedelta(hours=1), references=("reference/random",),
        grades=(("A", ("random",)), ("F", ())), max_games=4, batch=2, runtimes=("cpp",),
    )  # fmt: skip
    assign.create_assignment(store, teacher, new)
    kim = logged_in(app, "kim")
    hw = "/classes/oly/assignments/hw"
    assert ".cpp" in kim.get(hw).get_data(as_text=True)
    greedy_cpp = (REFERENCE_BOTS / "greedy.cpp").read_bytes()
    assert _post_file(kim, f"{hw}/submit", hw, "kim.cpp", greedy_cpp) == 303
    upload = _last_upload(kim, hw)
    assert accept_upload(store, upload, config=Config()) == "accepted"
    gauntlet = _play_pending(store, tmp_path / "cache")  # against random, up to 4 games
    assert gauntlet and all(
        g["verdict"] is None for match in gauntlet if match.result for g in match.result["games"]
    )
    with store.read() as session:
        submission = session.scalars(select(Submission)).one()
    assert submission.status == "graded" and submission.grade in ("A", "F")  # (undecided: F)
    assert "graded" in kim.get(hw).get_data(as_text=True)

    # a broken .cpp: its report shows g++'s lines under the author's file name
    broken = greedy_cpp.replace(b"return", b"retrun", 1)
    assert _post_file(kim, f"{hw}/submit", hw, "kim.cpp", broken) == 303
    upload = _last_upload(kim, hw)
    assert accept_upload(store, upload, config=Config()) == "rejected"
    report = kim.get(f"/uploads/{upload}").get_data(as_text=True)
    assert "It does not compile: the compiler's first lines are below." in report
    assert re.search(r"kim\.cpp:\d+:\d+: error: ", report), report
    assert "/src/" not in report
    kim_id = user_id_named(store, "kim")
    assert kim_id is not None
    token = create_token(store, kim_id, "ci", ["read"])
    api = app.test_client().get(
        f"/api/v1/uploads/{upload}", headers={"Authorization": f"Bearer {token}"}
    )
    message = api.get_json()["message"]
    assert message.startswith("Rejected: it does not compile:\nkim.cpp:")
    assert re.search(r"kim\.cpp:\d+:\d+: error: ", message)
