"""The heavy pages' reads are bounded by their query plans (issue 32): every statement a game
list, a tournament's, a bot's or a leaderboard's page runs on SQLite is asked for its plan
(EXPLAIN QUERY PLAN), and none reads a whole table of games (matches, their seats, their
records, the ratings' pairs and history) or the ratings without an index, nor sorts the
matches a game list walks (it walks them in the order of an index, newest first, and stops
at its page). The API reads through the same service functions."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from flask import Flask
from sqlalchemy import event, select

import arena.store.games
from arena.compete.entrants import Entrant
from arena.compete.tournaments import Match as ScheduledMatch
from arena.engine.rules import PRESETS
from arena.service.games import GameFilter, game_list
from arena.store.db import Store
from arena.store.models import Match
from arena.store.queue import complete_match, create_tournament

#: The tables that grow with the games played (and the ratings, with the versions in each
#: rule set): none is read whole (``m``: matches' alias).
BIG = r"(matches|match_seats|game_records|pair_records|rating_history|ratings|m)(_\d+)?"
#: The game lists' walks: the matches in the order of one of these indexes.
WALKS = ("ix_matches_status_finished", "ix_matches_tournament_finished")


def _fill(store: Store) -> None:
    """Two tournaments of 12 done matches of 3 games among four bots, one with forfeits."""
    versions = {
        name: store.add_bot_version(owner, name, f"# {name}\n", {})[0].id
        for owner, name in [("alice", "a"), ("bob", "b"), ("carol", "c"), ("dave", "d")]
    }
    entrants = {label: Entrant.stored(label, v) for label, v in versions.items()}
    pairs = [(x, y) for x in versions for y in versions if x != y]
    for name in ("t1", "t2"):
        matches = [
            ScheduledMatch(f"m{n}", (entrants[x], entrants[y]), 3, n)
            for n, (x, y) in enumerate(pairs)
        ]
        tournament_id = create_tournament(
            store, name=name, rules=PRESETS["draw"], format="round-robin", players=2,
            teams=False, games_per_match=3, seed=1, entrants=list(entrants.values()),
            matches=matches,
        )  # fmt: skip
        with store.read() as session:
            ids = dict(
                session.execute(
                    select(Match.key, Match.id).where(Match.tournament_id == tournament_id)
                ).all()
            )
        for match in matches:
            fault = {"seat": 1, "termination": "timeout", "message": "slow", "stderr": ""}
            games = [
                {"index": i, "seed": i, "places": [i % 2, 1 - i % 2], "points": [10, 5],
                 "winners": [i % 2], "termination": "target",
                 "verdict": fault if name == "t2" and i == 2 else None}
                for i in range(3)
            ]  # fmt: skip
            result = {"games": games, "seconds": 1.0, "worker": "test:1"}
            assert complete_match(store, ids[match.id], "test:1", records=[], result=result)


@contextmanager
def statements(store: Store) -> Iterator[list[tuple[str, Any]]]:
    """The statements (SQL, parameters) run on ``store`` in the ``with`` block."""
    seen: list[tuple[str, Any]] = []

    def record(_c: Any, _cursor: Any, sql: str, parameters: Any, _x: Any, _many: Any) -> None:
        seen.append((sql, parameters))

    event.listen(store.engine, "before_cursor_execute", record)
    try:
        yield seen
    finally:
        event.remove(store.engine, "before_cursor_execute", record)


def plans(store: Store, seen: list[tuple[str, Any]]) -> Iterator[tuple[str, list[str]]]:
    """Each read among ``seen`` (SQL, parameters) with its plan's steps."""
    with store.engine.connect() as connection:
        for sql, parameters in seen:
            if sql.lstrip().upper().startswith(("SELECT", "WITH")):
                explained = connection.exec_driver_sql("EXPLAIN QUERY PLAN " + sql, parameters)
                yield sql, [row[3] for row in explained]


def unbounded(store: Store, seen: list[tuple[str, Any]]) -> list[str]:
    """The plans among ``seen``'s reads that scan a big table whole or sort a game list's
    walk, each with its statement."""
    found = []
    for sql, plan in plans(store, seen):
        scans = [step for step in plan if re.fullmatch(f"SCAN {BIG}", step)]
        walk = any(index in step for step in plan for index in WALKS)
        sorted_walk = walk and any("TEMP B-TREE FOR ORDER BY" in step for step in plan)
        if scans or sorted_walk:
            found.append(f"{' | '.join(plan)}\n    {' '.join(sql.split())}")
    return found


PAGES = [
    "/games",
    "/games?before={deep}-0",
    "/games?bot=alice/a",
    "/games?bot=alice/a&before={deep}-0",
    "/games?bot=alice/a&opponent=bob/b",
    "/games?bot=alice/a&result=win",
    "/games?rules=draw",
    "/games?tournament=t2",
    "/games?tournament=t2&a=a&b=b",
    "/games?tournament=t2&by=b",
    "/games?fault=any",
    "/games?bot=bob/b&fault=mine",
    "/bots/alice/a",
    "/tournaments/t1",
    "/tournaments/t2/live",
    "/tournaments/t2/standings.csv",
    "/leaderboards/draw",
]


