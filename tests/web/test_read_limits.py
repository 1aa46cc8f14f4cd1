"""Expensive page reads are rate-limited per address (per account when logged in): the game
lists, a game's page, exports; a replay viewer's steps have a budget of their own (web/limits.py
``reads`` and ``steps``). Past it: 429 with Retry-After and a sentence. Heavy reads at once are
bounded in each process, whoever asks (``heavy``): beyond the bound and its line, 503 with
Retry-After and a sentence, while the health check and the light pages answer."""

from __future__ import annotations

import pytest

from arena.store.db import Store
from tests.web.conftest import make_app
from web.limits import HEAVY_KEY, HEAVY_REFUSAL, READ_REFUSAL, ReadBound


def test_a_flood_of_reads_is_429_with_retry_after_and_steps_count_apart(
    store: Store, url: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    app = make_app(
        url,
        tmp_path_factory.mktemp("broker"),
        ARENA_READ_LIMIT="3 per minute",
        ARENA_STEP_LIMIT="2 per minute",
    )
    try:
        client = app.test_client()
        paths = ["/games", "/games?before=1-0", "/games/1/0.json"]
        assert [client.get(path).status_code for path in paths] == [200, 400, 404]
        for path in ("/games", "/games/1/0", "/leaderboards/draw", "/leaderboards/draw/export.csv"):
            limited = client.get(path)
            assert limited.status_code == 429, path
            assert int(limited.headers["Retry-After"]) > 0
            assert READ_REFUSAL in limited.get_data(as_text=True)
        assert [client.get("/games/1/0/state").status_code for _ in range(3)] == [404, 404, 429]
        # another address has its own budget; the health check has none
        other = client.get("/games", environ_base={"REMOTE_ADDR": "192.0.2.7"})
        assert other.status_code == 200
        assert all(client.get("/healthz").status_code == 200 for _ in range(5))
    finally:
        app.extensions["arena_store"].close()


def test_heavy_reads_beyond_the_bound_are_503_while_light_pages_answer(
    store: Store, url: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    broker = tmp_path_factory.mktemp("broker")
    app = make_app(url, broker, ARENA_HEAVY_READS=1, ARENA_HEAVY_QUEUE=1, ARENA_HEAVY_WAIT=0.01)
    try:
        client = app.test_client()
        assert client.get("/games").status_code == 200  # a slot is free
        bound: ReadBound = app.extensions[HEAVY_KEY]
        with bound.slot():  # another request holds the only slot; the line waits 0.01 s
            for path in ("/games", "/bots/nobody/none", "/tournaments/none", "/leaderboards/x"):
                busy = client.get(path)
                assert busy.status_code == 503, path
                assert busy.headers["Retry-After"] == "2"
                assert HEAVY_REFUSAL in busy.get_data(as_text=True)
            api = client.get("/api/v1/games")
            assert api.status_code == 503 and api.get_json()["error"]["message"] == HEAVY_REFUSAL
            assert client.get("/healthz").status_code == 200
            assert client.get("/bots").status_code == 200  # a light page
            bound.queue = 0  # no line: refused at once
            assert client.get("/games").status_code == 503
        assert client.get("/games").status_code == 200  # the slot is free again
    finally:
        app.extensions["arena_store"].close()


@pytest.mark.parametrize("value", ["many", "0", "-1"])
def test_a_bad_heavy_reads_setting_is_a_sentence(
    url: str, tmp_path_factory: pytest.TempPathFactory, value: str
) -> None:
    with pytest.raises(ValueError, match=f"ARENA_HEAVY_READS is '{value}': set it to a number"):
        make_app(url, tmp_path_factory.mktemp("broker"), ARENA_HEAVY_READS=value)


def test_the_memory_storage_starts_its_expiry_timer_under_a_lock(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``memory://`` is web.limits.LockedMemoryStorage: limits 5.8's own started its expiry
    timer unlocked, so two threads counting at once could start one timer twice (a 500,
    seen in a fresh-clone run of tests/web/test_crowds.py)."""
    from limits.storage import MemoryStorage, storage_from_string

    from web.limits import LockedMemoryStorage

    storage = storage_from_string("memory://")
    assert isinstance(storage, LockedMemoryStorage)
    held: list[bool] = []
    scheduled = MemoryStorage._MemoryStorage__schedule_expiry  # type: ignore[attr-defined]

    def schedule(self: MemoryStorage) -> None:
        held.append(LockedMemoryStorage._scheduling.locked())
        scheduled(self)

    monkeypatch.setattr(MemoryStorage, "_MemoryStorage__schedule_expiry", schedule)
    storage.incr("key", 60)
    assert held == [True]
