"""The rate limits' storage on one machine (web/limits.py's SQLiteStorage): fixed windows,
counts shared by every connection to the file, and where an app keeps its counts."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from limits import RateLimitItemPerSecond, parse
from limits.errors import ConfigurationError
from limits.storage import storage_from_string
from limits.strategies import FixedWindowRateLimiter

from web.limits import SQLiteStorage, storage_uri


def test_counts_in_fixed_windows(tmp_path: Path) -> None:
    storage = storage_from_string(f"sqlite:///{tmp_path / 'limits.sqlite'}")
    assert isinstance(storage, SQLiteStorage) and storage.check()
    assert storage.get("k") == 0
    assert [storage.incr("k", 1) for _ in range(3)] == [1, 2, 3]
    assert storage.incr("k", 1, amount=2) == 5 and storage.get("k") == 5
    assert time.time() < storage.get_expiry("k") <= time.time() + 1
    time.sleep(1.05)
    assert storage.get("k") == 0 and storage.incr("k", 1) == 1  # a new window
    storage.clear("k")
    assert storage.get("k") == 0
    storage.incr("a", 60)
    storage.incr("b", 60)
    assert storage.reset() == 2


def test_two_storages_on_one_file_count_together(tmp_path: Path) -> None:
    uri = f"sqlite:///{tmp_path / 'limits.sqlite'}"
    one, other = storage_from_string(uri), storage_from_string(uri)
    limiter, other_limiter = FixedWindowRateLimiter(one), FixedWindowRateLimiter(other)
    item = parse("3 per minute")
    assert [limiter.hit(item, "ada") for _ in range(2)] == [True, True]
    assert other_limiter.hit(item, "ada") and not other_limiter.hit(item, "ada")
    assert not limiter.hit(item, "ada") and limiter.hit(item, "bob")
    assert limiter.get_window_stats(RateLimitItemPerSecond(5), "nobody").remaining == 5


def test_a_storage_needs_a_path() -> None:
    with pytest.raises(ConfigurationError):
        SQLiteStorage("sqlite://")


def test_where_an_app_keeps_its_counts(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("ARENA_LIMITER_URL", "ARENA_BROKER_URL", "ARENA_INSTANCE_PATH"):
        monkeypatch.delenv(name, raising=False)
    assert storage_uri() == "memory://"  # tests, or a lone process
    monkeypatch.setenv("ARENA_INSTANCE_PATH", str(tmp_path / "instance"))
    assert storage_uri() == f"sqlite:///{tmp_path / 'instance' / 'rate-limits.sqlite'}"
    monkeypatch.setenv("ARENA_BROKER_URL", "redis://localhost:6379/0")
    assert storage_uri() == "redis://localhost:6379/0"
    monkeypatch.setenv("ARENA_LIMITER_URL", "redis://limits:6379/1")
    assert storage_uri() == "redis://limits:6379/1"
