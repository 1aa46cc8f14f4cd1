"""Graded assignments of a class (docs/assignments.md): a teacher sets the rule set, the
deadline, the reference bots and the grade thresholds; each accepted submission plays a
gauntlet on the workers, one sequential test against each reference, and earns a grade.

- :func:`create_assignment` checks every setting (:class:`AssignmentError`, one sentence a
  mistake) and pins each reference to a stored bot version.
- An uploaded file is submitted through the one intake (arena.service.intake, which asks
  :func:`submission_checks` here; checked in the sandbox on a worker), and
  :func:`submit_version` submits a stored version of the student's own; only the class's
  students submit. After the deadline a submission is ``late``: graded, marked late,
  never kept.
- The gauntlet (arena.service.gauntlets, its names re-exported here):
  :func:`submission_accepted` (the workers call it after the check of an upload whose
  purpose is an assignment, arena.service.work.accept_upload) starts an accepted
  submission's gauntlet: one compare tournament a reference (arena.service.compares: NEW
  the student's version, OLD the reference, the assignment's test and cap, the same deals
  for every submission), its matches sent; a rejected upload rejects the submission.
  :func:`grade_after_match` (the workers call it after each match, once the compare's
  ``stop_if_decided`` ran) keeps a test's verdict when it ended and grades the submission
  (arena.compete.grading) when all its tests have.
- Reads (arena.service.assignment_views): :func:`assignment_view`, :func:`submission_view`,
  :func:`assignment_grades` (the teacher's grade table: each student's kept submission).
"""

from __future__ import annotations

import logging
import random
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from arena.compete.grading import GradingError, check_thresholds, points_scale
from arena.compete.names import check_name, parse_reference
from arena.compete.sprt import STATISTICS, RegressionTest, make_test
from arena.engine.rules import Rules
from arena.errors import ArenaError, NotFound
from arena.match.runtimes import RUNTIMES
from arena.service.accounts import Account, find_account
from arena.service.assignment_views import (
    AssignmentView,
    GradeRow,
    ReferenceResult,
    SubmissionView,
    assignment_grades,
    assignment_runtimes,
    assignment_view,
    find_assignment,
    submission_view,
)
from arena.service.board_views import REFERENCE_OWNER
from arena.service.bot_views import bot_view
from arena.service.classes import (
    DEFAULT_SETTINGS,
    ClassError,
    class_for_member,
    class_for_teacher,
    find_class,
)
from arena.service.classes import student_ids as class_students
from arena.service.compares import (
    group_size,
)
from arena.service.competition_views import local_time
from arena.service.competitions import check_in_bounds, check_window
from arena.service.gauntlets import (
    grade_after_match,
    settle_tests,
    start_gauntlet,
    submission_accepted,
)
from arena.service.permissions import OPERATOR, Actor, Operator, actor_id, allowed
from arena.service.tournaments import preset
from arena.service.uploads import check_runtimes, offered_runtime
from arena.store import assignments as stored
from arena.store.accounts import user_id_named
from arena.store.assignments import AssignmentRow
from arena.store.db import Store
from arena.store.matches import bot_sources

__all__ = [
    "BOUNDS",
    "AssignmentError",
    "AssignmentRow",
    "AssignmentView",
    "GradeRow",
    "NewAssignment",
    "ReferenceResult",
    "SubmissionView",
    "assignment_grades",
    "assignment_runtimes",
    "assignment_view",
    "create_assignment",
    "grade_after_match",
    "settle_tests",
    "submission_accepted",
    "submission_checks",
    "submission_of_upload",
    "submission_runtime",
    "submission_view",
    "submit_version",
]

logger = logging.getLogger(__name__)

#: Each numeric setting's bounds (inclusive) and unit, as the messages name them.
BOUNDS: dict[str, tuple[float, float, str]] = {
    "elo0": (-1000.0, 1000.0, ""),
    "elo1": (-1000.0, 1000.0, ""),
    "alpha": (0.001, 0.5, ""),
    "beta": (0.001, 0.5, ""),
    "max_games": (2, 20_000, " games"),
    "move_ms": (10, 10_000, " ms"),
    "memory_mb": (64, 2048, " MB"),
    "batch": (1, 1000, " deal groups"),
}
#: A stored version submitted again within this many seconds is the first submission (a
#: double submit makes one gauntlet), as the intake takes an upload sent twice.
REPEAT_SECONDS = 60.0
#: The most references an assignment may have.
MAX_REFERENCES = 8
#: The longest description, in characters.
MAX_DESCRIPTION = 5000
#: Names an assignment may not take: pages of their own (``/assignments/new``).
RESERVED_NAMES = frozenset({"new"})


