"""The Flask application factory.

``create_app`` builds the app on a database (``$ARENA_DATABASE_URL`` by default): the pages
(:mod:`web.pages` and the other blueprints), the API (:mod:`web.api`), ``/healthz`` (the
deployment's health check: the database answers ``SELECT 1``), the security headers every
response carries, and one error handler (:func:`_error`): under ``/api/`` every error is
the API's JSON (:func:`web.api.api_error`), elsewhere an error page: a refused action
(:class:`~arena.errors.PermissionDenied`) is 403, or the login page for anonymous visitors,
:class:`~arena.errors.NotFound` is 404 (a record retention pruned,
:class:`~arena.errors.RecordPruned`, 410), a database that does not answer 503. ``<int:...>``
in every route is a database id (:mod:`web.routing`: a larger number is no route, 404).
The :class:`~arena.store.db.Store` is created once per app and kept in
``app.extensions["arena_store"]`` (:mod:`web.extensions`: the blueprints import it from
there, never from here); the broker the service sends through is configured once, here
(:func:`arena.service.broker.configure_lazily`: ``$ARENA_BROKER_URL``, or the one beside
the database, made at the first send).
"""

from __future__ import annotations

import functools
import gc
import hashlib
import logging
import os
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from flask import Flask, Response, current_app, render_template, request
from werkzeug.exceptions import HTTPException

import web.api_assignments  # its routes join the API's blueprint, as do these:
import web.api_classes
import web.api_competition_tools
import web.api_competitions
import web.api_reports
import web.api_rules
import web.api_tables  # noqa: F401
from arena.errors import NotFound, PermissionDenied, RecordPruned
from arena.service.broker import configure_lazily as configure_broker
from arena.store.db import DATABASE_ERRORS, connect, ping, resolve_url
from web.api import api_error, init_api
from web.assignments import assignments
from web.auth import init_auth, public, refusal
from web.bots import bots
from web.branches import branches
from web.classes import ROSTER_BYTES, classes
from web.compares import compares
from web.competition_tools import competition_tools
from web.competitions import competitions
from web.extensions import STORE_KEY, get_store
from web.forms import sentence, upload_token
from web.games import games
from web.joins import init_joins
from web.pages import pages
from web.routing import init_routing
from web.rules import rules
from web.similarity import similarity
from web.tables import tables
from web.tournaments import MAX_RULE_FILE_BYTES, tournaments
from web.watching import watching

__all__ = [
    "CONTENT_SECURITY_POLICY",
    "STORE_KEY",
    "create_app",
    "duration",
    "get_store",
    "when",
]

logger = logging.getLogger(__name__)

#: The largest request accepted (a bot upload with its form): larger ones get 413.
MAX_REQUEST_BYTES = 1024 * 1024

#: Allocations between two collections of the youngest generation (Python's default: 700).
YOUNG_OBJECTS = 10_000

#: How long a browser keeps a static file without asking again (a year): the pages link it
#: with its content's version in the address (``?v=``, :func:`_static_version`), so a
#: changed file is another address, fetched afresh. Without a version a static file is
#: asked again each time (a conditional request: 304 when unchanged), as Flask does.
STATIC_MAX_AGE = 365 * 24 * 3600

#: Scripts, styles and images from this server only: no inline script or style, no eval,
#: no frames, forms posting back here only (docs/web.md).
CONTENT_SECURITY_POLICY = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data:",
        "object-src 'none'",
        "base-uri 'self'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ]
)


def create_app(database_url: str | None = None, config: Mapping[str, Any] | None = None) -> Flask:
    """Return the web application on ``database_url`` (else ``$ARENA_DATABASE_URL``, else
    ``sqlite:///arena.db``), with ``config`` set first (tests: a cheap password hasher).
    Nothing connects until a request needs the database."""
    app = _App(__name__, instance_path=os.environ.get("ARENA_INSTANCE_PATH") or None)
    app.config["MAX_CONTENT_LENGTH"] = MAX_REQUEST_BYTES
    app.config.update(config or {})
    url = resolve_url(database_url)
    app.config["DATABASE_URL"] = url
    app.extensions[STORE_KEY] = connect(url)
    configure_broker(database=url)
    init_routing(app)  # before any route: every <int:...> is a database id
    app.add_url_rule("/healthz", "healthz", healthz)
    init_auth(app)
    init_api(app)
    app.register_blueprint(pages)
    app.register_blueprint(bots)
    app.register_blueprint(tournaments)
    app.register_blueprint(games)
    app.register_blueprint(compares)
    app.register_blueprint(branches)
    app.register_blueprint(competitions)
    app.register_blueprint(rules)
    app.register_blueprint(competition_tools)
    app.register_blueprint(classes)
    init_joins(app)  # after init_auth: its redirect reads the account loaded there
    app.register_blueprint(similarity)
    app.register_blueprint(tables)
    app.register_blueprint(assignments)
    app.register_blueprint(watching)
    app.url_defaults(_static_version)
    app.after_request(_security_headers)
    for handled in (HTTPException, PermissionDenied, NotFound, *DATABASE_ERRORS):
        app.register_error_handler(handled, _error)
    app.add_template_filter(when)
    app.add_template_global(upload_token)
    app.add_template_filter(duration)
    app.add_template_filter(ms)
    app.add_template_filter(poll)
    if not app.testing:
        # What is loaded by now (modules, classes, functions: most of the heap) lives as
        # long as the process: out of the collector's sight, so a full collection scans
        # only what requests keep; and a young generation big enough that a request's
        # temporaries (a decoded result) die before a collection promotes them. Measured:
        # the ~200 ms spikes every few requests were full collections (docs/web.md).
        gc.freeze()
        gc.set_threshold(YOUNG_OBJECTS, 10, 10)
    return app


