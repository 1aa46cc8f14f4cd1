"""A class's similarity report on the web (web/similarity.py) and in the API
(web/api_reports.py): the copied pair side by side with its matching lines marked, for the
class's teachers and admins only (anonymous: the login page; a student: 403; a stranger,
another class's teacher: 404); the threshold chosen; the JSON with each side's lines."""

from __future__ import annotations

import re

import pytest
from flask import Flask

from arena.service.accounts import Account, create_token
from arena.store.db import Store
from tests.service.test_similarity import OWN, make_class
from tests.web.conftest import logged_in


@pytest.fixture
def actors(store: Store) -> dict[str, object]:
    return dict(make_class(store))


def test_the_teacher_sees_the_pair_side_by_side_with_its_lines_marked(
    app: Flask, actors: dict[str, object]
) -> None:
    page = logged_in(app, "teacher").get("/classes/5b/similarity")
    assert page.status_code == 200
    html = page.get_data(as_text=True)
    assert "Similar sources in 5b" in html and "4 of 5 students have a bot" in html
    assert "ann/mine v2" in html and "bob/copied v1" in html and "cy/other" not in html
    assert 'href="/bots/ann/mine/v2/source"' in html
    marked = re.findall(r'<span class="ln match"><span class="no">(\d+)</span>', html)
    lines = len(OWN.splitlines())
    assert marked[:lines] == [str(n) for n in range(1, lines + 1)]  # ann's side, every line
    assert html.count('<section class="pair"') == 1  # one pair side by side at a time
    assert 'href="/classes/5b/similarity?threshold=0.5&amp;pair=1#pair" aria-current="true"' in html
    assert logged_in(app, "teacher").get("/classes/5b/similarity?pair=2").status_code == 404
    assert logged_in(app, "teacher").get("/classes/5b/similarity?pair=x").status_code == 404
    none = logged_in(app, "admin").get("/classes/5b/similarity?threshold=1")
    assert none.status_code == 200
    assert "No pair of students has more than 100% of a source in common" in none.get_data(
        as_text=True
    )
    bad = logged_in(app, "teacher").get("/classes/5b/similarity?threshold=2")
    assert bad.status_code == 400 and "from 0 to 1" in bad.get_data(as_text=True)


@pytest.mark.parametrize(
    ("who", "status"),
    [
        (None, 302),  # the login page
        ("user", 404),
        ("ann", 403),
        ("teacher2", 404),
        ("teacher", 200),
        ("admin", 200),
    ],
)
def test_who_sees_the_page(
    app: Flask, actors: dict[str, object], who: str | None, status: int
) -> None:
    reply = logged_in(app, who).get("/classes/5b/similarity")
    assert reply.status_code == status
    if status != 200:
        assert "bob/copied" not in reply.get_data(as_text=True)


def test_the_api_gives_the_pairs_with_their_lines(
    app: Flask, store: Store, actors: dict[str, object]
) -> None:
    client = app.test_client()

    def ask(who: str, query: str = "") -> tuple[int, dict[str, object]]:
        account = actors[who]
        assert isinstance(account, Account)
        token = create_token(store, account.id, "r", ["read"])
        reply = client.get(
            f"/api/v1/classes/5b/similarity{query}", headers={"Authorization": f"Bearer {token}"}
        )
        return reply.status_code, reply.get_json()

    status, body = ask("teacher")
    assert status == 200
    assert (body["class_name"], body["students"], body["compared"]) == ("5b", 5, 4)
    pairs = body["pairs"]
    assert isinstance(pairs, list) and len(pairs) == 1
    assert pairs[0]["a"]["student"] == "ann" and pairs[0]["b"]["student"] == "bob"
    assert pairs[0]["a"]["lines"] == [[1, len(OWN.splitlines())]]
    assert pairs[0]["a"]["source"] == "/api/v1/bots/ann/mine/versions/2/source"
    assert ask("ann")[0] == 403 and ask("teacher2")[0] == 404 and ask("user")[0] == 404
    status, body = ask("teacher", "?threshold=7")
    assert status == 422
    assert client.get("/api/v1/classes/5b/similarity").status_code == 401
    paths = client.get("/api/v1/openapi.json").get_json()["paths"]
    assert "/api/v1/classes/{name}/similarity" in paths
