"""The Celery side shared by the workers (``workers/``) and the CLI that sends them tasks.

One place says how the app is configured, so a worker and ``arena tournament run`` cannot
disagree: the broker URL (``ARENA_BROKER_URL``; Redis in deployments, kombu's filesystem
transport by default, which needs no server), the queues (one per lane: uploads' checks,
interactive work, tournaments' matches; :data:`LANE_QUEUES`), and the reliability settings
(docs/workers.md says why each):

- ``task_acks_late`` with ``task_reject_on_worker_lost``: a task is acknowledged after it
  ran, so one whose worker died is delivered again where the broker can (Redis);
- ``worker_prefetch_multiplier=1``: a worker holds one task beyond those it runs, so a
  killed worker strands few and a long match does not hold others back;
- no result backend: results go to the database (:mod:`arena.service.matches`);
- Redis's ``visibility_timeout`` above the longest match, so a long match is not delivered
  again while it runs (it would be harmless, only wasted: the database lease decides).

The tasks themselves are in ``workers/tasks.py``; here they are only names.

The process's broker is configured once, at start (:func:`configure`: the web's
``create_app``, the workers' app, each CLI command that sends), and
:mod:`arena.service.dispatch` sends through :func:`current`: no service function takes the
broker as a parameter, and the web, the workers and the CLI never name Celery.
"""

from __future__ import annotations

import hashlib
import os
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from queue import Empty
from typing import Any

from celery import Celery
from kombu import Queue
from kombu.exceptions import ChannelError, OperationalError
from kombu.transport import filesystem
from kombu.utils.json import dumps, loads

from arena.service.config import Config

__all__ = [
    "ALL_QUEUES",
    "BROKER_ENV",
    "BROKER_ERRORS",
    "CHECK_QUEUE",
    "CHECK_UPLOAD",
    "DEFAULT_BROKER_URL",
    "FAST_QUEUES",
    "INTERACTIVE_QUEUE",
    "LANE_QUEUES",
    "PLAY_MATCH",
    "PLAY_TABLE",
    "QUEUE",
    "REFIT",
    "RUN_BRANCH",
    "START_COMPARE",
    "SWEEP",
    "TABLES_QUEUE",
    "configure",
    "configure_lazily",
    "current",
    "default_broker_dir",
    "expire_replies",
    "install",
    "location",
    "make_app",
    "make_sender",
    "queue_length",
    "queue_lengths",
    "read_replies",
    "reply_queue",
    "resolve_broker_url",
    "run_celery",
    "send_branches",
    "send_compare_start",
    "send_matches",
    "send_reply",
    "send_table",
    "send_uploads",
    "using",
]

#: The environment variable naming the broker.
BROKER_ENV = "ARENA_BROKER_URL"
#: What talking to an unreachable broker raises (kombu wraps the socket's errors): callers
#: catch these without importing kombu.
BROKER_ERRORS: tuple[type[Exception], ...] = (OSError, OperationalError)
#: The serverless default: the filesystem transport in :func:`default_broker_dir`.
DEFAULT_BROKER_URL = "filesystem://"
#: The queue of tournaments' matches (the ``matches`` lane) and refits.
QUEUE = "arena"
#: Uploads' checks have a queue of their own, which the workers look at first (Redis) or in
#: turn (the filesystem transport), and which the fast worker consumes (``arena worker
#: --lanes fast``): a new user never waits for a tournament's match.
CHECK_QUEUE = "arena-checks"
#: Interactive work: branches, and compares' matches (the ``interactive`` lane); the fast
#: worker consumes it too.
INTERACTIVE_QUEUE = "arena-interactive"
#: Tables (people playing bots in the browser): each holds a worker's process for its whole
#: game, mostly waiting for a person, so they have a queue of their own, which a worker
#: with room for them consumes (``arena worker --lanes tables --concurrency N``); any
#: worker of every lane takes them too.
TABLES_QUEUE = "arena-tables"
#: The queues in the order a worker looks at them.
ALL_QUEUES = (CHECK_QUEUE, INTERACTIVE_QUEUE, TABLES_QUEUE, QUEUE)
#: What the fast worker consumes: long matches can never take its processes.
FAST_QUEUES = (CHECK_QUEUE, INTERACTIVE_QUEUE)
#: The queue of each lane of matches (arena.store.lanes.LANES).
LANE_QUEUES = {"matches": QUEUE, "interactive": INTERACTIVE_QUEUE}
#: Task names (``workers/tasks.py`` registers them).
PLAY_MATCH = "arena.play_match"
SWEEP = "arena.sweep"
REFIT = "arena.refit_ratings"
CHECK_UPLOAD = "arena.check_upload"
RUN_BRANCH = "arena.run_branch"
PLAY_TABLE = "arena.play_table"
START_COMPARE = "arena.start_compare"

