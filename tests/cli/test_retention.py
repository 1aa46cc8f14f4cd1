"""A wrong retention setting (arena.service.retention) stops ``arena worker`` and ``arena
serve`` at their start, with one sentence naming the variable (exit 64), before the sandbox,
the database or Celery are looked at; ``arena tournament export`` says on standard error
how many matches' records retention left out."""

from __future__ import annotations

from typing import Any

import pytest
from click.testing import CliRunner

from arena.cli.common import USAGE_ERROR
from arena.cli.main import cli
from arena.service.retention import RetentionPolicy, prune_records
from arena.store.db import Store
from tests.service.test_retention import NOW, build_played


@pytest.mark.parametrize("command", ["worker", "serve"])
@pytest.mark.parametrize(
    ("name", "value", "said"),
    [
        ("ARENA_KEEP_RECORDS_DAYS", "a month", "must be a number of days above 0"),
        ("ARENA_KEEP_RECORDS_GAMES", "0", "must be a whole number of games, 1 or more"),
    ],
)
def test_a_wrong_retention_stops_the_start(command: str, name: str, value: str, said: str) -> None:
    result = CliRunner().invoke(cli, [command], env={name: value})
    assert result.exit_code == USAGE_ERROR
    assert f"{name} {said}" in result.output
    assert repr(value) in result.output


@pytest.mark.seed(build=build_played)
def test_an_export_says_what_retention_left_out(
    store: Store, seeded: dict[str, Any], url: str
) -> None:
    plain = seeded["plain_matches"]
    prune_records(store, RetentionPolicy(keep_days=1.5), now=NOW)
    result = CliRunner().invoke(cli, ["tournament", "export", "plain", "--url", url])
    assert result.exit_code == 0
    assert len(result.stdout.splitlines()) == 2  # the newest and the branched match's games
    assert result.stderr.strip() == (
        f"plain: record pruned: the game records of {len(plain) - 2} matches' are not in this "
        "export (the deployment's retention deleted them; their results and ratings are kept)"
    )
    kept = CliRunner().invoke(cli, ["tournament", "export", "final", "--url", url])
    assert kept.exit_code == 0 and kept.stderr == ""
