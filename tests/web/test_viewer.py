"""The replay viewer (web/games.py, web/viewer.py, arena/engine/replay.py) with the Flask
test client: every state has a deep link the server renders; a seat's view shows its own
hand and only counts of the others'; a forfeited game opens at the fault; a duplicate deal's
games side by side; bad positions are one clear 400."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from flask import Flask
from flask.testing import FlaskClient

from arena.engine.replay import replay_record
from arena.engine.rules import PRESETS
from arena.engine.tiles import Tile
from arena.service.accounts import create_account
from arena.service.matches import create_stored_tournament
from arena.store.db import Store
from tests.paths import ZOO
from tests.web.conftest import HASHER, PASSWORD, RULES, create, logged_in, play, store_bots

#: A double-twelve game of five, the largest table the viewer must draw.
BIG = PRESETS["block-and-draw"].with_overrides(max_pip=12, target=40)


def _played(store: Store, tmp_path: Path) -> None:
    """ "spring": a duplicate round robin of greedy and random (2 games a table); "trouble":
    greedy against a bot that crashes in its third move; "big": five bots at one
    double-twelve table.
    Built once per test process (tests/conftest.py's seed marker)."""
    for name, role in (("alice", "user"), ("mallory", "user")):
        create_account(store, name, PASSWORD, role=role, hasher=HASHER)
    store_bots(store)
    store.add_bot_version("mallory", "raiser", (ZOO / "raise_in_move.py").read_text(), {})
    create_stored_tournament(
        store,
        name="spring",
        rules=RULES,
        format="duplicate",
        entrants=["reference/random", "alice/greedy@1"],
        games_per_match=2,
        seed=5,
    )
    play(store, "spring", tmp_path / "cache")
    create(store, "trouble", ["alice/greedy@1", "mallory/raiser"], 2)
    play(store, "trouble", tmp_path / "cache")
    create_stored_tournament(
        store,
        name="big",
        rules=BIG,
        format="round-robin",
        entrants=[
            "reference/random",
            "alice/greedy@1",
            "alice/greedy@2",
            "bob/counter",
            "mallory/raiser",
        ],
        players=5,
        games_per_match=1,
        seed=2,
    )
    play(store, "big", tmp_path / "cache")


pytestmark = pytest.mark.seed(build=_played)


def _get(client: FlaskClient, path: str, status: int = 200) -> str:
    response = client.get(path)
    assert response.status_code == status, (path, response.status_code, response.data[:300])
    return response.get_data(as_text=True)


def _games(client: FlaskClient, query: str) -> list[str]:
    return re.findall(r'href="(/games/\d+/\d+)"', _get(client, f"/games?{query}"))


def _record(client: FlaskClient, link: str) -> dict[str, object]:
    record: dict[str, object] = json.loads(_get(client, link + ".json"))
    return record


def _tiles(html: str) -> list[str]:
    return re.findall(r'data-tile="([^"]+)"', html)


def test_every_state_is_a_deep_link(app: Flask) -> None:
    """Each (round, step) renders the engine's line and hands; the links step through."""
    client = app.test_client()
    link = _games(client, "tournament=spring")[0]
    replay = replay_record(_record(client, link))
    for round_ in replay.rounds[:2]:
        for frame in round_.frames:
            page = _get(client, f"{link}/state?round={frame.round}&step={frame.step}")
            board = page.split('<div class="table">', 1)[1].split("</svg>", 1)[0]
            assert len(_tiles(board)) == len(frame.line)
            hands = page.split('<ol class="hands">', 1)[1]
            shown = {Tile.parse(t) for t in _tiles(hands)}
            assert shown == {t for hand in frame.hands for t in hand}
            assert f'data-round="{frame.round}" data-step="{frame.step}"' in page
    last = len(replay.rounds)
    whole = _get(client, f"{link}?round={last}&step=3")
    assert 'id="viewer"' in whole and f"Round {last} of {last}" in whole and "step 3 of" in whole
    assert 'aria-current="step"' in whole


def test_a_seats_view_hides_the_other_hands(app: Flask) -> None:
    client = app.test_client()
    link = _games(client, "tournament=big")[0]
    replay = replay_record(_record(client, link))
    assert replay.players == 5 and replay.rules.max_pip == 12
    frame = replay.frame(1, 0)
    for seat in range(5):
        page = _get(client, f"{link}/state?round=1&step=0&seat={seat}")
        hands = page.split('<ol class="hands">', 1)[1]
        shown = {Tile.parse(t) for t in _tiles(hands)}
        assert shown == set(frame.hands[seat]), seat
        assert hands.count('class="tile back"') >= sum(len(h) for h in frame.hands) - len(
            frame.hands[seat]
        )
        assert f'data-seat="{seat}"' in page


def test_a_forfeit_opens_at_the_faulting_turn(app: Flask) -> None:
    anonymous = app.test_client()
    link = _games(anonymous, "tournament=trouble&fault=crash")[0]
    replay = replay_record(_record(anonymous, link))
    assert replay.fault is not None
    page = _get(anonymous, link)
    assert f'data-round="{replay.fault[0]}" data-step="{replay.fault[1]}"' in page
    assert "forfeited: crash" in page and "Its legal moves here" in page
    assert "shown to its owner only" in page and "bot gave up on purpose" not in page
    owner = _get(logged_in(app, "mallory"), link)
    assert "bot gave up on purpose" in owner  # the stderr tail, for the bot's owner


def test_a_duplicate_deal_side_by_side(app: Flask) -> None:
    client = app.test_client()
    link = _games(client, "tournament=spring")[0]
    page = _get(client, link)
    assert f"{link}/duplicate" in page
    pair = _get(client, f"{link}/duplicate")
    assert pair.count('<section class="column') == 2
    # it opens where the games first differ, and the same deal is on both sides
    opening = re.search(r'data-round="(\d+)" data-step="(\d+)"', pair)
    assert opening is not None and "The games diverge here." in pair
    start = _get(client, f"{link}/duplicate/state?round=1&step=0")
    columns = start.split('<section class="column')[1:]
    hands = [sorted(_tiles(c.split('<ol class="hands">', 1)[1])) for c in columns]
    assert hands[0] == hands[1]
    _get(client, "/games/999999/0/duplicate", 404)
    trouble = _games(client, "tournament=trouble")[0]
    _get(client, f"{trouble}/duplicate", 404)


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("round=x", "round must be a whole number"),
        ("round=99999", "round must be a whole number from 1 to"),
        ("round=0", "round must be a whole number from 1 to"),
        ("step=-1", "step must be a whole number"),
        ("seat=7", "seat must be a whole number from 0 to 1"),
    ],
)
def test_a_bad_position_is_one_clear_400(app: Flask, query: str, message: str) -> None:
    client = app.test_client()
    link = _games(client, "tournament=spring")[0]
    for path in (link, f"{link}/state"):
        page = _get(client, f"{path}?{query}", 400)
        found = re.search(r'<p class="message">(.*?)</p>', page, re.S)
        assert found is not None and message in found.group(1).lower(), page[-600:]


def test_the_game_as_one_html_file(app: Flask) -> None:
    """A download with no outside reference: it steps offline (tests/web/test_export.py)."""
    client = app.test_client()
    link = _games(client, "tournament=trouble&fault=crash")[0]
    response = client.get(link + ".html")
    assert response.status_code == 200
    assert response.headers["Content-Disposition"].startswith("attachment;")
    html = response.get_data(as_text=True)
    assert "<script" in html and 'src="http' not in html and "forfeited" in html
    assert "bot gave up on purpose" not in html  # redacted for the anonymous reader
