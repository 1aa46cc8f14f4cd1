"""Reads and writes of the classes tables (``classes``, ``class_teachers``,
``class_members``) and of the users a class makes, for :mod:`arena.service.classes`.

Queries live in the store (docs/architecture.md): callers get plain values or frozen
dataclasses, never a session. Each function is one transaction. Checking who may do what
is the service's: nothing here checks a permission.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import bindparam, delete, func, or_, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from arena.compete.names import name_key, taken_message
from arena.errors import NameTaken
from arena.store.db import Store, as_utc
from arena.store.models import (
    Assignment,
    Bot,
    BotVersion,
    ClassMember,
    ClassTeacher,
    MatchSeat,
    SchoolClass,
    Submission,
    Upload,
    User,
    UserSession,
)
from arena.store.models import Rating as RatingRow

__all__ = [
    "ClassRow",
    "MemberRow",
    "MemberUpdate",
    "NewUser",
    "PrivacyFacts",
    "UploadFacts",
    "VersionFacts",
    "add_member",
    "add_teacher",
    "assignment_teachers",
    "class_row",
    "class_row_by_code",
    "class_rows_of",
    "decide_request",
    "insert_class",
    "insert_students",
    "latest_uploads",
    "latest_versions",
    "member_rows",
    "owner_latest_versions",
    "pending_checks",
    "privacy_facts",
    "quota_settings",
    "recent_uploads",
    "renamable",
    "rename_user",
    "requested_role",
    "reset_password",
    "role_request_rows",
    "set_join_code",
    "set_requested_role",
    "set_settings",
    "student_ids",
    "submission_teachers",
    "submitted_versions",
    "taken_keys",
    "teacher_ids",
    "user_role",
    "version_facts",
]


@dataclass(frozen=True, slots=True)
class ClassRow:
    """A class as the service reads it: its teachers' ids included."""

    id: int
    name: str
    description: str
    rule_sets: tuple[str, ...]
    join_code: str | None
    join_expires: datetime | None
    settings: dict[str, Any]
    created: datetime
    teacher_ids: frozenset[int]


@dataclass(frozen=True, slots=True)
class MemberRow:
    """A student of a class: the user's id and name, the real name the teacher knows
    (None: not given), how it joined (``code`` or ``roster``) and when, the id the school's
    system gives it and its section there (None: none)."""

    user_id: int
    name: str
    real_name: str | None
    via: str
    joined: datetime
    school_id: str | None = None
    section: str | None = None


@dataclass(frozen=True, slots=True)
class NewUser:
    """A user a roster import creates: its name, password hash and real name, and the
    school's id and section of its membership."""

    name: str
    digest: str
    real_name: str
    school_id: str | None = None
    section: str | None = None


@dataclass(frozen=True, slots=True)
class MemberUpdate:
    """A roster import's change to a student of the class: its real name, school id and
    section as the school's file gives them."""

    user_id: int
    real_name: str
    school_id: str | None
    section: str | None


def _aware(value: datetime | None) -> datetime | None:
    return None if value is None else as_utc(value)


def _teachers(session: Session, class_ids: Iterable[int]) -> dict[int, frozenset[int]]:
    found: dict[int, set[int]] = {}
    ids = list(class_ids)
    if ids:
        for class_id, user_id in session.execute(
            select(ClassTeacher.class_id, ClassTeacher.user_id).where(
                ClassTeacher.class_id.in_(ids)
            )
        ):
            found.setdefault(int(class_id), set()).add(int(user_id))
    return {class_id: frozenset(found.get(class_id, ())) for class_id in ids}


def _rows(session: Session, classes: Sequence[SchoolClass]) -> list[ClassRow]:
    teachers = _teachers(session, (c.id for c in classes))
    return [
        ClassRow(
            id=c.id,
            name=c.name,
            description=c.description or "",
            rule_sets=tuple(c.rule_sets or ()),
            join_code=c.join_code,
            join_expires=_aware(c.join_expires),
            settings=dict(c.settings or {}),
            created=as_utc(c.created),
            teacher_ids=teachers[c.id],
        )
        for c in classes
    ]


