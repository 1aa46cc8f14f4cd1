"""``arena compare --remote`` when its compare is cancelled from elsewhere while it follows it
(arena/cli/compare.py, the service's loop): it says so in a sentence, with the games played
and the figures so far, and exits undecided at once. In-process on SQLite: the broker keeps
what is sent, the loop's waits are faked, and the "workers" are the worker's own code,
unsandboxed, run in the wait."""

from __future__ import annotations

import contextlib
import gc
import re
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import cast

import pytest
from celery import Celery
from click.testing import CliRunner
from sqlalchemy import select

from arena.cli.common import UNDECIDED
from arena.cli.main import cli
from arena.service import broker, compares
from arena.service.matches import Config
from arena.service.permissions import OPERATOR
from arena.service.tournaments import cancel_tournament
from arena.store.compares import tournament_of_match
from arena.store.db import Store
from arena.store.models import RuleSet, Tournament
from arena.store.queue import tournament_progress
from tests.paths import REFERENCE_BOTS, ZOO
from tests.service.conftest import Recorder, play_as_worker

#: Polls the loop may wait before the test says it waits for ever.
MAX_POLLS = 20


@pytest.fixture
def _process() -> Iterator[None]:
    """``arena compare`` configures its process's broker and freezes its heap (this
    process's): put the broker back and thaw the heap after."""
    previous = broker.install(None)
    yield
    broker.install(previous)
    gc.unfreeze()
    gc.enable()


@pytest.mark.usefixtures("_process")
def test_compare_remote_says_its_compare_was_cancelled_and_exits_undecided(
    url: str,
    store: Store,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    store.add_bot_version("ada", "greedy", (REFERENCE_BOTS / "greedy.py").read_text(), {})
    store.add_bot_version("bob", "first", (ZOO / "first.py").read_text(), {})
    config = Config(bot_cache=tmp_path / "cache")
    recorder = Recorder()
    polls: list[float] = []

    def poll(seconds: float) -> None:
        polls.append(seconds)
        assert len(polls) < MAX_POLLS, "arena compare --remote waits for ever"
        if len(polls) == 1:  # the workers play the first batch (two seatings): figures
            for match_id in recorder.sent[0][:2]:
                play_as_worker(store, match_id, config)
        elif len(polls) == 2:  # the operator cancels it (`arena tournament cancel`)
            tournament = tournament_of_match(store, recorder.sent[0][0])
            assert tournament is not None
            cancel_tournament(store, OPERATOR, tournament.name)

    monkeypatch.setattr(compares, "time", SimpleNamespace(sleep=poll, monotonic=lambda: 0.0))
    with broker.using(cast(Celery, recorder)):  # what the command sends, kept
        result = CliRunner().invoke(
            cli,
            [
                "compare", "ada/greedy", "bob/first", "--remote", "--url", url,
                "--broker", f"filesystem://{tmp_path / 'broker'}", "--rules", "draw",
                "--max-games", "64", "--batch", "4", "--seed", "2", "--statistic", "game",
            ],
        )  # fmt: skip
    assert result.exit_code == UNDECIDED, result.output
    last = result.output.splitlines()[-1]
    assert last.startswith(
        "NEW undecided: the compare ended before its test decided (cancelled by operator), "
        "after 8 games in complete deals: Elo "
    ), result.output
    assert re.search(r"Elo [+-]\d+\.\d \([+-]\d+\.\d to [+-]\d+\.\d\), LOS \d+\.\d%, LLR ", last)
    assert len(polls) == 2


@pytest.mark.usefixtures("_process")
@pytest.mark.parametrize(
    ("text", "name"),
    [
        ('name = "quick"\nbase = "draw"\ntarget = 20\n', "quick"),
        ('name = "draw"\nbase = "draw"\ntarget = 20\n', "draw"),  # a preset's name, changed
    ],
)
def test_compare_remote_under_a_rule_set_file_stores_and_follows_it(
    url: str, store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, name: str
) -> None:
    """A rule set from a file is stored by the command itself (no worker's start: a worker
    knows only the presets), the file's rule set, and the command follows it to its
    verdict or its limit (a file named like a preset is not taken for the preset)."""
    store.add_bot_version("ada", "greedy", (REFERENCE_BOTS / "greedy.py").read_text(), {})
    store.add_bot_version("bob", "first", (ZOO / "first.py").read_text(), {})
    rules = tmp_path / "rules.toml"
    rules.write_text(text, encoding="utf-8")
    config = Config(bot_cache=tmp_path / "cache")
    recorder = Recorder()
    polls: list[float] = []

    def poll(seconds: float) -> None:  # the workers play what was sent, as the loop waits
        polls.append(seconds)
        assert len(polls) < MAX_POLLS * 10, "arena compare --remote waits for ever"
        for match_id in [i for sent in recorder.sent for i in sent]:
            if tournament_progress(store, tournament_of(match_id))["pending"]:
                with contextlib.suppress(AssertionError):  # (void once decided)
                    play_as_worker(store, match_id, config)

    def tournament_of(match_id: int) -> int:
        tournament = tournament_of_match(store, match_id)
        assert tournament is not None
        return tournament.id

    monkeypatch.setattr(compares, "time", SimpleNamespace(sleep=poll, monotonic=lambda: 0.0))
    with broker.using(cast(Celery, recorder)):
        result = CliRunner().invoke(
            cli,
            [
                "compare", "ada/greedy", "bob/first", "--remote", "--url", url,
                "--broker", f"filesystem://{tmp_path / 'broker'}", "--rules", str(rules),
                "--max-games", "32", "--batch", "4", "--seed", "2",
            ],
        )  # fmt: skip
    assert result.exit_code in (0, 1, 2), result.output
    assert result.output.startswith(f"{name} (version ") or f"{name}, 2 players" in result.output
    with store.read() as session:
        stored = session.scalar(select(Tournament))
        assert stored is not None
        rule_set = session.get(RuleSet, stored.rule_set_id)
        assert rule_set is not None and rule_set.name == name
        assert rule_set.params["target"] == 20
    assert not list((tmp_path / "broker").rglob("*.msg")), "a start was sent for a file"
