"""A class's roster (arena.service.classes.import_roster): reading the teacher's CSV,
making logins from real names, and first-time passwords with their hashes.

A first-time password is random: 12 characters of :data:`PASSWORD_ALPHABET` in three
groups (about 59 bits), easy to copy from a printed sheet. Its owner must change it at the
first login (``users.must_change_password``). It is hashed by :func:`first_time_hasher`:
argon2id with OWASP's smallest recommended parameters (19 MiB, 2 passes, 1 lane) instead
of the site's (64 MiB, 3 passes, 4 lanes), because a random 59-bit secret that lives until
its first login (which rehashes it) needs no memory-hard defence against guessing, while
30 of the site's hashes take seconds on a busy machine (docs/classes.md has the figures).
"""

from __future__ import annotations

import csv
import io
import secrets
import threading
import unicodedata
from dataclasses import dataclass
from typing import TYPE_CHECKING

from arena.compete.names import name_key
from arena.errors import ArenaError
from arena.service.accounts import user_name
from arena.service.class_views import MAX_REAL_NAME, ClassError
from arena.service.passwords import ServerBusy
from arena.store import classes as stored
from arena.store.db import Store

if TYPE_CHECKING:
    from argon2 import PasswordHasher

__all__ = [
    "FIRST_TIME_MEMORY_KIB",
    "FIRST_TIME_PASSES",
    "MAX_ROSTER",
    "PASSWORD_ALPHABET",
    "RosterLogin",
    "first_time_hasher",
    "first_time_password",
    "hash_first_time",
    "login_stem",
    "parse_roster",
    "roster_logins",
]

#: A first-time password's characters (lower case, no 0/o, 1/l/i look-alikes) and groups: 3
#: groups of 4 joined by dashes, 12 random characters, about 59 bits.
PASSWORD_ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789"
PASSWORD_GROUPS, PASSWORD_GROUP = 3, 4
#: The most students one roster import makes.
MAX_ROSTER = 500
#: Headers a roster's first line may have (case and spacing ignored): skipped.
ROSTER_HEADERS = frozenset({"real name", "real_name", "name", "student", "full name"})


@dataclass(frozen=True, slots=True)
class RosterLogin:
    """A login a roster import made: shown once (a printable page, a CSV), then only its
    hash is kept and its student must change the password at the first login."""

    real_name: str
    login: str
    password: str


def first_time_password() -> str:
    """A random first-time password, easy to copy from paper (``k7mx-4pq9-rw2t``)."""
    groups = (
        "".join(secrets.choice(PASSWORD_ALPHABET) for _ in range(PASSWORD_GROUP))
        for _ in range(PASSWORD_GROUPS)
    )
    return "-".join(groups)


def first_time_hasher(hasher: PasswordHasher) -> PasswordHasher:
    """The hasher of first-time passwords: argon2id with OWASP's smallest recommended
    parameters (19 MiB, 2 passes, 1 lane), or ``hasher`` if it is cheaper (tests).

    A first-time password is random (about 59 bits) and lives until its first login, which
    rehashes it with ``hasher``'s parameters (arena.service.accounts.authenticate) and then
    replaces it: a memory-hard hash against guessing a chosen password is not what it
    needs, and 30 of them take a second instead of ten (docs/classes.md has the figures).
    """
    from argon2 import PasswordHasher as Hasher

    if hasher.memory_cost <= FIRST_TIME_MEMORY_KIB and hasher.time_cost <= FIRST_TIME_PASSES:
        return hasher
    return Hasher(
        time_cost=FIRST_TIME_PASSES,
        memory_cost=FIRST_TIME_MEMORY_KIB,
        parallelism=1,
        hash_len=hasher.hash_len,
        salt_len=hasher.salt_len,
        type=hasher.type,
    )


#: OWASP's Password Storage Cheat Sheet, argon2id's first configuration: m=19 MiB, t=2, p=1.
FIRST_TIME_MEMORY_KIB, FIRST_TIME_PASSES = 19 * 1024, 2


#: One roster's hashes at a time a process (the site's hashing slots stay free for logins).
_ROSTER = threading.Lock()


