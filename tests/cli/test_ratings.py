"""``arena ratings --rules R`` on both backends (the fixtures of tests/conftest.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from arena.cli.common import USAGE_ERROR
from arena.cli.main import cli
from arena.engine.rules import PRESETS
from arena.service.results import rating_table
from arena.store.db import Store
from tests.service.test_results import THREE, add_versions, store_games, stored_tournament


@pytest.fixture(autouse=True)
def _wide_tables(monkeypatch: pytest.MonkeyPatch) -> None:
    """pytest-xdist sets COLUMNS=80, which would wrap the tables' headers."""
    monkeypatch.delenv("COLUMNS", raising=False)


def invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def test_ratings_refits_and_prints_the_table(store: Store, url: str) -> None:
    _id, local = stored_tournament(store, "t1", THREE, games=4)
    games = sum(len(r.games) for r in local)
    result = invoke("ratings", "--rules", "block", "--url", url)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert "Ratings under block" in lines[0]
    header = [cell.strip() for cell in lines[2].split("┃")[1:-1]]
    assert header == ["rank", "bot", "rating", "95% interval", "games"]
    stored = rating_table(store, PRESETS["block"])
    assert len(stored) == 3
    for rating in stored:
        row = next(line for line in lines if rating.bot in line)
        assert f"{rating.rating:.0f}" in row and f"{rating.low:.0f} to {rating.high:.0f}" in row
        assert f" {rating.games} " in row
    assert f"{games} games, 3 bots, fitted in " in lines[-1] and lines[-1].endswith(" s")

    again = invoke("ratings", "--rules", "block", "--url", url, "--no-refit")
    assert again.exit_code == 0, again.output
    assert "Ratings under block" in again.stdout
    assert all(rating.bot in again.stdout for rating in stored)
    assert "3 bots, as fitted at " in again.stdout.splitlines()[-1]


def test_rank_ranges_show_when_the_data_cannot_order_the_bots(store: Store, url: str) -> None:
    versions = add_versions(store, {"a": ("alice", "greedy"), "b": ("bob", "random")})
    store_games(store, "t1", versions, [(("a", "b"), [(0, 1), (1, 0), (0, 1)])])
    result = invoke("ratings", "--rules", "block", "--url", url)
    assert result.exit_code == 0, result.output
    rows = [line for line in result.stdout.splitlines() if "@v1" in line]
    assert "1 (1-2)" in rows[0] and "alice/greedy@v1" in rows[0]
    assert "2 (1-2)" in rows[1] and "bob/random@v1" in rows[1]
    assert "rank (best-worst): the ranks the data cannot rule out" in result.stdout
    assert "3 games, 2 bots, fitted in" in result.stdout


def test_no_rated_games_yet_is_said_on_one_line(store: Store, url: str) -> None:
    fitted = invoke("ratings", "--rules", "draw", "--url", url)
    assert (fitted.exit_code, fitted.stderr) == (0, "")
    assert fitted.stdout == "no rated games under draw yet\n"
    stored = invoke("ratings", "--rules", "draw", "--url", url, "--no-refit")
    assert (stored.exit_code, stored.stderr) == (0, "")
    assert stored.stdout == (
        "no ratings stored under draw yet: run `arena ratings --rules draw` to fit them\n"
    )
    versions = add_versions(store, {"a": ("alice", "greedy")})
    store_games(store, "t1", {"a": versions["a"], "a2": versions["a"]}, [(("a", "a2"), [(0, 1)])])
    alone = invoke("ratings", "--rules", "block", "--url", url)
    assert alone.exit_code == 0, alone.output
    assert alone.stdout == "no rated games under block yet (1 game, all by one bot version)\n"


def test_an_unknown_rule_set_is_a_usage_error(tmp_path: Path) -> None:
    result = invoke("ratings", "--rules", "nope", "--url", f"sqlite:///{tmp_path / 'a.db'}")
    assert result.exit_code == USAGE_ERROR
    assert result.stderr.startswith("arena: error: unknown rule set 'nope'")
    assert len(result.stderr.splitlines()) == 1
    missing = invoke("ratings", "--url", f"sqlite:///{tmp_path / 'a.db'}")
    assert missing.exit_code == USAGE_ERROR and "--rules" in missing.stderr
