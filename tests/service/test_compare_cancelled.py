"""A compare that ends before its test decides (arena/service/compares.py): cancelled from
elsewhere (the web, the API, ``arena tournament cancel``) or its matches void while
``arena compare --remote`` follows it. Its loop (follow_compare) stops and says why, the
web's step sends nothing more, and its page and API view say ``cancelled``. SQLite, the
matches played here by the worker's own code, unsandboxed, the loop's waits faked."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

import pytest

from arena.compete.sprt import SPRT
from arena.engine.rules import PRESETS
from arena.service import compares
from arena.service.compare_views import compare_view
from arena.service.compares import (
    advance_compare,
    create_compare,
    follow_compare,
    stop_compare,
    verdict_of,
)
from arena.service.matches import Config
from arena.store.db import Store
from arena.store.queue import cancel_tournament
from tests.paths import REFERENCE_BOTS, ZOO
from tests.service.conftest import Recorder, play_as_worker

#: Polls the loop may wait before the test says it waits for ever.
MAX_POLLS = 20


def _cancel(store: Store, tournament_id: int) -> None:
    cancel_tournament(store, tournament_id, by="alice")  # what the web, API and CLI call


def _void(store: Store, tournament_id: int) -> None:
    stop_compare(store, tournament_id, "the runner gave up")  # matches void, no cancel


@pytest.mark.parametrize(
    ("stop", "status", "why"),
    [
        (_cancel, "cancelled", "cancelled by alice"),
        (_void, "done", "matches void (the runner gave up)"),
    ],
)
def test_the_remote_loop_stops_once_its_compare_is_cancelled(
    store: Store,
    recorder: Recorder,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    stop: Callable[[Store, int], None],
    status: str,
    why: str,
) -> None:
    """The first batch is played, a match of the second, then the compare is stopped from
    elsewhere: the loop's next step is its last, saying why, with the games played (its
    deal groups left incomplete would otherwise keep it waiting for ever)."""
    store.add_bot_version("ada", "greedy", (REFERENCE_BOTS / "greedy.py").read_text(), {})
    store.add_bot_version("bob", "first", (ZOO / "first.py").read_text(), {})
    tournament_id, name = create_compare(
        store, new="ada/greedy", old="bob/first", rules=PRESETS["draw"], players=2,
        test=SPRT(0.0, 10.0), max_games=64, batch=4, seed=2,
    )  # fmt: skip
    config = Config(bot_cache=tmp_path / "cache", sweep_seconds=3600)
    polls: list[float] = []

    def poll(seconds: float) -> None:
        polls.append(seconds)
        assert len(polls) < MAX_POLLS, "the loop waits for ever on a compare that has ended"
        if len(polls) == 1:  # the workers play the first batch (two seatings)
            for match_id in recorder.sent[0]:
                play_as_worker(store, match_id, config)
        elif len(polls) == 2:  # a match of the second, then the compare is stopped
            play_as_worker(store, recorder.sent[1][0], config)
            stop(store, tournament_id)

    monkeypatch.setattr(compares, "time", SimpleNamespace(sleep=poll, monotonic=lambda: 0.0))
    steps = list(follow_compare(store, tournament_id, config=config, ahead=1))
    assert [step.done for step in steps] == [False, False, True]
    last = steps[-1]
    assert last.stopped == why and not last.decided and not last.finished
    assert last.state.played == 8 and last.state.status == "continue"  # the first batch's
    assert len(polls) == 2
    sent = len(recorder.sent)
    again = advance_compare(store, tournament_id)  # the web's step sends nothing more
    assert again.done and again.stopped == why and len(recorder.sent) == sent
    view = compare_view(store, name)  # its page and the API
    assert (view.status, view.verdict, view.problem, view.games) == (
        status, "cancelled", why, 8
    )  # fmt: skip
    assert view.progress["pending"] + view.progress["running"] == 0


def test_only_a_compare_stopped_before_its_limit_is_cancelled() -> None:
    assert verdict_of("continue", True, stopped=True) == "cancelled"
    assert verdict_of("continue", False, stopped=True) == "running"  # not over yet
    assert verdict_of("H1 accepted", True, stopped=True) == "passed"  # decided before
