"""The tasks: thin wrappers, one service function each (:mod:`arena.service.dispatch`,
:mod:`arena.service.branches`, :mod:`arena.service.results`), which own the logic.

``arena.play_match(match_id)`` is a token of its match's lane: the worker plays that lane's
next match, the oldest-sent tournament's first (:func:`arena.service.work.play_token`);
``arena.check_upload(upload_id)`` checks an upload and, once it is accepted, sends its
placement; ``arena.run_branch(branch_id)`` plays a what-if branch asked from the web;
``arena.play_table(table_id)`` referees a table, people playing bots in the browser;
``arena.refit_ratings(rule_set_id)``, booked after every done match
(:func:`arena.service.live.schedule_refit`: at most one refit a rule set every few seconds),
re-fits the rule set's ratings over every stored game if one is not in them yet, one worker
at a time a rule set. All are idempotent: running one twice changes nothing more than
running it once (a second refit finds nothing changed).

The sweep is no task in a work queue (a task would wait behind long matches): each worker's
main process runs it from a thread every ``ARENA_SWEEP_SECONDS``, beside the thread that
records the worker's heartbeat (``arena.sweep`` stays a task, for a sweep asked by hand).

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
import time
from datetime import UTC, datetime
from typing import Any

from celery import Task
from celery.signals import (
    worker_process_init,
    worker_process_shutdown,
    worker_ready,
    worker_shutdown,
)

from arena.match.referee import InfrastructureError
from arena.match.sandbox import SandboxUnavailable, die_with_parent, process_slots
from arena.match.warm import release_warm
from arena.service.branches import run_branch
from arena.service.broker import (
    CHECK_UPLOAD,
    PLAY_MATCH,
    PLAY_TABLE,
    REFIT,
    RUN_BRANCH,
    START_COMPARE,
    SWEEP,
    make_app,
    using,
)
from arena.service.compares import start_requested_compare
from arena.service.live import refit_if_changed
from arena.service.matches import Config, worker_heartbeat, worker_id, worker_stopped
from arena.service.tables import TABLE_TIME_LIMIT, run_table
from arena.service.work import accept_upload, play_token, sweep_all
from arena.store.db import TRANSIENT_DATABASE_ERRORS, Store, connect
from workers.app import app

logger = logging.getLogger(__name__)

#: What a match's token is retried on (after a pause): the harness or the database failed.
MATCH_RETRIED: tuple[type[Exception], ...] = (InfrastructureError, *TRANSIENT_DATABASE_ERRORS)
#: What an upload's check is retried on: the sandbox, the harness or the database failed.
CHECK_RETRIED: tuple[type[Exception], ...] = (SandboxUnavailable, *MATCH_RETRIED)

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
    (after the match in hand) by itself. And it dies with the main process, however that
    dies (a parent-death signal: ``kill -9`` of the main process leaves no pool behind, and
    the bots' sandbox dies with the pool process)."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    die_with_parent()
    _state.clear()
    main_store = _main.get("store")
    if main_store is not None:  # forked after the heartbeat began: leave its sockets alone
        main_store.engine.dispose(close=False)
    _main.clear()


@worker_process_shutdown.connect
def _release_warm_bots(**_: Any) -> None:
    """A pool process that ends stops the bots it kept warm (:mod:`arena.match.warm`);
    they would die with it anyway (the sandbox's parent-death signal), this says goodbye."""
    try:
        release_warm()
    except Exception as exc:  # shutting down: never fail the exit for it
        logger.warning("could not release the warm bots: %s", exc)


#: Set to 0 by ``arena worker --no-sweep`` (the worker then leaves sweeping to others).
SWEEP_ENV = "ARENA_WORKER_SWEEP"


@worker_ready.connect
def _start_heartbeat(sender: Any = None, **_: Any) -> None:
    """Record this worker in the database every heartbeat interval, and sweep every sweep
    interval, from two threads of the main process, until it shuts down (``arena
    workers`` and the dashboard show the heartbeat; a worker that stops beating is dead,
    and its matches' leases run out). The sweep runs here, not as a task in a work queue,
    so no match, however long, delays it: a lost lease is re-queued within the lease plus
    one sweep interval of the worker's death (docs/workers.md)."""
    config = Config.from_env()
    store = connect()
    stop = threading.Event()
    name = getattr(sender, "hostname", None) or worker_id()
    concurrency = int(getattr(getattr(sender, "pool", None), "limit", 0) or 0)
    started = datetime.now(UTC)  # this life's: a restart under the same name is a new one
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
                    started=started,
                )
            except Exception as exc:  # the database is away: keep trying
                logger.warning("worker heartbeat failed: %s", exc)
            if stop.wait(config.heartbeat_seconds):
                return

    def sweeper() -> None:
        # a client of its own: the consumer's is not shared
        with using(make_app(config=config)):
            while not stop.wait(config.sweep_seconds):
                try:
                    sweep_all(store, config)
                except Exception as exc:  # the broker or the database is away: next time
                    logger.warning("sweep failed: %s", exc)

    threading.Thread(target=beat, name="arena-worker-heartbeat", daemon=True).start()
    if os.environ.get(SWEEP_ENV, "1") != "0":
        threading.Thread(target=sweeper, name="arena-worker-sweep", daemon=True).start()


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


