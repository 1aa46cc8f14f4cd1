"""Game records: the schema, round trips through JSON, and verification catching tampering."""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from arena import Deal, Game, find_rules
from arena.engine.records import game_record, verify_file, verify_record
from arena.engine.rules import PRESETS, Rules
from arena.errors import ParseError
from tests.paths import DOCS

SCHEMA = json.loads((DOCS / "record.schema.json").read_text())
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)

SETUPS = [
    (name, players, teams)
    for name, rules in PRESETS.items()
    for players in rules.players
    for teams in ([False, True] if rules.team_play and players == 4 else [False])
]


def play_random(rules: Rules, players: int, seed: int, *, teams: bool = False) -> Game:
    rng = random.Random(seed)
    game = Game(rules, players, teams=teams, seed=seed)
    while not game.is_terminal():
        game.apply(rng.choice(game.legal_moves()))
    return game


def record_of(game: Game) -> dict[str, Any]:
    names = [f"bot{seat}" for seat in range(game.players)]
    data: dict[str, Any] = json.loads(json.dumps(game_record(game, names)))
    return data


@pytest.mark.parametrize(("name", "players", "teams"), SETUPS)
def test_records_match_schema_and_verify(name: str, players: int, teams: bool) -> None:
    """Every preset and player count: the record validates and re-simulates cleanly."""
    for seed in range(4):
        record = record_of(play_random(find_rules(name), players, seed, teams=teams))
        VALIDATOR.validate(record)
        assert verify_record(record) == []


def test_record_round_trip_replays_the_same_game() -> None:
    """A game rebuilt from its record's deals and plays gives the same record."""
    game = play_random(find_rules("muggins"), 4, 11, teams=True)
    record = record_of(game)
    deals = [Deal.of(**r["deal"]) for r in record["rounds"]]
    replay = Game(find_rules("muggins"), 4, teams=True, seed=game.seed, deals=deals)
    for round_record in record["rounds"]:
        for event in round_record["events"]:
            if event["type"] == "play":
                replay.apply(next(m for m in replay.legal_moves() if str(m) == event["move"]))
    again = record_of(replay)
    for round_record in again["rounds"]:
        round_record["dealt"] = "seed"
    assert again == record


def test_seeded_record_rebuilds_from_seed_alone() -> None:
    """The same seed deals the same rounds: recorded deals follow from the seed."""
    first = record_of(play_random(find_rules("wooden"), 3, 5))
    second = record_of(Game(find_rules("wooden"), 3, seed=5))
    assert first["rounds"][0]["deal"] == second["rounds"][0]["deal"]
    assert first["rounds"][0]["deal"]["lead_draw"] is not None


def test_redeals_are_recorded_and_verified() -> None:
    """A deal with no double in any hand is recorded in redeals and checked against the seed."""
    rules = Rules.from_params("tiny", find_rules("block").params() | {"hand_size": 1})
    seed = next(s for s in range(200) if Game(rules, 2, seed=s).redeals[0])
    record = record_of(play_random(rules, 2, seed))
    VALIDATOR.validate(record)
    assert record["rounds"][0]["redeals"]
    assert verify_record(record) == []
    tampered = copy.deepcopy(record)
    tampered["rounds"][0]["redeals"] = []
    assert verify_record(tampered) == [f"round 1: the deal does not follow from seed {seed}"]


def _set_event(index: int, value: dict[str, Any]) -> Callable[[dict[str, Any]], None]:
    def tamper(record: dict[str, Any]) -> None:
        record["rounds"][0]["events"][index] = value

    return tamper


def _drop_last_round(record: dict[str, Any]) -> None:
    del record["rounds"][-1]


def _reverse_boneyard(record: dict[str, Any]) -> None:
    record["rounds"][0]["deal"]["boneyard"].reverse()


def _change_target(record: dict[str, Any]) -> None:
    record["rules"]["params"]["target"] = 50


