"""Names (arena.compete.names) where the store creates them, and versions allocated without
loss under concurrent uploads, on both backends (tests/conftest.py's fixtures)."""

from __future__ import annotations

import multiprocessing
import multiprocessing.context
from typing import Any

import pytest

from arena.compete.names import MAX_NAME
from arena.errors import ParseError
from arena.store.db import Store, connect

# SQL can differ here (the store's SQL): on SQLite and PostgreSQL.
pytestmark = pytest.mark.backends("sqlite", "postgresql")

BAD_NAMES = ["", "a/b", "a@b", "a,b", "a=b", "a b", "tab\tname", "-dash", "_under", "x" * 300]


@pytest.mark.parametrize("name", BAD_NAMES, ids=repr)
def test_a_bad_bot_or_owner_name_is_refused_and_nothing_stored(store: Store, name: str) -> None:
    with pytest.raises(ParseError, match="not a valid name"):
        store.add_bot_version("alice", name, "# a bot\n", {})
    with pytest.raises(ParseError, match="not a valid name"):
        store.add_bot_version(name, "bot", "# a bot\n", {})
    assert store.list_bots() == []


def test_names_are_normalised_and_any_script_is_a_name(store: Store) -> None:
    """NFKC: a decomposed é is the composed one, a full-width letter the plain one; names
    in any script, up to MAX_NAME characters, on both databases."""
    composed, _ = store.add_bot_version("zoë", "héllo", "# one\n", {})
    again, created = store.add_bot_version("zoe\u0308", "he\u0301llo", "# one\n", {})
    assert (again.id, created) == (composed.id, False)
    store.add_bot_version("\uff41lice", "機械", "# two\n", {})  # full-width a
    store.add_bot_version("a" * MAX_NAME, "b" * MAX_NAME, "# three\n", {})
    owners = {(item.owner, item.bot) for item in store.list_bots()}
    assert owners == {("zoë", "héllo"), ("alice", "機械"), ("a" * MAX_NAME, "b" * MAX_NAME)}


#: The barrier of the uploader process this is (:func:`_keep_barrier`).
_READY: Any = None


def _keep_barrier(ready: Any) -> None:
    """A pool process's start: keep the barrier (passed as the process starts: a barrier
    cannot be sent with a task)."""
    global _READY
    _READY = ready


def _upload(url: str, index: int) -> tuple[int, int, bool]:
    """One uploader process: connect, wait for the others (the barrier), store its own
    source."""
    store = connect(url)
    try:
        _READY.wait(60)
        version, created = store.add_bot_version("alice", "racer", f"# source {index}\n", {})
        return index, version.version, created
    finally:
        store.close()


def test_concurrent_uploads_of_one_bot_lose_nothing(
    store: Store, url: str, processes: multiprocessing.context.ForkServerContext
) -> None:
    """8 processes upload 8 different sources of one new bot at the same moment: 8 versions
    1..8, each source once, no error (one was lost to an IntegrityError on PostgreSQL)."""
    ready = processes.Barrier(8)  # every process is up and connected before any uploads
    with processes.Pool(8, initializer=_keep_barrier, initargs=(ready,)) as pool:
        results = pool.starmap(_upload, [(url, i) for i in range(8)])
    assert sorted(version for _, version, _ in results) == list(range(1, 9))
    assert all(created for _, _, created in results)
    listed = [item for item in store.list_bots() if item.bot == "racer"]
    assert [item.version for item in listed] == list(range(1, 9))
