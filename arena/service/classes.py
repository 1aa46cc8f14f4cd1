"""Classes (docs/classes.md): a teacher creates one, students join it with its join code or
come in by the teacher's roster, and the class's teachers see their students' bots.

- :func:`create_class` (``create-class``: teachers, organisers, admins) stores a class with
  its rule sets, quotas and a first join code; :func:`rotate_join_code` draws a new one
  (the old stops working) and :func:`close_join_code` closes joining by code;
  :func:`add_teacher` gives a class another teacher (``manage-class``: its teachers, or
  an admin).
- Joining: :func:`join_class` (a visitor: a new account with a pseudonym and a password, no
  e-mail; a real name, optional, that only the class's teachers see) and :func:`join_as`
  (a logged-in user). A join code is :data:`CODE_LENGTH` characters of
  :data:`CODE_ALPHABET`, typed in any case, with or without spaces and dashes.
- The roster: :func:`preview_roster` reads the file a school's system exports (Canvas,
  Moodle, Google Classroom, a list) and shows what :func:`import_roster` will do: make the
  students' accounts (pseudonyms, or the school's logins) with random first-time passwords
  they must change (``must_change_password``), update the members whose school id it names,
  flag namesakes; :func:`reset_password` gives one a new first-time password.
- Who sees what: :func:`class_for_teacher`, :func:`class_for_member`, :func:`is_teacher`,
  and :func:`bot_target`, the permission target of a student's bot: its owner and the
  teachers of the classes it was submitted to (they read the sources, faults and uploads'
  reports of what was submitted to their class; strangers and other students never). A
  private class (:func:`set_private`) hides its students' bots from everyone else
  (arena.service.privacy).
- Quotas: :func:`enforce_class_quotas` (uploads a student an hour, checks queued a class).

Every refusal of a mistake is a :class:`ClassError`, one sentence shown as it is.
"""

from __future__ import annotations

import dataclasses
import logging
import secrets
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from arena.compete.entrants import Entrant
from arena.compete.names import check_name, fit_name, name_key
from arena.engine.rules import PRESETS
from arena.errors import ArenaError, NameTaken, NotFound
from arena.service.accounts import Account, create_account, user_name
from arena.service.board_views import REFERENCE_OWNER
from arena.service.class_roster import (
    MAX_ROSTER,
    RosterImported,
    RosterLogin,
    RosterPreview,
    decode_roster,
    first_time_hasher,
    first_time_password,
    free_pseudonyms,
    hash_first_time,
    preview_of,
)
from arena.service.class_views import (
    MAX_REAL_NAME,
    ClassError,
    ClassLeaderboard,
    ClassView,
    RosterRow,
    RosterView,
    Submitted,
    bot_target,
    class_bots,
    class_for_member,
    class_for_teacher,
    class_leaderboard,
    class_submissions,
    class_target,
    class_view,
    find_class,
    is_teacher,
    latest_submissions,
    latest_versions,
    my_classes,
    roster_view,
    student_ids,
    student_names,
    submitted,
    upload_target,
)
from arena.service.dispatch import dispatch_matches
from arena.service.matches import create_stored_tournament
from arena.service.permissions import (
    ROLE_RANKS,
    Actor,
    actor_id,
    allowed,
    require,
)
from arena.service.shapes import about
from arena.service.tournaments import preset
from arena.store import classes as stored
from arena.store.accounts import login_row
from arena.store.classes import ClassRow, MemberRow
from arena.store.db import Store

if TYPE_CHECKING:
    from argon2 import PasswordHasher

