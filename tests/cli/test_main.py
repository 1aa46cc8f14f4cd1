"""The ``arena`` command line (arena.cli): in-process with CliRunner, and as the console script."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from arena.cli.common import USAGE_ERROR
from arena.cli.main import cli, main
from arena.engine.rules import PRESETS, find_rules
from arena.match.play import Summary, play_games
from tests.conftest import soak

#: The installed console script (``./run`` puts the venv's bin directory on PATH).
ARENA = Path(sys.executable).parent / "arena"

EXAMPLE = ["play", "--rules", "draw", "--players", "3", "--seed", "7"]
EXAMPLE += ["--bots", "random,greedy,greedy"]


def invoke(*args: str) -> Result:
    # Without COLUMNS (pytest-xdist sets 80), piped tables get arena.cli.common.PIPE_WIDTH.
    return CliRunner().invoke(cli, list(args), catch_exceptions=False, env={"COLUMNS": None})


def run_script(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(ARENA), *args], capture_output=True, text=True, timeout=timeout, check=False
    )


# --- arena rules ----------------------------------------------------------------------


def test_rules_lists_every_preset_with_its_version() -> None:
    result = invoke("rules")
    assert result.exit_code == 0, result.output
    for rules in PRESETS.values():
        assert rules.name in result.stdout
        assert rules.version in result.stdout
    assert "until playable" in result.stdout and "best of 3 rounds" in result.stdout
    assert result.stderr == ""


def test_rules_shows_one_preset_in_full() -> None:
    result = invoke("rules", "wooden")
    assert result.exit_code == 0, result.output
    for key in PRESETS["wooden"].params():
        assert key in result.stdout
    assert "draw-for-lead" in result.stdout and PRESETS["wooden"].version in result.stdout


@pytest.mark.parametrize("suffix", [".toml", ".json"])
def test_rules_shows_a_custom_rule_set_file(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"mine{suffix}"
    if suffix == ".toml":
        path.write_text('name = "short-draw"\nbase = "draw"\ntarget = 50\n', encoding="utf-8")
    else:
        path.write_text(json.dumps({"name": "short-draw", "base": "draw", "target": 50}))
    result = invoke("rules", str(path))
    assert result.exit_code == 0, result.output
    assert "short-draw" in result.stdout and "custom" in result.stdout
    assert "first to 50" in result.stdout


# --- arena play -----------------------------------------------------------------------


def test_play_prints_a_summary_consistent_with_the_games(tmp_path: Path) -> None:
    result = invoke(*EXAMPLE, "--games", "40")
    assert result.exit_code == 0, result.output
    names = ["random", "greedy", "greedy"]
    summary = Summary(names)
    for game in play_games(find_rules("draw"), names, games=40, seed=7):
        summary.add(game)
    lines = result.stdout.splitlines()
    assert lines[0].startswith("draw (version ") and "3 players, 40 games, seed 7" in lines[0]
    assert (
        f"rounds: {summary.rounds}, blocked rounds: {summary.blocked}, "
        f"drawn rounds: {summary.drawn}"
    ) in lines
    for seat, figures in enumerate(summary.seats):
        row = next(line for line in lines if line.startswith(f"│    {seat} │"))
        cells = [cell.strip() for cell in row.strip("│").split("│")]
        assert cells == [
            str(seat),
            figures.name,
            str(figures.games_won),
            f"{100 * summary.win_rate(seat):.1f}",
            str(figures.points),
            f"{figures.points_per_round:.2f}",
        ]
    assert result.stderr == ""  # no progress bar when stderr is not a terminal


def test_play_same_seed_same_output_and_records(tmp_path: Path) -> None:
    first, again, other = tmp_path / "a.jsonl", tmp_path / "b.jsonl", tmp_path / "c.jsonl"
    one = invoke(*EXAMPLE, "--games", "60", "--out", str(first))
    two = invoke(*EXAMPLE, "--games", "60", "--out", str(again))
    assert one.exit_code == two.exit_code == 0, one.output
    assert first.read_bytes() == again.read_bytes()
    assert one.stdout.replace(str(first), "F") == two.stdout.replace(str(again), "F")
    three = invoke(
        *[arg if arg != "7" else "8" for arg in EXAMPLE], "--games", "60", "--out", str(other)
    )
    assert three.exit_code == 0
    assert other.read_bytes() != first.read_bytes()
    records = [json.loads(line) for line in first.read_text().splitlines()]
    assert len(records) == 60
    assert records[0]["seed"] == 7
    assert all(record["seats"] == ["random", "greedy", "greedy"] for record in records)


def test_one_game_of_a_run_is_repeated_by_its_own_seed(tmp_path: Path) -> None:
    run, single = tmp_path / "run.jsonl", tmp_path / "single.jsonl"
    assert invoke(*EXAMPLE, "--games", "5", "--out", str(run)).exit_code == 0
    fourth = run.read_text().splitlines()[3]
    seed = json.loads(fourth)["seed"]
    args = [arg if arg != "7" else str(seed) for arg in EXAMPLE]
    assert invoke(*args, "--games", "1", "--out", str(single)).exit_code == 0
    assert single.read_text() == fourth + "\n"


def test_play_without_seed_prints_a_fresh_one_that_repeats_the_run(tmp_path: Path) -> None:
    result = invoke("play", "--rules", "block", "--games", "3")
    assert result.exit_code == 0, result.output
    header = result.stdout.splitlines()[0]
    assert "(repeat with --seed " in header
    seed = header.rsplit("--seed ", 1)[1].rstrip(")")
    again = invoke("play", "--rules", "block", "--games", "3", "--seed", seed)
    assert again.stdout.splitlines()[1:] == result.stdout.splitlines()[1:]


def test_one_bot_name_plays_every_seat_and_players_follow_the_bots() -> None:
    result = invoke("play", "--rules", "draw", "--players", "4", "--bots", "greedy", "--seed", "1")
    assert result.exit_code == 0, result.output
    assert result.stdout.count("│ greedy │") == 4
    result = invoke("play", "--rules", "giant", "--bots", "greedy,random,random", "--seed", "1")
    assert "3 players" in result.stdout.splitlines()[0]


def test_play_teams(tmp_path: Path) -> None:
    out = tmp_path / "teams.jsonl"
    result = invoke(
        "play",
        "--rules",
        "muggins",
        "--teams",
        "--bots",
        "greedy,random",
        "--players",
        "4",
        "--games",
        "5",
        "--seed",
        "3",
        "--out",
        str(out),
    )
    assert result.exit_code == 0, result.output  # two names: one strategy per team
    seats = json.loads(out.read_text().splitlines()[0])["seats"]
    assert seats == ["greedy", "random", "greedy", "random"]
    three = invoke("play", "--rules", "muggins", "--teams", "--bots", "greedy,random,random")
    assert three.exit_code == USAGE_ERROR
    assert "or one per team" in three.stderr
    result = invoke("play", "--rules", "muggins", "--teams", "--games", "5", "--seed", "3")
    assert result.exit_code == 0, result.output
    assert "4 players, 2 teams" in result.stdout
    assert "Team play: each seat shows its team's games won and points." in result.stdout


def test_play_overrides_reach_the_records(tmp_path: Path) -> None:
    out = tmp_path / "o.jsonl"
    result = invoke(
        "play",
        "--rules",
        "block-and-draw",
        "--players",
        "5",
        "--games",
        "2",
        "--seed",
        "4",
        "--target",
        "50",
        "--max-pip",
        "9",
        "--draw-limit",
        "unlimited",
        "--out",
        str(out),
    )
    assert result.exit_code == 0, result.output
    params = json.loads(out.read_text().splitlines()[0])["rules"]["params"]
    assert (params["target"], params["max_pip"], params["draw_limit"]) == (50, 9, None)
    out2 = tmp_path / "w.jsonl"
    result = invoke(
        "play", "--rules", "wooden", "--best-of", "5", "--seed", "4", "--out", str(out2)
    )
    assert result.exit_code == 0, result.output
    assert json.loads(out2.read_text())["rules"]["params"]["best_of"] == 5


def test_play_a_custom_rule_set_file(tmp_path: Path) -> None:
    path = tmp_path / "quick.toml"
    path.write_text('name = "quick"\nbase = "block"\ntarget = 20\n', encoding="utf-8")
    result = invoke("play", "--rules", str(path), "--games", "3", "--seed", "1")
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("quick (version ")


# --- arena replay verify ----------------------------------------------------------------


def test_out_then_replay_verify_round_trip(tmp_path: Path) -> None:
    out = tmp_path / "games.jsonl"
    assert invoke(*EXAMPLE, "--games", "25", "--out", str(out)).exit_code == 0
    result = invoke("replay", "verify", str(out))
    assert result.exit_code == 0, result.output
    assert result.stdout == "25 games verified, no inconsistencies\n"


def test_replay_verify_reports_each_problem_and_exits_1(tmp_path: Path) -> None:
    out = tmp_path / "games.jsonl"
    assert invoke(*EXAMPLE, "--games", "3", "--out", str(out)).exit_code == 0
    lines = out.read_text().splitlines()
    record = json.loads(lines[1])
    record["result"]["scores"] = [score + 1 for score in record["result"]["scores"]]
    lines[1] = json.dumps(record)
    lines.append("{not json")
    out.write_text("\n".join(lines) + "\n")
    result = invoke("replay", "verify", str(out))
    assert result.exit_code == 1, result.output
    problems = result.stdout.splitlines()[:-1]
    assert problems and all(line.startswith("line ") for line in problems)
    assert any(line.startswith("line 2: ") for line in problems)
    assert any(line.startswith("line 4: ") for line in problems)
    assert not any(line.startswith(("line 1: ", "line 3: ")) for line in problems)


# --- errors, help, exit statuses --------------------------------------------------------

BAD_ARGUMENTS = {
    "unknown preset": ["play", "--rules", "nope"],
    "unknown preset in rules": ["rules", "nope"],
    "too many players": ["play", "--rules", "draw", "--players", "7"],
    "too few players": ["play", "--rules", "draw", "--players", "1"],
    "negative players": ["play", "--rules", "draw", "--players", "-1"],
    "not a number": ["play", "--rules", "draw", "--players", "x"],
    "too few bots": ["play", "--rules", "draw", "--players", "3", "--bots", "random,greedy"],
    "too many bots": [
        "play",
        "--rules",
        "draw",
        "--players",
        "2",
        "--bots",
        "random,random,greedy",
    ],
    "too many seats": ["play", "--rules", "draw", "--bots", "random,random,random,random,random"],
    "unknown bot": ["play", "--rules", "draw", "--bots", "random,clever"],
    "empty bot": ["play", "--rules", "draw", "--bots", "random,"],
    "teams not allowed": ["play", "--rules", "draw", "--teams"],
    "teams with 3": ["play", "--rules", "muggins", "--teams", "--players", "3"],
    "missing rules file": ["play", "--rules", "no/such/file.toml"],
    "rules file is a directory": ["rules", "."],
    "bad target": ["play", "--rules", "draw", "--target", "0"],
    "target on wooden": ["play", "--rules", "wooden", "--target", "50"],
    "best_of on draw": ["play", "--rules", "draw", "--best-of", "5"],
    "bad max pip": ["play", "--rules", "draw", "--max-pip", "7"],
    "bad draw limit": ["play", "--rules", "block-and-draw", "--draw-limit", "some"],
    "draw limit on block": ["play", "--rules", "block", "--draw-limit", "2"],
    "zero games": ["play", "--rules", "draw", "--games", "0"],
    "negative seed": ["play", "--rules", "draw", "--seed", "-3"],
    "missing --rules": ["play"],
    "unknown option": ["play", "--rules", "draw", "--bogus"],
    "unknown command": ["frobnicate"],
    "unwritable out": ["play", "--rules", "draw", "--out", "no/such/dir/g.jsonl"],
    "unreadable records": ["replay", "verify", "no/such/games.jsonl"],
    "records file is a directory": ["replay", "verify", "."],
}


@pytest.mark.parametrize("args", BAD_ARGUMENTS.values(), ids=list(BAD_ARGUMENTS))
def test_bad_arguments_print_one_line_and_exit_64(args: list[str]) -> None:
    result = invoke(*args)
    assert result.exit_code == USAGE_ERROR, result.output
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("arena: error: ")
    assert "Traceback" not in result.stderr and "Usage:" not in result.stderr


def test_error_messages_name_the_problem() -> None:
    assert "unknown rule set 'nope'" in invoke("play", "--rules", "nope").stderr
    assert "random, greedy" in invoke("play", "--rules", "draw", "--bots", "clever").stderr
    message = invoke("play", "--rules", "draw", "--players", "3", "--bots", "greedy,greedy").stderr
    assert "2 strategies for 3 players" in message
    assert "not 7" in invoke("play", "--rules", "draw", "--players", "7").stderr


@pytest.mark.parametrize(
    "args",
    [["--help"], ["-h"], ["play", "--help"], ["rules", "--help"], ["replay", "verify", "-h"]],
)
def test_help_works(args: list[str]) -> None:
    result = invoke(*args)
    assert result.exit_code == 0
    assert result.stdout.startswith("Usage: ")


def test_no_command_shows_help() -> None:
    result = invoke()
    assert result.exit_code == 0
    assert "Usage: " in result.stdout and "play" in result.stdout


def test_main_returns_the_status(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules"]) == 0
    assert main(["play", "--rules", "nope"]) == USAGE_ERROR
    captured = capsys.readouterr()
    assert captured.err == (
        "arena: error: unknown rule set 'nope' (presets: block, draw, muggins, giant, "
        "block-and-draw, wooden, three-minute; or a .toml or .json rule set file)\n"
    )


# --- the installed console script -------------------------------------------------------


@pytest.mark.slow
def test_console_script_runs_the_documented_example(tmp_path: Path) -> None:
    """README's example through the console script, played and verified: its 1,000 games
    with ``ARENA_TEST_FULL=1``, 100 in the default run (the games' rules are the engine's
    tests'; 1,000 were 4.3 of the test's 4.7 CPU s)."""
    games = soak(100, 1000)
    out = tmp_path / "games.jsonl"
    result = run_script(*EXAMPLE, "--games", str(games), "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    assert f"3 players, {games} games, seed 7" in result.stdout
    assert len(out.read_text().splitlines()) == games
    verified = run_script("replay", "verify", str(out))
    assert (verified.returncode, verified.stdout) == (
        0,
        f"{games} games verified, no inconsistencies\n",
    )


@pytest.mark.parametrize("name", ["unknown preset", "too few bots", "unknown option", "zero games"])
def test_console_script_bad_arguments(name: str) -> None:
    result = run_script(*BAD_ARGUMENTS[name])
    assert result.returncode == USAGE_ERROR
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("arena: error: ")


def test_python_m_arena_exits_with_the_commands_status() -> None:
    """``python -m arena`` exits as the console script does (a failed command is not 0)."""
    result = subprocess.run(
        [sys.executable, "-m", "arena", *BAD_ARGUMENTS["unknown preset"]],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert result.returncode == USAGE_ERROR and result.stderr.startswith("arena: error: ")


def test_console_script_help() -> None:
    result = run_script("--help")
    assert result.returncode == 0 and result.stdout.startswith("Usage: arena ")


def test_ctrl_c_exits_130_quietly(tmp_path: Path) -> None:
    out = tmp_path / "long.jsonl"
    process = subprocess.Popen(
        [str(ARENA), *EXAMPLE, "--games", "1000000", "--out", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # A child of a shell's background job may inherit SIGINT ignored: restore it.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        deadline = time.monotonic() + 60
        while not (out.exists() and out.stat().st_size > 0):  # playing, past start-up
            assert time.monotonic() < deadline and process.poll() is None
            time.sleep(0.05)
        process.send_signal(signal.SIGINT)
        stdout, stderr = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 130
    assert (stdout, stderr) == ("", "")
    assert os.path.getsize(out) > 0
