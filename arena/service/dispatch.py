"""Send work to the workers, or leave it to the sweep: every send of the arena goes through
here, and here is what a broker that cannot be reached does to a user's action: nothing
(docs/workers.md, "Who owns what").

The database owns every piece of work (a match, an upload's check, a branch, a booked
refit); a broker message is only a nudge. So sending never fails a user's action: when the
broker is down, the work is recorded as meant to be sent and the workers' sweep sends it
when the broker is back. Each ``dispatch_*`` function returns True when the broker took the
message, False (after logging why) when it is left to the sweep; neither raises for a
broker fault. The ``send_*`` functions and :func:`sweep_matches` are for the sweeps and the
refits, which raise :data:`BROKER_ERRORS` (the next sweep will do).

A leaf of the service: it imports :mod:`arena.service.broker` (the process's broker,
:func:`arena.service.broker.current`) and the store, which records what was sent; no other
module of the service.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from kombu.exceptions import KombuError

from arena.service import broker
from arena.service.broker import LANE_QUEUES, QUEUE, REFIT
from arena.store.branches import mark_branches_sent
from arena.store.db import Store
from arena.store.lanes import match_lanes
from arena.store.queue import (
    mark_queued,
    reopen_unfinished_tournaments,
    requeue_expired,
    unqueued_matches,
)
from arena.store.tables import mark_table_sent
from arena.store.uploads import mark_sent

__all__ = [
    "BROKER_ERRORS",
    "SEND_CHUNK",
    "SweepReport",
    "dispatch_branch",
    "dispatch_match_ids",
    "dispatch_matches",
    "dispatch_table",
    "dispatch_upload",
    "send_branch_ids",
    "send_match_ids",
    "send_pending",
    "send_refit",
    "send_upload_ids",
    "sweep_matches",
]

logger = logging.getLogger(__name__)

#: What sending raises when the broker cannot be reached (a socket error, kombu's
#: OperationalError or ChannelError).
BROKER_ERRORS: tuple[type[BaseException], ...] = (OSError, KombuError)
#: Matches sent (and recorded as sent) at a time.
SEND_CHUNK = 500


def dispatch_matches(store: Store, tournament_id: int) -> bool:
    """Send a task for each of the tournament's matches never sent; return False (logged)
    when the broker is down: the matches are then recorded as sent, so the sweep sends them
    again once the broker's queue is found empty (a tournament started is never forgotten)."""
    return dispatch_match_ids(store, unqueued_matches(store, tournament_id=tournament_id))


def dispatch_match_ids(store: Store, match_ids: Sequence[int]) -> bool:
    """:func:`dispatch_matches` for these matches (e.g. a compare's next batch)."""
    try:
        send_match_ids(store, match_ids)
    except BROKER_ERRORS as exc:
        logger.warning(
            "%d matches: cannot reach the broker (%s); the sweep sends them", len(match_ids), exc
        )
        mark_queued(store, list(match_ids))
        return False
    return True


def send_match_ids(store: Store, match_ids: Sequence[int], now: datetime | None = None) -> None:
    """Send the matches' tasks, each on its lane's queue (a compare's on the interactive
    queue, a tournament's on the matches queue), :data:`SEND_CHUNK` at a time, recording when
    each chunk went.

    Raises:
        BROKER_ERRORS: the broker cannot be reached (the chunks sent before are recorded).
    """
    ids = list(match_ids)
    if not ids:
        return
    app = broker.current()
    for start in range(0, len(ids), SEND_CHUNK):
        chunk = ids[start : start + SEND_CHUNK]
        for lane, lane_ids in match_lanes(store, chunk).items():
            broker.send_matches(app, lane_ids, LANE_QUEUES[lane])
        mark_queued(store, chunk, now)


def send_pending(
    store: Store,
    *,
    tournament_id: int | None = None,
    sent_before: datetime | None = None,
    now: datetime | None = None,
    lanes: Sequence[str] | None = None,
) -> list[int]:
    """Send a task for every pending match (of one tournament, or all; of ``lanes``, or
    all) never sent, or, given ``sent_before``, last sent before then; record when; return
    their ids.

    Raises:
        BROKER_ERRORS: the broker cannot be reached.
    """
    ids = unqueued_matches(store, tournament_id=tournament_id, sent_before=sent_before, lanes=lanes)
    send_match_ids(store, ids, now)
    return ids


