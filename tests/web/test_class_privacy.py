"""A teacher reads what was submitted to their class, and a private class shows nothing to
strangers (issue 30, item 5 and the security finding; docs/classes.md "Who sees what" and
"A private class"): every page and API route showing a private class's student's bot,
rating, game or tournament answers 404 to anonymous visitors and strangers, and the lists
and leaderboards leave them out; members, teachers and admins see them. Each test failed
before the change it names."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from celery import Celery
from flask import Flask
from sqlalchemy import select
from werkzeug.test import TestResponse

from arena.service import assignments as assign
from arena.service import classes as cls
from arena.service.accounts import Account, authenticate, create_account, create_token
from arena.service.classes import NewClass, create_class, find_class, join_class
from arena.service.competitions import NewCompetition, create_competition, enter_with_version
from arena.service.results import refit_ratings
from arena.store.db import Store
from arena.store.models import Bot, BotVersion, Match, Tournament
from tests.paths import REFERENCE_BOTS
from tests.web.conftest import HASHER, PASSWORD, RULES, create, logged_in, play

GREEDY = (REFERENCE_BOTS / "greedy.py").read_text()
RANDOM = (REFERENCE_BOTS / "random.py").read_text()
COUNTER = (REFERENCE_BOTS / "counter.py").read_text()

#: Who asks (None: anonymous).
WHO = {
    "anonymous": None,
    "stranger": "stan",
    "student": "sam",
    "classmate": "cleo",
    "teacher": "tess",
    "other teacher": "toby",
    "admin": "root",
}


class Asker:
    """Who asks: the web pages with a logged-in session, the API with a bearer token."""

    def __init__(self, app: Flask, store: Store, name: str | None) -> None:
        self.web = logged_in(app, name)
        self.api = app.test_client()
        self.headers = {}
        if name is not None:
            token = create_token(store, _account(store, name).id, "t", ["read", "upload", "run"])
            self.headers = {"Authorization": f"Bearer {token}"}

    def get(self, path: str) -> TestResponse:
        if path.startswith("/api/"):
            return self.api.get(path, headers=self.headers)
        return self.web.get(path)


def _account(store: Store, name: str) -> Account:
    found = authenticate(store, name, PASSWORD, hasher=HASHER)
    assert found is not None
    return found


@pytest.fixture
def celery(url: str, tmp_path: Path) -> Iterator[Celery]:
    """A broker no worker reads: submissions start their gauntlets into it."""
    from arena.service.broker import make_app, using

    with using(make_app(f"filesystem://{tmp_path / 'broker'}", None, url)) as app:
        yield app


@pytest.fixture
def school(store: Store, celery: Celery) -> dict[str, Account]:
    """tess teaches maths (sam and cleo its students), toby teaches art, stan is a user,
    root an admin. sam has greedy v1 (submitted to maths's assignment hw) and counter v1
    (never submitted)."""
    for name, role in (("tess", "teacher"), ("toby", "teacher"), ("root", "admin"),
                       ("stan", "user")):  # fmt: skip
        create_account(store, name, PASSWORD, role=role, hasher=HASHER)
    tess, toby = _account(store, "tess"), _account(store, "toby")
    maths = create_class(store, tess, NewClass(name="maths"))
    create_class(store, toby, NewClass(name="art"))
    assert maths.join_code
    join_class(store, HASHER, maths.join_code, "sam", PASSWORD)
    join_class(store, HASHER, maths.join_code, "cleo", PASSWORD)
    store.add_bot_version("reference", "random", RANDOM, {})
    store.add_bot_version("sam", "greedy", GREEDY, {})
    store.add_bot_version("sam", "counter", COUNTER, {})
    store.add_bot_version("cleo", "rando", RANDOM + "\n# cleo\n", {})
    assign.create_assignment(store, tess, assign.NewAssignment(
        class_name="maths", name="hw", references=("reference/random",),
        grades=(("C", ("random",)), ("F", ())),
        deadline=datetime.now(UTC) + timedelta(days=1),
    ))  # fmt: skip
    assign.submit_version(store, _account(store, "sam"), "maths", "hw", "greedy")
    return {"tess": tess, "toby": toby}


# --- the security finding: a teacher reads what was submitted to their class ---------------


def test_a_teacher_reads_a_submission_but_not_a_students_other_bots_nor_competition_entries(
    app: Flask, store: Store, school: dict[str, Account]
) -> None:
    # Before: a teacher read every bot of every student of their classes, competition
    # entries included: a teacher entering a competition read a rival's source before the
    # deadline by having the rival join their class (one click with a code).
    root = _account(store, "root")
    create_competition(store, root, NewCompetition(
        name="cup", rules="block", deadline=datetime.now(UTC) + timedelta(days=3),
    ))  # fmt: skip
    with store.read() as session:
        counter = session.scalar(
            select(BotVersion.id)
            .join(Bot, Bot.id == BotVersion.bot_id)
            .where(Bot.name == "counter")
        )
    assert counter is not None
    enter_with_version(store, _account(store, "sam"), "cup", counter)
    teacher = Asker(app, store, "tess")
    assert teacher.get("/bots/sam/greedy/v1/source").status_code == 200  # submitted
    assert teacher.get("/api/v1/bots/sam/greedy/versions/1/source").status_code == 200
    for path in ("/bots/sam/counter/v1/source", "/api/v1/bots/sam/counter/versions/1/source"):
        reply = teacher.get(path)
        assert reply.status_code == 404, path  # a competition entry: not acknowledged
        assert "def " not in reply.get_data(as_text=True)
    assert logged_in(app, "toby").get("/bots/sam/greedy/v1/source").status_code == 404
    assert logged_in(app, "sam").get("/bots/sam/counter/v1/source").status_code == 200
    assert logged_in(app, "root").get("/bots/sam/counter/v1/source").status_code == 200


def test_the_class_tournament_form_offers_only_what_was_submitted(
    app: Flask, store: Store, school: dict[str, Account]
) -> None:
    # Before: the form offered every bot of every student (competition entries among them)
    # and took any of them; a tournament then made its source the teacher's to read.
    teacher = logged_in(app, "tess")
    form = teacher.get("/tournaments/new?class=maths").get_data(as_text=True)
    assert 'value="sam/greedy@v1"' in form and 'value="reference/random"' in form
    assert "sam/counter" not in form and "cleo/rando" not in form
    from tests.web.conftest import csrf_token

    reply = teacher.post("/tournaments/new?class=maths", data={
        "csrf_token": csrf_token(teacher, "/tournaments/new?class=maths"), "class": "maths",
        "name": "sneaky", "rules": RULES.name, "format": "round-robin", "games": "2",
        "players": "2", "bots": ["sam/counter", "reference/random"],
    })  # fmt: skip
    assert reply.status_code == 403
    assert "the bots submitted to its assignments" in reply.get_data(as_text=True)
    with pytest.raises(cls.ClassError, match="have submitted 1 to its assignments"):
        cls.start_class_tournament(store, school["tess"], "maths", reference=False)
    assert cls.start_class_tournament(store, school["tess"], "maths", reference=True)


# --- a private class ---------------------------------------------------------------------


def _played(store: Store, tmp_path: Path) -> tuple[int, int]:
    """A round robin between sam/greedy, cleo/rando and reference/random, rated; one of
    sam's games (match id, game index)."""
    create(store, "spring", ["sam/greedy", "cleo/rando", "reference/random"], games=2)
    play(store, "spring", tmp_path / "cache")
    refit_ratings(store, RULES)
    with store.read() as session:
        match_id = session.scalars(
            select(Match.id)
            .join(Tournament, Tournament.id == Match.tournament_id)
            .where(Tournament.name == "spring", Match.status == "done")
            .order_by(Match.id)
        ).first()
    assert match_id is not None
    return match_id, 0


def test_a_private_class_shows_nothing_of_its_students_to_strangers(
    app: Flask, store: Store, school: dict[str, Account], tmp_path: Path
) -> None:
    # Before: every student's bots, ratings and games were on the public pages.
    match_id, index = _played(store, tmp_path)
    before = logged_in(app, None)
    assert before.get("/bots/sam/greedy").status_code == 200  # a public class: as any bot
    cls.set_private(store, school["tess"], "maths", True)
    assert find_class(store, "maths").settings["private"] is True
    hidden = [  # every page and API route that shows sam's bot, its rating or a game
        "/bots/sam/greedy", "/api/v1/bots/sam/greedy", "/bots/sam/greedy/v1/source",
        "/api/v1/bots/sam/greedy/versions/1/source",
        f"/games/{match_id}/{index}", f"/games/{match_id}/{index}.json",
        f"/games/{match_id}/{index}.html", f"/games/{match_id}/{index}/state",
        f"/api/v1/games/{match_id}/{index}", "/tournaments/spring",
        "/api/v1/tournaments/spring", "/api/v1/tournaments/spring/matches",
        "/api/v1/tournaments/spring/standings", "/tournaments/spring/standings.csv",
        "/games?bot=sam/greedy",
    ]  # fmt: skip
    lists = [
        "/bots", "/api/v1/bots", f"/leaderboards/{RULES.name}",
        f"/api/v1/leaderboards/{RULES.name}", f"/leaderboards/{RULES.name}/export.csv",
        f"/leaderboards/{RULES.name}/export.json", "/games", "/api/v1/games", "/tournaments",
        "/api/v1/tournaments", "/",
    ]  # fmt: skip
    for who in ("anonymous", "stranger", "other teacher"):
        client = Asker(app, store, WHO[who])
        for path in hidden:
            reply = client.get(path)
            if path.startswith("/games?"):  # a filter naming a hidden bot: as a bot of none
                assert reply.status_code == 400, (who, path)
                assert "No bot sam/greedy." in reply.get_data(as_text=True), (who, path)
                continue
            # the API answers no one without a token (401) before any lookup
            expected = 401 if who == "anonymous" and path.startswith("/api/") else 404
            assert reply.status_code == expected, (who, path, reply.status_code)
            body = reply.get_data(as_text=True)
            assert "def " not in body and "rating" not in body, (who, path)
        for path in lists:
            text = client.get(path).get_data(as_text=True)
            assert "sam" not in text and "cleo" not in text, (who, path)
            assert "spring" not in text, (who, path)
        board = client.get(f"/leaderboards/{RULES.name}/export.json").get_json()
        assert [r["owner"] for r in board["rows"]] == ["reference"]
        assert board["rows"][0]["rank_best"] == 1  # ranked among the rows shown
    for who in ("student", "classmate", "teacher", "admin"):
        client = Asker(app, store, WHO[who])
        for path in ("/bots/sam/greedy", f"/games/{match_id}/{index}", "/tournaments/spring"):
            assert client.get(path).status_code == 200, (who, path)
        assert "sam/greedy" in client.get("/bots").get_data(as_text=True), who
        board = client.get(f"/api/v1/leaderboards/{RULES.name}").get_json()
        assert {r["owner"] for r in board["rows"]} == {"sam", "cleo", "reference"}, who
    cls.set_private(store, school["tess"], "maths", False)
    assert logged_in(app, None).get("/bots/sam/greedy").status_code == 200


def test_a_teacher_makes_a_class_private_on_its_page_and_the_api(
    app: Flask, store: Store, school: dict[str, Account]
) -> None:
    from tests.web.conftest import csrf_token

    teacher = logged_in(app, "tess")
    page = teacher.get("/classes/maths").get_data(as_text=True)
    assert 'name="private"' in page
    reply = teacher.post("/classes/maths/privacy", data={
        "csrf_token": csrf_token(teacher, "/classes/maths"), "private": "1",
    })  # fmt: skip
    assert reply.status_code == 302
    assert find_class(store, "maths").settings["private"] is True
    assert logged_in(app, None).get("/bots/sam/greedy").status_code == 404
    for who in ("student", "other teacher", "stranger"):
        client = logged_in(app, WHO[who])
        assert client.post("/classes/maths/privacy", data={
            "csrf_token": csrf_token(client, "/"), "private": "0",
        }).status_code in (403, 404), who  # fmt: skip
    assert find_class(store, "maths").settings["private"] is True
    answer = app.test_client().put(
        "/api/v1/classes/maths/privacy", json={"private": False},
        headers=Asker(app, store, "tess").headers,
    )  # fmt: skip
    assert answer.status_code == 200 and answer.get_json()["settings"]["private"] is False
    assert logged_in(app, None).get("/bots/sam/greedy").status_code == 200
    made = teacher.post("/classes/new", data={
        "csrf_token": csrf_token(teacher, "/classes/new"), "name": "quiet",
        "rules": "block", "hours": "24", "private": "1",
    })  # fmt: skip
    assert made.status_code == 302, made.get_data(as_text=True)
    assert find_class(store, "quiet").settings["private"] is True
