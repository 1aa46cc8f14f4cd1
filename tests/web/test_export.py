"""One game as a self-contained HTML file (web/export.py): every state in it, each state's
line, hands and views as the engine had them, the tiles drawn once where web/board.py draws
them, record text escaped, the file's size; then the file opened from disk in a real
browser (Debian's chromium through Playwright), stepped with the keys and the buttons.
Screenshots: tests/web/screenshots/export-*.png."""

from __future__ import annotations

import itertools
import json
import random
import re
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Dialog, Page, expect

from arena.engine.events import Termination
from arena.engine.game import Game
from arena.engine.records import game_record
from arena.engine.replay import Frame, Replay, frames_of, replay_record
from arena.engine.rules import PRESETS, Rules
from tests.web.conftest import screenshot
from web.board import (
    HALF,
    layout_line,
    line_viewbox,
    pip_positions,
    tile_defs,
    tile_svg,
    tile_use,
)
from web.export import game_html

NS = "{http://www.w3.org/2000/svg}"
HOSTILE = "<script>alert(1)</script>"
BIG = PRESETS["block-and-draw"].with_overrides(max_pip=12)
#: The brief's budget for a game of 20 rounds and more.
BUDGET = 1_500_000


def _played(
    rules: Rules, players: int, seed: int, names: list[str], *, teams: bool = False
) -> dict[str, Any]:
    rng = random.Random(seed)
    game = Game(rules, players, teams=teams, seed=seed)
    while not game.is_terminal():
        game.apply(rng.choice(game.legal_moves()))
    record: dict[str, Any] = json.loads(json.dumps(game_record(game, names)))
    return record


@cache
def long_block() -> Replay:
    """A 2-player ``block`` game of 20 rounds or more (random play to 100 points), as
    benchmarks/web.py's ``store_records`` makes them."""
    rng = random.Random(0)
    seed = 0
    while True:
        seed += 1
        game = Game(PRESETS["block"], 2, seed=seed)
        while not game.is_terminal():
            game.apply(rng.choice(game.legal_moves()))
        if len(game.rounds) >= 20:
            record = game_record(game, ["owner00/bot000@v1", HOSTILE])
            return replay_record(json.loads(json.dumps(record)))


@cache
def big_five() -> Replay:
    """A double-twelve game of five (``block-and-draw``): a long line, draws, passes."""
    names = ["reference/random@v1", "alice/greedy@1", "alice/greedy@2", "bob/counter@3", HOSTILE]
    return replay_record(_played(BIG, 5, 7, names))


@cache
def muggins_teams() -> Replay:
    """A ``muggins`` game of two teams of two: points in play, scores by team."""
    names = ["north", "east", "south", "west"]
    return replay_record(_played(PRESETS["muggins"], 4, 3, names, teams=True))


GAMES = pytest.mark.parametrize(
    "make", [long_block, big_five, muggins_teams], ids=["block-20", "double-12-x5", "teams"]
)


def forfeited(message: str | None, stderr: str | None) -> tuple[Replay, dict[str, Any]]:
    """A ``draw`` game a bot forfeits on its turn in round 1 (the verdict as given)."""
    rng = random.Random(4)
    game = Game(PRESETS["draw"], 2, seed=4)
    for _ in range(9):
        game.apply(rng.choice(game.legal_moves()))
    seat = game.seat
    assert seat is not None
    game.forfeit(seat, Termination.TIMEOUT)
    verdict = {
        "seat": seat,
        "termination": "timeout",
        "message": message,
        "stderr": stderr,
        "time": [2000.5, 2101.25],
    }
    record = json.loads(json.dumps(game_record(game, ["alpha", HOSTILE], verdict=verdict)))
    return replay_record(record), verdict


def data_of(html: str) -> dict[str, Any]:
    found = re.search(r'<script type="application/json" id="game-data">(.*?)</script>', html, re.S)
    assert found, "no game data"
    data: dict[str, Any] = json.loads(found.group(1))
    return data


