"""Database URLs: which database a process uses, without loading the store.

Here apart from :mod:`arena.store.db` (which re-exports them) so that a process that only
needs the URL (the serverless broker's directory is named after the database's:
:func:`arena.service.broker.default_broker_dir`) loads SQLAlchemy's URL parsing, not its
ORM and the arena's tables: ``arena compare --remote`` sends its start to the workers
before it loads those (a third of a second it would keep them waiting).
"""

from __future__ import annotations

import os
from pathlib import Path

from sqlalchemy.engine import make_url

__all__ = ["DEFAULT_URL", "URL_ENV", "resolve_url", "sqlite_path"]

#: The database used when neither a URL nor ``ARENA_DATABASE_URL`` is given.
DEFAULT_URL = "sqlite:///arena.db"
#: The environment variable naming the database URL.
URL_ENV = "ARENA_DATABASE_URL"


def resolve_url(url: str | None = None) -> str:
    """Return ``url``, else ``$ARENA_DATABASE_URL``, else :data:`DEFAULT_URL`; a plain
    ``postgresql://`` URL is given the psycopg 3 driver."""
    resolved = make_url(url or os.environ.get(URL_ENV) or DEFAULT_URL)
    if resolved.drivername in ("postgresql", "postgres"):
        resolved = resolved.set(drivername="postgresql+psycopg")
    return resolved.render_as_string(hide_password=False)


def sqlite_path(url: str) -> Path | None:
    """The file of a SQLite URL (None for PostgreSQL or an in-memory database)."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or parsed.database in (None, "", ":memory:"):
        return None
    return Path(parsed.database)
