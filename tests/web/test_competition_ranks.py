"""Ranks that agree (issue 31): the competition page, its exports (``ladder.csv``), the API
and ``arena competition status`` show one ranking (arena.service.competition_views'
``ladder_ranks``) on one competition with an unrated, a disqualified and a superseded
entrant: ranks 1..n without gaps among the rated active entrants, a dash (empty in CSV,
null in JSON, never "None") for the others, the superseded version not shown."""

from __future__ import annotations

import csv
import io
import json
import re

import pytest
from click.testing import CliRunner
from flask import Flask

from arena.cli.main import cli
from arena.service.accounts import create_account, create_token
from arena.service.competitions import disqualify, enter_with_version
from arena.service.permissions import OPERATOR
from arena.store.db import Store
from tests.web.conftest import HASHER, PASSWORD
from tests.web.test_competition_pages import (
    NOW,
    account_named,
    open_competition,
    rate_ladder,
    version_id_of,
)

#: Each entrant's name and rank as every surface must show them, best first.
EXPECTED = [
    ("ada/greedy v1", "1", 1),
    ("dee/bot v1", "2\u20133", 2),
    ("bob/rando v2", "3", 3),
    ("eve/bot v1", "\u2013", None),  # active, not rated yet
    ("cy/bot v1", "\u2013", None),  # disqualified
]


@pytest.fixture
def ranked(store: Store) -> None:
    """The cup: ada, dee and bob's v2 rated and active; eve active, not rated; cy rated,
    then disqualified; bob's v1 rated, then superseded by his v2. The stored fit ranks them
    as the clock did before (over every version fitted: 1, 2, 3, 4, 5, with gaps once the
    superseded and the disqualified are left out)."""
    for name in ("ada", "bob", "olga"):
        create_account(store, name, PASSWORD, role="organiser" if name == "olga" else "user",
                       hasher=HASHER)  # fmt: skip
    store.add_bot_version("ada", "greedy", "def play(o):\n    return o['legal'][0]\n", {})
    store.add_bot_version("bob", "rando", "def play(o):\n    return o['legal'][-1]\n", {})
    for owner in ("cy", "dee", "eve"):
        store.add_bot_version(
            owner, "bot", f"def play(o):\n    return o['legal'][0]  # {owner}\n", {}
        )
    open_competition(store)
    bots = (("ada", "greedy"), ("bob", "rando"), ("cy", "bot"), ("dee", "bot"), ("eve", "bot"))
    versions = {owner: version_id_of(store, owner, bot) for owner, bot in bots}
    for owner, version in versions.items():
        enter_with_version(store, OPERATOR, "cup", version, owner=owner)
    bob2, _ = store.add_bot_version("bob", "rando", "def play(o):\n    return o['legal'][0]\n", {})
    enter_with_version(store, OPERATOR, "cup", bob2.id, owner="bob")  # supersedes bob's v1
    disqualify(store, account_named(store, "olga"), "cup", versions["cy"], "a copied bot")
    rate_ladder(store, "cup", [
        _fit(versions["ada"], 1700.0, 1, 1, 1),
        _fit(versions["cy"], 1650.0, 2, 2, 3),
        _fit(versions["bob"], 1600.0, 3, 2, 4),
        _fit(versions["dee"], 1550.0, 4, 3, 5),
        _fit(bob2.id, 1500.0, 5, 5, 5),
    ])  # fmt: skip


def _fit(version: int, rating: float, rank: int, best: int, worst: int) -> dict[str, object]:
    """A stored fit's row as the clock wrote it."""
    return {"version_id": version, "rating": rating, "rank": rank, "rank_best": best,
            "rank_worst": worst, "low": rating - 100, "high": rating + 100, "games": 40,
            "provisional": False, "last_game": NOW.isoformat()}  # fmt: skip


def test_the_page_the_exports_the_api_and_the_cli_rank_alike(
    app: Flask, store: Store, url: str, ranked: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = app.test_client()
    page = client.get("/competitions/cup").get_data(as_text=True)
    ladder = page[page.index('<table class="list ladder') :]
    ladder = ladder[: ladder.index("</table>")]
    cells = re.findall(r'<td class="num rank">([^<]*)</td>.*?class="bot-name"[^>]*>([^<]*)</a>',
                       ladder, re.S)  # fmt: skip
    assert [(name, shown) for shown, name in cells] == [(n, s) for n, s, _ in EXPECTED]
    assert "None" not in ladder

    exported = client.get("/competitions/cup/ladder.csv").get_data(as_text=True)
    rows = list(csv.DictReader(io.StringIO(exported)))
    assert [(r["name"], r["rank"]) for r in rows] == [
        (n, "" if rank is None else str(rank)) for n, _, rank in EXPECTED
    ]
    assert "None" not in exported

    create_account(store, "reader", PASSWORD, hasher=HASHER)
    token = create_token(store, account_named(store, "reader").id, "t", ["read"])
    api = client.get("/api/v1/competitions/cup", headers={"Authorization": f"Bearer {token}"})
    assert [(r["name"], r["rank"]) for r in api.get_json()["standings"]] == [
        (n, rank) for n, _, rank in EXPECTED
    ]
    as_json = client.get("/competitions/cup/ladder.json").get_json()["rows"]
    assert [(r["name"], r["rank"]) for r in as_json] == [(n, rank) for n, _, rank in EXPECTED]

    monkeypatch.setenv("COLUMNS", "200")  # (pytest-xdist's 80 would wrap the table)
    shown = CliRunner().invoke(cli, ["competition", "status", "--url", url, "cup"])
    assert shown.exit_code == 0, shown.output
    lines = [line for line in shown.output.splitlines() if "/" in line and "v" in line]
    assert [re.split(r"\s*[│|]\s*", line.strip("│| "))[:2] for line in lines] == [
        [shown_rank, name] for name, shown_rank, _ in EXPECTED
    ]
    as_csv = CliRunner().invoke(cli, ["competition", "status", "--url", url, "cup", "--csv"])
    assert as_csv.output == exported.replace("\r\n", "\n")
    as_cli_json = CliRunner().invoke(cli, ["competition", "status", "--url", url, "cup", "--json"])
    assert [r["rank"] for r in json.loads(as_cli_json.output)] == [r for _, _, r in EXPECTED]
