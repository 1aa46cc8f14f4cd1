"""arena.store on real databases: SQLite (a temporary file) and PostgreSQL (a throwaway
server started once per test session from the PostgreSQL binaries on this machine)."""

from __future__ import annotations

import contextlib
import glob
import multiprocessing
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from sqlalchemy import func, inspect, select, text
from sqlalchemy.exc import IntegrityError, OperationalError

import arena.cli_store  # noqa: F401  (registers `arena db` and `arena bots`)
from arena.cli import cli
from arena.rules import PRESETS
from arena.store.db import URL_ENV, Store, connect, resolve_url, upgrade
from arena.store.models import Base, GameRecord, Match, Tournament, User

BOTS = Path(__file__).parent / "bots"
BACKENDS = ["sqlite", "postgresql"]


# --- a throwaway PostgreSQL server --------------------------------------------------------


def _as_postgres(args: list[str]) -> list[str]:
    """Run ``args`` as the ``postgres`` OS user when we are root (initdb refuses root)."""
    return ["runuser", "-u", "postgres", "--", *args] if os.geteuid() == 0 else args


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """A PostgreSQL server for the whole session: its URL without a database name."""
    with running_postgres() as server:
        yield server


@contextmanager
def running_postgres() -> Iterator[str]:
    """Start PostgreSQL in a temporary directory; yield its URL without a database name;
    stop it (by its pid) and delete the directory at the end."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if not found and shutil.which("initdb") is None:
        pytest.fail(
            "the PostgreSQL tests need the PostgreSQL server binaries (initdb, pg_ctl): "
            "install them with 'apt-get install postgresql'"
        )
    bindir = Path(found[-1]).parent if found else Path(str(shutil.which("initdb"))).parent
    root = Path(tempfile.mkdtemp(prefix="arena-pg-"))
    if os.geteuid() == 0:
        owner = pwd.getpwnam("postgres")
        os.chown(root, owner.pw_uid, owner.pw_gid)
    data, log, port = root / "data", root / "server.log", _free_port()
    initdb = ["-U", "postgres", "-A", "trust", "--no-sync", "--no-instructions", "-E", "UTF8"]
    subprocess.run(
        _as_postgres([str(bindir / "initdb"), "-D", str(data), *initdb]),
        check=True,
        capture_output=True,
    )
    options = f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -c fsync=off"
    # pg_ctl daemonizes the server with its output in a file, so no pipe is left open.
    start = ["start", "-w", "-D", str(data), "-l", str(log), "-o", options]
    subprocess.run(_as_postgres([str(bindir / "pg_ctl"), *start]), check=True, capture_output=True)
    pid = int((data / "postmaster.pid").read_text().split()[0])
    try:
        yield f"postgresql://postgres@127.0.0.1:{port}"
    finally:
        _stop(pid, data / "postmaster.pid")
        shutil.rmtree(root, ignore_errors=True)


def _stop(pid: int, pid_file: Path) -> None:
    """Stop the server: a "fast" shutdown (SIGINT), done when it removes its pid file (it
    may linger as a zombie until init reaps it); SIGKILL after 5 s."""
    try:
        os.kill(pid, signal.SIGINT)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + 5
    while pid_file.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    if pid_file.exists():
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


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


# --- schema and migrations ----------------------------------------------------------------


def test_upgrade_creates_every_table_and_is_idempotent(url: str) -> None:
    upgrade(url)
    upgrade(url)
    store = connect(url)
    try:
        inspector = inspect(store.engine)
        assert set(inspector.get_table_names()) == set(Base.metadata.tables) | {"alembic_version"}
        indexes = {ix["name"] for ix in inspector.get_indexes("matches")}
        assert "ix_matches_status_lease" in indexes
        with store.read() as session:
            assert session.scalar(text("SELECT version_num FROM alembic_version")) == "0003"
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
            assert session.scalar(text("PRAGMA busy_timeout")) == 5000
            assert session.scalar(text("PRAGMA foreign_keys")) == 1
    finally:
        store.close()


# --- operations ---------------------------------------------------------------------------


def test_add_user_is_idempotent(store: Store) -> None:
    first = store.add_user("alice")
    assert store.add_user("alice").id == first.id
    assert store.add_user("bob").id != first.id


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
        records = session.scalars(select(GameRecord).order_by(GameRecord.game_index)).all()
    assert [(r.game_index, r.record) for r in records] == [
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


def test_sqlite_concurrent_read_then_write_never_locks(tmp_path: Path) -> None:
    db_url = f"sqlite:///{tmp_path / 'arena.db'}"
    upgrade(db_url)
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        locked = pool.starmap(_write_rows, [(db_url, "a"), (db_url, "b")])
    assert locked == [0, 0]
    store = connect(db_url)
    try:
        with store.read() as session:
            assert session.scalar(select(func.count()).select_from(User)) == 400
    finally:
        store.close()


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
    again = invoke(*add, "--unsandboxed")
    assert again.exit_code == 0, again.output
    assert "already stored as version 1" in again.output
    listed = invoke("bots", "list", "--url", db_url)
    assert listed.exit_code == 0 and "alice/first  v1" in listed.output


def test_cli_bots_add_rejects_a_failing_bot(tmp_path: Path) -> None:
    db_url = f"sqlite:///{tmp_path / 'arena.db'}"
    upgrade(db_url)
    bad = str(BOTS / "raise_in_move.py")
    result = invoke(
        "bots", "add", bad, "--name", "x", "--owner", "o", "--url", db_url, "--unsandboxed"
    )
    assert result.exit_code == 1
    assert "FAULT in block: crash" in result.output and "nothing stored" in result.output
    assert "no bots stored" in invoke("bots", "list", "--url", db_url).output
