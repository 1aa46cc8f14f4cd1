"""Accounts: users who log in to the dashboard, their passwords and roles.

A password is stored as its argon2id hash (argon2-cffi's defaults; tests use its cheapest
profile). Roles are ``user`` (the default: uploads bots), ``organiser`` (also runs
tournaments) and ``admin`` (everything; ``arena users add NAME --role admin`` makes the
first). The actions an actor asks for check their permission themselves
(:mod:`arena.service.permissions`): :func:`sign_up`, :func:`add_account` (the operator, at
the command line), :func:`change_own_password`, :func:`new_token`, :func:`revoke_own_token`;
the functions they call (:func:`create_account`, ...) take ids and check nothing. A user's
``session_epoch`` is raised when its password changes, which ends every
session opened before.

Users created by ``arena bots add --owner NAME`` have no password: they cannot log in
until ``arena users add NAME`` gives them one.
"""

from __future__ import annotations

import contextlib
import hashlib
import secrets
from dataclasses import dataclass

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError
from argon2.profiles import CHEAPEST

from arena.compete.names import check_name
from arena.errors import ArenaError, NotFound, PermissionDenied
from arena.service.permissions import ROLES, Actor, Operator, require
from arena.store import accounts as stored
from arena.store.accounts import AccountRow, TokenView
from arena.store.db import Store

__all__ = [
    "MAX_PASSWORD",
    "MIN_PASSWORD",
    "ROLES",
    "SCOPES",
    "TOKEN_PREFIX",
    "Account",
    "AccountError",
    "TokenView",
    "add_account",
    "authenticate",
    "change_own_password",
    "change_password",
    "create_account",
    "create_token",
    "find_account",
    "new_token",
    "password_hasher",
    "revoke_own_token",
    "revoke_token",
    "sign_up",
    "token_account",
    "tokens_of",
]

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


def _account(row: AccountRow) -> Account:
    return Account(row.id, row.name, row.role, row.session_epoch)


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
    row = stored.claim_account(store, name, hasher.hash(password), role)
    if row is None:
        raise AccountError(f"the name {name!r} is taken")
    return _account(row)


def find_account(store: Store, user_id: int) -> Account | None:
    """The account with this id, if it may log in."""
    row = stored.account_row(store, user_id)
    return None if row is None else _account(row)


#: Verified against when the name is unknown, so that an unknown name takes as long as a
#: wrong password (no user enumeration by timing).
_UNKNOWN: dict[int, str] = {}


def authenticate(
    store: Store, name: str, password: str, *, hasher: PasswordHasher
) -> Account | None:
    """The account if ``password`` is its password, else None (unknown names too)."""
    found = stored.login_row(store, name)
    if found is None:
        key = id(hasher)
        if key not in _UNKNOWN:
            _UNKNOWN[key] = hasher.hash("not a password of anyone's")
        with contextlib.suppress(VerificationError, InvalidHashError):
            hasher.verify(_UNKNOWN[key], password)
        return None
    row, digest = found
    try:
        hasher.verify(digest, password)
    except (VerifyMismatchError, VerificationError, InvalidHashError):
        return None
    if hasher.check_needs_rehash(digest):
        stored.set_password_hash(store, row.id, hasher.hash(password))
    return _account(row)


def change_password(
    store: Store, account_id: int, current: str, new: str, *, hasher: PasswordHasher
) -> Account:
    """Replace the password (``current`` must be right) and end every other session.

    Raises:
        AccountError: ``current`` is wrong, or ``new`` is unacceptable.
    """
    _check_password(new)

    def replace(digest: str) -> str:
        try:
            hasher.verify(digest, current)
        except (VerifyMismatchError, VerificationError, InvalidHashError):
            raise AccountError("the current password is not right") from None
        return hasher.hash(new)

    row = stored.replace_password(store, account_id, replace)
    if row is None:
        raise AccountError("no such account")
    return _account(row)


# --- API tokens ------------------------------------------------------------------------------

