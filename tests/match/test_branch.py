"""Branches played by the referee (arena.match.branch): other bots play a recorded round on
from a turn, in the referee with its time control and verdicts, and stop at its end."""

from __future__ import annotations

import json
from typing import Any

import pytest

from arena import find_rules
from arena.engine.branch import round_plays
from arena.engine.events import Termination
from arena.engine.records import game_record, verify_record
from arena.errors import RulesError
from arena.match.branch import Branch, play_branches
from arena.match.lineup import make_players
from arena.match.play import game_seeds, play_games
from arena.match.referee import PlainLauncher, ProcessPlayer, TimeControl
from tests.paths import REFERENCE_BOTS, ZOO

CLOCK = TimeControl(move_seconds=0.5, bank_seconds=2.0, startup_seconds=5.0)


def recorded(names: list[str], seed: int, rules: str = "draw") -> dict[str, Any]:
    """A game of built-in strategies as ``arena play --out`` records it."""
    game = next(play_games(find_rules(rules), names, games=1, seed=seed))
    data: dict[str, Any] = json.loads(json.dumps(game_record(game, names)))
    return data


def branches(
    record: dict[str, Any], number: int, turn: int, specs: list[str], **kw: Any
) -> list[Branch]:
    done = list(play_branches(record, number, turn, make_players(specs), **kw))
    return sorted(done, key=lambda branch: branch.index)


def test_deterministic_bots_replay_the_original_round() -> None:
    """greedy is deterministic: taken up anywhere by greedy again, each round is the
    original round, move for move."""
    record = recorded(["greedy", "greedy"], 4)
    for number in range(1, len(record["rounds"])):
        plays = round_plays(record, number)
        for turn in (0, plays // 2):
            (branch,) = branches(record, number, turn, ["greedy", "greedy"], seed=1)
            assert branch.record["rounds"][-1]["events"] == record["rounds"][number - 1]["events"]
            assert branch.record["rounds"][-1]["result"] == record["rounds"][number - 1]["result"]


def test_the_first_turn_with_the_games_seed_is_the_original() -> None:
    """Seeded with the original game's seed, random bots taken up before anybody played
    get the same strategy rngs: round 1 is the original's."""
    record = recorded(["random", "greedy"], 7)
    (branch,) = branches(record, 1, 0, ["random", "greedy"], seed=7)
    assert branch.seed == 7
    assert branch.record["rounds"][0] == record["rounds"][0]


def test_repetitions_differ_and_the_seed_repeats_them() -> None:
    """N repetitions of random bots: each seeded by game_seeds(seed, N), not all alike,
    the same again with the same seed; every record verifies and stops after its round."""
    record = recorded(["greedy", "random"], 1)
    first = branches(record, 2, 3, ["random", "random"], times=8, seed=11, source="here")
    again = branches(record, 2, 3, ["random", "random"], times=8, seed=11)
    assert [b.seed for b in first] == game_seeds(11, 8)
    events = [json.dumps(b.record["rounds"][1]["events"]) for b in first]
    assert len(set(events)) > 1
    assert events == [json.dumps(b.record["rounds"][1]["events"]) for b in again]
    for branch in first:
        assert verify_record(branch.record) == []
        assert len(branch.record["rounds"]) == 2 and branch.record["result"] is None
        assert branch.round_result(2) is not None
        assert branch.record["branch"] == {
            "round": 2,
            "turn": 3,
            "seats": ["greedy", "random"],
            "seed": branch.seed,
            "source": "here",
        }


def test_a_round_already_over_needs_no_decision() -> None:
    """At a round's last turn the branch is the round as it was: nobody is asked."""
    record = recorded(["greedy", "random"], 1)
    plays = round_plays(record, 1)
    (branch,) = branches(record, 1, plays, ["random", "random"], seed=2)
    assert branch.record["rounds"] == record["rounds"][:1]
    assert verify_record(branch.record) == []


def test_a_round_that_ends_the_game_has_its_result() -> None:
    """The branch of the last round, played as the original was, ends the game: its
    record has the original's result (a branch's record is cut, not its game)."""
    record = recorded(["greedy", "greedy"], 2)
    last = len(record["rounds"])
    turn = round_plays(record, last) - 1
    (branch,) = branches(record, last, turn, ["greedy", "greedy"], seed=1)
    assert branch.game.is_terminal()
    assert branch.record["result"] == record["result"]
    assert branch.record["rounds"] == record["rounds"]
    assert verify_record(branch.record) == []


def test_a_fault_in_a_process_bot_is_a_verdict() -> None:
    """A bot process that crashes during the branch forfeits it, as in any game: the
    verdict is in the record, which verifies; a branch it survives is a plain one."""
    record = recorded(["greedy", "random"], 1)
    bot = ProcessPlayer(ZOO / "raise_in_move.py", PlainLauncher())  # raises in its third move
    done = list(
        play_branches(
            record, 1, 0, [bot, *make_players(["random"])], times=2, seed=5, time_control=CLOCK
        )
    )
    assert len(done) == 2
    faulted = [b for b in done if b.verdict is not None]
    assert len(faulted) == 1 and faulted[0].verdict is not None
    assert faulted[0].verdict.termination is Termination.CRASH
    result = faulted[0].record["result"]
    assert result["termination"] == "crash" and result["verdict"]["seat"] == 0
    assert faulted[0].record["seats"] == ["raise_in_move", "random"]
    for branch in done:
        assert verify_record(branch.record) == []


def test_a_reference_bot_file_plays_on() -> None:
    """Bot files are seated through make_players like in any match (plain processes here)."""
    record = recorded(["greedy", "random"], 3)
    players = make_players([str(REFERENCE_BOTS / "counter.py"), "random"], sandboxed=False)
    done = list(
        play_branches(
            record, 2, 1, players, times=3, seed=1, names=["counter", "random"], time_control=CLOCK
        )
    )
    assert sorted(b.index for b in done) == [0, 1, 2]
    for branch in done:
        assert branch.verdict is None and verify_record(branch.record) == []
        assert branch.record["seats"] == ["counter", "random"]
        # Version 2 times: the bot file's decisions are timed, the kept play and random's not.
        round_ = branch.record["rounds"][1]
        seats = [e["seat"] for e in round_["events"] if e["type"] == "play"]
        assert len(round_["times"]) == len(seats) and round_["times"][0] is None
        assert all(
            (t is not None) == (s == 0)
            for s, t in list(zip(seats, round_["times"], strict=True))[1:]
        )


def test_wrong_setups_are_refused_before_any_bot_starts() -> None:
    record = recorded(["greedy", "random"], 1)
    with pytest.raises(RulesError, match="3 bots for the 2 seats"):
        branches(record, 1, 0, ["random", "random", "random"], seed=1)
    with pytest.raises(RulesError, match="out of range"):
        branches(record, 99, 0, ["random", "random"], seed=1)
    with pytest.raises(ValueError, match="times must be"):
        branches(record, 1, 0, ["random", "random"], seed=1, times=0)