def line_of(html: str, round_number: int) -> ET.Element:
    """A round's line (every tile of its last state) parsed as XML."""
    pattern = rf'<svg [^>]*class="board-line off" data-round="{round_number}".*?</svg>'
    found = re.search(pattern, html, re.S)
    assert found, f"no line for round {round_number}"
    return ET.fromstring(found.group(0))


def faces_of(html: str, seat: int, round_number: int) -> str:
    """The markup of a seat's face-up tiles in a round (every tile it held in it)."""
    items = re.findall(r'<li class="hand[^"]*" data-seat="(\d+)">(.*?)</li>', html, re.S)
    row = dict(items)[str(seat)]
    found = re.search(
        rf'<span class="tiles face off" data-round="{round_number}">(.*?)</span>', row, re.S
    )
    assert found, f"no face for seat {seat} in round {round_number}"
    return found.group(1)


def backs_of(html: str, seat: int) -> str:
    items = re.findall(r'<li class="hand[^"]*" data-seat="(\d+)">(.*?)</li>', html, re.S)
    found = re.search(r'<span class="tiles backs off"[^>]*>(.*?)</span>', dict(items)[str(seat)])
    assert found
    return found.group(1)


def name(tile: tuple[int, int]) -> str:
    return f"{tile[0]}-{tile[1]}"


def viewbox(state: Mapping[str, Any]) -> tuple[float, float, float, float]:
    x, y, w, h = (float(v) for v in str(state["vb"]).split())
    return x, y, w, h


# -- the tiles drawn once -------------------------------------------------------------------


def circles(markup: str) -> set[tuple[float, float, float]]:
    return {
        (float(x), float(y), float(r))
        for x, y, r in re.findall(r'<circle cx="([-\d.]+)" cy="([-\d.]+)" r="([-\d.]+)"/>', markup)
    }


@pytest.mark.parametrize("vertical", [True, False])
def test_a_face_turned_half_a_turn_is_the_tile_the_other_way_round(vertical: bool) -> None:
    """tile_use draws a tile low half first as its face turned about its centre: every pip
    pattern (0 to 12) is the same turned half a turn, so that is tile_svg's drawing."""
    w, h = (HALF, 2 * HALF) if vertical else (2 * HALF, HALF)
    for high in range(13):
        for low in range(high + 1):
            face = circles(tile_svg(high, low, 0, 0, vertical=vertical))
            turned = {(round(w - x, 1), round(h - y, 1), r) for x, y, r in face}
            assert turned == circles(tile_svg(low, high, 0, 0, vertical=vertical))
    for n in range(13):  # and each half's pattern on its own
        spots = {(x, y) for x, y, _ in pip_positions(n, vertical=vertical)}
        assert {(round(HALF - x, 1), round(HALF - y, 1)) for x, y in spots} == spots


def test_tile_use_places_the_face_and_turns_it_about_its_centre() -> None:
    assert tile_use(6, 4, 10, 20, vertical=False) == '<use href="#tl6-4" x="10" y="20"/>'
    assert tile_use(4, 6, 10, 20, vertical=False) == (
        '<use href="#tl6-4" x="10" y="20" transform="rotate(180 34 32)"/>'
    )
    assert tile_use(2, 12, 0, 0, vertical=True, ids="q") == (
        '<use href="#qu12-2" x="0" y="0" transform="rotate(180 12 24)"/>'
    )
    defs = tile_defs([(4, 6)], [(6, 4), (3, 3)])
    assert re.findall(r'<g id="(t[^"]+)"', defs) == ["tu6-4", "tl3-3", "tl6-4", "tback"]
    assert ET.fromstring(f'<svg xmlns="http://www.w3.org/2000/svg">{defs}</svg>') is not None


# -- every state, as the engine had it ------------------------------------------------------


