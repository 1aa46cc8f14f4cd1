"""arena.store on real databases: SQLite (a temporary file) and PostgreSQL (a throwaway
server started once per test session from the PostgreSQL binaries on this machine)."""

from __future__ import annotations

import multiprocessing.context
import os
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from sqlalchemy import func, inspect, select, text
from sqlalchemy.exc import IntegrityError, OperationalError

from arena.cli.main import cli
from arena.engine.rules import PRESETS
from arena.store.db import (
    MIGRATIONS,
    URL_ENV,
    Store,
    connect,
    migration_revisions,
    resolve_url,
    schema_revisions,
    upgrade,
)
from arena.store.models import Base, Match, Tournament, User
from arena.store.records import load_records
from tests.conftest import Databases
from tests.paths import ZOO

# SQL can differ here (the store's SQL and its migrations): on SQLite and PostgreSQL.
pytestmark = pytest.mark.backends("sqlite", "postgresql")

BOTS = ZOO


# --- schema and migrations ----------------------------------------------------------------


@pytest.mark.empty_database
def test_upgrade_creates_every_table_and_is_idempotent(url: str) -> None:
    upgrade(url)
    upgrade(url)
    store = connect(url)
    try:
        inspector = inspect(store.engine)
        assert set(inspector.get_table_names()) == set(Base.metadata.tables) | {"alembic_version"}
        indexes = {ix["name"] for ix in inspector.get_indexes("matches")}
        assert "ix_matches_status_lease" in indexes
        assert {"ix_matches_status_finished", "ix_matches_tournament_finished"} <= indexes
        with store.read() as session:
            assert session.scalar(text("SELECT version_num FROM alembic_version")) == "0033"
    finally:
        store.close()


def test_the_schema_check_knows_the_revisions_alembic_knows() -> None:
    """The revisions the schema check reads from the migrations' text (without importing
    Alembic) are Alembic's own: every revision, and the head."""
    from alembic.script import ScriptDirectory

    script = ScriptDirectory(str(MIGRATIONS))
    revisions = migration_revisions()
    assert revisions.known == {revision.revision for revision in script.walk_revisions()}
    assert revisions.head == script.get_current_head()


@pytest.mark.empty_database
def test_the_schema_check_reads_the_databases_revision(url: str) -> None:
    """Without Alembic, the check reads no revision from a database never upgraded, and the
    head from an upgraded one, on both databases."""
    head = migration_revisions().head
    store = connect(url)
    try:
        assert schema_revisions(store) == (None, head)
        upgrade(url)
        assert schema_revisions(store) == (head, head)
    finally:
        store.close()


def test_resolve_url() -> None:
    os.environ.pop(URL_ENV, None)
    assert resolve_url() == "sqlite:///arena.db"
    assert resolve_url("postgresql://u:p@h/db") == "postgresql+psycopg://u:p@h/db"
    os.environ[URL_ENV] = "sqlite:///elsewhere.db"
    try:
        assert resolve_url() == "sqlite:///elsewhere.db"
    finally:
        del os.environ[URL_ENV]


def test_sqlite_connection_settings(tmp_path: Path) -> None:
    store = connect(f"sqlite:///{tmp_path / 'a.db'}")
    try:
        with store.read() as session:
            assert session.scalar(text("PRAGMA journal_mode")) == "wal"
            assert session.scalar(text("PRAGMA synchronous")) == 1  # NORMAL: no fsync a commit
            assert session.scalar(text("PRAGMA busy_timeout")) == 5000
            assert session.scalar(text("PRAGMA foreign_keys")) == 1
    finally:
        store.close()


# --- operations ---------------------------------------------------------------------------


def test_add_user_is_idempotent(store: Store) -> None:
    first = store.add_user("alice")
    assert store.add_user("alice").id == first.id
    assert store.add_user("bob").id != first.id


