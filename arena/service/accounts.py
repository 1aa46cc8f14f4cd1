"""Accounts: users who log in to the dashboard, their passwords and roles.

A password is stored as its argon2id hash (argon2-cffi's defaults; tests use its cheapest
profile). Roles are ``user`` (the default: uploads bots), ``organiser`` (also runs
tournaments) and ``admin`` (everything; ``arena users add NAME --role admin`` makes the
first). A user's ``session_epoch`` is raised when its password changes, which ends every
session opened before.

Users created by ``arena bots add --owner NAME`` have no password: they cannot log in
until ``arena users add NAME`` gives them one.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError
from argon2.profiles import CHEAPEST
from sqlalchemy import select, update

from arena.compete.names import check_name
from arena.errors import ArenaError
from arena.store.db import Store
from arena.store.models import User

__all__ = [
    "MAX_PASSWORD",
    "MIN_PASSWORD",
    "ROLES",
    "Account",
    "AccountError",
    "authenticate",
    "change_password",
    "create_account",
    "find_account",
    "password_hasher",
]

#: The roles, weakest first.
ROLES = ("user", "organiser", "admin")
#: Password length bounds (characters): long enough to matter, short enough to hash fast.
MIN_PASSWORD, MAX_PASSWORD = 8, 256


class AccountError(ArenaError):
    """An account cannot be created or changed as asked (the message says why)."""


@dataclass(frozen=True, slots=True)
class Account:
    """A user who may log in."""

    id: int
    name: str
    role: str
    session_epoch: int

    def has_role(self, role: str) -> bool:
        """Whether this account's role is ``role`` or a stronger one."""
        return ROLES.index(self.role) >= ROLES.index(role)


def password_hasher(*, cheap: bool = False) -> PasswordHasher:
    """argon2id with argon2-cffi's recommended parameters (``cheap``: its cheapest
    profile, for tests only)."""
    return PasswordHasher.from_parameters(CHEAPEST) if cheap else PasswordHasher()


def _check_password(password: str) -> None:
    if not MIN_PASSWORD <= len(password) <= MAX_PASSWORD:
        raise AccountError(
            f"a password has {MIN_PASSWORD} to {MAX_PASSWORD} characters (this one has "
            f"{len(password)})"
        )


def _check_role(role: str) -> None:
    if role not in ROLES:
        raise AccountError(f"unknown role {role!r} (roles: {', '.join(ROLES)})")


def _account(user: User) -> Account:
    return Account(user.id, user.name, user.role, user.session_epoch)


def create_account(
    store: Store, name: str, password: str, *, role: str = "user", hasher: PasswordHasher
) -> Account:
    """Create the account ``name`` (or give a password to a user that has none yet, such as
    a bot owner named by ``arena bots add``).

    Raises:
        ParseError: ``name`` is not a valid name (arena.compete.names).
        AccountError: the name is taken, or the password or role is unacceptable.
    """
    name = check_name(name, "user name")
    _check_password(password)
    _check_role(role)
    digest = hasher.hash(password)
    with store.write() as session:
        user = session.scalar(select(User).where(User.name == name).with_for_update())
        if user is not None and user.password_hash is not None:
            raise AccountError(f"the name {name!r} is taken")
        if user is None:
            user = User(name=name)
            session.add(user)
        user.password_hash = digest
        user.role = role
        session.flush()
        return _account(user)


def find_account(store: Store, user_id: int) -> Account | None:
    """The account with this id, if it may log in."""
    with store.read() as session:
        user = session.get(User, user_id)
        if user is None or user.password_hash is None:
            return None
        return _account(user)


#: Verified against when the name is unknown, so that an unknown name takes as long as a
#: wrong password (no user enumeration by timing).
_UNKNOWN: dict[int, str] = {}


def authenticate(
    store: Store, name: str, password: str, *, hasher: PasswordHasher
) -> Account | None:
    """The account if ``password`` is its password, else None (unknown names too)."""
    with store.read() as session:
        user = session.scalar(select(User).where(User.name == name))
        digest = None if user is None else user.password_hash
        account = None if user is None else _account(user)
    if digest is None or account is None:
        key = id(hasher)
        if key not in _UNKNOWN:
            _UNKNOWN[key] = hasher.hash("not a password of anyone's")
        with contextlib.suppress(VerificationError, InvalidHashError):
            hasher.verify(_UNKNOWN[key], password)
        return None
    try:
        hasher.verify(digest, password)
    except (VerifyMismatchError, VerificationError, InvalidHashError):
        return None
    if hasher.check_needs_rehash(digest):
        with store.write() as session:
            session.execute(
                update(User)
                .where(User.id == account.id)
                .values(password_hash=hasher.hash(password))
            )
    return account


def change_password(
    store: Store, account_id: int, current: str, new: str, *, hasher: PasswordHasher
) -> Account:
    """Replace the password (``current`` must be right) and end every other session.

    Raises:
        AccountError: ``current`` is wrong, or ``new`` is unacceptable.
    """
    _check_password(new)
    with store.write() as session:
        user = session.get(User, account_id, with_for_update=True)
        if user is None or user.password_hash is None:
            raise AccountError("no such account")
        try:
            hasher.verify(user.password_hash, current)
        except (VerifyMismatchError, VerificationError, InvalidHashError):
            raise AccountError("the current password is not right") from None
        user.password_hash = hasher.hash(new)
        user.session_epoch += 1
        session.flush()
        return _account(user)
