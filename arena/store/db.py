"""Connecting to the database, migrating it, and the idempotent operations the service needs.

SQLite (the default, ``sqlite:///arena.db`` in the current directory) is opened in WAL mode
with a 5 s busy timeout and foreign keys on, and every write transaction starts with
``BEGIN IMMEDIATE``: a transaction that reads and then writes otherwise fails with "database
is locked" when another process wrote in between (docs/storage.md). PostgreSQL URLs
(``postgresql://...``) use the psycopg 3 driver.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection, make_url
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session
from sqlalchemy.pool import ConnectionPoolEntry

from arena.engine.rules import Rules
from arena.store.models import Bot, BotVersion, GameRecord, RuleSet, User

#: The database used when neither a URL nor ``ARENA_DATABASE_URL`` is given.
DEFAULT_URL = "sqlite:///arena.db"
#: The environment variable naming the database URL.
URL_ENV = "ARENA_DATABASE_URL"
#: Seconds a SQLite connection waits for another writer's lock before failing.
BUSY_TIMEOUT = 5.0

MIGRATIONS = Path(__file__).parent / "migrations"


def resolve_url(url: str | None = None) -> str:
    """Return ``url``, else ``$ARENA_DATABASE_URL``, else :data:`DEFAULT_URL`; a plain
    ``postgresql://`` URL is given the psycopg 3 driver."""
    resolved = make_url(url or os.environ.get(URL_ENV) or DEFAULT_URL)
    if resolved.drivername in ("postgresql", "postgres"):
        resolved = resolved.set(drivername="postgresql+psycopg")
    return resolved.render_as_string(hide_password=False)


def make_engine(url: str | None = None) -> Engine:
    """Return an engine for ``url`` (see :func:`resolve_url`), with the SQLite settings."""
    resolved = resolve_url(url)
    if not resolved.startswith("sqlite"):
        return create_engine(resolved)
    engine = create_engine(resolved, connect_args={"timeout": BUSY_TIMEOUT})

    # SQLAlchemy's documented recipe for pysqlite: stop the driver from issuing its own
    # (deferred) BEGIN, and emit ours when SQLAlchemy begins a transaction.
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, record: ConnectionPoolEntry) -> None:
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute(f"PRAGMA busy_timeout={int(BUSY_TIMEOUT * 1000)}")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Connection) -> None:
        mode = connection.get_execution_options().get("sqlite_begin", "IMMEDIATE")
        connection.exec_driver_sql(f"BEGIN {mode}")

    return engine


def upgrade(url: str | None = None, revision: str = "head") -> None:
    """Run the Alembic migrations on the database at ``url`` up to ``revision``
    (idempotent: an up-to-date database is left alone)."""
    from alembic import command
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    engine = make_engine(url)
    try:
        with engine.begin() as connection:
            config.attributes["connection"] = connection
            command.upgrade(config, revision)
    finally:
        engine.dispose()


def schema_revisions(store: Store) -> tuple[str | None, str]:
    """The database's schema revision (None for a database never upgraded) and the newest
    this code knows."""
    from alembic.migration import MigrationContext
    from alembic.script import ScriptDirectory

    script = ScriptDirectory(str(MIGRATIONS))
    head = script.get_current_head()
    assert head is not None
    with store.engine.connect() as connection:
        current = MigrationContext.configure(connection).get_current_revision()
    return current, head


def as_utc(value: datetime) -> datetime:
    """``value`` as an aware UTC datetime: SQLite returns stored datetimes naive, and they
    are UTC already."""
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def source_hash(source: str) -> str:
    """The sha256 of a bot's source (UTF-8), in hex: equal sources, equal hash."""
    return hashlib.sha256(source.encode()).hexdigest()


@dataclass(frozen=True)
class BotListing:
    """One stored bot version, as ``arena bots list`` shows it."""

    owner: str
    bot: str
    version: int
    sha256: str
    created: datetime