def insert_class(
    store: Store,
    *,
    name: str,
    description: str,
    created_by: int | None,
    rule_sets: Sequence[str],
    settings: dict[str, Any],
    join_code: str | None,
    join_expires: datetime | None,
) -> ClassRow:
    """Store the class ``name``, its creator (if an account) as its first teacher.

    Raises:
        NameTaken: a class called ``name``, in any case, exists already.
        ValueError: the join code is taken.
    """
    key = name_key(name)
    try:
        with store.write() as session:
            taken = session.scalar(select(SchoolClass.name).where(SchoolClass.name_key == key))
            if taken is not None:
                raise NameTaken(taken_message("a class", taken, name))
            row = SchoolClass(
                name=name,
                name_key=key,
                description=description or None,
                created_by=created_by,
                rule_sets=list(rule_sets),
                settings=dict(settings),
                join_code=join_code,
                join_expires=join_expires,
            )
            session.add(row)
            session.flush()
            if created_by is not None:
                session.add(ClassTeacher(class_id=row.id, user_id=created_by))
                session.flush()
            return _rows(session, [row])[0]
    except IntegrityError:  # a class of that name (in any case) came in meanwhile, or the code
        with store.read() as session:
            taken = session.scalar(select(SchoolClass.name).where(SchoolClass.name_key == key))
        if taken is not None:
            raise NameTaken(taken_message("a class", taken, name)) from None
        raise ValueError(f"the join code of the class {name!r} is taken") from None


def class_row(store: Store, name: str) -> ClassRow | None:
    """The class called ``name``, or None."""
    with store.read() as session:
        found = session.scalar(select(SchoolClass).where(SchoolClass.name == name))
        return None if found is None else _rows(session, [found])[0]


def class_row_by_code(store: Store, code: str) -> ClassRow | None:
    """The class whose current join code is ``code`` (expired or not), or None."""
    if "\x00" in code:  # no code has one, and PostgreSQL's text refuses it
        return None
    with store.read() as session:
        found = session.scalar(select(SchoolClass).where(SchoolClass.join_code == code))
        return None if found is None else _rows(session, [found])[0]


# The statements of :func:`class_rows_of` (built once: every page of the classes reads them,
# and building them cost more than the reads).
_CLASSES = select(SchoolClass).order_by(SchoolClass.name)
_CLASSES_TAUGHT = _CLASSES.join(ClassTeacher, ClassTeacher.class_id == SchoolClass.id).where(
    ClassTeacher.user_id == bindparam("user")
)
_CLASSES_JOINED = _CLASSES.join(ClassMember, ClassMember.class_id == SchoolClass.id).where(
    ClassMember.user_id == bindparam("user")
)


def class_rows_of(store: Store, user_id: int | None) -> tuple[list[ClassRow], list[ClassRow]]:
    """The classes the user teaches and those it is a student of, each by name (None:
    every class as taught, none joined: an admin's or the operator's view)."""
    with store.read() as session:
        if user_id is None:
            return _rows(session, session.scalars(_CLASSES).all()), []
        taught = session.scalars(_CLASSES_TAUGHT, {"user": user_id}).all()
        joined = session.scalars(_CLASSES_JOINED, {"user": user_id}).all()
        return _rows(session, taught), _rows(session, joined)


def set_join_code(store: Store, class_id: int, code: str | None, expires: datetime | None) -> bool:
    """Replace the class's join code; False if another class holds ``code`` (draw again)."""
    try:
        with store.write() as session:
            session.execute(
                update(SchoolClass)
                .where(SchoolClass.id == class_id)
                .values(join_code=code, join_expires=expires)
            )
        return True
    except IntegrityError:
        return False


def set_settings(store: Store, class_id: int, settings: dict[str, Any]) -> None:
    """Replace the class's settings (the service checked them)."""
    with store.write() as session:
        session.execute(
            update(SchoolClass).where(SchoolClass.id == class_id).values(settings=settings)
        )


@dataclass(frozen=True, slots=True)
class PrivacyFacts:
    """What a private class hides, as one read: the students of every private class
    (class id -> their user ids and names), and the classes ``viewer`` teaches or is a
    student of."""

    students: dict[int, dict[int, str]]
    viewer_classes: frozenset[int]


# Every class's settings (built once: its building cost more than the read).
_CLASS_SETTINGS = select(SchoolClass.id, SchoolClass.settings)


