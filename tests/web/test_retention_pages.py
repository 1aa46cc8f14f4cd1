"""A game whose record retention pruned (arena.service.retention), on the web: the viewer
and its state answer 410 with "record pruned" and when, the API's record 410 in its JSON
error shape, the lists mark it, a competition's games export says in a header how many
matches' records it leaves out; a kept game is shown as before."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from sqlalchemy import select, update

from arena.engine.rules import PRESETS
from arena.service.accounts import create_account, create_token
from arena.service.retention import RetentionPolicy, prune_records
from arena.store.db import Store
from arena.store.models import Competition, Match
from tests.service.ladder_fixtures import make_competition
from tests.service.test_results import stored_tournament
from tests.web.conftest import HASHER, PASSWORD
from web.downloads import PRUNED_HEADER

NOW = datetime.now(UTC)


def _build(store: Store, directory: Path) -> dict[str, int]:
    """A competition whose ladder is a round robin of two built-in strategies (2 matches
    of a game), its first match finished ten days ago and pruned (a day's records kept)."""
    tournament, _ = stored_tournament(
        store, "plain", {"a": ("ann", "random"), "b": ("bob", "greedy")},
        rules=PRESETS["block"], games=2,
    )  # fmt: skip
    competition, _ = make_competition(
        store, "cup", ["dora", "eve"], opens=NOW - timedelta(days=60),
        deadline=NOW - timedelta(days=40), rules="block",
    )  # fmt: skip
    with store.write() as session:
        ids = list(
            session.scalars(
                select(Match.id).where(Match.tournament_id == tournament).order_by(Match.id)
            )
        )
        session.execute(
            update(Match).where(Match.id == ids[0]).values(finished=NOW - timedelta(days=10))
        )
        session.execute(
            update(Competition)
            .where(Competition.id == competition)
            .values(status="done", ladder_id=tournament)
        )
    assert prune_records(store, RetentionPolicy(keep_days=1)).matches == 1
    return {"pruned": ids[0], "kept": ids[-1]}


pytestmark = pytest.mark.seed(build=_build)


def test_a_pruned_game_says_so_everywhere(app: Flask, store: Store, seeded: dict[str, int]) -> None:
    client = app.test_client()
    pruned, kept = seeded["pruned"], seeded["kept"]
    for path in (
        f"/games/{pruned}/0", f"/games/{pruned}/0/state", f"/games/{pruned}/0.json",
        f"/games/{pruned}/0.html", f"/games/{pruned}/0/duplicate",
    ):  # fmt: skip
        response = client.get(path)
        assert response.status_code == 410, path
        page = response.get_data(as_text=True)
        assert "Record pruned" in page
        assert f"the record of game 0 of match {pruned} was deleted on" in page
    assert client.get(f"/games/{kept}/0").status_code == 200
    assert client.get(f"/games/{pruned}/9").status_code == 404  # no such game

    account = create_account(store, "ada", PASSWORD, hasher=HASHER)
    token = {"Authorization": f"Bearer {create_token(store, account.id, 'read', ['read'])}"}
    answer = client.get(f"/api/v1/games/{pruned}/0", headers=token)
    assert answer.status_code == 410
    error: dict[str, Any] = answer.get_json()["error"]
    assert error["status"] == 410
    assert error["message"].startswith(f"record pruned: the record of game 0 of match {pruned}")
    assert client.get(f"/api/v1/games/{kept}/0", headers=token).status_code == 200

    listed = client.get("/games").get_data(as_text=True)
    assert f"{pruned}.0 (record pruned)" in listed
    assert f'href="/games/{kept}/0"' in listed
    rows = client.get("/api/v1/games", headers=token).get_json()["games"]
    assert {(row["match"], row["record_pruned"]) for row in rows} >= {(pruned, True), (kept, False)}

    export = client.get("/competitions/cup/games.jsonl")
    assert export.status_code == 200
    assert len(export.get_data(as_text=True).splitlines()) == 1  # the kept match's game
    assert export.headers[PRUNED_HEADER].startswith("record pruned: the game records of 1 match's")
    api_export = client.get("/api/v1/competitions/cup/games.jsonl", headers=token)
    assert PRUNED_HEADER in api_export.headers
