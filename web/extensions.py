"""The app's extensions, apart from the app: the store, CSRF protection and the rate limiter
(the broker is the service's, configured once by ``create_app``). Blueprints import them
from here, never from :mod:`web.app` (which imports every blueprint): so no module of
``web/`` imports another in a circle."""

from __future__ import annotations

from flask import current_app
from flask_limiter import Limiter
from flask_limiter.util import get_remote_address
from flask_wtf.csrf import CSRFProtect

from arena.store.db import Store

__all__ = ["STORE_KEY", "csrf", "get_store", "limiter"]

#: The key of the app's :class:`Store` in ``app.extensions``.
STORE_KEY = "arena_store"

#: Every form (and htmx request) carries the session's CSRF token; the API is exempt.
csrf = CSRFProtect()
#: Rate limits: their values, keys and storage are in :mod:`web.limits` (which calls
#: ``init_app``); none by default.
limiter = Limiter(key_func=get_remote_address, default_limits=[])


def get_store() -> Store:
    """The current app's :class:`Store`."""
    store: Store = current_app.extensions[STORE_KEY]
    return store
