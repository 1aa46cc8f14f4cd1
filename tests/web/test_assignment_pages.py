"""The assignment pages (web/assignments.py) on both databases: the teacher's creation form
(references, thresholds, the deadline in the teacher's zone; a bad line refused in a
sentence), an assignment's page as each role sees it (the teacher's grade table with real
names, verdicts, Elo intervals, late marks and the CSV; a student's own submissions only,
never another's, nor a real name), the live part, submitting (a file, a version; a teacher
or a stranger refused), the grade CSV; every route for anonymous, a stranger, a student,
another student, the teacher, another class's teacher and an admin.

The class is built once a test process (``seed``): its gauntlets played here by the
worker's own code, unsandboxed (the reference bots are trusted), each match followed by the
hooks a worker runs."""

from __future__ import annotations

import csv
import io
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import func, select

from arena.service import assignments as assign
from arena.service.accounts import create_account, create_token
from arena.service.assignments import NewAssignment
from arena.service.broker import make_app as make_celery
from arena.service.broker import using
from arena.service.classes import NewClass, create_class, join_class
from arena.service.compares import stop_if_decided
from arena.service.matches import Config, run_match
from arena.store.accounts import user_id_named
from arena.store.db import Store
from arena.store.models import Match, Submission, Tournament
from tests.paths import REFERENCE_BOTS
from tests.uploads import submit_upload
from tests.web.conftest import HASHER, PASSWORD, csrf_token, logged_in

NOW = datetime.now(UTC).replace(microsecond=0)
DEADLINE = NOW + timedelta(days=7)
GREEDY = (REFERENCE_BOTS / "greedy.py").read_text()
RANDOM = (REFERENCE_BOTS / "random.py").read_text()
#: Who asks: ann and bob are students of 5b, "teacher" teaches it, "teacher2" teaches 6a,
#: "stranger" is in no class.
ROLES = ("anonymous", "stranger", "ann", "bob", "teacher", "teacher2", "admin")


def play_all(store: Store, cache: Path, prefix: str = "") -> None:
    """Play every pending match (of the tournaments whose names start with ``prefix``) in
    order as a worker would, with the worker's hooks."""
    config = Config(bot_cache=cache)
    while True:
        with store.read() as session:
            pending = session.scalar(
                select(Match.id)
                .join(Tournament, Tournament.id == Match.tournament_id)
                .where(Match.status == "pending", Tournament.name.startswith(prefix))
                .order_by(Match.id)
                .limit(1)
            )
        if pending is None:
            return
        run_match(store, pending, config=config, sandboxed=False)
        stop_if_decided(store, pending)
        assign.grade_after_match(store, pending)


