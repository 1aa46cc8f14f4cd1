"""``arena tournament export NAME``: a stored tournament's game records as JSON lines, which
``arena replay verify`` re-simulates; on both backends (tests/conftest.py's fixtures)."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from arena.cli.common import USAGE_ERROR
from arena.cli.main import cli
from arena.engine.rules import PRESETS
from arena.service.matches import Config, create_stored_tournament, run_match
from arena.store.db import Store
from arena.store.models import Match
from tests.paths import REFERENCE_BOTS

RULES = PRESETS["block"].with_overrides(target=10)


def played_tournament(store: Store, tmp_path: Path, games: int = 4) -> int:
    """A round robin of random v greedy (``games`` games in 2 matches, one per seat order),
    played here."""
    for name in ("random", "greedy"):
        store.add_bot_version("arena", name, (REFERENCE_BOTS / f"{name}.py").read_text(), {})
    tid, matches = create_stored_tournament(
        store,
        name="spring",
        rules=RULES,
        format="round-robin",
        entrants=["random", "greedy"],
        games_per_match=games,
        seed=7,
    )
    config = Config(bot_cache=tmp_path / "cache")
    with store.read() as session:
        ids = list(session.scalars(Match.__table__.select().with_only_columns(Match.id)))
    for match_id in ids:
        assert run_match(store, match_id, config=config, sandboxed=False) == "done"
    assert sum(m.games for m in matches) == games
    return tid


def test_export_writes_records_that_verify(store: Store, url: str, tmp_path: Path) -> None:
    played_tournament(store, tmp_path)
    out = tmp_path / "spring.jsonl"
    runner = CliRunner()
    result = runner.invoke(cli, ["tournament", "export", "spring", "--url", url, "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "4 game records of spring written to" in result.output
    lines = out.read_text().splitlines()
    assert len(lines) == 4 and all(json.loads(line)["rules"] for line in lines)
    verified = runner.invoke(cli, ["replay", "verify", str(out)])
    assert verified.exit_code == 0, verified.output
    assert "4 games verified, no inconsistencies" in verified.output
    # Without --out, the records go to standard output, nothing else.
    printed = runner.invoke(cli, ["tournament", "export", "spring", "--url", url])
    assert printed.exit_code == 0
    assert printed.output.splitlines() == lines


def test_export_of_an_unknown_tournament_is_one_line(store: Store, url: str) -> None:
    result = CliRunner().invoke(cli, ["tournament", "export", "autumn", "--url", url])
    assert result.exit_code == USAGE_ERROR
    assert result.output.count("\n") == 1 and "autumn" in result.output


def test_verify_says_when_a_file_holds_no_records(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    result = CliRunner().invoke(cli, ["replay", "verify", str(empty)])
    assert result.exit_code == 1
    assert "holds no game records" in result.output


def test_tournament_list_is_a_table_with_its_headers(
    store: Store, url: str, tmp_path: Path
) -> None:
    played_tournament(store, tmp_path)
    listed = CliRunner().invoke(cli, ["tournament", "list", "--url", url])
    assert listed.exit_code == 0, listed.output
    lines = listed.output.splitlines()
    header = next(line for line in lines if "tournament" in line and "status" in line)
    row = next(line for line in lines if "spring" in line)
    for column, cell in (("status", "done"), ("format", "round-robin")):
        assert abs(header.index(column) - row.index(cell)) <= 2, (header, row)
    assert header.index("format") < header.index("rule set")
    assert row.index("round-robin") < row.index(RULES.name)
