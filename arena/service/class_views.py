"""What a class's pages, API and command line show, and who sees it (docs/classes.md):
:mod:`arena.service.classes` re-exports every name here.

- Who sees a class: :func:`find_class`, :func:`class_for_teacher` (its teachers, admins,
  the operator; a stranger gets NotFound, its students PermissionDenied),
  :func:`class_for_member` (also its students), :func:`is_teacher`, :func:`my_classes`.
- A student's bot as permissions see it: :func:`bot_target` (its owner, and the teachers
  of every class its owner is a student of: they read its source, faults and uploads'
  reports; strangers and other students never).
- The teacher's roster (:func:`roster_view`: each student's latest version, when it was
  stored, its latest upload's check, its rating with interval under the class's rule set,
  the games it forfeited, its real name) and the class leaderboard
  (:func:`class_leaderboard`: the students' bots, and the reference bots if asked; no real
  name).
"""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from arena.errors import ArenaError, NotFound
from arena.service.board_views import REFERENCE_OWNER, LeaderboardRow, leaderboard, rank_ranges
from arena.service.bot_views import bot_list
from arena.service.display import BotName
from arena.service.permissions import Actor, Operator, Target, actor_id, allowed, require
from arena.service.shapes import ELO, about
from arena.store import classes as stored
from arena.store.boards import newest_rule_set_id
from arena.store.bots import BotRow
from arena.store.classes import ClassRow, MemberRow
from arena.store.db import Store

__all__ = [
    "MAX_REAL_NAME",
    "ClassError",
    "ClassLeaderboard",
    "ClassView",
    "RosterRow",
    "RosterView",
    "bot_target",
    "class_bots",
    "class_for_member",
    "class_for_teacher",
    "class_leaderboard",
    "class_target",
    "class_view",
    "find_class",
    "is_teacher",
    "latest_versions",
    "my_classes",
    "roster_view",
    "student_ids",
    "student_names",
]

logger = logging.getLogger(__name__)

#: The longest real name, in characters.
MAX_REAL_NAME = 200


class ClassError(ArenaError):
    """A class's setting or an action on a class is refused (the message says why, in one
    sentence, shown as it is: a form's 400, the API's JSON error)."""


# --- finding a class, and who sees it ---------------------------------------------------------


def find_class(store: Store, name: str) -> ClassRow:
    """The class called ``name``.

    Raises:
        NotFound: there is none.
    """
    row = None if "\x00" in name else stored.class_row(store, name.strip())
    if row is None:
        raise NotFound(f"no class {name.strip()!r}")
    return row


def class_target(row: ClassRow) -> Target:
    return Target(None, teachers=row.teacher_ids)


def is_teacher(store: Store, actor: Actor, class_id: int) -> bool:
    """Whether ``actor`` may act as a teacher of the class ``class_id``: one of its
    teachers, an admin, or the operator (``manage-class``)."""
    if actor is None:
        return False
    if isinstance(actor, Operator) or allowed(actor, "manage-class"):
        return True
    return actor.id in stored.teacher_ids(store, class_id)


def _is_member(store: Store, actor: Actor, row: ClassRow) -> bool:
    return (
        actor is not None
        and not isinstance(actor, Operator)
        and (actor.id in stored.student_ids(store, row.id))
    )


def class_for_teacher(store: Store, actor: Actor, name: str) -> ClassRow:
    """The class ``name``, if ``actor`` teaches it (or is an admin, or the operator).

    Raises:
        NotFound: no such class, or ``actor`` is neither its teacher nor its student (a
            class is not acknowledged to strangers).
        PermissionDenied: ``actor`` is a student of it (or not logged in).
    """
    row = find_class(store, name)
    if allowed(actor, "manage-class", class_target(row)):
        return row
    if actor is None or _is_member(store, actor, row):
        require(
            actor,
            "manage-class",
            class_target(row),
            message="only the class's teachers may do this",
        )
    raise NotFound(f"no class {row.name!r}")


def class_for_member(store: Store, actor: Actor, name: str) -> ClassRow:
    """The class ``name``, if ``actor`` is one of its students or may teach it.

    Raises:
        NotFound: no such class, or ``actor`` is a stranger to it.
        PermissionDenied: nobody is logged in.
    """
    row = find_class(store, name)
    if allowed(actor, "manage-class", class_target(row)) or _is_member(store, actor, row):
        return row
    if actor is None:
        require(actor, "manage-class", message="log in to see your class")
    raise NotFound(f"no class {row.name!r}")