def privacy_facts(store: Store, viewer: int | None) -> PrivacyFacts:
    """The students of the private classes (``settings["private"]``) and the classes the
    user ``viewer`` belongs to (None: none)."""
    with store.read_columns() as connection:
        private = [
            int(class_id)
            for class_id, settings in connection.execute(_CLASS_SETTINGS)
            if (settings or {}).get("private")
        ]
        students: dict[int, dict[int, str]] = {class_id: {} for class_id in private}
        if private:
            for class_id, user_id, name in connection.execute(
                select(ClassMember.class_id, User.id, User.name)
                .join(User, User.id == ClassMember.user_id)
                .where(ClassMember.class_id.in_(private))
            ):
                students[int(class_id)][int(user_id)] = str(name)
        mine: set[int] = set()
        if private and viewer is not None:
            for table in (ClassMember, ClassTeacher):
                mine.update(
                    int(c)
                    for c in connection.scalars(
                        select(table.class_id).where(
                            table.user_id == viewer, table.class_id.in_(private)
                        )
                    )
                )
    return PrivacyFacts(students, frozenset(mine))


def submitted_versions(store: Store, class_id: int) -> list[tuple[int, int]]:
    """The bot versions the class's students submitted to its assignments (accepted
    submissions), oldest first: (user id, version id), each version once."""
    with store.read() as session:
        rows = session.execute(
            select(Submission.user_id, Submission.bot_version_id)
            .join(Assignment, Assignment.id == Submission.assignment_id)
            .where(Assignment.class_id == class_id, Submission.bot_version_id.is_not(None))
            .order_by(Submission.id)
        ).all()
    seen: dict[int, int] = {}
    for user_id, version_id in rows:
        if version_id is not None:
            seen.setdefault(int(version_id), int(user_id))
    return [(user_id, version_id) for version_id, user_id in seen.items()]


# The teachers of the classes a version, or a bot's any version, was submitted to (built
# once: every bot's page asks).
_TEACHERS = (
    select(ClassTeacher.user_id)
    .join(Assignment, Assignment.class_id == ClassTeacher.class_id)
    .join(Submission, Submission.assignment_id == Assignment.id)
)
_TEACHERS_OF_VERSION = _TEACHERS.where(Submission.bot_version_id == bindparam("key")).distinct()
_TEACHERS_OF_BOT = (
    _TEACHERS.join(BotVersion, BotVersion.id == Submission.bot_version_id)
    .where(BotVersion.bot_id == bindparam("key"))
    .distinct()
)


def submission_teachers(
    store: Store, *, version_id: int | None = None, bot_id: int | None = None
) -> frozenset[int]:
    """The teachers of the classes whose assignments were sent the version ``version_id``
    (or, with ``bot_id``, any version of that bot) as a submission."""
    query, value = (
        (_TEACHERS_OF_VERSION, version_id) if version_id is not None else (_TEACHERS_OF_BOT, bot_id)
    )
    with store.read() as session:
        return frozenset(int(t) for t in session.scalars(query, {"key": value}))


def assignment_teachers(store: Store, assignment_id: int) -> frozenset[int]:
    """The teachers of the class the assignment ``assignment_id`` belongs to."""
    with store.read() as session:
        return frozenset(
            int(t)
            for t in session.scalars(
                select(ClassTeacher.user_id)
                .join(Assignment, Assignment.class_id == ClassTeacher.class_id)
                .where(Assignment.id == assignment_id)
            )
        )


def add_teacher(store: Store, class_id: int, user_id: int) -> bool:
    """Make the user a teacher of the class; False if it was one already."""
    try:
        with store.write() as session:
            if session.scalar(
                select(ClassTeacher.id).where(
                    ClassTeacher.class_id == class_id, ClassTeacher.user_id == user_id
                )
            ):
                return False
            session.add(ClassTeacher(class_id=class_id, user_id=user_id))
        return True
    except IntegrityError:
        return False


def add_member(store: Store, class_id: int, user_id: int, real_name: str | None, via: str) -> bool:
    """Make the user a student of the class; False if it was one already (its real name
    is then kept as it was)."""
    try:
        with store.write() as session:
            if session.scalar(
                select(ClassMember.id).where(
                    ClassMember.class_id == class_id, ClassMember.user_id == user_id
                )
            ):
                return False
            session.add(
                ClassMember(class_id=class_id, user_id=user_id, real_name=real_name, via=via)
            )
        return True
    except IntegrityError:
        return False


