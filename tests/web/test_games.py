"""Stored games on the web (web/games.py, arena/service/games.py), on both databases: the
games list and its filters, a crosstable cell's games, a tournament's faults, one game's page
and record (a fault's message and stderr for its bot's owner only), and a bot's recent
games, its record against each opponent and its faults."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, cast

import pytest
from flask import Flask
from flask.testing import FlaskClient

from arena.engine.records import verify_record
from arena.engine.replay import Replay, replay_record
from arena.service import games as games_service
from arena.service.accounts import create_account
from arena.service.games import GameFilter, ReplayCache, ReplayedGame, game_list, opponent_table
from arena.service.results import outcome, refit_ratings
from arena.store.db import Store
from arena.store.models import Match
from tests.paths import ZOO
from tests.web.conftest import (
    ENTRANTS,
    HASHER,
    PASSWORD,
    RULES,
    create,
    logged_in,
    play,
    store_bots,
)
from web.games import REPLAYS_KEY


def _played(store: Store, tmp_path: Path) -> None:
    """A finished round robin of the reference bots ("spring", 2 games a pair), and one of
    greedy against mallory's bot that raises in its third move ("trouble", 4 games in 2
    matches, played cold: the bot's process is kept for a match only, so it crashes in 2 of
    them; warm, the second match would go on with the first's process and its count).
    Built once per test process (tests/conftest.py's seed marker)."""
    for name, role in (("alice", "user"), ("mallory", "user"), ("root", "admin")):
        create_account(store, name, PASSWORD, role=role, hasher=HASHER)
    store_bots(store)
    store.add_bot_version("mallory", "raiser", (ZOO / "raise_in_move.py").read_text(), {})
    create(store, "spring", ENTRANTS, 2)
    play(store, "spring", tmp_path / "cache")
    create(store, "trouble", ["alice/greedy@1", "mallory/raiser"], 4)
    play(store, "trouble", tmp_path / "cache", warm_bots=False)
    refit_ratings(store, RULES)


pytestmark = pytest.mark.seed(build=_played)


def _get(client: FlaskClient, path: str, status: int = 200) -> str:
    response = client.get(path)
    assert response.status_code == status, (path, response.status_code)
    return response.get_data(as_text=True)


def _game_links(page: str) -> list[str]:
    return re.findall(r'href="(/games/\d+/\d+)"', page)


def test_crosstable_cells_link_to_that_pairings_games(app: Flask) -> None:
    client = app.test_client()
    page = _get(client, "/tournaments/spring")
    crosstable = page.split("<h2>Crosstable</h2>", 1)[1].split("</table>", 1)[0]
    links = re.findall(r'href="(/games\?[^"]+)"', crosstable)
    assert len(links) == 12  # 4 entrants, every pair both ways
    pairing = _get(client, links[0].replace("&amp;", "&"))
    games = _game_links(pairing)
    assert len(games) == 2  # 2 games a pair: one match each way
    # the two bots of the cell, and no one else, sit in them
    a, b = re.search(r"a=([^&]+)&amp;b=([^&\"]+)", links[0]).groups()  # type: ignore[union-attr]
    names = {  # the labels stay in the links; the page shows the versions' display names
        "random": "reference/random v1",
        "greedy-v1": "alice/greedy v1",
        "greedy-v2": "alice/greedy v2",
        "counter": "bob/counter v1",
    }
    shown = rf"The games of <a [^>]+>{names[a]}</a> against <a [^>]+>{names[b]}</a> in spring"
    assert re.search(shown, pairing), pairing
    for link in games:
        game = _get(client, link)
        assert "spring" in game and "ended by" in game


def test_a_tournament_page_counts_faults_by_bot_and_kind(app: Flask) -> None:
    client = app.test_client()
    page = _get(client, "/tournaments/trouble")
    faults = page.split("<h2>Faults</h2>", 1)[1].split("</table>", 1)[0]
    assert re.search(
        r'<td><a class="bot-name" href="/bots/mallory/raiser">mallory/raiser v1</a></td>'
        r"<td>crash</td><td class=\"num\"><a [^>]+>2</a>",
        faults,
    )
    listed = _get(client, "/games?tournament=trouble&by=raiser&fault=crash")
    assert len(_game_links(listed)) == 2
    assert _get(client, "/games?tournament=trouble&by=greedy&fault=crash").count("/games/") == 0
    # the plain-text summary: standings and the faults
    block = page.split('<pre class="stat-block" id="stat-block">', 1)[1].split("</pre>", 1)[0]
    assert block.startswith("trouble: block, round-robin, 2 players")
    assert "Faults: mallory/raiser v1 crash 2" in block
    assert re.search(r"^\s+2  mallory/raiser v1\s+4\s+\d\s+[\d.]+\s+2\b", block, re.M), block


def test_a_faults_message_and_stderr_are_its_owners(app: Flask) -> None:
    anonymous = app.test_client()
    listed = _get(anonymous, "/games?tournament=trouble&fault=crash")
    link = _game_links(listed)[0]
    public = _get(anonymous, link)
    assert "crash" in public and "bot gave up on purpose" not in public
    assert "shown to its owner only" in public
    record = json.loads(_get(anonymous, link + ".json"))
    assert record["result"]["verdict"]["termination"] == "crash"
    assert record["result"]["verdict"]["message"] is None
    assert record["result"]["verdict"]["stderr"] is None
    verify_record(record)  # the redacted record still replays
    for viewer in ("alice", "mallory", "root"):
        client = logged_in(app, viewer)
        page = _get(client, link)
        full = json.loads(_get(client, link + ".json"))
        shown = viewer != "alice"  # alice's greedy is the other seat: not her fault
        assert ("bot gave up on purpose" in page) is shown, viewer
        assert ("bot gave up on purpose" in (full["result"]["verdict"]["stderr"] or "")) is shown
    _get(anonymous, "/games/999999/0", 404)
    _get(anonymous, "/games/999999/0.json", 404)


def test_a_faults_stderr_is_its_owners_not_a_teachers(app: Flask, store: Store) -> None:
    """A fault's stderr is its owner's: a class's teachers read what was submitted to the
    class (its assignments' pages), not a student's other games (issue 30: a teacher read
    every bot of every member, competition entries included); another student of the
    class, and another class's teacher, do not either."""
    from arena.service import classes

    teacher = create_account(store, "mrs.t", PASSWORD, role="teacher", hasher=HASHER)
    other = create_account(store, "mr.u", PASSWORD, role="teacher", hasher=HASHER)
    code = classes.create_class(store, teacher, classes.NewClass(name="5b")).join_code
    classes.create_class(store, other, classes.NewClass(name="6a"))
    assert code is not None
    for student in ("mallory", "alice"):
        account = _logged_account(store, student)
        classes.join_as(store, account, code)
    link = _game_links(_get(app.test_client(), "/games?tournament=trouble&fault=crash"))[0]
    for viewer, shown in (("mallory", True), ("mrs.t", False), ("alice", False), ("mr.u", False)):
        full = json.loads(_get(logged_in(app, viewer), link + ".json"))
        stderr = full["result"]["verdict"]["stderr"] or ""
        assert ("bot gave up on purpose" in stderr) is shown, viewer


def _logged_account(store: Store, name: str) -> Any:
    from arena.service.accounts import authenticate

    account = authenticate(store, name, PASSWORD, hasher=HASHER)
    assert account is not None
    return account


def test_the_games_list_filters_by_bot_opponent_result_and_fault(app: Flask) -> None:
    client = app.test_client()
    everything = _get(client, "/games")
    assert len(_game_links(everything)) == 16  # 12 + 4 games, under one page of 50
    mine = _get(client, "/games?bot=alice/greedy")
    # v1 and v2: 6 games each in spring, 2 of them against each other; 4 in trouble
    assert len(_game_links(mine)) == 14
    wins = _get(client, "/games?bot=alice/greedy&result=win")
    losses = _get(client, "/games?bot=alice/greedy&result=loss")
    draws = _get(client, "/games?bot=alice/greedy&result=draw")
    counted = [len(_game_links(p)) for p in (wins, draws, losses)]
    assert sum(counted) == 14 and counted[0] >= 2  # at least the raiser's crashes
    assert 'class="outcome loss"' not in wins
    against = _get(client, "/games?bot=alice/greedy&opponent=mallory/raiser")
    assert len(_game_links(against)) == 4
    assert len(_game_links(_get(client, "/games?bot=mallory/raiser&fault=mine"))) == 2
    assert len(_game_links(_get(client, "/games?bot=alice/greedy&fault=mine"))) == 0
    assert len(_game_links(_get(client, "/games?fault=none"))) == 14
    assert len(_game_links(_get(client, f"/games?rules={RULES.name}&tournament=spring"))) == 12


BAD_FILTERS = [
    ("result=win", "A result filter needs a bot"),
    (
        "bot=alice/greedy&result=maybe",
        "Result must be one of win, draw, loss, not &#39;maybe&#39;.",
    ),
    ("fault=bogus", "Fault must be one of any, none, mine, timeout"),
    ("fault=mine", "The fault filter &#39;mine&#39; needs a bot"),
    ("bot=greedy", "Bot must be OWNER/NAME, not &#39;greedy&#39;."),
    ("bot=nobody/nothing", "No bot nobody/nothing"),
    ("a=greedy", "An entrant (a, b, by) needs a tournament"),
]


def test_bad_filters_are_one_clear_message(app: Flask) -> None:
    client = app.test_client()
    for query, message in BAD_FILTERS:
        page = _get(client, f"/games?{query}", 400)
        assert message in page, (query, page)
    for before in ("-1", "x", "3", "1-x"):
        assert "Before must be a game as MATCH-INDEX" in _get(
            client, f"/games?before={before}", 400
        )
    assert "No finished match 99999." in _get(client, "/games?before=99999-0", 400)
    # an old link by offset starts over at the first page, its filters kept
    old = client.get("/games?tournament=spring&offset=999999")
    assert old.status_code == 302 and old.headers["Location"] == "/games?tournament=spring"


def test_a_long_list_pages(app: Flask, monkeypatch: pytest.MonkeyPatch) -> None:
    import web.games

    monkeypatch.setattr(web.games, "PAGE_SIZE", 10)
    client = app.test_client()
    first = _get(client, "/games?rules=")
    assert 'rel="next"' in first and 'rel="first"' not in first
    older = re.search(r'href="([^"]+)" rel="next"', first).group(1)  # type: ignore[union-attr]
    assert re.fullmatch(r"/games\?before=\d+-\d+", older), older
    second = _get(client, older)
    assert len(_game_links(second)) == 6 and 'rel="next"' not in second
    assert re.search(r'href="/games" rel="first"', second)
    flat = _game_links(first) + _game_links(second)
    assert len(flat) == len(set(flat)) == 16


def test_a_bots_page_shows_recent_games_opponents_and_its_faults_to_its_owner(
    app: Flask,
) -> None:
    anonymous = _get(app.test_client(), "/bots/mallory/raiser")
    recent = anonymous.split("<h2>Recent games</h2>", 1)[1].split("</table>", 1)[0]
    assert len(_game_links(recent)) == 4 and 'class="outcome loss"' in recent
    assert "<h2>Against each opponent</h2>" in anonymous
    assert re.search(r"alice/greedy</a></td><td class=\"num\"><a [^>]+>4</a></td>", anonymous)
    assert "Its faults" not in anonymous and "bot gave up on purpose" not in anonymous
    owner = _get(logged_in(app, "mallory"), "/bots/mallory/raiser")
    faults = owner.split("<h2>Its faults</h2>", 1)[1]
    assert faults.count("<td>crash</td>") == 2
    assert "ValueError: bot gave up on purpose" in faults or "bot gave up" in faults
    assert "Its faults" not in _get(logged_in(app, "alice"), "/bots/mallory/raiser")


def test_the_opponent_table_agrees_with_the_games(app: Flask, store: Store) -> None:
    table = opponent_table(store, "alice", "greedy")
    assert {row.opponent for row in table} == {"reference/random", "bob/counter", "mallory/raiser"}
    for row in table:
        assert row.rules == RULES.name
        assert row.games == row.wins + row.draws + row.losses
        owner, name = row.opponent.split("/")
        listed = game_list(store, GameFilter(bot=("alice", "greedy"), opponent=(owner, name)))
        assert len(listed.rows) == row.games
        wins = sum(1 for game in listed.rows if game.outcome == "win")
        assert wins == row.wins, row
    with pytest.raises(LookupError, match="no bot nobody/x"):
        opponent_table(store, "nobody", "x")


@pytest.mark.parametrize(
    ("places", "mine", "teams", "expected"),
    [
        ([0, 1], [0], False, "win"),
        ([1, 0], [0], False, "loss"),
        ([0, 0], [1], False, "draw"),
        ([0, 1, 0, 1], [0], True, "win"),  # partners share first place: a win
        ([2, 0, 1], [0, 2], False, "loss"),
        ([1, 0, 0], [1], False, "draw"),
    ],
)
def test_outcome(places: list[int], mine: list[int], teams: bool, expected: str) -> None:
    assert outcome(places, mine, teams) == expected


XSS_BOT = """import sys

def play(observation):
    print("<script>alert('stderr')</script>", file=sys.stderr, flush=True)
    raise ValueError("<img src=x onerror=alert('message')>")
"""


def test_a_bots_hostile_stderr_and_message_are_shown_escaped(
    app: Flask, store: Store, tmp_path: Path
) -> None:
    store.add_bot_version("mallory", "xss", XSS_BOT, {})
    create(store, "hostile", ["alice/greedy@1", "mallory/xss"], 2)
    play(store, "hostile", tmp_path / "cache")
    owner = logged_in(app, "mallory")
    listed = _get(owner, "/games?tournament=hostile&fault=crash")
    links = _game_links(listed)
    assert links
    for page in (_get(owner, links[0]), _get(owner, "/bots/mallory/xss")):
        assert "<script>alert" not in page and "<img src=x" not in page
        assert "&lt;img src=x onerror=alert(&#39;message&#39;)&gt;" in page
    game = _get(owner, links[0])
    assert "&lt;script&gt;alert(&#39;stderr&#39;)&lt;/script&gt;" in game


def test_a_viewer_step_replays_nothing(app: Flask, monkeypatch: pytest.MonkeyPatch) -> None:
    """The first request for a game replays it once (verifying and stepping in one
    simulation); the viewer's steps, the page and the download read that replay, kept per
    app; a reader who may not see the fault still gets it redacted from the kept game."""
    replayed: list[object] = []

    def counted(record: Any) -> Replay:
        replayed.append(record)
        return replay_record(record)

    monkeypatch.setattr("arena.service.games.replay_record", counted)
    owner = logged_in(app, "mallory")
    link = _game_links(_get(owner, "/games?tournament=trouble&fault=crash"))[0]
    assert "bot gave up on purpose" in _get(owner, link)
    for step in range(4):
        assert 'class="state"' in _get(owner, f"{link}/state?round=1&step={step}")
    assert "bot gave up on purpose" in _get(owner, f"{link}.html")
    anonymous = app.test_client()
    for path in (link, f"{link}/state?round=1&step=2", f"{link}.html"):
        assert "bot gave up on purpose" not in _get(anonymous, path), path
    assert len(replayed) == 1
    assert len(app.extensions[REPLAYS_KEY]) == 1


def test_a_games_summary_out_of_its_place_is_still_found(app: Flask, store: Store) -> None:
    """A game's summary is read where the worker puts it (``result.games[index]``); a
    result in another order is looked through."""
    match_id, index = (
        int(n)
        for n in _game_links(_get(app.test_client(), "/games?tournament=trouble"))[0].split("/")[2:]
    )
    before = games_service.game_record(store, match_id, index)
    with store.write() as session:
        match = session.get(Match, match_id)
        assert match is not None and match.result is not None
        match.result = {**match.result, "games": list(reversed(match.result["games"]))}
    after = games_service.game_record(store, match_id, index)
    assert before is not None and after == before
    assert games_service.game_record(store, match_id, 99) is None


def test_the_replay_cache_keeps_the_latest_games() -> None:
    cache = ReplayCache(size=2)
    games = [cast(ReplayedGame, object()) for _ in range(3)]
    cache.put((1, 0), games[0])
    cache.put((1, 1), games[1])
    assert cache.get((1, 0)) is games[0]  # now the latest used
    cache.put((2, 0), games[2])
    assert cache.get((1, 1)) is None
    assert cache.get((1, 0)) is games[0] and cache.get((2, 0)) is games[2]
    assert len(cache) == 2


def test_a_game_row_is_rendered_once_and_again_when_its_record_is_pruned(app: Flask) -> None:
    """A game list's row is kept rendered under its value: the same row is not rendered
    again; the row with its record pruned is another (a span, no link)."""
    import dataclasses
    from datetime import UTC, datetime

    import web.games
    from arena.service.games import GameRow

    row = GameRow(
        match_id=7, index=2, tournament="t", rules="draw", teams=False,
        seats=("alice/a@v1", "bob/b@v2"), owners=(1, 2), labels=("a", "b"), places=(0, 1),
        points=(10, 4), termination="target", fault_seat=None,
        finished=datetime(2026, 1, 1, tzinfo=UTC),
    )  # fmt: skip
    web.games._rows_kept.clear()
    with app.test_request_context("/games"):
        shown = web.games.game_row(row, False)
        assert web.games.game_row(row, False) is shown and len(web.games._rows_kept) == 1
        assert 'href="/games/7/2"' in shown and "alice/a v1" in shown
        pruned = web.games.game_row(dataclasses.replace(row, record_pruned=True), False)
    assert "(record pruned)" in pruned and 'href="/games/7/2"' not in pruned
    assert len(web.games._rows_kept) == 2
