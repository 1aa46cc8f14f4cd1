"""Stepping through a record: every frame is the engine's state, every seat's view is
exactly the observation its bot received."""

from __future__ import annotations

import copy
import json
import random
from typing import Any

import pytest

from arena import Game, find_rules
from arena.engine.events import Termination
from arena.engine.records import game_record, verify_record
from arena.engine.replay import frames_of, replay_record
from arena.engine.round import Round
from arena.engine.rules import PRESETS, Rules
from arena.engine.tiles import Move, set_size
from arena.errors import ParseError

SETUPS = [
    (name, players, teams, max_pip)
    for name, rules in PRESETS.items()
    for players in rules.players
    for teams in ([False, True] if rules.team_play and players == 4 else [False])
    for max_pip in (6,)
] + [("block-and-draw", 5, False, 12), ("draw", 4, False, 9), ("muggins", 4, True, 12)]


def rules_for(name: str, max_pip: int) -> Rules:
    return find_rules(name) if max_pip == 6 else find_rules(name, max_pip=max_pip)


def record_of(game: Game) -> dict[str, Any]:
    names = [f"bot{seat}" for seat in range(game.players)]
    data: dict[str, Any] = json.loads(json.dumps(game_record(game, names)))
    return data


@pytest.mark.parametrize(("name", "players", "teams", "max_pip"), SETUPS)
def test_frames_are_the_engines_states(name: str, players: int, teams: bool, max_pip: int) -> None:
    """At every play the engine waited for, each seat's view in the replay equals the
    observation the engine gave that seat; the line, hands and boneyard add up at every step."""
    rules = rules_for(name, max_pip)
    rng = random.Random(7)
    game = Game(rules, players, teams=teams, seed=3)
    expected: dict[tuple[int, int], list[Any]] = {}
    while not game.is_terminal():
        round_ = game.round
        step = len(round_.events)
        expected[(round_.number, step)] = [game.observation(s) for s in range(players)]
        game.apply(rng.choice(game.legal_moves()))
    replay = replay_record(record_of(game))
    assert len(replay.rounds) == len(game.rounds)
    seen = 0
    for frame in frames_of(replay):
        size = sum(len(hand) for hand in frame.hands) + frame.boneyard + len(frame.line)
        assert size == set_size(rules.max_pip)
        if (frame.round, frame.step) in expected:
            seen += 1
            for seat, observation in enumerate(expected[(frame.round, frame.step)]):
                assert frame.observation(seat) == observation, (frame.round, frame.step, seat)
    assert seen == len(expected)
    assert replay.score_timeline()[-1] == tuple(game.scores)


def test_the_placed_tile_and_the_lead_index() -> None:
    """``placed`` points at the tile the step played; ``lead`` at the round's first tile."""
    rules = find_rules("block")
    rng = random.Random(2)
    game = Game(rules, 2, seed=9)
    while not game.is_terminal():
        game.apply(rng.choice(game.legal_moves()))
    replay = replay_record(record_of(game))
    for frame in frames_of(replay):
        event = frame.event
        if event is None or event["type"] != "play":
            assert frame.placed is None
            continue
        move = Move.parse(event["move"])
        assert frame.placed is not None
        assert sorted(frame.line[frame.placed]) == sorted((move.tile.high, move.tile.low))
        first = replay.rounds[frame.round - 1].frames[1]
        assert first.event is not None and first.line[0] == frame.line[frame.lead]


def test_a_forfeit_stops_at_the_faulting_turn() -> None:
    """A forfeited game's last frame is the turn the bot lost on, with its legal moves."""
    rules = find_rules("draw")
    rng = random.Random(4)
    game = Game(rules, 2, seed=4)
    for _ in range(9):
        game.apply(rng.choice(game.legal_moves()))
    seat = game.seat
    assert seat is not None
    moves = game.legal_moves()
    game.forfeit(seat, Termination.TIMEOUT)
    verdict = {"seat": seat, "termination": "timeout", "message": "slow", "stderr": ""}
    record = json.loads(json.dumps(game_record(game, ["a", "b"], verdict=verdict)))
    replay = replay_record(record)
    assert replay.fault == (game.round.number, len(game.round.events))
    last = replay.frame(*replay.fault)
    assert last.to_move == seat and last.legal_moves == moves
    assert replay.verdict is not None and replay.verdict["message"] == "slow"


def test_a_record_that_does_not_verify_is_refused() -> None:
    game = Game(find_rules("block"), 2, seed=1)
    rng = random.Random(1)
    while not game.is_terminal():
        game.apply(rng.choice(game.legal_moves()))
    record = record_of(game)
    bad = copy.deepcopy(record)
    bad["rounds"][0]["events"][0]["seat"] = 1 - bad["rounds"][0]["events"][0]["seat"]
    with pytest.raises(ParseError, match="does not verify: round 1, event 1"):
        replay_record(bad)


def test_frame_clamps_out_of_range_steps() -> None:
    game = Game(find_rules("block"), 2, seed=1)
    rng = random.Random(1)
    while not game.is_terminal():
        game.apply(rng.choice(game.legal_moves()))
    replay = replay_record(record_of(game))
    assert replay.frame(0, -5) == replay.rounds[0].frames[0]
    assert replay.frame(999, 999) == replay.rounds[-1].frames[-1]


def test_verifying_and_stepping_are_one_simulation(monkeypatch: pytest.MonkeyPatch) -> None:
    """``replay_record`` applies each recorded play to the engine once: the frames come
    from the verification's own simulation, not a second one."""
    game = Game(find_rules("draw"), 3, seed=5)
    rng = random.Random(5)
    while not game.is_terminal():
        game.apply(rng.choice(game.legal_moves()))
    record = record_of(game)
    plays = sum(e["type"] == "play" for r in record["rounds"] for e in r["events"])
    applied: list[Move] = []
    apply = Game.apply

    def counted(self: Game, move: Move) -> None:
        applied.append(move)
        apply(self, move)

    monkeypatch.setattr(Game, "apply", counted)
    replay = replay_record(record)
    assert len(applied) == plays
    assert sum(len(r.frames) for r in replay.rounds) == plays + sum(
        len(r["events"]) - sum(e["type"] == "play" for e in r["events"]) + 1
        for r in record["rounds"]
    )


def test_a_watcher_sees_every_round_and_play() -> None:
    """``verify_record``'s watcher sees each round as dealt and each play with the moves
    the engine offered before it (the played one among them)."""
    game = Game(find_rules("block"), 2, seed=6)
    rng = random.Random(6)
    while not game.is_terminal():
        game.apply(rng.choice(game.legal_moves()))
    record = record_of(game)
    seen: list[tuple[int, int, tuple[Move, ...]]] = []
    started: list[int] = []

    class Watcher:
        def round_started(self, round_: Round) -> None:
            started.append(round_.number)

        def played(self, round_: Round, position: int, legal: tuple[Move, ...]) -> None:
            assert round_.line  # the play is applied
            seen.append((round_.number, position, legal))

    assert verify_record(record, Watcher()) == []
    assert started == [r["number"] for r in record["rounds"]]
    plays = {
        (r["number"], position): Move.parse(event["move"])
        for r in record["rounds"]
        for position, event in enumerate(r["events"])
        if event["type"] == "play"
    }
    assert [(number, position) for number, position, _ in seen] == list(plays)
    assert all(plays[(number, position)] in legal for number, position, legal in seen)