__all__ = [
    "CODE_ALPHABET",
    "CODE_LENGTH",
    "DEFAULT_SETTINGS",
    "MAX_JOIN_HOURS",
    "MAX_ROSTER",
    "MIN_JOIN_HOURS",
    "RESERVED_NAMES",
    "ClassError",
    "ClassLeaderboard",
    "ClassRow",
    "ClassView",
    "Joined",
    "MemberRow",
    "NewClass",
    "RosterImported",
    "RosterLogin",
    "RosterPreview",
    "RosterRow",
    "RosterView",
    "Submitted",
    "add_teacher",
    "bot_target",
    "change_own_login",
    "class_bots",
    "class_by_code",
    "class_for_member",
    "class_for_teacher",
    "class_leaderboard",
    "class_submissions",
    "class_target",
    "class_view",
    "close_join_code",
    "create_class",
    "decode_roster",
    "enforce_class_quotas",
    "find_class",
    "first_time_hasher",
    "first_time_password",
    "import_roster",
    "is_teacher",
    "join_as",
    "join_class",
    "latest_submissions",
    "latest_versions",
    "login_to_change",
    "my_classes",
    "normalise_code",
    "preview_roster",
    "reset_password",
    "roster_view",
    "rotate_join_code",
    "set_private",
    "start_class_tournament",
    "student_ids",
    "student_names",
    "submitted",
    "upload_target",
]

logger = logging.getLogger(__name__)

#: A join code's characters: capitals and digits without those read alike (0/O, 1/I/L).
CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
#: A join code's length: 31**8 is about 8.5e11 codes.
CODE_LENGTH = 8
#: The shortest a join code lasts (hours): 3 minutes (the form, the API and docs/classes.md
#: hold to the same bounds).
MIN_JOIN_HOURS = 0.05
#: The longest a join code lasts (hours): 30 days.
MAX_JOIN_HOURS = 24.0 * 30
#: A class's settings when not given: uploads a student may make an hour, uploads of the
#: class's students checked or waiting at once, whether the leaderboard shows reference bots.
DEFAULT_SETTINGS: dict[str, Any] = {
    "uploads_per_hour": 10,
    "checks_queued": 30,
    "show_reference": True,
    "private": False,
}
#: Each numeric setting's bounds (inclusive).
BOUNDS = {"uploads_per_hour": (1, 1000), "checks_queued": (1, 10_000)}
#: Names a class may not take: pages of their own (``/classes/new``).
RESERVED_NAMES = frozenset({"new"})
#: The longest description and real name, in characters.
MAX_DESCRIPTION = 5000


@dataclass(frozen=True, slots=True, kw_only=True)
class NewClass:
    """A class as a teacher asks for it.

    Attributes:
        rule_sets: preset names (arena.engine.rules.PRESETS), the first the default.
        join_hours: how long its first join code lasts (0: none yet: joining by code is
            closed until the teacher draws one).
    """

    name: str = field(metadata=about(min_length=1, max_length=64))
    description: str = field(default="", metadata=about(max_length=5000))
    rule_sets: tuple[str, ...] = field(default=("block",), metadata=about(max_length=20))
    uploads_per_hour: int = DEFAULT_SETTINGS["uploads_per_hour"]
    checks_queued: int = DEFAULT_SETTINGS["checks_queued"]
    show_reference: bool = True
    private: bool = field(
        default=False,
        metadata=about(
            "its students' bots, ratings and games seen by its members and teachers only"
        ),
    )
    join_hours: float = field(
        default=24.0, metadata=about("how long the first join code lasts (0: none)")
    )


def _now(now: datetime | None) -> datetime:
    return datetime.now(UTC) if now is None else now.astimezone(UTC)


# --- creating a class, its join code and teachers ---------------------------------------------


def _class_name(text: str) -> str:
    try:
        name = check_name(text.strip(), "class name")
    except ArenaError as exc:
        raise ClassError(f"{exc}.") from None
    if name in RESERVED_NAMES:
        raise ClassError(f"{name!r} is a page of its own: choose another class name.")
    return name


def _check_rule_sets(names: tuple[str, ...]) -> tuple[str, ...]:
    chosen = tuple(n.strip() for n in names if n.strip())
    unknown = [n for n in chosen if n not in PRESETS]
    if not chosen or unknown or len(set(chosen)) != len(chosen):
        raise ClassError(
            f"choose one or more rule sets among {', '.join(PRESETS)}"
            + (f", not {', '.join(map(repr, unknown))}." if unknown else ", each once.")
        )
    return chosen


