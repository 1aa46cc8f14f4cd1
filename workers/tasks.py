"""The tasks: thin wrappers around :mod:`arena.service.matches`, which owns the logic.

``arena.play_match(match_id)`` plays one stored match; ``arena.sweep()`` (sent by beat every
``ARENA_SWEEP_SECONDS``) re-sends the tasks of matches whose worker died or whose task was
lost; ``arena.refit_ratings(rule_set_id)``, sent when a match finishes its tournament,
re-fits the rule set's ratings over every stored game and appends to their history;
``arena.run_branch(branch_id)`` plays a what-if branch asked from the web. All are
idempotent: running one twice changes nothing more than running it once (a refit twice adds
a second, equal history point).

Each pool process opens its own database engine and claims its own block of sandbox slots
(:func:`arena.match.sandbox.process_slots`) after the fork, so processes of every worker on the
machine seat their bots in different slots.
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import threading
from typing import Any

from celery import Task
from celery.signals import worker_process_init, worker_ready, worker_shutdown
from sqlalchemy.exc import OperationalError

from arena.match.referee import InfrastructureError
from arena.match.sandbox import SandboxUnavailable, process_slots
from arena.service.branches import mark_branches_sent, run_branch, unsent_branches
from arena.service.broker import (
    CHECK_UPLOAD,
    PLAY_MATCH,
    QUEUE,
    REFIT,
    RUN_BRANCH,
    SWEEP,
    queue_length,
    send_branches,
    send_matches,
    send_uploads,
)
from arena.service.compares import stop_if_decided
from arena.service.matches import (
    Config,
    finished_rule_set,
    run_match,
    send_pending,
    sweep,
    worker_heartbeat,
    worker_id,
    worker_stopped,
)
from arena.service.results import refit_ratings
from arena.service.uploads import check_upload, create_placement, mark_sent, unsent_uploads
from arena.store.db import Store, connect
from workers.app import app

logger = logging.getLogger(__name__)

#: Set by ``arena worker --unsandboxed`` (a developer's own machine only).
UNSANDBOXED_ENV = "ARENA_WORKER_UNSANDBOXED"

_state: dict[str, Any] = {}


#: The main process's heartbeat: its store (pool processes must not use it), and its stop.
_main: dict[str, Any] = {}


@worker_process_init.connect
def _reset_after_fork(**_: Any) -> None:
    """A pool process must not share its parent's database connections or slot lock, and
    leaves SIGTERM to the main process: systemd, docker and ``kill -TERM -PGID`` signal the
    whole process group, and a pool process that dies of it mid-teardown could hang the
    main process's shutdown in billiard; the main process's warm shutdown stops the pool
    (after the match in hand) by itself."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    _state.clear()
    main_store = _main.get("store")
    if main_store is not None:  # forked after the heartbeat began: leave its sockets alone
        main_store.engine.dispose(close=False)
    _main.clear()


@worker_ready.connect
def _start_heartbeat(sender: Any = None, **_: Any) -> None:
    """Record this worker in the database every heartbeat interval, from a thread of the
    main process, until it shuts down (``arena tournament status`` and the dashboard show
    it; a worker that stops beating is dead, and its matches' leases run out)."""
    config = Config.from_env()
    store = connect()
    stop = threading.Event()
    name = getattr(sender, "hostname", None) or worker_id()
    concurrency = int(getattr(getattr(sender, "pool", None), "limit", 0) or 0)
    _main.update(store=store, stop=stop, name=name)

    def beat() -> None:
        while True:
            try:
                worker_heartbeat(
                    store,
                    name,
                    host=socket.gethostname(),
                    pid=os.getpid(),
                    concurrency=concurrency,
                )
            except Exception as exc:  # the database is away: keep trying
                logger.warning("worker heartbeat failed: %s", exc)
            if stop.wait(config.heartbeat_seconds):
                return

    threading.Thread(target=beat, name="arena-worker-heartbeat", daemon=True).start()


@worker_shutdown.connect
def _stop_heartbeat(**_: Any) -> None:
    """Record a clean shutdown."""
    if "stop" in _main:
        _main["stop"].set()
        try:
            worker_stopped(_main["store"], _main["name"])
        except Exception as exc:
            logger.warning("could not record the worker's shutdown: %s", exc)


