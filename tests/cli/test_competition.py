"""``arena competition create|list|status|enter|deadline|disqualify|close|final`` on a
stored database (both backends): the operator's commands, their one-line refusals, the
ladder's and final's exports."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from arena.cli.common import USAGE_ERROR
from arena.cli.competition import parse_when
from arena.cli.main import cli
from arena.service.accounts import create_account, password_hasher
from arena.store.bots import bot_record
from arena.store.db import Store
from tests.paths import REFERENCE_BOTS


@pytest.fixture(autouse=True)
def _wide_tables(monkeypatch: pytest.MonkeyPatch) -> None:
    """pytest-xdist sets COLUMNS=80, which would wrap the tables."""
    monkeypatch.setenv("COLUMNS", "200")


def invoke(url: str, *args: str) -> Result:
    return CliRunner().invoke(cli, [*args[:2], "--url", url, *args[2:]])


def test_a_competition_from_creation_to_its_close(url: str, store: Store) -> None:
    create_account(store, "bob", "correct horse", hasher=password_hasher(cheap=True))
    store.add_bot_version("bob", "rando", (REFERENCE_BOTS / "random.py").read_text(), {})
    made = invoke(url, "competition", "create", "cup", "--deadline", "+7d",
                  "--time-zone", "Europe/Paris", "--players", "2", "--daily", "3")  # fmt: skip
    assert made.exit_code == 0, made.output
    assert "competition 'cup'" in made.output and "Europe/Paris" in made.output
    listed = invoke(url, "competition", "list", "--json")
    assert [c["name"] for c in json.loads(listed.output)] == ["cup"]
    entered = invoke(url, "competition", "enter", "cup", str(REFERENCE_BOTS / "greedy.py"),
                     "--owner", "alice", "--unsandboxed")  # fmt: skip
    assert entered.exit_code == 0, entered.output
    assert "alice/greedy v1 entered for alice: active" in entered.output
    by_version = invoke(url, "competition", "enter", "cup", "--version", "bob/rando@1",
                        "--owner", "bob")  # fmt: skip
    assert by_version.exit_code == 0, by_version.output
    status = invoke(url, "competition", "status", "cup")
    assert "alice/greedy v1" in status.output and "bob/rando v1" in status.output
    rows = list(csv.DictReader(io.StringIO(invoke(url, "competition", "status", "cup",
                                                  "--csv").output)))  # fmt: skip
    assert sorted(r["label"] for r in rows) == ["alice-greedy-v1", "bob-rando-v1"]
    moved = invoke(url, "competition", "deadline", "cup", "+8d")
    assert moved.exit_code == 0 and "the deadline is" in moved.output
    out = invoke(url, "competition", "disqualify", "cup", "bob/rando@1", "--reason", "copied")
    assert out.exit_code == 0, out.output
    ladder = json.loads(invoke(url, "competition", "status", "cup", "--json").output)
    assert {r["label"]: r["status"] for r in ladder} == {
        "alice-greedy-v1": "active", "bob-rando-v1": "disqualified"
    }  # fmt: skip
    closed = invoke(url, "competition", "close", "cup")
    assert closed.exit_code == 0 and "closed" in closed.output
    final = invoke(url, "competition", "final", "cup")
    assert final.exit_code == 0 and "no final table yet (final)" in final.output
    assert invoke(url, "competition", "final", "cup", "--csv").output.startswith("place,tie,name")
    rerun = invoke(url, "competition", "final", "cup", "--rerun")
    assert rerun.exit_code == USAGE_ERROR and "cup has no final to rerun yet." in rerun.output
    late = invoke(url, "competition", "enter", "cup", "--version", "alice/greedy", "--owner",
                  "alice")  # fmt: skip
    assert late.exit_code == USAGE_ERROR and "cup closed for entries at" in late.output
    # a file for a closed (or unknown) competition is neither checked nor stored
    for competition, refusal in (("cup", "cup closed for entries at"),
                                 ("nope", "no competition called 'nope'")):  # fmt: skip
        filed = invoke(url, "competition", "enter", competition,
                       str(REFERENCE_BOTS / "counter.py"), "--owner", "carol")  # fmt: skip
        assert filed.exit_code == USAGE_ERROR and refusal in filed.output, filed.output
        assert "ok" not in filed.output  # no check ran
    assert bot_record(store, "carol", "counter") is None


def test_mistakes_are_one_line(url: str, tmp_path: Path) -> None:
    bad = invoke(url, "competition", "create", "cup", "--deadline", "+1d", "--players", "7")
    assert bad.exit_code == USAGE_ERROR
    assert bad.output.strip().endswith("players must be 2 to 5, not 7.")
    assert len(bad.output.strip().splitlines()) == 1
    when = invoke(url, "competition", "create", "cup", "--deadline", "soon")
    assert when.exit_code == USAGE_ERROR and "'soon' is not a time" in when.output
    zone = invoke(url, "competition", "create", "cup", "--deadline", "2099-01-01T00:00",
                  "--time-zone", "Mars/Base")  # fmt: skip
    assert "'Mars/Base' is not a known time zone" in zone.output
    missing = invoke(url, "competition", "status", "nope")
    assert missing.exit_code == USAGE_ERROR and "no competition called 'nope'" in missing.output
    both = invoke(url, "competition", "enter", "nope", "--owner", "x")
    assert both.exit_code == USAGE_ERROR and "give a bot FILE or --version" in both.output


def test_times_are_read_in_the_competitions_time_zone() -> None:
    paris = parse_when("2026-07-01T12:00", "Europe/Paris")
    assert paris.utcoffset() is not None and paris.utcoffset().total_seconds() == 7200  # type: ignore[union-attr]
    assert parse_when("2026-07-01T12:00+00:00", "Europe/Paris").utcoffset().total_seconds() == 0  # type: ignore[union-attr]


def test_the_same_file_entered_twice_is_one_entry_and_the_final_choice(
    url: str, store: Store
) -> None:
    assert invoke(url, "competition", "create", "cup", "--deadline", "+7d").exit_code == 0
    greedy = str(REFERENCE_BOTS / "greedy.py")
    first = invoke(url, "competition", "enter", "cup", greedy, "--owner", "alice", "--unsandboxed")
    assert first.exit_code == 0, first.output
    again = invoke(url, "competition", "enter", "cup", greedy, "--owner", "alice", "--unsandboxed")
    assert again.exit_code != 0
    # the refusal alone: no check spent (and no report printed) on a file entered already
    assert again.output == (
        "arena: error: this version (version 1 of your bot greedy) is entered already (entry 1 "
        "in cup, active): it is not a new entry, and it costs none of your daily entries.\n"
    )
    shown = invoke(url, "competition", "final-choice", "cup", "--owner", "alice")
    assert shown.exit_code == 0, shown.output
    assert "alice's versions for the final (the default, at most 2)" in shown.output
    assert "alice/greedy v1 (active, not placed" in shown.output
    chosen = invoke(url, "competition", "final-choice", "cup", "alice/greedy@1", "--owner", "alice")
    assert chosen.exit_code == 0 and "(chosen, at most 2)" in chosen.output
    refused = invoke(url, "competition", "final-choice", "cup", "--default", "alice/greedy@1",
                     "--owner", "alice")  # fmt: skip
    assert refused.exit_code == USAGE_ERROR and "not both" in refused.output