def _check_settings(new: NewClass) -> dict[str, Any]:
    for what, (low, high) in BOUNDS.items():
        value = getattr(new, what)
        if not low <= value <= high:
            shown = what.replace("_", " ")
            raise ClassError(f"{shown} must be {low} to {high}, not {value}.")
    if len(new.description) > MAX_DESCRIPTION or "\x00" in new.description:
        raise ClassError(f"the description is plain text of at most {MAX_DESCRIPTION} characters.")
    _check_hours(new.join_hours, closing=True)
    return {
        "uploads_per_hour": int(new.uploads_per_hour),
        "checks_queued": int(new.checks_queued),
        "show_reference": bool(new.show_reference),
        "private": bool(new.private),
    }


def _check_hours(hours: float, *, closing: bool = False) -> None:
    """A join code's hours: :data:`MIN_JOIN_HOURS` to :data:`MAX_JOIN_HOURS` (``closing``:
    or 0, no code yet, when a class is created)."""
    if not (MIN_JOIN_HOURS <= hours <= MAX_JOIN_HOURS or (closing and hours == 0)):
        raise ClassError(
            f"a join code lasts {MIN_JOIN_HOURS:g} to {MAX_JOIN_HOURS:g} hours"
            f"{' (or 0: none yet)' if closing else ''}, not {hours:g}."
        )


def _new_code() -> str:
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


def normalise_code(text: str) -> str:
    """A join code as typed (any case, spaces and dashes ignored) in its stored form."""
    return "".join(c for c in text.upper() if c not in " -\t")


def create_class(
    store: Store, actor: Actor, new: NewClass, *, now: datetime | None = None
) -> ClassRow:
    """Store the class ``new``, ``actor`` its first teacher (the operator's has none until
    :func:`add_teacher`), with a join code lasting ``new.join_hours``.

    Raises:
        PermissionDenied: ``actor`` is not a teacher (nor an organiser or admin).
        ClassError: a setting is refused, or the name is taken; nothing stored.
    """
    require(actor, "create-class", message="only teachers create classes: ask an admin")
    name = _class_name(new.name)
    rule_sets = _check_rule_sets(new.rule_sets)
    settings = _check_settings(new)
    expires = _now(now) + timedelta(hours=new.join_hours) if new.join_hours else None
    for _ in range(5):
        try:
            row = stored.insert_class(
                store, name=name, description=new.description.strip(),
                created_by=actor_id(actor), rule_sets=rule_sets, settings=settings,
                join_code=_new_code() if expires else None, join_expires=expires,
            )  # fmt: skip
        except NameTaken as exc:
            raise ClassError(f"{exc}: choose another name.") from None
        except ValueError:
            continue  # the join code was drawn twice: draw again
        logger.info("class %s (id %s) created by %s", name, row.id, _who(actor))
        return row
    raise ClassError("no free join code was found: try again.")  # pragma: no cover


def rotate_join_code(
    store: Store, actor: Actor, name: str, *, hours: float = 24.0, now: datetime | None = None
) -> ClassRow:
    """Draw a new join code for the class, lasting ``hours``; the old one stops working.

    Raises:
        NotFound, PermissionDenied: as :func:`class_for_teacher`.
        ClassError: ``hours`` out of bounds.
    """
    row = class_for_teacher(store, actor, name)
    _check_hours(hours)
    expires = _now(now) + timedelta(hours=hours)
    while not stored.set_join_code(store, row.id, _new_code(), expires):
        logger.info("a join code drawn twice: drawing again")  # pragma: no cover
    logger.info("class %s: join code rotated by %s", row.name, _who(actor))
    return find_class(store, row.name)


def close_join_code(store: Store, actor: Actor, name: str) -> ClassRow:
    """Close joining the class by code (the roster still adds students).

    Raises:
        NotFound, PermissionDenied: as :func:`class_for_teacher`.
    """
    row = class_for_teacher(store, actor, name)
    stored.set_join_code(store, row.id, None, None)
    return find_class(store, row.name)