def test_the_tests_stores_share_compiled_statements_not_data(
    store: Store, databases: Databases, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """tests/conftest.py's _share_compiled_statements: a store on another database of the
    same kind (SQLite; the same PostgreSQL server) runs on the dialect and the compiled
    statements of the test process's first, and reads its own database, not another's."""
    server = None if store.dialect == "sqlite" else request.getfixturevalue("postgres_server")
    (tmp_path / "other").mkdir()
    other_url, _ = databases.copy(server, tmp_path / "other", None)
    store.add_user("alice")  # the store has connected: its kind's statements are shared
    other = connect(other_url)
    try:
        assert other.engine.dialect is store.engine.dialect
        assert other.engine._compiled_cache is store.engine._compiled_cache
        other.add_user("bob")
        other.add_user("carol")
        for each, names in ((store, ["alice"]), (other, ["bob", "carol"])):
            with each.read() as session:
                assert list(session.scalars(select(User.name).order_by(User.name))) == names
    finally:
        other.close()
        if server is not None:
            databases.drop(server, other_url.rsplit("/", 1)[1])


def test_identical_uploads_dedupe(store: Store) -> None:
    v1, created = store.add_bot_version("alice", "greedy", "print(1)\n", {"ok": True})
    assert created and v1.version == 1 and len(v1.sha256) == 64
    again, created = store.add_bot_version("alice", "greedy", "print(1)\n", {"ok": True})
    assert not created and again.id == v1.id and again.version == 1
    v2, created = store.add_bot_version("alice", "greedy", "print(2)\n", {})
    assert created and v2.version == 2 and v2.bot_id == v1.bot_id
    other, created = store.add_bot_version("bob", "greedy", "print(1)\n", {})
    assert created and other.version == 1 and other.bot_id != v1.bot_id
    listed = [(b.owner, b.bot, b.version) for b in store.list_bots()]
    assert listed == [("alice", "greedy", 1), ("alice", "greedy", 2), ("bob", "greedy", 1)]
    assert v1.report == {"ok": True}


def test_ensure_rule_set_is_idempotent(store: Store) -> None:
    block = store.ensure_rule_set(PRESETS["block"])
    assert block.is_preset and block.version == PRESETS["block"].version
    assert block.params == PRESETS["block"].params()
    assert store.ensure_rule_set(PRESETS["block"]).id == block.id
    assert store.ensure_rule_set(PRESETS["draw"]).id != block.id


def _a_match(store: Store) -> int:
    rules = store.ensure_rule_set(PRESETS["block"])
    with store.write() as session:
        tournament = Tournament(
            name="t", format="round-robin", rule_set_id=rules.id, players=2,
            games_per_match=2, seed=2**62,
        )  # fmt: skip
        session.add(tournament)
        session.flush()
        match = Match(tournament_id=tournament.id, key="a-b", seats=[1, 2], games=2, seed=7)
        session.add(match)
        session.flush()
        return match.id


def test_game_records_stored_twice_stay_once(store: Store) -> None:
    match_id = _a_match(store)
    assert store.store_game_record(match_id, 0, {"moves": ["6-6"]})
    assert not store.store_game_record(match_id, 0, {"moves": ["other"]})
    assert store.store_game_record(match_id, 1, {"moves": []})
    with store.read() as session:
        records = list(load_records(store, session))
    assert [(index, record) for _, index, record in records] == [
        (0, {"moves": ["6-6"]}),
        (1, {"moves": []}),
    ]


def test_foreign_keys_are_enforced(store: Store) -> None:
    with pytest.raises(IntegrityError):
        store.store_game_record(12345, 0, {})


def _write_rows(db_url: str, tag: str, rows: int = 200) -> int:
    """Read then write ``rows`` times, each in its own transaction; return the lock errors."""
    store = connect(db_url)
    locked = 0
    try:
        for i in range(rows):
            try:
                with store.write() as session:
                    seen = session.scalar(select(func.count()).select_from(User))
                    session.add(User(name=f"{tag}-{i}-{seen}"))
            except OperationalError as error:
                if "locked" not in str(error):
                    raise
                locked += 1
    finally:
        store.close()
    return locked


def test_sqlite_concurrent_read_then_write_never_locks(
    tmp_path: Path, processes: multiprocessing.context.ForkServerContext
) -> None:
    db_url = f"sqlite:///{tmp_path / 'arena.db'}"
    upgrade(db_url)
    with processes.Pool(2) as pool:
        locked = pool.starmap(_write_rows, [(db_url, "a"), (db_url, "b")])
    assert locked == [0, 0]
    store = connect(db_url)
    try:
        with store.read() as session:
            assert session.scalar(select(func.count()).select_from(User)) == 400
    finally:
        store.close()


def test_a_process_s_writes_take_turns_on_sqlite_for_a_bounded_time(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On SQLite a process's writes wait for each other in the process (not on SQLite's
    polling busy wait), reads never do, and a write that waits past WRITE_TURN_SECONDS fails
    as a locked database does (what the pages and the workers' retries already handle).
    PostgreSQL has no such turn: two writes run at once."""
    import threading

    from arena.store import db

    monkeypatch.setattr(db, "WRITE_TURN_SECONDS", 0.2)
    held = threading.Event()
    done = threading.Event()

    def hold() -> None:
        with store.write():
            held.set()
            done.wait(10)

    thread = threading.Thread(target=hold)
    thread.start()
    try:
        assert held.wait(10)
        with store.read() as session:  # a read does not take a turn
            assert session.scalar(select(func.count()).select_from(User)) == 0
        if store.dialect == "sqlite":
            with pytest.raises(OperationalError, match=r"queued over 0\.2 s"), store.write():
                pass
        else:
            with store.write() as session:
                session.add(User(name="zoe"))
    finally:
        done.set()
        thread.join(10)
    with store.write() as session:  # the turn is free again
        session.add(User(name="ann"))


# --- the command line ---------------------------------------------------------------------


def invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def test_cli_db_upgrade_and_bots_add(tmp_path: Path) -> None:
    db_url = f"sqlite:///{tmp_path / 'arena.db'}"
    upgraded = invoke("db", "upgrade", "--url", db_url)
    assert upgraded.exit_code == 0, upgraded.output
    assert "schema up to date" in upgraded.output
    bot = str(BOTS / "first.py")
    add = ["bots", "add", bot, "--name", "first", "--owner", "alice", "--url", db_url]
    added = invoke(*add, "--unsandboxed")
    assert added.exit_code == 0, added.output
    assert "stored as version 1 (" in added.output and "already" not in added.output
    assert "block           ok" in added.output and "first: 14 games" in added.output
    again = invoke(*add, "--unsandboxed")
    assert again.exit_code == 0, again.output
    assert "already stored as version 1" in again.output
    listed = invoke("bots", "list", "--url", db_url)
    assert listed.exit_code == 0
    header = next(line for line in listed.output.splitlines() if "version" in line)
    assert "bot" in header and "source sha256" in header and "uploaded (UTC)" in header
    row = next(line for line in listed.output.splitlines() if "alice/first" in line)
    assert "v1" in row


def test_cli_bots_add_rejects_a_failing_bot(tmp_path: Path) -> None:
    db_url = f"sqlite:///{tmp_path / 'arena.db'}"
    upgrade(db_url)
    bad = str(BOTS / "raise_in_move.py")
    result = invoke(
        "bots", "add", bad, "--name", "x", "--owner", "o", "--url", db_url, "--unsandboxed"
    )
    assert result.exit_code == 1
    assert "FAULT: crash: ValueError: bot gave up on purpose" in result.output
    assert "game: block)" in result.output and "nothing stored" in result.output
    assert "no bots stored" in invoke("bots", "list", "--url", db_url).output


def test_the_migrations_build_exactly_the_models(store: Store) -> None:
    """Alembic's autogenerate finds nothing to add: the migrations and the models agree
    (columns, types, defaults, indexes), on both databases."""
    from alembic.autogenerate import compare_metadata
    from alembic.migration import MigrationContext

    with store.engine.connect() as connection:
        differences = compare_metadata(MigrationContext.configure(connection), Base.metadata)
    assert differences == []
