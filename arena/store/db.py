"""Connecting to the database, migrating it, and the idempotent operations the service needs.

SQLite (the default, ``sqlite:///arena.db`` in the current directory) is opened in WAL mode
(synchronous NORMAL: no fsync at each commit) with a 5 s busy timeout and foreign keys on,
and every write transaction starts with ``BEGIN IMMEDIATE``: a transaction that reads and
then writes otherwise fails with "database is locked" when another process wrote in between
(docs/storage.md). PostgreSQL URLs (``postgresql://...``) use the psycopg 3 driver.
"""

from __future__ import annotations

import functools
import hashlib
import re
import sqlite3
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event, func, inspect, select, text, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection, make_url
from sqlalchemy.exc import ArgumentError, DBAPIError, OperationalError, SQLAlchemyError
from sqlalchemy.orm import Session
from sqlalchemy.pool import ConnectionPoolEntry

from arena.compete.names import check_name, name_key, taken_message
from arena.engine.rules import Rules
from arena.errors import DatabaseError, NameTaken
from arena.store.models import (
    Base,
    Bot,
    BotVersion,
    Branch,
    GameRecord,
    GameTable,
    RuleSet,
    Upload,
    User,
    utcnow,
)
from arena.store.urls import DEFAULT_URL as DEFAULT_URL
from arena.store.urls import URL_ENV as URL_ENV
from arena.store.urls import resolve_url as resolve_url
from arena.store.urls import sqlite_path as sqlite_path

#: Seconds a SQLite connection waits for another writer's lock before failing.
BUSY_TIMEOUT = 5.0
#: Seconds a write waits for its turn among its own process's writes on SQLite
#: (:meth:`Store.write`) before failing as a locked database does.
WRITE_TURN_SECONDS = 20.0

MIGRATIONS = Path(__file__).parent / "migrations"

#: What a store operation raises when the database fails (unreachable, locked too long,
#: a broken connection): applications catch these without importing SQLAlchemy.
DATABASE_ERRORS: tuple[type[Exception], ...] = (SQLAlchemyError,)
#: The narrower part of :data:`DATABASE_ERRORS` worth trying again later (the database
#: unreachable, locked too long, the connection broken): what a worker's task retries on.
TRANSIENT_DATABASE_ERRORS: tuple[type[Exception], ...] = (OperationalError,)


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
        # WAL's recommended level: a commit appends to the WAL without an fsync (the WAL is
        # synced at checkpoints); never corrupt, and durable across a crash of the process;
        # the last commits may roll back only if the machine loses power.
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute(f"PRAGMA busy_timeout={int(BUSY_TIMEOUT * 1000)}")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Connection) -> None:
        mode = connection.get_execution_options().get("sqlite_begin", "IMMEDIATE")
        connection.exec_driver_sql(f"BEGIN {mode}")

    return engine


def insert_rows(
    connection: Connection, model: type[Base], columns: Sequence[str], rows: list[tuple[Any, ...]]
) -> None:
    """Insert ``rows`` (a value for each of ``columns``, in their order) into ``model``'s
    table, one after the other, in one statement handed to the driver: an executemany on
    SQLite, a ``COPY`` on PostgreSQL (its rows streamed, not a statement executed a row).
    Each value goes through its column type's bind processor for the dialect (JSON
    serialized, a datetime as SQLite's text) and nothing else: no default is applied (give
    every column that has one), and no SQLAlchemy event sees the rows. SQLAlchemy's own
    executemany builds and processes a parameter dict a row, which costs more than the
    database's writing of them: a compare's 1,250 matches and 2,500 seats took 0.068 CPU s
    that way on SQLite, 0.048 this way; on PostgreSQL 0.13 CPU s and 0.42 s of wall
    clock, 0.04 and 0.25 this way (medians, load 4-5).

    Raises:
        sqlalchemy.exc.DBAPIError: as SQLAlchemy's execution raises the driver's errors
            (an ``IntegrityError`` for a row a constraint refuses, for one).
    """
    if not rows:
        return
    dialect = connection.dialect
    table = model.__table__
    processors = [
        (index, process)
        for index, name in enumerate(columns)
        if (process := table.c[name].type.dialect_impl(dialect).bind_processor(dialect))
    ]
    if processors:
        rows = [_processed(row, processors) for row in rows]
    quote = dialect.identifier_preparer.quote
    target = f"{quote(str(model.__tablename__))} ({', '.join(quote(name) for name in columns)})"
    if dialect.name == "postgresql":
        _copy(connection, f"COPY {target} FROM STDIN", rows)
    else:
        markers = ", ".join("?" for _ in columns)  # (sqlite3's paramstyle)
        connection.exec_driver_sql(f"INSERT INTO {target} VALUES ({markers})", rows)