def _sandboxed() -> bool:
    return os.environ.get(UNSANDBOXED_ENV) != "1"


def _retry(task: Task[Any, Any], what: str, exc: Exception) -> BaseException:
    delay = min(60, 2 ** min(task.request.retries, 6))
    logger.warning("%s: %s; retrying in %s s", what, exc, delay)
    return task.retry(exc=exc, countdown=delay)


@app.task(
    name=PLAY_MATCH,
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    max_retries=None,  # the database's attempts counter decides (Config.max_attempts)
)
def play_match(self: Task[Any, Any], match_id: int) -> str:
    """Play the next match of match ``match_id``'s lane (:func:`play_token`); return what
    happened. Retried, after a pause, only when the harness failed (sandbox, database); a
    bot's fault is a verdict, never a retry."""
    store = _store()
    try:
        outcome = play_token(
            store,
            match_id,
            config=_state["config"],
            first_slot=_first_slot(),
            sandboxed=_sandboxed(),
        )
    except MATCH_RETRIED as exc:
        raise _retry(self, f"token of match {match_id}", exc) from exc
    logger.info("token of match %s: %s", match_id, outcome)
    return outcome


@app.task(name=REFIT, bind=True, acks_late=True, ignore_result=True, max_retries=None)
def refit_task(self: Task[Any, Any], rule_set_id: int) -> str:
    """Re-fit the rule set's ratings over every stored game if a done match is not in them
    yet (:func:`refit_if_changed`: a duplicate task costs one read); while another worker
    refits it, try again after the interval. Return what happened."""
    try:
        live = refit_if_changed(_store(), rule_set_id)
    except TRANSIENT_DATABASE_ERRORS as exc:
        raise _retry(self, f"refit of rule set {rule_set_id}", exc) from exc
    if live.outcome == "busy":
        raise self.retry(countdown=live.retry_seconds)
    if live.refit is not None:
        refit = live.refit
        logger.info(
            "ratings of rule set %s: %d bots over %d games in %.2f s",
            rule_set_id,
            len(refit.ratings),
            refit.games,
            refit.seconds,
        )
    return live.outcome


@app.task(
    name=CHECK_UPLOAD,
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    max_retries=5,
)
def accept_upload_task(self: Task[Any, Any], upload_id: int) -> str:
    """Check an uploaded bot in the sandbox, store it if it passes and send its placement
    (:func:`accept_upload`); return its status. Retried, after a pause, only when the
    sandbox or the database failed."""
    try:
        status = accept_upload(_store(), upload_id, config=_state["config"], sandboxed=_sandboxed())
    except CHECK_RETRIED as exc:
        raise _retry(self, f"upload {upload_id}", exc) from exc
    logger.info("upload %s: %s", upload_id, status)
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
            sandboxed=_sandboxed(),
        )
    except TRANSIENT_DATABASE_ERRORS as exc:
        raise _retry(self, f"branch {branch_id}", exc) from exc
    logger.info("branch %s: %s", branch_id, status)
    return status


@app.task(name=START_COMPARE, bind=True, acks_late=True, max_retries=5)
def start_compare_task(self: Task[Any, Any], request: dict[str, Any]) -> str:
    """Store the compare ``arena compare --remote`` asks for and send its first batches
    (:func:`start_requested_compare`), while the command loads its store; return what
    happened. Retried, after a pause, only when the database failed (a start too old by then
    is dropped: its command stored the compare itself)."""
    try:
        outcome = start_requested_compare(_store(), request, now=time.time())
    except TRANSIENT_DATABASE_ERRORS as exc:
        raise _retry(self, "a compare's start", exc) from exc
    logger.info("%s", outcome)
    return outcome


@app.task(
    name=PLAY_TABLE,
    acks_late=True,
    reject_on_worker_lost=False,  # a table is played once: a lost one is closed, not replayed
    ignore_result=True,
    time_limit=TABLE_TIME_LIMIT,
    soft_time_limit=TABLE_TIME_LIMIT - 30,
)
def play_table_task(table_id: int) -> str:
    """Referee a table (:func:`run_table`): its bots in the sandbox, its people through the
    table's channel; return its status. Never retried: a table whose harness failed is
    failed (its people are told), and nobody waits for a replay."""
    status = run_table(
        _store(),
        table_id,
        config=_state["config"],
        first_slot=_first_slot(),
        sandboxed=_sandboxed(),
    )
    logger.info("table %s: %s", table_id, status)
    return status


@app.task(name=SWEEP, acks_late=True, ignore_result=True)
def sweep_task() -> dict[str, int]:
    """Sweep now (:func:`sweep_all`; the workers' main processes sweep by themselves)."""
    totals = sweep_all(_store(), _state["config"])
    return {"expired": totals.expired, "resent": totals.resent}
