"""The assignments' tables: an assignment of a class, its submissions (their life: pending
while the upload is checked -> rejected | grading -> graded) and each submission's tests
(one compare tournament a reference, its verdict once it ended); and the reads behind an
assignment's pages and grade table.

Queries live in the store (docs/architecture.md): callers get frozen values, never a
session. Each function is one transaction. The service (arena.service.assignments) decides
who may do what; these functions keep the rows consistent, and every state change is
conditional on the state it leaves (safe to run twice, from any worker).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import and_, bindparam, func, or_, select, text, update
from sqlalchemy.orm import aliased

from arena.engine.rules import Rules
from arena.store.db import Store, as_utc
from arena.store.models import (
    Assignment,
    Bot,
    BotVersion,
    ClassMember,
    Match,
    Rating,
    RuleSet,
    SchoolClass,
    Submission,
    SubmissionTest,
    Tournament,
    Upload,
    User,
)

__all__ = [
    "AssignmentRow",
    "SubmissionRow",
    "TestRow",
    "VersionName",
    "add_tests",
    "assignment_by_id",
    "assignment_named",
    "assignments_of_class",
    "claim_grading",
    "class_name",
    "end_test",
    "games_done",
    "grade_submission",
    "grading_audience",
    "grading_tournaments",
    "insert_assignment",
    "insert_submission",
    "insert_version_submission",
    "member_names",
    "reject_submission",
    "stalled_submissions",
    "submission_of_upload",
    "submission_row",
    "submissions_of",
    "test_of_tournament",
    "tests_of",
    "unclaim_grading",
    "ungraded_tests",
    "upload_status",
    "version_id",
    "version_name",
    "version_ratings",
]


@dataclass(frozen=True, slots=True)
class AssignmentRow:
    """An assignment's row, with its rule set's name and parameters."""

    id: int
    class_id: int
    name: str
    description: str
    created_by: int | None
    rules: str
    rules_params: dict[str, Any]
    rule_set_id: int
    players: int
    teams: bool
    settings: dict[str, Any]
    references: tuple[dict[str, Any], ...]
    grades: tuple[dict[str, Any], ...]
    opens: datetime
    deadline: datetime
    time_zone: str
    seed: int
    created: datetime


@dataclass(frozen=True, slots=True)
class SubmissionRow:
    """A submission, with its student's name and its version's display name and hash."""

    id: int
    assignment_id: int
    user_id: int
    student: str
    upload_id: int | None
    bot_version_id: int | None
    version: str | None
    sha256: str | None
    status: str
    late: bool
    reason: str | None
    grade: str | None
    created: datetime
    accepted: datetime | None
    graded: datetime | None


@dataclass(frozen=True, slots=True)
class TestRow:
    """One test of a submission's gauntlet: its compare tournament, its verdict once ended."""

    id: int
    submission_id: int
    reference: str
    tournament_id: int
    tournament: str
    verdict: str | None
    summary: dict[str, Any] | None


@dataclass(frozen=True, slots=True)
class VersionName:
    """A stored bot version's owner, bot and number."""

    owner_id: int
    owner: str
    bot: str
    version: int

    @property
    def reference(self) -> str:
        """``OWNER/BOT@N``: a reference to exactly this version."""
        return f"{self.owner}/{self.bot}@{self.version}"


def _now(now: datetime | None) -> datetime:
    return datetime.now(UTC) if now is None else now


def _assignment(row: Assignment, rules: str, params: dict[str, Any]) -> AssignmentRow:
    return AssignmentRow(
        id=row.id, class_id=row.class_id, name=row.name, description=row.description or "",
        created_by=row.created_by, rules=rules, rules_params=dict(params),
        rule_set_id=row.rule_set_id, players=row.players, teams=row.teams,
        settings=dict(row.settings or {}),
        references=tuple(dict(r) for r in row.references or []),
        grades=tuple(dict(g) for g in row.grades or []),
        opens=as_utc(row.opens), deadline=as_utc(row.deadline), time_zone=row.time_zone,
        seed=int(row.seed), created=as_utc(row.created),
    )  # fmt: skip


