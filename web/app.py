"""The Flask application factory: a placeholder until the dashboard lands.

Two routes: ``/healthz`` (the deployment's health check: the database answers ``SELECT 1``)
and ``/`` (a page listing the tournaments). The :class:`~arena.store.db.Store` is created
once per app and kept in ``app.extensions["arena_store"]``.
"""

from __future__ import annotations

import logging

from flask import Flask, current_app, render_template_string
from sqlalchemy import select, text
from sqlalchemy.exc import SQLAlchemyError

from arena.store.db import Store, connect, resolve_url
from arena.store.models import Tournament

__all__ = ["STORE_KEY", "create_app", "get_store"]

logger = logging.getLogger(__name__)

#: The key of the app's :class:`Store` in ``app.extensions``.
STORE_KEY = "arena_store"

# Jinja autoescapes render_template_string output, so tournament names are HTML-escaped.
INDEX_TEMPLATE = """<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Domino Arena</title></head>
<body>
<h1>Domino Arena</h1>
<p>The dashboard is coming soon.</p>
<h2>Tournaments</h2>
{% if tournaments %}
<table>
<thead><tr><th>Name</th><th>Status</th></tr></thead>
<tbody>
{% for name, status in tournaments %}
<tr><td>{{ name }}</td><td>{{ status }}</td></tr>
{% endfor %}
</tbody>
</table>
{% else %}
<p>No tournaments yet.</p>
{% endif %}
</body>
</html>
"""


def create_app(database_url: str | None = None) -> Flask:
    """Return the web application on ``database_url`` (else ``$ARENA_DATABASE_URL``, else
    ``sqlite:///arena.db``). Nothing connects until a request needs the database."""
    app = Flask(__name__)
    url = resolve_url(database_url)
    app.config["DATABASE_URL"] = url
    app.extensions[STORE_KEY] = connect(url)
    app.add_url_rule("/healthz", "healthz", healthz)
    app.add_url_rule("/", "index", index)
    return app


def get_store() -> Store:
    """The current app's :class:`Store`."""
    store: Store = current_app.extensions[STORE_KEY]
    return store


def healthz() -> tuple[dict[str, str], int]:
    """``{"status": "ok", "database": "ok"}`` (200) when the database answers ``SELECT 1``,
    else ``{"status": "error", "database": <the error>}`` (503)."""
    try:
        with get_store().read() as session:
            session.execute(text("SELECT 1"))
    except SQLAlchemyError as error:
        cause = getattr(error, "orig", None) or error
        message = " ".join(str(cause).split())
        logger.warning("health check: database unreachable: %s", message)
        return {"status": "error", "database": message}, 503
    return {"status": "ok", "database": "ok"}, 200


def index() -> str:
    """The placeholder home page: every tournament's name and status, by name."""
    with get_store().read() as session:
        rows = session.execute(
            select(Tournament.name, Tournament.status).order_by(Tournament.name)
        ).all()
    return render_template_string(INDEX_TEMPLATE, tournaments=[tuple(row) for row in rows])
