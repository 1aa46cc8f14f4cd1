"""The serverless broker: arena.service.broker's filesystem transport under concurrent producers and
consumers (real processes, a real directory). kombu's own transport let a consumer read a
message file before its producer had written it (celery/kombu#1551), which stops a Celery
worker dead; here every message must arrive whole, exactly once."""

from __future__ import annotations

import multiprocessing.context
import threading
import time
from pathlib import Path
from queue import Empty
from typing import Any, cast

import pytest
from celery import Celery

from arena.service import broker
from arena.service.broker import QUEUE, make_app, queue_length, send_matches
from arena.service.dispatch import BROKER_ERRORS

MESSAGES = 600


def _produce(url: str, first: int) -> None:
    app = make_app(url)
    for start in range(first, first + MESSAGES // 2, 10):
        send_matches(app, list(range(start, start + 10)))


def _consume(url: str, results: Any, stop: Any) -> None:
    app = make_app(url)
    got: list[int] = []
    with app.connection_for_write() as connection:
        channel: Any = connection.default_channel
        while True:
            try:
                message = channel._get(QUEUE)
            except Empty:
                if stop.is_set():
                    break
                continue
            got.extend(message["headers"]["argsrepr"].strip("(),").split(","))
    results.put([int(x) for x in got])


def test_concurrent_producers_and_consumers_each_message_once_and_whole(
    tmp_path: Path, processes: multiprocessing.context.ForkServerContext
) -> None:
    url = f"filesystem://{tmp_path / 'broker'}"
    results, stop = processes.Queue(), processes.Event()
    consumers = [processes.Process(target=_consume, args=(url, results, stop)) for _ in range(2)]
    producers = [
        processes.Process(target=_produce, args=(url, first)) for first in (0, MESSAGES // 2)
    ]
    for process in [*consumers, *producers]:
        process.start()
    for process in producers:
        process.join(60)
        assert process.exitcode == 0
    app = make_app(url)
    deadline = time.monotonic() + 60
    while queue_length(app) and time.monotonic() < deadline:
        time.sleep(0.05)
    stop.set()
    received = [results.get(timeout=60) for _ in consumers]
    for process in consumers:
        process.join(60)
        assert process.exitcode == 0, "a consumer failed (a message read before it was whole?)"
    everything = sorted(received[0] + received[1])
    assert everything == list(range(MESSAGES))
    leftovers = [p.name for p in (tmp_path / "broker" / "queue").rglob("*") if p.is_file()]
    assert leftovers == []


def test_the_process_has_one_broker_configured_once(tmp_path: Path) -> None:
    """Nothing sends before the application configures its broker (the message says what
    to do); configured lazily (the web), it is made at the first use, once; ``using``
    puts another in front in this thread only (a worker's sweeper has a client of its
    own), and the process's is back after it."""
    previous = broker.install(None)
    try:
        with pytest.raises(RuntimeError, match=r"call.* arena.service.broker.configure\(\)"):
            broker.current()
        broker.configure_lazily(f"filesystem://{tmp_path / 'lazy'}")
        assert not (tmp_path / "lazy").exists()  # nothing made before it is used
        app = broker.current()
        assert broker.current() is app and (tmp_path / "lazy" / "queue").is_dir()
        assert broker.location() == f"filesystem://{tmp_path / 'lazy' / 'queue'}"
        other = broker.make_app(f"filesystem://{tmp_path / 'other'}")
        seen: list[object] = []
        with broker.using(other):
            assert broker.current() is other
            thread = threading.Thread(target=lambda: seen.append(broker.current()))
            thread.start()
            thread.join()
        assert seen == [app] and broker.current() is app
        assert broker.configure(f"filesystem://{tmp_path / 'eager'}") is broker.current()
        assert (tmp_path / "eager" / "queue").is_dir()
    finally:
        broker.install(previous)


def test_two_workers_binding_to_a_new_exchange_at_once_both_read_it_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """kombu creates an exchange's table empty and locks it only then: a second binder
    coming in between read it empty (JSONDecodeError: an ``arena serve`` whose two workers
    started at once exited). Here the second binder binds exactly in that moment (the first
    one's lock waits for it); both bindings are kept."""
    from kombu.transport import filesystem

    url = f"filesystem://{tmp_path / 'broker'}"
    first, second = (make_app(url).connection_for_write() for _ in range(2))
    lock, between = filesystem.lock, list[bool]()

    def lock_after_the_other_binds(handle: Any, flags: int) -> None:
        if not between:  # the first binder, its table open, not locked yet
            between.append(True)
            other: Any = second.default_channel
            other._queue_bind("fresh", "b", "", "queue-b")
        lock(handle, flags)

    monkeypatch.setattr(filesystem, "lock", lock_after_the_other_binds)
    with first, second:
        channel: Any = first.default_channel
        channel._queue_bind("fresh", "a", "", "queue-a")
        table = channel.get_table("fresh")
    assert between and sorted(binding.queue for binding in table) == ["queue-a", "queue-b"]


def test_a_redis_that_goes_away_mid_count_is_a_broker_error() -> None:
    """A Redis that closes the connection in the middle of counting the queues raises
    redis-py's ConnectionError (neither an OSError nor kombu's): it is a broker error, as
    the sweeps and `arena tournament run` catch (a CI run saw `arena tournament run` exit
    with an internal error as Redis restarted)."""
    import redis.exceptions
    from kombu.exceptions import OperationalError

    class Channel:
        def queue_declare(self, *args: object, **kwargs: object) -> None:
            raise redis.exceptions.ConnectionError("Connection closed by server.")

    class Connection:
        connection_errors = (redis.exceptions.ConnectionError,)
        default_channel = Channel()

        def __enter__(self) -> Connection:
            return self

        def __exit__(self, *args: object) -> None:
            return None

    class App:
        def connection_for_write(self) -> Connection:
            return Connection()

    with pytest.raises(OperationalError, match="Connection closed by server"):
        broker.queue_lengths(cast(Celery, App()))
    assert issubclass(OperationalError, BROKER_ERRORS)