def insert_assignment(
    store: Store, *, class_id: int, name: str, rules: Rules, values: dict[str, Any]
) -> int:
    """Store the assignment ``name`` of class ``class_id`` under ``rules`` with ``values``
    (its other columns); return its id.

    Raises:
        ValueError: the class has an assignment of that name already.
    """
    rule_set = store.ensure_rule_set(rules)
    with store.write() as session:
        if store.dialect == "postgresql":  # serialize creators of the same name
            key = f"assignment:{class_id}:{name}"
            session.execute(text("SELECT pg_advisory_xact_lock(hashtext(:n))"), {"n": key})
        taken = session.scalar(
            select(Assignment.id).where(Assignment.class_id == class_id, Assignment.name == name)
        )
        if taken is not None:
            raise ValueError(f"the class has an assignment called {name!r} already")
        row = Assignment(class_id=class_id, name=name, rule_set_id=rule_set.id, **values)
        session.add(row)
        session.flush()
        return row.id


def _assignments(store: Store, *where: Any) -> list[AssignmentRow]:
    with store.read() as session:
        found = session.execute(
            select(Assignment, RuleSet.name, RuleSet.params)
            .join(RuleSet, RuleSet.id == Assignment.rule_set_id)
            .where(*where)
            .order_by(Assignment.deadline, Assignment.id)
        ).all()
    return [_assignment(row, str(rules), params) for row, rules, params in found]


def assignment_named(store: Store, class_id: int, name: str) -> AssignmentRow | None:
    """The class's assignment called ``name``, or None."""
    found = _assignments(store, Assignment.class_id == class_id, Assignment.name == name)
    return found[0] if found else None


def assignment_by_id(store: Store, assignment_id: int) -> AssignmentRow | None:
    """The assignment ``assignment_id``, or None."""
    found = _assignments(store, Assignment.id == assignment_id)
    return found[0] if found else None


def assignments_of_class(store: Store, class_id: int) -> list[AssignmentRow]:
    """The class's assignments, by deadline."""
    return _assignments(store, Assignment.class_id == class_id)


# --- submissions ------------------------------------------------------------------------------


def insert_submission(
    store: Store,
    assignment_id: int,
    user_id: int,
    *,
    upload_id: int | None,
    version_id: int | None,
    late: bool,
    now: datetime | None = None,
) -> int:
    """Store a ``pending`` submission (an upload being checked, or a stored version about
    to be graded); return its id."""
    with store.write() as session:
        row = Submission(
            assignment_id=assignment_id, user_id=user_id, upload_id=upload_id,
            bot_version_id=version_id, status="pending", late=late, created=_now(now),
        )  # fmt: skip
        session.add(row)
        session.flush()
        return row.id


def insert_version_submission(
    store: Store,
    assignment_id: int,
    user_id: int,
    version_id: int,
    *,
    late: bool,
    since: datetime,
    now: datetime | None = None,
) -> tuple[int, bool]:
    """Store a ``pending`` submission of the stored version ``version_id``, unless the user
    submitted that very version to the assignment since ``since`` (a double submit, a
    retried request): (its id, whether it is new). Two callers at once store one: the
    check and the insert are one transaction, serialized (SQLite's ``BEGIN IMMEDIATE``,
    a PostgreSQL advisory lock on the assignment and the user)."""
    with store.write() as session:
        if store.dialect == "postgresql":
            key = f"submission:{assignment_id}:{user_id}"
            session.execute(text("SELECT pg_advisory_xact_lock(hashtext(:n))"), {"n": key})
        first = session.scalar(
            select(Submission.id)
            .where(
                Submission.assignment_id == assignment_id,
                Submission.user_id == user_id,
                Submission.bot_version_id == version_id,
                Submission.upload_id.is_(None),
                Submission.created >= since,
            )
            .order_by(Submission.id)
            .limit(1)
        )
        if first is not None:
            return int(first), False
        row = Submission(
            assignment_id=assignment_id, user_id=user_id, upload_id=None,
            bot_version_id=version_id, status="pending", late=late, created=_now(now),
        )  # fmt: skip
        session.add(row)
        session.flush()
        return row.id, True


def _submission_query() -> Any:
    return (
        select(Submission, User.name, Bot.name, BotVersion.version, BotVersion.sha256, User.id)
        .join(User, User.id == Submission.user_id)
        .outerjoin(BotVersion, BotVersion.id == Submission.bot_version_id)
        .outerjoin(Bot, Bot.id == BotVersion.bot_id)
    )