#: How often a consumer of the filesystem transport looks for new messages (kombu's default
#: is 1 s, which every task's latency would pay).
FILESYSTEM_POLLING_SECONDS = 0.05


class FilesystemChannel(filesystem.Channel):
    """kombu's filesystem channel, with messages that appear whole and are taken once, and
    exchange tables that appear whole.

    kombu 5.7 creates a message file under its final name and then writes it, so a consumer
    polling at that moment reads it empty; Celery calls that unrecoverable and the whole
    worker exits (celery/kombu#1551; benchmarks/transports.py read 35-192 of 2,000 messages
    empty). Here a message is written to ``*.msg.tmp`` and renamed into place, and a consumer
    claims one by renaming it into ``claimed/`` beside the queue (the same file system, so
    the rename is atomic and exactly one consumer wins) rather than moving it to the
    temporary directory, which may be another file system.

    kombu also creates an exchange's table (``control/NAME.exchange``) empty and locks it
    only then, so a second worker binding a queue to that exchange at that moment reads it
    empty and exits (``arena serve`` starts its two workers at once on a new broker
    folder). Here a missing table is first put in place whole, empty (``[]``), by a link:
    kombu then only ever reads and extends it under its lock.
    """

    def _queue_bind(self, exchange: str, routing_key: str, pattern: str | None, queue: str) -> None:
        table = self._exchange_file(exchange)  # type: ignore[attr-defined]  # (not in the stubs)
        if not table.exists():
            self.control_folder.mkdir(parents=True, exist_ok=True)
            draft = table.with_name(f".{table.name}.{uuid.uuid4().hex}")
            draft.write_text("[]")
            try:
                os.link(draft, table)  # (atomic; one binder's table wins, each is empty)
            except FileExistsError:
                pass
            finally:
                draft.unlink()
        super()._queue_bind(exchange, routing_key, pattern, queue)

    def _put(self, queue: str, payload: Any, **kwargs: Any) -> None:  # type: ignore[override]
        # (by the nanosecond, zero-padded: read in the order sent, even two sent within a
        # millisecond, which the milliseconds of kombu's names left to their uuids)
        name = f"{time.monotonic_ns():020d}_{uuid.uuid4()}.{queue}.msg"
        final = os.path.join(self.data_folder_out, name)
        try:
            with open(final + ".tmp", "wb") as handle:  # "*.msg.tmp" is no queue's message
                handle.write(dumps(payload).encode())
            os.replace(final + ".tmp", final)
        except OSError as exc:
            raise ChannelError(f"cannot add message {final!r} to the queue: {exc}") from exc

    def _get(self, queue: str, timeout: float | None = None) -> Any:
        wanted = f"{queue}.msg"
        claimed = os.path.join(self.data_folder_in, "claimed")
        os.makedirs(claimed, exist_ok=True)
        for name in sorted(os.listdir(self.data_folder_in)):
            if name.partition(".")[2] != wanted:
                continue
            mine = os.path.join(claimed, name)
            try:
                os.rename(os.path.join(self.data_folder_in, name), mine)
            except OSError:  # another consumer took it first
                continue
            try:
                with open(mine, "rb") as handle:
                    payload = handle.read()
                os.remove(mine)
            except OSError as exc:
                raise ChannelError(f"cannot read message {mine!r}: {exc}") from exc
            return loads(payload.decode())
        raise Empty()


