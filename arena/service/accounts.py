"""Accounts: users who log in to the dashboard, their passwords, sessions and roles.

A password is stored as its argon2id hash (argon2-cffi's defaults; tests use its cheapest
profile). Roles are ``user`` (the default: uploads bots), ``organiser`` (also runs
tournaments) and ``admin`` (everything; ``arena users add NAME --role admin`` makes the
first). The actions an actor asks for check their permission themselves
(:mod:`arena.service.permissions`): :func:`sign_up`, :func:`add_account` (the operator, at
the command line), :func:`change_own_password`, :func:`new_token`, :func:`revoke_own_token`,
:func:`list_accounts`, :func:`give_role`; the functions they call (:func:`create_account`,
...) take ids and check nothing.

**Names.** A user name is normalised once, as it comes in (:func:`user_name`: stripped,
NFKC), and compared by its key (arena.compete.names.name_key: case-folded): ``Bob `` logs
in as ``bob``, and ``BOB`` cannot sign up next to ``bob``.

**Passwords** follow NIST SP 800-63B (:func:`check_password`): 12 to 256 characters, not
one of the 30,000 most common passwords (the list the ``zxcvbn`` package ships), not a
character or pattern repeated (``passwordpassword``) or a run like ``abcdefghijkl``, not
the user's name nor containing it, and not easy to guess by zxcvbn's estimate (its score
at least :data:`MIN_STRENGTH`: about 10^8 guesses; the site's own name and the user's are
in its dictionary, so ``Domino Arena`` and ``qwertyuiopas`` are refused). No composition
rules. Sign-up, a class's join, an admin's ``arena users add`` and every password change go
through it; a roster's first-time passwords are random and changed at the first login.

**Sessions** are server-side: logging in stores a session (:func:`open_session`: a random
token for the browser's cookie, its SHA-256 in the database), each request looks it up
(:func:`session_account`), logging out deletes it (:func:`close_session`), a password
change deletes the user's others (and, if asked, revokes its API tokens). A session lasts
:data:`SESSION_DAYS` days at most, then its user logs in again.

**Taking a name.** Sign-up creates a new user only: a name that exists (or whose key
does) is taken, whoever holds it. Users created by ``arena bots add --owner NAME`` (and
``reference`` on ``arena serve --demo``) have no password: they cannot log in until an
admin gives them one with ``arena users add NAME`` (:func:`add_account` claims them).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import itertools
import re
import secrets
import unicodedata
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError
from argon2.profiles import CHEAPEST

from arena.compete.names import check_name, name_key
from arena.errors import ArenaError, NotFound, PermissionDenied
from arena.service.passwords import reserved
from arena.service.permissions import ROLES, Account, Actor, Operator, require
from arena.store import accounts as stored
from arena.store.accounts import AccountRow, TokenView, user_rows
from arena.store.db import Store

__all__ = [
    "MAX_PASSWORD",
    "MIN_PASSWORD",
    "MIN_STRENGTH",
    "ROLES",
    "SCOPES",
    "SESSION_DAYS",
    "SITE_WORDS",
    "TOKEN_PREFIX",
    "Account",
    "AccountError",
    "AccountListing",
    "Added",
    "NameTakenError",
    "TokenView",
    "add_account",
    "authenticate",
    "change_own_password",
    "change_password",
    "check_password",
    "close_session",
    "create_account",
    "create_token",
    "find_account",
    "give_role",
    "list_accounts",
    "new_token",
    "open_session",
    "password_hasher",
    "revoke_own_token",
    "revoke_token",
    "session_account",
    "sign_up",
    "token_account",
    "tokens_of",
    "user_name",
]

#: Password length bounds (characters): at least OWASP ASVS 2.1.1's 12 (NIST SP 800-63B's
#: floor is 8), at most what hashes fast.
MIN_PASSWORD, MAX_PASSWORD = 12, 256
#: The least zxcvbn score a password needs (0-4; 3: about 10^8 guesses, "safely unguessable"
#: against an online attack and a slow hash offline: zxcvbn's own advice).
MIN_STRENGTH = 3
#: The characters zxcvbn reads (its own bound: its time grows with the length; the worst
#: measured, 30-200 ms at 72, 5.5 s at 256); a longer password is judged by these.
STRENGTH_CHARACTERS = 72
#: Words a guesser of this site's passwords tries first (NIST SP 800-63B: "context-specific
#: words, such as the name of the service").
SITE_WORDS = ("domino arena", "dominoarena", "domino", "dominoes", "arena", "tournament")


class AccountError(ArenaError):
    """An account cannot be created or changed as asked (the message says why)."""


class NameTakenError(AccountError):
    """The name asked for an account is taken (by a user of that name or key)."""


def password_hasher(*, cheap: bool = False) -> PasswordHasher:
    """argon2id with argon2-cffi's recommended parameters (``cheap``: its cheapest
    profile, for tests only)."""
    return PasswordHasher.from_parameters(CHEAPEST) if cheap else PasswordHasher()


def user_name(text: str) -> str:
    """``text`` as a user name: stripped of surrounding whitespace, NFKC (the grammar of
    arena.compete.names).

    Raises:
        ParseError: it is not a valid name.
    """
    return check_name(text.strip(), "user name")


@functools.cache
def _common_passwords() -> frozenset[str]:
    """The 30,000 most common passwords (zxcvbn's list, from leaked password sets;
    MIT-licensed), lower case; loaded once, on first use (about 0.15 s)."""
    from zxcvbn.frequency_lists import FREQUENCY_LISTS

    return frozenset(FREQUENCY_LISTS["passwords"])


#: A character or a pattern repeated: "aaaaaaaaaaaa", "abcabcabcabc", "passwordpassword".
_REPEATED = re.compile(r"(.+?)\1+", re.DOTALL)


def _is_run(text: str) -> bool:
    """Whether ``text`` steps by one code point each time, up or down ("12345678",
    "hgfedcba")."""
    steps = {ord(b) - ord(a) for a, b in itertools.pairwise(text)}
    return steps in ({1}, {-1})


def check_password(password: str, name: str = "") -> None:
    """Accept ``password`` (for the user ``name``) or say why not, after NIST SP 800-63B:
    its length, a list of common passwords, repetitions and runs, the user's name, and how
    easily it is guessed (zxcvbn, with the site's name and the user's as dictionary words).

    Raises:
        AccountError: the password is refused (the message says why).
    """
    if not MIN_PASSWORD <= len(password) <= MAX_PASSWORD:
        raise AccountError(
            f"a password has {MIN_PASSWORD} to {MAX_PASSWORD} characters (this one has "
            f"{len(password)})"
        )
    folded = password.casefold()
    if folded in _common_passwords():
        raise AccountError("this password is one of the most common ones: choose another")
    if _REPEATED.fullmatch(folded) or _is_run(folded):
        raise AccountError("this password is a repetition or a sequence: choose another")
    key = name_key(name)
    if key and (folded == key or (len(key) >= 3 and key in folded)):
        raise AccountError("a password may not contain the name")
    _check_strength(password, key)


#: What a guessable password is built on, as the refusal says it (the first found).
_GUESSABLE = (
    "the site's name or yours",
    "a common password",
    "a row of keys",
    "a sequence like 6543",
    "a date",
    "a repetition",
    "common words or names",
)
#: zxcvbn's kinds of match -> the reason above.
_GUESSABLE_KIND = {
    "user_inputs": _GUESSABLE[0],
    "passwords": _GUESSABLE[1],
    "spatial": _GUESSABLE[2],
    "sequence": _GUESSABLE[3],
    "date": _GUESSABLE[4],
    "repeat": _GUESSABLE[5],
    "dictionary": _GUESSABLE[6],
}


def _kind(match: dict[str, object]) -> str:
    """A zxcvbn match's kind: its dictionary's name (``passwords``, ``user_inputs``...)
    for a word, else its pattern (``spatial``, ``date``...)."""
    if match.get("pattern") == "dictionary" and match.get("dictionary_name") in (
        "user_inputs",
        "passwords",
    ):
        return str(match["dictionary_name"])
    return str(match.get("pattern"))


def _check_strength(password: str, name_key: str) -> None:
    """Refuse a password zxcvbn scores under :data:`MIN_STRENGTH` (read on its first
    :data:`STRENGTH_CHARACTERS` characters), saying what it found."""
    from zxcvbn import zxcvbn  # (loads its dictionaries on first use: about 0.2 s)

    words = [*SITE_WORDS, name_key, *re.split(r"[\W_]+", name_key)]  # "ada.t": ada, t
    estimate = zxcvbn(password[:STRENGTH_CHARACTERS], user_inputs=words)
    if estimate["score"] >= MIN_STRENGTH:
        return
    kinds = {_GUESSABLE_KIND.get(_kind(match)) for match in estimate["sequence"]}
    why = next((reason for reason in _GUESSABLE if reason in kinds), _GUESSABLE[-1])
    raise AccountError(
        f"this password is easy to guess (it is built on {why}): choose a longer one, three "
        "or four unrelated words say"
    )


def _check_role(role: str) -> None:
    if role not in ROLES:
        raise AccountError(f"unknown role {role!r} (roles: {', '.join(ROLES)})")


def _account(row: AccountRow) -> Account:
    return Account(row.id, row.name, row.role, row.session_epoch, row.must_change_password)


def create_account(
    store: Store,
    name: str,
    password: str,
    *,
    role: str = "user",
    hasher: PasswordHasher,
    claim: bool = True,
) -> Account:
    """Create the account ``name``; with ``claim``, a user of that name without a password
    (a bot owner named by ``arena bots add``) gets this password and role instead. (Sign-up
    does not claim: :func:`sign_up`.)

    Raises:
        ParseError: ``name`` is not a valid name (arena.compete.names).
        AccountError: the name is taken, or the password or role is unacceptable.
    """
    return _create(store, name, password, role=role, hasher=hasher, claim=claim).account


@dataclass(frozen=True, slots=True)
class Added:
    """An account :func:`add_account` made: ``claimed`` if its user existed (a bot owner
    without a password), else it is new."""

    account: Account
    claimed: bool


def _create(
    store: Store, name: str, password: str, *, role: str, hasher: PasswordHasher, claim: bool
) -> Added:
    name = user_name(name)
    check_password(password, name)
    _check_role(role)
    found = stored.claim_account(store, name, hasher.hash(password), role, claim=claim)
    if found is None:
        raise NameTakenError(f"the name {name!r} is taken")
    row, existed = found
    return Added(_account(row), existed)


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
    """The account if ``password`` is its password, else None (unknown names too). The
    name is stripped and compared by its key (``Bob `` is ``bob``)."""
    found = stored.login_row(store, unicodedata.normalize("NFKC", name.strip()))
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
    store: Store,
    account_id: int,
    current: str,
    new: str,
    *,
    hasher: PasswordHasher,
    keep_session: str | None = None,
    revoke_tokens: bool = False,
) -> Account:
    """Replace the password (``current`` must be right) and end every session of the
    account but ``keep_session`` (a session token); with ``revoke_tokens``, revoke its API
    tokens too.

    Raises:
        AccountError: ``current`` is wrong, or ``new`` is unacceptable.
    """
    account = find_account(store, account_id)

    def replace(digest: str) -> str:
        try:
            hasher.verify(digest, current)
        except (VerifyMismatchError, VerificationError, InvalidHashError):
            raise AccountError("the current password is not right") from None
        check_password(new, "" if account is None else account.name)
        return hasher.hash(new)

    with reserved(hasher):  # the slot before the transaction: no wait in line inside it
        row = stored.replace_password(
            store,
            account_id,
            replace,
            keep_session=None if keep_session is None else _digest(keep_session),
            revoke_tokens=revoke_tokens,
        )
    if row is None:
        raise AccountError("no such account")
    return _account(row)


# --- web sessions ------------------------------------------------------------------------------

#: The longest a web session lasts (then its user logs in again): OWASP ASVS 3.3.2 (level 1).
SESSION_DAYS = 30


def _oldest() -> datetime:
    return datetime.now(UTC) - timedelta(days=SESSION_DAYS)


def open_session(store: Store, account: Account) -> str:
    """A new session of ``account``: the token for the browser's cookie (only its SHA-256
    is stored)."""
    token = secrets.token_urlsafe(32)
    stored.add_session(store, account.id, _digest(token), _oldest())
    return token


def session_account(store: Store, token: str) -> Account | None:
    """The account of a live session token, or None (logged out, ended by a password
    change, older than :data:`SESSION_DAYS`, or never issued)."""
    if len(token) > 100:
        return None
    row = stored.session_row(store, _digest(token), _oldest())
    return None if row is None else _account(row)


def close_session(store: Store, token: str) -> None:
    """End a session (logging out): its token opens nothing any more."""
    stored.delete_session(store, _digest(token))


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
    """Create the new account ``name`` with the role ``user`` (anyone may). A name that
    exists is taken, whoever holds it, with or without a password.

    Raises:
        As :func:`create_account`.
    """
    require(actor, "sign-up")
    return create_account(store, name, password, hasher=hasher, claim=False)


def add_account(
    store: Store, actor: Actor, name: str, password: str, *, role: str, hasher: PasswordHasher
) -> Added:
    """Create the account ``name`` with ``role``, or give that password and role to the
    existing user ``name`` that has no password (claim a bot owner: an admin's act).

    Raises:
        PermissionDenied: ``actor`` is not an admin.
        As :func:`create_account`.
    """
    require(actor, "manage-users", message="only admins add accounts with a role")
    return _create(store, name, password, role=role, hasher=hasher, claim=True)


@dataclass(frozen=True, slots=True)
class AccountListing:
    """A user as the admins' list shows it."""

    name: str
    role: str
    can_log_in: bool


def list_accounts(store: Store, actor: Actor) -> list[AccountListing]:
    """Every user with its role and whether it can log in, by name (admins only).

    Raises:
        PermissionDenied: ``actor`` is not an admin.
    """
    require(actor, "manage-users", message="only admins see the accounts")
    return [AccountListing(*row) for row in user_rows(store)]


def give_role(store: Store, actor: Actor, name: str, role: str) -> Account:
    """Give the user ``name`` (or the one whose name has its key) ``role`` (admins only).
    Its sessions go on with the new role from their next request.

    Raises:
        PermissionDenied: ``actor`` is not an admin.
        AccountError: unknown role.
        NotFound: no such user.
    """
    require(actor, "manage-users", message="only admins change roles")
    _check_role(role)
    row = stored.set_role(store, user_name(name), role)
    if row is None:
        raise NotFound(f"no user {name.strip()!r}")
    return _account(row)


def change_own_password(
    store: Store,
    actor: Actor,
    current: str,
    new: str,
    *,
    hasher: PasswordHasher,
    keep_session: str | None = None,
    revoke_tokens: bool = False,
) -> Account:
    """Change ``actor``'s own password (as :func:`change_password`); a first-time password
    (``must_change_password``) is one no more.

    Raises:
        PermissionDenied: no account is logged in.
        AccountError: as :func:`change_password`.
    """
    account = _own(actor, "change-password")
    return change_password(
        store,
        account.id,
        current,
        new,
        hasher=hasher,
        keep_session=keep_session,
        revoke_tokens=revoke_tokens,
    )


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