def _submission(found: Any) -> SubmissionRow:
    row, student, bot, number, sha256, _ = found
    version = None if bot is None else f"{student}/{bot}@{number}"
    return SubmissionRow(
        id=row.id, assignment_id=row.assignment_id, user_id=row.user_id, student=str(student),
        upload_id=row.upload_id, bot_version_id=row.bot_version_id, version=version,
        sha256=None if sha256 is None else str(sha256), status=row.status, late=bool(row.late),
        reason=row.reason, grade=row.grade, created=as_utc(row.created),
        accepted=None if row.accepted is None else as_utc(row.accepted),
        graded=None if row.graded is None else as_utc(row.graded),
    )  # fmt: skip


def submission_row(store: Store, submission_id: int) -> SubmissionRow | None:
    """The submission ``submission_id``, or None."""
    with store.read() as session:
        found = session.execute(_submission_query().where(Submission.id == submission_id)).first()
    return None if found is None else _submission(found)


def submission_of_upload(store: Store, upload_id: int) -> SubmissionRow | None:
    """The submission made with this upload, or None (a plain upload, or a competition's)."""
    with store.read() as session:
        found = session.execute(
            _submission_query().where(Submission.upload_id == upload_id)
        ).first()
    return None if found is None else _submission(found)


def submissions_of(
    store: Store, assignment_id: int, user_id: int | None = None
) -> list[SubmissionRow]:
    """The assignment's submissions (a student's only, with ``user_id``), oldest first."""
    query = _submission_query().where(Submission.assignment_id == assignment_id)
    if user_id is not None:
        query = query.where(Submission.user_id == user_id)
    with store.read() as session:
        found = session.execute(query.order_by(Submission.created, Submission.id)).all()
    return [_submission(f) for f in found]


def reject_submission(store: Store, submission_id: int, reason: str) -> bool:
    """A pending submission's upload failed its check: ``rejected`` with ``reason``. Return
    whether this call changed it."""
    with store.write() as session:
        done = session.execute(
            update(Submission)
            .where(Submission.id == submission_id, Submission.status == "pending")
            .values(status="rejected", reason=reason[:2000])
        )
    return bool(done.rowcount)  # type: ignore[attr-defined]


def claim_grading(
    store: Store, submission_id: int, version_id: int, now: datetime | None = None
) -> bool:
    """A pending submission's version is accepted: ``grading`` from now. Return whether
    this call claimed it (only one caller ever does: it starts the gauntlet)."""
    with store.write() as session:
        done = session.execute(
            update(Submission)
            .where(Submission.id == submission_id, Submission.status == "pending")
            .values(status="grading", bot_version_id=version_id, accepted=_now(now))
        )
    return bool(done.rowcount)  # type: ignore[attr-defined]


def add_tests(store: Store, submission_id: int, tests: Sequence[tuple[str, int]]) -> None:
    """Store the submission's tests: (reference label, compare tournament id) each."""
    with store.write() as session:
        for reference, tournament_id in tests:
            session.add(
                SubmissionTest(
                    submission_id=submission_id, reference=reference, tournament_id=tournament_id
                )
            )


def _test_query() -> Any:
    return select(SubmissionTest, Tournament.name).join(
        Tournament, Tournament.id == SubmissionTest.tournament_id
    )


def _test(row: SubmissionTest, tournament: str) -> TestRow:
    return TestRow(
        row.id, row.submission_id, row.reference, row.tournament_id, str(tournament),
        row.verdict, None if row.summary is None else dict(row.summary),
    )  # fmt: skip


def tests_of(store: Store, submission_ids: Sequence[int]) -> dict[int, list[TestRow]]:
    """The tests of each of ``submission_ids`` (those that have some), in creation order."""
    if not submission_ids:
        return {}
    with store.read() as session:
        found = session.execute(
            _test_query()
            .where(SubmissionTest.submission_id.in_(list(submission_ids)))
            .order_by(SubmissionTest.id)
        ).all()
    tests: dict[int, list[TestRow]] = {}
    for row, tournament in found:
        tests.setdefault(row.submission_id, []).append(_test(row, tournament))
    return tests


