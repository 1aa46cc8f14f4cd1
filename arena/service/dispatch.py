"""Send work to the workers, or leave it to the sweep: the one place that decides what
happens when the broker cannot be reached (docs/workers.md, "Who owns what").

The database owns every piece of work (a match, an upload's check, a branch); a broker
message is only a nudge. So sending never fails a user's action: when the broker is down,
the work is recorded as meant to be sent and the workers' sweep sends it when the broker is
back. Each ``dispatch_*`` function returns True when the broker took the message, False
(after logging why) when it is left to the sweep; neither raises for a broker fault.

The web, the API, the CLI and the workers' own functions (:mod:`arena.service.work`) call
these.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

from celery import Celery
from kombu.exceptions import KombuError

from arena.service.branches import mark_branches_sent
from arena.service.broker import LANE_QUEUES, send_branches, send_matches, send_uploads
from arena.service.matches import send_and_mark
from arena.service.uploads import mark_sent
from arena.store.db import Store
from arena.store.lanes import match_lanes
from arena.store.queue import mark_queued, unqueued_matches

__all__ = [
    "BROKER_ERRORS",
    "dispatch_branch",
    "dispatch_match_ids",
    "dispatch_matches",
    "dispatch_upload",
    "send_by_lane",
]

logger = logging.getLogger(__name__)

#: What sending raises when the broker cannot be reached (a socket error, kombu's
#: OperationalError or ChannelError).
BROKER_ERRORS: tuple[type[BaseException], ...] = (OSError, KombuError)


def dispatch_matches(store: Store, celery: Celery, tournament_id: int) -> bool:
    """Send a task for each of the tournament's matches never sent; return False (logged)
    when the broker is down: the matches are then recorded as sent, so the sweep sends them
    again once the broker's queue is found empty (a tournament started is never forgotten)."""
    return dispatch_match_ids(store, celery, unqueued_matches(store, tournament_id=tournament_id))


def dispatch_match_ids(store: Store, celery: Celery, match_ids: Sequence[int]) -> bool:
    """:func:`dispatch_matches` for these matches (e.g. a compare's next batch)."""
    try:
        send_and_mark(store, send_by_lane(store, celery), list(match_ids))
    except BROKER_ERRORS as exc:
        logger.warning(
            "%d matches: cannot reach the broker (%s); the sweep sends them", len(match_ids), exc
        )
        mark_queued(store, list(match_ids))
        return False
    return True


def send_by_lane(store: Store, celery: Celery) -> Callable[[Sequence[int]], None]:
    """A sender of match tasks that puts each on its lane's queue (a compare's on the
    interactive queue, a tournament's on the matches queue)."""

    def send(match_ids: Sequence[int]) -> None:
        for lane, ids in match_lanes(store, match_ids).items():
            send_matches(celery, ids, LANE_QUEUES[lane])

    return send


def dispatch_upload(store: Store, celery: Celery, upload_id: int) -> bool:
    """Send the upload's check to the workers; return False (logged) when the broker is
    down: the upload waits, pending, and the sweep sends its check."""
    try:
        send_uploads(celery, [upload_id])
    except BROKER_ERRORS as exc:
        logger.warning("upload %s: broker unreachable (%s); the sweep sends it", upload_id, exc)
        return False
    mark_sent(store, [upload_id])
    return True


def dispatch_branch(store: Store, celery: Celery, branch_id: int) -> bool:
    """Send the branch to the workers; return False (logged) when the broker is down: the
    branch waits, pending, and the sweep sends it."""
    try:
        send_branches(celery, [branch_id])
    except BROKER_ERRORS as exc:
        logger.warning("branch %s: broker unreachable (%s); the sweep sends it", branch_id, exc)
        return False
    mark_branches_sent(store, [branch_id])
    return True