@GAMES
def test_every_state_is_in_the_file_in_order(make: Any) -> None:
    replay: Replay = make()
    data = data_of(game_html(replay, title="A game", verdict=None))
    states = data["states"]
    assert len(states) == replay.steps
    assert [(s["r"], s["s"]) for s in states] == [(f.round, f.step) for f in frames_of(replay)]
    assert data["starts"] == [0, *itertools.accumulate(len(r.frames) for r in replay.rounds)]
    assert data["fault"] == -1


@GAMES
def test_each_states_line_is_the_frames_line_where_the_viewer_draws_it(make: Any) -> None:
    """The run a state shows is its line, tile by tile in order, the tile just played
    marked; offset by the state's viewBox, each tile is exactly where layout_line puts it
    for that state (so where the live viewer's line_svg draws it), in a picture as high."""
    replay: Replay = make()
    html = game_html(replay, title="A game", verdict=None)
    states = data_of(html)["states"]
    lines = {}
    for round_ in replay.rounds:
        svg = line_of(html, round_.number)
        lines[round_.number] = [
            (g.get("data-tile"), g.findall(f"{NS}use")[-1]) for g in svg.iter(f"{NS}g")
        ]
    for frame, state in zip(frames_of(replay), states, strict=True):
        drawn = lines[frame.round][state["lo"] : state["hi"] + 1]
        assert [tile for tile, _ in drawn] == [name(t) for t in frame.line]
        assert state.get("p") == (None if frame.placed is None else state["lo"] + frame.placed)
        _, top, width, height = viewbox(state)
        places = layout_line(frame.line, frame.lead)
        assert (width, height) == line_viewbox(places)
        for (_, use), place in zip(drawn, places, strict=True):
            assert float(use.get("x", 0)) == pytest.approx(place.x, abs=0.05)
            assert float(use.get("y", 0)) - top == pytest.approx(place.y, abs=0.05)
            a, b = place.first, place.second
            face = f"#t{'u' if place.vertical else 'l'}{max(a, b)}-{min(a, b)}"
            assert use.get("href") == face
            assert ("transform" in use.attrib) == (a < b)


@GAMES
def test_each_states_hands_scores_turn_and_legal_tiles(make: Any) -> None:
    replay: Replay = make()
    html = game_html(replay, title="A game", verdict=None)
    states = data_of(html)["states"]
    held = {
        (seat, r.number): re.findall(r'data-tile="(\d+-\d+)"', faces_of(html, seat, r.number))
        for seat in range(replay.players)
        for r in replay.rounds
    }
    for frame, state in zip(frames_of(replay), states, strict=True):
        for seat, hand in enumerate(frame.hands):
            tiles = held[seat, frame.round]
            shown = [t for t, on in zip(tiles, state["h"][seat], strict=True) if on == "1"]
            assert shown == [name((t.high, t.low)) for t in hand]
            # a seat's view shows what its bot was shown: its hand, the others' counts
            seen = frame.observation(seat)
            assert shown == [name((t.high, t.low)) for t in seen.hand]
            assert [h.count("1") for h in state["h"]] == list(seen.hand_sizes)
            if seen.legal_moves:
                assert state["lm"] == [str(m) for m in seen.legal_moves]
        sides = [seat % 2 if replay.teams else seat for seat in range(replay.players)]
        assert state["sc"] == [frame.scores[side] for side in sides]
        assert state.get("m") == frame.to_move
        if frame.legal_moves:
            assert frame.to_move is not None
            tiles = held[frame.to_move, frame.round]
            legal = {name((m.tile.high, m.tile.low)) for m in frame.legal_moves}
            assert {tiles[i] for i in state["l"]} == legal
            assert state["lm"] == [str(m) for m in frame.legal_moves]
        else:
            assert "l" not in state and "lm" not in state
        assert state["b"].startswith(f"Boneyard: {frame.boneyard} tile")


