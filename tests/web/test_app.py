"""The web app's factory (web/app.py) through Flask's test client, on a real SQLite file
database migrated with ``arena db upgrade``'s code: the health check, the home page's list of
tournaments, one store per app. The pages themselves: tests/web/test_pages.py;
tests/test_compose.py serves this app with gunicorn exactly as docker-compose.yml does.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from flask import Flask
from flask.testing import FlaskClient

from arena.engine.rules import PRESETS
from arena.store.db import URL_ENV, Store
from arena.store.models import Tournament
from tests.conftest import Databases
from web import create_app
from web.app import STORE_KEY

# Nothing listens on port 1: the connection is refused at once (connect_timeout bounds it
# on a host that drops the packets instead).
UNREACHABLE_URL = "postgresql+psycopg://x@127.0.0.1:1/x?connect_timeout=1"


@pytest.fixture
def database_url(tmp_path: Path, databases: Databases) -> str:
    """A migrated SQLite database of the test's own (tests/conftest.py)."""
    url, _ = databases.copy(None, tmp_path, None)
    return url


@pytest.fixture
def app(database_url: str) -> Iterator[Flask]:
    app = create_app(database_url)
    app.config["TESTING"] = True
    yield app
    _store(app).close()


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    return app.test_client()


def _store(app: Flask) -> Store:
    store: Store = app.extensions[STORE_KEY]
    return store


def _add_tournament(store: Store, name: str, status: str = "pending") -> None:
    rules = store.ensure_rule_set(PRESETS["block"])
    tournament = Tournament(
        name=name, format="round-robin", rule_set_id=rules.id, players=2,
        games_per_match=2, seed=1, status=status,
    )  # fmt: skip
    with store.write() as session:
        session.add(tournament)


def test_healthz_ok(client: FlaskClient) -> None:
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.get_json() == {"status": "ok", "database": "ok"}


def test_healthz_unreachable_database_is_503_and_fast() -> None:
    app = create_app(UNREACHABLE_URL)
    try:
        start = time.monotonic()
        response = app.test_client().get("/healthz")
        elapsed = time.monotonic() - start
    finally:
        _store(app).close()
    assert response.status_code == 503
    body = response.get_json()
    assert body["status"] == "error"
    assert "127.0.0.1" in body["database"] and "port 1" in body["database"], body
    assert elapsed < 5, f"the health check took {elapsed:.1f} s"


def test_index_lists_tournaments(app: Flask, client: FlaskClient) -> None:
    _add_tournament(_store(app), "spring open", status="running")
    _add_tournament(_store(app), "autumn cup", status="done")
    response = client.get("/")
    assert response.status_code == 200
    page = response.get_data(as_text=True)
    assert '<a href="/tournaments/autumn%20cup">autumn cup</a>' in page
    assert '<span class="status running">running</span>' in page
    assert page.index("autumn cup") < page.index("spring open")  # newest first


def test_index_without_tournaments(client: FlaskClient) -> None:
    page = client.get("/").get_data(as_text=True)
    assert "No tournaments yet." in page


def test_index_escapes_tournament_names(app: Flask, client: FlaskClient) -> None:
    _add_tournament(_store(app), "<script>alert(1)</script>")
    page = client.get("/").get_data(as_text=True)
    assert "<script>alert" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_database_url_from_environment(database_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(URL_ENV, database_url)
    app = create_app()
    try:
        assert app.config["DATABASE_URL"] == database_url
        assert app.test_client().get("/healthz").status_code == 200
    finally:
        _store(app).close()


def test_one_store_per_app(app: Flask, client: FlaskClient) -> None:
    store = _store(app)
    client.get("/healthz")
    client.get("/")
    assert _store(app) is store