def my_classes(store: Store, actor: Actor) -> tuple[list[ClassRow], list[ClassRow]]:
    """The classes ``actor`` teaches and those it is a student of, each by name (an admin
    and the operator see every class as taught; anonymous: none)."""
    if actor is None:
        return [], []
    if isinstance(actor, Operator) or allowed(actor, "manage-class"):
        every, _ = stored.class_rows_of(store, None)
        _, joined = stored.class_rows_of(store, actor_id(actor) or -1)
        return every, joined
    return stored.class_rows_of(store, actor.id)


@dataclass(frozen=True, slots=True)
class ClassView:
    """A class as a member sees it: its join code and its students' count for its
    teachers only."""

    name: str
    description: str
    rule_sets: tuple[str, ...] = field(metadata=about("preset names, the first the default"))
    settings: dict[str, Any] = field(
        metadata=about("uploads_per_hour, checks_queued, show_reference")
    )
    teaching: bool = field(metadata=about("the caller is a teacher of it (or an admin)"))
    students: int | None = field(metadata=about("how many (teachers only)"))
    join_code: str | None = field(metadata=about("teachers only; null: closed"))
    join_expires: datetime | None
    created: datetime


def class_view(store: Store, actor: Actor, row: ClassRow) -> ClassView:
    """The class ``row`` as ``actor`` sees it (:class:`ClassView`)."""
    teaching = is_teacher(store, actor, row.id)
    return ClassView(
        name=row.name, description=row.description, rule_sets=row.rule_sets,
        settings=row.settings, teaching=teaching,
        students=len(stored.student_ids(store, row.id)) if teaching else None,
        join_code=row.join_code if teaching else None,
        join_expires=row.join_expires if teaching else None, created=row.created,
    )  # fmt: skip


def student_names(store: Store, actor: Actor, name: str) -> list[str]:
    """The pseudonyms of the students of the class ``name``, by name (its members and
    teachers only).

    Raises:
        NotFound: no such class, or ``actor`` is a stranger to it.
        PermissionDenied: nobody is logged in.
    """
    row = class_for_member(store, actor, name)
    return [member.name for member in stored.member_rows(store, row.id)]


def class_bots(store: Store, actor: Actor, name: str, *, reference: bool = False) -> list[BotRow]:
    """The bots of the class's students (and the reference bots with ``reference``), the
    most recently updated first (as :func:`student_names` checks).

    Raises:
        NotFound: no such class, or ``actor`` is a stranger to it.
        PermissionDenied: nobody is logged in.
    """
    owners = set(student_names(store, actor, name))
    if reference:
        owners.add(REFERENCE_OWNER)
    return [row for row in bot_list(store) if row.owner in owners]


def student_ids(store: Store, class_id: int) -> list[int]:
    """The user ids of the class's students, ascending."""
    return stored.student_ids(store, class_id)


def latest_versions(store: Store, class_id: int) -> dict[int, int]:
    """Each student's most recent bot version, of any of its bots: user id -> bot version
    id (students with no version are absent). Assignments keep their own submissions."""
    return stored.latest_versions(store, class_id)


def bot_target(store: Store, owner_id: int | None) -> Target:
    """The permission target of a bot (its source, faults, uploads' reports) owned by
    ``owner_id``: its owner, and the teachers of every class the owner is a student of."""
    if owner_id is None:
        return Target(None)
    return Target(owner_id, teachers=stored.teachers_of_student(store, owner_id))


# --- the teacher's roster ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RosterRow:
    """A student as the class's teachers see it.

    Attributes:
        student, real_name, via, joined: the user's name (its pseudonym), the real name the
            teacher knows (None: not given), how it joined (``code``, ``roster``) and when.
        school_id, section: the id the school's system gives the student and its section
            there (a roster import keeps them; None: none).
        version: its most recent bot version (of any of its bots; None: none yet), and
            ``uploaded`` when it was stored.
        check: that version's check report, as stored (games, faults, timing).
        rating, low, high, games: its rating with its 95% interval under the class's rule
            set (None: not rated yet).
        faults: games that version forfeited (timeouts, crashes, illegal moves).
        upload_id, upload_status, upload_message, upload_created: its latest upload, which
            may be newer than ``version`` (pending, or rejected: the message says why).
    """

    student: str
    real_name: str | None
    via: str = field(metadata=about("code (a new account), roster, or account (an existing one)"))
    joined: datetime
    school_id: str | None = field(
        default=None, metadata=about("the school's id of the student (SIS id, number, e-mail)")
    )
    section: str | None = field(default=None, metadata=about("the school's section or group"))
    version: BotName | None = field(
        default=None, metadata=about("owner/bot vN: the latest version")
    )
    version_id: int | None = None
    uploaded: datetime | None = None
    check: dict[str, Any] | None = field(
        default=None, metadata=about("the latest version's check report")
    )
    rating: float | None = field(default=None, metadata=ELO)
    low: float | None = field(default=None, metadata=ELO)
    high: float | None = field(default=None, metadata=ELO)
    games: int = 0
    faults: int = field(default=0, metadata=about("games the latest version forfeited"))
    upload_id: int | None = None
    upload_status: str | None = None
    upload_message: str | None = None
    upload_created: datetime | None = None

    @property
    def check_summary(self) -> str:
        """The latest version's check in a few words (``-``: no version)."""
        if self.check is None:
            return "-"
        faults = len(self.check.get("faults") or [])
        played = int(self.check.get("games") or 0)
        return f"{played} games, {faults} fault{'s' * (faults != 1)}"