def set_private(store: Store, actor: Actor, name: str, private: bool) -> ClassRow:
    """Make the class private (its students' bots, ratings, games and tournaments seen by
    its members, its teachers and the admins only: arena.service.privacy) or public again.

    Raises:
        NotFound, PermissionDenied: as :func:`class_for_teacher`.
    """
    row = class_for_teacher(store, actor, name)
    stored.set_settings(store, row.id, {**row.settings, "private": bool(private)})
    logger.info("class %s made %s by %s", row.name, "private" if private else "public", _who(actor))
    return find_class(store, row.name)


def add_teacher(store: Store, actor: Actor, name: str, user_name: str) -> ClassRow:
    """Make the user ``user_name`` a teacher of the class as well (it needs the teacher
    role, or a stronger one).

    Raises:
        NotFound, PermissionDenied: as :func:`class_for_teacher`.
        ClassError: no such user, or it is not a teacher.
    """
    row = class_for_teacher(store, actor, name)
    found = None if "\x00" in user_name else login_row(store, user_name.strip())
    if found is None:
        raise ClassError(f"no user {user_name.strip()!r} can log in: check the name.")
    user = found[0]
    if ROLE_RANKS.get(user.role, 0) < ROLE_RANKS["teacher"]:
        raise ClassError(f"{user.name} is not a teacher: an admin gives the teacher role first.")
    if user.id in stored.student_ids(store, row.id):
        raise ClassError(f"{user.name} is a student of {row.name}: a student cannot teach it.")
    stored.add_teacher(store, row.id, user.id)
    return find_class(store, row.name)


# --- joining ----------------------------------------------------------------------------------


def class_by_code(store: Store, code: str, now: datetime | None = None) -> ClassRow:
    """The class the join code ``code`` opens now (typed in any case, with or without
    spaces and dashes).

    Raises:
        ClassError: no class has this code, or it expired (one sentence each).
    """
    now = _now(now)
    shown = code.strip()[:40]
    row = stored.class_row_by_code(store, normalise_code(code)) if shown else None
    if row is None:
        raise ClassError(f"no class has the join code {shown!r}: check it with your teacher.")
    if row.join_expires is not None and row.join_expires <= now:
        raise ClassError("this join code has expired: ask your teacher for the new one.")
    return row


def _real_name(text: str) -> str | None:
    name = " ".join(text.split())
    if len(name) > MAX_REAL_NAME or "\x00" in name:
        raise ClassError(f"a real name has at most {MAX_REAL_NAME} characters.")
    return name or None


def join_class(
    store: Store,
    hasher: PasswordHasher,
    code: str,
    pseudonym: str,
    password: str,
    real_name: str = "",
    *,
    now: datetime | None = None,
) -> Account:
    """A visitor joins the class with ``code``: a new account ``pseudonym`` (the user-name
    rules of arena.service.accounts) with ``password``, no e-mail, a student of the class;
    ``real_name`` (optional) is seen by the class's teachers only.

    Raises:
        ClassError: no class has this code, or it expired; a bad real name.
        ParseError, AccountError: the pseudonym or the password is refused (the name is
            taken: NameTakenError).
    """
    row = class_by_code(store, code, _now(now))
    real = _real_name(real_name)
    account = create_account(store, pseudonym, password, hasher=hasher, claim=False)
    stored.add_member(store, row.id, account.id, real, "code")
    logger.info("class %s: %s joined by code", row.name, account.name)
    return account


@dataclass(frozen=True, slots=True)
class Joined:
    """A class joined by a logged-in user: ``new`` is False when it was a student of it
    already (joining again changes nothing)."""

    row: ClassRow
    new: bool


