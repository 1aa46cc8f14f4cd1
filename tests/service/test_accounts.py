"""Accounts (arena/service/accounts.py) on both databases: argon2 hashes, roles, session
epochs; and ``arena users add``."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from arena.cli.common import USAGE_ERROR
from arena.cli.main import cli
from arena.errors import ParseError
from arena.service.accounts import (
    AccountError,
    authenticate,
    change_password,
    create_account,
    find_account,
    password_hasher,
)
from arena.store.db import Store
from arena.store.models import User

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
        create_account(store, "ada", "another one!", hasher=HASHER)
    with pytest.raises(AccountError, match="8 to 256 characters"):
        create_account(store, "bob", "short", hasher=HASHER)
    with pytest.raises(AccountError, match="unknown role"):
        create_account(store, "bob", "long enough", role="king", hasher=HASHER)
    with pytest.raises(ParseError):
        create_account(store, "a/b", "long enough", hasher=HASHER)


def test_a_bot_owner_without_a_password_can_be_given_one(store: Store) -> None:
    store.add_bot_version("carol", "mybot", "def play(o):\n    return o.legal_moves[0]\n", {})
    with store.read() as session:
        owner = session.query(User).filter_by(name="carol").one()
        assert owner.password_hash is None
    assert authenticate(store, "carol", "", hasher=HASHER) is None
    assert find_account(store, owner.id) is None  # cannot log in yet
    account = create_account(store, "carol", "her password", role="organiser", hasher=HASHER)
    assert account.id == owner.id and account.role == "organiser"
    assert account.has_role("user") and account.has_role("organiser")
    assert not account.has_role("admin")


def test_a_password_change_raises_the_session_epoch(store: Store) -> None:
    account = create_account(store, "ada", "correct horse", hasher=HASHER)
    with pytest.raises(AccountError, match="current password"):
        change_password(store, account.id, "wrong", "new password", hasher=HASHER)
    with pytest.raises(AccountError, match="8 to 256"):
        change_password(store, account.id, "correct horse", "tiny", hasher=HASHER)
    changed = change_password(store, account.id, "correct horse", "new password", hasher=HASHER)
    assert changed.session_epoch == account.session_epoch + 1
    assert authenticate(store, "ada", "correct horse", hasher=HASHER) is None
    assert authenticate(store, "ada", "new password", hasher=HASHER) == changed


def test_users_add_makes_the_first_admin(store: Store, url: str) -> None:
    runner = CliRunner()
    done = runner.invoke(
        cli, ["users", "add", "root", "--role", "admin", "--url", url], input="sesame123\n" * 2
    )
    assert done.exit_code == 0, done.output
    assert "root: account created (admin)" in done.output
    account = authenticate(store, "root", "sesame123", hasher=HASHER)
    assert account is not None and account.role == "admin"
    again = runner.invoke(
        cli, ["users", "add", "root", "--url", url], env={"ARENA_PASSWORD": "sesame123"}
    )
    assert again.exit_code == USAGE_ERROR and "taken" in again.output
    listed = runner.invoke(cli, ["users", "list", "--url", url])
    assert "root  admin  can log in" in listed.output