def member_rows(store: Store, class_id: int) -> list[MemberRow]:
    """The class's students, by name."""
    with store.read() as session:
        rows = session.execute(
            select(
                User.id,
                User.name,
                ClassMember.real_name,
                ClassMember.via,
                ClassMember.joined,
                ClassMember.school_id,
                ClassMember.section,
            )
            .join(ClassMember, ClassMember.user_id == User.id)
            .where(ClassMember.class_id == class_id)
            .order_by(User.name_key)
        ).all()
    return [
        MemberRow(int(i), str(n), r, str(v), as_utc(j), school, section)
        for i, n, r, v, j, school, section in rows
    ]


def student_ids(store: Store, class_id: int) -> list[int]:
    """The user ids of the class's students, ascending."""
    with store.read() as session:
        return [
            int(user_id)
            for user_id in session.scalars(
                select(ClassMember.user_id)
                .where(ClassMember.class_id == class_id)
                .order_by(ClassMember.user_id)
            )
        ]


def teacher_ids(store: Store, class_id: int) -> frozenset[int]:
    """The user ids of the class's teachers."""
    with store.read() as session:
        return _teachers(session, [class_id])[class_id]


def latest_versions(store: Store, class_id: int) -> dict[int, int]:
    """Each student's most recent bot version (of any of its bots): user id -> version id
    (students without a version are absent)."""
    with store.read() as session:
        rows = session.execute(
            select(Bot.owner_id, func.max(BotVersion.id))
            .join(Bot, Bot.id == BotVersion.bot_id)
            .join(ClassMember, ClassMember.user_id == Bot.owner_id)
            .where(ClassMember.class_id == class_id)
            .group_by(Bot.owner_id)
        ).all()
    return {int(user_id): int(version_id) for user_id, version_id in rows}


def taken_keys(store: Store, keys: Sequence[str]) -> set[str]:
    """Which of these name keys a user holds already."""
    with store.read() as session:
        return {
            str(k) for k in session.scalars(select(User.name_key).where(User.name_key.in_(keys)))
        }


def insert_students(
    store: Store,
    class_id: int,
    users: Sequence[NewUser],
    *,
    must_change: bool = True,
    updates: Sequence[MemberUpdate] = (),
) -> list[int] | None:
    """Create ``users`` (role ``user``, ``must_change_password``) and make them students
    of the class (``via`` roster), and apply ``updates`` to its students, in one
    transaction; the new users' ids, or None (nothing written) if a name's key is taken, a
    school id is another student's of the class, or an updated student has left it."""
    try:
        with store.write() as session:
            _update_members(session, class_id, updates)
            keys = [name_key(u.name) for u in users]
            if keys and session.scalar(select(User.id).where(User.name_key.in_(keys)).limit(1)):
                raise _ConflictError
            made = [
                User(
                    name=u.name,
                    name_key=key,
                    password_hash=u.digest,
                    role="user",
                    must_change_password=must_change,
                )
                for u, key in zip(users, keys, strict=True)
            ]
            session.add_all(made)
            session.flush()
            session.add_all(
                ClassMember(
                    class_id=class_id,
                    user_id=user.id,
                    real_name=u.real_name or None,
                    via="roster",
                    school_id=u.school_id,
                    section=u.section,
                )
                for user, u in zip(made, users, strict=True)
            )
            session.flush()
            return [user.id for user in made]
    except (IntegrityError, _ConflictError):
        return None


class _ConflictError(Exception):
    """What rolls a roster's transaction back (caught in :func:`insert_students`)."""


def _update_members(session: Session, class_id: int, updates: Sequence[MemberUpdate]) -> None:
    where = [ClassMember.class_id == class_id]
    ids = [u.user_id for u in updates]
    if not ids:
        return
    # the ids cleared first: one may move from a student to another within the import
    cleared = session.execute(
        update(ClassMember)
        .where(*where, ClassMember.user_id.in_(ids))
        .values(school_id=None)
        .execution_options(synchronize_session=False)
    )
    if cleared.rowcount != len(set(ids)):  # type: ignore[attr-defined]
        raise _ConflictError
    for change in updates:
        session.execute(
            update(ClassMember)
            .where(*where, ClassMember.user_id == change.user_id)
            .values(
                real_name=change.real_name or None,
                school_id=change.school_id,
                section=change.section,
            )
            .execution_options(synchronize_session=False)
        )


def user_role(store: Store, user_id: int) -> str | None:
    """The user's role, or None if there is no such user."""
    with store.read() as session:
        role = session.scalar(select(User.role).where(User.id == user_id))
        return None if role is None else str(role)