@dataclass(frozen=True, slots=True)
class SweepReport:
    """What a sweep did: matches whose lease had expired (put back and sent again),
    pending matches sent again because the broker's queue was empty, and tournaments found
    done with matches pending (running again:
    :func:`arena.store.queue.reopen_unfinished_tournaments`)."""

    expired: tuple[int, ...]
    resent: tuple[int, ...]
    reopened: tuple[int, ...] = ()


def sweep_matches(
    store: Store,
    *,
    queue_empty: bool | None = None,
    resend_grace_seconds: float = 10.0,
    now: datetime | None = None,
    empty_lanes: Sequence[str] | None = None,
) -> SweepReport:
    """Put matches with expired leases back to pending and send their tasks again; and, when
    the broker's queue is empty (``queue_empty``; or, given ``empty_lanes``, only those
    lanes' queues are; None: ask the broker whether all its queues are) yet matches sent to
    it over ``resend_grace_seconds`` ago are
    pending, send those again too (their tasks were lost: a restarted broker, a worker
    killed holding prefetched tasks). Matches never sent (a tournament created, not run)
    are left alone, and a done or cancelled tournament's are never sent: what is sent again
    is what a claim can take (:func:`arena.store.lanes.playable`), after a done tournament
    with matches pending is running again (a cancelled one's are void). Safe to
    run anywhere, any number of times at once: a match is claimed once, a duplicate task
    finds nothing to do.

    Raises:
        BROKER_ERRORS: the broker cannot be reached (the next sweep will do).
    """
    if queue_empty is None:
        queue_empty = broker.queue_length() == 0
    now = datetime.now(UTC) if now is None else now
    expired = requeue_expired(store, now=now)
    reopened = reopen_unfinished_tournaments(store, now=now)
    send_match_ids(store, expired, now)
    resent: list[int] = []
    if queue_empty or empty_lanes:
        grace = now - timedelta(seconds=resend_grace_seconds)
        lanes = None if queue_empty else empty_lanes
        resent = send_pending(store, sent_before=grace, now=now, lanes=lanes)
    return SweepReport(tuple(expired), tuple(resent), tuple(reopened))


def dispatch_upload(store: Store, upload_id: int) -> bool:
    """Send the upload's check to the workers; return False (logged) when the broker is
    down: the upload waits, pending, and the sweep sends its check."""
    try:
        send_upload_ids(store, [upload_id])
    except BROKER_ERRORS as exc:
        logger.warning("upload %s: broker unreachable (%s); the sweep sends it", upload_id, exc)
        return False
    return True


def send_upload_ids(store: Store, upload_ids: Sequence[int]) -> None:
    """Send the uploads' checks (the checks' queue) and record that they went.

    Raises:
        BROKER_ERRORS: the broker cannot be reached (nothing is recorded).
    """
    if not upload_ids:
        return
    broker.send_uploads(broker.current(), upload_ids)
    mark_sent(store, upload_ids)


def dispatch_branch(store: Store, branch_id: int) -> bool:
    """Send the branch to the workers; return False (logged) when the broker is down: the
    branch waits, pending, and the sweep sends it."""
    try:
        send_branch_ids(store, [branch_id])
    except BROKER_ERRORS as exc:
        logger.warning("branch %s: broker unreachable (%s); the sweep sends it", branch_id, exc)
        return False
    return True


def send_branch_ids(store: Store, branch_ids: Sequence[int]) -> None:
    """Send the branches (the interactive queue) and record that they went.

    Raises:
        BROKER_ERRORS: the broker cannot be reached (nothing is recorded).
    """
    if not branch_ids:
        return
    broker.send_branches(broker.current(), branch_ids)
    mark_branches_sent(store, branch_ids)


def dispatch_table(store: Store, table_id: int) -> bool:
    """Send the table to the workers (the tables' queue) and record when; return False
    (logged) when the broker is down: the table waits, pending, until the sweep closes it
    as idle (a person waiting at a table does not wait for a sweep)."""
    try:
        broker.send_table(broker.current(), table_id)
    except BROKER_ERRORS as exc:
        logger.warning("table %s: broker unreachable (%s)", table_id, exc)
        return False
    mark_table_sent(store, table_id)
    return True


def send_refit(rule_set_id: int, *, queue: str = QUEUE, countdown: float | None = None) -> None:
    """Send the rule set's refit task (its booking is the caller's, in the store), due in
    ``countdown`` seconds (now if None).

    Raises:
        BROKER_ERRORS: the broker cannot be reached.
    """
    broker.current().send_task(REFIT, args=(rule_set_id,), queue=queue, countdown=countdown)