class AssignmentError(ArenaError):
    """An assignment's setting or a submission is refused (the message says why, in a
    sentence)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class NewAssignment:
    """An assignment as a teacher asks for it (docs/assignments.md).

    Attributes:
        references: stored bots as ``[LABEL=][OWNER/]NAME[@VERSION]`` (owner default
            ``reference``; version default the latest, pinned now); labelled NAME unless
            LABEL is given.
        grades: best first, (grade, the reference labels a submission must beat); the last
            asks for none.
        points, max_points: the grades' points for a gradebook (one or neither).
        runtimes: those a student's bot may run under (arena.match.runtimes: python, cpp, ...).
        elo0, elo1, alpha, beta: the sequential test "beats R": H1 (NEW - R >= elo1 Elo)
            against H0 (NEW - R <= elo0), at error rates alpha (a false "beats") and beta
            (a missed one); ``max_games``: its cap (an undecided test then).
    """

    class_name: str
    name: str
    deadline: datetime
    rules: str = "block"
    references: tuple[str, ...] = ("reference/random", "reference/greedy", "reference/counter")
    grades: tuple[tuple[str, tuple[str, ...]], ...] = (
        ("A", ("counter",)),
        ("B", ("greedy",)),
        ("C", ("random",)),
        ("F", ()),
    )
    opens: datetime | None = None
    time_zone: str = "UTC"
    elo0: float = 0.0
    elo1: float = 20.0
    alpha: float = 0.05
    beta: float = 0.05
    max_games: int = 400
    move_ms: int = 1000
    memory_mb: int = 256
    statistic: str = "margin"
    batch: int = 8
    players: int = 2
    teams: bool = False
    description: str = ""
    #: The deals' seed (every submission plays the same deals); None: drawn at random.
    seed: int | None = None
    #: The runtimes a submission may run under (a student chooses among them).
    runtimes: tuple[str, ...] = tuple(RUNTIMES)
    #: The points scale: each grade's points (every grade once), or the best grade's
    #: points spread down to 0 for the last (arena.compete.grading.points_scale); neither:
    #: 100 for the best.
    points: tuple[tuple[str, float], ...] = ()
    max_points: float | None = None


def _now(now: datetime | None = None) -> datetime:
    return datetime.now(UTC) if now is None else now.astimezone(UTC)


# --- creation ---------------------------------------------------------------------------------


def _in_bounds(what: str, value: float) -> None:
    check_in_bounds(BOUNDS, what, value, AssignmentError)


def _rules(new: NewAssignment, offered: tuple[str, ...]) -> Rules:
    if new.rules not in offered:
        raise AssignmentError(
            f"the class plays {', '.join(offered)}: choose one of them, not {new.rules!r}."
        )
    try:
        rules = preset(new.rules)
        rules.check_players(new.players, new.teams)
    except ArenaError as exc:
        raise AssignmentError(f"{str(exc).rstrip('.')}.") from None
    return rules


def _check_dates(new: NewAssignment, now: datetime) -> tuple[datetime, datetime]:
    return check_window(new.opens, new.deadline, new.time_zone, now, AssignmentError)


def _check_test(new: NewAssignment, rules_players: int) -> RegressionTest:
    for what in ("elo0", "elo1", "alpha", "beta", "max_games", "move_ms", "memory_mb", "batch"):
        _in_bounds(what, getattr(new, what))
    if new.statistic not in STATISTICS:
        raise AssignmentError(
            f"the test counts {' or '.join(STATISTICS)}, not {str(new.statistic)[:40]!r}."
        )
    if new.elo1 <= new.elo0:
        raise AssignmentError(
            f"elo1 ({new.elo1:g}, the margin a submission beats a reference by) must be "
            f"above elo0 ({new.elo0:g})."
        )
    size = group_size(rules_players, new.teams)
    if new.max_games < 2 * size:
        raise AssignmentError(
            f"max games must be at least {2 * size} (two deal groups of {size} games)."
        )
    try:
        return make_test(new.statistic, new.elo0, new.elo1, new.alpha, new.beta)
    except ValueError as exc:
        raise AssignmentError(f"the test's parameters: {exc}.") from None


def _reference(store: Store, actor: Actor, spec: str) -> dict[str, Any]:
    """A reference as stored: its label, its pinned version's id and reference."""
    try:
        parsed = parse_reference(spec.strip())
    except ArenaError as exc:
        raise AssignmentError(
            f"{str(exc).rstrip('.')}: name a reference OWNER/NAME[@VERSION]."
        ) from None
    owner = parsed.owner or REFERENCE_OWNER
    view = bot_view(store, owner, parsed.name, actor)
    if view is None or not view.versions:
        how = (
            f"store it with `arena bots add bots/{parsed.name}.py --name {parsed.name} "
            f"--owner {REFERENCE_OWNER}` (or run `arena serve --demo`)"
            if owner == REFERENCE_OWNER
            else "upload it first (a bot of your own), or choose a reference bot"
        )
        raise AssignmentError(f"{owner}/{parsed.name} is not a stored bot: {how}.")
    mine = view.owner_id == actor_id(actor)
    if not (
        owner == REFERENCE_OWNER or mine or view.source_public or allowed(actor, "seat-any-bot")
    ):
        raise AssignmentError(
            f"{owner}/{parsed.name} is another user's private bot: use a reference bot, a bot "
            "of your own or one whose source is public."
        )
    numbers = {v.version for v in view.versions}
    version = max(numbers) if parsed.version is None else parsed.version
    if version not in numbers:
        raise AssignmentError(f"{owner}/{parsed.name} has no version {version}.")
    version_id = _version_id(store, view.id, version)
    label = parsed.label if "=" in spec else parsed.name
    return {"label": label, "bot_version_id": version_id, "bot": f"{owner}/{view.name}@{version}"}


