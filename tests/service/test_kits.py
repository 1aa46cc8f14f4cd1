"""A competition's kit (arena.service.kits): its zip holds the rules file, a starter bot for
the competition's runtime and a README, and every command of the README runs as written
(only its numbers of games lowered): `arena rules`, `check`, `play` and `compare` here
under exactly the competition's rules, and `arena remote push` parses, its rule set one the
server's compare accepts. `arena competition kit` writes the same files."""

from __future__ import annotations

import io
import re
import shlex
import zipfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.cli.main import cli
from arena.cli.remote import remote_push_command
from arena.engine.rules import load_rules, rules_from_document
from arena.errors import NotFound
from arena.service.competitions import NewCompetition, create_competition
from arena.service.kits import competition_kit, competition_rules, kit_zip
from arena.service.permissions import OPERATOR
from arena.service.rule_sets import find_rules
from arena.store.db import Store

NOW = datetime.now(UTC).replace(microsecond=0)
RULES = rules_from_document({"name": "cup-rules", "base": "draw", "target": 40})
#: The README's numbers of games, and what the test plays instead (the commands are the same).
FEWER = {"--games": "2", "--max-games": "2"}


def _create(store: Store, name: str, **changes: object) -> None:
    new = NewCompetition(
        name=name, deadline=NOW + timedelta(days=7), rules=RULES.name, custom_rules=RULES,
        move_seconds=0.5, memory_mb=256, **changes,  # type: ignore[arg-type]
    )  # fmt: skip
    create_competition(store, OPERATOR, new)


def _commands(readme: str) -> list[list[str]]:
    """The README's `arena` commands, in its shell blocks, as argument lists."""
    blocks = re.findall(r"```sh\n(.*?)```", readme, re.DOTALL)
    lines = [line for block in blocks for line in block.splitlines()]
    return [shlex.split(line)[1:] for line in lines if line.startswith("arena ")]


def _fewer(args: list[str]) -> list[str]:
    return [FEWER.get(args[i - 1], arg) if i else arg for i, arg in enumerate(args)]


def test_the_kits_commands_run_under_the_competitions_rules(
    store: Store, url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _create(store, "cup")
    kit = competition_kit(store, "cup", server="http://arena.test/")
    with zipfile.ZipFile(io.BytesIO(kit_zip(kit))) as archive:
        names = archive.namelist()
        archive.extractall(tmp_path)
    assert names == ["cup-kit/cup-rules.toml", "cup-kit/mybot.py", "cup-kit/README.md"]
    folder = tmp_path / "cup-kit"
    assert load_rules(folder / "cup-rules.toml") == RULES
    readme = (folder / "README.md").read_text(encoding="utf-8")
    assert "Its page: http://arena.test/competitions/cup" in readme
    commands = _commands(readme)
    assert [c[0] for c in commands] == ["rules", "check", "play", "compare", "remote"]
    monkeypatch.chdir(folder)
    runner = CliRunner()
    outputs = []
    for args in commands[:4]:
        result = runner.invoke(cli, _fewer(args), catch_exceptions=False)
        # compare: 0 passed, 1 failed, 2 undecided (two games decide nothing)
        assert result.exit_code in ((0, 1, 2) if args[0] == "compare" else (0,)), result.output
        assert "--rules" not in args or "cup-rules.toml" in args
        outputs.append(result.output)
    assert "cup-rules (custom rule set" in outputs[0] and outputs[1].endswith("passed\n")
    assert "cup-rules" in outputs[2] and "0.5" in commands[2] and "256" in commands[2]
    push = commands[4][1:]
    assert push[:4] == ["push", "mybot.py", "--compare", "OWNER/mybot@1"]
    context = remote_push_command.make_context("push", [*push[1:], "--server", "http://x"])
    assert context.params["rules"] == "cup-rules" and context.params["move_time"] == 0.5
    assert context.params["players"] == 2 and not context.params["teams"]
    assert find_rules(store, context.params["rules"]) == RULES  # what the server's compare reads
    # the command line writes the same files, and overwrites nothing
    written = runner.invoke(cli, ["competition", "kit", "cup", "--url", url, "--out", "k.zip"])
    assert written.exit_code == 0, written.output
    assert (folder / "k.zip").read_bytes()[:2] == b"PK"
    again = runner.invoke(cli, ["competition", "kit", "cup", "--url", url, "--out", "k.zip"])
    assert again.exit_code != 0 and "'k.zip' exists already" in again.output


def test_a_javascript_competition_gets_a_javascript_starter(store: Store) -> None:
    _create(store, "jscup", runtimes=("javascript",), players=3)
    kit = competition_kit(store, "jscup")
    assert list(kit.files) == ["cup-rules.toml", "mybot.js", "README.md"]
    assert 'const NAME = "mybot";' in kit.files["mybot.js"]
    commands = _commands(kit.files["README.md"])
    assert commands[2][-6:] == ["--games", "20", "--move-time", "0.5", "--memory", "256"]
    assert "--players" in commands[2] and "mybot.js,greedy,greedy" in commands[2]
    view = competition_rules(store, "jscup")
    assert view.summary.reference == "cup-rules" and view.competitions == ("jscup", "cup")[:1]
    with pytest.raises(NotFound, match="no competition called 'nope'"):
        competition_kit(store, "nope")


def test_a_java_competition_gets_a_java_starter(store: Store) -> None:
    """(the starter's name is its suffix's: a java competition's was mybot.py, in Java)"""
    _create(store, "javacup", runtimes=("java",))
    kit = competition_kit(store, "javacup")
    assert list(kit.files) == ["cup-rules.toml", "mybot.java", "README.md"]
    assert "public class Mybot implements Player {" in kit.files["mybot.java"]
    assert "cp mybot.java mybot-v1.java" in kit.files["README.md"]
    assert "mybot.java,greedy" in _commands(kit.files["README.md"])[2]
