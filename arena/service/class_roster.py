"""A class's roster (arena.service.classes.preview_roster and import_roster): reading the
file a school's system exports (Canvas's gradebook, Moodle's participants, Google
Classroom's list, a plain list: :func:`read_roster`), planning what an import does to each
student (:func:`plan_roster`: made, updated by its school id, unchanged, flagged), logins
that spell no real name (:func:`pseudonym`), and first-time passwords with their hashes.

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
import re
import secrets
import threading
import unicodedata
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from arena.compete.names import name_key
from arena.errors import ArenaError
from arena.service.accounts import user_name
from arena.service.class_views import MAX_REAL_NAME, ClassError
from arena.service.passwords import ServerBusy
from arena.service.shapes import about
from arena.store import classes as stored
from arena.store.db import Store

if TYPE_CHECKING:
    from argon2 import PasswordHasher

__all__ = [
    "ACTIONS",
    "FIRST_TIME_MEMORY_KIB",
    "FIRST_TIME_PASSES",
    "FLAGGED_CHOICES",
    "HEADERS",
    "LOGIN_CHOICES",
    "MAX_ROSTER",
    "MAX_ROSTER_CHARS",
    "PASSWORD_ALPHABET",
    "ROLES",
    "PlannedStudent",
    "RosterColumn",
    "RosterFile",
    "RosterImported",
    "RosterLogin",
    "RosterPreview",
    "RosterStudent",
    "SkippedLine",
    "check_mapping",
    "decode_roster",
    "first_time_hasher",
    "first_time_password",
    "free_pseudonyms",
    "hash_first_time",
    "plan_roster",
    "preview_of",
    "pseudonym",
    "read_roster",
    "school_login",
]

#: A first-time password's characters (lower case, no 0/o, 1/l/i look-alikes) and groups: 3
#: groups of 4 joined by dashes, 12 random characters, about 59 bits.
PASSWORD_ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789"
PASSWORD_GROUPS, PASSWORD_GROUP = 3, 4
#: The most students one roster import makes.
MAX_ROSTER = 500


@dataclass(frozen=True, slots=True)
class RosterLogin:
    """A login a roster import made: shown once (a printable page, a CSV), then only its
    hash is kept and its student must change the password at the first login."""

    real_name: str
    login: str
    password: str = field(metadata=about("a first-time password, shown this once"))


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


# --- reading a school's roster file ----------------------------------------------------------

#: What a roster's column may hold, with its label on the preview.
ROLES: dict[str, str] = {
    "name": "real name",
    "first": "first name",
    "last": "last name",
    "id": "school id",
    "login": "school login",
    "email": "e-mail",
    "section": "section",
    "ignore": "not used",
}
#: Headers each role is recognised by (lower case, punctuation as spaces, accents dropped),
#: best first: Canvas's gradebook (``Student``, ``ID``, ``SIS User ID``, ``SIS Login ID``,
#: ``Section``), Moodle's participants (``First name``, ``Last name``, ``ID number``, ``Email
#: address``), Google Classroom's (``Last Name``, ``First Name``, ``Email Address``), a
#: plain list's.
HEADERS: dict[str, tuple[str, ...]] = {
    "name": ("real name", "student", "student name", "name", "full name", "display name",
             "learner", "pupil", "nom complet", "nombre completo"),
    "first": ("first name", "firstname", "given name", "given names", "first", "forename",
              "vorname", "prenom", "nombre"),
    "last": ("last name", "lastname", "surname", "family name", "last", "nachname", "nom",
             "apellido", "apellidos"),
    "id": ("sis user id", "student id", "student number", "id number", "idnumber", "sis id",
           "student no", "matriculation number", "matrikelnummer", "id"),
    "login": ("sis login id", "login", "login id", "username", "user name", "user", "account"),
    "email": ("email address", "email", "e mail", "e mail address", "mail", "student email",
              "e mail adresse", "correo"),
    "section": ("section", "sections", "group", "groups", "period", "class", "cohort",
                "gruppe", "groupe"),
}  # fmt: skip
#: A first cell that marks a line of a gradebook export that is no student: Canvas's
#: ``Points Possible`` and ``Muted`` lines, Google Classroom's ``Points``, averages.
NOT_STUDENTS = frozenset({
    "points possible", "muted", "points", "class average", "average", "date", "due date",
    "max points", "maximum", "overall average", "range",
})  # fmt: skip
#: Canvas's test student (every course has one in its gradebook export).
TEST_STUDENTS = frozenset({"student test", "test student"})
#: A roster's text, at most (a Canvas export of 500 students with 100 assignments is ~600 KB).
MAX_ROSTER_CHARS = 2_000_000
#: How a roster's logins are made: pseudonyms, or the school's logins (its login column, else
#: its e-mail's local part).
LOGIN_CHOICES = ("pseudonym", "school")


@dataclass(frozen=True, slots=True)
class RosterColumn:
    """A column of a roster file: its header (``""``: none), what it holds (one of
    :data:`ROLES`) and its first values, as the preview shows them."""

    index: int
    header: str
    role: str = field(metadata=about("real name, first, last, id, login, email, section, ignore"))
    samples: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class RosterStudent:
    """A student a roster file names: its line, real name, and what the school's system
    gives (None: not in the file): an id (its id column, else its e-mail), a login and a
    section."""

    line: int
    real_name: str
    school_id: str | None = None
    school_login: str | None = None
    section: str | None = None


@dataclass(frozen=True, slots=True)
class RosterFile:
    """A roster file read: its format (``Canvas gradebook``, ``Moodle participants``,
    ``Google Classroom``, ``a list with a header``, ``a list``), delimiter, the line of its
    header (None: none), its columns, its students, and the lines skipped with why."""

    format: str
    delimiter: str
    header_line: int | None
    columns: list[RosterColumn]
    students: list[RosterStudent]
    skipped: list[tuple[int, str]]


def decode_roster(data: bytes) -> str:
    """The text of a roster file: UTF-8 (with or without a BOM; UTF-16 with its BOM), else
    Windows-1252 (Excel's CSV on Windows), else Latin-1.

    Raises:
        ClassError: it is not text (a NUL byte: a spreadsheet's .xlsx, an image).
    """
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError:
            pass
    if b"\x00" in data:
        raise ClassError(
            "the roster file is not text (a spreadsheet's .xlsx?): save it as CSV and send that."
        )
    for encoding in ("utf-8-sig", "cp1252"):
        try:
            return data.decode(encoding)
        except UnicodeDecodeError:
            continue
    return data.decode("latin-1")


def _plain(text: str) -> str:
    """A header or a name as it is compared: lower case, accents dropped, punctuation as one
    space."""
    folded = unicodedata.normalize("NFKD", text.casefold())
    letters = "".join(c if c.isalnum() else " " for c in folded if not unicodedata.combining(c))
    return " ".join(letters.split())


def _rows(text: str) -> tuple[list[tuple[int, list[str]]], str]:
    """The non-blank rows of ``text`` with their line numbers, and the delimiter sniffed."""
    sample = "\n".join(text.splitlines()[:20])
    try:
        delimiter = csv.Sniffer().sniff(sample, delimiters=",;\t").delimiter
    except csv.Error:
        first = next((line for line in text.splitlines() if line.strip()), "")
        delimiter = max(",;\t", key=first.count) if any(d in first for d in ",;\t") else ","
    reader = csv.reader(io.StringIO(text), delimiter=delimiter)
    rows: list[tuple[int, list[str]]] = []
    try:
        for cells in reader:
            if any(cell.strip() for cell in cells):
                rows.append((reader.line_num, [" ".join(cell.split()) for cell in cells]))
            if len(rows) > MAX_ROSTER + 10:
                break
    except csv.Error as exc:  # a field past csv's limit (128 KiB)
        raise ClassError(
            f"the roster is not a CSV this reads ({exc}): one student a line."
        ) from None
    return rows, delimiter


def _header_roles(cells: list[str]) -> list[str] | None:
    """The role of each header cell, or None if ``cells`` is no header (no name column)."""
    found: dict[int, tuple[str, int]] = {}
    for index, cell in enumerate(cells):
        plain = _plain(cell)
        for role, names in HEADERS.items():
            if plain in names:
                found[index] = (role, names.index(plain))
                break
    roles = {role for role, _ in found.values()}
    if not roles & {"name", "first", "last"}:
        return None
    return [found[i][0] if i in found else "ignore" for i in range(len(cells))]


def _looks(values: list[str]) -> str:
    """What a headerless column holds, from its values."""
    filled = [v for v in values if v]
    if not filled:
        return "ignore"
    if all("@" in v and " " not in v for v in filled):
        return "email"
    if all(" " not in v and any(c.isdigit() for c in v) and not any(c in v for c in "._@")
           for v in filled):  # fmt: skip
        return "id"
    if all(" " not in v and "," not in v for v in filled) and any(
        any(c in v for c in "._") or any(c.isdigit() for c in v) for v in filled
    ):
        return "login"
    if any(" " in v or "," in v for v in filled):
        return "name"
    return "word"


def _guess_roles(width: int, rows: list[list[str]]) -> list[str]:
    """The roles of a headerless file's columns: e-mails, ids and logins by their look; a
    column of names (spaces or ``Last, First``), or two columns of single words (first and
    last names: ``Katherine,Johnson`` is one student, not a name and a login)."""
    looks = [_looks([r[i] if i < len(r) else "" for r in rows]) for i in range(width)]
    roles = ["ignore" if look in ("word", "name") else look for look in looks]
    texts = [i for i, look in enumerate(looks) if look in ("word", "name")]
    if texts and looks[texts[0]] == "name":
        roles[texts[0]] = "name"
    elif len(texts) >= 2:
        roles[texts[0]], roles[texts[1]] = "first", "last"
    elif texts:
        roles[texts[0]] = "name"
    if not texts:  # no column of words: names all the same (``=1+1``, ``R2-D2``)
        named = next((i for i, r in enumerate(roles) if r in ("id", "login")), 0)
        roles[named] = "name"
    for role in ("email", "id", "login"):  # one column each: the first
        seen = [i for i, r in enumerate(roles) if r == role]
        for i in seen[1:]:
            roles[i] = "ignore"
    return roles


def _best_id(roles: list[str], headers: list[str], rows: list[list[str]]) -> list[str]:
    """One id column: of those a header names, the best one most students have a value in
    (Canvas's ``SIS User ID`` when the school fills it in, else Canvas's own ``ID``)."""
    ids = [i for i, r in enumerate(roles) if r == "id"]
    if len(ids) <= 1:
        return _one_each(roles)
    ranked = sorted(ids, key=lambda i: HEADERS["id"].index(_plain(headers[i])))
    filled = [i for i in ranked if sum(1 for r in rows if i < len(r) and r[i]) * 2 > len(rows)]
    keep = (filled or ranked)[0]
    return _one_each(["ignore" if r == "id" and i != keep else r for i, r in enumerate(roles)])


def _one_each(roles: list[str]) -> list[str]:
    seen: set[str] = set()
    kept = []
    for role in roles:
        kept.append("ignore" if role in seen and role != "ignore" else role)
        seen.add(role)
    return kept


def _format(roles: list[str], headers: list[str] | None) -> str:
    if headers is None:
        return "a list"
    plain = [_plain(h) for h in headers]
    if "sis user id" in plain or "sis login id" in plain:
        return "Canvas gradebook"
    if "first" in roles and "last" in roles and "email" in roles:
        return "Google Classroom" if roles.index("last") < roles.index("first") else "Moodle"
    return "a list with a header"


def check_mapping(mapping: list[str], width: int) -> list[str]:
    """A teacher's choice of each column's role, checked.

    Raises:
        ClassError: not one role a column; an unknown role; a role twice; no name column.
    """
    if len(mapping) != width:
        raise ClassError(
            f"the roster has {width} columns: choose what each holds, not {len(mapping)}."
        )
    for role in mapping:
        if role not in ROLES:
            raise ClassError(f"a column holds one of {', '.join(ROLES)}, not {role[:40]!r}.")
    twice = sorted({r for r in mapping if r != "ignore" and mapping.count(r) > 1})
    if twice:
        raise ClassError(f"only one column can hold the {ROLES[twice[0]]}.")
    if not {"name", "first", "last"} & set(mapping):
        raise ClassError("choose the column of the students' names (or first and last names).")
    if "name" in mapping and {"first", "last"} & set(mapping):
        raise ClassError("choose either one column of real names or first and last names.")
    return mapping


#: The parts of a ``Last, First`` name: letters, spaces, apostrophes, dots and dashes.
_WORDS = re.compile(r"[^\W\d_][\w' .-]*")


def _real_name(cells: dict[str, str]) -> str:
    """The real name of a line: its name column (``Last, First`` turned round), or its first
    and last names."""
    if "name" in cells:
        name = cells["name"]
        parts = [part.strip() for part in name.split(",")]
        if len(parts) == 2 and all(_WORDS.fullmatch(part) for part in parts):
            name = f"{parts[1]} {parts[0]}".strip()
        return name
    return " ".join(p for p in (cells.get("first", ""), cells.get("last", "")) if p)


def read_roster(text: str, mapping: list[str] | None = None) -> RosterFile:
    """Read a roster file's text: its delimiter sniffed (``,``, ``;`` or tab), its header
    recognised (:data:`HEADERS`; none: each column's role guessed from its values), the
    lines that are no student skipped (:data:`NOT_STUDENTS`, Canvas's test student, lines
    without a name); ``mapping`` (a role a column) replaces the roles found.

    Raises:
        ClassError: the roster is empty, too long, not text, has too many students, a line's
            real name is too long, or a school id is on two lines; a bad ``mapping``.
    """
    text = text.lstrip("\ufeff")
    if len(text) > MAX_ROSTER_CHARS:
        raise ClassError(
            f"the roster is {len(text):,} characters: at most {MAX_ROSTER_CHARS:,} "
            f"(up to {MAX_ROSTER} students)."
        )
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:  # a lone surrogate (JSON's "\ud800"): no database takes it
        line = text[: exc.start].count("\n") + 1
        raise ClassError(f"line {line}: the roster is not text (a lone surrogate).") from None
    if "\x00" in text:
        line = text[: text.index("\x00")].count("\n") + 1
        raise ClassError(f"line {line}: the roster has a NUL character: is it a text file?")
    rows, delimiter = _rows(text)
    if not rows:
        raise ClassError("the roster is empty: send the CSV your school's system exports.")
    header_at = next(
        (k for k, (_, cells) in enumerate(rows[:5]) if _header_roles(cells) is not None), None
    )
    headers = None if header_at is None else rows[header_at][1]
    body = rows if header_at is None else rows[header_at + 1 :]
    width = max(len(cells) for _, cells in rows[header_at or 0 :])
    cells_only = [cells for _, cells in body]
    if headers is None:
        roles = _guess_roles(width, cells_only)
    else:
        found = _header_roles(headers) or []
        roles = _best_id(found + ["ignore"] * (width - len(found)), headers + [""] * width,
                         cells_only)  # fmt: skip
    kind = _format(roles, headers)
    if mapping is not None:
        roles = check_mapping(mapping, width)
    shown = [c for c in cells_only if _plain(next((x for x in c if x), "")) not in NOT_STUDENTS]
    columns = [
        RosterColumn(i, headers[i] if headers and i < len(headers) else "", roles[i],
                     [c[i] for c in shown if i < len(c) and c[i]][:3])
        for i in range(width)
    ]  # fmt: skip
    students, skipped = _students(body, roles)
    if not students:
        said = "has a header but no students" if headers is not None else "names no student"
        raise ClassError(f"the roster {said}: send the CSV your school's system exports.")
    if len(students) > MAX_ROSTER:
        many = f"over {MAX_ROSTER + 10}" if len(rows) > MAX_ROSTER + 10 else len(students)
        raise ClassError(f"a roster has at most {MAX_ROSTER} students, not {many}.")
    return RosterFile(
        kind, delimiter, None if header_at is None else rows[header_at][0], columns,
        students, skipped,
    )  # fmt: skip


def _students(
    body: list[tuple[int, list[str]]], roles: list[str]
) -> tuple[list[RosterStudent], list[tuple[int, str]]]:
    students: list[RosterStudent] = []
    skipped: list[tuple[int, str]] = []
    lines_of: dict[str, int] = {}
    for line, cells in body:
        first = next((c for c in cells if c), "")
        if _plain(first) in NOT_STUDENTS:
            skipped.append((line, f"not a student ({first[:40]})"))
            continue
        named = {r: cells[i] for i, r in enumerate(roles) if r != "ignore" and i < len(cells)}
        real = _real_name(named)
        if not real:
            skipped.append((line, "no name"))
            continue
        if _plain(real) in TEST_STUDENTS:
            skipped.append((line, "Canvas's test student"))
            continue
        if len(real) > MAX_REAL_NAME:
            raise ClassError(f"line {line}: a real name has over {MAX_REAL_NAME} characters.")
        email = named.get("email", "").casefold() or None
        school_id = named.get("id") or email
        if school_id is not None:
            if len(school_id) > 200:
                raise ClassError(f"line {line}: a school id has over 200 characters.")
            if (other := lines_of.get(school_id)) is not None:
                raise ClassError(
                    f"lines {other} and {line} have the same school id {school_id[:40]!r}: "
                    "each student has their own."
                )
            lines_of[school_id] = line
        login = (named.get("login") or email or "").split("@")[0]
        section = named.get("section", "")[:200] or None
        students.append(RosterStudent(line, real, school_id, login or None, section))
    return students, skipped


# --- logins ----------------------------------------------------------------------------------


def pseudonym() -> str:
    """A login that spells no real name: two words of coolname's list and two digits
    (``khaki-kestrel-42``)."""
    import coolname

    return f"{coolname.generate_slug(2)}-{secrets.randbelow(90) + 10}"


def free_pseudonyms(store: Store, count: int, taken: set[str]) -> list[str]:
    """``count`` pseudonyms no user holds and not in ``taken`` (name keys)."""
    made: list[str] = []
    while len(made) < count:
        drawn = [pseudonym() for _ in range(count - len(made))]
        used = stored.taken_keys(store, [name_key(d) for d in drawn]) | taken
        for name in drawn:
            if name_key(name) not in used:
                used.add(name_key(name))
                taken.add(name_key(name))
                made.append(name)
    return made


def school_login(text: str | None) -> str | None:
    """The school's login as a user name, or None if it is none."""
    if not text:
        return None
    try:
        return user_name(text)
    except ArenaError:
        return None


# --- what an import will do ------------------------------------------------------------------

#: What an import does to a student: makes its account, updates the member its school id
#: names, leaves it as it is, or flags it (a student of the class has its name, without its
#: school id: not imported unless the teacher chooses).
ACTIONS = ("make", "update", "unchanged", "flagged")
#: What an import does to a flagged student: skip it, link it to the student of the class
#: with its name (who gets its school id), or make a new account anyway.
FLAGGED_CHOICES = ("skip", "link", "new")


@dataclass(frozen=True, slots=True)
class PlannedStudent:
    """A student of a roster file and what an import does with it (one of :data:`ACTIONS`):
    its login (the member's it updates, the school's login, or None: a pseudonym drawn when
    the import is confirmed) and a note saying why."""

    line: int
    real_name: str
    school_id: str | None
    section: str | None
    action: str = field(metadata=about("make, update, unchanged or flagged"))
    login: str | None = field(
        default=None, metadata=about("the login; none: a pseudonym drawn at the import")
    )
    note: str = ""
    user_id: int | None = field(default=None, metadata=about("the member updated (internal)"))


def plan_roster(
    store: Store, class_id: int, roster: RosterFile, logins: str, flagged: str
) -> list[PlannedStudent]:
    """What importing ``roster`` into the class does to each of its students: the school id
    of a member is that member (updated where its real name or section changed); a name a
    member of the class has without that id is flagged (``flagged``: skip, link or new);
    any other student is made, with a pseudonym or (``logins`` ``school``) the school's
    login where it is a free user name.

    Raises:
        ClassError: ``logins`` or ``flagged`` is not one of the choices.
    """
    if logins not in LOGIN_CHOICES:
        raise ClassError(f"logins are {' or '.join(LOGIN_CHOICES)}, not {logins[:40]!r}.")
    if flagged not in FLAGGED_CHOICES:
        raise ClassError(
            f"a flagged student is {', '.join(FLAGGED_CHOICES)}, not {flagged[:40]!r}."
        )
    members = stored.member_rows(store, class_id)
    by_id = {m.school_id: m for m in members if m.school_id}
    by_name: dict[str, list[stored.MemberRow]] = {}
    for m in members:
        if m.real_name:
            by_name.setdefault(_plain(m.real_name), []).append(m)
    matched = {by_id[s.school_id].user_id for s in roster.students if s.school_id in by_id}
    planned = [_plan_one(s, by_id, by_name, matched, flagged) for s in roster.students]
    return _school_logins(store, planned, roster) if logins == "school" else planned


def _plan_one(
    student: RosterStudent,
    by_id: dict[str, stored.MemberRow],
    by_name: dict[str, list[stored.MemberRow]],
    matched: set[int],
    flagged: str,
) -> PlannedStudent:
    s = student
    plan = PlannedStudent(s.line, s.real_name, s.school_id, s.section, "make")
    member = by_id.get(s.school_id or "")
    if member is not None:
        pairs = (
            ("real name", member.real_name, s.real_name),
            ("section", member.section, s.section),
        )
        changes = [f"{w} was {b!r}" for w, b, a in pairs if (b or None) != (a or None)]
        action = "update" if changes else "unchanged"
        return replace(plan, action=action, login=member.name, note="; ".join(changes),
                       user_id=member.user_id)  # fmt: skip
    namesakes = [m for m in by_name.get(_plain(s.real_name), []) if m.user_id not in matched]
    if not namesakes:
        return plan
    first = namesakes[0]
    said = "no school id" if first.school_id is None else f"the school id {first.school_id!r}"
    note = f"{first.name} in the class has this name and {said}"
    if flagged == "new":
        return replace(plan, note=note + ": a new account all the same")
    if flagged == "link" and len(namesakes) == 1:
        matched.add(first.user_id)
        return replace(plan, action="update", login=first.name, user_id=first.user_id,
                       note=note + ": linked to this line")  # fmt: skip
    return replace(plan, action="flagged", login=first.name, note=note + ": not imported")


def _school_logins(
    store: Store, planned: list[PlannedStudent], roster: RosterFile
) -> list[PlannedStudent]:
    """The school's login for each student made, where it is a free user name."""
    wanted = {s.line: school_login(s.school_login) for s in roster.students}
    keys = [name_key(w) for w in wanted.values() if w]
    taken = stored.taken_keys(store, keys) if keys else set()
    seen: set[str] = set()
    out = []
    for plan in planned:
        login = wanted.get(plan.line)
        if plan.action != "make":
            out.append(plan)
        elif login is None:
            out.append(replace(plan, note=_joined(plan.note, "no school login: a pseudonym")))
        elif name_key(login) in taken or name_key(login) in seen:
            note = f"the school's login {login!r} is taken: a pseudonym"
            out.append(replace(plan, note=_joined(plan.note, note)))
        else:
            seen.add(name_key(login))
            out.append(replace(plan, login=login))
    return out


def _joined(*notes: str) -> str:
    return "; ".join(n for n in notes if n)


@dataclass(frozen=True, slots=True)
class SkippedLine:
    """A line of a roster file that names no student, and why."""

    line: int
    reason: str


@dataclass(frozen=True, slots=True)
class RosterPreview:
    """What importing a roster file into class ``name`` will do, before anything is made:
    the format recognised, its columns and what each holds (changeable), how logins are
    made and what is done to flagged students, each student's action, the lines skipped."""

    name: str
    format: str
    delimiter: str
    header_line: int | None
    columns: list[RosterColumn]
    logins: str = field(metadata=about("pseudonym or school"))
    flagged: str = field(metadata=about("skip, link or new"))
    students: list[PlannedStudent]
    skipped: list[SkippedLine]

    def count(self, action: str) -> int:
        """How many students the import will ``action`` (one of :data:`ACTIONS`)."""
        return sum(1 for s in self.students if s.action == action)

    @property
    def mapping(self) -> list[str]:
        """Each column's role, in order."""
        return [c.role for c in self.columns]


@dataclass(frozen=True, slots=True)
class RosterImported:
    """A roster imported into class ``name``: the accounts made with their first-time
    passwords (shown once), and the logins of the members updated, left as they were, and
    flagged (not imported)."""

    name: str
    logins: list[RosterLogin]
    updated: list[str]
    unchanged: list[str]
    flagged: list[str] = field(
        metadata=about("real names not imported: a namesake is in the class")
    )


def preview_of(
    store: Store, class_id: int, name: str, text: str, mapping: list[str] | None, logins: str,
    flagged: str,
) -> RosterPreview:  # fmt: skip
    """The :class:`RosterPreview` of importing ``text`` into the class (``class_id``,
    ``name``): as :func:`read_roster` and :func:`plan_roster`."""
    roster = read_roster(text, mapping)
    return RosterPreview(
        name, roster.format, roster.delimiter, roster.header_line, roster.columns, logins,
        flagged, plan_roster(store, class_id, roster, logins, flagged),
        [SkippedLine(line, why) for line, why in roster.skipped],
    )  # fmt: skip
