"""``arena class similarity NAME`` (arena/cli/similarity.py) on a stored database (both
backends): the copied pair with each side's share and lines, as a table and as JSON; an
unknown class is one line on stderr."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from arena.cli.common import USAGE_ERROR
from arena.cli.main import cli
from arena.store.db import Store
from tests.service.test_similarity import OWN, make_class


@pytest.fixture(autouse=True)
def _wide_tables(monkeypatch: pytest.MonkeyPatch) -> None:
    """pytest-xdist sets COLUMNS=80, which would wrap the tables."""
    monkeypatch.setenv("COLUMNS", "200")


def test_the_report_as_a_table_and_as_json(url: str, store: Store) -> None:
    make_class(store)
    runner = CliRunner()
    shown = runner.invoke(cli, ["class", "similarity", "5b", "--url", url])
    assert shown.exit_code == 0, shown.output
    assert "5b: 4 of 5 students have a version; 6 pairs compared" in shown.output
    assert "1 pair above 50%" in shown.output
    assert "ann/mine v2" in shown.output and "bob/copied v1" in shown.output
    assert f"1-{len(OWN.splitlines())}" in shown.output
    as_json = runner.invoke(cli, ["class", "similarity", "5b", "--json", "--url", url])
    assert as_json.exit_code == 0, as_json.output
    body = json.loads(as_json.output)
    assert [(p["a"]["student"], p["b"]["student"]) for p in body["pairs"]] == [("ann", "bob")]
    assert body["pairs"][0]["a"]["lines"] == [[1, len(OWN.splitlines())]]
    none = runner.invoke(cli, ["class", "similarity", "5b", "--threshold", "1", "--url", url])
    assert none.exit_code == 0 and "0 pairs above 100%" in none.output
    missing = runner.invoke(cli, ["class", "similarity", "nope", "--url", url])
    assert missing.exit_code == USAGE_ERROR
    assert missing.output.strip() == "arena: error: no class 'nope'"