def _copy(connection: Connection, statement: str, rows: list[tuple[Any, ...]]) -> None:
    """Run ``COPY ... FROM STDIN`` with ``rows`` on psycopg's connection, in the
    transaction of ``connection``; the driver's errors are raised as SQLAlchemy's.

    Raises:
        sqlalchemy.exc.DBAPIError: the driver refused the statement or a row.
    """
    dbapi = connection.dialect.loaded_dbapi
    driver = connection.connection.driver_connection
    assert driver is not None  # (a connection in a transaction is open)
    try:
        with driver.cursor() as cursor, cursor.copy(statement) as copy:
            for row in rows:
                copy.write_row(row)
    except dbapi.Error as exc:
        raise DBAPIError.instance(statement, None, exc, dbapi.Error) from exc


def _processed(
    row: tuple[Any, ...], processors: Sequence[tuple[int, Callable[[Any], Any]]]
) -> tuple[Any, ...]:
    """``row`` with the values at these indices processed."""
    values = list(row)
    for index, process in processors:
        values[index] = process(values[index])
    return tuple(values)


def upgrade(url: str | None = None, revision: str = "head") -> None:
    """Run the Alembic migrations on the database at ``url`` up to ``revision``
    (idempotent: an up-to-date database is left alone); a new SQLite file is created. The
    game records stored as JSON before revision 0024 stay JSON:
    :func:`arena.service.database.upgrade_database` converts them after this.

    Raises:
        DatabaseError: a bad URL, a path that is a directory or not an SQLite file, an
            unreachable server, a database holding another application's tables, or one
            at a schema newer than this code.
    """
    resolved = check_url(url)
    path = sqlite_path(resolved)
    if path is not None and not path.exists():
        if not path.parent.is_dir():
            raise DatabaseError(f"no directory {str(path.parent)!r} for the database {path}")
    else:
        store = _open(resolved)
        try:
            current, head = schema_revisions(store)
            _check_revision(store, resolved, current, head, upgrading=True)
        finally:
            store.close()
        if current == (head if revision == "head" else revision):
            return  # up to date: Alembic (~0.1 CPU s to import) has nothing to do
    from alembic import command
    from alembic.config import Config
    from alembic.util import CommandError

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    engine = make_engine(resolved)
    try:
        with engine.begin() as connection:
            config.attributes["connection"] = connection
            command.upgrade(config, revision)
    except (CommandError, DBAPIError) as exc:
        raise DatabaseError(
            f"cannot upgrade the database {where(resolved)}: {_reason(exc)}"
        ) from None
    finally:
        engine.dispose()


def schema_revisions(store: Store) -> tuple[str | None, str]:
    """The database's schema revision (None for a database never upgraded) and the newest
    this code knows (:func:`migration_revisions`), read without importing Alembic."""
    try:
        with store.engine.connect() as connection:
            if not inspect(connection).has_table("alembic_version"):
                return None, migration_revisions().head
            current = connection.scalar(text("SELECT version_num FROM alembic_version"))
    except DBAPIError as exc:
        url = store.engine.url.render_as_string(hide_password=False)
        raise DatabaseError(f"cannot read the database {where(url)}: {_reason(exc)}") from None
    return current, migration_revisions().head


@dataclass(frozen=True)
class Revisions:
    """The migrations' revision ids, and the head: the one no other revises."""

    known: frozenset[str]
    head: str