def hash_first_time(
    hasher: PasswordHasher, passwords: list[str], *, roster: bool = False
) -> list[str]:
    """Hash ``passwords`` with :func:`first_time_hasher`: in a slot of ``hasher``'s bound
    (arena.service.passwords) when it has one (a reset); a ``roster``'s in this process's
    one roster slot instead, so that a roster of 500 (~40 s of hashes on a busy 2-core
    machine) does not refuse every login of the site meanwhile.

    Raises:
        ServerBusy: ``hasher`` is bounded and no slot is free; another roster is being
            hashed in this process.
    """
    cheap = first_time_hasher(getattr(hasher, "inner", hasher))
    guard = getattr(hasher, "guard", None)
    if guard is None:
        return [cheap.hash(p) for p in passwords]
    if not roster:
        with guard.slot():
            return [cheap.hash(p) for p in passwords]
    if not _ROSTER.acquire(blocking=False):
        raise ServerBusy("Another roster is being imported: try again in a minute.", 60)
    try:
        return [cheap.hash(p) for p in passwords]
    finally:
        _ROSTER.release()


def login_stem(real_name: str) -> str:
    """A login made from a real name, never the whole name: ``Ada Lovelace`` -> ``ada.l``,
    ``Zoë`` -> ``zoe.1`` (letters without accents; ``student`` where none is left)."""
    plain = unicodedata.normalize("NFKD", real_name)
    words = ["".join(c for c in w if c.isascii() and c.isalnum()).lower() for w in plain.split()]
    words = [w for w in words if w]
    if not words:
        return "student"
    if len(words) == 1:
        return f"{words[0][:20]}.1"
    return f"{words[0][:20]}.{words[-1][0]}"


def parse_roster(csv_text: str) -> list[tuple[str, str]]:
    """The (real name, login) of each line of a roster CSV (login: "" to make one).

    Raises:
        ClassError: a line has more than 2 columns; too many lines; none (blank lines, or
            lines of empty cells, are skipped); a real name too long or with a NUL; the
            text is not CSV that :mod:`csv` reads.
    """
    try:
        lines = [row for row in csv.reader(io.StringIO(csv_text.lstrip("\ufeff"))) if any(
            cell.strip() for cell in row)]  # fmt: skip
    except csv.Error as exc:  # a field past csv's limit (128 KiB)
        raise ClassError(
            f"the roster is not a CSV this reads ({exc}): one student a line."
        ) from None
    if lines and " ".join(lines[0][0].split()).casefold() in ROSTER_HEADERS:
        lines = lines[1:]
    if not lines:
        raise ClassError("the roster is empty: send one student a line, 'real name[,login]'.")
    if len(lines) > MAX_ROSTER:
        raise ClassError(f"a roster has at most {MAX_ROSTER} students, not {len(lines)}.")
    parsed = []
    for number, cells in enumerate(lines, 1):
        if len(cells) > 2:
            raise ClassError(
                f"student {number} has {len(cells)} columns: a line is 'real name[,login]'."
            )
        real = " ".join(cells[0].split())
        login = cells[1].strip() if len(cells) > 1 else ""
        if len(real) > MAX_REAL_NAME:
            raise ClassError(f"student {number}'s real name has over {MAX_REAL_NAME} characters.")
        if "\x00" in real:  # PostgreSQL's text refuses it
            raise ClassError(f"student {number}'s real name has a NUL character.")
        parsed.append((real, login))
    return parsed


def roster_logins(store: Store, parsed: list[tuple[str, str]]) -> list[str]:
    """A free login for each line: the one given (checked), else one made from the real
    name with the first free number appended where taken (``ada.l``, ``ada.l2``, ...).

    Raises:
        ClassError: a given login is not a valid user name, is taken, or given twice.
    """
    given = []
    for number, (_, login) in enumerate(parsed, 1):
        if login:
            try:
                given.append(user_name(login))
            except ArenaError as exc:
                raise ClassError(f"student {number}: {exc}.") from None
    keys = [name_key(g) for g in given]
    if len(set(keys)) != len(keys):
        raise ClassError("a login is given twice in the roster: each student needs their own.")
    if taken := stored.taken_keys(store, keys):
        raise ClassError(
            f"the login {sorted(taken)[0]!r} is taken: leave it empty to have one made."
        )
    stems = sorted({login_stem(real) for real, login in parsed if not login})
    used = stored.keys_starting(store, stems) | set(keys)
    made: list[str] = []
    for real, login in parsed:
        if login:
            made.append(user_name(login))
            continue
        stem = login_stem(real)
        n = 1
        while name_key(name := f"{stem}{n if n > 1 else ''}") in used:
            n += 1
        used.add(name_key(name))
        made.append(user_name(name))
    return made
