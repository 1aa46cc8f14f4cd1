"""What the workers' tasks run: one service function a Celery task (``workers/tasks.py``
wraps each), so the chain "upload accepted -> placement -> its matches sent" and "a match
played -> its compare stopped, its rule set's refit booked" live in the service, not in the task.
"""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass

from arena.service.assignments import grade_after_match, settle_tests
from arena.service.branches import STALE_MARGIN_SECONDS, unsent_branches
from arena.service.broker import (
    CHECK_QUEUE,
    INTERACTIVE_QUEUE,
    LANE_QUEUES,
    current,
    expire_replies,
    queue_lengths,
)
from arena.service.clock import tick_competition, tick_competitions
from arena.service.compares import stop_if_decided, stop_unfollowed
from arena.service.dispatch import send_branch_ids, send_refit, send_upload_ids, sweep_matches
from arena.service.gauntlets import restart_stalled
from arena.service.intake import settle_upload
from arena.service.live import resend_stale, schedule_refit
from arena.service.matches import Config, finished_rule_set, play_next
from arena.service.retention import prune_records
from arena.service.tables import close_idle
from arena.service.uploads import check_in_sandbox, unsent_uploads
from arena.store.clock import competition_of_match
from arena.store.db import Store
from arena.store.lanes import match_lanes
from arena.store.queue import finish_stalled_tournaments

__all__ = [
    "UPLOAD_RESEND_SECONDS",
    "SweepTotals",
    "accept_upload",
    "play_token",
    "sweep_all",
]

logger = logging.getLogger(__name__)


def play_token(
    store: Store,
    match_id: int,
    *,
    config: Config,
    first_slot: int | None = None,
    sandboxed: bool = True,
) -> str:
    """A ``play_match(match_id)`` task: a token of match ``match_id``'s lane. Play that
    lane's next match (the oldest-sent tournament's first; a cancelled one's never), then,
    if it finished its compare's test or its tournament, void the compare's rest or send
    the rule set's refit; a done match books its rule set's live refit
    (:func:`arena.service.live.schedule_refit`). Return what happened, as
    ``"match N: OUTCOME"`` (or ``"idle"``).

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
        grade_after_match(store, played)  # an assignment's test: its verdict, the grade
        rule_set = finished_rule_set(store, played)
        if rule_set is not None:  # this match finished its tournament
            send_refit(rule_set)
        competition = competition_of_match(store, played)
        if competition is not None:
            tick_competition(store, competition, config=config)
    if outcome == "done":  # live ratings: its rule set refitted within the interval
        schedule_refit(store, played)
    return f"match {played}: {outcome}"


def accept_upload(store: Store, upload_id: int, *, config: Config, sandboxed: bool = True) -> str:
    """An ``arena.check_upload(upload_id)`` task: check the upload in the sandbox (under a lease,
    so it is never checked twice at once); then do what its stored purpose says
    (:func:`arena.service.intake.settle_upload`: a competition's entry settled, an
    assignment's submission graded, or an accepted placement upload's tournament created
    and its matches sent). Return the upload's status.

    Raises:
        SandboxUnavailable, InfrastructureError: the check could not run (retry later).
    """
    status = check_in_sandbox(store, upload_id, sandboxed=sandboxed, config=config)
    if status in ("missing", "checking"):
        return status
    settle_upload(store, upload_id)
    return status


#: Seconds after which a pending upload's or branch's task, sent but not taken by any
#: worker, is sent again by the sweep when its queue is empty (the task was lost).
UPLOAD_RESEND_SECONDS = 120.0


@dataclass(frozen=True, slots=True)
class SweepTotals:
    """What one sweep sent again: matches whose lease ran out, matches whose task was lost,
    uploads' checks and branches; and the game records it pruned (its retention)."""

    expired: int
    resent: int
    uploads: int
    branches: int
    pruned: int = 0


def sweep_all(store: Store, config: Config) -> SweepTotals:
    """Sweep everything (docs/workers.md, "Sweep"): re-queue matches whose lease ran out
    (a cancelled tournament's are voided instead), run again a tournament found done with
    matches pending; send again the pending matches a claim can take of each lane whose
    queue is empty, the pending uploads if the checks' queue is, and the
    branches if the interactive queue is; a check or branch whose lease holds is never
    sent again; prune the game records the deployment's retention no longer keeps
    (:func:`arena.service.retention.prune_records`, a bounded number a sweep). Idempotent:
    run it from every worker at once.

    Raises:
        OSError, KombuError: the broker cannot be reached (the next sweep will do).
    """
    lengths = queue_lengths()
    empty = [lane for lane, queue in LANE_QUEUES.items() if lengths.get(queue, 0) == 0]
    report = sweep_matches(
        store,
        queue_empty=False,
        empty_lanes=empty,
        resend_grace_seconds=config.resend_grace_seconds,
    )
    if report.reopened:
        logger.warning("sweep: tournaments %s were done with matches pending", report.reopened)
    uploads: list[int] = []
    if lengths.get(CHECK_QUEUE, 0) == 0:
        uploads = unsent_uploads(store, older_than=UPLOAD_RESEND_SECONDS)
        send_upload_ids(store, uploads)
    branches: list[int] = []
    if lengths.get(INTERACTIVE_QUEUE, 0) == 0:
        branches = unsent_branches(
            store,
            older_than=UPLOAD_RESEND_SECONDS,
            stale_seconds=config.match_time_limit + STALE_MARGIN_SECONDS,  # as its claim
        )
        send_branch_ids(store, branches)
    for rule_set in finish_stalled_tournaments(store):  # none left to play: done
        logger.warning("sweep: a tournament of rule set %d had every match finished", rule_set)
        send_refit(rule_set)
    unfollowed = stop_unfollowed(store)  # compares whose arena compare --remote is gone
    if unfollowed:
        logger.warning("sweep: compares %s stopped: their follower is gone", unfollowed)
    expire_replies(current())  # (the filesystem broker's: a killed command's replies)
    resend_stale(store)  # refits booked and lost with their worker
    settle_tests(store)  # assignments' tests whose last match's worker died before settling
    restart_stalled(store)  # submissions whose worker died while settling them
    ticked = tick_competitions(store, config=config)  # reads only when nothing is due
    if ticked.added:
        logger.info("sweep: %d competition matches added", ticked.added)
    closed = close_idle(store)  # tables nobody came to, or whose worker is gone
    if closed:
        logger.info("sweep: %d idle tables closed", len(closed))
    pruned = prune_records(store, config.retention)  # logs what it pruned
    totals = SweepTotals(
        len(report.expired), len(report.resent), len(uploads), len(branches), pruned.records
    )
    if any(dataclasses.astuple(totals)[:4]):
        logger.warning(
            "sweep: %d expired leases re-queued, %d lost match tasks, %d uploads' checks and "
            "%d branches sent again",
            totals.expired,
            totals.resent,
            totals.uploads,
            totals.branches,
        )
    return totals
