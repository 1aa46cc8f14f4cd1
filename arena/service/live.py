"""Live ratings (docs/ratings.md, "Live ratings"): a rule set's leaderboard follows its
results, within a stated lag, at a bounded cost.

- After every done match, :func:`schedule_refit` counts the match's ask on its rule set and,
  unless a refit booked already is due later (it will read this match), books one and sends
  ``arena.refit_ratings(rule_set_id)`` for its due time: at once if the last refit began
  :meth:`RefitPolicy.interval` ago or more, else when it will have. So results are refitted
  at most every ``interval`` seconds a rule set, and one is never left waiting longer than
  the interval plus a refit.
- :func:`refit_if_changed` (the task) refits only if a done match is not covered yet, and
  only one at a time a rule set (a lease in the database: workers never fit the same rule
  set at once), then the figures of the rule set's tournaments whose tally moved on
  (:func:`arena.service.board_views.refit_figures`: their pages read them fitted). A
  duplicate or a late task costs one small read.
- :func:`resend_stale` (the sweep) sends again the refits of rule sets whose booked refit
  was due long ago and still has not run (its task was lost with its worker).

The interval is ``max(min_seconds, factor * the last refit's seconds)``: a rule set of a
few thousand games refits in tens of milliseconds, so every ``min_seconds`` (2 s); one of
143,000 games in about a second, so its refits never take more than ``1 / factor`` of one
process while results stream in (benchmarks/live_ratings.py measures the lag).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from arena.service.board_views import refit_figures
from arena.service.broker import INTERACTIVE_QUEUE
from arena.service.dispatch import BROKER_ERRORS, send_refit
from arena.service.results import Refit, refit_ratings
from arena.store import ratings as stored
from arena.store.db import Store
from arena.store.ratings import RefitClock

__all__ = [
    "REFIT_FACTOR_ENV",
    "REFIT_SECONDS_ENV",
    "LiveRefit",
    "RefitClock",
    "RefitPolicy",
    "refit_clock",
    "refit_if_changed",
    "resend_stale",
    "schedule_refit",
]

logger = logging.getLogger(__name__)

#: The environment variables that set :attr:`RefitPolicy.min_seconds` and ``factor``.
REFIT_SECONDS_ENV = "ARENA_REFIT_SECONDS"
REFIT_FACTOR_ENV = "ARENA_REFIT_FACTOR"


@dataclass(frozen=True, slots=True)
class RefitPolicy:
    """How often a rule set is refitted while its results arrive.

    Attributes:
        min_seconds: the shortest time between two refits' starts.
        factor: the interval is at least this many times the last refit's length, so
            refits take at most ``1 / factor`` of a process however big the rule set.
        lease_seconds: a refit's lease is this many times its expected length (at least a
            minute): a worker that died mid-refit holds its rule set no longer.
        stale_seconds: the sweep sends a booked refit again once it is this late.
    """

    min_seconds: float = 2.0
    factor: float = 3.0
    lease_seconds: float = 60.0
    stale_seconds: float = 60.0

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> RefitPolicy:
        """The policy, with ``ARENA_REFIT_SECONDS`` as ``min_seconds`` and
        ``ARENA_REFIT_FACTOR`` as ``factor`` where set.

        Raises:
            ValueError: either is not a number, 0 or more.
        """
        env = os.environ if environ is None else environ
        default = cls()
        return cls(
            min_seconds=_number(env, REFIT_SECONDS_ENV, default.min_seconds, "a number of seconds"),
            factor=_number(env, REFIT_FACTOR_ENV, default.factor, "a number"),
        )

    def interval(self, clock: RefitClock) -> float:
        """Seconds from one refit's start to the next one's, for the rule set as it is."""
        return max(self.min_seconds, self.factor * (clock.seconds or 0.0))

    def due(self, clock: RefitClock) -> datetime:
        """When the rule set's next refit may begin (the epoch if it never was refitted)."""
        if clock.refitted is None:
            return datetime(1970, 1, 1, tzinfo=UTC)
        return clock.refitted + timedelta(seconds=self.interval(clock))

    def lease(self, clock: RefitClock) -> float:
        """Seconds a refit of the rule set holds its lease."""
        return max(self.lease_seconds, 10 * (clock.seconds or 0.0))


def _number(env: Mapping[str, str], name: str, default: float, what: str) -> float:
    raw = env.get(name)
    if raw is None:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not value >= 0:
        raise ValueError(f"{name} must be {what}, 0 or more, not {raw!r}")
    return value


