"""Game records: the schema, round trips through JSON, and verification catching tampering."""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema_rs
import pytest

from arena import Deal, Game, find_rules
from arena.engine.records import (
    RECORD_VERSION,
    decision_times,
    game_record,
    round_times,
    slowest_decisions,
    verify_file,
    verify_record,
    without_times,
)
from arena.engine.rules import PRESETS, Rules
from arena.errors import ParseError
from arena.match.referee import (
    GameOutcome,
    PlainLauncher,
    Player,
    ProcessPlayer,
    StrategyPlayer,
    TimeControl,
    play_match,
)
from tests.paths import DOCS, ZOO

SCHEMA = json.loads((DOCS / "record.schema.json").read_text())
VALIDATOR = jsonschema_rs.Draft202012Validator(SCHEMA)

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


# --- version 2: decision times ----------------------------------------------------------

CLOCK = TimeControl(move_seconds=1.0, bank_seconds=5.0, startup_seconds=10.0)


def referee_games(bot: str | None, games: int = 2) -> list[GameOutcome]:
    """A match of draw: the zoo's ``bot`` in its own plain process (built-in ``random``
    when None) at seat 0, the built-in ``greedy`` at seat 1."""
    first: Player = (
        StrategyPlayer("random") if bot is None else ProcessPlayer(ZOO / bot, PlainLauncher())
    )
    players: list[Player] = [first, StrategyPlayer("greedy")]
    return list(play_match(find_rules("draw"), players, games=games, seed=5, time_control=CLOCK))


def referee_record(outcome: GameOutcome) -> dict[str, Any]:
    verdict = None if outcome.verdict is None else outcome.verdict.to_dict()
    record = game_record(outcome.game, ["bot", "greedy"], verdict=verdict, times=outcome.times)
    data: dict[str, Any] = json.loads(json.dumps(record))
    return data


def plays(round_record: dict[str, Any]) -> list[dict[str, Any]]:
    return [e for e in round_record["events"] if e["type"] == "play"]


def timed_record() -> dict[str, Any]:
    """An engine game with made-up times (seat 1's decisions untimed), for tampering."""
    game = play_random(find_rules("draw"), 2, 1)
    seats = [e.seat for r in game.rounds for e in r.events if type(e).__name__ == "Play"]
    times = [(0.001 * i, 0.002 * i) if seat == 0 else None for i, seat in enumerate(seats)]
    data: dict[str, Any] = json.loads(json.dumps(game_record(game, ["a", "b"], times=times)))
    return data


def test_a_referee_game_records_one_time_per_play() -> None:
    """A bot process's every play is timed, in milliseconds; the built-in's are null."""
    for outcome in referee_games("first.py"):
        assert outcome.verdict is None
        record = referee_record(outcome)
        assert record["version"] == RECORD_VERSION == 2
        VALIDATOR.validate(record)
        assert verify_record(record) == []
        mine = 0
        for round_record in record["rounds"]:
            times = round_record["times"]
            assert len(times) == len(plays(round_record))
            for event, time in zip(plays(round_record), times, strict=True):
                if event["seat"] == 0:
                    mine += 1
                    assert isinstance(time, list) and len(time) == 2 and min(time) >= 0
                else:
                    assert time is None
            aligned = round_times(round_record)
            assert len(aligned) == len(round_record["events"])
            for event, time in zip(round_record["events"], aligned, strict=True):
                assert (time is not None) == (event["type"] == "play" and event["seat"] == 0)
        decisions = decision_times(record)
        assert len(decisions) == mine and {d.seat for d in decisions} == {0}
        assert all(d.event is not None for d in decisions)
        slowest = slowest_decisions(record)
        assert list(slowest) == [0]
        assert slowest[0].cpu_ms == max(d.cpu_ms for d in decisions)
        event = record["rounds"][slowest[0].round - 1]["events"][slowest[0].event]
        assert event["type"] == "play" and event["seat"] == 0
        untimed = json.loads(json.dumps(game_record(outcome.game, ["bot", "greedy"])))
        assert without_times(record) == untimed != record


