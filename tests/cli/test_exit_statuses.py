"""Exit statuses are the same for the same mistake in every command (arena.cli.common):
0/1/2 are results (``arena compare``: pass, fail, undecided), 64 a mistake in the command,
69 a database, broker or sandbox that cannot be used, 70 the harness or the arena failing."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from arena.cli import play
from arena.cli.common import FAILED, INTERNAL_ERROR, UNDECIDED, USAGE_ERROR
from arena.cli.main import cli
from tests.paths import REFERENCE_BOTS


def invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def one_line_error(result: Result) -> str:
    """The single ``arena: error:`` line the command printed (and nothing else)."""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("arena: error: "), result.output
    assert "Traceback" not in result.output
    return lines[0]


BOT = REFERENCE_BOTS / "random.py"
COMPARE = ["compare", "random", "greedy", "--rules", "draw"]

MISTAKES = {
    "compare: bad --alpha": [*COMPARE, "--alpha", "2"],
    "compare: elo0 above elo1": [*COMPARE, "--elo0", "20", "--elo1", "10"],
    "compare: a missing bot file": ["compare", "nothere.py", "greedy", "--rules", "draw"],
    "compare: --max-games below a deal group": [*COMPARE, "--players", "3", "--max-games", "2"],
    "compare: --url without --remote": [*COMPARE, "--url", "sqlite:///x.db"],
    "compare: --workers with --remote": [*COMPARE, "--remote", "--workers", "4"],
    "compare: --batch out of range": [*COMPARE, "--batch", "0"],
    "run NAME --out": ["tournament", "run", "spring", "--out", "x.jsonl"],
    "run NAME --games --seed": ["tournament", "run", "spring", "--games", "3", "--seed", "1"],
    "run NAME --rules": ["tournament", "run", "spring", "--rules", "draw"],
    "run NAME --move-time": ["tournament", "run", "spring", "--move-time", "2"],
    "run --local --timeout": [
        *("tournament", "run", "--local", "--rules", "draw", "--bots", "random,greedy"),
        *("--timeout", "5"),
    ],
    "run --local --url": [
        *("tournament", "run", "--local", "--rules", "draw", "--bots", "random,greedy"),
        *("--url", "sqlite:///x.db"),
    ],
    "play --move-time -1": ["play", "--rules", "draw", "--move-time", "-1"],
    "play --move-time 0": ["play", "--rules", "draw", "--move-time", "0"],
    "play --time-bank -5": ["play", "--rules", "draw", "--time-bank", "-5"],
    "play --games 100000000": ["play", "--rules", "draw", "--games", "100000000"],
    "play --seed 2**64": ["play", "--rules", "draw", "--seed", str(2**64)],
    "play --memory 10": ["play", "--rules", "draw", "--memory", "10"],
    "tournament --games 100000000": [
        *("tournament", "run", "--local", "--rules", "draw", "--bots", "random,greedy"),
        *("--games", "100000000"),
    ],
    "tournament --players 9": [
        *("tournament", "run", "--local", "--rules", "draw", "--bots", "random,greedy"),
        *("--players", "9"),
    ],
    "bots add --name a/b": ["bots", "add", str(BOT), "--name", "a/b", "--owner", "o"],
    "bots add --name ''": ["bots", "add", str(BOT), "--name", "", "--owner", "o"],
    "bots add --owner 'a b'": ["bots", "add", str(BOT), "--name", "b", "--owner", "a b"],
    "bots add --name of 300": ["bots", "add", str(BOT), "--name", "n" * 300, "--owner", "o"],
    "new-bot ''": ["new-bot", ""],
    "new-bot 'a b'": ["new-bot", "a b"],
    "new-bot 9lives": ["new-bot", "9lives"],
    "new-bot in a missing directory": ["new-bot", "no/such/dir/mybot"],
}


@pytest.mark.parametrize("args", MISTAKES.values(), ids=list(MISTAKES))
def test_every_mistake_is_one_line_and_exit_64(
    args: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Options that do not apply, values out of range and bad names are refused before
    anything runs: one line naming the problem, exit 64, nothing written."""
    monkeypatch.chdir(tmp_path)
    result = invoke(*args)
    assert result.exit_code == USAGE_ERROR, result.output
    one_line_error(result)
    assert result.stdout == ""
    assert not list(tmp_path.iterdir()), "a refused command left files behind"


def test_compare_plays_at_most_max_games_and_is_undecided() -> None:
    """--max-games 11 with batches of 4 deal groups (8 games): then one more deal group,
    10 games, whole deal groups of 2 (never more than 11), then undecided (exit 2)."""
    result = invoke(*COMPARE, "--max-games", "11", "--batch", "4", "--seed", "3", "--elo1", "5")
    assert result.exit_code == UNDECIDED, result.output
    played = re.findall(
        r"NEW undecided: game limit reached \(continue, (\d+) games\)", result.stdout
    )
    assert played == ["10"], result.stdout


def test_an_internal_error_is_one_line_and_exit_70(monkeypatch: pytest.MonkeyPatch) -> None:
    """A bug in the arena is not the user's mistake: one line, exit 70, no traceback (it is
    printed with ARENA_DEBUG=1)."""

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("something the arena did not expect")

    monkeypatch.setattr(play, "play_games", broken)
    result = invoke("play", "--rules", "draw")
    assert result.exit_code == INTERNAL_ERROR
    line = one_line_error(result)
    assert "internal error: RuntimeError: something the arena did not expect" in line
    assert "ARENA_DEBUG=1" in line
    monkeypatch.setenv("ARENA_DEBUG", "1")
    debug = invoke("play", "--rules", "draw")
    assert debug.exit_code == INTERNAL_ERROR and "Traceback" in debug.stderr


def test_a_failed_answer_is_exit_1(tmp_path: Path) -> None:
    """verify with inconsistencies, check with faults, compare failing: the command worked
    and the answer is no."""
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{}\n")
    assert invoke("replay", "verify", str(bad)).exit_code == FAILED
