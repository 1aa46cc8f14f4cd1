"""Reads and writes of the accounts and API tokens tables, for the command line and
:mod:`arena.service.accounts`.

Queries live in the store (docs/architecture.md): callers get plain values or frozen
dataclasses, never a session. Hashing and checking passwords is the service's: here a
password is only its stored hash, a token (API or web session) only its SHA-256. A user is
found by its exact name, else by its name's key (arena.compete.names.name_key).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy import bindparam, delete, or_, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from arena.compete.names import name_key
from arena.store.db import Store, as_utc
from arena.store.models import ApiToken, User, UserSession

__all__ = [
    "AccountRow",
    "TokenView",
    "account_row",
    "add_session",
    "add_token",
    "claim_account",
    "delete_session",
    "login_row",
    "replace_password",
    "revoke_token",
    "session_row",
    "set_password_hash",
    "set_role",
    "token_views",
    "use_token",
    "user_id_named",
    "user_rows",
]


@dataclass(frozen=True, slots=True)
class AccountRow:
    """A stored user's identity, role and session epoch, and whether its password is a
    first-time one it must change."""

    id: int
    name: str
    role: str
    session_epoch: int
    must_change_password: bool = False


@dataclass(frozen=True, slots=True)
class TokenView:
    """An API token as its owner's list shows it (never the token itself)."""

    id: int
    name: str
    prefix: str
    scopes: list[str]
    created: datetime
    last_used: datetime | None
    revoked: datetime | None


def _row(user: User) -> AccountRow:
    return _account_row(
        user.id, user.name, user.role, user.session_epoch, user.must_change_password
    )


def user_rows(store: Store) -> list[tuple[str, str, bool]]:
    """Every user as (name, role, whether it can log in: has a password), by name."""
    with store.read() as session:
        rows = session.execute(
            select(User.name, User.role, User.password_hash.is_not(None)).order_by(User.name)
        ).all()
    return [(str(name), str(role), bool(can_log_in)) for name, role, can_log_in in rows]


def _find(session: Session, name: str, *, lock: bool = False) -> User | None:
    """The user spelt exactly ``name``, else the one whose name has its key (users whose
    names shared a key before migration 0014 have keys of their own: arena/store/
    migrations/versions/0014_accounts_keys_sessions.py)."""
    query = select(User).where(or_(User.name == name, User.name_key == name_key(name)))
    users = session.scalars(query.with_for_update() if lock else query).all()
    exact = [user for user in users if user.name == name]
    return exact[0] if exact else next(iter(users), None)


def claim_account(
    store: Store, name: str, digest: str, role: str, *, claim: bool
) -> tuple[AccountRow, bool] | None:
    """Create the user ``name`` with the password hash ``digest`` and ``role``, in one
    transaction; with ``claim``, a user of that name (or key) without a password gets them
    instead. Return it and whether it existed before; None (nothing written) if the name or
    its key is taken (with ``claim``: by a user with a password)."""
    try:
        with store.write() as session:
            user = _find(session, name, lock=True)
            if user is not None and (not claim or user.password_hash is not None):
                return None
            existed = user is not None
            if user is None:
                user = User(name=name, name_key=name_key(name))
                session.add(user)
            user.password_hash = digest
            user.role = role
            session.flush()
            return _row(user), existed
    except IntegrityError:  # the same key, inserted at the same time
        return None


def account_row(store: Store, user_id: int) -> AccountRow | None:
    """The user with this id, if it has a password (may log in)."""
    with store.read() as session:
        user = session.get(User, user_id)
        if user is None or user.password_hash is None:
            return None
        return _row(user)


def login_row(store: Store, name: str) -> tuple[AccountRow, str] | None:
    """The user called ``name`` (else the one whose name has its key) and its password
    hash, or None (unknown, or no password)."""
    with store.read() as session:
        user = _find(session, name)
        if user is None or user.password_hash is None:
            return None
        return _row(user), user.password_hash


def set_role(store: Store, name: str, role: str) -> AccountRow | None:
    """Give the user called ``name`` (else the one whose name has its key) ``role``; None
    if there is no such user."""
    with store.write() as session:
        user = _find(session, name, lock=True)
        if user is None:
            return None
        user.role = role
        session.flush()
        return _row(user)


def set_password_hash(store: Store, user_id: int, digest: str) -> None:
    """Store ``digest`` as the user's password hash (a rehash: its sessions stay open)."""
    with store.write() as session:
        session.execute(update(User).where(User.id == user_id).values(password_hash=digest))


def replace_password(
    store: Store,
    user_id: int,
    replace: Callable[[str], str],
    *,
    keep_session: str | None = None,
    revoke_tokens: bool = False,
) -> AccountRow | None:
    """In one transaction, the user's row locked: store ``replace(current hash)`` as its
    password hash, raise its session epoch and end every session of it but the one whose
    SHA-256 is ``keep_session``; with ``revoke_tokens``, revoke its live API tokens too; a
    first-time password is one no more (``must_change_password`` cleared). None if it has
    no password (or no such user).

    Raises:
        Whatever ``replace`` raises (nothing is written then).
    """
    with store.write() as session:
        user = session.get(User, user_id, with_for_update=True)
        if user is None or user.password_hash is None:
            return None
        user.password_hash = replace(user.password_hash)
        user.must_change_password = False
        user.session_epoch += 1
        session.execute(
            delete(UserSession).where(
                UserSession.user_id == user_id, UserSession.sha256 != (keep_session or "")
            )
        )
        if revoke_tokens:
            session.execute(
                update(ApiToken)
                .where(ApiToken.user_id == user_id, ApiToken.revoked.is_(None))
                .values(revoked=datetime.now(UTC))
            )
        session.flush()
        return _row(user)


