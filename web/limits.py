"""Rate limits and the bound on password hashing (docs/web.md "Rate limits and the hashing
bound").

What an address, an account or a token may make the server do, counted in a storage every
gunicorn process shares:

- **logins**: :data:`LOGIN_LIMIT` per address and account name (the name as typed, less
  spaces and case), and :data:`LOGIN_ADDRESS_LIMIT` per address whatever the name (made-up
  names are not fresh buckets);
- **sign-ups**: :data:`SIGNUP_LIMIT` per address;
- **password changes**: :data:`PASSWORD_CHANGE_LIMIT` per account;
- **all three forms' posts**: :data:`PASSWORD_FORM_LIMIT` per address, counted whatever
  the answer (see below);
- **the API**: ``ARENA_API_LIMIT`` per token's account once the token is verified, per
  address before (made-up tokens share their address's bucket).

The address limits let a class of 30 behind one address sign up and log in within a minute.
Past a limit: 429 with ``Retry-After`` and a sentence (JSON under ``/api/``). A request the
hashing bound refused (503, :mod:`arena.service.passwords`) is not counted, so a class that
presses again is not locked out; only :data:`PASSWORD_FORM_LIMIT` counts it.

The storage is ``ARENA_LIMITER_URL`` (``redis://...`` in a deployment); else the broker's
Redis when ``ARENA_BROKER_URL`` is one; else an SQLite file in ``ARENA_INSTANCE_PATH``
(which ``arena serve`` sets) that every gunicorn process shares (:class:`SQLiteStorage`,
``sqlite:///PATH``: the ``limits`` package has no storage that processes on one machine
share without a server); else ``memory://`` (tests).

Each limit is a setting (app config, else the environment, else the default here):
``ARENA_LOGIN_LIMIT``, ``ARENA_LOGIN_ADDRESS_LIMIT``, ``ARENA_SIGNUP_LIMIT``,
``ARENA_PASSWORD_CHANGE_LIMIT``, ``ARENA_PASSWORD_FORM_LIMIT``, ``ARENA_API_LIMIT``; the hashing
bound is ``ARENA_HASH_SLOTS`` (hashes at once).
"""

from __future__ import annotations

import functools
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from argon2 import PasswordHasher
from flask import Flask, Response, current_app, flash, g, request
from flask_limiter import RouteLimit
from flask_limiter.util import get_remote_address
from limits.errors import ConfigurationError
from limits.storage import Storage
from werkzeug.exceptions import ServiceUnavailable

from arena.compete.names import name_key
from arena.service.accounts import Account, token_account
from arena.service.broker import BROKER_ENV
from arena.service.passwords import GuardedHasher, HashGuard, ServerBusy, default_slots
from web.extensions import get_store, limiter

__all__ = [
    "API_LIMIT",
    "BUSY_FORMS",
    "FORM_REFUSAL",
    "LOGIN_ADDRESS_LIMIT",
    "LOGIN_LIMIT",
    "LOGIN_REFUSAL",
    "PASSWORD_CHANGE_LIMIT",
    "PASSWORD_FORM_LIMIT",
    "PASSWORD_REFUSAL",
    "SIGNUP_LIMIT",
    "SIGNUP_REFUSAL",
    "SQLiteStorage",
    "account_key",
    "address_key",
    "api_key",
    "api_limit",
    "bearer",
    "counted",
    "form_limit",
    "hashing",
    "init_limits",
    "login_name_key",
    "password_forms",
    "setting",
    "storage_uri",
]

logger = logging.getLogger(__name__)

F = TypeVar("F", bound=Callable[..., Any])

#: Login attempts per address and account name: a password guessed slowly, if at all.
LOGIN_LIMIT = "10 per minute"
#: Login attempts per address, whatever the names: a class of 30 (and its typos) in a
#: minute, not an endless stream of made-up names, each costing a hash.
LOGIN_ADDRESS_LIMIT = "60 per minute;600 per hour"
#: Sign-ups per address: a class of 30 in a minute; a few classes an hour.
SIGNUP_LIMIT = "40 per minute;200 per hour"
#: Password changes per account (each verifies, then hashes).
PASSWORD_CHANGE_LIMIT = "10 per minute"
#: Posts of the password forms (log in, sign up, change password) per address, whatever
#: their answer: the limits above do not count what the hashing bound refused (it cost
#: nothing), so this one ends a flood that would keep the bound busy for everyone else.
PASSWORD_FORM_LIMIT = "1500 per minute"
#: API requests per token's account (or, without a live token, per address).
API_LIMIT = "600 per minute"