@pytest.mark.parametrize("few", [arena.store.games.FEW_MATCHES, 1])
def test_every_heavy_read_is_bounded_by_its_plan(
    app: Flask, store: Store, monkeypatch: pytest.MonkeyPatch, few: int
) -> None:
    # few=1: every bot plays "many" matches, and its games are found by probes
    monkeypatch.setattr(arena.store.games, "FEW_MATCHES", few)
    _fill(store)
    with store.read() as session:
        deep = session.scalar(select(Match.id).order_by(Match.finished, Match.id).limit(1))
    client, served = app.test_client(), app.extensions["arena_store"]
    for page in PAGES:
        path = page.format(deep=deep)
        with statements(served) as seen:
            assert client.get(path).status_code == 200, path
        assert seen, path
        assert unbounded(served, seen) == [], path
        if path.startswith("/games") and (few == 1 or "bot=" not in path):
            # the list walks the matches newest first by an index (probing each one's seats
            # for a bot's), rather than sorting them
            walks = [p for sql, p in plans(served, seen) if "ORDER BY matches.finished" in sql]
            assert walks, path
            for walk in walks:
                assert any(index in step for step in walk for index in WALKS), (path, walk)


def test_a_heavy_page_reads_what_the_classes_hide_once(app: Flask, store: Store) -> None:
    # a bot's page asks privacy of its bot, its games and its opponents: one read of the
    # classes for the request (arena.service.privacy.one_read), and a new one the next
    _fill(store)
    client, served = app.test_client(), app.extensions["arena_store"]
    for path in ("/bots/alice/a", "/bots/alice/a", "/games?bot=alice/a", "/tournaments/t1"):
        with statements(served) as seen:
            assert client.get(path).status_code == 200, path
        reads = [sql for sql, _ in seen if re.search(r"FROM classes\b", sql)]
        assert len(reads) == 1, (path, reads)


def test_a_bots_games_are_the_same_found_by_its_list_or_by_probes(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fill(store)
    wanted = [GameFilter(bot=("alice", "a")), GameFilter(bot=("bob", "b"), opponent=("dave", "d"))]
    listed = [game_list(store, w, limit=10) for w in wanted]
    assert all(page.rows and page.more for page in listed)
    monkeypatch.setattr(arena.store.games, "FEW_MATCHES", 1)  # every bot plays "many"
    assert [game_list(store, w, limit=10) for w in wanted] == listed
    after = [
        game_list(store, w, limit=200, before=page.next)
        for w, page in zip(wanted, listed, strict=True)
    ]
    assert [len(page.rows) for page in after] == [36 - 10, 12 - 10]  # 6 and 2 matches of 3, twice


def _every_game(store: Store, wanted: GameFilter) -> list[tuple[int, int]]:
    """Every game a filter lists, page after page (7 a page)."""
    found, before = [], None
    while True:
        page = game_list(store, wanted, limit=7, before=before)
        found += [(row.match_id, row.index) for row in page.rows]
        if not page.more:
            return found
        before = page.next


def test_a_list_walked_in_windows_finds_what_one_statement_finds(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fill(store)
    filters = [
        GameFilter(),
        GameFilter(fault="any"),
        GameFilter(tournament="t2", fault="none"),
        GameFilter(bot=("alice", "a"), opponent=("bob", "b")),
        GameFilter(rules="draw", fault="none"),
    ]
    whole = [_every_game(store, wanted) for wanted in filters]
    assert [len(games) for games in whole] == [72, 12, 24, 12, 60]
    # windows of 5 matches (24 done), every bot found by probes: the same games in order
    monkeypatch.setattr(arena.store.games, "_CHUNK", 5)
    monkeypatch.setattr(arena.store.games, "FEW_MATCHES", 1)
    assert [_every_game(store, wanted) for wanted in filters] == whole
    # a filter that matches nothing looks through SCAN_LIMIT matches, not the whole table
    monkeypatch.setattr(arena.store.games, "SCAN_LIMIT", 10)
    page = game_list(store, GameFilter(fault="crash"))
    assert (page.rows, page.more, page.truncated) == ([], False, True)


def test_arena_serve_counts_the_json_records_by_their_partial_index(store: Store) -> None:
    """``arena serve`` counts the records still stored as JSON at every start: through
    ``ix_game_records_unconverted`` (migration 0029), never reading the table of records."""
    from arena.store.records import unconverted_records

    with statements(store) as seen:
        assert unconverted_records(store) == 0
    ((_, plan),) = list(plans(store, seen))
    assert any("USING INDEX ix_game_records_unconverted" in step for step in plan), plan
    assert unbounded(store, seen) == []


def test_a_bots_link_is_built_once_for_each_script_root(app: Flask, store: Store) -> None:
    # web.bots.bot_url keeps each bot page's URL: served under a prefix (the script root),
    # the links carry it, and served at the root again, they do not
    _fill(store)
    client = app.test_client()
    for root in ("", "/arena", ""):
        page = client.get("/tournaments/t1", base_url=f"http://localhost{root}/").text
        assert f'href="{root}/bots/alice/a"' in page, root
        if not root:
            assert 'href="/arena/bots/' not in page
