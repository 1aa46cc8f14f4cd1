"""``arena competition copies|games|announce|log|edit|pause|resume|withdraw`` (the
organiser's tools as the operator, arena.service.competition_tools) on a stored database:
what each prints, and a refusal in one line."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from click.testing import CliRunner, Result

from arena.cli.common import USAGE_ERROR
from arena.cli.main import cli
from arena.service.accounts import create_account, password_hasher
from arena.service.competitions import NewCompetition, create_competition, enter_with_version
from arena.service.permissions import OPERATOR
from arena.store.db import Store
from tests.paths import REFERENCE_BOTS

NOW = datetime.now(UTC).replace(microsecond=0)


def invoke(url: str, *args: str) -> Result:
    return CliRunner().invoke(cli, ["competition", args[0], "--url", url, *args[1:]])


def test_the_organisers_tools_from_the_command_line(url: str, store: Store, tmp_path: Path) -> None:
    new = NewCompetition(name="cup", deadline=NOW + timedelta(days=7), opens=NOW)
    create_competition(store, OPERATOR, new)
    source = (REFERENCE_BOTS / "greedy.py").read_text()
    for name in ("alice", "bob"):  # the same bytes
        account = create_account(store, name, "correct horse", hasher=password_hasher(cheap=True))
        version = store.add_bot_version(name, "greedy", source, {})[0].id
        enter_with_version(store, account, "cup", version)
    copies = json.loads(invoke(url, "copies", "cup", "--json").output)
    [pair] = copies["pairs"]
    assert (pair["identical"], pair["a"]["entrant"], pair["b"]["entrant"]) == (True, "alice", "bob")
    assert "identical" in invoke(url, "copies", "cup").output
    assert invoke(url, "announce", "cup", "Hello all").output == "cup: announced\n"
    edited = invoke(url, "edit", "cup", "--final-top", "4", "--deadline", "+8d")
    assert edited.exit_code == 0 and "cup: final top: 8 -> 4" in edited.output
    assert invoke(url, "edit", "cup", "--final-top", "4").output == "cup: nothing changed\n"
    refused = invoke(url, "edit", "cup", "--final-top", "99")
    assert (
        refused.exit_code == USAGE_ERROR and "final top must be 2 to 32, not 99" in refused.output
    )
    assert "the ladder is paused" in invoke(url, "pause", "cup").output
    again = invoke(url, "pause", "cup")
    assert again.exit_code == USAGE_ERROR and "is paused already" in again.output
    assert invoke(url, "resume", "cup").output == "cup: the ladder plays again\n"
    assert (
        invoke(url, "withdraw", "cup", "--owner", "bob").output == "cup: bob withdrew (1 version)\n"
    )
    log = json.loads(invoke(url, "log", "cup", "--json").output)
    assert [line["action"] for line in log] == ["withdraw", "resume", "pause", "settings"]
    assert "; final top: 8 -> 4" in invoke(url, "log", "cup").output
    out = tmp_path / "games.jsonl"
    written = invoke(url, "games", "cup", "--out", str(out))
    assert written.output == f"0 game records of cup written to {out}\n" and out.read_text() == ""
