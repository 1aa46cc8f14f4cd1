"""Alembic environment: configured in code by :func:`arena.store.db.upgrade` (no alembic.ini).

``upgrade`` passes an open connection in ``config.attributes["connection"]``; without one
(e.g. ``alembic revision --autogenerate`` with a ``sqlalchemy.url`` option) an engine is made
from the URL with the same SQLite settings.
"""

from __future__ import annotations

from alembic import context
from sqlalchemy.engine import Connection

from arena.store.db import make_engine
from arena.store.models import Base


def run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=Base.metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


given = context.config.attributes.get("connection")
if given is not None:
    run(given)
else:
    engine = make_engine(context.config.get_main_option("sqlalchemy.url"))
    try:
        with engine.begin() as connection:
            run(connection)
    finally:
        engine.dispose()