class FilesystemTransport(filesystem.Transport):
    """kombu's filesystem transport with :class:`FilesystemChannel`."""

    Channel = FilesystemChannel


def default_broker_dir(database: str | None = None) -> Path:
    """The serverless broker's directory for a database (``--url``, else
    ``$ARENA_DATABASE_URL``, else ``arena.db`` here): in the temporary directory, named by a
    hash of the database's absolute URL, so every worker and command on this machine that
    uses one database shares one queue, wherever it was started, and nothing appears in
    the current directory."""
    from arena.store.urls import resolve_url, sqlite_path  # (not the store: see make_sender)

    resolved = resolve_url(database)
    path = sqlite_path(resolved)
    key = f"sqlite:///{path.resolve()}" if path is not None else resolved
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    return Path(tempfile.gettempdir()) / f"arena-broker-{digest}"


def resolve_broker_url(url: str | None = None, database: str | None = None) -> str:
    """``url``, else ``$ARENA_BROKER_URL``, else the filesystem transport in
    :func:`default_broker_dir` of ``database``; a filesystem URL's directory made absolute
    (``filesystem://DIR``, relative to the current directory, or ``filesystem:///abs/dir``;
    a bare ``filesystem://`` is the default directory).

    Raises:
        ValueError: a scheme Celery cannot use here (the message lists those it can).
    """
    url = url or os.environ.get(BROKER_ENV) or DEFAULT_BROKER_URL
    scheme = url.partition("://")[0]
    if scheme == "filesystem":
        directory = url.removeprefix("filesystem://")
        return "filesystem://" + str(
            Path(directory).resolve() if directory else default_broker_dir(database)
        )
    if scheme not in ("redis", "rediss", "memory"):
        raise ValueError(
            f"unsupported broker URL {url!r}: use redis://HOST:PORT/DB or filesystem://DIR"
        )
    return url


def _filesystem_options(directory: Path) -> dict[str, Any]:
    queue = directory / "queue"
    control = directory / "control"
    for folder in (queue, control):
        folder.mkdir(parents=True, exist_ok=True)
    return {
        "data_folder_in": str(queue),
        "data_folder_out": str(queue),
        "control_folder": str(control),
        "store_processed": False,
        "polling_interval": FILESYSTEM_POLLING_SECONDS,
    }


def make_app(
    url: str | None = None, config: Config | None = None, database: str | None = None
) -> Celery:
    """A Celery app on the broker (see :func:`resolve_broker_url`; the default one is the
    ``database``'s), configured for the arena; it registers no task (``workers.app`` does)."""
    return _app(url, database, (config or Config.from_env()).match_time_limit)


def make_sender(url: str | None = None, database: str | None = None) -> Celery:
    """:func:`make_app` for a process that only sends, made without loading the service
    and the store (:mod:`arena.service.matches`, SQLAlchemy's ORM and the arena's tables):
    ``arena compare --remote`` sends its start with it while it loads them. The settings only
    a consumer reads (the time limits of tasks, Redis's visibility timeout) are left out:
    what it sends is the same."""
    return _app(url, database, None)


