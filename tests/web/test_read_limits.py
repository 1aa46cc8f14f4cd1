"""Expensive page reads are rate-limited per address (per account when logged in): the game
lists, a game's page, exports; a replay viewer's steps have a budget of their own (web/limits.py
``reads`` and ``steps``). Past it: 429 with Retry-After and a sentence."""

from __future__ import annotations

import pytest

from arena.store.db import Store
from tests.web.conftest import make_app
from web.limits import READ_REFUSAL


def test_a_flood_of_reads_is_429_with_retry_after_and_steps_count_apart(
    store: Store, url: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    app = make_app(
        url,
        tmp_path_factory.mktemp("broker"),
        ARENA_READ_LIMIT="3 per minute",
        ARENA_STEP_LIMIT="2 per minute",
    )
    try:
        client = app.test_client()
        paths = ["/games", "/games?before=1-0", "/games/1/0.json"]
        assert [client.get(path).status_code for path in paths] == [200, 400, 404]
        for path in ("/games", "/games/1/0", "/leaderboards/draw", "/leaderboards/draw/export.csv"):
            limited = client.get(path)
            assert limited.status_code == 429, path
            assert int(limited.headers["Retry-After"]) > 0
            assert READ_REFUSAL in limited.get_data(as_text=True)
        assert [client.get("/games/1/0/state").status_code for _ in range(3)] == [404, 404, 429]
        # another address has its own budget; the health check has none
        other = client.get("/games", environ_base={"REMOTE_ADDR": "192.0.2.7"})
        assert other.status_code == 200
        assert all(client.get("/healthz").status_code == 200 for _ in range(5))
    finally:
        app.extensions["arena_store"].close()
