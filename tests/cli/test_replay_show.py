"""``arena replay show``: a recorded game in the terminal, whole or one state (a seat's
view hides the other hands); mistakes are one line and exit 64."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from arena.cli.common import USAGE_ERROR
from arena.cli.main import cli
from arena.engine.replay import replay_record


def invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


@pytest.fixture(scope="module")
def games(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("records") / "games.jsonl"
    played = invoke(
        *("play", "--rules", "block", "--bots", "greedy,random", "--games", "2"),
        *("--seed", "3", "--out", str(path)),
    )
    assert played.exit_code == 0, played.output
    return path


def test_the_whole_game(games: Path) -> None:
    record = json.loads(games.read_text().splitlines()[1])
    replay = replay_record(record)
    shown = invoke("replay", "show", str(games), "--game", "2")
    assert shown.exit_code == 0, shown.output
    text = shown.output
    assert text.startswith("block · 2 players")
    assert text.count("Round ") >= len(replay.rounds)
    for round_ in replay.rounds:
        assert f"Round {round_.number}: " in text
    last = replay.rounds[-1].frames[-1]
    assert "".join(f"[{a}|{b}]" for a, b in last.line) in text
    assert "Won by seat" in text


def test_one_state_and_a_seats_view(games: Path) -> None:
    replay = replay_record(json.loads(games.read_text().splitlines()[0]))
    frame = replay.rounds[0].frames[3]
    shown = invoke("replay", "show", str(games), "--round", "1", "--step", "3", "--seat", "1")
    assert shown.exit_code == 0, shown.output
    assert shown.output.startswith("Round 1, step 3:")
    assert " ".join(f"[{t.high}|{t.low}]" for t in frame.hands[1]) in shown.output
    assert f"{len(frame.hands[0])} tiles" in shown.output
    assert not any(f"[{t.high}|{t.low}] " in shown.output for t in frame.hands[0])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--step", "2"), "--step needs --round"),
        (("--round", "1", "--seat", "0"), "--seat needs --round and --step"),
        (("--game", "9"), "holds 2 game records, not 9"),
        (("--round", "99"), "rounds, not 99"),
        (("--round", "1", "--step", "999"), "has steps 0 to"),
        (("--round", "1", "--step", "0", "--seat", "7"), "seats 0 to 1, not 7"),
    ],
)
def test_mistakes_are_one_line(games: Path, args: tuple[str, ...], message: str) -> None:
    shown = invoke("replay", "show", str(games), *args)
    assert shown.exit_code == USAGE_ERROR, shown.output
    assert message in shown.output and len(shown.output.strip().splitlines()) == 1


def test_a_file_that_is_not_a_record(tmp_path: Path) -> None:
    missing = invoke("replay", "show", str(tmp_path / "none.jsonl"))
    assert missing.exit_code == USAGE_ERROR and "cannot read" in missing.output
    junk = tmp_path / "junk.jsonl"
    junk.write_text('{"format": "something else"}\n')
    shown = invoke("replay", "show", str(junk))
    assert shown.exit_code == USAGE_ERROR and "does not verify" in shown.output