def _app(url: str | None, database: str | None, time_limit: float | None) -> Celery:
    url = resolve_broker_url(url, database)
    app = Celery("arena", set_as_current=False)
    options: dict[str, Any] = {}
    broker = url
    transport = None
    if url.startswith("filesystem://"):
        options = _filesystem_options(Path(url.removeprefix("filesystem://")))
        # "localhost": the transport's own default host, named so kombu does not warn
        # "No hostname was supplied" at every connection.
        broker = "filesystem://localhost/"
        transport = f"{__name__}:FilesystemTransport"  # kombu takes no class in the URL
    elif url.startswith(("redis://", "rediss://")):
        # the queues in the order task_queues lists them: checks first
        options = {"queue_order_strategy": "priority"}
        if time_limit is not None:
            options["visibility_timeout"] = max(3600.0, 2 * time_limit)
    app.conf.update(
        broker_url=broker,
        broker_transport=transport,
        broker_transport_options=options,
        broker_connection_retry_on_startup=True,
        broker_connection_max_retries=None,  # keep trying while the broker restarts
        task_default_queue=QUEUE,
        task_queues=tuple(Queue(name) for name in ALL_QUEUES),  # -Q picks some
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        task_ignore_result=True,
        task_serializer="json",
        accept_content=["json"],
        worker_prefetch_multiplier=1,
        worker_hijack_root_logger=False,
        worker_cancel_long_running_tasks_on_connection_loss=False,
    )
    if time_limit is not None:
        app.conf.update(task_time_limit=time_limit, task_soft_time_limit=max(1.0, time_limit - 30))
    return app


@contextmanager
def _without_pygments() -> Iterator[None]:
    """Celery's command module, imported inside, finds no pygments (and takes its own
    fallback: ``celery inspect``'s JSON uncoloured): at import it builds pygments' Python
    lexer and 256-colour formatter, ~0.085 of the 0.09 CPU s of importing Celery's worker
    command, for output a worker never prints. pygments can be imported as usual after
    (arena.service.similarity tokenizes with it); one imported before is left alone."""
    if "pygments" in sys.modules:
        yield
        return
    sys.modules["pygments"] = None  # type: ignore[assignment]  # (the import system's "absent")
    try:
        yield
    finally:
        if sys.modules.get("pygments", 0) is None:
            del sys.modules["pygments"]


def run_celery(args: Sequence[str]) -> None:
    """Run Celery's own command line, ``celery ARGS``, in this process, and exit with its
    status (``arena worker``: exec'ing ``python -m celery`` would start a second interpreter
    and import again what the command's checks imported, the service, SQLAlchemy and the
    statistics: a third of a worker's start, 0.9 of 2.5 s of CPU).

    ``[--quiet] -A APP worker OPTIONS`` runs Celery's worker command alone, given the app as
    Celery's root command gives it: the root command imports every command of Celery's
    (``celery shell``'s and ``celery amqp``'s REPL: prompt_toolkit, pygments), ~0.15 CPU s
    of each worker's start that a worker never uses."""
    argv = list(args)
    quiet = argv[:1] == ["--quiet"]
    match argv[1:] if quiet else argv:
        case ["-A", app, "worker", *options]:
            from celery.app.utils import find_app

            with _without_pygments():
                from celery.bin.base import CLIContext
                from celery.bin.worker import worker

            context = CLIContext(app=find_app(app), no_color=False, workdir=None, quiet=quiet)
            worker.main(options, prog_name="celery worker", obj=context)
        case _:
            from celery.bin.celery import celery

            celery.main(argv, prog_name="celery")


# --- the process's broker -------------------------------------------------------------------

#: The broker of this process (:func:`configure`, :func:`install`).
_configured: Celery | None = None
#: What :func:`configure_lazily` was given, until the first send makes the broker.
_deferred: tuple[str | None, Config | None, str | None] | None = None
#: A broker for the current thread or context only (:func:`using`), before the process's.
_context: ContextVar[Celery | None] = ContextVar("arena_broker", default=None)


def configure(
    url: str | None = None, config: Config | None = None, database: str | None = None
) -> Celery:
    """Make the broker every send of this process goes through (:func:`make_app` of these
    arguments) and return it: called once at start, by the web's ``create_app``, the
    workers' app and each command of the CLI that sends work."""
    app = make_app(url, config, database)
    install(app)
    return app


def configure_lazily(
    url: str | None = None, config: Config | None = None, database: str | None = None
) -> None:
    """:func:`configure`, the broker made at the first send (the web's ``create_app``: an
    app that never sends, a test's, makes none, nor the filesystem broker's directory)."""
    global _deferred
    install(None)
    _deferred = (url, config, database)


