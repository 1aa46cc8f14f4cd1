"""The tasks: thin wrappers around :mod:`arena.store.service`, which owns the logic.

``arena.play_match(match_id)`` plays one stored match; ``arena.sweep()`` (sent by beat every
``ARENA_SWEEP_SECONDS``) re-sends the tasks of matches whose worker died or whose task was
lost; ``arena.refit_ratings(rule_set_id)``, sent when a match finishes its tournament,
re-fits the rule set's ratings over every stored game and appends to their history. All are
idempotent: running one twice changes nothing more than running it once (a refit twice adds
a second, equal history point).

Each pool process opens its own database engine and claims its own block of sandbox slots
(:func:`arena.sandbox.claim_slot_block`) after the fork, so processes of every worker on the
machine seat their bots in different slots.
"""

from __future__ import annotations

import logging
import os
from typing import Any

from celery import Task
from celery.signals import worker_process_init
from sqlalchemy.exc import OperationalError

from arena.broker import PLAY_MATCH, QUEUE, REFIT, SWEEP, queue_length, send_matches
from arena.referee import InfrastructureError
from arena.sandbox import claim_slot_block
from arena.store.db import Store, connect
from arena.store.results import refit_ratings
from arena.store.service import Config, finished_rule_set, run_match, sweep, worker_id
from workers.app import app

logger = logging.getLogger(__name__)

#: Set by ``arena worker --unsandboxed`` (a developer's own machine only).
UNSANDBOXED_ENV = "ARENA_WORKER_UNSANDBOXED"

_state: dict[str, Any] = {}


@worker_process_init.connect
def _reset_after_fork(**_: Any) -> None:
    """A pool process must not share its parent's database connections or slot lock."""
    _state.clear()


def _store() -> Store:
    if _state.get("pid") != os.getpid():
        _state.clear()
        _state.update(pid=os.getpid(), store=connect(), config=Config.from_env())
    store: Store = _state["store"]
    return store


def _first_slot() -> int:
    if "slot" not in _state:
        _state["slot"] = claim_slot_block()
    slot: int = _state["slot"]
    return slot


@app.task(
    name=PLAY_MATCH,
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    max_retries=None,  # the database's attempts counter decides (Config.max_attempts)
)
def play_match(self: Task[Any, Any], match_id: int) -> str:
    """Play match ``match_id`` if it is still to be played; return what happened (see
    :func:`arena.store.service.run_match`). Retried, after a pause, only when the harness
    failed (sandbox, database); a bot's fault is a verdict, never a retry."""
    store = _store()
    try:
        outcome = run_match(
            store,
            match_id,
            worker=worker_id(),
            config=_state["config"],
            first_slot=_first_slot(),
            sandboxed=os.environ.get(UNSANDBOXED_ENV) != "1",
        )
    except (InfrastructureError, OperationalError) as exc:
        delay = min(60, 2 ** min(self.request.retries, 6))
        logger.warning("match %s: %s; retrying in %s s", match_id, exc, delay)
        raise self.retry(exc=exc, countdown=delay) from exc
    logger.info("match %s: %s", match_id, outcome)
    if outcome in ("done", "void"):
        rule_set = finished_rule_set(store, match_id)
        if rule_set is not None:  # this match finished its tournament
            app.send_task(REFIT, args=(rule_set,), queue=QUEUE)
    return outcome


@app.task(name=REFIT, acks_late=True, ignore_result=True)
def refit_task(rule_set_id: int) -> int:
    """Re-fit the rule set's ratings over every stored game; return how many bots."""
    refit = refit_ratings(_store(), rule_set_id)
    logger.info(
        "ratings of rule set %s: %d bots over %d games in %.2f s",
        rule_set_id,
        len(refit.ratings),
        refit.games,
        refit.load_seconds + refit.fit_seconds + refit.write_seconds,
    )
    return len(refit.ratings)


@app.task(name=SWEEP, acks_late=True, ignore_result=True)
def sweep_task() -> dict[str, int]:
    """Re-send the tasks of matches whose lease ran out, and of pending matches when the
    queue is empty; return how many of each."""
    store = _store()
    report = sweep(
        store,
        lambda ids: send_matches(app, ids),
        queue_empty=queue_length(app) == 0,
        config=_state["config"],
    )
    if report.expired or report.resent:
        logger.warning(
            "sweep: %d expired leases re-queued, %d lost tasks sent again",
            len(report.expired),
            len(report.resent),
        )
    return {"expired": len(report.expired), "resent": len(report.resent)}
