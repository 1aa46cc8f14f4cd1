"""Every command on a database it cannot use: one line naming the fix, exit 69, and no empty
``arena.db`` left behind (docs/storage.md "When the database cannot be used")."""

from __future__ import annotations

import contextlib
import shutil
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlalchemy import text

from arena.cli.common import UNAVAILABLE
from arena.cli.main import cli
from arena.store.db import connect, upgrade
from tests.paths import REFERENCE_BOTS


def _missing(tmp: Path) -> str:
    return f"sqlite:///{tmp / 'missing.db'}"


def _empty(tmp: Path) -> str:
    sqlite3.connect(tmp / "empty.db").close()
    return f"sqlite:///{tmp / 'empty.db'}"


def _foreign(tmp: Path) -> str:
    with sqlite3.connect(tmp / "cats.db") as db:
        db.execute("CREATE TABLE cats (name TEXT)")
    return f"sqlite:///{tmp / 'cats.db'}"


#: Where this module's built databases are kept, to be copied (:func:`_built`).
_TEMPLATES: dict[str, Path] = {}


@pytest.fixture(scope="module", autouse=True)
def _templates(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    _TEMPLATES["directory"] = tmp_path_factory.mktemp("database-templates")
    yield
    _TEMPLATES.clear()


def _built(tmp: Path, name: str, build: Callable[[str], None]) -> str:
    """A copy in ``tmp`` of the database ``build`` makes (made once a module: a migration
    from nothing is 0.1-0.15 CPU s, and 16 tests use one of two)."""
    template = _TEMPLATES["directory"] / name
    if template.name not in _TEMPLATES:
        build(f"sqlite:///{template}")
        with contextlib.closing(sqlite3.connect(template)) as connection:
            connection.execute("PRAGMA journal_mode=DELETE")  # one self-contained file
        _TEMPLATES[template.name] = template
    shutil.copyfile(template, tmp / name)
    return f"sqlite:///{tmp / name}"


def _at_revision(tmp: Path, revision: str) -> str:
    def build(url: str) -> None:
        upgrade(url)
        store = connect(url)
        try:
            with store.write() as session:
                update = text("UPDATE alembic_version SET version_num = :r")
                session.execute(update, {"r": revision})
        finally:
            store.close()

    return _built(tmp, f"at-{revision}.db", build)


def _older(tmp: Path) -> str:
    return _built(tmp, "older.db", lambda url: upgrade(url, "0002"))


def _directory(tmp: Path) -> str:
    (tmp / "a-directory").mkdir()
    return f"sqlite:///{tmp / 'a-directory'}"


def _text_file(tmp: Path) -> str:
    (tmp / "notes.txt").write_text("remember the milk\n")
    return f"sqlite:///{tmp / 'notes.txt'}"


#: Each bad database, and a word of the fix its message must give.
DATABASES: dict[str, tuple[Callable[[Path], str], str]] = {
    "missing": (_missing, "arena db upgrade"),
    "empty": (_empty, "arena db upgrade"),
    "foreign": (_foreign, "a database of its own"),
    "older schema": (_older, "arena db upgrade"),
    "future schema": (lambda tmp: _at_revision(tmp, "9999"), "upgrade the arena"),
    "unreachable server": (lambda tmp: "postgresql://arena@127.0.0.1:1/arena", "cannot open"),
    "not a URL": (lambda tmp: "no such thing", "not a database URL"),
    "another kind": (lambda tmp: "mysql://arena@localhost/arena", "SQLite or PostgreSQL"),
    "a directory": (_directory, "is a directory"),
    "a text file": (_text_file, "not an SQLite database"),
}

COMMANDS = {
    "bots list": ["bots", "list"],
    "bots add": ["bots", "add", str(REFERENCE_BOTS / "random.py"), "--name", "r", "--owner", "o"],
    "ratings": ["ratings", "--rules", "draw"],
    "tournament list": ["tournament", "list"],
    "tournament status": ["tournament", "status", "spring"],
    "tournament export": ["tournament", "export", "spring"],
    "workers": ["workers"],
}

#: What `arena db upgrade` makes of each: it creates a missing file and migrates an empty or
#: older database; the rest it refuses like the other commands.
UPGRADES = {"missing", "empty", "older schema"}


@pytest.mark.parametrize("database", DATABASES, ids=list(DATABASES))
@pytest.mark.parametrize("command", COMMANDS, ids=list(COMMANDS))
def test_a_database_that_cannot_be_used_is_one_line_and_exit_69(
    database: str, command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make, fix = DATABASES[database]
    url = make(tmp_path)
    monkeypatch.chdir(tmp_path)
    before = sorted(tmp_path.iterdir())
    result = CliRunner().invoke(cli, [*COMMANDS[command], "--url", url])
    assert result.exit_code == UNAVAILABLE, result.output
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("arena: error: "), result.stderr
    assert fix in lines[0], lines[0]
    assert result.stdout == ""
    assert sorted(tmp_path.iterdir()) == before, "a read-only command left a file behind"


@pytest.mark.parametrize("database", DATABASES, ids=list(DATABASES))
def test_db_upgrade_creates_migrates_or_refuses(database: str, tmp_path: Path) -> None:
    make, fix = DATABASES[database]
    url = make(tmp_path)
    result = CliRunner().invoke(cli, ["db", "upgrade", "--url", url])
    if database in UPGRADES:
        assert result.exit_code == 0, result.output
        assert "schema up to date" in result.stdout
        listed = CliRunner().invoke(cli, ["bots", "list", "--url", url])
        assert listed.exit_code == 0 and "no bots stored" in listed.stdout
    else:
        assert result.exit_code == UNAVAILABLE, result.output
        assert len(result.stderr.splitlines()) == 1 and fix in result.stderr, result.stderr


def test_the_default_database_is_not_created_by_a_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No --url, no ARENA_DATABASE_URL: `arena bots list` in an empty directory says how
    to create arena.db and does not create it."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ARENA_DATABASE_URL", raising=False)
    result = CliRunner().invoke(cli, ["bots", "list"])
    assert result.exit_code == UNAVAILABLE
    assert "no database at arena.db: create it with `arena db upgrade`" in result.stderr
    assert not (tmp_path / "arena.db").exists()
