"""The scheduler with real Celery workers (``arena worker`` processes, bots in the sandbox):
tournaments are played in the order they were sent whatever the broker's order, upload
checks have capacity long matches cannot take, and a dead worker's lease is re-queued by
the sweep thread of a worker whose every process plays a long match (docs/workers.md).

The dead worker's lease runs on a deployment's parts (PostgreSQL + Redis: a lease test);
the rest on the embedded default (SQLite + the filesystem transport, the arena's own
transport): the claims' order is the store's, tested on both backends in
tests/store/test_queue.py."""

from __future__ import annotations

import time

import pytest
from sqlalchemy import select

from arena.store.models import Match, User
from tests.paths import REFERENCE_BOTS
from tests.servers import FAST, wait_for
from tests.workers.test_tasks import (  # noqa: F401  (the fixture)
    Service,
    _create,
    _matches,
    on_deployment,
    service,
)

LEASE = float(FAST["ARENA_LEASE_SECONDS"])
SWEEP = float(FAST["ARENA_SWEEP_SECONDS"])


def _playing(running: Service, name: str) -> list[Match]:
    return [m for m in _matches(running, name) if m.status == "running"]


def test_tournaments_are_played_in_the_order_they_were_sent_not_the_brokers(
    service: Service,  # noqa: F811
) -> None:
    """ "first" is sent but its tasks are lost; "second" is sent after it, with its tasks:
    the worker takes those tasks as tokens and plays all of "first" before any of
    "second" (then the sweep finds "second" pending and an empty queue, and sends it)."""
    from arena.store.queue import mark_queued

    _create(service, "first", "random,greedy,fives", games=2)
    _create(service, "second", "random,greedy,fives", games=2)
    store = service.store()
    try:
        mark_queued(store, [m.id for m in _matches(service, "first")])  # sent, tasks lost
    finally:
        store.close()
    time.sleep(0.05)
    service.send("second")
    service.worker("--concurrency", "1", steady=True)
    wait_for(
        lambda: all(m.status == "done" for n in ("first", "second") for m in _matches(service, n)),
        180,
        "both tournaments to finish",
    )
    first = max(m.finished for m in _matches(service, "first") if m.finished)
    second = min(m.finished for m in _matches(service, "second") if m.finished)
    assert first < second, service.logs()


@on_deployment
@pytest.mark.slow
def test_a_dead_workers_lease_is_requeued_within_the_bound_while_the_rest_play_long_matches(
    service: Service,  # noqa: F811
) -> None:
    """The sweep runs in a thread of each worker's main process: with the only live worker
    busy with a long match, a killed worker's match is back to pending within the lease
    plus one sweep interval (a sweep sent as a task would wait behind the long match)."""
    _create(service, "long", "random,greedy,fives,counter", games=2000)
    victim = service.worker("--concurrency", "1", "--no-sweep", wait=False)
    busy = service.worker("--concurrency", "1", wait=False)  # the two start together
    service.send("long")
    victim.wait_ready()
    busy.wait_ready()

    def victims_match() -> Match | None:
        pools = {str(pid) for pid in victim.pool_pids()}
        for match in _playing(service, "long"):
            if (match.lease_owner or ":").split(":")[1] in pools:
                return match
        return None

    wait_for(lambda: victims_match() is not None, 60, "the victim to start a match")
    lost = victims_match()
    assert lost is not None
    wait_for(lambda: len(_playing(service, "long")) == 2, 60, "the second worker to play")
    victim.kill()
    killed = time.monotonic()

    def requeued() -> bool:
        match = next(m for m in _matches(service, "long") if m.id == lost.id)
        return match.lease_owner != lost.lease_owner

    wait_for(requeued, 60, "the dead worker's match to be re-queued")
    took = time.monotonic() - killed
    assert took < 2 * LEASE + SWEEP + 4, f"re-queued {took:.1f} s after the kill"
    wait_for(lambda: "sweep: 1 expired leases re-queued" in busy.output(), 10, "the sweep's log")


@pytest.mark.slow
def test_an_upload_is_checked_while_every_match_worker_plays_a_long_match(
    service: Service,  # noqa: F811
) -> None:
    """A match worker of one process busy with a 2,000-game match, and the fast worker: an
    upload is checked (and accepted) while that match still plays. A tournament sent after
    the long one waits behind it, and its page says so."""
    from arena.service.board_views import queue_position
    from arena.service.dispatch import dispatch_upload
    from arena.service.uploads import upload_view
    from arena.store.models import Tournament
    from tests.uploads import store_upload

    _create(service, "long", "random,greedy", games=2000)
    _create(service, "later", "random,greedy", games=2)
    match_worker = service.worker("--concurrency", "1", steady=True, wait=False)
    fast_worker = service.worker("--lanes", "fast", "--concurrency", "1", steady=True, wait=False)
    match_worker.wait_ready()  # the two start together
    fast_worker.wait_ready()
    service.send("long")
    wait_for(lambda: bool(_playing(service, "long")), 60, "the long match to start")
    # sent before the upload, so the upload's placement (if the field has one) queues behind
    # it: the page counts only the long tournament ahead
    service.send("later")
    store = service.store()
    try:
        store.add_user("ada")
        with store.read() as session:
            owner = session.scalar(select(User.id).where(User.name == "ada"))
        assert owner is not None
        source = (REFERENCE_BOTS / "greedy.py").read_text()
        upload = store_upload(store, owner, "mine", "mine.py", source)
        with service.sending():
            assert dispatch_upload(store, upload)

        def checked() -> bool:
            view = upload_view(store, upload)
            return view is not None and not view.pending

        wait_for(checked, 120, "the upload's check")
        view = upload_view(store, upload)
        assert view is not None and view.status == "accepted", service.logs()
        assert _playing(service, "long"), "the long match ended before the check: no proof"
        with store.read() as session:
            later = session.scalar(select(Tournament.id).where(Tournament.name == "later"))
        assert later is not None
        assert queue_position(store, later) == "waiting: 1 tournament ahead"
    finally:
        store.close()
