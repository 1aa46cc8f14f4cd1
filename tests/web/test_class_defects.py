"""The smaller defects of a class's school day (issue 30, item 6), each seen by a tester
and each failing before its fix: joining again, an expired code's sentence, a file name's
case, a slow bot's limit, the join code's hours, the admins' teacher requests, a double
submit."""

from __future__ import annotations

import io
import re
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from celery import Celery
from flask import Flask
from sqlalchemy import func, select

from arena.match.lineup import check_bot
from arena.match.verdicts import TimeControl
from arena.service import assignments as assign
from arena.service import classes as cls
from arena.service.accounts import Account, authenticate, create_account
from arena.service.classes import NewClass, find_class
from arena.service.role_requests import request_role
from arena.store.db import Store
from arena.store.models import Submission, Tournament
from tests.paths import DOCS, REFERENCE_BOTS
from tests.web.conftest import HASHER, PASSWORD, csrf_token, logged_in

GREEDY = (REFERENCE_BOTS / "greedy.py").read_text()


def _account(store: Store, name: str) -> Account:
    found = authenticate(store, name, PASSWORD, hasher=HASHER)
    assert found is not None
    return found


@pytest.fixture
def school(store: Store) -> Account:
    """tess teaches maths; stan is a user, root an admin."""
    for name, role in (("tess", "teacher"), ("stan", "user"), ("root", "admin")):
        create_account(store, name, PASSWORD, role=role, hasher=HASHER)
    tess = _account(store, "tess")
    cls.create_class(store, tess, NewClass(name="maths"))
    return tess


def _flashes(page: str) -> list[str]:
    block = re.search(r'<ul class="flashes"[^>]*>(.*?)</ul>', page, re.S)
    return [] if block is None else re.findall(r"<li>(.*?)</li>", block.group(1), re.S)


def test_joining_again_says_you_are_in_the_class_already(
    app: Flask, store: Store, school: Account
) -> None:
    # Before: going back and pressing Join again said "You joined the class maths." to a
    # member, as if something had happened.
    code = find_class(store, "maths").join_code
    stan = logged_in(app, "stan")
    path = f"/join/{code}"
    first = stan.post(path, data={"csrf_token": csrf_token(stan, path)}, follow_redirects=True)
    assert "You joined the class maths." in _flashes(first.get_data(as_text=True))
    again = stan.post(path, data={"csrf_token": csrf_token(stan, path)}, follow_redirects=True)
    assert _flashes(again.get_data(as_text=True)) == ["You are in maths already."]


def test_an_expired_codes_sentence_is_said_once(app: Flask, store: Store, school: Account) -> None:
    # Before: the flash and the page's own warning both said it, one under the other.
    code = find_class(store, "maths").join_code
    assert code is not None
    client = app.test_client()
    path = f"/join/{code}"
    token = csrf_token(client, path)
    cls.rotate_join_code(
        store, school, "maths", hours=0.05, now=datetime.now(UTC) - timedelta(hours=1)
    )
    code = find_class(store, "maths").join_code
    path = f"/join/{code}"
    reply = client.post(
        path,
        data={
            "csrf_token": token,
            "pseudonym": "late",
            "password": "a long passphrase",
            "confirm": "a long passphrase",
        },
    )
    page = reply.get_data(as_text=True)
    assert reply.status_code == 400
    assert page.count("This join code has expired") == 1, page


def test_an_upload_named_e_py_is_called_e_py(app: Flask, store: Store, school: Account) -> None:
    # Before: the upload form's refusal capitalised the sentence's first letter: "E.py is
    # empty."
    client = logged_in(app, "stan")
    form = {"csrf_token": csrf_token(client, "/upload"), "source": (io.BytesIO(b""), "e.py")}
    reply = client.post("/upload", data=form, content_type="multipart/form-data")
    page = reply.get_data(as_text=True)
    assert reply.status_code == 400 and "e.py is empty." in page and "E.py" not in page


HANGS = """NAME = "hangs"


def play(observation):
    import time

    time.sleep(3600)
"""


def test_a_slow_bots_rejection_says_the_limit_it_broke_and_whose(
    store: Store, school: Account, tmp_path: Path
) -> None:
    # Before: "timeout under block: no reply in time", checked at the site's 3000 ms wall
    # time whatever the assignment's own limit (1000 ms) was.
    from arena.service.uploads import check_time, rejection

    store.add_bot_version("reference", "random", (REFERENCE_BOTS / "random.py").read_text(), {})
    row = assign.create_assignment(store, school, assign.NewAssignment(
        class_name="maths", name="quick", references=("reference/random",),
        grades=(("C", ("random",)), ("F", ())), move_ms=250,
        deadline=datetime.now(UTC) + timedelta(days=1),
    ))  # fmt: skip
    control, whose = check_time(store, "assignment", row.id)
    assert control.move_seconds == 0.25 and whose == "the assignment's limit"
    assert check_time(store, "placement", None) == (TimeControl(), "the check's limit")
    path = tmp_path / "hangs.py"
    path.write_text(HANGS)
    quick = TimeControl(move_seconds=0.25, bank_seconds=0.1)  # a wall bank of 0.3 s: quick
    (_, report), *_ = list(check_bot(str(path), sandboxed=False, time_control=quick, games=1))
    said = rejection(report, whose)
    assert said.startswith("timeout under ")
    assert "no reply within the time control (250 ms of CPU time a move" in said, said
    assert said.endswith("), the assignment's limit"), said


