"""The viewer's states drawn for every preset, player count and set size (no database):
the board's tiles are the line's, in order; a seat's view shows its own hand and the
others' only as backs; every state of a game renders."""

from __future__ import annotations

import json
import random
import xml.etree.ElementTree as ET

import pytest

from arena import Game, find_rules
from arena.engine.records import game_record
from arena.engine.replay import frames_of, replay_record
from arena.engine.rules import PRESETS
from web.viewer import Position, table

SETUPS = [
    (name, players, teams, 6)
    for name, rules in PRESETS.items()
    for players in rules.players
    for teams in ([False, True] if rules.team_play and players == 4 else [False])
] + [
    ("block-and-draw", 5, False, 12),
    ("draw", 3, False, 9),
    ("muggins", 4, True, 12),
    ("block", 2, False, 12),
]

SVG = "{http://www.w3.org/2000/svg}"


def _tiles(svg: str) -> list[str]:
    root = ET.fromstring(svg)
    return [g.get("data-tile", "") for g in root.iter(f"{SVG}g") if "tile" in g.get("class", "")]


@pytest.mark.parametrize(("name", "players", "teams", "max_pip"), SETUPS)
def test_every_state_draws_the_line_and_hides_the_other_hands(
    name: str, players: int, teams: bool, max_pip: int
) -> None:
    rules = find_rules(name) if max_pip == 6 else find_rules(name, max_pip=max_pip)
    rng = random.Random(11)
    game = Game(rules, players, teams=teams, seed=5)
    while not game.is_terminal():
        game.apply(rng.choice(game.legal_moves()))
    record = json.loads(json.dumps(game_record(game, [f"bot{s}" for s in range(players)])))
    replay = replay_record(record)
    frames = frames_of(replay)
    for frame in [*frames[:: max(1, len(frames) // 40)], frames[-1]]:
        for view in (None, *range(players)):
            shown = table(replay, Position(frame.round, frame.step, view))
            line = _tiles(str(shown["board"]))
            assert line == [f"{a}-{b}" for a, b in frame.line]
            for row in shown["hands"]:
                hand = _tiles(str(row.hand))
                if view is None or view == row.seat:
                    assert sorted(hand) == sorted(str(t) for t in frame.hands[row.seat])
                else:
                    assert set(hand) == {""} or not hand  # backs name no tile
                    assert len(hand) == len(frame.hands[row.seat])