#: A migration's ``revision: str = "0032"`` and ``down_revision: str | None = "0031"``.
_REVISION_LINE = re.compile(r'^(down_revision|revision)\b[^=]*= *(?:"([^"]*)"|None)', re.M)


@functools.cache
def migration_revisions() -> Revisions:
    """The revision ids the migration scripts declare, read from their text: the schema
    check every command (and every worker) makes at start then loads no Alembic (its
    import, mako and pygments included, is ~0.1 CPU s a process); ``arena db upgrade``
    runs Alembic itself. tests/store/test_db.py holds these equal to Alembic's own."""
    revised: set[str] = set()
    known: set[str] = set()
    for script in sorted((MIGRATIONS / "versions").glob("*.py")):
        for name, value in _REVISION_LINE.findall(script.read_text(encoding="utf-8")):
            if value:
                (known if name == "revision" else revised).add(value)
    heads = known - revised
    if len(heads) != 1:
        raise DatabaseError(f"the migrations have {len(heads)} heads ({sorted(heads)}), not one")
    return Revisions(known=frozenset(known), head=heads.pop())


def where(url: str) -> str:
    """The database ``url`` names, for messages: a file's path, or the server and database
    (never the password)."""
    path = sqlite_path(url)
    if path is not None:
        return str(path)
    return make_url(url).render_as_string(hide_password=True).split("@")[-1]


def check_url(url: str | None = None) -> str:
    """:func:`resolve_url`, checked: a URL of SQLite or PostgreSQL.

    Raises:
        DatabaseError: not a URL, or another kind of database.
    """
    try:
        resolved = resolve_url(url)
        backend = make_url(resolved).get_backend_name()
    except (ArgumentError, ValueError):
        raise DatabaseError(
            f"{url!r} is not a database URL (sqlite:///FILE or postgresql://USER@HOST/NAME)"
        ) from None
    if backend not in ("sqlite", "postgresql"):
        raise DatabaseError(
            f"{where(resolved)}: the arena runs on SQLite or PostgreSQL, not {backend}"
        )
    return resolved


def open_store(url: str | None = None) -> Store:
    """A :class:`Store` on an existing arena database at the current schema: what every
    command but ``arena db upgrade`` opens. Creates nothing (no empty file is left behind).

    Raises:
        DatabaseError: the database is missing, unreachable, not a database, empty, holds
            another application's tables, or is at another schema; the message says the fix.
    """
    resolved = check_url(url)
    path = sqlite_path(resolved)
    if path is not None and not path.exists():
        raise DatabaseError(
            f"no database at {path}: create it with `arena db upgrade` "
            "(or name another with --url or ARENA_DATABASE_URL)"
        )
    store = _open(resolved)
    try:
        current, head = schema_revisions(store)
        _check_revision(store, resolved, current, head, upgrading=False)
    except BaseException:
        store.close()
        raise
    return store


def _open(resolved: str) -> Store:
    """A store on an existing database, its first connection made (DatabaseError if not)."""
    path = sqlite_path(resolved)
    if path is not None:
        if path.is_dir():
            raise DatabaseError(f"{path} is a directory, not a database file")
        with path.open("rb") as handle:
            header = handle.read(16)
        if header and header != b"SQLite format 3\x00":
            raise DatabaseError(f"{path} is not an SQLite database (name another with --url)")
    store = connect(resolved)
    try:
        with store.engine.connect():
            pass
    except DBAPIError as exc:
        store.close()
        raise DatabaseError(f"cannot open the database {where(resolved)}: {_reason(exc)}") from None
    return store


def _check_revision(
    store: Store, resolved: str, current: str | None, head: str, *, upgrading: bool
) -> None:
    """Raise DatabaseError unless the schema is this code's (or, ``upgrading``, older)."""
    name = where(resolved)
    if current is None:
        tables = sorted(inspect(store.engine).get_table_names())
        if tables:
            shown = ", ".join(tables[:5]) + (", ..." if len(tables) > 5 else "")
            raise DatabaseError(
                f"the database {name} holds other tables ({shown}) and no arena schema: "
                "give the arena a database of its own"
            )
        if not upgrading:
            raise DatabaseError(
                f"the database {name} is empty: create the schema with `arena db upgrade`"
            )
    elif current not in migration_revisions().known:
        raise DatabaseError(
            f"the database {name} is at schema {current}, newer than this arena knows "
            f"({head}): upgrade the arena"
        )
    elif current != head and not upgrading:
        raise DatabaseError(
            f"the database {name} is at schema {current}, this arena needs {head}: "
            "run `arena db upgrade`"
        )


