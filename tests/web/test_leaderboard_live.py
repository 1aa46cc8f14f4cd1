"""A leaderboard follows its rule set's results while the page is open (web/pages.py): its
table is an htmx fragment polled every few seconds, with the fit's age; the page saying no
game was played yet opens the first leaderboard by itself once there is one. On both
databases, with matches played here by the worker's own code and live refits."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from flask import Flask
from sqlalchemy import select

from arena.service.live import refit_if_changed
from arena.service.matches import Config, run_match
from arena.store import ratings as stored
from arena.store.db import Store
from arena.store.models import Match
from tests.web.conftest import ENTRANTS, RULES, create, store_bots
from web.pages import BOARD_LIVE_SECONDS


def _pending(store: Store) -> list[int]:
    with store.read() as session:
        return list(
            session.scalars(select(Match.id).where(Match.status == "pending").order_by(Match.id))
        )


def _play(store: Store, match_id: int, cache: Path) -> None:
    """Play a match here, book its rule set's refit due at once (as a worker's token books
    it) and run the refit (as the task does)."""
    assert run_match(store, match_id, config=Config(bot_cache=cache), sandboxed=False) == "done"
    now = datetime.now(UTC)
    booked = stored.book_refit(store, match_id, now, lambda _clock: now)
    assert booked is not None
    assert refit_if_changed(store, booked[0]).outcome == "refitted"


def test_the_leaderboard_table_refreshes_itself_as_results_arrive(
    app: Flask, store: Store, tmp_path: Path
) -> None:
    client = app.test_client()
    empty = client.get("/leaderboards").get_data(as_text=True)
    assert 'id="no-board"' in empty and f'hx-trigger="every {BOARD_LIVE_SECONDS}s"' in empty
    app.config["ARENA_POLL_SECONDS"] = 0.5  # (the browser tests' servers: every part faster)
    assert 'hx-trigger="every 0.5s"' in client.get("/leaderboards").get_data(as_text=True)
    app.config["ARENA_POLL_SECONDS"] = None
    asked = client.get("/leaderboards", headers={"HX-Request": "true"})
    assert asked.status_code == 204  # nothing yet: htmx changes nothing
    store_bots(store)
    create(store, "spring", ENTRANTS, 2)
    first, *_ = _pending(store)
    _play(store, first, tmp_path)
    asked = client.get("/leaderboards", headers={"HX-Request": "true"})
    assert asked.headers["HX-Redirect"] == f"/leaderboards/{RULES.name}"
    page = client.get(f"/leaderboards/{RULES.name}?reference=hide").get_data(as_text=True)
    assert f'hx-get="/leaderboards/{RULES.name}/live?reference=hide"' in page
    assert f'hx-trigger="every {BOARD_LIVE_SECONDS}s, refresh"' in page
    live = client.get(f"/leaderboards/{RULES.name}/live").get_data(as_text=True)
    assert 'id="board-live"' in live
    assert "Ratings fitted" in live and " s ago" in live
    assert live.count("<tr") - 1 == 2  # rows, not the header's: the first match's two
    for match_id in _pending(store):
        _play(store, match_id, tmp_path)
    live = client.get(f"/leaderboards/{RULES.name}/live?versions=all").get_data(as_text=True)
    assert live.count("<tr") - 1 == 4
    assert "<html" not in live  # a fragment, not a page