def _bump_round_points(record: dict[str, Any]) -> None:
    record["rounds"][1]["result"]["points"][0] += 1


def _bump_final_score(record: dict[str, Any]) -> None:
    record["result"]["scores"][1] += 1


def _illegal_lead(record: dict[str, Any]) -> None:
    record["rounds"][0]["events"][0]["move"] = "1-0"


def _wrong_winner(record: dict[str, Any]) -> None:
    record["result"]["winners"] = [0]


TAMPERING: dict[str, tuple[Callable[[dict[str, Any]], None], str]] = {
    "pass instead of play": (_set_event(3, {"type": "pass", "seat": 0}), "round 1, event 4"),
    "missing round": (_drop_last_round, "goes on after its last recorded round"),
    "boneyard order": (_reverse_boneyard, "round 1: the deal does not follow from seed"),
    "params without hash": (_change_target, "does not match its parameters"),
    "round points": (_bump_round_points, "round 2: result"),
    "final score": (_bump_final_score, "the rules give"),
    "illegal lead": (_illegal_lead, "round 1, event 1: illegal move 1-0"),
    "wrong winner": (_wrong_winner, "result"),
}


@pytest.mark.parametrize("case", sorted(TAMPERING))
def test_verification_reports_tampering(case: str) -> None:
    """Each kind of tampering is reported, naming where it is."""
    game = play_random(find_rules("draw"), 2, 1)
    assert len(game.rounds) > 2
    record = record_of(game)
    tamper, expected = TAMPERING[case]
    tamper(record)
    problems = verify_record(record)
    assert len(problems) == 1
    assert expected in problems[0]


def test_verification_reports_an_extra_draw() -> None:
    """A draw the rules did not force is named with its event number."""
    record = record_of(play_random(find_rules("draw"), 2, 1))
    record["rounds"][0]["events"].insert(2, {"type": "draw", "seat": 0, "tile": "1-1"})
    assert verify_record(record) == [
        "round 1, event 3: recorded {'type': 'draw', 'seat': 0, 'tile': '1-1'}, "
        "the rules give nothing (a play is due)"
    ]


def test_verify_file_reports_bad_lines_and_counts_games(tmp_path: Path) -> None:
    """verify_file checks every line: bad JSON and bad records are problems, not crashes."""
    good = json.dumps(record_of(play_random(find_rules("giant"), 3, 2)))
    path = tmp_path / "games.jsonl"
    path.write_text("\n".join([good, "{not json", "[1, 2]", "", '{"format": "x"}', good]) + "\n")
    report = verify_file(path)
    assert report.games == 5
    assert [p.split(":")[0] for p in report.problems] == ["line 2", "line 3", "line 5"]
    assert "not valid JSON" in report.problems[0]
    assert not report.ok


def test_verify_file_of_a_missing_file_raises(tmp_path: Path) -> None:
    with pytest.raises(ParseError, match="cannot read"):
        verify_file(tmp_path / "missing.jsonl")


def test_garbage_records_are_problems_not_exceptions() -> None:
    """Hostile or broken records give messages, never tracebacks."""
    record = record_of(play_random(find_rules("block"), 2, 3))
    cases: list[dict[str, Any]] = []
    for key, value in [
        ("rounds", "x"),
        ("rounds", []),
        ("rules", None),
        ("players", "two"),
        ("seed", None),
    ]:
        broken = copy.deepcopy(record)
        broken[key] = value
        cases.append(broken)
    broken = copy.deepcopy(record)
    broken["rounds"][0]["deal"]["hands"][0][0] = "7-7"
    cases.append(broken)
    broken = copy.deepcopy(record)
    broken["rounds"][0]["events"][1]["move"] = 42
    cases.append(broken)
    broken = copy.deepcopy(record)
    broken["result"]["termination"] = "gave up"
    cases.append(broken)
    for case in cases:
        problems = verify_record(case)
        assert len(problems) == 1, case