def install(app: Celery | None) -> Celery | None:
    """Make ``app`` the broker of this process (None: none); return the one it replaces
    (tests install one of their own and put the previous one back)."""
    global _configured, _deferred
    previous, _configured, _deferred = _configured, app, None
    return previous


@contextmanager
def using(app: Celery) -> Iterator[Celery]:
    """Send through ``app`` in this thread (or context) while the block runs, whatever the
    process's broker is (a worker's sweeper thread has a client of its own)."""
    token = _context.set(app)
    try:
        yield app
    finally:
        _context.reset(token)


def current() -> Celery:
    """The broker sends go through: this context's (:func:`using`), else the process's.

    Raises:
        RuntimeError: no broker was configured (a bug: the application's start calls
            :func:`configure`).
        ValueError: a broker configured lazily has a URL Celery cannot use.
    """
    app = _context.get() or _configured
    if app is None and _deferred is not None:
        app = make_app(*_deferred)
        install(app)
    if app is None:
        raise RuntimeError(
            "no broker is configured: the application calls arena.service.broker.configure() "
            "at start"
        )
    return app


def location(app: Celery | None = None) -> str:
    """Where ``app`` (the process's broker by default) is, for messages: its URL, or the
    filesystem transport's directory."""
    app = app or current()
    where = str(app.conf.broker_url)
    if where.startswith("filesystem"):
        where = f"filesystem://{app.conf.broker_transport_options.get('data_folder_in', '')}"
    return where


def send_matches(app: Celery, match_ids: Sequence[int], queue: str = QUEUE) -> None:
    """Send a ``play_match`` task for each match to ``queue`` (its lane's: see
    :data:`LANE_QUEUES`), over one connection. A task is a token of its match's lane: the
    worker plays that lane's next match (:func:`arena.service.matches.play_next`)."""
    if not match_ids:
        return
    with app.producer_or_acquire() as producer:
        for match_id in match_ids:
            app.send_task(PLAY_MATCH, args=(match_id,), queue=queue, producer=producer)


def send_uploads(app: Celery, upload_ids: Sequence[int]) -> None:
    """Send an ``arena.check_upload`` task for each upload, over one connection."""
    if not upload_ids:
        return
    with app.producer_or_acquire() as producer:
        for upload_id in upload_ids:
            app.send_task(CHECK_UPLOAD, args=(upload_id,), queue=CHECK_QUEUE, producer=producer)


def send_branches(app: Celery, branch_ids: Sequence[int]) -> None:
    """Send a ``run_branch`` task for each branch (the interactive queue), over one
    connection."""
    if not branch_ids:
        return
    with app.producer_or_acquire() as producer:
        for branch_id in branch_ids:
            app.send_task(RUN_BRANCH, args=(branch_id,), queue=INTERACTIVE_QUEUE, producer=producer)


def send_compare_start(app: Celery, request: Mapping[str, Any], expires: float) -> None:
    """Send an ``arena.start_compare`` task with ``request`` (a
    :class:`arena.service.compare_start.CompareRequest`'s payload) to the interactive queue,
    where compares' matches go, to expire ``expires`` seconds from now (a worker that takes
    it later drops it). On a producer of its own, as the other sends: Celery's retry policy
    then gives up on an unreachable broker within a second (kombu's connection on its own
    retries for six).

    Raises:
        BROKER_ERRORS: the broker cannot be reached.
    """
    with app.producer_or_acquire() as producer:
        app.send_task(
            START_COMPARE,
            args=(dict(request),),
            queue=INTERACTIVE_QUEUE,
            producer=producer,
            expires=expires,
        )


#: The queue of a compare's start's replies: :data:`REPLY_PREFIX` and the start's token.
REPLY_PREFIX = "arena-reply-"
#: A reply queue not written to for this long is deleted with what it holds (Redis, where a
#: command that died before it read its replies would otherwise leave them for ever).
REPLY_EXPIRES_SECONDS = 120.0