def reset_password(store: Store, user_id: int, digest: str) -> bool:
    """Give the user the password hash ``digest`` as a first-time password (it must change
    it at its next login) and end its sessions; False if there is no such user."""
    with store.write() as session:
        user = session.get(User, user_id, with_for_update=True)
        if user is None:
            return False
        user.password_hash = digest
        user.must_change_password = True
        user.session_epoch += 1
        session.execute(delete(UserSession).where(UserSession.user_id == user_id))
        return True


def recent_uploads(store: Store, user_id: int, since: datetime) -> list[datetime]:
    """When the user's uploads since ``since`` were made, oldest first."""
    with store.read() as session:
        return [
            as_utc(created)
            for created in session.scalars(
                select(Upload.created)
                .where(Upload.owner_id == user_id, Upload.created >= since)
                .order_by(Upload.created)
            )
        ]


def quota_settings(store: Store, user_id: int) -> list[tuple[int, str, dict[str, Any]]]:
    """The classes the user is a student of: (id, name, settings) each."""
    with store.read() as session:
        rows = session.execute(
            select(SchoolClass.id, SchoolClass.name, SchoolClass.settings)
            .join(ClassMember, ClassMember.class_id == SchoolClass.id)
            .where(ClassMember.user_id == user_id)
            .order_by(SchoolClass.id)
        ).all()
    return [(int(i), str(n), dict(s or {})) for i, n, s in rows]


def pending_checks(store: Store, class_id: int, *, stale: timedelta) -> int:
    """Uploads of the class's students still waiting for their check (those created more
    than ``stale`` ago are not counted: a lost check must not close the class's uploads)."""
    since = datetime.now(UTC) - stale
    with store.read() as session:
        return int(
            session.scalar(
                select(func.count())
                .select_from(Upload)
                .join(ClassMember, ClassMember.user_id == Upload.owner_id)
                .where(
                    ClassMember.class_id == class_id,
                    Upload.status == "pending",
                    Upload.created >= since,
                )
            )
            or 0
        )


@dataclass(frozen=True, slots=True)
class VersionFacts:
    """A bot version as a class's roster shows it: its bot, number, when it was stored,
    its check report, its rating under one rule set (None: unrated) and the games it
    forfeited."""

    version_id: int
    bot: str
    version: int
    created: datetime
    report: dict[str, Any]
    rating: tuple[float, float, float, int] | None
    faults: int


@dataclass(frozen=True, slots=True)
class UploadFacts:
    """A student's latest upload: its id, status, message and when it was made."""

    upload_id: int
    bot: str
    status: str
    message: str | None
    created: datetime


def version_facts(
    store: Store, version_ids: Sequence[int], rule_set_id: int | None
) -> dict[int, VersionFacts]:
    """The roster's facts of these bot versions, by id (unknown ids are absent)."""
    if not version_ids:
        return {}
    ids = list(version_ids)
    with store.read() as session:
        versions = session.execute(
            select(BotVersion.id, Bot.name, BotVersion.version, BotVersion.created,
                   BotVersion.report)
            .join(Bot, Bot.id == BotVersion.bot_id)
            .where(BotVersion.id.in_(ids))
        ).all()  # fmt: skip
        ratings: dict[int, tuple[float, float, float, int]] = {}
        if rule_set_id is not None:
            ratings = {
                int(v): (float(r), float(lo), float(hi), int(g))
                for v, r, lo, hi, g in session.execute(
                    select(RatingRow.bot_version_id, RatingRow.rating, RatingRow.low,
                           RatingRow.high, RatingRow.games)
                    .where(RatingRow.rule_set_id == rule_set_id,
                           RatingRow.bot_version_id.in_(ids))
                )
            }  # fmt: skip
        faults = {
            int(v): int(n or 0)
            for v, n in session.execute(
                select(MatchSeat.bot_version_id, func.sum(MatchSeat.faults))
                .where(MatchSeat.bot_version_id.in_(ids))
                .group_by(MatchSeat.bot_version_id)
            )
        }
    return {
        int(i): VersionFacts(int(i), str(bot), int(number), as_utc(created), dict(report or {}),
                             ratings.get(int(i)), faults.get(int(i), 0))
        for i, bot, number, created, report in versions
    }  # fmt: skip