#: The sentences a client over a limit reads.
LOGIN_REFUSAL = "Too many login attempts: try again in a minute."
SIGNUP_REFUSAL = "Too many sign-ups from your address: try again later."
PASSWORD_REFUSAL = "Too many password changes: try again in a minute."
FORM_REFUSAL = "Too many requests from your address: try again in a minute."


#: Where :func:`bearer` keeps what it found, in the request's environ.
_BEARER = "arena.bearer"
#: Where :func:`_busy` leaves the seconds its Retry-After says.
_RETRY_AFTER = "arena.retry_after"


def setting(name: str, default: str) -> Callable[[], str]:
    """A limit Flask-Limiter reads at each request: the app's config ``name``, else the
    environment's, else ``default``."""

    def value() -> str:
        configured = current_app.config.get(name) or os.environ.get(name) or default
        return str(configured)

    return value


#: The API's limit (one callable: each app adds it to the API's blueprint, and
#: Flask-Limiter counts one limit once however often it is added).
api_limit = setting("ARENA_API_LIMIT", API_LIMIT)


def counted(response: Response) -> bool:
    """Whether a request counts against its limits: all but those the hashing bound
    refused (503), which cost the server nothing."""
    return response.status_code != 503


def form_limit(name: str, default: str, key: Callable[[], str], refusal: str) -> RouteLimit:
    """A password form's limit on its posts, as a route decorator: the setting ``name``
    (else ``default``) per ``key``, counted unless the hashing bound refused the post,
    refused with ``refusal``."""
    return limiter.limit(
        setting(name, default),
        key_func=key,
        methods=["POST"],
        deduct_when=counted,
        error_message=refusal,
    )


# --- keys ------------------------------------------------------------------------------------


def address_key() -> str:
    """The client's address (as the server sees it: a class behind a NAT shares one)."""
    return f"address:{get_remote_address()}"


def login_name_key() -> str:
    """The address and the name typed, less what authentication ignores (surrounding
    spaces, Unicode compatibility forms, case): ``" bob"`` and ``"BOB"`` count as ``bob``."""
    name = name_key(request.form.get("name", "")[:200])[:100]  # as authentication compares
    return f"address:{get_remote_address()}|name:{name}"


def account_key() -> str:
    """The logged-in account (its address when none is)."""
    account: Account | None = g.get("account")
    return f"account:{account.id}" if account is not None else address_key()


def bearer() -> tuple[Account, list[str]] | None:
    """The account and scopes of the request's bearer token, if it is live (looked up once a
    request: the rate limit's key and the API's caller share it)."""
    # Kept in the request's environ, not in g: a test's app context spans requests.
    if _BEARER not in request.environ:
        kind, _, token = request.headers.get("Authorization", "").partition(" ")
        found = None
        if kind.lower() == "bearer":
            found = token_account(get_store(), token.strip())
        request.environ[_BEARER] = found
    known: tuple[Account, list[str]] | None = request.environ[_BEARER]
    return known


def api_key() -> str:
    """A verified token's account; else (no token, or a made-up one) the address."""
    found = bearer()
    return f"account:{found[0].id}" if found is not None else address_key()


#: The limit every password form shares per address (a decorator).
password_forms = limiter.shared_limit(
    setting("ARENA_PASSWORD_FORM_LIMIT", PASSWORD_FORM_LIMIT),
    scope="password-forms",
    key_func=address_key,
    methods=["POST"],
    error_message=FORM_REFUSAL,
)


# --- the app ---------------------------------------------------------------------------------


