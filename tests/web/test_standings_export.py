"""Any tournament's standings as CSV (``/tournaments/NAME/standings.csv``, web/tournaments.py)
and as JSON (``GET /api/v1/tournaments/NAME/standings``, web/api_reports.py): the same rows,
best first, as the tournament's page shows them (arena.service.exports)."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
from flask import Flask

from arena.service.accounts import create_account, create_token
from arena.service.exports import STANDINGS_COLUMNS
from arena.store.db import Store
from tests.web.conftest import ENTRANTS, HASHER, PASSWORD, create, play, store_bots


@pytest.fixture
def played(app: Flask, store: Store, tmp_path: Path) -> Flask:
    """The app with a played round robin ``spring`` and an unplayed one called ``日本``."""
    store_bots(store)
    create(store, "spring", ENTRANTS, games=2)
    play(store, "spring", tmp_path)
    create(store, "日本", ENTRANTS[:2], games=2)
    return app


def test_the_standings_csv_is_the_pages_standings_best_first(played: Flask) -> None:
    reply = played.test_client().get("/tournaments/spring/standings.csv")
    assert reply.status_code == 200 and reply.mimetype == "text/csv"
    assert reply.headers["Content-Disposition"] == 'attachment; filename="spring-standings.csv"'
    rows = list(csv.DictReader(io.StringIO(reply.get_data(as_text=True))))
    assert list(rows[0]) == list(STANDINGS_COLUMNS)
    assert [int(r["rank"]) for r in rows] == sorted(int(r["rank"]) for r in rows)
    assert len(rows) == 4 and {r["name"] for r in rows} == {
        "reference/random v1",
        "alice/greedy v1",
        "alice/greedy v2",
        "bob/counter v1",
    }
    assert all(int(r["games"]) == 6 for r in rows)  # 3 opponents, 2 games each
    assert sum(int(r["wins"]) for r in rows) <= 12
    for row in rows:
        assert float(row["rating_low"]) <= float(row["rating"]) <= float(row["rating_high"])
    page = played.test_client().get("/tournaments/spring").get_data(as_text=True)
    assert 'href="/tournaments/spring/standings.csv"' in page


def test_a_name_in_any_script_and_an_unknown_tournament(played: Flask) -> None:
    client = played.test_client()
    reply = client.get("/tournaments/日本/standings.csv")
    assert reply.status_code == 200
    assert reply.headers["Content-Disposition"] == (
        "attachment; filename=\"-standings.csv\"; filename*=UTF-8''%E6%97%A5%E6%9C%AC-standings.csv"
    )
    rows = list(csv.DictReader(io.StringIO(reply.get_data(as_text=True))))
    assert len(rows) == 2 and all(r["games"] == "0" and r["rating"] == "" for r in rows)
    assert client.get("/tournaments/nope/standings.csv").status_code == 404


def test_the_api_gives_the_same_rows_as_json(played: Flask, store: Store) -> None:
    account = create_account(store, "ada", PASSWORD, hasher=HASHER)
    token = create_token(store, account.id, "r", ["read"])
    client = played.test_client()
    auth = {"Authorization": f"Bearer {token}"}
    body = client.get("/api/v1/tournaments/spring/standings", headers=auth).get_json()
    text = client.get("/tournaments/spring/standings.csv").get_data(as_text=True)
    rows = list(csv.DictReader(io.StringIO(text)))
    assert body["tournament"] == "spring" and body["status"] == "done"
    assert [r["name"] for r in body["rows"]] == [r["name"] for r in rows]
    assert [str(r["wins"]) for r in body["rows"]] == [r["wins"] for r in rows]
    missing = client.get("/api/v1/tournaments/nope/standings", headers=auth)
    assert missing.status_code == 404
    assert missing.get_json()["error"]["message"] == "no tournament called 'nope'"
    assert client.get("/api/v1/tournaments/spring/standings").status_code == 401
    paths = client.get("/api/v1/openapi.json").get_json()["paths"]
    assert "/api/v1/tournaments/{name}/standings" in paths
