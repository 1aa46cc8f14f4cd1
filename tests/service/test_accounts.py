"""Accounts (arena/service/accounts.py) on both databases: argon2 hashes, roles, session
epochs, name keys, the password policy, migration 0014; and ``arena users add|role``."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest
from click.testing import CliRunner
from sqlalchemy import event, select, text, update

from arena.cli.common import USAGE_ERROR
from arena.cli.main import cli
from arena.compete.names import name_key
from arena.errors import ParseError
from arena.service.accounts import (
    AccountError,
    authenticate,
    change_password,
    check_password,
    create_account,
    create_token,
    find_account,
    password_hasher,
    token_account,
)
from arena.store.accounts import user_rows
from arena.store.db import Store, as_utc, connect, upgrade
from arena.store.models import ApiToken, User

HASHER = password_hasher(cheap=True)


def test_an_account_logs_in_with_its_password_only(store: Store) -> None:
    account = create_account(store, "ada", "correct horse", hasher=HASHER)
    assert (account.name, account.role, account.session_epoch) == ("ada", "user", 0)
    with store.read() as session:
        stored = session.get(User, account.id)
        assert stored is not None and stored.password_hash is not None
        assert stored.password_hash.startswith("$argon2id$")
        assert "correct horse" not in stored.password_hash
    assert authenticate(store, "ada", "correct horse", hasher=HASHER) == account
    assert authenticate(store, "ada", "wrong horse!", hasher=HASHER) is None
    assert authenticate(store, "nobody", "correct horse", hasher=HASHER) is None
    assert find_account(store, account.id) == account


def test_names_passwords_and_roles_are_checked(store: Store) -> None:
    create_account(store, "ada", "correct horse", hasher=HASHER)
    with pytest.raises(AccountError, match="taken"):
        create_account(store, "ada", "amber kettle sky", hasher=HASHER)
    with pytest.raises(AccountError, match="12 to 256 characters"):
        create_account(store, "bob", "short", hasher=HASHER)
    with pytest.raises(AccountError, match="unknown role"):
        create_account(store, "bob", "amber kettle sky", role="king", hasher=HASHER)
    with pytest.raises(ParseError):
        create_account(store, "a/b", "amber kettle sky", hasher=HASHER)


def test_a_bot_owner_without_a_password_can_be_given_one(store: Store) -> None:
    store.add_bot_version("carol", "mybot", "def play(o):\n    return o.legal_moves[0]\n", {})
    with store.read() as session:
        owner = session.query(User).filter_by(name="carol").one()
        assert owner.password_hash is None
    assert authenticate(store, "carol", "", hasher=HASHER) is None
    assert find_account(store, owner.id) is None  # cannot log in yet
    account = create_account(store, "carol", "her violet kite", role="organiser", hasher=HASHER)
    assert account.id == owner.id and account.role == "organiser"
    assert account.has_role("user") and account.has_role("organiser")
    assert not account.has_role("admin")


def test_a_password_change_raises_the_session_epoch(store: Store) -> None:
    account = create_account(store, "ada", "correct horse", hasher=HASHER)
    with pytest.raises(AccountError, match="current password"):
        change_password(store, account.id, "wrong", "new garden lamp", hasher=HASHER)
    with pytest.raises(AccountError, match="12 to 256"):
        change_password(store, account.id, "correct horse", "tiny", hasher=HASHER)
    changed = change_password(store, account.id, "correct horse", "new garden lamp", hasher=HASHER)
    assert changed.session_epoch == account.session_epoch + 1
    assert authenticate(store, "ada", "correct horse", hasher=HASHER) is None
    assert authenticate(store, "ada", "new garden lamp", hasher=HASHER) == changed


def test_users_add_makes_the_first_admin(store: Store, url: str) -> None:
    runner = CliRunner()
    done = runner.invoke(
        cli, ["users", "add", "root", "--role", "admin", "--url", url], input="open sesame!\n" * 2
    )
    assert done.exit_code == 0, done.output
    assert "root: account created (admin)" in done.output
    account = authenticate(store, "root", "open sesame!", hasher=HASHER)
    assert account is not None and account.role == "admin"
    again = runner.invoke(
        cli, ["users", "add", "root", "--url", url], env={"ARENA_PASSWORD": "open sesame!"}
    )
    assert again.exit_code == USAGE_ERROR and "taken" in again.output
    listed = runner.invoke(cli, ["users", "list", "--url", url])
    assert "root  admin  can log in" in listed.output


def test_user_names_are_compared_by_their_key() -> None:
    assert name_key("  STUDENT01 ") == name_key("student01") == "student01"
    assert name_key("Straße") == name_key("STRASSE")
    assert name_key("\uff42\uff4f\uff42") == "bob"  # full-width letters: NFKC
    assert name_key("b\u0430b") != name_key("bab")  # a Cyrillic look-alike stays apart


@pytest.mark.parametrize(
    ("password", "name", "refused"),
    [
        ("correct horse", "ada", None),
        ("violet tram 42", "ada", None),
        ("PASSWORD1234", "ada", "most common"),
        ("zzzzzzzzzzzz", "ada", "repetition or a sequence"),
        ("xyzxyzxyzxyz", "ada", "repetition or a sequence"),
        ("abcdefghijkl", "ada", "repetition or a sequence"),
        ("carolina1234", "Carolina", "may not contain the name"),
        ("a" * 257, "ada", "12 to 256"),
        ("ρωμαϊκή σαλάτα", "ada", None),  # any script
        ("123456789012", "ada", "easy to guess (it is built on a common password)"),
        ("qwertyuiopas", "ada", "easy to guess (it is built on a common password)"),
        ("iloveyou1234", "ada", "easy to guess (it is built on a common password)"),
        ("Domino Arena", "ada", "easy to guess (it is built on the site's name or yours)"),
        ("dominoarena1", "ada", "easy to guess (it is built on the site's name or yours)"),
        ("zxcvbnm,./qw", "ada", "easy to guess (it is built on a row of keys)"),
        ("1984-12-25 ok", "ada", "easy to guess (it is built on a date)"),
        ("lovelace1815", "ada lovelace", "easy to guess (it is built on the site's name or yours)"),
        ("new password", "ada", "easy to guess"),
        ("x" * 200 + "correct horse", "ada", "easy to guess (it is built on a repetition)"),
        ("correct horse " * 18, "ada", "repetition or a sequence"),
        ("amber kettle sky " + "x" * 200, "ada", None),  # judged on its first 72 characters
    ],
)
def test_the_password_policy(password: str, name: str, refused: str | None) -> None:
    if refused is None:
        check_password(password, name)
    else:
        with pytest.raises(AccountError, match=re.escape(refused)):
            check_password(password, name)


@pytest.mark.backends("sqlite", "postgresql")  # a migration
@pytest.mark.empty_database
def test_migration_0014_keeps_users_whose_names_collide_apart(url: str) -> None:
    """Users stored before 0014 as ``Bob`` (no password) and ``bob`` (a password): the one
    that can log in gets the key, the other ``bob#ID``; each logs in by its exact name."""
    upgrade(url, "0013")
    store = connect(url)
    digest = HASHER.hash("correct horse")
    try:
        with store.write() as session:
            for name, password in (("Bob", None), ("bob", digest)):
                session.execute(
                    text(
                        "INSERT INTO users (name, created, password_hash) "
                        "VALUES (:n, CURRENT_TIMESTAMP, :p)"
                    ),
                    {"n": name, "p": password},
                )
    finally:
        store.close()
    upgrade(url)
    store = connect(url)
    try:
        with store.read() as session:
            keys = {name: key for name, key in session.execute(select(User.name, User.name_key))}
        assert keys == {"bob": "bob", "Bob": "bob#1"}
        bob = authenticate(store, "BOB ", "correct horse", hasher=HASHER)
        assert bob is not None and bob.name == "bob"
        with pytest.raises(AccountError, match="taken"):
            create_account(store, "BOB", "violet tram 42", hasher=HASHER, claim=False)
        claimed = create_account(store, "Bob", "violet tram 42", hasher=HASHER)
        assert claimed.name == "Bob"
    finally:
        store.close()


