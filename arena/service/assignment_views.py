"""The reads of graded assignments (arena.service.assignments): an assignment with the
submissions its reader may see, one submission with its verdict against each reference,
and the teacher's grade table (:func:`assignment_grades`, one :class:`GradeRow` a student).

The **kept** submission of a student is the last one before the deadline whose upload was
accepted (computed here, at read time: nothing runs at the deadline). A student with only
late submissions shows the last of them, marked late. A student with none accepted has a
**state** all the same (:data:`STATES`): nothing submitted, being checked, or rejected
with the cause (``rejected: crash at import``), never an empty row.

Each grade is worth **points** on the assignment's scale (:func:`assignment_points`), and
the row carries the student's school id and e-mail (:func:`school_identities`) for a school's
gradebook (arena.service.gradebooks).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from arena.compete.grading import ENDED, check_thresholds, elo_bound, points_scale
from arena.errors import NotFound
from arena.match.runtimes import DEFAULT_RUNTIME
from arena.service.classes import class_for_member, class_for_teacher, is_teacher
from arena.service.permissions import Actor, Operator, actor_id, allowed
from arena.service.shapes import ELO, about
from arena.service.uploads import rejection_cause
from arena.store import assignments as stored
from arena.store.assignments import AssignmentRow, SubmissionRow, TestRow
from arena.store.classes import member_rows
from arena.store.db import Store

__all__ = [
    "STATES",
    "AssignmentSummary",
    "AssignmentView",
    "GradeRow",
    "PinnedReference",
    "ReferenceResult",
    "SchoolIdentity",
    "SubmissionView",
    "Threshold",
    "assignment_grades",
    "assignment_points",
    "assignment_runtimes",
    "assignment_view",
    "check_grading_visible",
    "class_assignments",
    "find_assignment",
    "kept_submission",
    "school_identities",
    "submission_view",
]

#: A grade row's state: ``not submitted``; ``checking`` (a submission's upload is being
#: checked, none accepted yet); ``rejected: CAUSE`` (every submission was rejected by its
#: check: ``rejected: crash at import``, ``rejected: timeout``...); ``grading``;
#: ``graded``.
STATES = ("not submitted", "checking", "rejected: CAUSE", "grading", "graded")


@dataclass(frozen=True, slots=True)
class ReferenceResult:
    """A submission's test against one reference.

    Attributes:
        score: the submission's mean game score against it (0-1; None before a group).
        elo, low, high: its Elo advantage with the 95% interval (None before two groups),
            within what the games measure (arena.compete.grading.elo_figure): a decided
            test always has them; ``bounded``: the estimate was beyond, the figure is the
            bound (the submission won nearly everything).
        verdict: ``pass`` (beats it), ``fail``, ``undecided`` (the cap reached),
            ``running``, or ``pending`` (the upload is still being checked).
        games: the games played; ``tournament``: the compare's name (its games' page).
    """

    reference: str
    score: float | None = field(
        metadata=about("the submission's mean game score against it, 0-1", digits=3)
    )
    elo: float | None = field(metadata=about("its Elo advantage over the reference", digits=1))
    low: float | None = field(metadata=ELO)
    high: float | None = field(metadata=ELO)
    verdict: str = field(metadata=about("pass, fail, undecided (the cap), running or pending"))
    games: int
    tournament: str = field(metadata=about("the compare tournament: its games"))
    bounded: bool = field(
        default=False,
        metadata=about("the Elo is past what its games measure: the figure is that bound"),
    )


@dataclass(frozen=True, slots=True)
class SubmissionView:
    """A submission with its verdict per reference.

    Attributes:
        status: ``pending`` (its upload is checked), ``rejected`` (``reason``), ``grading``
            or ``graded`` (``grade``).
        kept: it is the student's kept submission (the grade that counts).
    """

    id: int
    class_name: str
    assignment: str
    student: str
    version: str | None = field(metadata=about("OWNER/BOT@N once accepted"))
    sha256: str | None
    status: str = field(metadata=about("pending, rejected, grading or graded"))
    late: bool
    reason: str | None
    grade: str | None
    created: datetime
    accepted: datetime | None
    graded: datetime | None
    upload_id: int | None
    references: tuple[ReferenceResult, ...]
    kept: bool = field(
        default=False, metadata=about("the student's kept submission (its grade counts)")
    )


@dataclass(frozen=True, slots=True)
class PinnedReference:
    """A reference of an assignment: its label and the version pinned when the assignment
    was created."""

    label: str
    bot: str = field(metadata=about("OWNER/BOT@N, pinned when the assignment was created"))


@dataclass(frozen=True, slots=True)
class Threshold:
    """A grade and the references a submission must beat for it."""

    grade: str
    beats: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class AssignmentView:
    """An assignment for its page: its settings and the submissions the reader may see
    (a teacher: everyone's; a student: their own), newest first."""

    class_name: str
    name: str
    description: str
    rules: str
    players: int
    teams: bool
    settings: dict[str, Any]
    references: tuple[PinnedReference, ...]
    grades: tuple[Threshold, ...]
    opens: datetime
    deadline: datetime
    time_zone: str
    is_open: bool
    past_deadline: bool
    teacher: bool = field(metadata=about("the caller teaches the class (sees every submission)"))
    submissions: tuple[SubmissionView, ...]
    runtimes: tuple[str, ...] = field(
        default=("python",), metadata=about("the runtimes a submission may run under")
    )
    points: dict[str, float] = field(
        default_factory=dict, metadata=about("each grade's points, best first")
    )

    @property
    def max_points(self) -> float:
        """The best grade's points (Canvas's points possible)."""
        return max(self.points.values(), default=0.0)

    @property
    def labels(self) -> list[str]:
        """Its references' labels, in order."""
        return [reference.label for reference in self.references]


@dataclass(frozen=True, slots=True)
class SchoolIdentity:
    """A student as the school's systems know them (teachers only): the school's student
    id (Canvas's SIS User ID, Moodle's ID number), login (Canvas's SIS Login ID), e-mail
    and section; None where unknown."""

    school_id: str | None = None
    login: str | None = None
    email: str | None = None
    section: str | None = None


@dataclass(frozen=True, slots=True)
class GradeRow:
    """One student of the class with the kept submission (or none).

    Attributes:
        real_name, school_id, login, email, section: seen by the class's teachers only
            (None: unknown).
        state: :data:`STATES`: ``graded``, ``grading``, ``checking``, ``not submitted``, or
            ``rejected: CAUSE`` when every submission was rejected by its check.
        version, sha256, submitted: the kept submission's version and when it came (None:
            nothing submitted, or nothing accepted yet).
        late: the row shows a late submission (the student has no submission before the
            deadline): graded, never kept.
        rating, low, high: the version's rating with its interval under the assignment's
            rule set (None: not rated).
        references: its result against each reference, in the assignment's order (empty:
            nothing accepted).
        grade: None while nothing is accepted or it is being graded.
        points: the grade's points on the assignment's scale; 0 for a student whose every
            submission was rejected; None while there is no grade.
        submissions: how many the student made.
    """

    student: str
    real_name: str | None
    version: str | None
    sha256: str | None
    submitted: datetime | None
    late: bool
    rating: float | None = field(metadata=ELO)
    low: float | None = field(metadata=ELO)
    high: float | None = field(metadata=ELO)
    references: tuple[ReferenceResult, ...]
    grade: str | None = field(metadata=about("null: nothing accepted, or being graded"))
    state: str = field(
        default="graded",
        metadata=about("graded, grading, checking, not submitted, or rejected: CAUSE"),
    )
    points: float | None = field(
        default=None, metadata=about("the grade's points (0: every submission rejected)")
    )
    submissions: int = 0
    school_id: str | None = field(default=None, metadata=about("the school's student id"))
    login: str | None = field(default=None, metadata=about("the school's login"))
    email: str | None = None
    section: str | None = None


def school_identities(store: Store, class_id: int) -> dict[int, SchoolIdentity]:
    """The school's id, e-mail and section of each student of class ``class_id`` (by user
    id), as the teacher's roster import keeps them with the member; a student it does not
    know is missing. The one place the grade exports read them.

    The roster keeps one id a student (its id column, else its e-mail) and the section:
    an id that is an e-mail address is the e-mail (Moodle matches it by e-mail, not as an
    ID number; Canvas then finds the student by name); the school's login is not kept.
    """
    found = {}
    for member in member_rows(store, class_id):
        kept = member.school_id
        if kept is None and member.section is None:
            continue
        email = kept if kept is not None and "@" in kept else None
        found[member.user_id] = SchoolIdentity(
            school_id=None if email is not None else kept, email=email, section=member.section
        )
    return found


def assignment_points(row: AssignmentRow) -> dict[str, float]:
    """Each grade's points on the assignment's scale (``settings["points"]``; an
    assignment made before scales: :data:`~arena.compete.grading.DEFAULT_MAX_POINTS` for
    the best grade, spread down to 0)."""
    kept = row.settings.get("points")
    if isinstance(kept, dict) and kept:
        return {str(g): float(p) for g, p in kept.items()}
    labels = [str(r["label"]) for r in row.references]
    thresholds = check_thresholds(((g["grade"], tuple(g["beats"])) for g in row.grades), labels)
    return points_scale(thresholds)


def assignment_runtimes(row: AssignmentRow) -> tuple[str, ...]:
    """The runtimes the assignment takes (``settings["runtimes"]``; one made before
    runtimes took Python only)."""
    return tuple(row.settings.get("runtimes") or (DEFAULT_RUNTIME,))


def find_assignment(store: Store, class_id: int, class_name: str, name: str) -> AssignmentRow:
    """The class's assignment ``name``.

    Raises:
        NotFound: there is none.
    """
    row = None if "\x00" in name else stored.assignment_named(store, class_id, name.strip())
    if row is None:
        raise NotFound(f"no assignment {name.strip()[:80]!r} in class {class_name}")
    return row


def _labels(row: AssignmentRow) -> list[str]:
    return [str(r["label"]) for r in row.references]


def _results(
    row: AssignmentRow, submission: SubmissionRow, tests: Sequence[TestRow], games: dict[int, int]
) -> tuple[ReferenceResult, ...]:
    if not tests:
        if submission.status != "pending":
            return ()
        return tuple(ReferenceResult(label, None, None, None, None, "pending", 0, "")
                     for label in _labels(row))  # fmt: skip
    results = []
    for test in tests:
        summary = test.summary or {}
        played = int(summary.get("games") or 0)
        elo, low, high = (summary.get(key) for key in ("elo", "low", "high"))
        if test.verdict in ENDED and None in (elo, low, high) and summary.get("score") is not None:
            # kept before the figures were bounded, an infinity as None: the bound instead
            bound = elo_bound(max(played // 2, 1))
            up = float(summary["score"]) >= 0.5
            elo = (bound if up else -bound) if elo is None else elo
            low, high = (-bound if low is None else low), (bound if high is None else high)
            summary = {**summary, "bounded": summary.get("elo") is None}
        results.append(
            ReferenceResult(
                reference=test.reference,
                score=summary.get("score"),
                elo=elo,
                low=low,
                high=high,
                verdict=test.verdict or "running",
                games=played if test.verdict else games.get(test.tournament_id, 0),
                tournament=test.tournament,
                bounded=bool(summary.get("bounded")),
            )
        )
    return tuple(results)


def kept_submission(submissions: Sequence[SubmissionRow]) -> SubmissionRow | None:
    """A student's kept submission (``submissions`` oldest first): the last one before
    the deadline whose version was accepted; else the last late accepted one; else None."""
    accepted = [s for s in submissions if s.accepted is not None]
    on_time = [s for s in accepted if not s.late]
    if on_time:
        return on_time[-1]
    return accepted[-1] if accepted else None


def _views(
    store: Store, class_name: str, row: AssignmentRow, submissions: Sequence[SubmissionRow]
) -> list[SubmissionView]:
    tests = stored.tests_of(store, [s.id for s in submissions])
    running = [t.tournament_id for ts in tests.values() for t in ts if t.verdict is None]
    games = stored.games_done(store, running)
    by_student: dict[int, list[SubmissionRow]] = {}
    for s in submissions:
        by_student.setdefault(s.user_id, []).append(s)
    kept = {k.id for subs in by_student.values() if (k := kept_submission(subs)) is not None}
    return [
        SubmissionView(
            id=s.id,
            class_name=class_name,
            assignment=row.name,
            student=s.student,
            version=s.version,
            sha256=s.sha256,
            status=s.status,
            late=s.late,
            reason=s.reason,
            grade=s.grade,
            created=s.created,
            accepted=s.accepted,
            graded=s.graded,
            upload_id=s.upload_id,
            references=_results(row, s, tests.get(s.id, []), games),
            kept=s.id in kept,
        )
        for s in submissions
    ]


def submission_view(store: Store, actor: Actor, submission_id: int) -> SubmissionView:
    """The submission ``submission_id``, for its student, the class's teachers and admins.

    Raises:
        NotFound: there is none, or ``actor`` may not see it.
    """
    hidden = NotFound(f"no submission {submission_id}")
    submission = stored.submission_row(store, submission_id)
    if submission is None:
        raise hidden
    row = stored.assignment_by_id(store, submission.assignment_id)
    assert row is not None
    own = actor is not None and not isinstance(actor, Operator) and actor.id == submission.user_id
    if not own and not is_teacher(store, actor, row.class_id):
        raise hidden
    class_name = stored.class_name(store, row.class_id)
    siblings = stored.submissions_of(store, row.id, submission.user_id)
    views = _views(store, class_name, row, siblings)
    return next(v for v in views if v.id == submission_id)


def assignment_view(
    store: Store, actor: Actor, class_name: str, assignment: str, *, now: datetime | None = None
) -> AssignmentView:
    """The assignment for a teacher of the class (every submission) or a student of it
    (their own).

    Raises:
        PermissionDenied: nobody is logged in.
        NotFound: no such class or assignment, or ``actor`` is a stranger to the class.
    """
    found = class_for_member(store, actor, class_name)
    row = find_assignment(store, found.id, found.name, assignment)
    teacher = is_teacher(store, actor, found.id)
    if teacher:
        submissions = stored.submissions_of(store, row.id)
    else:
        assert actor is not None and not isinstance(actor, Operator)
        submissions = stored.submissions_of(store, row.id, actor.id)
    moment = datetime.now(UTC) if now is None else now
    views = sorted(_views(store, found.name, row, submissions), key=lambda v: -v.id)
    return AssignmentView(
        class_name=found.name, name=row.name, description=row.description, rules=row.rules,
        players=row.players, teams=row.teams, settings=row.settings,
        references=tuple(
            PinnedReference(str(r["label"]), str(r.get("bot", ""))) for r in row.references
        ),
        grades=tuple(Threshold(str(g["grade"]), tuple(g["beats"])) for g in row.grades),
        opens=row.opens, deadline=row.deadline, time_zone=row.time_zone,
        is_open=row.opens <= moment <= row.deadline, past_deadline=moment > row.deadline,
        teacher=teacher, submissions=tuple(views), runtimes=assignment_runtimes(row),
        points=assignment_points(row),
    )  # fmt: skip


def assignment_grades(
    store: Store, actor: Actor, class_name: str, assignment: str
) -> list[GradeRow]:
    """The grade table: one row a student of the class (by pseudonym) with the kept
    submission's version, results and grade. Teachers of the class (and admins) only.

    Raises:
        NotFound: no such class or assignment (or a stranger to the class).
        PermissionDenied: a student of the class, or nobody logged in.
    """
    found = class_for_teacher(store, actor, class_name)
    row = find_assignment(store, found.id, found.name, assignment)
    submissions = stored.submissions_of(store, row.id)
    by_student: dict[int, list[SubmissionRow]] = {}
    for s in submissions:
        by_student.setdefault(s.user_id, []).append(s)
    kept = {u: k for u, subs in by_student.items() if (k := kept_submission(subs)) is not None}
    views = {v.id: v for v in _views(store, found.name, row, list(kept.values()))}
    versions = [k.bot_version_id for k in kept.values() if k.bot_version_id is not None]
    ratings = stored.version_ratings(store, row.rule_set_id, versions)
    scale = assignment_points(row)
    identities = school_identities(store, found.id)
    rows = []
    for user_id, student, real_name in stored.member_names(store, found.id):
        subs = by_student.get(user_id, [])
        who = identities.get(user_id, SchoolIdentity())
        common: dict[str, Any] = {
            "student": student, "real_name": real_name, "submissions": len(subs),
            "school_id": who.school_id, "login": who.login, "email": who.email,
            "section": who.section,
        }  # fmt: skip
        k = kept.get(user_id)
        if k is None:
            state = _unaccepted_state(subs)
            rows.append(GradeRow(**common, version=None, sha256=None, submitted=None,
                                 late=False, rating=None, low=None, high=None, references=(),
                                 grade=None, state=state,
                                 points=0.0 if state.startswith("rejected") else None))  # fmt: skip
            continue
        rating = ratings.get(k.bot_version_id or -1)
        grade = k.grade if k.status == "graded" else None
        rows.append(
            GradeRow(
                **common,
                version=k.version,
                sha256=k.sha256,
                submitted=k.created,
                late=k.late,
                rating=None if rating is None else rating[0],
                low=None if rating is None else rating[1],
                high=None if rating is None else rating[2],
                references=views[k.id].references,
                grade=grade,
                state="graded" if grade is not None else "grading",
                points=None if grade is None else scale.get(grade),
            )
        )
    return rows


def _unaccepted_state(submissions: Sequence[SubmissionRow]) -> str:
    """The state of a student none of whose ``submissions`` (oldest first) was accepted:
    ``not submitted``, ``checking``, or ``rejected: CAUSE`` (the last rejection's)."""
    if not submissions:
        return "not submitted"
    if any(s.status == "pending" for s in submissions):
        return "checking"
    return f"rejected: {rejection_cause(submissions[-1].reason)}"


@dataclass(frozen=True, slots=True)
class AssignmentSummary:
    """An assignment in its class's list.

    Attributes:
        submissions: the submissions its reader may see (a teacher: everyone's; a student:
            their own).
        grade: a student's kept grade (None: nothing graded yet, or a teacher's list).
    """

    name: str
    rules: str
    opens: datetime
    deadline: datetime
    time_zone: str
    submissions: int
    grade: str | None


def class_assignments(store: Store, actor: Actor, class_name: str) -> list[AssignmentSummary]:
    """The class's assignments, the latest deadline first, for its teachers and students
    (a student's with their own submissions and kept grade).

    Raises:
        NotFound: no such class, or ``actor`` is a stranger to it.
        PermissionDenied: nobody is logged in.
    """
    found = class_for_member(store, actor, class_name)
    teacher = is_teacher(store, actor, found.id)
    summaries = []
    for row in stored.assignments_of_class(store, found.id):
        if teacher:
            subs = stored.submissions_of(store, row.id)
        else:
            assert actor is not None and not isinstance(actor, Operator)
            subs = stored.submissions_of(store, row.id, actor.id)
        kept = None if teacher else kept_submission(subs)
        grade = kept.grade if kept is not None and kept.status == "graded" else None
        summaries.append(
            AssignmentSummary(row.name, row.rules, row.opens, row.deadline, row.time_zone,
                              len(subs), grade)
        )  # fmt: skip
    return sorted(summaries, key=lambda a: (a.deadline, a.name), reverse=True)


def check_grading_visible(
    store: Store, actor: Actor, *, name: str | None = None, match_id: int | None = None
) -> None:
    """Return if ``actor`` may see the tournament ``name`` (or the one match ``match_id``
    belongs to) and its games: every tournament but a submission's test, which only its
    student, the class's teachers and the admins see (a grade is no one else's).

    Raises:
        NotFound: a submission's test hidden from ``actor`` (as if there were none).
    """
    audience = stored.grading_audience(store, name=name, match_id=match_id)
    if audience is None or allowed(actor, "manage-users"):
        return
    student, class_id = audience
    if actor is not None and (actor_id(actor) == student or is_teacher(store, actor, class_id)):
        return
    raise NotFound(f"no tournament {name!r}" if name is not None else f"no stored match {match_id}")