def _version_id(store: Store, bot_id: int, version: int) -> int:
    found = stored.version_id(store, bot_id, version)
    if found is None:  # pragma: no cover (listed a moment ago)
        raise NotFound(f"no version {version}")
    return found


def _references(store: Store, actor: Actor, specs: tuple[str, ...]) -> list[dict[str, Any]]:
    if not specs:
        raise AssignmentError("give at least one reference bot (e.g. reference/random).")
    if len(specs) > MAX_REFERENCES:
        raise AssignmentError(f"give at most {MAX_REFERENCES} references, not {len(specs)}.")
    references = [_reference(store, actor, spec) for spec in specs]
    labels = [r["label"] for r in references]
    for label in labels:
        if labels.count(label) > 1:
            raise AssignmentError(
                f"two references are labelled {label!r}: label one (LABEL=OWNER/NAME)."
            )
    return references


def _check_text(new: NewAssignment) -> str:
    try:
        name = check_name(new.name.strip(), "assignment name")
    except ArenaError as exc:
        raise AssignmentError(f"{exc}.") from None
    if name in RESERVED_NAMES:
        raise AssignmentError(f"{name!r} is a page of its own: choose another assignment name.")
    if len(new.description) > MAX_DESCRIPTION:
        raise AssignmentError(f"the description may have at most {MAX_DESCRIPTION} characters.")
    if "\x00" in new.description:
        raise AssignmentError("the description holds a NUL character: send plain text.")
    return name


def create_assignment(
    store: Store, actor: Actor, new: NewAssignment, *, now: datetime | None = None
) -> AssignmentRow:
    """Store the assignment ``new`` of a class ``actor`` teaches, its references pinned to
    their versions now and its deals' seed drawn at random; return it.

    Raises:
        NotFound: no such class (or ``actor`` is a stranger to it).
        PermissionDenied: ``actor`` is a student of it, or not logged in.
        AssignmentError: a setting is refused (the message says which); nothing stored.
    """
    row = class_for_teacher(store, actor, new.class_name)
    name = _check_text(new)
    rules = _rules(new, tuple(row.rule_sets))
    opens, deadline = _check_dates(new, _now(now))
    _check_test(new, new.players)
    if new.seed is not None and not 0 <= new.seed < 2**62:
        raise AssignmentError("the seed must be a whole number from 0 to 2**62 - 1.")
    references = _references(store, actor, new.references)
    runtimes = check_runtimes(new.runtimes, AssignmentError)
    try:
        thresholds = check_thresholds(new.grades, [r["label"] for r in references])
        points = points_scale(thresholds, dict(new.points), new.max_points)
    except GradingError as exc:
        raise AssignmentError(str(exc)) from None
    settings = {
        "move_seconds": new.move_ms / 1000, "memory_mb": int(new.memory_mb),
        "statistic": new.statistic, "elo0": float(new.elo0), "elo1": float(new.elo1),
        "alpha": float(new.alpha), "beta": float(new.beta), "max_games": int(new.max_games),
        "batch": int(new.batch), "runtimes": list(runtimes), "points": points,
    }  # fmt: skip
    values = {
        "description": new.description.strip(), "created_by": actor_id(actor),
        "players": new.players, "teams": new.teams, "settings": settings,
        "references": references, "grades": [t.as_json() for t in thresholds],
        "opens": opens, "deadline": deadline, "time_zone": new.time_zone,
        "seed": random.SystemRandom().getrandbits(62) if new.seed is None else new.seed,
        "created": _now(now),
    }  # fmt: skip
    try:
        assignment_id = stored.insert_assignment(
            store, class_id=row.id, name=name, rules=rules, values=values
        )
    except ValueError as exc:
        raise AssignmentError(f"{exc}: choose another name.") from None
    logger.info("assignment %s/%s (id %d) created", row.name, name, assignment_id)
    created = stored.assignment_by_id(store, assignment_id)
    assert created is not None
    return created