def init_limits(app: Flask) -> None:
    """Give ``app`` its rate limits (in the storage of :func:`storage_uri`, Retry-After on
    every 429) and bound its password hashing (503 with Retry-After beyond it)."""
    app.config.setdefault("RATELIMIT_STORAGE_URI", storage_uri())
    app.config.setdefault("RATELIMIT_HEADERS_ENABLED", True)  # Retry-After on every 429
    # Before the limiter's: after-request functions run last registered first, and the
    # limiter's would round a Retry-After it finds down to the second (1 -> 0).
    app.after_request(_busy_retry_after)
    limiter.init_app(app)
    hasher: PasswordHasher = app.config["ARENA_PASSWORD_HASHER"]
    if not isinstance(hasher, GuardedHasher):
        app.config["ARENA_PASSWORD_HASHER"] = GuardedHasher(hasher, hash_guard(app))
    app.register_error_handler(ServerBusy, _busy)


def hashing(view: F) -> F:
    """Declare a view whose posts hash a password: while no hashing slot is free, a post
    is refused (503) before the view reads the database, as it would be at its hash; a
    refusal costs then no more than a health check. (Below the rate-limit decorators:
    their checks run first, and count the refusal where they count it.)"""

    @functools.wraps(view)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        if request.method == "POST":
            hasher: GuardedHasher = current_app.config["ARENA_PASSWORD_HASHER"]
            hasher.guard.check()
        return view(*args, **kwargs)

    return wrapped  # type: ignore[return-value]


def storage_uri() -> str:
    """Where the counts are kept: ``ARENA_LIMITER_URL``; else the broker's Redis
    (``ARENA_BROKER_URL``); else, when ``ARENA_INSTANCE_PATH`` names the deployment's folder
    (``arena serve`` does), an SQLite file there; else ``memory://`` (each process counts
    alone: tests, or one gunicorn process)."""
    configured = os.environ.get("ARENA_LIMITER_URL")
    if configured:
        return configured
    broker = os.environ.get(BROKER_ENV, "")
    if broker.startswith(("redis://", "rediss://")):
        return broker
    folder = _instance_folder()
    return "memory://" if folder is None else f"sqlite:///{folder / 'rate-limits.sqlite'}"


def hash_guard(app: Flask) -> HashGuard:
    """The bound on concurrent hashes: ``ARENA_HASH_SLOTS`` (default: half the cores) at
    once in each process, and as many on the machine among the processes that share the
    folder ``ARENA_HASH_FOLDER`` (default: ``hash-slots`` in ``ARENA_INSTANCE_PATH``, if
    set; else no machine-wide bound)."""
    slots = int(app.config.get("ARENA_HASH_SLOTS") or os.environ.get("ARENA_HASH_SLOTS") or 0)
    named = app.config.get("ARENA_HASH_FOLDER") or os.environ.get("ARENA_HASH_FOLDER")
    instance = _instance_folder()
    folder = Path(named) if named else None if instance is None else instance / "hash-slots"
    return HashGuard(slots or default_slots(), folder=folder)


def _instance_folder() -> Path | None:
    """``ARENA_INSTANCE_PATH``, made if need be; None if unset or not writable."""
    named = os.environ.get("ARENA_INSTANCE_PATH")
    if not named:
        return None
    folder = Path(named)
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError:
        logger.warning("%s cannot be written: each process counts its rate limits alone", named)
        return None
    return folder if os.access(folder, os.W_OK) else None


#: ``app.extensions`` key: the forms a busy refusal shows again (endpoint -> a function
#: rendering the form as posted), so that what was typed is not lost.
BUSY_FORMS = "arena_busy_forms"


def _busy(error: ServerBusy) -> Response:
    """503 with Retry-After and the sentence: the form posted, shown again with what was
    typed (the forms in ``app.extensions[BUSY_FORMS]``), else the app's error page; JSON
    under /api/."""
    logger.info("refused %s %s: %s", request.method, request.path, error)
    request.environ[_RETRY_AFTER] = error.retry_after
    form = current_app.extensions.get(BUSY_FORMS, {}).get(request.endpoint)
    if form is not None and not request.path.startswith("/api/"):
        flash(str(error))
        answer = current_app.make_response(form())
        answer.status_code = 503
        return answer
    return current_app.make_response(
        current_app.handle_http_exception(ServiceUnavailable(str(error)))
    )


