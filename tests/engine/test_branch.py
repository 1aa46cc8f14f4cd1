"""Branches (arena.engine.branch): a recorded game taken up at any turn is exactly the
original game there, the prefix is verified, and a branch's record verifies."""

from __future__ import annotations

import copy
import json
import random
from typing import Any

import jsonschema_rs
import pytest

from arena import Game, find_rules
from arena.engine.branch import branch_game, branch_record, round_plays
from arena.engine.events import Play, Termination
from arena.engine.records import game_record, verify_record
from arena.engine.rules import PRESETS, Rules
from arena.engine.tiles import Move
from arena.errors import ParseError, RulesError
from tests.paths import DOCS

SCHEMA = json.loads((DOCS / "record.schema.json").read_text())
VALIDATOR = jsonschema_rs.Draft202012Validator(SCHEMA)

#: Every preset at its smallest and largest player count, and team play where allowed:
#: muggins 2v2 and a 5-player block-and-draw among them.
SETUPS = sorted(
    {
        (name, players, teams)
        for name, rules in PRESETS.items()
        for players in (rules.players[0], rules.players[-1])
        for teams in ([False, True] if rules.team_play and players == 4 else [False])
    }
)
assert ("muggins", 4, True) in SETUPS and ("block-and-draw", 5, False) in SETUPS

State = tuple[Any, ...]


def state(game: Game) -> State:
    """Everything a position is: round, hands, line, boneyard (in order), scores, the seat
    to move and its legal moves, the round's events."""
    round_ = game.round
    return (
        round_.number,
        tuple(round_.hand(seat) for seat in range(game.players)),
        round_.line,
        round_.boneyard,
        round_.drawable,
        tuple(round_.scores),
        game.seat,
        round_.legal_moves(),
        tuple(round_.events),
    )


def play_recorded(
    rules: Rules, players: int, seed: int, *, teams: bool = False
) -> tuple[dict[str, Any], dict[tuple[int, int], State]]:
    """A random game's record (through JSON) and the state before each of its plays,
    keyed by (round, plays made in the round so far)."""
    rng = random.Random(seed)
    game = Game(rules, players, teams=teams, seed=seed)
    states: dict[tuple[int, int], State] = {}
    plays = 0
    number = 1
    while not game.is_terminal():
        if game.round.number != number:
            number, plays = game.round.number, 0
        states[(number, plays)] = state(game)
        game.apply(rng.choice(game.legal_moves()))
        plays += 1
    names = [f"bot{seat}" for seat in range(players)]
    return json.loads(json.dumps(game_record(game, names))), states


def expected(states: dict[tuple[int, int], State], number: int, turn: int, plays: int) -> State:
    """The original's position at (round, turn): after a round's last play, the next
    round's lead."""
    return states[(number, turn)] if turn < plays else states[(number + 1, 0)]


