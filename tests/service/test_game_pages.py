"""Keyset pages of the game lists (arena.service.games.game_list, arena.store.games): a walk
from cursor to cursor lists every game once, in order, ties in the matches' finishing time
included; a deep page costs what the first does, through the matches' index. Matches are
written done here (no game is played): cheap, on SQLite."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import event, select, text, update

from arena.engine.rules import find_rules
from arena.service.games import GameFilter, game_list
from arena.service.matches import create_stored_tournament
from arena.store.db import Store
from arena.store.models import Match

RULES = find_rules("draw")
ENTRANTS = ["a/one", "a/two", "a/three", "a/four"]
GAMES = 3


def _summary(index: int) -> dict[str, Any]:
    return {"index": index, "places": [0, 1], "points": [10, 0], "termination": "target"}


@pytest.fixture
def done(store: Store) -> list[tuple[int, int]]:
    """A round robin of 4 entrants (12 matches of 3 games) written done, the matches
    finishing in 3 instants (4 share each: ties in the sort key); every game's key in the
    lists' order (the latest finished first, then the highest match id, then the last game)."""
    for entrant in ENTRANTS:
        owner, name = entrant.split("/")
        store.add_bot_version(owner, name, f"NAME = {name!r}\n", {})
    create_stored_tournament(
        store, name="t", rules=RULES, format="round-robin", entrants=ENTRANTS,
        games_per_match=GAMES, seed=1,
    )  # fmt: skip
    start = datetime(2026, 1, 1, tzinfo=UTC)
    with store.write() as session:
        ids = list(session.scalars(select(Match.id).order_by(Match.id)))
        for n, match_id in enumerate(ids):
            session.execute(
                update(Match)
                .where(Match.id == match_id)
                .values(
                    status="done",
                    finished=start + timedelta(seconds=n % 3),
                    result={"games": [_summary(i) for i in range(GAMES)]},
                )
            )
    order = sorted(ids, key=lambda m: (ids.index(m) % 3, m), reverse=True)
    return [(m, i) for m in order for i in reversed(range(GAMES))]


def _walk(store: Store, limit: int) -> Iterator[list[tuple[int, int]]]:
    before = None
    while True:
        page = game_list(store, GameFilter(), limit=limit, before=before)
        yield [(row.match_id, row.index) for row in page.rows]
        if not page.more:
            return
        assert page.next is not None
        before = page.next


@pytest.mark.parametrize("limit", [1, 3, 4, 7, 50])
def test_a_walk_lists_every_game_once_in_order(
    store: Store, done: list[tuple[int, int]], limit: int
) -> None:
    pages = list(_walk(store, limit))
    assert [key for page in pages for key in page] == done
    assert all(len(page) == limit for page in pages[:-1])


@pytest.mark.backends("sqlite", "postgresql")  # the row comparison on both
def test_a_filtered_walk_and_a_bad_cursor(store: Store, done: list[tuple[int, int]]) -> None:
    first = game_list(store, GameFilter(tournament="t"), limit=5)
    rest = game_list(store, GameFilter(tournament="t"), limit=100, before=first.next)
    assert [(r.match_id, r.index) for r in first.rows + rest.rows] == done
    pages = list(_walk(store, 4))
    assert [key for page in pages for key in page] == done
    with pytest.raises(LookupError, match="no finished match 9999"):
        game_list(store, GameFilter(), before=(9999, 0))


def test_a_deep_page_is_one_indexed_read_of_the_matches(
    store: Store, done: list[tuple[int, int]]
) -> None:
    statements: list[tuple[str, Any]] = []

    def seen(conn: Any, cursor: Any, sql: str, params: Any, *args: Any) -> None:
        statements.append((sql, params))

    event.listen(store.engine, "before_cursor_execute", seen)
    try:
        game_list(store, GameFilter(), limit=2, before=done[1])
        shallow = len(statements)
        statements.clear()
        game_list(store, GameFilter(), limit=2, before=done[-4])
        deep = list(statements)
    finally:
        event.remove(store.engine, "before_cursor_execute", seen)
    assert len(deep) <= shallow  # a deep page reads no more than a shallow one
    # the window's oldest match (an index-only walk of 200 at most), then the page's matches
    # (beside them the lists' version: the newest done match, the latest pruning)
    walks = [(s, p) for s, p in deep if "ORDER BY matches.finished DESC" in s and "max(" not in s]
    assert len(walks) == 2
    for sql, params in walks:
        with store.engine.connect() as connection:
            plan = " ".join(
                str(row[-1])
                for row in connection.exec_driver_sql(f"EXPLAIN QUERY PLAN {sql}", params)
            )
        assert "ix_matches_status_finished" in plan, plan
        assert "TEMP B-TREE FOR ORDER BY" not in plan, plan
    ((sql, params),) = [(s, p) for s, p in walks if "matches.seats" in s]
    assert "OFFSET" not in sql or params[-1] == 0  # SQLite's dialect writes OFFSET 0
    with store.engine.connect() as connection:
        assert connection.execute(text("SELECT count(*) FROM matches")).scalar() == 12


def test_a_page_is_kept_until_a_match_is_done_or_records_are_pruned(
    store: Store, done: list[tuple[int, int]]
) -> None:
    """A page read is kept (the same value again), read anew once the newest done match
    changes (a match finished since) or records were pruned (its rows say so)."""
    first = game_list(store, GameFilter(), limit=4)
    assert game_list(store, GameFilter(), limit=4) is first
    assert game_list(store, GameFilter(), limit=5) is not first  # another key
    oldest = done[-1][0]
    with store.write() as session:  # the oldest match, finished again as the newest
        session.execute(
            update(Match)
            .where(Match.id == oldest)
            .values(finished=datetime(2026, 1, 2, tzinfo=UTC))
        )
    newer = game_list(store, GameFilter(), limit=4)
    assert [row.match_id for row in newer.rows[:GAMES]] == [oldest] * GAMES
    with store.write() as session:  # retention prunes its records
        session.execute(
            update(Match)
            .where(Match.id == oldest)
            .values(records_pruned=datetime(2026, 1, 3, tzinfo=UTC))
        )
    pruned = game_list(store, GameFilter(), limit=4)
    assert [row.record_pruned for row in pruned.rows] == [True] * GAMES + [False]