# --- submissions ------------------------------------------------------------------------------


def _student(
    store: Store, actor: Actor, class_name: str, owner: str | None = None
) -> tuple[Account, int]:
    """The submitting student (``actor``; for the operator, the student called ``owner``)
    and the class's id.

    Raises:
        PermissionDenied, NotFound: as :func:`arena.service.classes.class_for_member`; no
            user called ``owner``.
        AssignmentError: ``actor`` (or ``owner``) is not a student of the class (a
            teacher, say): only students submit; the operator named nobody.
    """
    row = class_for_member(store, actor, class_name)
    student: Account | None = actor if isinstance(actor, Account) else None
    if isinstance(actor, Operator):
        if owner is None:
            raise AssignmentError("name the student the submission is for (--owner USER).")
        user_id = user_id_named(store, owner)
        student = None if user_id is None else find_account(store, user_id)
        if student is None:
            raise NotFound(f"no user called {owner!r}")
    if student is None or student.id not in class_students(store, row.id):
        raise AssignmentError(
            f"only the students of {row.name} submit to its assignments: join it with its "
            "code to try your own bot."
        )
    return student, row.id


def _open_assignment(
    store: Store, class_id: int, class_name: str, name: str, now: datetime
) -> tuple[AssignmentRow, bool]:
    """The assignment and whether a submission now is late.

    Raises:
        NotFound: the class has no such assignment.
        AssignmentError: it has not opened yet.
    """
    assignment = find_assignment(store, class_id, class_name, name)
    if now < assignment.opens:
        raise AssignmentError(
            f"{assignment.name} opens for submissions at "
            f"{local_time(assignment.opens, assignment.time_zone)}."
        )
    return assignment, now > assignment.deadline


def submission_checks(
    store: Store,
    actor: Actor,
    class_name: str,
    assignment: str,
    filename: str,
    runtime: str | None = None,
    *,
    now: datetime | None = None,
) -> tuple[Account, AssignmentRow, bool, str]:
    """Whether ``actor`` (a student of the class) may submit an uploaded bot file named
    ``filename`` to the assignment now, to run under ``runtime`` (default: the one its
    suffix names), before it is screened (the intake, arena.service.intake, takes the
    upload): the student, the assignment, whether the submission is late and the runtime.

    Raises:
        PermissionDenied, NotFound: not logged in; no such class or assignment (or a
            stranger to the class).
        AssignmentError: a teacher, the assignment has not opened, or it takes no bot of
            that runtime (the sentence names those it takes).
        UploadError: no runtime takes the file.
    """
    student, class_id = _student(store, actor, class_name)
    row, late = _open_assignment(store, class_id, class_name, assignment, _now(now))
    return student, row, late, _runtime(row, filename, runtime)


def _runtime(row: AssignmentRow, filename: str, runtime: str | None) -> str:
    """The runtime of a file submitted to the assignment, if it takes it (by default its
    suffix's, or the only one the assignment takes for that suffix).

    Raises:
        AssignmentError, UploadError: as :func:`arena.service.uploads.offered_runtime`.
    """
    what = f"assignment {row.name}"
    offered = assignment_runtimes(row)
    return offered_runtime(what, offered, filename, runtime, AssignmentError, only=True)