class Store:
    """The database: sessions and the operations the service needs.

    Returned model instances are detached (their columns stay readable after the session).
    """

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._reader = engine.execution_options(sqlite_begin="DEFERRED")

    @property
    def dialect(self) -> str:
        """``sqlite`` or ``postgresql``."""
        return self.engine.dialect.name

    @contextmanager
    def write(self) -> Iterator[Session]:
        """A session in one transaction (``BEGIN IMMEDIATE`` on SQLite), committed at the end
        of the block unless it raises."""
        with Session(self.engine, expire_on_commit=False) as session, session.begin():
            yield session

    @contextmanager
    def read(self) -> Iterator[Session]:
        """A session for reading (a deferred transaction on SQLite: no write lock)."""
        with Session(self._reader, expire_on_commit=False) as session, session.begin():
            yield session

    def close(self) -> None:
        """Close every pooled connection."""
        self.engine.dispose()

    def _insert(self, table: Any) -> Any:
        return (postgresql if self.dialect == "postgresql" else sqlite).insert(table)

    # --- operations ---------------------------------------------------------------------

    def add_user(self, name: str) -> User:
        """Return the user called ``name``, creating it if needed."""
        with self.write() as session:
            return _get_or_create_user(session, name)

    def add_bot_version(
        self, owner: str, name: str, source: str, report: dict[str, Any]
    ) -> tuple[BotVersion, bool]:
        """Store ``source`` as the next version of ``owner``'s bot ``name`` (creating the user
        and the bot if needed); return (version, True). If this bot already has a version
        with the same source, store nothing and return (that version, False)."""
        digest = source_hash(source)
        for attempt in range(2):
            try:
                with self.write() as session:
                    user = _get_or_create_user(session, owner)
                    bot = session.scalar(
                        select(Bot).where(Bot.owner_id == user.id, Bot.name == name)
                    )
                    if bot is None:
                        bot = Bot(name=name, owner_id=user.id)
                        session.add(bot)
                        session.flush()
                    existing = session.scalar(
                        select(BotVersion).where(
                            BotVersion.bot_id == bot.id, BotVersion.sha256 == digest
                        )
                    )
                    if existing is not None:
                        return existing, False
                    latest = session.scalar(
                        select(BotVersion.version)
                        .where(BotVersion.bot_id == bot.id)
                        .order_by(BotVersion.version.desc())
                        .limit(1)
                    )
                    version = BotVersion(
                        bot_id=bot.id,
                        version=(latest or 0) + 1,
                        source=source,
                        sha256=digest,
                        report=report,
                    )
                    session.add(version)
                    session.flush()
                    return version, True
            except IntegrityError:
                # A concurrent upload (PostgreSQL) won the race: the retry finds its rows.
                if attempt:
                    raise
        raise AssertionError("unreachable")

    def ensure_rule_set(self, rules: Rules) -> RuleSet:
        """Return the stored rule set with ``rules.version``, storing it first if needed (the
        first name stored for a set of parameters is kept)."""
        with self.write() as session:
            session.execute(
                self._insert(RuleSet)
                .values(
                    name=rules.name,
                    version=rules.version,
                    params=rules.params(),
                    is_preset=rules.is_preset,
                )
                .on_conflict_do_nothing(index_elements=["version"])
            )
            stored = session.scalar(select(RuleSet).where(RuleSet.version == rules.version))
            assert stored is not None
            return stored

    def store_game_record(self, match_id: int, index: int, record: dict[str, Any]) -> bool:
        """Store game ``index`` of match ``match_id``; return False (and store nothing) if it
        was stored already: safe to call twice, e.g. from a task that ran twice."""
        with self.write() as session:
            result = session.execute(
                self._insert(GameRecord)
                .values(match_id=match_id, game_index=index, record=record)
                .on_conflict_do_nothing(index_elements=["match_id", "game_index"])
                .returning(GameRecord.id)
            )
            return result.first() is not None

    def list_bots(self) -> list[BotListing]:
        """Every stored bot version, by owner, bot and version."""
        with self.read() as session:
            rows = session.execute(
                select(
                    User.name, Bot.name, BotVersion.version, BotVersion.sha256, BotVersion.created
                )
                .join(Bot, Bot.owner_id == User.id)
                .join(BotVersion, BotVersion.bot_id == Bot.id)
                .order_by(User.name, Bot.name, BotVersion.version)
            ).all()
        return [BotListing(*row) for row in rows]


def _get_or_create_user(session: Session, name: str) -> User:
    user = session.scalar(select(User).where(User.name == name))
    if user is None:
        user = User(name=name)
        session.add(user)
        session.flush()
    return user


def connect(url: str | None = None) -> Store:
    """Return a :class:`Store` on ``url`` (see :func:`resolve_url`); run :func:`upgrade` first
    on a new database."""
    return Store(make_engine(url))