def _store() -> Store:
    if _state.get("pid") != os.getpid():
        _state.clear()
        _state.update(pid=os.getpid(), store=connect(), config=Config.from_env())
    store: Store = _state["store"]
    return store


def _first_slot() -> int:
    return process_slots()


@app.task(
    name=PLAY_MATCH,
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    max_retries=None,  # the database's attempts counter decides (Config.max_attempts)
)
def play_match(self: Task[Any, Any], match_id: int) -> str:
    """Play match ``match_id`` if it is still to be played; return what happened (see
    :func:`arena.service.matches.run_match`). Retried, after a pause, only when the harness
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
        decided = stop_if_decided(store, match_id)  # a compare whose test has decided
        if decided is not None:
            logger.info("match %s: its compare's test ended (%s)", match_id, decided)
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


#: Seconds after which a pending upload's check is sent again by the sweep (when the
#: queue is empty: its task was lost).
UPLOAD_RESEND_SECONDS = 120.0


@app.task(
    name=CHECK_UPLOAD,
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    max_retries=5,
)
def check_upload_task(self: Task[Any, Any], upload_id: int) -> str:
    """Check an uploaded bot in the sandbox and store it if it passes; return its status.
    Retried, after a pause, only when the sandbox or the database failed."""
    try:
        status = check_upload(_store(), upload_id, sandboxed=os.environ.get(UNSANDBOXED_ENV) != "1")
    except (InfrastructureError, SandboxUnavailable, OperationalError) as exc:
        delay = min(60, 2 ** min(self.request.retries, 6))
        logger.warning("upload %s: %s; retrying in %s s", upload_id, exc, delay)
        raise self.retry(exc=exc, countdown=delay) from exc
    logger.info("upload %s: %s", upload_id, status)
    if status == "accepted":
        store = _store()
        tournament_id = create_placement(store, upload_id)
        if tournament_id is not None:  # the new version plays the field, to be rated
            send_pending(store, lambda ids: send_matches(app, ids), tournament_id=tournament_id)
    return status


@app.task(name=RUN_BRANCH, bind=True, acks_late=True, reject_on_worker_lost=True, max_retries=5)
def run_branch_task(self: Task[Any, Any], branch_id: int) -> str:
    """Play a what-if branch (a stored game taken up by other bots) and store its records;
    return its status. Retried, after a pause, only when the database failed; a harness
    failure marks the branch failed, a bot's fault is part of its result."""
    try:
        status = run_branch(
            _store(),
            branch_id,
            config=_state["config"],
            first_slot=_first_slot(),
            sandboxed=os.environ.get(UNSANDBOXED_ENV) != "1",
        )
    except OperationalError as exc:
        delay = min(60, 2 ** min(self.request.retries, 6))
        logger.warning("branch %s: %s; retrying in %s s", branch_id, exc, delay)
        raise self.retry(exc=exc, countdown=delay) from exc
    logger.info("branch %s: %s", branch_id, status)
    return status


@app.task(name=SWEEP, acks_late=True, ignore_result=True)
def sweep_task() -> dict[str, int]:
    """Re-send the tasks of matches whose lease ran out, and of pending matches when the
    queue is empty; the same for uploads waiting for their check; return how many."""
    store = _store()
    queue_empty = queue_length(app) == 0
    report = sweep(
        store,
        lambda ids: send_matches(app, ids),
        queue_empty=queue_empty,
        config=_state["config"],
    )
    if queue_empty:
        uploads = unsent_uploads(store, older_than=UPLOAD_RESEND_SECONDS)
        send_uploads(app, uploads)
        mark_sent(store, uploads)
        if uploads:
            logger.warning("sweep: %d uploads' checks sent again", len(uploads))
        config: Config = _state["config"]
        branches = unsent_branches(
            store,
            older_than=UPLOAD_RESEND_SECONDS,
            stale_seconds=config.match_time_limit + 60,
        )
        send_branches(app, branches)
        mark_branches_sent(store, branches)
        if branches:
            logger.warning("sweep: %d branches sent again", len(branches))
    if report.expired or report.resent:
        logger.warning(
            "sweep: %d expired leases re-queued, %d lost tasks sent again",
            len(report.expired),
            len(report.resent),
        )
    return {"expired": len(report.expired), "resent": len(report.resent)}
