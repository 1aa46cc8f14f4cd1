"""Send work to the workers, or leave it to the sweep: the one place that decides what
happens when the broker cannot be reached (docs/workers.md, "Who owns what").

The database owns every piece of work (a match, an upload's check, a branch); a broker
message is only a nudge. So sending never fails a user's action: when the broker is down,
the work is recorded as meant to be sent and the workers' sweep sends it when the broker is
back. Each ``dispatch_*`` function returns True when the broker took the message, False
(after logging why) when it is left to the sweep; neither raises for a broker fault.

The web, the API and the CLI call these; the Celery tasks call :func:`accept_upload` and
:func:`play_next` (one service function a task).
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from celery import Celery
from kombu.exceptions import KombuError

from arena.service.branches import mark_branches_sent, unsent_branches
from arena.service.broker import (
    CHECK_QUEUE,
    INTERACTIVE_QUEUE,
    LANE_QUEUES,
    QUEUE,
    REFIT,
    queue_lengths,
    send_branches,
    send_matches,
    send_uploads,
)
from arena.service.compares import stop_if_decided
from arena.service.matches import Config, finished_rule_set, play_next, send_and_mark, sweep
from arena.service.uploads import check_upload, create_placement, mark_sent, unsent_uploads
from arena.store.db import Store
from arena.store.lanes import match_lanes
from arena.store.queue import mark_queued, unqueued_matches

__all__ = [
    "BROKER_ERRORS",
    "UPLOAD_RESEND_SECONDS",
    "SweepTotals",
    "accept_upload",
    "dispatch_branch",
    "dispatch_match_ids",
    "dispatch_matches",
    "dispatch_upload",
    "play_token",
    "send_by_lane",
    "sweep_all",
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


# --- what the tasks run (one service function a task) --------------------------------------


def play_token(
    store: Store,
    celery: Celery,
    match_id: int,
    *,
    config: Config,
    first_slot: int | None = None,
    sandboxed: bool = True,
) -> str:
    """A ``play_match(match_id)`` task: a token of match ``match_id``'s lane. Play that
    lane's next match (the oldest-sent tournament's first; a cancelled one's never), then,
    if it finished its compare's test or its tournament, void the compare's rest or send
    the rule set's refit. Return what happened, as ``"match N: OUTCOME"`` (or ``"idle"``).

    Raises:
        InfrastructureError: the harness failed; the match is pending again (retry later).
    """
    lane = next(iter(match_lanes(store, [match_id])), "matches")
    played, outcome = play_next(
        store, lane, config=config, first_slot=first_slot, sandboxed=sandboxed
    )
    if played is None:
        return outcome
    if outcome in ("done", "void"):
        decided = stop_if_decided(store, played)  # a compare whose test has decided
        if decided is not None:
            logger.info("match %s: its compare's test ended (%s)", played, decided)
        rule_set = finished_rule_set(store, played)
        if rule_set is not None:  # this match finished its tournament
            celery.send_task(REFIT, args=(rule_set,), queue=QUEUE)
    return f"match {played}: {outcome}"


def accept_upload(
    store: Store, celery: Celery, upload_id: int, *, config: Config, sandboxed: bool = True
) -> str:
    """A ``check_upload(upload_id)`` task: check the upload in the sandbox (under a lease,
    so it is never checked twice at once); once accepted, create its placement tournament
    and send its matches. Return the upload's status.

    Raises:
        SandboxUnavailable, InfrastructureError: the check could not run (retry later).
    """
    status = check_upload(store, upload_id, sandboxed=sandboxed, config=config)
    if status == "accepted":
        tournament_id = create_placement(store, upload_id)
        if tournament_id is not None:  # the new version plays the field, to be rated
            dispatch_matches(store, celery, tournament_id)
    return status


#: Seconds after which a pending upload's or branch's task, sent but not taken by any
#: worker, is sent again by the sweep when its queue is empty (the task was lost).
UPLOAD_RESEND_SECONDS = 120.0


@dataclass(frozen=True, slots=True)
class SweepTotals:
    """What one sweep sent again: matches whose lease ran out, matches whose task was lost,
    uploads' checks and branches."""

    expired: int
    resent: int
    uploads: int
    branches: int


def sweep_all(store: Store, celery: Celery, config: Config) -> SweepTotals:
    """Sweep everything (docs/workers.md, "Sweep"): re-queue matches whose lease ran out
    (a cancelled tournament's are voided instead); send again the pending matches of each
    lane whose queue is empty, the pending uploads if the checks' queue is, and the
    branches if the interactive queue is; a check or branch whose lease holds is never
    sent again. Idempotent: run it from every worker at once.

    Raises:
        OSError, KombuError: the broker cannot be reached (the next sweep will do).
    """
    lengths = queue_lengths(celery)
    empty = [lane for lane, queue in LANE_QUEUES.items() if lengths.get(queue, 0) == 0]
    report = sweep(
        store, send_by_lane(store, celery), queue_empty=False, empty_lanes=empty, config=config
    )
    uploads: list[int] = []
    if lengths.get(CHECK_QUEUE, 0) == 0:
        uploads = unsent_uploads(store, older_than=UPLOAD_RESEND_SECONDS)
        send_uploads(celery, uploads)
        mark_sent(store, uploads)
    branches: list[int] = []
    if lengths.get(INTERACTIVE_QUEUE, 0) == 0:
        branches = unsent_branches(
            store, older_than=UPLOAD_RESEND_SECONDS, stale_seconds=config.match_time_limit + 60
        )
        send_branches(celery, branches)
        mark_branches_sent(store, branches)
    totals = SweepTotals(len(report.expired), len(report.resent), len(uploads), len(branches))
    if any(dataclasses.astuple(totals)):
        logger.warning(
            "sweep: %d expired leases re-queued, %d lost match tasks, %d uploads' checks and "
            "%d branches sent again",
            totals.expired,
            totals.resent,
            totals.uploads,
            totals.branches,
        )
    return totals