#: What a token may do: read (every GET), upload (bots), run (tournaments).
SCOPES = ("read", "upload", "run")
#: Every token starts so (easy to find in a leaked file).
TOKEN_PREFIX = "da_"


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def create_token(store: Store, account_id: int, name: str, scopes: list[str]) -> str:
    """A new API token for the account (return it: it is shown once, and only its SHA-256
    is kept).

    Raises:
        AccountError: no name, or an unknown or no scope.
    """
    name = name.strip()
    if not name or len(name) > 100:
        raise AccountError("a token needs a name of 1 to 100 characters")
    if not scopes or any(scope not in SCOPES for scope in scopes):
        raise AccountError(f"choose the token's scopes among {', '.join(SCOPES)}")
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    ordered = sorted(set(scopes), key=SCOPES.index)
    stored.add_token(store, account_id, name, token[:10], _digest(token), ordered)
    return token


def tokens_of(store: Store, account_id: int) -> list[TokenView]:
    """The account's tokens, newest first."""
    return stored.token_views(store, account_id)


def revoke_token(store: Store, account_id: int, token_id: int) -> bool:
    """Revoke one of the account's tokens; False if it has no such live token."""
    return stored.revoke_token(store, account_id, token_id)


def token_account(store: Store, token: str) -> tuple[Account, list[str]] | None:
    """The account and scopes of a live token (its last use recorded), or None."""
    if not token.startswith(TOKEN_PREFIX) or len(token) > 200:
        return None
    found = stored.use_token(store, _digest(token))
    if found is None:
        return None
    row, scopes = found
    return _account(row), scopes


# --- the actions, each checking its permission ------------------------------------------------


def _own(actor: Actor, action: str) -> Account:
    """``actor``'s account, if it may do ``action`` to its own account.

    Raises:
        PermissionDenied: anonymous, or the operator (who has no account).
    """
    require(actor, action, message="log in first")
    if actor is None or isinstance(actor, Operator):
        raise PermissionDenied("the operator has no account of its own", action=action)
    return actor


def sign_up(
    store: Store, actor: Actor, name: str, password: str, *, hasher: PasswordHasher
) -> Account:
    """Create the account ``name`` with the role ``user`` (anyone may).

    Raises:
        As :func:`create_account`.
    """
    require(actor, "sign-up")
    return create_account(store, name, password, hasher=hasher)


def add_account(
    store: Store, actor: Actor, name: str, password: str, *, role: str, hasher: PasswordHasher
) -> Account:
    """Create the account ``name`` with ``role`` (an admin: ``arena users add`` is the
    operator).

    Raises:
        PermissionDenied: ``actor`` is not an admin.
        As :func:`create_account`.
    """
    require(actor, "manage-users", message="only admins add accounts with a role")
    return create_account(store, name, password, role=role, hasher=hasher)


def change_own_password(
    store: Store, actor: Actor, current: str, new: str, *, hasher: PasswordHasher
) -> Account:
    """Change ``actor``'s own password (as :func:`change_password`).

    Raises:
        PermissionDenied: no account is logged in.
        AccountError: as :func:`change_password`.
    """
    account = _own(actor, "change-password")
    return change_password(store, account.id, current, new, hasher=hasher)


def new_token(store: Store, actor: Actor, name: str, scopes: list[str]) -> str:
    """A new API token of ``actor``'s own (as :func:`create_token`).

    Raises:
        PermissionDenied: no account is logged in.
        AccountError: as :func:`create_token`.
    """
    account = _own(actor, "manage-tokens")
    return create_token(store, account.id, name, scopes)


def revoke_own_token(store: Store, actor: Actor, token_id: int) -> None:
    """Revoke one of ``actor``'s own live tokens.

    Raises:
        PermissionDenied: no account is logged in.
        NotFound: ``actor`` has no live token ``token_id``.
    """
    account = _own(actor, "manage-tokens")
    if not revoke_token(store, account.id, token_id):
        raise NotFound(f"no live token {token_id} of yours")