def join_as(
    store: Store, actor: Actor, code: str, real_name: str = "", *, now: datetime | None = None
) -> Joined:
    """The logged-in ``actor`` joins the class with ``code`` as a student (joining again
    changes nothing: ``new`` is False).

    Raises:
        PermissionDenied: nobody is logged in (or the operator).
        ClassError: no class has this code, or it expired; ``actor`` teaches the class.
    """
    require(actor, "join-class", message="log in to join a class")
    if not isinstance(actor, Account):
        raise ClassError("the operator has no account to join a class with.")
    row = class_by_code(store, code, _now(now))
    if actor.id in row.teacher_ids:
        raise ClassError(f"you teach {row.name}: a teacher does not join as a student.")
    # "account": an account of the user's own, not one the class made (never reset by a
    # teacher: reset_password)
    new = stored.add_member(store, row.id, actor.id, _real_name(real_name), "account")
    return Joined(row, new)


# --- the roster: accounts a teacher makes, first-time passwords -------------------------------


def preview_roster(
    store: Store,
    actor: Actor,
    name: str,
    text: str,
    *,
    mapping: list[str] | None = None,
    logins: str = "pseudonym",
    flagged: str = "skip",
) -> RosterPreview:
    """What importing the roster file ``text`` (its text: arena.service.class_roster's
    decode_roster reads a file's bytes) into the class will do, with nothing made: the
    format and columns recognised (``mapping``: the teacher's choice of each column's role),
    and each student made, updated, unchanged or flagged (a namesake without its school id
    is in the class). The page, the API and the CLI show it before :func:`import_roster`.

    Raises:
        NotFound, PermissionDenied: as :func:`class_for_teacher`.
        ClassError: the file is refused (the message says why), or a bad choice.
    """
    row = class_for_teacher(store, actor, name)
    return preview_of(store, row.id, row.name, text, mapping, logins, flagged)


def import_roster(
    store: Store,
    actor: Actor,
    name: str,
    text: str,
    hasher: PasswordHasher,
    *,
    mapping: list[str] | None = None,
    logins: str = "pseudonym",
    flagged: str = "skip",
) -> RosterImported:
    """Import the roster file ``text`` into the class as :func:`preview_roster` shows it: an
    account for each student made (a pseudonym, or the school's login with ``logins``
    ``school``; a random first-time password the student must change at the first login),
    the members its school ids name updated (real name, section: never a second account),
    flagged students skipped (or linked, or made: ``flagged``). Returns the logins made with
    their passwords (shown once: only hashes are kept). All or nothing.

    Raises:
        NotFound, PermissionDenied: as :func:`class_for_teacher`.
        ClassError: as :func:`preview_roster`; the class changed while it was imported.
        ServerBusy: another roster is being hashed in this process (arena.service.class_roster).
    """
    row = class_for_teacher(store, actor, name)
    preview = preview_of(store, row.id, row.name, text, mapping, logins, flagged)
    made = [s for s in preview.students if s.action == "make"]
    taken = {name_key(s.login) for s in made if s.login}
    drawn = iter(free_pseudonyms(store, sum(1 for s in made if not s.login), taken))
    names = [s.login or next(drawn) for s in made]
    passwords = [first_time_password() for _ in made]
    digests = hash_first_time(hasher, passwords, roster=True)
    users = [
        stored.NewUser(login, digest, s.real_name, s.school_id, s.section)
        for login, digest, s in zip(names, digests, made, strict=True)
    ]
    changes = [
        stored.MemberUpdate(s.user_id, s.real_name, s.school_id, s.section)
        for s in preview.students
        if s.action == "update" and s.user_id is not None
    ]
    if stored.insert_students(store, row.id, users, updates=changes) is None:
        raise ClassError("the class or a login changed while the roster was read: import it again.")
    logger.info("class %s: roster by %s: %d made, %d updated", row.name, _who(actor),
                len(users), len(changes))  # fmt: skip
    return RosterImported(
        row.name,
        [RosterLogin(s.real_name, n, p) for s, n, p in zip(made, names, passwords, strict=True)],
        [s.login or "" for s in preview.students if s.action == "update"],
        [s.login or "" for s in preview.students if s.action == "unchanged"],
        [s.real_name for s in preview.students if s.action == "flagged"],
    )