def test_of_tournament(store: Store, tournament_id: int) -> TestRow | None:
    """The submission test played as this tournament, or None."""
    with store.read() as session:
        found = session.execute(
            _test_query().where(SubmissionTest.tournament_id == tournament_id)
        ).first()
    return None if found is None else _test(*found)


# A submission's test's student and class (built once: every tournament's and game's page
# asks), by the test's tournament name or by one of its matches.
_AUDIENCE = (
    select(Submission.user_id, Assignment.class_id)
    .join(SubmissionTest, SubmissionTest.submission_id == Submission.id)
    .join(Assignment, Assignment.id == Submission.assignment_id)
    .join(Tournament, Tournament.id == SubmissionTest.tournament_id)
)
_AUDIENCE_BY_NAME = _AUDIENCE.where(Tournament.name == bindparam("name")).limit(1)
_AUDIENCE_BY_MATCH = (
    _AUDIENCE.join(Match, Match.tournament_id == Tournament.id)
    .where(Match.id == bindparam("match"))
    .limit(1)
)


def grading_audience(
    store: Store, *, name: str | None = None, match_id: int | None = None
) -> tuple[int, int] | None:
    """(the student's user id, the class's id) when the tournament called ``name``, or
    the one match ``match_id`` belongs to, is a submission's test; else None."""
    values: dict[str, Any]
    if name is not None:
        query, values = _AUDIENCE_BY_NAME, {"name": name}
    else:
        query, values = _AUDIENCE_BY_MATCH, {"match": match_id}
    with store.read() as session:
        found = session.execute(query, values).first()
    return None if found is None else (int(found[0]), int(found[1]))


def grading_tournaments() -> Any:
    """A select of the ids of the tournaments that are submissions' tests (the public
    lists leave them out)."""
    return select(SubmissionTest.tournament_id)


def end_test(store: Store, test_id: int, verdict: str, summary: dict[str, Any]) -> bool:
    """Keep a test's verdict and summary, unless it has one already; return whether this
    call kept them."""
    with store.write() as session:
        done = session.execute(
            update(SubmissionTest)
            .where(SubmissionTest.id == test_id, SubmissionTest.verdict.is_(None))
            .values(verdict=verdict, summary=summary)
        )
    return bool(done.rowcount)  # type: ignore[attr-defined]


def grade_submission(
    store: Store, submission_id: int, grade: str, now: datetime | None = None
) -> bool:
    """A grading submission's grade is in: ``graded``. Return whether this call set it."""
    with store.write() as session:
        done = session.execute(
            update(Submission)
            .where(Submission.id == submission_id, Submission.status == "grading")
            .values(status="graded", grade=grade, graded=_now(now))
        )
    return bool(done.rowcount)  # type: ignore[attr-defined]


# --- reads for the views ----------------------------------------------------------------------


def version_name(store: Store, version_id: int) -> VersionName | None:
    """The version's owner, bot and number, or None (not stored)."""
    with store.read() as session:
        found = session.execute(
            select(User.id, User.name, Bot.name, BotVersion.version)
            .join(Bot, Bot.id == BotVersion.bot_id)
            .join(User, User.id == Bot.owner_id)
            .where(BotVersion.id == version_id)
        ).first()
    if found is None:
        return None
    owner_id, owner, bot, number = found
    return VersionName(int(owner_id), str(owner), str(bot), int(number))


def member_names(store: Store, class_id: int) -> list[tuple[int, str, str | None]]:
    """The class's students: (user id, pseudonym, real name), by pseudonym."""
    with store.read() as session:
        found = session.execute(
            select(User.id, User.name, ClassMember.real_name)
            .join(ClassMember, ClassMember.user_id == User.id)
            .where(ClassMember.class_id == class_id)
            .order_by(User.name_key)
        ).all()
    return [(int(u), str(name), real) for u, name, real in found]


