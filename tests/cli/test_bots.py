"""The command line with bot files: play, check and new-bot, in the real sandbox."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from arena.cli.common import UNAVAILABLE, USAGE_ERROR
from arena.cli.main import cli
from arena.engine.records import verify_file, without_times
from arena.match import lineup
from tests.paths import ZOO

BOTS = ZOO


def invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def test_new_bot_writes_a_starter_that_passes_check(tmp_path: Path) -> None:
    """The tutorial's first steps: new-bot, then check (sandboxed), then play."""
    path = tmp_path / "mybot.py"
    result = invoke("new-bot", str(tmp_path / "mybot"))
    assert result.exit_code == 0, result.output
    assert path.is_file() and "def play(observation)" in path.read_text()
    again = invoke("new-bot", str(path))
    assert again.exit_code == USAGE_ERROR and "not overwriting" in again.stderr
    checked = invoke("check", str(path), "--games", "1")
    assert checked.exit_code == 0, checked.output
    assert "passed" in checked.stdout and "(sandboxed)" in checked.stdout
    for preset in ("block", "draw", "muggins", "giant", "block-and-draw", "wooden", "three-minute"):
        assert f"{preset}" in checked.stdout


def test_new_bot_says_a_java_starters_class(tmp_path: Path) -> None:
    result = invoke("new-bot", str(tmp_path / "my-bot"), "--runtime", "java")
    assert result.exit_code == 0, result.output
    assert f"wrote {tmp_path / 'my-bot.java'} (class MyBot): edit play()" in result.stdout


def test_check_reports_a_fault_with_the_stderr_tail() -> None:
    result = invoke("check", str(BOTS / "raise_in_move.py"), "--games", "1")
    assert result.exit_code == 1
    assert "FAULT: crash: ValueError: bot gave up on purpose" in result.stdout
    assert result.stdout.count("FAULT: ") == 1  # each distinct fault once
    assert "stderr tail" in result.stdout and "in play" in result.stdout
    assert result.stdout.strip().endswith("failed")


def test_play_bot_files_sandboxed_then_verify(tmp_path: Path) -> None:
    out = tmp_path / "games.jsonl"
    result = invoke(
        "play",
        "--rules",
        "muggins",
        "--bots",
        f"{BOTS / 'illegal.py'},{BOTS / 'first.py'}",
        "--games",
        "3",
        "--seed",
        "4",
        "--out",
        str(out),
    )
    assert result.exit_code == 0, result.output
    assert "faults: seat 0 (illegal): 3 illegal_moves" in result.stdout
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["result"]["verdict"]["termination"] for r in records] == ["illegal_move"] * 3
    assert verify_file(out).problems == []


def test_play_unsandboxed_gives_the_same_games(tmp_path: Path) -> None:
    """The sandbox changes where a bot runs, not what it plays."""
    outs = [tmp_path / "boxed.jsonl", tmp_path / "plain.jsonl"]
    for out, extra in zip(outs, ([], ["--unsandboxed"]), strict=True):
        result = invoke(
            "play",
            "--rules",
            "draw",
            "--bots",
            f"{BOTS / 'first.py'},greedy",
            "--games",
            "4",
            "--seed",
            "9",
            "--out",
            str(out),
            *extra,
        )
        assert result.exit_code == 0, result.output
    # the same games move for move; only the decision times (record v2) differ
    games = [
        [without_times(json.loads(line)) for line in out.read_text().splitlines()] for out in outs
    ]
    assert len(games[0]) == 4 and games[0] == games[1]


def test_refuses_bot_files_without_a_sandbox(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where isolation is missing, bot files are refused with what is missing (one line)."""
    monkeypatch.setattr(
        lineup, "check_sandbox", lambda: ["bwrap not found: apt-get install bubblewrap"]
    )
    result = invoke("play", "--rules", "draw", "--bots", f"{BOTS / 'first.py'},greedy")
    assert result.exit_code == UNAVAILABLE
    assert result.stderr.count("\n") == 1
    assert "bwrap not found: apt-get install bubblewrap" in result.stderr
    assert "--unsandboxed" in result.stderr
    assert invoke("check", str(BOTS / "first.py")).exit_code == UNAVAILABLE


def test_unknown_bot_is_one_clear_line() -> None:
    result = invoke("play", "--rules", "draw", "--bots", "nosuch.py,greedy")
    assert result.exit_code == USAGE_ERROR
    assert "neither a built-in strategy (random, greedy) nor a bot file" in result.stderr
