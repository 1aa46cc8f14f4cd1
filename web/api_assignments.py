"""The assignments' part of the JSON API (docs/api.md, docs/assignments.md), on the API's
blueprint (:mod:`web.api`: tokens, the error shape, the OpenAPI document): creating an
assignment (a teacher of the class, a ``run`` token), one assignment with the submissions
the caller may see, submitting a bot (a student, an ``upload`` token: a file, or a stored
version), one submission with its verdict per reference, and the grade table (teachers).

Imported by web.app before the blueprint is registered (its routes join it then).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from flask import request
from pydantic import BaseModel, Field
from spectree import Response as Responses
from spectree.model_adapter.pydantic_adapter import BaseFile
from werkzeug.datastructures import FileStorage

from arena.errors import ArenaError, NotFound, PermissionDenied
from arena.service import assignments as service
from arena.service.assignments import (
    AssignmentView,
    GradeRow,
    NewAssignment,
    ReferenceResult,
    SubmissionView,
)
from web.api import ERRORS, ApiError, api, spec
from web.api import caller as _caller
from web.api import fail as _fail
from web.api import iso as _iso
from web.api import num as _num
from web.auth import guarded, public
from web.extensions import get_store
from web.forms import read_file
from web.routing import MAX_ID

__all__ = ["AssignmentCreate", "AssignmentModel"]

TAGS = ["assignments"]
_DEFAULTS = NewAssignment(class_name="", name="", deadline=datetime.min)


# --- models ----------------------------------------------------------------------------------


class ReferenceResultModel(BaseModel):
    reference: str
    score: float | None = Field(description="the submission's mean game score against it, 0-1")
    elo: float | None = Field(description="its Elo advantage over the reference")
    low: float | None
    high: float | None
    verdict: str = Field(description="pass, fail, undecided (the cap), running or pending")
    games: int
    tournament: str = Field(description="the compare tournament: its games")


class SubmissionModel(BaseModel):
    id: int
    class_name: str
    assignment: str
    student: str
    version: str | None = Field(description="OWNER/BOT@N once accepted")
    sha256: str | None
    status: str = Field(description="pending, rejected, grading or graded")
    late: bool
    reason: str | None
    grade: str | None
    created: str
    accepted: str | None
    graded: str | None
    upload_id: int | None
    kept: bool = Field(description="the student's kept submission (its grade counts)")
    references: list[ReferenceResultModel]


class ThresholdModel(BaseModel):
    grade: str
    beats: list[str]


class ReferenceModel(BaseModel):
    label: str
    bot: str = Field(description="OWNER/BOT@N, pinned when the assignment was created")


class AssignmentModel(BaseModel):
    class_name: str
    name: str
    description: str
    rules: str
    players: int
    teams: bool
    settings: dict[str, Any]
    references: list[ReferenceModel]
    grades: list[ThresholdModel]
    opens: str
    deadline: str
    time_zone: str
    is_open: bool
    past_deadline: bool
    teacher: bool = Field(description="the caller teaches the class (sees every submission)")
    submissions: list[SubmissionModel]


class AssignmentCreate(BaseModel):
    name: str = Field(min_length=1, max_length=64)
    deadline: datetime = Field(description="ISO 8601 with its offset")
    opens: datetime | None = Field(None, description="default: now")
    time_zone: str = Field("UTC", max_length=64, examples=["Europe/Paris"])
    rules: str = Field(_DEFAULTS.rules, description="one of the class's rule sets")
    references: list[str] = Field(
        default_factory=lambda: list(_DEFAULTS.references),
        max_length=20,
        description="stored bots, [LABEL=][OWNER/]BOT[@N]; owner default 'reference'",
    )
    grades: list[ThresholdModel] = Field(
        default_factory=lambda: [
            ThresholdModel(grade=g, beats=list(b)) for g, b in _DEFAULTS.grades
        ],
        max_length=40,
        description="best first; the last beats nothing",
    )
    elo0: float = _DEFAULTS.elo0
    elo1: float = _DEFAULTS.elo1
    alpha: float = _DEFAULTS.alpha
    beta: float = _DEFAULTS.beta
    max_games: int = Field(_DEFAULTS.max_games, description="the cap of each test")
    batch: int = _DEFAULTS.batch
    move_ms: int = Field(_DEFAULTS.move_ms, description="time a move, in milliseconds")
    memory_mb: int = _DEFAULTS.memory_mb
    statistic: str = Field(_DEFAULTS.statistic, description="margin or game")
    description: str = Field("", max_length=5000)


class SubmissionForm(BaseModel):
    source: BaseFile | None = None
    name: str = Field("", max_length=64, description="the bot's name (default: the file's)")
    version: str = Field(
        "", max_length=200, description="instead of a file: a bot of yours, BOT[@N]"
    )


class GradeRowModel(BaseModel):
    student: str
    real_name: str | None
    version: str | None
    sha256: str | None
    submitted: str | None
    late: bool
    rating: float | None
    low: float | None
    high: float | None
    references: list[ReferenceResultModel]
    grade: str | None = Field(description="null: nothing submitted, or being graded")


class GradesModel(BaseModel):
    class_name: str
    assignment: str
    references: list[str]
    rows: list[GradeRowModel]


# --- conversions -----------------------------------------------------------------------------


def _result(r: ReferenceResult) -> ReferenceResultModel:
    return ReferenceResultModel(
        reference=r.reference, score=_num(r.score, 3), elo=_num(r.elo), low=_num(r.low),
        high=_num(r.high), verdict=r.verdict, games=r.games, tournament=r.tournament,
    )  # fmt: skip


def _submission(s: SubmissionView) -> SubmissionModel:
    return SubmissionModel(
        id=s.id, class_name=s.class_name, assignment=s.assignment, student=s.student,
        version=s.version, sha256=s.sha256, status=s.status, late=s.late, reason=s.reason,
        grade=s.grade, created=s.created.isoformat(), accepted=_iso(s.accepted),
        graded=_iso(s.graded), upload_id=s.upload_id, kept=s.kept,
        references=[_result(r) for r in s.references],
    )  # fmt: skip


def _assignment(v: AssignmentView) -> AssignmentModel:
    return AssignmentModel(
        class_name=v.class_name, name=v.name, description=v.description, rules=v.rules,
        players=v.players, teams=v.teams, settings=v.settings,
        references=[ReferenceModel(label=label, bot=bot) for label, bot in v.references],
        grades=[ThresholdModel(grade=g, beats=list(b)) for g, b in v.grades],
        opens=v.opens.isoformat(), deadline=v.deadline.isoformat(), time_zone=v.time_zone,
        is_open=v.is_open, past_deadline=v.past_deadline, teacher=v.teacher,
        submissions=[_submission(s) for s in v.submissions],
    )  # fmt: skip


def _grade_row(r: GradeRow) -> GradeRowModel:
    return GradeRowModel(
        student=r.student, real_name=r.real_name, version=r.version, sha256=r.sha256,
        submitted=_iso(r.submitted), late=r.late, rating=_num(r.rating), low=_num(r.low),
        high=_num(r.high), references=[_result(x) for x in r.references], grade=r.grade,
    )  # fmt: skip


# --- endpoints -------------------------------------------------------------------------------


@api.post("/classes/<class_name>/assignments")
@guarded("manage-class", early=False)
@spec.validate(
    json=AssignmentCreate,
    resp=Responses(HTTP_201=AssignmentModel, HTTP_400=ApiError, HTTP_404=ApiError, **ERRORS),
    tags=TAGS,
)
def api_create_assignment(class_name: str, json: AssignmentCreate) -> tuple[AssignmentModel, int]:
    """Create a graded assignment of the class (its teachers; a ``run`` token): each
    submission plays every reference under the sequential test (elo0, elo1, alpha, beta,
    at most max_games games), and the first threshold whose references it beats is its
    grade. 201."""
    account = _caller("run")
    new = NewAssignment(
        class_name=class_name, name=json.name, deadline=json.deadline, opens=json.opens,
        time_zone=json.time_zone, rules=json.rules, references=tuple(json.references),
        grades=tuple((g.grade, tuple(g.beats)) for g in json.grades), elo0=json.elo0,
        elo1=json.elo1, alpha=json.alpha, beta=json.beta, max_games=json.max_games,
        batch=json.batch, move_ms=json.move_ms, memory_mb=json.memory_mb,
        statistic=json.statistic, description=json.description,
    )  # fmt: skip
    store = get_store()
    try:
        row = service.create_assignment(store, account, new)
    except (PermissionDenied, NotFound):
        raise
    except (ArenaError, ValueError) as exc:
        _fail(400, str(exc))
    return _assignment(service.assignment_view(store, account, class_name, row.name)), 201


@api.get("/classes/<class_name>/assignments/<name>")
@public
@spec.validate(resp=Responses(HTTP_200=AssignmentModel, HTTP_404=ApiError, **ERRORS), tags=TAGS)
def api_assignment(class_name: str, name: str) -> AssignmentModel:
    """An assignment (its teachers and students): its settings, references and grade
    thresholds, and the submissions the caller may see (a teacher: all; a student: their
    own) with their verdicts per reference."""
    account = _caller("read")
    return _assignment(service.assignment_view(get_store(), account, class_name, name))


@api.post("/classes/<class_name>/assignments/<name>/submissions")
@guarded("upload", early=False)
@spec.validate(
    form=SubmissionForm,
    resp=Responses(HTTP_202=SubmissionModel, HTTP_400=ApiError, HTTP_404=ApiError,
                   HTTP_413=ApiError, **ERRORS),
    tags=TAGS,
)  # fmt: skip
def api_submit(class_name: str, name: str, form: SubmissionForm) -> tuple[SubmissionModel, int]:
    """Submit a bot to the assignment (a student of the class; an ``upload`` token):
    multipart ``source`` (a .py file, checked on a worker: ``pending`` until then) or
    ``version`` (a stored bot of yours, ``BOT[@N]``). 202 with the submission; poll
    ``/submissions/{id}`` for its verdicts and grade."""
    account = _caller("upload")
    file: FileStorage | None = request.files.get("source")  # (the form's model documents it)
    version = form.version.strip()
    if (file is None or not file.filename) == (not version):
        _fail(400, "send the bot as the multipart file field 'source', or name 'version'")
    store = get_store()
    try:
        if file is not None and file.filename:
            filename, data = read_file(file)
            view = service.submit_upload(
                store, account, class_name, name, filename, data, form.name
            )
        else:
            view = service.submit_version(store, account, class_name, name, version)
    except (PermissionDenied, NotFound):
        raise
    except ArenaError as exc:
        _fail(400, str(exc))
    return _submission(view), 202


@api.get("/submissions/<int:submission_id>")
@public
@spec.validate(resp=Responses(HTTP_200=SubmissionModel, HTTP_404=ApiError, **ERRORS), tags=TAGS)
def api_submission(submission_id: int) -> SubmissionModel:
    """A submission (its student, the class's teachers): status, verdict per reference
    with the score, Elo difference and interval, the games (the compare tournaments), and
    its grade once every test has ended."""
    account = _caller("read")
    if not 1 <= submission_id <= MAX_ID:
        _fail(404, f"no submission {submission_id}")
    return _submission(service.submission_view(get_store(), account, submission_id))


@api.get("/classes/<class_name>/assignments/<name>/grades")
@public
@spec.validate(resp=Responses(HTTP_200=GradesModel, HTTP_404=ApiError, **ERRORS), tags=TAGS)
def api_grades(class_name: str, name: str) -> GradesModel:
    """The grade table (the class's teachers): each student with the kept submission (the
    last accepted before the deadline; a late one only when there is none, marked late),
    its rating, its result against each reference and its grade."""
    account = _caller("read")
    store = get_store()
    rows = service.assignment_grades(store, account, class_name, name)
    view = service.assignment_view(store, account, class_name, name)
    return GradesModel(
        class_name=view.class_name,
        assignment=view.name,
        references=[label for label, _ in view.references],
        rows=[_grade_row(r) for r in rows],
    )