def graded_class(store: Store, directory: Path) -> dict[str, Any]:
    """Class 5b (teacher ``teacher``; students ann "Ada Lovelace", bob "Bob Secret", cy,
    dan), class 6a (teacher2), a stranger, an admin; the reference bots; assignment hw1
    (references random and greedy, A: greedy, C: random, F) with ann's greedy graded (it
    beats random), bob's random being graded (its matches not played) and a late one of
    his, cy's upload still checked; dan submitted nothing."""
    for bot in ("random", "greedy", "counter"):
        store.add_bot_version("reference", bot, (REFERENCE_BOTS / f"{bot}.py").read_text(), {})
    teacher = create_account(store, "teacher", PASSWORD, role="teacher", hasher=HASHER)
    teacher2 = create_account(store, "teacher2", PASSWORD, role="teacher", hasher=HASHER)
    create_account(store, "admin", PASSWORD, role="admin", hasher=HASHER)
    create_account(store, "stranger", PASSWORD, hasher=HASHER)
    row = create_class(store, teacher, NewClass(name="5b", rule_sets=("block", "draw")))
    create_class(store, teacher2, NewClass(name="6a"))
    assert row.join_code is not None
    named = (("ann", "Ada Lovelace"), ("bob", "Bob Secret"), ("cy", ""), ("dan", ""))
    students = {
        name: join_class(store, HASHER, row.join_code, name, PASSWORD, real) for name, real in named
    }
    new = NewAssignment(
        class_name="5b", name="hw1", deadline=DEADLINE, opens=NOW - timedelta(hours=1),
        references=("reference/random", "reference/greedy"),
        grades=(("A", ("greedy",)), ("C", ("random",)), ("F", ())),
        max_games=48, elo1=100.0, batch=16, move_ms=2000, time_zone="Europe/Paris",
        description="Beat the reference bots.",
    )  # fmt: skip
    assign.create_assignment(store, teacher, new)
    store.add_bot_version("ann", "mine", GREEDY + "\n# ann\n", {})
    store.add_bot_version("bob", "rando", RANDOM + "\n# bob\n", {})
    store.add_bot_version("bob", "rando", RANDOM + "\n# bob, late\n", {})
    with using(make_celery(f"filesystem://{directory / 'broker'}", None, None)):
        assign.submit_version(store, students["ann"], "5b", "hw1", "mine")
        # 64 games in 4 matches (a batch of 16 deal groups: one look decides both tests, where
        # batches of 4 took 16 matches, twice the seed's time, most of it the pipes' round trips)
        play_all(store, directory / "cache")
        assign.submit_version(store, students["bob"], "5b", "hw1", "rando@1")
        assign.submit_version(store, students["bob"], "5b", "hw1", "rando@2",
                              now=DEADLINE + timedelta(hours=2))  # fmt: skip
        submit_upload(store, students["cy"], "5b", "hw1", "cy.py", GREEDY.encode())
    return {"ann_source": GREEDY + "\n# ann\n"}


pytestmark = pytest.mark.seed(build=graded_class)


def _text(client: FlaskClient, path: str) -> tuple[int, str]:
    reply = client.get(path)
    return reply.status_code, reply.get_data(as_text=True)


# --- every route, every role ----------------------------------------------------------------

EXPECTED: dict[str, dict[str, int]] = {
    "/classes/5b/assignments/new": {
        "anonymous": 302, "stranger": 404, "ann": 403, "bob": 403, "teacher": 200,
        "teacher2": 404, "admin": 200,
    },
    "/classes/5b/assignments/hw1": {
        "anonymous": 302, "stranger": 404, "ann": 200, "bob": 200, "teacher": 200,
        "teacher2": 404, "admin": 200,
    },
    "/classes/5b/assignments/hw1/live": {
        "anonymous": 302, "stranger": 404, "ann": 200, "bob": 200, "teacher": 200,
        "teacher2": 404, "admin": 200,
    },
    "/classes/5b/assignments/hw1/grades.csv": {
        "anonymous": 302, "stranger": 404, "ann": 403, "bob": 403, "teacher": 200,
        "teacher2": 404, "admin": 200,
    },
}  # fmt: skip


@pytest.mark.parametrize("path", list(EXPECTED))
def test_every_route_for_every_role(app: Flask, seeded: object, path: str) -> None:
    clients = {who: logged_in(app, None if who == "anonymous" else who) for who in ROLES}
    said = {who: client.get(path).status_code for who, client in clients.items()}
    assert said == EXPECTED[path]
    # nothing of another's for a refused caller
    for who in ("stranger", "teacher2"):
        _, text = _text(clients[who], path)
        assert "Ada Lovelace" not in text and "ann/mine" not in text


def test_a_missing_assignment_or_class_is_404(app: Flask, seeded: object) -> None:
    teacher = logged_in(app, "teacher")
    assert teacher.get("/classes/5b/assignments/nope").status_code == 404
    assert teacher.get("/classes/nope/assignments/hw1").status_code == 404
    assert teacher.get("/classes/nope/assignments/new").status_code == 404
    assert teacher.get("/classes/5b/assignments/nope/grades.csv").status_code == 404


# --- the teacher's page ---------------------------------------------------------------------