def _reason(exc: BaseException) -> str:
    """The first line of a driver's error (``orig`` for SQLAlchemy's wrappers)."""
    text = str(getattr(exc, "orig", None) or exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


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
        #: SQLite: this process's writes take turns (:meth:`write`); PostgreSQL: None.
        self._turn = threading.RLock() if engine.dialect.name == "sqlite" else None
        #: The stored rule sets the record codec has read, by version (arena.store.records).
        self.rules_cache: dict[str, Mapping[str, Any]] = {}

    @property
    def dialect(self) -> str:
        """``sqlite`` or ``postgresql``."""
        return self.engine.dialect.name

    @contextmanager
    def write(self) -> Iterator[Session]:
        """A session in one transaction (``BEGIN IMMEDIATE`` on SQLite), committed at the end
        of the block unless it raises.

        On SQLite the process's writes take turns first, for at most
        :data:`WRITE_TURN_SECONDS` (then :class:`~sqlalchemy.exc.OperationalError`, "database
        is locked", as SQLite's own busy timeout raises). SQLite has one writer at a time,
        and a connection waiting for it polls, sleeping up to 100 ms between tries while
        others take it: a burst of requests in one process (thirty tables or joins at once)
        left some waiting past the 5 s busy timeout while no write was held over 0.26 s.
        Waiting here, they take the lock one after the other the moment it is free, and
        only one of them polls against other processes (docs/storage.md)."""
        with (
            self._taking_turn(),
            Session(self.engine, expire_on_commit=False) as session,
            session.begin(),
        ):
            yield session

    @contextmanager
    def _taking_turn(self) -> Iterator[None]:
        """This process's turn at the writes on SQLite (:meth:`write`); nothing to wait for
        on PostgreSQL."""
        if self._turn is None:
            yield
            return
        if not self._turn.acquire(timeout=WRITE_TURN_SECONDS):
            raise OperationalError(
                "BEGIN IMMEDIATE",
                None,
                sqlite3.OperationalError(
                    f"database is locked: this process's writes queued over "
                    f"{WRITE_TURN_SECONDS:g} s"
                ),
            )
        try:
            yield
        finally:
            self._turn.release()

    @contextmanager
    def read(self) -> Iterator[Session]:
        """A session for reading (a deferred transaction on SQLite: no write lock)."""
        with Session(self._reader, expire_on_commit=False) as session, session.begin():
            yield session

    @contextmanager
    def read_columns(self) -> Iterator[Connection]:
        """A connection for reading rows of columns in one transaction (deferred on SQLite,
        as :meth:`read`): for the reads the pages make most (each request's account, what
        the private classes hide, the lists' statements built once), which want no model
        instance. Without the ORM's session such a read costs less than half (0.23 -> 0.10
        CPU ms, a session's account on SQLite)."""
        with self._reader.begin() as connection:
            yield connection

    def close(self) -> None:
        """Close every pooled connection."""
        self.engine.dispose()

    def _insert(self, table: Any) -> Any:
        return (postgresql if self.dialect == "postgresql" else sqlite).insert(table)

    # --- operations ---------------------------------------------------------------------

    def add_user(self, name: str) -> User:
        """Return the user called ``name``, creating it if needed.

        Raises:
            ParseError: ``name`` is not a valid name (arena.compete.names).
        """
        name = check_name(name, "user name")
        with self.write() as session:
            return self._user(session, name)

    def add_bot_version(
        self,
        owner: str,
        name: str,
        source: str,
        report: dict[str, Any],
        runtime: str = "python",
    ) -> tuple[BotVersion, bool]:
        """Store ``source`` as the next version of ``owner``'s bot ``name`` (creating the user
        and the bot if needed), run under ``runtime``; return (version, True). If this bot
        already has a version with the same source, store nothing and return (that version,
        False): its runtime stays what it was.

        Safe under any concurrency: the bot's row is locked (``FOR UPDATE`` on PostgreSQL;
        SQLite's writers queue behind ``BEGIN IMMEDIATE``) before its next version number is
        taken, so concurrent uploads get consecutive versions, none lost.

        Raises:
            ParseError: ``owner`` or ``name`` is not a valid name (arena.compete.names).
            NameTaken: the owner has a bot whose name differs from ``name`` only in case.
        """
        owner = check_name(owner, "owner name")
        name = check_name(name, "bot name")
        digest = source_hash(source)
        key = name_key(name)
        with self.write() as session:
            user = self._user(session, owner)
            bot = session.scalar(  # by its exact name: one stored before names had keys too
                select(Bot).where(Bot.owner_id == user.id, Bot.name == name).with_for_update()
            )
            if bot is None:
                session.execute(
                    self._insert(Bot)
                    .values(name=name, name_key=key, owner_id=user.id, created=utcnow())
                    .on_conflict_do_nothing(index_elements=["owner_id", "name_key"])
                )
                bot = session.scalar(
                    select(Bot)
                    .where(Bot.owner_id == user.id, Bot.name_key == key)
                    .with_for_update()
                )
            assert bot is not None
            if bot.name != name:
                raise NameTaken(
                    taken_message(f"{user.name}'s bot", bot.name, name)
                    + f": send it as {bot.name!r} (a new version) or choose another name"
                )
            existing = session.scalar(
                select(BotVersion).where(BotVersion.bot_id == bot.id, BotVersion.sha256 == digest)
            )
            if existing is not None:
                return existing, False
            latest = session.scalar(
                select(func.max(BotVersion.version)).where(BotVersion.bot_id == bot.id)
            )
            version = BotVersion(
                bot_id=bot.id,
                version=(latest or 0) + 1,
                source=source,
                sha256=digest,
                report=report,
                runtime=runtime,
            )
            session.add(version)
            session.flush()
            return version, True

    def _user(self, session: Session, name: str) -> User:
        """The user called ``name``, else the one whose name has its key (``Alice`` is
        ``alice``: arena.compete.names.name_key), created if needed (safe against a
        concurrent insert)."""
        user = session.scalar(select(User).where(User.name == name))
        if user is not None:
            return user
        key = name_key(name)
        session.execute(
            self._insert(User)
            .values(name=name, name_key=key, created=utcnow())
            .on_conflict_do_nothing(index_elements=["name_key"])
        )
        user = session.scalar(select(User).where(User.name_key == key))
        assert user is not None
        return user

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
        was stored already: safe to call twice, e.g. from a task that ran twice. Stored as
        compact bytes (arena.store.records)."""
        from arena.store.records import encode_records

        (data,) = encode_records(self, [record])
        with self.write() as session:
            result = session.execute(
                self._insert(GameRecord)
                .values(match_id=match_id, game_index=index, data=data)
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


def renew_lease(
    store: Store,
    table: type[Upload] | type[Branch] | type[GameTable],
    row_id: int,
    status: str,
    *,
    lease_seconds: float,
) -> bool:
    """Extend the lease of the row ``row_id`` of ``table`` (an upload's check, a branch) to
    ``lease_seconds`` from now while its status is ``status``; return False once it is no
    longer (the work ended, or was taken back)."""
    with store.write() as session:
        renewed = session.execute(
            update(table)
            .where(table.id == row_id, table.status == status)
            .values(lease_expires=datetime.now(UTC) + timedelta(seconds=lease_seconds))
        )
        return bool(getattr(renewed, "rowcount", 0))


def ping(store: Store) -> None:
    """Return when the database answers ``SELECT 1``.

    Raises:
        One of :data:`DATABASE_ERRORS`: it does not answer.
    """
    with store.read() as session:
        session.execute(text("SELECT 1"))


def connect(url: str | None = None) -> Store:
    """Return a :class:`Store` on ``url`` (see :func:`resolve_url`); run :func:`upgrade` first
    on a new database."""
    return Store(make_engine(url))