def test_a_hidden_hand_is_backs_that_name_no_tile() -> None:
    """In a seat's view the others' hands show backs only: their markup names no tile, and
    each seat has as many backs as it ever held tiles (a state shows its count)."""
    replay = big_five()
    html = game_html(replay, title="A game", verdict=None)
    for seat in range(replay.players):
        backs = backs_of(html, seat)
        assert not re.search(r"\d+-\d+|data-tile|<title|#tu|#tl", backs), backs
        most = max(len(f.hands[seat]) for f in frames_of(replay))
        assert backs.count('<use href="#tback"/>') == most


def test_record_text_is_escaped() -> None:
    """Bot names, the verdict's message and stderr arrive escaped: in the markup as
    entities, in the JSON with ``<`` written ``\\u003c`` (no ``</script>`` can end it)."""
    message = "</script><script>alert(2)</script> & 'quotes'"
    stderr = 'Traceback\n  <img src=x onerror="alert(3)">\n'
    replay, verdict = forfeited(message, stderr)
    html = game_html(replay, title=f"Game {HOSTILE}", verdict=verdict, source_url=HOSTILE)
    assert HOSTILE not in html and "alert(2)</script>" not in html and "<img" not in html
    assert html.count("<script") == 2  # the game's data and the script
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "&lt;img src=x onerror=&#34;alert(3)&#34;&gt;" in html
    assert 'href="&lt;script' not in html  # only an http(s) address is a link
    linked = game_html(replay, title="A game", verdict=None, source_url="https://a.example/g/1")
    assert '<a href="https://a.example/g/1">' in linked
    unlinked = game_html(replay, title="A", verdict=None, source_url="javascript:alert(4)")
    assert "Saved from javascript:alert(4)." in unlinked and 'href="javascript' not in unlinked
    data = re.search(r'id="game-data">(.*?)</script>', html, re.S)
    assert data and "<" not in data.group(1)


def test_a_forfeit_shows_its_verdict_at_the_faulting_state() -> None:
    replay, verdict = forfeited("took 2.0 s", "a traceback")
    assert replay.fault is not None
    html = game_html(replay, title="A game", verdict=verdict)
    data = data_of(html)
    at = data["starts"][replay.fault[0] - 1] + replay.fault[1]
    assert data["fault"] == at == len(data["states"]) - 1
    fault = re.search(r'<section class="fault off" role="alert">(.*?)</section>', html, re.S)
    assert fault
    seat = verdict["seat"]
    assert f"Seat {seat} ({'alpha' if seat == 0 else '&lt;script&gt;'}" in fault.group(1)
    assert "forfeited: timeout" in fault.group(1) and "took 2.0 s" in fault.group(1)
    assert "2000.5 ms of CPU" in fault.group(1) and "a traceback" in fault.group(1)
    frame = replay.frame(*replay.fault)
    assert all(f"<code>{move}</code>" in fault.group(1) for move in frame.legal_moves)
    # redacted for this reader: no message, no stderr, and it says why
    redacted = {**verdict, "message": None, "stderr": None}
    shown = game_html(replay, title="A game", verdict=redacted)
    assert "took 2.0 s" not in shown and "a traceback" not in shown
    assert "shown to its owner only" in shown
    # without a verdict, still the place it ended
    assert "The game was forfeited here: timeout" in game_html(replay, title="A", verdict=None)


def test_sizes(capsys: pytest.CaptureFixture[str]) -> None:
    """The file's size for a 2-player game of 20+ rounds and a double-twelve game of five
    (printed); the long game stays well under the budget."""
    sizes = {}
    for label, replay in (
        ("block, 2 players", long_block()),
        ("double-twelve block-and-draw, 5 players", big_five()),
        (
            "double-twelve block-and-draw, 5 players, to 1000",
            replay_record(_played(BIG.with_overrides(target=1000), 5, 7, list("abcde"))),
        ),
    ):
        size = len(game_html(replay, title="A game", verdict=None).encode())
        sizes[label] = size
        with capsys.disabled():
            print(
                f"\n{label}: {len(replay.rounds)} rounds, {replay.steps} states, "
                f"{size / 1024:.0f} KB ({size / replay.steps:.0f} bytes a state)"
            )
    assert len(long_block().rounds) >= 20
    assert sizes["block, 2 players"] < BUDGET / 3