def test_the_teacher_sees_every_students_grade_with_verdicts(app: Flask, seeded: object) -> None:
    status, page = _text(logged_in(app, "teacher"), "/classes/5b/assignments/hw1")
    assert status == 200
    rows = re.findall(r"<tr class=\"([\w -]+)\">\n<td>(\w+)</td><td>([^<]*)</td>", page)
    assert rows == [("graded", "ann", "Ada Lovelace"), ("grading", "bob", "Bob Secret"),
                    ("checking", "cy", ""), ("not-submitted", "dan", "")]  # fmt: skip
    assert '<span class="state not-submitted">did not submit</span>' in page  # dan
    assert '<span class="state checking">checking</span>' in page  # cy's upload
    assert 'href="/classes/5b/assignments/hw1/grades.csv"' in page
    assert 'href="/classes/5b/assignments/hw1/grades.csv?format=canvas"' in page
    assert 'href="/classes/5b/assignments/hw1/grades.csv?format=moodle&amp;by=email"' in page
    assert "Points: A 100, C 50, F 0" in page
    assert re.search(r'<td class="num">(100|50)</td>', page)  # ann's points
    assert re.search(r'<span class="outcome pass"><a href="/compares/compare-ann-[^"]+"', page)
    assert re.search(r"\[[+-]\d+, [+-]\d+\]", page)  # an Elo interval
    assert '<span class="grade">C</span>' in page or '<span class="grade">A</span>' in page
    assert "Europe/Paris" not in page or "CET" in page  # dates in the assignment's zone
    assert re.search(r"deadline <strong>\d{4}-\d\d-\d\d \d\d:\d\d CET</strong>", page)
    assert '<span class="tag late"' in page  # bob's late one, in the submissions
    assert 'href="/classes/5b/similarity"' in page
    # the live part is there while cy's upload is checked
    assert 'hx-get="/classes/5b/assignments/hw1/live"' in page


def test_the_grade_csv_has_the_contracts_columns(app: Flask, seeded: object) -> None:
    reply = logged_in(app, "teacher").get("/classes/5b/assignments/hw1/grades.csv")
    assert reply.mimetype == "text/csv"
    assert reply.headers["Content-Disposition"] == 'attachment; filename="5b-hw1-grades.csv"'
    data = reply.get_data()
    assert data.startswith(b"\xef\xbb\xbf")  # UTF-8 with a BOM: Excel reads it as such
    rows = {r["student"]: r for r in csv.DictReader(io.StringIO(data.decode("utf-8-sig")))}
    assert list(rows) == ["ann", "bob", "cy", "dan"]
    ann = rows["ann"]
    assert list(ann)[:7] == ["student", "real_name", "school_id", "email", "state", "grade",
                             "points"]  # fmt: skip
    assert list(ann)[-5:] == ["greedy_score", "greedy_elo", "greedy_elo_low",
                              "greedy_elo_high", "greedy_verdict"]  # fmt: skip
    assert ann["real_name"] == "Ada Lovelace" and ann["version"] == "ann/mine@1"
    assert ann["random_verdict"] == "pass" and ann["grade"] in ("A", "C")
    assert ann["points"] == {"A": "100.0", "C": "50.0"}[ann["grade"]]
    # a decided test's figures are never blank (an infinite end is the games' bound)
    low, elo, high = (float(ann[f"random_elo{end}"]) for end in ("_low", "", "_high"))
    assert low <= elo <= high
    assert len(ann["sha256"]) == 64 and ann["late"] == "False"
    assert rows["bob"]["version"] == "bob/rando@1" and rows["bob"]["grade"] == ""  # grading
    assert rows["bob"]["random_verdict"] == "running" and rows["bob"]["state"] == "grading"
    assert rows["cy"]["state"] == "checking" and rows["cy"]["points"] == ""
    assert rows["dan"]["version"] == "" and rows["dan"]["grade"] == ""
    assert rows["dan"]["state"] == "not submitted"