def test_a_forfeiting_decision_is_timed_in_the_verdict() -> None:
    """An illegal move was answered: its time is the verdict's; a process that died
    answered nothing, so its verdict has no time."""
    forfeits = [o for o in referee_games("illegal.py") if o.verdict is not None]
    assert forfeits
    for outcome in forfeits:
        record = referee_record(outcome)
        VALIDATOR.validate(record)
        assert verify_record(record) == []
        time = record["result"]["verdict"]["time"]
        assert len(time) == 2 and min(time) >= 0
        last = decision_times(record)[-1]
        assert (last.seat, last.round, last.event) == (0, len(record["rounds"]), None)
        assert [last.cpu_ms, last.wall_ms] == time
        untimed = without_times(record)
        assert "time" not in untimed["result"]["verdict"] and "time" in record["result"]["verdict"]
        assert all("times" not in r for r in untimed["rounds"])
        assert verify_record(untimed) == []
    died = [o for o in referee_games("exit_in_move.py", games=1) if o.verdict is not None]
    assert died
    record = referee_record(died[0])
    VALIDATOR.validate(record)
    assert verify_record(record) == []
    assert "time" not in record["result"]["verdict"]


def test_games_with_nothing_timed_have_no_times() -> None:
    """Built-in strategies alone, through the referee or not: no times, the same record."""
    for outcome in referee_games(None):
        record = referee_record(outcome)
        assert outcome.times is not None and set(outcome.times) == {None}
        assert all("times" not in r for r in record["rounds"])
        assert decision_times(record) == [] and slowest_decisions(record) == {}
        assert verify_record(record) == []
    assert all("times" not in r for r in record_of(play_random(find_rules("draw"), 2, 3))["rounds"])


def test_game_record_refuses_times_that_do_not_fit() -> None:
    game = play_random(find_rules("draw"), 2, 1)
    total = sum(type(e).__name__ == "Play" for r in game.rounds for e in r.events)
    with pytest.raises(ValueError, match=f"{total + 1} decision times for {total} plays"):
        game_record(game, ["a", "b"], times=[(0.0, 0.0)] * (total + 1))  # no forfeit
    with pytest.raises(ValueError, match="seconds"):
        game_record(game, ["a", "b"], times=[(-1.0, 0.0)] * total)


def test_version_1_records_still_verify() -> None:
    """A version 1 record (no times) validates and verifies; times in one do not."""
    record = record_of(play_random(find_rules("draw"), 2, 1))
    record["version"] = 1
    VALIDATOR.validate(record)
    assert verify_record(record) == []
    with_times = timed_record()
    with_times["version"] = 1
    assert not VALIDATOR.is_valid(with_times)
    assert verify_record(with_times) == ["round 1: times in a version 1 record (added in 2)"]


def _set_times(index: int, value: Any) -> Callable[[dict[str, Any]], None]:
    def tamper(record: dict[str, Any]) -> None:
        record["rounds"][0]["times"][index] = value

    return tamper


def _drop_a_time(record: dict[str, Any]) -> None:
    del record["rounds"][1]["times"][-1]


def _times_not_a_list(record: dict[str, Any]) -> None:
    record["rounds"][0]["times"] = {"0": [1, 2]}


def _future_version(record: dict[str, Any]) -> None:
    record["version"] = 3


def _bad_verdict_time(record: dict[str, Any]) -> None:
    record["result"] = {
        **record["result"],
        "termination": "timeout",
        "verdict": {"seat": 0, "termination": "timeout", "message": "", "stderr": "", "time": -3},
    }


TIME_TAMPERING: dict[str, tuple[Callable[[dict[str, Any]], None], str]] = {
    "a time missing": (_drop_a_time, "round 2: {n} times for {p} plays (one per play)"),
    "negative": (_set_times(0, [-1.0, 2.0]), "round 1, play 1: time [-1.0, 2.0] is neither"),
    "three numbers": (_set_times(1, [1, 2, 3]), "round 1, play 2: time [1, 2, 3] is neither"),
    "text": (_set_times(2, "1 ms"), "round 1, play 3: time '1 ms' is neither"),
    "booleans": (_set_times(0, [True, False]), "round 1, play 1: time [True, False]"),
    "not a list": (_times_not_a_list, "round 1: times {'0': [1, 2]} for"),
    "version 3": (_future_version, "not a domino-arena/game record of version 1 or 2"),
    "verdict time": (_bad_verdict_time, "verdict time -3 is not [cpu_ms, wall_ms]"),
}


@pytest.mark.parametrize("case", sorted(TIME_TAMPERING))
def test_verification_refuses_tampered_times(case: str) -> None:
    """Times of the wrong shape or count are refused, naming where; so is a version 3."""
    record = timed_record()
    VALIDATOR.validate(record)
    assert verify_record(record) == []
    tamper, expected = TIME_TAMPERING[case]
    tamper(record)
    if case == "a time missing":
        second = record["rounds"][1]
        expected = expected.format(n=len(second["times"]), p=len(plays(second)))
    problems = verify_record(record)
    assert len(problems) == 1 and expected in problems[0], problems
    if case not in ("a time missing", "verdict time"):  # the schema cannot count plays
        assert not VALIDATOR.is_valid(record)
