"""``arena replay branch``: a recorded game played on from a turn by other bots, end to end;
its records verify, the same --seed repeats it, and mistakes are one line and exit 64."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from arena.cli.common import USAGE_ERROR
from arena.cli.main import cli


def invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


@pytest.fixture(scope="module")
def games(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two games of greedy against random, as `arena play --out` writes them."""
    path = tmp_path_factory.mktemp("records") / "games.jsonl"
    played = invoke(
        *("play", "--rules", "draw", "--bots", "greedy,random", "--games", "2"),
        *("--seed", "1", "--out", str(path)),
    )
    assert played.exit_code == 0, played.output
    return path


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_a_branch_end_to_end(games: Path, tmp_path: Path) -> None:
    """Game 2, round 2 after 4 plays, random at both seats: the round's result beside the
    original's, and a record that `arena replay verify` accepts."""
    out = tmp_path / "branch.jsonl"
    result = invoke(
        *("replay", "branch", str(games), "--game", "2", "--round", "2", "--turn", "4"),
        *("--bots", "random", "--seed", "3", "--out", str(out)),
    )
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].startswith(f"{games} game 2: draw, round 2 after 4 of its ")
    assert "greedy, random -> random, random; seed 3" in lines[0]
    assert lines[1].startswith("original: ") and lines[2].startswith("branch: ")
    assert re.search(r"points \[\d+, \d+\], scores \[\d+, \d+\]", lines[2])
    assert lines[-1] == f"1 branch record written to {out}"
    (branch,) = records(out)
    original = records(games)[1]
    assert branch["branch"] == {
        "round": 2,
        "turn": 4,
        "seats": ["greedy", "random"],
        "seed": 3,
        "source": f"{games} game 2",
    }
    assert branch["seats"] == ["random", "random"] and len(branch["rounds"]) == 2
    assert branch["rounds"][0] == original["rounds"][0]
    verified = invoke("replay", "verify", str(out))
    assert verified.exit_code == 0 and "1 games verified" in verified.stdout


def test_repetitions_summarise_and_repeat_with_the_seed(games: Path, tmp_path: Path) -> None:
    """--times 6: a table of the round's outcomes, six records that verify; without --seed
    the command says how to repeat it, and the seed it names gives the same records."""
    first = tmp_path / "first.jsonl"
    result = invoke(
        *("replay", "branch", str(games), "--round", "1", "--turn", "0"),
        *("--bots", "random,greedy", "--times", "6", "--out", str(first)),
    )
    assert result.exit_code == 0, result.output
    assert "round result" in result.stdout and "avg points, seat 0" in result.stdout
    seed = re.search(r"\(repeat with --seed (\d+)\)", result.stdout)
    assert seed is not None
    assert len(records(first)) == 6
    assert len({r["branch"]["seed"] for r in records(first)}) == 6
    assert invoke("replay", "verify", str(first)).exit_code == 0
    again = tmp_path / "again.jsonl"
    repeated = invoke(
        *("replay", "branch", str(games), "--round", "1", "--turn", "0"),
        *("--bots", "random,greedy", "--times", "6", "--seed", seed.group(1), "--out", str(again)),
    )
    assert repeated.exit_code == 0, repeated.output
    assert again.read_bytes() == first.read_bytes()


def test_a_fault_is_reported_and_kept(games: Path, tmp_path: Path) -> None:
    """A bot file that crashes during a branch forfeits it: the faults line, the verdict in
    the record, which still verifies."""
    bot = Path(__file__).resolve().parent.parent / "bots" / "raise_in_move.py"
    out = tmp_path / "faults.jsonl"
    result = invoke(
        *("replay", "branch", str(games), "--round", "1", "--turn", "2", "--unsandboxed"),
        *("--bots", f"{bot},random", "--times", "2", "--seed", "1", "--out", str(out)),
    )
    assert result.exit_code == 0, result.output
    assert "faults: seat 0 (raise_in_move): 1 crash" in result.stdout
    verdicts = [r["result"]["verdict"] for r in records(out) if r["result"]]
    assert [v["termination"] for v in verdicts] == ["crash"]
    assert invoke("replay", "verify", str(out)).exit_code == 0