def test_the_gradebook_files_are_canvas_and_moodles(app: Flask, seeded: object) -> None:
    teacher = logged_in(app, "teacher")
    reply = teacher.get("/classes/5b/assignments/hw1/grades.csv?format=canvas")
    assert reply.headers["Content-Disposition"] == 'attachment; filename="5b-hw1-canvas.csv"'
    lines = list(csv.reader(io.StringIO(reply.get_data().decode("utf-8-sig"))))
    assert lines[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "hw1"]
    assert lines[1][0].strip() == "Points Possible" and lines[1][5] == "100.0"
    assert [line[0] for line in lines[2:]] == ["Ada Lovelace", "Bob Secret", "cy", "dan"]
    assert lines[2][5] in ("100.0", "50.0") and lines[3][5] == ""  # bob is being graded
    # no school ids yet (the roster import adds them): Moodle's file leaves all out, says so
    reply = teacher.get("/classes/5b/assignments/hw1/grades.csv?format=moodle&by=email")
    assert reply.get_data().decode("utf-8-sig").splitlines() == [
        "ID number,Email address,Full name,hw1,Feedback"
    ]
    assert reply.headers["X-Left-Out"] == "4"
    reply = teacher.get("/classes/5b/assignments/hw1/grades.csv?format=xls")
    assert reply.status_code == 400
    assert reply.get_data(as_text=True) == "The grades come as table, canvas, moodle: not 'xls'."


# --- the students' pages ----------------------------------------------------------------------


def test_a_student_sees_only_their_own_submissions(app: Flask, seeded: object) -> None:
    status, ann = _text(logged_in(app, "ann"), "/classes/5b/assignments/hw1")
    assert status == 200
    assert "ann/mine@1" in ann and "Your submissions" in ann
    assert re.search(r'<span class="outcome pass"><a href="/compares/compare-ann-', ann)
    for secret in ("bob/rando", "Bob Secret", "Ada Lovelace", "cy.py", "compare-bob", "dan"):
        assert secret not in ann, secret
    assert 'name="source"' in ann and 'value="mine@1"' in ann  # the submit form, her versions
    status, bob = _text(logged_in(app, "bob"), "/classes/5b/assignments/hw1")
    assert "bob/rando@2" in bob and "bob/rando@1" in bob and "ann/mine" not in bob
    assert '<span class="tag late">late</span>' in bob
    assert "Bob Secret" not in bob and "compare-ann" not in bob
    _, live = _text(logged_in(app, "ann"), "/classes/5b/assignments/hw1/live")
    assert live.startswith('<section id="mine"') and "bob" not in live


def _submissions(store: Store) -> int:
    with store.read() as session:
        return int(session.scalar(select(func.count()).select_from(Submission)) or 0)


def test_a_student_submits_a_file_and_a_version(app: Flask, store: Store, seeded: object) -> None:
    dan = logged_in(app, "dan")
    token = csrf_token(dan, "/classes/5b/assignments/hw1")
    _, form = _text(dan, "/classes/5b/assignments/hw1")
    once = re.search(r'name="upload_token" value="([^"]+)"', form)
    assert once is not None  # the form's one-time token: sent twice, one submission
    before = _submissions(store)
    for _ in range(2):
        reply = dan.post(
            "/classes/5b/assignments/hw1/submit",
            data={"source": (io.BytesIO(GREEDY.encode() + b"\n# dan\n"), "dans.py"),
                  "bot_name": "dans", "csrf_token": token, "upload_token": once.group(1)},
            content_type="multipart/form-data",
        )  # fmt: skip
        assert reply.status_code == 303
    _, page = _text(dan, "/classes/5b/assignments/hw1")
    assert "Submitted: it is checked" in page and "checking" in page
    assert "Already received: dans.py as upload" in page
    assert _submissions(store) == before + 1
    assert 'hx-get="/classes/5b/assignments/hw1/live"' in page  # it follows the check
    again = dan.post(
        "/classes/5b/assignments/hw1/submit", data={"version": "nothing", "csrf_token": token}
    )
    assert again.status_code == 400 and "You have no bot called nothing." in again.get_data(
        as_text=True
    )
    empty = dan.post("/classes/5b/assignments/hw1/submit", data={"csrf_token": token})
    assert empty.status_code == 400 and "Choose a bot file to upload" in empty.get_data(
        as_text=True
    )


