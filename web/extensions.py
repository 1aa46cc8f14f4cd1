"""The app's extensions, apart from the app: the store, the Celery client, CSRF protection
and the rate limiter. Blueprints import them from here, never from :mod:`web.app` (which
imports every blueprint): so no module of ``web/`` imports another in a circle."""

from __future__ import annotations

from flask import current_app
from flask_limiter import Limiter
from flask_limiter.util import get_remote_address
from flask_wtf.csrf import CSRFProtect

from arena.service.broker import Broker, make_app
from arena.store.db import Store

__all__ = ["CELERY_KEY", "STORE_KEY", "csrf", "get_celery", "get_store", "limiter"]

#: The key of the app's :class:`Store` in ``app.extensions``.
STORE_KEY = "arena_store"
#: The key of the app's Celery client in ``app.extensions`` (:func:`get_celery`).
CELERY_KEY = "arena_celery"

#: Every form (and htmx request) carries the session's CSRF token; the API is exempt.
csrf = CSRFProtect()
#: Rate limits: their values, keys and storage are in :mod:`web.limits` (which calls
#: ``init_app``); none by default.
limiter = Limiter(key_func=get_remote_address, default_limits=[])


def get_store() -> Store:
    """The current app's :class:`Store`."""
    store: Store = current_app.extensions[STORE_KEY]
    return store


def get_celery() -> Broker:
    """The current app's Celery client, to send tasks by name (the broker of
    ``ARENA_BROKER_URL``, or the one beside the database): made on first use."""
    app: Broker | None = current_app.extensions.get(CELERY_KEY)
    if app is None:
        app = make_app(None, None, current_app.config["DATABASE_URL"])
        current_app.extensions[CELERY_KEY] = app
    return app