@dataclass(frozen=True, slots=True)
class RosterView:
    """A class's roster (teachers only): its students by name, under ``rules`` (the class's
    default rule set)."""

    name: str
    rules: str
    students: list[RosterRow]


def roster_view(store: Store, actor: Actor, name: str) -> RosterView:
    """The class's roster with each student's latest version, its check, rating and faults,
    and latest upload (its teachers, admins and the operator only).

    Raises:
        NotFound, PermissionDenied: as :func:`class_for_teacher`.
    """
    row = class_for_teacher(store, actor, name)
    rules = row.rule_sets[0] if row.rule_sets else "block"
    members = stored.member_rows(store, row.id)
    latest = stored.latest_versions(store, row.id)
    facts = stored.version_facts(store, list(latest.values()), newest_rule_set_id(store, rules))
    uploads = stored.latest_uploads(store, [m.user_id for m in members])
    return RosterView(row.name, rules, [_roster_row(m, latest, facts, uploads) for m in members])


def _roster_row(
    member: MemberRow,
    latest: dict[int, int],
    facts: dict[int, stored.VersionFacts],
    uploads: dict[int, stored.UploadFacts],
) -> RosterRow:
    shown = RosterRow(
        member.name, member.real_name, member.via, member.joined, member.school_id, member.section
    )
    upload = uploads.get(member.user_id)
    if upload is not None:
        shown = dataclasses.replace(
            shown, upload_id=upload.upload_id, upload_status=upload.status,
            upload_message=upload.message, upload_created=upload.created,
        )  # fmt: skip
    fact = facts.get(latest.get(member.user_id, -1))
    if fact is None:
        return shown
    rating, low, high, games = fact.rating or (None, None, None, 0)
    return dataclasses.replace(
        shown, version=BotName(member.name, fact.bot, fact.version), version_id=fact.version_id,
        uploaded=fact.created, check=fact.report, rating=rating, low=low, high=high,
        games=games, faults=fact.faults,
    )  # fmt: skip


# --- the class leaderboard --------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ClassLeaderboard:
    """A class's leaderboard under ``rules``: its students' bots (each bot's latest rated
    version), and the reference bots when shown; ranks among the rows shown."""

    name: str
    rules: str
    computed: datetime | None
    rows: list[LeaderboardRow]


def class_leaderboard(
    store: Store,
    actor: Actor,
    name: str,
    *,
    show_reference: bool | None = None,
    rules: str | None = None,
) -> ClassLeaderboard:
    """The class's leaderboard under ``rules`` (default: its first rule set): its students'
    bots, with the reference bots if ``show_reference`` (default: the class's setting);
    pseudonyms only (its students and teachers see it).

    Raises:
        NotFound, PermissionDenied: as :func:`class_for_member`; NotFound also for a rule
            set the class does not play.
    """
    row = class_for_member(store, actor, name)
    rules = rules or (row.rule_sets[0] if row.rule_sets else "block")
    if rules not in row.rule_sets:
        raise NotFound(f"class {row.name} does not play {rules!r}")
    if show_reference is None:
        show_reference = bool(row.settings.get("show_reference", True))
    try:
        board = leaderboard(store, rules, hide_reference=not show_reference)
    except LookupError:
        return ClassLeaderboard(row.name, rules, None, [])
    students = {m.name for m in stored.member_rows(store, row.id)}
    kept = [r for r in board.rows if r.owner in students or r.owner == REFERENCE_OWNER]
    ranges = rank_ranges([(r.low, r.high) for r in kept])
    ranked = [
        dataclasses.replace(r, rank_best=best, rank_worst=worst)
        for r, (best, worst) in zip(kept, ranges, strict=True)
    ]
    return ClassLeaderboard(row.name, rules, board.computed, ranked)