@pytest.mark.parametrize(("who", "status"), [("anonymous", 302), ("stranger", 404),
                                             ("teacher", 400), ("teacher2", 404)])  # fmt: skip
def test_only_the_classes_students_submit(
    app: Flask, store: Store, seeded: object, who: str, status: int
) -> None:
    client = logged_in(app, None if who == "anonymous" else who)
    token = csrf_token(client, "/login")
    with store.read() as session:
        before = len(session.scalars(select(Tournament.id)).all())
    reply = client.post(
        "/classes/5b/assignments/hw1/submit",
        data={"source": (io.BytesIO(GREEDY.encode()), "g.py"), "csrf_token": token},
        content_type="multipart/form-data",
    )
    assert reply.status_code == status
    with store.read() as session:
        assert len(session.scalars(select(Tournament.id)).all()) == before


# --- the creation form ----------------------------------------------------------------------


def test_the_teacher_creates_an_assignment_in_their_zone(app: Flask, seeded: object) -> None:
    teacher = logged_in(app, "teacher")
    status, form = _text(teacher, "/classes/5b/assignments/new")
    assert status == 200
    assert 'value="reference/greedy" checked' in form and 'value="reference/counter"' in form
    assert '<option value="draw">' in form and "A: counter" in form
    local = (NOW + timedelta(days=3)).astimezone().strftime("%Y-%m-%dT%H:%M")
    fields = {
        "name": "hw2", "rules": "draw", "time_zone": "America/New_York", "deadline": local,
        "references": ["reference/random", "reference/counter"], "other_references": "",
        "thresholds": "B: counter\nD: random\nF:", "elo1": "30", "alpha": "0.05",
        "beta": "0.1", "max_games": "200", "move_ms": "500", "points": "B=10, D=5, F=1",
        "runtimes": ["python", "javascript"],
        "csrf_token": csrf_token(teacher, "/classes/5b/assignments/new"),
    }  # fmt: skip
    assert 'name="runtimes" value="python-numpy" checked' in form and 'value="100"' in form
    reply = teacher.post("/classes/5b/assignments/new", data=fields)
    assert reply.status_code == 302 and reply.headers["Location"] == "/classes/5b/assignments/hw2"
    _, page = _text(teacher, "/classes/5b/assignments/hw2")
    assert "Assignment hw2 created" in page and "E" in page  # EST/EDT
    assert re.search(r"deadline <strong>[^<]+ E[SD]T</strong>", page)
    assert '<td><span class="grade">B</span></td><td>counter</td>' in page
    bad = teacher.post(
        "/classes/5b/assignments/new", data={**fields, "name": "hw3", "thresholds": "A counter"}
    )
    text = bad.get_data(as_text=True)
    assert bad.status_code == 400 and "Write each grade on a line of its own" in text
    for field, value, said in (
        ("points", "B=10 D=12 F=0", "Grade B (10 points) is worth fewer points than D (12)"),
        ("points", "lots", "Write the points as the best grade&#39;s (e.g. 10)"),
        ("runtimes", [], "Offer one or more of the runtimes python, python-numpy, javascript, cpp"),
    ):
        refused = teacher.post(
            "/classes/5b/assignments/new", data={**fields, "name": "hw3", field: value}
        )
        assert refused.status_code == 400 and said in refused.get_data(as_text=True), said
    assert 'value="hw3"' in text  # the form keeps what was typed
    unknown = teacher.post(
        "/classes/5b/assignments/new", data={**fields, "name": "hw3", "thresholds": "A: nobody\nF:"}
    )
    assert unknown.status_code == 400 and "nobody" in unknown.get_data(as_text=True)