# -- in a real browser, from disk -----------------------------------------------------------


def _shown(page: Page) -> tuple[int, int, str]:
    state = page.locator("#state")
    return (
        int(state.get_attribute("data-round") or 0),
        int(state.get_attribute("data-step") or 0),
        state.get_attribute("data-seat") or "",
    )


def _visible_line(page: Page) -> list[str]:
    tiles: list[str] = page.eval_on_selector_all(
        "svg.board-line g.lt",
        "gs => gs.filter(g => g.getClientRects().length > 0).map(g => g.dataset.tile)",
    )
    return tiles


def _visible_hand(page: Page, seat: int) -> list[str]:
    tiles: list[str] = page.eval_on_selector_all(
        f"ol.hands li[data-seat='{seat}'] svg.ht",
        "ts => ts.filter(t => t.getClientRects().length > 0).map(t => t.dataset.tile || 'back')",
    )
    return tiles


def _expect_frame(page: Page, frame: Frame, view: int | None = None) -> None:
    expect(page.locator("#state")).to_have_attribute("data-round", str(frame.round))
    expect(page.locator("#state")).to_have_attribute("data-step", str(frame.step))
    assert _visible_line(page) == [name(t) for t in frame.line]
    for seat, hand in enumerate(frame.hands):
        if view is None or view == seat:
            assert _visible_hand(page, seat) == [name((t.high, t.low)) for t in hand]
        else:
            assert _visible_hand(page, seat) == ["back"] * len(hand)


def _open(page: Page, path: Path, html: str, fragment: str = "") -> list[str]:
    path.write_text(html, encoding="utf-8")
    dialogs: list[str] = []

    def dismiss(dialog: Dialog) -> None:
        dialogs.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", dismiss)
    page.goto(path.as_uri() + fragment)
    return dialogs


def test_the_file_steps_through_the_game_offline(page: Page, tmp_path: Path) -> None:
    """From disk, asking for nothing but the file itself: the keys and buttons step,
    PageUp/PageDown change rounds, End and Home jump, Space plays and pauses; each state
    shown is the engine's (its line and every hand, tile by tile)."""
    replay = long_block()
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    dialogs = _open(page, tmp_path / "game.html", game_html(replay, title="Game", verdict=None))
    frames = frames_of(replay)
    assert _shown(page) == (1, 0, "")
    _expect_frame(page, frames[0])
    expect(page.locator(".caption .what")).to_have_text("The deal.")
    for k in range(1, 4):
        page.keyboard.press("ArrowRight")
        _expect_frame(page, frames[k])
    expect(page.locator("svg.board-line g.lt.placed")).to_have_count(1)
    expect(page.locator("details.events li[aria-current]")).to_have_count(1)
    page.keyboard.press("ArrowLeft")
    _expect_frame(page, frames[2])
    page.keyboard.press("PageDown")
    _expect_frame(page, replay.rounds[1].frames[0])
    page.keyboard.press("PageDown")
    page.keyboard.press("PageUp")
    _expect_frame(page, replay.rounds[1].frames[0])
    page.keyboard.press("End")
    _expect_frame(page, frames[-1])
    assert page.locator("button[data-go='next']").is_disabled()
    expect(page.locator(".round-result:not(.off)")).to_contain_text(
        f"Round {len(replay.rounds)} ended"
    )
    screenshot(page, "export-block-last")
    page.keyboard.press("Home")
    _expect_frame(page, frames[0])
    page.locator("button[data-go='next']").click()
    _expect_frame(page, frames[1])
    page.locator("nav.rounds a[data-round='3']").click()
    _expect_frame(page, replay.rounds[2].frames[0])
    page.locator("details.events ol:not(.off) a[data-step='2']").click()
    _expect_frame(page, replay.rounds[2].frames[2])
    expect(page).to_have_url(re.compile(r"#round=3&step=2$"))
    screenshot(page, "export-block")
    page.keyboard.press("Space")
    expect(page.locator("#state")).to_have_attribute("data-step", "3", timeout=5_000)
    page.keyboard.press("Space")
    expect(page.locator("button[data-go='play']")).to_have_text("Play")
    assert not dialogs
    assert all(url.startswith("file://") for url in requests), requests