def test_the_join_codes_hours_are_bounded_alike_in_the_forms_the_server_and_the_docs(
    app: Flask, store: Store, school: Account
) -> None:
    # Before: the form allowed 1-8760 hours, the server 0-720, the docs 0.05 h to 30 days.
    teacher = logged_in(app, "tess")
    for page in ("/classes/new", "/classes/maths/join-code"):
        found = re.search(
            r'<input name="hours" type="number" min="([\d.]+)" max="([\d.]+)"',
            teacher.get(page).get_data(as_text=True),
        )
        assert found is not None, page
        assert (float(found[1]), float(found[2])) == (cls.MIN_JOIN_HOURS, cls.MAX_JOIN_HOURS)
    docs = (DOCS / "classes.md").read_text()
    assert f"{cls.MIN_JOIN_HOURS:g} to {cls.MAX_JOIN_HOURS:g} hours" in docs
    for hours in (cls.MIN_JOIN_HOURS, cls.MAX_JOIN_HOURS):
        cls.rotate_join_code(store, school, "maths", hours=hours)
    for hours in (0.04, 720.5, 0):
        with pytest.raises(cls.ClassError, match=r"a join code lasts 0\.05 to 720 hours"):
            cls.rotate_join_code(store, school, "maths", hours=hours)
    with pytest.raises(cls.ClassError, match=r"0.05 to 720 hours \(or 0: none yet\), not 721"):
        cls.create_class(store, school, NewClass(name="late", join_hours=721))


def test_an_admin_sees_the_teacher_requests_waiting_on_every_page(
    app: Flask, store: Store, school: Account
) -> None:
    # Before: only /admin/users showed them, a page an admin has no reason to open.
    root = logged_in(app, "root")
    assert "teacher request" not in root.get("/").get_data(as_text=True)
    assert request_role(store, _account(store, "stan"), "teacher") == "requested"
    for path in ("/", "/classes", "/bots"):
        page = root.get(path).get_data(as_text=True)
        assert '<a href="/admin/users" class="badge"' in page and "1 teacher request<" in page
    assert "teacher request" not in logged_in(app, "tess").get("/").get_data(as_text=True)


@pytest.fixture
def celery(url: str, tmp_path: Path) -> object:
    """A broker no worker reads: a gauntlet's matches wait in it."""
    from arena.service.broker import make_app, using

    with using(make_app(f"filesystem://{tmp_path / 'broker'}", None, url)) as app:
        yield app


@pytest.mark.backends("sqlite", "postgresql")
def test_a_double_submit_is_one_submission_with_one_gauntlet(
    app: Flask, store: Store, school: Account, celery: Celery
) -> None:
    # A stored version submitted twice at once (a double click) made two submissions, each
    # playing its own gauntlet. A file sent twice was one already (the intake's repeat key).
    store.add_bot_version("reference", "random", (REFERENCE_BOTS / "random.py").read_text(), {})
    assign.create_assignment(store, school, assign.NewAssignment(
        class_name="maths", name="hw", references=("reference/random",),
        grades=(("C", ("random",)), ("F", ())), deadline=datetime.now(UTC) + timedelta(days=1),
    ))  # fmt: skip
    code = find_class(store, "maths").join_code
    assert code is not None
    cls.join_as(store, _account(store, "stan"), code)
    store.add_bot_version("stan", "mine", GREEDY, {})
    clients = [logged_in(app, "stan") for _ in range(2)]
    path = "/classes/maths/assignments/hw"
    tokens = [csrf_token(c, path) for c in clients]
    start = threading.Barrier(2)
    replies: list[int] = []

    def submit(n: int, data: dict[str, object]) -> None:
        start.wait()
        reply = clients[n].post(f"{path}/submit", data=data, content_type="multipart/form-data")
        replies.append(reply.status_code)

    file = GREEDY.encode() + b"\n# file\n"
    forms = (
        lambda n: {"csrf_token": tokens[n], "version": "mine"},
        lambda n: {"csrf_token": tokens[n], "source": (io.BytesIO(file), "g.py")},
    )
    for form in forms:
        threads = [threading.Thread(target=submit, args=(n, form(n))) for n in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert replies == [303] * 4
    with store.read() as session:
        assert session.scalar(select(func.count()).select_from(Submission)) == 2  # one each
        gauntlets = session.scalar(
            select(func.count()).select_from(Tournament).where(Tournament.format == "compare")
        )
    assert gauntlets is not None and gauntlets <= 1  # the version's; the file's waits its check
