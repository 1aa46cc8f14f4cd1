"""Warm bots on real Celery workers (arena.match.warm; docs/workers.md, "Warm bots"): a
worker process keeps a pair's bots from one of the pair's matches to the next in a
tournament, in the real sandbox, and starts them afresh in another tournament.

The counter bot (tests/bots/warm_counter.py) forfeits each game with its process's game
count in the verdict ("answered 'game-N'"), so the stored records say whether a process
played on from one match to the next."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import Databases
from tests.paths import ZOO
from tests.workers.test_tasks import Service, _assert_stored_once, _create, _running


@pytest.fixture
def embedded(tmp_path: Path, databases: Databases) -> Iterator[Service]:
    """The embedded default (SQLite + the filesystem transport) with the usual bots."""
    database, _ = databases.copy(None, tmp_path, None)
    yield from _running(Service(tmp_path, database, "filesystem://broker"))


def _counts(service: Service, name: str) -> list[list[int]]:
    """Per match (in order), the counter bot's game numbers from its verdicts."""
    counts = []
    for match in _assert_stored_once(service, name):
        assert match.result is not None
        said = []
        for game in match.result["games"]:
            verdict = game["verdict"]
            assert verdict is not None and verdict["termination"] == "illegal_move", verdict
            found = re.search(r"'game-(\d+)'", verdict["message"])
            assert found, verdict
            said.append(int(found.group(1)))
        counts.append(sorted(said))
    return counts


def test_a_worker_keeps_a_pairs_bots_from_match_to_match(embedded: Service) -> None:
    store = embedded.store()
    try:
        source = (ZOO / "warm_counter.py").read_text()
        store.add_bot_version("arena", "warmcount", source, {"checked": "by the test"})
    finally:
        store.close()
    embedded.worker("--concurrency", "1", steady=True)  # one process plays every match
    for name in ("ladder", "other"):
        _create(embedded, name, "warmcount,greedy", 3, "--format", "duplicate")
        embedded.play(name)
    # Two matches of the pair (the deal's two seatings): one process played all 6 games.
    assert _counts(embedded, "ladder") == [[1, 2, 3], [4, 5, 6]]
    # Another tournament, the same pair: a fresh process (its count starts again).
    assert _counts(embedded, "other") == [[1, 2, 3], [4, 5, 6]]