def _busy_retry_after(response: Response) -> Response:
    retry = request.environ.get(_RETRY_AFTER)
    if retry is not None:
        response.headers["Retry-After"] = str(retry)
    return response


# --- a storage on one machine ----------------------------------------------------------------


class SQLiteStorage(Storage):
    """Fixed-window counts in an SQLite file (``sqlite:///PATH``, a relative path;
    ``sqlite:////PATH``, an absolute one), which every process that opens it shares: the
    fixed-window strategy only (Flask-Limiter's default)."""

    STORAGE_SCHEME = ["sqlite"]  # noqa: RUF012 (limits registers the class by it)
    #: One in so many increments also deletes the expired counts.
    SWEEP_EVERY = 500

    def __init__(
        self, uri: str | None = None, wrap_exceptions: bool = False, **options: Any
    ) -> None:
        path = (uri or "").removeprefix("sqlite:///")
        if not path or path == uri:
            raise ConfigurationError(f"an SQLite rate-limit storage is sqlite:///PATH: {uri!r}")
        self.path = path
        self._local = threading.local()
        self._increments = 0
        super().__init__(uri, wrap_exceptions=wrap_exceptions, **options)
        self._connection().execute(
            "CREATE TABLE IF NOT EXISTS counts "
            "(key TEXT PRIMARY KEY, count INTEGER NOT NULL, expires REAL NOT NULL)"
        )

    @property
    def base_exceptions(self) -> type[Exception] | tuple[type[Exception], ...]:
        return sqlite3.Error

    def _connection(self) -> sqlite3.Connection:
        """This thread's connection (a new one after a fork)."""
        connection: sqlite3.Connection | None = getattr(self._local, "connection", None)
        if connection is None or self._local.pid != os.getpid():
            connection = sqlite3.connect(self.path, timeout=10.0, isolation_level=None)
            connection.execute("PRAGMA journal_mode=WAL")
            connection.execute("PRAGMA synchronous=OFF")  # counts need not survive a crash
            self._local.connection, self._local.pid = connection, os.getpid()
        return connection

    def incr(self, key: str, expiry: int, amount: int = 1) -> int:
        """Add ``amount`` to the count of ``key`` (a new window of ``expiry`` seconds if
        it has none or its window has ended); the count."""
        now = time.time()
        connection = self._connection()
        row = connection.execute(
            "INSERT INTO counts (key, count, expires) VALUES (?, ?, ?) "
            "ON CONFLICT (key) DO UPDATE SET "
            "count = CASE WHEN expires <= ? THEN excluded.count ELSE count + excluded.count END, "
            "expires = CASE WHEN expires <= ? THEN excluded.expires ELSE expires END "
            "RETURNING count",
            (key, amount, now + expiry, now, now),
        ).fetchone()
        self._increments += 1
        if self._increments % self.SWEEP_EVERY == 0:
            connection.execute("DELETE FROM counts WHERE expires <= ?", (now,))
        return int(row[0])

    def get(self, key: str) -> int:
        """The count of ``key`` in its current window (0 if none)."""
        row = (
            self._connection()
            .execute("SELECT count FROM counts WHERE key = ? AND expires > ?", (key, time.time()))
            .fetchone()
        )
        return 0 if row is None else int(row[0])

    def get_expiry(self, key: str) -> float:
        """When the window of ``key`` ends (now if it has none)."""
        now = time.time()
        row = (
            self._connection()
            .execute("SELECT expires FROM counts WHERE key = ? AND expires > ?", (key, now))
            .fetchone()
        )
        return now if row is None else float(row[0])

    def check(self) -> bool:
        """Whether the file answers."""
        try:
            self._connection().execute("SELECT 1").fetchone()
        except sqlite3.Error:
            return False
        return True

    def reset(self) -> int | None:
        """Forget every count; how many there were."""
        return self._connection().execute("DELETE FROM counts").rowcount

    def clear(self, key: str) -> None:
        """Forget the count of ``key``."""
        self._connection().execute("DELETE FROM counts WHERE key = ?", (key,))
