"""Fixtures every test folder shares: databases on both backends (SQLite in a temporary
file, PostgreSQL on a throwaway server started once per test process)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import text

from arena.store.db import Store, connect, upgrade
from tests.servers import running_postgres

# The web app's session key in tests (else it would keep one in the clone's instance
# folder); tests/web/test_auth.py checks the generated one apart.
os.environ.setdefault("ARENA_SECRET_KEY", "a key for the tests only")

#: The database backends every storage test runs on (the ``url`` fixture's parameters).
BACKENDS = ["sqlite", "postgresql"]


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """A PostgreSQL server for the whole session: its URL without a database name."""
    with running_postgres() as server:
        yield server


_databases = iter(range(1, 1_000_000))


@pytest.fixture(params=BACKENDS)
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh, empty database on each backend."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'arena.db'}"
    server: str = request.getfixturevalue("postgres_server")
    name = f"arena_test_{os.getpid()}_{next(_databases)}"
    admin = connect(server + "/postgres")
    try:
        with admin.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            conn.execute(text(f'CREATE DATABASE "{name}"'))
    finally:
        admin.close()
    return f"{server}/{name}"


@pytest.fixture
def store(url: str) -> Iterator[Store]:
    upgrade(url)
    store = connect(url)
    yield store
    store.close()