# --- web sessions ----------------------------------------------------------------------------


def add_session(store: Store, user_id: int, sha256: str, oldest: datetime) -> None:
    """Store a new session of the user (its token's SHA-256), and forget its sessions
    opened before ``oldest`` (expired)."""
    with store.write() as session:
        session.execute(
            delete(UserSession).where(UserSession.user_id == user_id, UserSession.created < oldest)
        )
        session.add(UserSession(user_id=user_id, sha256=sha256, created=datetime.now(UTC)))


#: An account's columns, as :class:`AccountRow` holds them (read by each request's session or
#: token lookup: columns, not the ORM entity, and statements built once, cost half).
_ACCOUNT_COLUMNS = (
    User.id,
    User.name,
    User.role,
    User.session_epoch,
    User.must_change_password,
)


def _account_row(
    user_id: int, name: str, role: str, epoch: int, must_change: bool | None
) -> AccountRow:
    return AccountRow(user_id, name, role, epoch, bool(must_change))


#: The user of the session with the SHA-256 ``sha256`` opened at ``oldest`` or after, if it
#: may log in.
_LIVE_SESSION = (
    select(*_ACCOUNT_COLUMNS)
    .join(UserSession, UserSession.user_id == User.id)
    .where(
        UserSession.sha256 == bindparam("sha256"),
        UserSession.created >= bindparam("oldest"),
        User.password_hash.is_not(None),
    )
)


def session_row(store: Store, sha256: str, oldest: datetime) -> AccountRow | None:
    """The user of the session with this SHA-256, if it was opened at ``oldest`` or after
    and the user may log in; else None."""
    with store.read_columns() as connection:
        row = connection.execute(_LIVE_SESSION, {"sha256": sha256, "oldest": oldest}).first()
    return None if row is None else _account_row(*row)


def delete_session(store: Store, sha256: str) -> None:
    """End the session with this SHA-256 (nothing if there is none)."""
    with store.write() as session:
        session.execute(delete(UserSession).where(UserSession.sha256 == sha256))


def add_token(
    store: Store, user_id: int, name: str, prefix: str, sha256: str, scopes: list[str]
) -> None:
    """Store an API token of the user: its name, first characters, SHA-256 and scopes."""
    with store.write() as session:
        session.add(
            ApiToken(user_id=user_id, name=name, prefix=prefix, sha256=sha256, scopes=scopes)
        )


def token_views(store: Store, user_id: int) -> list[TokenView]:
    """The user's tokens, newest first."""
    with store.read() as session:
        rows = session.scalars(
            select(ApiToken).where(ApiToken.user_id == user_id).order_by(ApiToken.id.desc())
        )
        return [
            TokenView(
                t.id,
                t.name,
                t.prefix,
                list(t.scopes),
                as_utc(t.created),
                None if t.last_used is None else as_utc(t.last_used),
                None if t.revoked is None else as_utc(t.revoked),
            )
            for t in rows
        ]


def revoke_token(store: Store, user_id: int, token_id: int) -> bool:
    """Revoke one of the user's tokens; False if it has no such live token."""
    with store.write() as session:
        result = session.execute(
            update(ApiToken)
            .where(
                ApiToken.id == token_id,
                ApiToken.user_id == user_id,
                ApiToken.revoked.is_(None),
            )
            .values(revoked=datetime.now(UTC))
        )
        return bool(result.rowcount)  # type: ignore[attr-defined]


#: How stale a token's recorded last use may be: a token used again within this is not
#: written again (each API request would otherwise be a write, and on SQLite writes queue).
TOKEN_USE_RESOLUTION = timedelta(minutes=1)


#: The live token with the SHA-256 ``sha256``: its id, scopes, last use and account.
_LIVE_TOKEN = (
    select(ApiToken.id, ApiToken.scopes, ApiToken.last_used, *_ACCOUNT_COLUMNS)
    .join(User, User.id == ApiToken.user_id)
    .where(ApiToken.sha256 == bindparam("sha256"), ApiToken.revoked.is_(None))
)


def use_token(store: Store, sha256: str) -> tuple[AccountRow, list[str]] | None:
    """The user and scopes of the live token with this SHA-256, None if there is no such
    live token; its last use is recorded, to within :data:`TOKEN_USE_RESOLUTION` (a read
    only, when it was recorded more recently)."""
    with store.read_columns() as connection:
        row = connection.execute(_LIVE_TOKEN, {"sha256": sha256}).first()
    if row is None:
        return None
    token_id, scopes, last_used, *account = row
    found = _account_row(*account), list(scopes)
    now = datetime.now(UTC)
    if last_used is None or as_utc(last_used) <= now - TOKEN_USE_RESOLUTION:
        with store.write() as session:
            session.execute(
                update(ApiToken)
                .where(ApiToken.id == token_id, ApiToken.revoked.is_(None))
                .values(last_used=now)
            )
    return found


def user_id_named(store: Store, name: str) -> int | None:
    """The id of the user called ``name`` (compared by name key), or None."""
    with store.read() as session:
        return session.scalar(select(User.id).where(User.name_key == name_key(name)))