def reply_queue(token: str) -> str:
    """The queue of the replies to the compare start ``token``."""
    return REPLY_PREFIX + token


def send_reply(app: Celery, token: str, reply: Mapping[str, Any]) -> None:
    """Put ``reply`` (a JSON object) on the queue of the replies to the compare start
    ``token`` (:func:`reply_queue`), for its command to read (:func:`read_replies`): sent on
    the default exchange, by the queue's name (no binding is stored for it), and on Redis
    the queue expires :data:`REPLY_EXPIRES_SECONDS` after its last reply.

    Raises:
        BROKER_ERRORS: the broker cannot be reached.
    """
    queue = Queue(reply_queue(token), expires=REPLY_EXPIRES_SECONDS)
    with app.producer_or_acquire() as producer:
        producer.publish(
            dict(reply),
            exchange="",
            routing_key=queue.name,
            serializer="json",
            declare=[queue],
            retry=True,
            retry_policy={"max_retries": 2, "interval_start": 0.1, "interval_step": 0.2},
        )


def read_replies(channel: Any, token: str, most: int = 100) -> list[dict[str, Any]]:
    """The replies to the compare start ``token`` waiting on the broker (taken), oldest
    first, at most ``most`` (a flood does not hold its reader), read on ``channel`` (a
    connection's, kept by the reader between reads); a message that is not a JSON object
    (anything someone put on the queue) is taken and dropped.

    Raises:
        BROKER_ERRORS: the broker cannot be reached.
    """
    replies: list[dict[str, Any]] = []
    for _ in range(most):
        try:
            message = channel.basic_get(reply_queue(token), no_ack=True)
            if message is None:
                break
            reply = message.decode()
        except BROKER_ERRORS:
            raise
        except Exception:  # (no kombu message, or not JSON: taken, and dropped)
            continue
        if isinstance(reply, dict):
            replies.append(reply)
    return replies


def expire_replies(app: Celery, older_than: float = REPLY_EXPIRES_SECONDS) -> int:
    """Delete the replies to compare starts that waited over ``older_than`` seconds on the
    filesystem broker (whose queues never expire: those of a command killed while it
    followed its compare; Redis expires them itself); return how many (the workers'
    sweep)."""
    folder = app.conf.broker_transport_options.get("data_folder_in")
    if not str(app.conf.broker_url).startswith("filesystem") or not folder:
        return 0
    deadline, removed = time.time() - older_than, 0
    with os.scandir(folder) as entries:
        for entry in entries:
            if f".{REPLY_PREFIX}" not in entry.name:
                continue
            try:
                if entry.stat().st_mtime < deadline:
                    os.remove(entry.path)
                    removed += 1
            except OSError:  # (read or removed meanwhile)
                continue
    return removed


def send_table(app: Celery, table_id: int) -> None:
    """Send an ``arena.play_table`` task for the table (the tables' queue)."""
    app.send_task(PLAY_TABLE, args=(table_id,), queue=TABLES_QUEUE)


def queue_length(app: Celery | None = None) -> int:
    """How many tasks wait in the queues of ``app`` (the process's broker by default), not
    counting those workers have taken.

    Raises:
        OSError or kombu's OperationalError: the broker cannot be reached.
    """
    return sum(queue_lengths(app).values())


def queue_lengths(app: Celery | None = None) -> dict[str, int]:
    """How many tasks wait in each queue of ``app`` (the process's broker by default), not
    counting those workers have taken.

    Raises:
        OSError or kombu's OperationalError: the broker cannot be reached.
    """
    with (app or current()).connection_for_write() as connection:
        try:
            channel: Any = connection.default_channel
            return {
                name: int(channel.queue_declare(name, passive=False, durable=True).message_count)
                for name in ALL_QUEUES
            }
        except connection.connection_errors as exc:  # (its transport's own: a Redis that
            # goes away mid-call raises redis-py's, which is neither an OSError nor kombu's)
            raise OperationalError(str(exc)) from exc