def test_users_role_gives_a_role(store: Store, url: str) -> None:
    create_account(store, "ada", "correct horse", hasher=HASHER)
    done = CliRunner().invoke(cli, ["users", "role", " ADA", "organiser", "--url", url])
    assert done.exit_code == 0 and "ada: role organiser" in done.output
    assert [row for row in user_rows(store)] == [("ada", "organiser", True)]
    missing = CliRunner().invoke(cli, ["users", "role", "nobody", "admin", "--url", url])
    assert missing.exit_code != 0 and "no user 'nobody'" in missing.output


def test_a_tokens_last_use_is_written_once_a_minute_not_once_a_request(store: Store) -> None:
    """An API token's last use is recorded without a write on every request: used again
    within a minute it is only read; a minute later it is written again; a revoked token
    is refused and not written."""
    account = create_account(store, "ada", "correct horse", hasher=HASHER)
    token = create_token(store, account.id, "ci", ["read"])

    def last_used() -> object:
        with store.read() as session:
            return session.scalar(select(ApiToken.last_used))

    assert last_used() is None
    assert token_account(store, token) == (account, ["read"])
    first = last_used()
    assert first is not None
    writes: list[str] = []
    event.listen(store.engine, "before_cursor_execute", lambda *a: writes.append(a[2]))
    assert token_account(store, token) == (account, ["read"])
    assert not [sql for sql in writes if sql.lstrip().upper().startswith("UPDATE")]
    assert last_used() == first
    with store.write() as session:
        session.execute(update(ApiToken).values(last_used=datetime.now(UTC) - timedelta(minutes=2)))
    token_account(store, token)
    assert as_utc(last_used()) > datetime.now(UTC) - timedelta(seconds=30)  # type: ignore[arg-type]