def version_ratings(
    store: Store, rule_set_id: int, version_ids: Sequence[int]
) -> dict[int, tuple[float, float, float]]:
    """Version id -> (rating, low, high) under the rule set, for the rated ones."""
    if not version_ids:
        return {}
    with store.read() as session:
        found = session.execute(
            select(Rating.bot_version_id, Rating.rating, Rating.low, Rating.high).where(
                Rating.rule_set_id == rule_set_id,
                Rating.bot_version_id.in_(list(version_ids)),
            )
        ).all()
    return {int(v): (float(r), float(lo), float(hi)) for v, r, lo, hi in found}


def upload_status(store: Store, upload_id: int) -> tuple[str, str | None] | None:
    """An upload's status and message, or None."""
    with store.read() as session:
        found = session.execute(
            select(Upload.status, Upload.message).where(Upload.id == upload_id)
        ).first()
    return None if found is None else (str(found[0]), found[1])


def games_done(store: Store, tournament_ids: Sequence[int]) -> dict[int, int]:
    """Tournament id -> the games of its finished matches (those with some)."""
    if not tournament_ids:
        return {}
    with store.read() as session:
        found = session.execute(
            select(Match.tournament_id, func.sum(Match.games))
            .where(Match.tournament_id.in_(list(tournament_ids)), Match.status == "done")
            .group_by(Match.tournament_id)
        ).all()
    return {int(t): int(g or 0) for t, g in found}


def ungraded_tests(store: Store) -> list[tuple[int, int]]:
    """(test id, a match id of its tournament) of every test without a verdict whose
    compare tournament has no match left pending or running: the sweep settles them."""
    other = aliased(Match)
    busy = (
        select(other.id)
        .where(
            other.tournament_id == SubmissionTest.tournament_id,
            other.status.in_(("pending", "running")),
        )
        .correlate(SubmissionTest)
    )
    with store.read() as session:
        found = session.execute(
            select(SubmissionTest.id, func.max(Match.id))
            .join(Match, Match.tournament_id == SubmissionTest.tournament_id)
            .where(SubmissionTest.verdict.is_(None), ~busy.exists())
            .group_by(SubmissionTest.id)
        ).all()
    return [(int(t), int(m)) for t, m in found]


def stalled_submissions(store: Store, before: datetime) -> list[tuple[int, int | None]]:
    """(id, upload id) of each submission a worker left half-settled before ``before``:
    ``pending`` though its upload's check has ended (the worker died between the check and
    settling it) or with no upload (a stored version: it died before claiming it); or
    ``grading`` with no test stored (it died while starting the gauntlet). The sweep
    settles them again."""
    has_tests = select(SubmissionTest.id).where(SubmissionTest.submission_id == Submission.id)
    checked = select(Upload.id).where(Upload.id == Submission.upload_id, Upload.status != "pending")
    with store.read() as session:
        found = session.execute(
            select(Submission.id, Submission.upload_id).where(
                or_(
                    and_(
                        Submission.status == "pending",
                        Submission.created < before,
                        or_(Submission.upload_id.is_(None), checked.exists()),
                    ),
                    and_(
                        Submission.status == "grading",
                        Submission.accepted < before,
                        ~has_tests.exists(),
                    ),
                )
            )
        ).all()
    return [(int(i), None if u is None else int(u)) for i, u in found]


def unclaim_grading(store: Store, submission_id: int) -> bool:
    """A ``grading`` submission with no test stored is ``pending`` again (its gauntlet is
    started anew). Return whether it was."""
    has_tests = select(SubmissionTest.id).where(SubmissionTest.submission_id == submission_id)
    with store.write() as session:
        done = session.execute(
            update(Submission)
            .where(
                Submission.id == submission_id,
                Submission.status == "grading",
                ~has_tests.exists(),
            )
            .values(status="pending")
        )
    return bool(done.rowcount)  # type: ignore[attr-defined]


def version_id(store: Store, bot_id: int, version: int) -> int | None:
    """The id of version ``version`` of bot ``bot_id``, or None."""
    with store.read() as session:
        found = session.scalar(
            select(BotVersion.id).where(BotVersion.bot_id == bot_id, BotVersion.version == version)
        )
    return None if found is None else int(found)


def class_name(store: Store, class_id: int) -> str:
    """The name of class ``class_id`` (empty if there is none)."""
    with store.read() as session:
        found = session.scalar(select(SchoolClass.name).where(SchoolClass.id == class_id))
    return "" if found is None else str(found)
