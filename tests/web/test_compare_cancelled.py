"""A compare started on the API and cancelled mid-way (web/api.py, web/compares.py): its
page and its API view say it was cancelled, and by whom, with the games played; it is never
"running" again, nor "undecided" at a game limit it did not reach."""

from __future__ import annotations

from pathlib import Path

from flask import Flask
from sqlalchemy import select

from arena.service.accounts import create_account, create_token
from arena.service.matches import Config, run_match
from arena.store.db import Store
from arena.store.models import Match, User
from tests.paths import REFERENCE_BOTS, ZOO
from tests.web.conftest import HASHER, PASSWORD


def test_a_compare_cancelled_mid_way_shows_cancelled(
    app: Flask, store: Store, tmp_path: Path
) -> None:
    create_account(store, "ada", PASSWORD, hasher=HASHER)
    store.add_bot_version("ada", "greedy", (REFERENCE_BOTS / "greedy.py").read_text(), {})
    store.add_bot_version("bob", "first", (ZOO / "first.py").read_text(), {})
    with store.read() as session:
        ada = session.scalars(select(User.id).where(User.name == "ada")).one()
    token = {"Authorization": f"Bearer {create_token(store, ada, 'ci', ['read', 'run'])}"}
    client = app.test_client()
    body = {
        "new": "ada/greedy",
        "old": "bob/first",
        "rules": "draw",
        "elo1": 25,
        "batch": 1,
        "max_games": 16,
    }
    started = client.post("/api/v1/compares", json=body, headers=token)
    assert started.status_code == 202, started.get_json()
    name = started.get_json()["name"]
    with store.read() as session:  # a worker plays the first deal group's two seatings
        first = session.scalars(select(Match.id).order_by(Match.id).limit(2)).all()
    for match_id in first:
        run_match(store, match_id, config=Config(bot_cache=tmp_path / "cache"), sandboxed=False)
    cancelled = client.post(f"/api/v1/tournaments/{name}/cancel", headers=token)
    assert cancelled.status_code == 200, cancelled.get_json()
    view = client.get(f"/api/v1/compares/{name}", headers=token).get_json()
    assert (view["status"], view["verdict"], view["problem"]) == (
        "cancelled", "cancelled", "cancelled by ada"
    )  # fmt: skip
    assert view["games"] == 2 and view["progress"]["pending"] == view["progress"]["running"] == 0
    page = app.test_client().get(f"/compares/{name}").get_data(as_text=True)
    assert "Cancelled before the test decided: cancelled by ada" in page
    assert "Running" not in page and "hx-get" not in page  # no longer polled