def test_seat_views_and_a_double_twelve_game_of_five(page: Page, tmp_path: Path) -> None:
    """Key 3 shows seat 2's view (its hand, the others' backs by count, its legal tiles
    at its turn), 0 every hand again; a deep link opens a state and a view; the long line
    of a double-twelve game of five stays readable."""
    replay = big_five()
    html = game_html(replay, title="Double twelve", verdict=None, source_url="https://x/g/1")
    frames = frames_of(replay)
    turn = next(f for f in frames[40:] if f.to_move == 2 and f.legal_moves)
    fragment = f"#round={turn.round}&step={turn.step}"
    dialogs = _open(page, tmp_path / "big.html", html, fragment)
    _expect_frame(page, turn)
    page.keyboard.press("3")
    expect(page.locator("#state")).to_have_attribute("data-seat", "2")
    _expect_frame(page, turn, view=2)
    expect(page.locator("nav.views a[aria-current]")).to_have_text("Seat 2's view")
    legal = {name((m.tile.high, m.tile.low)) for m in turn.legal_moves}
    shown_legal = page.eval_on_selector_all(
        "ol.hands svg.ht.legal", "ts => ts.filter(t => t.getClientRects().length).length"
    )
    assert shown_legal == len(legal)
    expect(page.locator("li[data-seat='2'] .moves")).to_contain_text("Legal:")
    for seat in (0, 1, 3, 4):  # what shows of the others names no tile
        markup = page.eval_on_selector(
            f"ol.hands li[data-seat='{seat}']",
            "li => Array.from(li.querySelectorAll('.tiles > .tiles'))"
            ".filter(s => s.getClientRects().length).map(s => s.innerHTML).join('')",
        )
        assert not re.search(r"\d+-\d+|data-tile", markup)
        count = len(turn.hands[seat])
        expect(page.locator(f"li[data-seat='{seat}'] .count")).to_contain_text(
            f"{count} tile{'' if count == 1 else 's'}"
        )
    screenshot(page, "export-double-twelve-5-seat-2")
    page.keyboard.press("End")
    _expect_frame(page, frames[-1], view=2)
    page.keyboard.press("0")
    _expect_frame(page, frames[-1])
    page.keyboard.press("ArrowLeft")
    _expect_frame(page, frames[-2])
    screenshot(page, "export-double-twelve-5")
    assert not dialogs  # the hostile bot name stayed text


def test_a_forfeited_game_opens_at_its_verdict(page: Page, tmp_path: Path) -> None:
    replay, verdict = forfeited("</pre><script>alert(2)</script>", "line 1\nline 2")
    assert replay.fault is not None
    html = game_html(replay, title="Forfeit", verdict=verdict)
    dialogs = _open(page, tmp_path / "forfeit.html", html)
    _expect_frame(page, replay.frame(*replay.fault))
    fault = page.locator(".fault")
    expect(fault).to_be_visible()
    expect(fault).to_contain_text("forfeited: timeout")
    expect(fault.locator(".message")).to_have_text("</pre><script>alert(2)</script>")
    expect(page.locator(".caption .turn")).to_have_text("")
    screenshot(page, "export-forfeit")
    page.keyboard.press("ArrowLeft")
    expect(fault).to_be_hidden()
    assert not dialogs