def submission_runtime(
    store: Store, actor: Actor, class_name: str, assignment: str, filename: str,
    runtime: str | None = None,
) -> str:  # fmt: skip
    """The runtime a bot file named ``filename`` would be submitted under (``runtime``, or
    its suffix's), before a caller checks it (the command line): the assignment's own
    refusal, said before the check.

    Raises:
        NotFound, PermissionDenied: no such class or assignment, or a stranger to it.
        AssignmentError, UploadError: the assignment takes no bot of that runtime.
    """
    found = class_for_member(store, actor, class_name)
    return _runtime(find_assignment(store, found.id, found.name, assignment), filename, runtime)


def submission_of_upload(store: Store, actor: Actor, upload_id: int) -> SubmissionView:
    """The submission made with this upload, as ``actor`` sees it.

    Raises:
        NotFound: the upload made no submission (or ``actor`` may not see it).
    """
    found = stored.submission_of_upload(store, upload_id)
    if found is None:
        raise NotFound(f"no submission made with upload {upload_id}")
    return submission_view(store, actor, found.id)


def _check_version_quota(
    store: Store, class_name: str, assignment_id: int, user_id: int, now: datetime
) -> None:
    """Refuse a stored version's submission past the class's ``uploads_per_hour`` of them
    to this assignment in the last hour (each starts a gauntlet on the workers at once;
    uploads are held by :func:`enforce_class_quotas`).

    Raises:
        ClassError: over the quota (the message says when to try again).
    """
    settings = find_class(store, class_name).settings
    per_hour = int(settings.get("uploads_per_hour", DEFAULT_SETTINGS["uploads_per_hour"]))
    made = sorted(
        s.created
        for s in stored.submissions_of(store, assignment_id, user_id)
        if s.upload_id is None and s.created > now - timedelta(hours=1)
    )
    if len(made) >= per_hour:
        wait = max(
            1,
            int((made[len(made) - per_hour] + timedelta(hours=1) - now).total_seconds() // 60) + 1,
        )
        raise ClassError(
            f"you have submitted {len(made)} versions in the last hour, the most class "
            f"{class_name} allows: try again in {wait} minute{'s' if wait > 1 else ''}."
        )


def submit_version(
    store: Store,
    actor: Actor,
    class_name: str,
    assignment: str,
    version_ref: str,
    *,
    owner: str | None = None,
    now: datetime | None = None,
) -> SubmissionView:
    """Submit a stored version of ``actor``'s own (``NAME[@VERSION]``, the latest by
    default; ``OWNER/`` may name the student; the operator names the student ``owner``):
    its gauntlet starts at once. Return it.

    Raises:
        PermissionDenied, NotFound: as :func:`submission_checks`; no such bot or version of
            the student's.
        AssignmentError: a teacher, the assignment has not opened, or a bad reference.
        ClassError: the student submitted stored versions to this assignment as often in
            the last hour as the class's ``uploads_per_hour`` allows.
    """
    student, class_id = _student(store, actor, class_name, owner)
    moment = _now(now)
    row, late = _open_assignment(store, class_id, class_name, assignment, moment)
    _check_version_quota(store, class_name, row.id, student.id, moment)
    try:
        parsed = parse_reference(version_ref.strip())
    except ArenaError as exc:
        raise AssignmentError(f"{str(exc).rstrip('.')}: name your bot as NAME[@VERSION].") from None
    if parsed.owner not in (None, student.name):
        raise AssignmentError("submit a bot of your own (NAME[@VERSION]).")
    view = bot_view(store, student.name, parsed.name, OPERATOR)  # the student's own
    if view is None or not view.versions:
        raise NotFound(f"you have no bot called {parsed.name}")
    numbers = {v.version for v in view.versions}
    version = max(numbers) if parsed.version is None else parsed.version
    if version not in numbers:
        raise NotFound(f"your bot {parsed.name} has no version {version}")
    version_id = _version_id(store, view.id, version)
    [(_, _, _, runtime)] = bot_sources(store, [version_id])
    if runtime not in assignment_runtimes(row):
        raise AssignmentError(
            f"assignment {row.name} takes bots in {', '.join(assignment_runtimes(row))}: "
            f"{parsed.name} v{version} is a {runtime} bot."
        )
    submission_id, new = stored.insert_version_submission(
        store, row.id, student.id, version_id, late=late, now=moment,
        since=moment - timedelta(seconds=REPEAT_SECONDS),
    )  # fmt: skip
    if new:  # else a double submit: the first one, its gauntlet started once
        start_gauntlet(store, submission_id, version_id, now=moment)
    return submission_view(store, actor, submission_id)