def test_the_class_page_lists_its_assignments(app: Flask, seeded: object) -> None:
    _, teacher = _text(logged_in(app, "teacher"), "/classes/5b")
    assert 'href="/classes/5b/assignments/hw1"' in teacher
    assert 'href="/classes/5b/assignments/new"' in teacher
    assert 'href="/classes/5b/similarity"' in teacher
    assert re.search(r'<td class="num">4</td>', teacher)  # ann, bob twice, cy
    _, ann = _text(logged_in(app, "ann"), "/classes/5b")
    assert 'href="/classes/5b/assignments/hw1"' in ann and "Your grade" in ann
    assert re.search(r'<td class="num">1</td>\n<td><strong>[AC]</strong></td>', ann)
    assert "/assignments/new" not in ann and "/similarity" not in ann
    _, other = _text(logged_in(app, "teacher2"), "/classes/6a")
    assert "None yet." in other and "hw1" not in other


def test_the_api_gives_the_same_grade_csv(app: Flask, store: Store, seeded: object) -> None:
    client = app.test_client()

    def ask(who: str) -> tuple[int, str]:
        user_id = user_id_named(store, who)
        assert user_id is not None
        token = create_token(store, user_id, "r", ["read"])
        reply = client.get(
            "/api/v1/classes/5b/assignments/hw1/grades.csv",
            headers={"Authorization": f"Bearer {token}"},
        )
        return reply.status_code, reply.get_data(as_text=True)

    status, text = ask("teacher")
    page = logged_in(app, "teacher").get("/classes/5b/assignments/hw1/grades.csv")
    assert status == 200 and text == page.get_data(as_text=True)
    assert text.startswith("\ufeffstudent,real_name,school_id,email,state,grade,points,")
    assert ask("ann")[0] == 403 and ask("stranger")[0] == 404 and ask("teacher2")[0] == 404
    assert "Ada Lovelace" not in ask("ann")[1]
    assert client.get("/api/v1/classes/5b/assignments/hw1/grades.csv").status_code == 401


def test_a_grading_compare_is_its_students_and_teachers_only(
    app: Flask, store: Store, seeded: object
) -> None:
    """A submission's tests (compare tournaments) and their games are seen by its student,
    the class's teachers and the admins only (pages and API); the public lists leave them
    out for everyone."""
    from sqlalchemy import select

    with store.read() as session:
        name, match_id = session.execute(
            select(Tournament.name, Match.id)
            .join(Match, Match.tournament_id == Tournament.id)
            .where(Tournament.name.like("compare-ann-%"), Match.status == "done")
            .limit(1)
        ).one()
    pages = (f"/compares/{name}", f"/compares/{name}/live", f"/tournaments/{name}",
             f"/tournaments/{name}/standings.csv", f"/games/{match_id}/0")  # fmt: skip
    clients = {who: logged_in(app, None if who == "anonymous" else who) for who in ROLES}
    for path in pages:  # (reads: each role's one session sees every page)
        said = {who: client.get(path).status_code for who, client in clients.items()}
        assert said == {
            "anonymous": 404, "stranger": 404, "ann": 200, "bob": 404, "teacher": 200,
            "teacher2": 404, "admin": 200,
        }, path  # fmt: skip
    client = app.test_client()
    for who, expected in (("bob", 404), ("ann", 200), ("teacher", 200)):
        user_id = user_id_named(store, who)
        assert user_id is not None
        token = create_token(store, user_id, "r", ["read"])
        for path in (f"/api/v1/compares/{name}", f"/api/v1/tournaments/{name}",
                     f"/api/v1/games/{match_id}/0"):  # fmt: skip
            reply = client.get(path, headers={"Authorization": f"Bearer {token}"})
            assert reply.status_code == expected, (who, path)
    for who in ("anonymous", "ann", "teacher"):
        listed = clients[who]
        assert "compare-ann" not in listed.get("/tournaments").get_data(as_text=True)
        assert "compare-ann" not in listed.get("/games").get_data(as_text=True)