class _App(Flask):
    """Flask, its static files kept by browsers for :data:`STATIC_MAX_AGE` when asked for
    by a versioned address (each page load of a visitor's then fetches no script, style or
    icon it already has: no request, no session or account looked up)."""

    def get_send_file_max_age(self, filename: str | None) -> int | None:
        if request.endpoint == "static" and request.args.get("v"):
            return STATIC_MAX_AGE
        return super().get_send_file_max_age(filename)


def _static_version(endpoint: str, values: dict[str, Any]) -> None:
    """``url_for("static", filename=...)`` gains ``v``: the first 12 hex digits of the
    file's SHA-256 (recomputed when the file's modification time or size changes)."""
    if endpoint != "static" or "filename" not in values or "v" in values:
        return
    folder = current_app.static_folder
    assert folder is not None
    path = os.path.join(folder, values["filename"])
    try:
        status = os.stat(path)
    except OSError:
        return  # no such file: its address as it was (a 404 when asked for)
    values["v"] = _content_version(path, status.st_mtime_ns, status.st_size)


@functools.lru_cache(maxsize=256)
def _content_version(path: str, mtime_ns: int, size: int) -> str:
    with open(path, "rb") as file:
        return hashlib.sha256(file.read()).hexdigest()[:12]


def when(value: datetime | None) -> str:
    """A moment as the pages show it: ``2026-11-24 07:20 UTC``."""
    if value is None:
        return ""
    return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


def ms(milliseconds: float) -> str:
    """A think time for people: ``3.2 ms``, ``1.25 s``; under 0.1 ms, ``<0.1 ms``."""
    if milliseconds >= 1000:
        return f"{milliseconds / 1000:.2f} s"
    if 0 < milliseconds < 0.1:
        return "<0.1 ms"
    return f"{milliseconds:.1f} ms"


def poll(seconds: float) -> str:
    """How often a live part of a page asks again, as htmx's ``every`` takes it: its own
    ``seconds``, or the app's ``ARENA_POLL_SECONDS`` where set (a browser test that waits
    for a page to change polls faster: it waits for what the page shows, not the period)."""
    configured = current_app.config.get("ARENA_POLL_SECONDS")
    return f"{configured or seconds}s"


def duration(seconds: float) -> str:
    """A time span as the pages show it: ``45 s``, ``3 min 20 s``, ``2 h 5 min``."""
    whole = round(seconds)
    if whole < 60:
        return f"{whole} s"
    if whole < 3600:
        return f"{whole // 60} min {whole % 60} s"
    return f"{whole // 3600} h {whole % 3600 // 60} min"


@public
def healthz() -> tuple[dict[str, str], int]:
    """``{"status": "ok", "database": "ok"}`` (200) when the database answers ``SELECT 1``,
    else ``{"status": "error", "database": <the error>}`` (503)."""
    try:
        ping(get_store())
    except DATABASE_ERRORS as error:
        message = _database_message(error)
        logger.warning("health check: database unreachable: %s", message)
        return {"status": "error", "database": message}, 503
    return {"status": "ok", "database": "ok"}, 200


def _database_message(error: Exception) -> str:
    cause = getattr(error, "orig", None) or error
    return " ".join(str(cause).split())


def _security_headers(response: Response) -> Response:
    response.headers["Content-Security-Policy"] = CONTENT_SECURITY_POLICY
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Referrer-Policy"] = "same-origin"
    response.headers["X-Frame-Options"] = "DENY"
    return response


def _error(error: Exception) -> Any:
    """Every error the app answers (an HTTP error, a refused action, a database that does
    not answer): in the API's JSON under /api/, else an error page (or the login page)."""
    if isinstance(error, DATABASE_ERRORS):
        logger.error("database error: %s", _database_message(error))
    if request.path.startswith("/api/"):
        return api_error(error)
    if isinstance(error, RecordPruned):  # retention deleted it: gone, and said so
        page = render_template(
            "error.html", code=410, title="Record pruned", message=sentence(str(error))
        )
        return page, 410
    if isinstance(error, PermissionDenied | NotFound):
        answer = refusal(error)
        return _page(answer) if isinstance(answer, HTTPException) else answer
    if isinstance(error, HTTPException):
        return _page(error)
    message = "The database did not answer. Try again in a moment."
    page = render_template("error.html", code=503, title="Service unavailable", message=message)
    return page, 503


def _page(error: HTTPException) -> tuple[str, int, list[tuple[str, str]]]:
    """The error page of ``error``, with its headers (a 405's ``Allow``)."""
    code = error.code or 500
    if code == 413:
        what = (
            f"a rule file is at most {MAX_RULE_FILE_BYTES // 1024} KiB"
            if request.path.startswith("/tournaments")
            else f"a roster file is at most {ROSTER_BYTES // 1024} KiB"
            if request.path.endswith("/roster")
            else "a bot is one Python file of at most 256 KiB"
        )
        error.description = (
            f"The form is larger than {MAX_REQUEST_BYTES // 1024} KiB: {what}. Go back to "
            "the form (your browser keeps what you entered) and choose a smaller file."
        )
    page = render_template("error.html", code=code, title=error.name, message=error.description)
    headers = [(k, v) for k, v in error.get_headers() if k.lower() != "content-type"]
    return page, code, headers