def login_to_change(store: Store, actor: Actor, row: ClassRow) -> str | None:
    """The login ``actor`` may still change (:func:`change_own_login`): theirs if a roster of
    the class made it and they have no role, no bot and no upload yet; else None."""
    if not isinstance(actor, Account) or actor.role != "user":
        return None
    return actor.name if stored.renamable(store, actor.id, row.id) else None


def change_own_login(store: Store, actor: Actor, new_name: str) -> Account:
    """The logged-in ``actor`` (a user without a role: a student) takes the login
    ``new_name`` instead of the pseudonym a roster gave it, while nothing public holds its
    name (no bot and no upload yet). Returns the account renamed.

    Raises:
        PermissionDenied: nobody is logged in (or the operator).
        ParseError: ``new_name`` is not a valid user name.
        ClassError: the name is taken; the account holds a role, or has a bot or an upload.
    """
    require(actor, "change-password", message="log in to change your login")
    if not isinstance(actor, Account):
        raise ClassError("the operator has no login to change.")
    name = user_name(new_name)
    if actor.role != "user":
        raise ClassError(f"a {actor.role}'s login is changed by an admin only.")
    refused = stored.rename_user(store, actor.id, name)
    if refused == "taken":
        raise ClassError(f"the login {name!r} is taken: choose another.")
    if refused is not None:
        raise ClassError(
            "your login can be changed only until your first upload: your bots are known by it."
        )
    logger.info("user %s is now %s", actor.name, name)
    return dataclasses.replace(actor, name=name)


def reset_password(
    store: Store, actor: Actor, name: str, student: str, hasher: PasswordHasher
) -> str:
    """Give the class's student ``student`` a new first-time password (returned: shown
    once), which it must change at its next login; its sessions end.

    Raises:
        NotFound, PermissionDenied: as :func:`class_for_teacher`; NotFound also when
            ``student`` is not a student of the class.
        ClassError: the student holds a role above ``user``, or joined with an account of
            their own (:func:`join_as`): only an admin may reset it.
        ServerBusy: the hashing bound has no free slot.
    """
    row = class_for_teacher(store, actor, name)
    key = name_key(student)
    member = next((m for m in stored.member_rows(store, row.id) if name_key(m.name) == key), None)
    if member is None:
        raise NotFound(f"no student {student.strip()!r} in class {row.name}")
    role = stored.user_role(store, member.user_id)
    if ROLE_RANKS.get(role or "user", 0) > ROLE_RANKS["user"] and not allowed(
        actor, "manage-users"
    ):
        raise ClassError(
            f"{member.name} is a {role}: only an admin may reset the password of a teacher, "
            "an organiser or an admin."
        )
    if member.via == "account" and not allowed(actor, "manage-users"):
        raise ClassError(
            f"{member.name} joined with an account of their own: only an admin may reset its "
            "password."
        )
    password = first_time_password()
    stored.reset_password(store, member.user_id, hash_first_time(hasher, [password])[0])
    logger.info("class %s: %s's password reset by %s", row.name, member.name, _who(actor))
    return password


# --- class tournaments -----------------------------------------------------------------------

#: Games a pair plays in a class tournament, at most (as a tournament an account creates).
MAX_CLASS_GAMES = 1000
#: The most games a class tournament plays in all (its pairs times its games a pair): a
#: class of 500 at 1000 games a pair would be 124,750 matches made in one request.
MAX_CLASS_TOURNAMENT_GAMES = 20_000