def latest_uploads(store: Store, user_ids: Sequence[int]) -> dict[int, UploadFacts]:
    """Each of these users' latest upload, by user id (users with none are absent)."""
    if not user_ids:
        return {}
    with store.read() as session:
        newest = (
            select(func.max(Upload.id))
            .where(Upload.owner_id.in_(list(user_ids)))
            .group_by(Upload.owner_id)
            .scalar_subquery()
        )
        rows = session.execute(
            select(Upload.owner_id, Upload.id, Upload.bot_name, Upload.status, Upload.message,
                   Upload.created)
            .where(Upload.id.in_(newest))
        ).all()  # fmt: skip
    return {
        int(owner): UploadFacts(int(i), str(bot), str(status), message, as_utc(created))
        for owner, i, bot, status, message, created in rows
    }


def owner_latest_versions(store: Store, owner: str) -> list[tuple[str, int]]:
    """Each bot of the user ``owner`` (the reference bots: ``reference``) as (its name, its
    latest version's id), by name."""
    with store.read() as session:
        rows = session.execute(
            select(Bot.name, func.max(BotVersion.id))
            .join(BotVersion, BotVersion.bot_id == Bot.id)
            .join(User, User.id == Bot.owner_id)
            .where(User.name == owner)
            .group_by(Bot.name)
            .order_by(Bot.name)
        ).all()
    return [(str(bot), int(version_id)) for bot, version_id in rows]


# --- role requests ----------------------------------------------------------------------------


def set_requested_role(store: Store, user_id: int, role: str | None, at: datetime | None) -> None:
    """Record (or, with None, clear) the role the user asked for and when."""
    with store.write() as session:
        session.execute(
            update(User).where(User.id == user_id).values(requested_role=role, requested_at=at)
        )


def requested_role(store: Store, user_id: int) -> tuple[str, datetime | None] | None:
    """The role the user asked for and when, or None."""
    with store.read() as session:
        found = session.execute(
            select(User.requested_role, User.requested_at).where(User.id == user_id)
        ).first()
    if found is None or found[0] is None:
        return None
    return str(found[0]), _aware(found[1])


def role_request_rows(store: Store) -> list[tuple[str, str, str, datetime | None]]:
    """Every pending role request as (user name, its role, the role asked for, when), the
    oldest first."""
    with store.read() as session:
        rows = session.execute(
            select(User.name, User.role, User.requested_role, User.requested_at)
            .where(User.requested_role.is_not(None))
            .order_by(User.requested_at, User.id)
        ).all()
    return [(str(n), str(r), str(q), _aware(at)) for n, r, q, at in rows]


def decide_request(store: Store, name: str, grant: bool) -> tuple[int, str, str] | None:
    """Grant (the user gets the role it asked for) or refuse the pending request of the
    user called ``name`` (its exact name, else its key); its request is cleared either way.
    Return (user id, name, role afterwards), or None (no such user, or no request)."""
    with store.write() as session:
        user = session.scalar(
            select(User)
            .where(or_(User.name == name, User.name_key == name_key(name)))
            .with_for_update()
        )
        if user is None or user.requested_role is None:
            return None
        if grant:
            user.role = user.requested_role
        user.requested_role, user.requested_at = None, None
        session.flush()
        return int(user.id), str(user.name), str(user.role)


def rename_user(store: Store, user_id: int, name: str) -> str | None:
    """Give the user the name ``name`` (a valid user name) if it has no bot and no upload
    yet (nothing public holds its name): None, or why not (``taken``, ``bots``, ``gone``)."""
    try:
        with store.write() as session:
            user = session.get(User, user_id, with_for_update=True)
            if user is None:
                return "gone"
            if _owns_anything(session, user_id):
                return "bots"
            key = name_key(name)
            holder = session.scalar(select(User.id).where(User.name_key == key))
            if holder is not None and holder != user_id:
                return "taken"
            user.name, user.name_key = name, key
        return None
    except IntegrityError:
        return "taken"


def _owns_anything(session: Session, user_id: int) -> bool:
    owned = select(Bot.id).where(Bot.owner_id == user_id).limit(1)
    sent = select(Upload.id).where(Upload.owner_id == user_id).limit(1)
    return session.scalar(owned) is not None or session.scalar(sent) is not None


def renamable(store: Store, user_id: int, class_id: int) -> bool:
    """Whether the user came into the class by its roster and has no bot and no upload
    yet (:func:`rename_user` would rename it)."""
    with store.read() as session:
        via = session.scalar(
            select(ClassMember.via).where(
                ClassMember.class_id == class_id, ClassMember.user_id == user_id
            )
        )
        return via == "roster" and not _owns_anything(session, user_id)