@pytest.mark.parametrize(("name", "players", "teams"), SETUPS)
def test_the_branch_point_is_the_original_position(name: str, players: int, teams: bool) -> None:
    """At turn 0, a middle turn and the last turn of every round (but the game's end), the
    game branch_game returns is the original game at that point: hands, line, boneyard,
    scores, the seat to move and its moves, the round's events."""
    for seed in range(2):
        record, states = play_recorded(find_rules(name), players, seed, teams=teams)
        rounds = len(record["rounds"])
        for number in range(1, rounds + 1):
            plays = round_plays(record, number)
            for turn in sorted({0, plays // 2, plays}):
                if number == rounds and turn == plays:
                    continue  # the game is over there (below)
                game = branch_game(record, number, turn)
                assert state(game) == expected(states, number, turn, plays), (number, turn)


@pytest.mark.parametrize(("name", "players", "teams"), SETUPS)
def test_branch_records_validate_and_verify(name: str, players: int, teams: bool) -> None:
    """A branch played on at random is a record of its own: it matches the schema, verifies,
    keeps the rounds before and the kept plays unchanged, stops after its round and says
    where it came from."""
    record, _ = play_recorded(find_rules(name), players, 5, teams=teams)
    rounds = len(record["rounds"])
    rng = random.Random(9)
    for number in sorted({1, (rounds + 1) // 2, rounds}):
        plays = round_plays(record, number)
        turn = rng.randrange(plays)
        game = branch_game(record, number, turn)
        while not game.is_terminal() and len(game.rounds) == number:
            game.apply(rng.choice(game.legal_moves()))
        names = [f"new{seat}" for seat in range(players)]
        data = branch_record(
            record, game, names, round_number=number, turn=turn, seed=77, source="a test"
        )
        VALIDATOR.validate(data)
        assert verify_record(data) == []
        assert len(data["rounds"]) == number
        assert data["rounds"][: number - 1] == record["rounds"][: number - 1]
        original, mine = record["rounds"][number - 1], data["rounds"][number - 1]
        assert mine["deal"] == original["deal"] and mine["dealt"] == original["dealt"]
        kept = [i for i, e in enumerate(original["events"]) if e["type"] == "play"][turn]
        assert mine["events"][:kept] == original["events"][:kept]
        assert mine["result"] is not None
        assert (data["result"] is None) == (not game.is_terminal())
        assert data["seats"] == names and data["seed"] == record["seed"]
        assert data["branch"] == {
            "round": number,
            "turn": turn,
            "seats": record["seats"],
            "seed": 77,
            "source": "a test",
        }


def test_the_same_plays_give_the_original_round() -> None:
    """Played on with the original's own moves, a branch's round is the original round."""
    record, _ = play_recorded(find_rules("draw"), 3, 4)
    number = 2
    game = branch_game(record, number, 3)
    original = record["rounds"][number - 1]
    for event in [e for e in original["events"] if e["type"] == "play"][3:]:
        game.apply(Move.parse(event["move"]))
    data = branch_record(record, game, record["seats"], round_number=number, turn=3)
    assert data["rounds"][-1] == original
    assert "source" not in data["branch"] and data["branch"]["seed"] is None
    assert verify_record(data) == []


def test_turn_zero_and_the_last_turn() -> None:
    """Turn 0 is the round as dealt, nobody having played; the last turn of a round that
    did not end the game is the next round's lead, whose branch holds the round as it was."""
    record, _ = play_recorded(find_rules("block"), 2, 3)
    assert len(record["rounds"]) > 1
    first = branch_game(record, 1, 0)
    assert first.round.events == [] and first.seat == record["rounds"][0]["leader"]
    hands = record["rounds"][0]["deal"]["hands"]
    assert [sorted(map(str, first.round.hand(s))) for s in range(2)] == list(map(sorted, hands))
    plays = round_plays(record, 1)
    last = branch_game(record, 1, plays)
    assert len(last.rounds) == 2 and last.round.events == []
    data = branch_record(record, last, ["a", "b"], round_number=1, turn=plays)
    assert data["rounds"] == record["rounds"][:1] and data["result"] is None
    assert verify_record(data) == []


def test_a_game_over_at_the_point_is_refused() -> None:
    """The last play of the last round ended the game: nothing is left to branch."""
    record, _ = play_recorded(find_rules("draw"), 2, 1)
    rounds = len(record["rounds"])
    plays = round_plays(record, rounds)
    with pytest.raises(RulesError, match="the game is over"):
        branch_game(record, rounds, plays)
    branch_game(record, rounds, plays - 1)  # one play before is fine


def test_a_forfeited_game_branches_from_the_fault() -> None:
    """A game a bot forfeited can be taken up exactly where it failed: the last round,
    all its plays kept; the branch record has no verdict of its own."""
    rng = random.Random(2)
    game = Game(find_rules("draw"), 2, seed=2)
    for _ in range(30):
        game.apply(rng.choice(game.legal_moves()))
    faulty = game.seat
    assert faulty is not None
    game.forfeit(faulty, Termination.CRASH)
    verdict = {"seat": faulty, "termination": "crash", "message": "gone", "stderr": ""}
    record = json.loads(json.dumps(game_record(game, ["a", "b"], verdict=verdict)))
    assert verify_record(record) == []
    number = len(record["rounds"])
    plays = round_plays(record, number)
    again = branch_game(record, number, plays)
    assert again.seat == faulty and not again.is_terminal()
    while len(again.rounds) == number and not again.is_terminal():
        again.apply(rng.choice(again.legal_moves()))
    data = branch_record(record, again, ["c", "d"], round_number=number, turn=plays)
    assert verify_record(data) == []
    assert data["result"] is None or "verdict" not in data["result"]


def test_a_fault_in_the_branch_is_a_verdict() -> None:
    """A player's forfeit during the branch is in its record as in any game, and verifies."""
    record, _ = play_recorded(find_rules("muggins"), 4, 6, teams=True)
    game = branch_game(record, 1, 2)
    seat = game.seat
    assert seat is not None
    game.forfeit(seat, Termination.TIMEOUT)
    verdict = {"seat": seat, "termination": "timeout", "message": "slow", "stderr": ""}
    data = branch_record(
        record, game, ["a", "b", "c", "d"], round_number=1, turn=2, verdict=verdict
    )
    VALIDATOR.validate(data)
    assert verify_record(data) == []
    assert data["result"]["verdict"] == verdict and data["rounds"][0]["result"] is None


def tampered(record: dict[str, Any], number: int, how: str) -> dict[str, Any]:
    bad = copy.deepcopy(record)
    round_ = bad["rounds"][number - 1]
    if how == "deal":
        hands = round_["deal"]["hands"]
        hands[0][0], hands[1][0] = hands[1][0], hands[0][0]
    elif how == "move":
        play = [e for e in round_["events"] if e["type"] == "play"][1]
        play["move"] = "0-0L" if play["move"] != "0-0L" else "6-6R"
    else:
        bad["seed"] += 1
    return bad


@pytest.mark.parametrize("how", ["deal", "move", "seed"])
def test_a_tampered_prefix_is_refused(how: str) -> None:
    """A record that does not verify up to the point is refused, saying where; what comes
    after the point is not looked at."""
    record, _ = play_recorded(find_rules("draw"), 2, 8)
    bad = tampered(record, 1, how)
    with pytest.raises(ParseError, match="does not verify up to round 2, turn 0: round 1"):
        branch_game(bad, 2, 0)
    if how == "move":
        branch_game(bad, 1, 1)  # before the tampered play: the prefix is sound


@pytest.mark.parametrize(
    ("number", "turn", "message"),
    [
        (0, 0, "round 0 is out of range"),
        (99, 0, "round 99 is out of range: the game has rounds 1 to"),
        (1, -1, "turn -1 is out of range"),
        (1, 999, "turn 999 is out of range: round 1 has"),
        (True, 0, "a round is a whole number"),
        (1, 1.5, "a turn is a whole number"),
    ],
)
def test_points_out_of_range_are_refused(number: Any, turn: Any, message: str) -> None:
    record, _ = play_recorded(find_rules("draw"), 2, 8)
    with pytest.raises(RulesError, match=message):
        branch_game(record, number, turn)


def test_records_without_rounds_are_refused() -> None:
    with pytest.raises(ParseError, match="no rounds"):
        branch_game({"format": "domino-arena/game", "rounds": []}, 1, 0)
    with pytest.raises(ParseError, match="no rounds"):
        round_plays({}, 1)


def test_decision_times_kept_and_new() -> None:
    """Version 2 times: the kept plays keep the original's, the branch's own decisions
    bring theirs (the referee's form: None for each play before the point); a branch
    nobody timed has none."""
    rng = random.Random(3)
    game = Game(find_rules("draw"), 2, seed=3)
    while not game.is_terminal():
        game.apply(rng.choice(game.legal_moves()))
    total = sum(isinstance(event, Play) for round_ in game.rounds for event in round_.events)
    timed = game_record(game, ["a", "b"], times=[(0.001, 0.002)] * total)
    record = json.loads(json.dumps(timed))
    assert round_plays(record, 1) > 3
    branch = branch_game(record, 1, 3)
    while len(branch.rounds) == 1:
        branch.apply(rng.choice(branch.legal_moves()))
    new = round_plays(json.loads(json.dumps(game_record(branch, ["c", "d"]))), 1) - 3
    times: list[tuple[float, float] | None] = [None] * 3 + [(0.003, 0.004)] * new
    data = branch_record(record, branch, ["c", "d"], round_number=1, turn=3, times=times)
    assert data["rounds"][0]["times"] == [[1.0, 2.0]] * 3 + [[3.0, 4.0]] * new
    assert verify_record(data) == []
    untimed = json.loads(json.dumps(game_record(game, ["a", "b"])))
    data = branch_record(untimed, branch, ["c", "d"], round_number=1, turn=3)
    assert "times" not in data["rounds"][0]
    assert verify_record(data) == []