def start_class_tournament(
    store: Store,
    actor: Actor,
    name: str,
    *,
    reference: bool,
    rules: str | None = None,
    games: int = 10,
    now: datetime | None = None,
) -> int:
    """One click: a round robin between the latest versions the class's students submitted
    to its assignments (each student's latest submission; never a bot it did not submit,
    nor a competition entry), with the reference bots' latest versions if
    ``reference``, ``games`` games a pair under ``rules`` (default: the class's first rule
    set), owned by ``actor`` (who may cancel it); its matches are sent to the workers.
    Return the tournament's id (it is called ``CLASS-YYYYMMDD-HHMMSS``).

    Raises:
        NotFound, PermissionDenied: as :func:`class_for_teacher`.
        ClassError: a rule set the class does not play, games out of bounds, fewer than two
            bots.
    """
    row = class_for_teacher(store, actor, name)
    rules = (rules or row.rule_sets[0]).strip()
    if rules not in row.rule_sets:
        raise ClassError(f"class {row.name} plays {', '.join(row.rule_sets)}, not {rules!r}.")
    if not 1 <= games <= MAX_CLASS_GAMES:
        raise ClassError(f"games must be 1 to {MAX_CLASS_GAMES}, not {games}.")
    students = {m.user_id: m.name for m in stored.member_rows(store, row.id)}
    latest = {user_id: v for user_id, v in stored.submitted_versions(store, row.id)}
    entrants = [
        Entrant.stored(fit_name(students[user_id]), version_id)
        for user_id, version_id in sorted(latest.items())
        if user_id in students
    ]
    if reference:
        entrants += [
            Entrant.stored(fit_name(f"{REFERENCE_OWNER}.{bot}"), version_id)
            for bot, version_id in stored.owner_latest_versions(store, REFERENCE_OWNER)
        ]
    if len(entrants) < 2:
        raise ClassError(
            f"a tournament needs two bots at least: the students of class {row.name} have "
            f"submitted {len(entrants)} to its assignments so far."
        )
    pairs = len(entrants) * (len(entrants) - 1) // 2
    if pairs * games > MAX_CLASS_TOURNAMENT_GAMES:
        most = max(1, MAX_CLASS_TOURNAMENT_GAMES // pairs)
        raise ClassError(
            f"{len(entrants)} bots at {games} games a pair would play {pairs * games:,} games, "
            f"more than {MAX_CLASS_TOURNAMENT_GAMES:,}: choose {most} games a pair or fewer."
        )
    moment = _now(now)
    title = fit_name(f"{row.name}-{moment:%Y%m%d-%H%M%S}")
    tournament_id, _ = create_stored_tournament(
        store, name=title, rules=preset(rules), format="round-robin", entrants=entrants,
        games_per_match=games, seed=secrets.randbits(62), owner_id=actor_id(actor),
    )  # fmt: skip
    dispatch_matches(store, tournament_id)
    logger.info("class %s: tournament %s started by %s", row.name, title, _who(actor))
    return tournament_id


# --- quotas -----------------------------------------------------------------------------------

#: Uploads pending longer than this do not count against the class's checks queued (a lost
#: check must not close its students' uploads).
STALE_CHECK = timedelta(minutes=15)


def enforce_class_quotas(store: Store, user_id: int, *, now: datetime | None = None) -> None:
    """Refuse an upload by a student over a quota of one of its classes: its uploads in the
    last hour (``uploads_per_hour``), or the class's checks waiting (``checks_queued``).
    Users in no class have no quota here.

    Raises:
        ClassError: over a quota (the message says when to try again).
    """
    classes = stored.quota_settings(store, user_id)
    if not classes:
        return
    moment = _now(now)
    made = stored.recent_uploads(store, user_id, moment - timedelta(hours=1))
    for _, name, settings in classes:
        per_hour = int(settings.get("uploads_per_hour", DEFAULT_SETTINGS["uploads_per_hour"]))
        if len(made) >= per_hour:
            again = made[len(made) - per_hour] + timedelta(hours=1)
            wait = max(1, int((again - moment).total_seconds() // 60) + 1)
            raise ClassError(
                f"you have made {len(made)} uploads in the last hour, the most class {name} "
                f"allows: try again in {wait} minute{'s' if wait > 1 else ''}."
            )
    for class_id, _, settings in classes:
        queued = int(settings.get("checks_queued", DEFAULT_SETTINGS["checks_queued"]))
        if stored.pending_checks(store, class_id, stale=STALE_CHECK) >= queued:
            raise ClassError("the class's checks are queued full: try again in a minute.")


def _who(actor: Actor) -> str:
    return "anonymous" if actor is None else actor.name