def refit_clock(store: Store, rule_set_id: int) -> RefitClock:
    """The rule set's live-ratings state (when it was refitted, what is not covered yet).

    Raises:
        LookupError: no rule set has that id.
    """
    return stored.refit_clock(store, rule_set_id)


def schedule_refit(
    store: Store,
    match_id: int,
    *,
    policy: RefitPolicy | None = None,
    now: datetime | None = None,
) -> float | None:
    """After match ``match_id`` is done (its result committed): book its rule set's refit
    and send the task for its due time. Return the task's countdown in seconds, or None
    when a refit already booked will cover the match, or the broker could not be reached
    (logged; the sweep sends the booked refit once it is late: :func:`resend_stale`).
    """
    policy = policy or RefitPolicy.from_env()
    now = now or datetime.now(UTC)
    booked = stored.book_refit(store, match_id, now, policy.due)
    if booked is None:
        return None
    rule_set_id, due = booked
    countdown = max(0.0, (due - now).total_seconds())
    try:
        _send(rule_set_id, countdown)
    except BROKER_ERRORS as exc:  # booked: the sweep sends it once it is late
        logger.warning("rule set %d: its refit could not be sent: %s", rule_set_id, exc)
        return None
    return countdown


def _send(rule_set_id: int, countdown: float) -> None:
    # The interactive queue: a refit never waits behind a tournament's queued matches, and
    # the fast worker (arena serve, docker-compose) takes it even when every match process
    # is busy.
    send_refit(rule_set_id, queue=INTERACTIVE_QUEUE, countdown=countdown or None)


@dataclass(frozen=True, slots=True)
class LiveRefit:
    """What :func:`refit_if_changed` did.

    Attributes:
        rule_set_id: the rule set.
        outcome: ``"refitted"``, ``"unchanged"`` (every done match was covered: nothing
            done) or ``"busy"`` (another refit of it is in flight: try again after
            ``retry_seconds``).
        refit: the refit, when one ran.
        retry_seconds: when busy, how long to wait before trying again.
    """

    rule_set_id: int
    outcome: str
    refit: Refit | None = None
    retry_seconds: float = 0.0


def refit_if_changed(
    store: Store,
    rule_set_id: int,
    *,
    policy: RefitPolicy | None = None,
    now: datetime | None = None,
) -> LiveRefit:
    """Refit the rule set's ratings if a done match is not in them yet (or it was never
    refitted), holding its refit lease so no other worker fits it at once.

    Raises:
        LookupError: no rule set has that id.
    """
    policy = policy or RefitPolicy.from_env()
    now = now or datetime.now(UTC)
    clock = stored.refit_clock(store, rule_set_id)
    if not clock.changed:
        return LiveRefit(rule_set_id, "unchanged")
    held = clock.lease is not None and clock.lease > now
    if not held:
        until = now + timedelta(seconds=policy.lease(clock))
        clock = stored.claim_refit(store, rule_set_id, now, until)
        held = clock.lease is not None and clock.lease > now
    if held:  # a refit in flight may have read before the match this task is for
        return LiveRefit(rule_set_id, "busy", retry_seconds=policy.interval(clock))
    seconds = None
    try:
        refit = refit_ratings(store, rule_set_id)
        seconds = refit.seconds
    finally:
        stored.release_refit(store, rule_set_id, seconds)
    refit_figures(store, rule_set_id)  # its tournaments' pages: figures fitted already
    return LiveRefit(rule_set_id, "refitted", refit)


def resend_stale(
    store: Store,
    *,
    policy: RefitPolicy | None = None,
    now: datetime | None = None,
) -> list[int]:
    """Send again the refit of every rule set whose booked refit is over
    ``policy.stale_seconds`` late and still has results to cover (its task was lost), unless
    a refit of it holds its lease (in flight: a task would find it busy); return their ids.
    Idempotent: a duplicate task finds nothing changed.

    Raises:
        OSError, KombuError: the broker cannot be reached (the next sweep will do).
    """
    policy = policy or RefitPolicy.from_env()
    now = now or datetime.now(UTC)
    stale = stored.stale_rule_sets(store, now - timedelta(seconds=policy.stale_seconds), now=now)
    for rule_set_id in stale:
        logger.warning("rule set %d: its booked refit is late; sending it again", rule_set_id)
        _send(rule_set_id, 0.0)
    return stale