def mistakes(games: Path, tmp_path: Path) -> dict[str, list[str]]:
    base = ["replay", "branch", str(games)]
    point = ["--round", "1", "--turn", "0", "--bots", "random"]
    first = records(games)[0]
    last = len(first["rounds"])
    plays = sum(e["type"] == "play" for e in first["rounds"][-1]["events"])
    tampered = tmp_path / "tampered.jsonl"
    hands = first["rounds"][0]["deal"]["hands"]
    hands[0][0], hands[1][0] = hands[1][0], hands[0][0]
    tampered.write_text(json.dumps(first) + "\n")
    garbled = tmp_path / "garbled.jsonl"
    garbled.write_text("not json\n")
    return {
        "round 99": [*base, "--round", "99", "--turn", "0", "--bots", "random"],
        "round 0": [*base, "--round", "0", "--turn", "0", "--bots", "random"],
        "turn 999": [*base, "--round", "1", "--turn", "999", "--bots", "random"],
        "turn -1": [*base, "--round", "1", "--turn", "-1", "--bots", "random"],
        "game 3 of 2": [*base, "--game", "3", *point],
        "game 0": [*base, "--game", "0", *point],
        "3 bots for 2 seats": [
            *base,
            "--round",
            "1",
            "--turn",
            "0",
            "--bots",
            "random,random,greedy",
        ],
        "an unknown bot": [*base, "--round", "1", "--turn", "0", "--bots", "nothere.py,random"],
        "times 0": [*base, *point, "--times", "0"],
        "seed -1": [*base, *point, "--seed", "-1"],
        "no --round": [*base, "--turn", "0", "--bots", "random"],
        "no --bots": [*base, "--round", "1", "--turn", "0"],
        "a missing file": ["replay", "branch", str(tmp_path / "none.jsonl"), *point],
        "a tampered record": [
            "replay",
            "branch",
            str(tampered),
            "--round",
            "2",
            "--turn",
            "0",
            "--bots",
            "random",
        ],
        "not JSON": ["replay", "branch", str(garbled), *point],
        "the game is over there": [
            *base,
            "--round",
            str(last),
            "--turn",
            str(plays),
            "--bots",
            "random",
        ],
    }


CASES = [
    "round 99",
    "round 0",
    "turn 999",
    "turn -1",
    "game 3 of 2",
    "game 0",
    "3 bots for 2 seats",
    "an unknown bot",
    "times 0",
    "seed -1",
    "no --round",
    "no --bots",
    "a missing file",
    "a tampered record",
    "not JSON",
    "the game is over there",
]


@pytest.mark.parametrize("case", CASES)
def test_mistakes_are_one_line_and_exit_64(
    case: str, games: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Bad points, files and bots are refused before any bot plays: one line, exit 64,
    nothing written."""
    args = mistakes(games, tmp_path)[case]
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "out.jsonl"
    result = invoke(*args, "--out", str(out))
    assert result.exit_code == USAGE_ERROR, result.output
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("arena: error: "), result.output
    assert result.stdout == "" and not out.exists()


def test_the_messages_say_what_to_fix(games: Path, tmp_path: Path) -> None:
    cases = mistakes(games, tmp_path)
    expected = {
        "round 99": "round 99 is out of range: the game has rounds 1 to ",
        "turn 999": "turn 999 is out of range: round 1 has ",
        "game 3 of 2": "holds 2 game records, not 3",
        "3 bots for 2 seats": "3 strategies for 2 players",
        "a tampered record": "does not verify up to round 2, turn 0: round 1",
        "not JSON": "game 1: not valid JSON",
        "the game is over there": "the game is over after round",
    }
    for case, text in expected.items():
        result = invoke(*cases[case])
        assert text in result.stderr, (case, result.stderr)
