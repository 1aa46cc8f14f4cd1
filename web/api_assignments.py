"""The assignments' part of the JSON API (docs/api.md, docs/assignments.md), on the API's
blueprint (:mod:`web.api`: tokens, the error shape, the OpenAPI document): creating an
assignment (a teacher of the class, a ``run`` token), one assignment with the submissions
the caller may see, submitting a bot (a student, an ``upload`` token: a file, or a stored
version), one submission with its verdict per reference, and the grade table (teachers).

Imported by web.app before the blueprint is registered (its routes join it then).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from flask import request
from pydantic import BaseModel, Field
from spectree import Response as Responses
from spectree.model_adapter.pydantic_adapter import BaseFile
from werkzeug.datastructures import FileStorage

from arena.errors import ArenaError, NotFound, PermissionDenied
from arena.service import assignments as service
from arena.service.assignment_views import Threshold
from arena.service.assignments import (
    AssignmentView,
    GradeRow,
    NewAssignment,
    SubmissionView,
)
from arena.service.intake import Purpose, take_upload
from web.api import ERRORS, ApiError, api, idempotency_key, replayed, spec
from web.api import caller as _caller
from web.api import fail as _fail
from web.auth import guarded, public
from web.extensions import get_store
from web.forms import read_file
from web.routing import MAX_ID

__all__ = ["AssignmentCreate"]

TAGS = ["assignments"]
_DEFAULTS = NewAssignment(class_name="", name="", deadline=datetime.min)


# --- models ----------------------------------------------------------------------------------


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
    grades: list[Threshold] = Field(
        default_factory=lambda: [Threshold(g, b) for g, b in _DEFAULTS.grades],
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
    runtimes: list[str] = Field(
        default_factory=lambda: list(_DEFAULTS.runtimes),
        max_length=8,
        description="the runtimes a submission may run under (python, cpp, ...)",
    )
    points: dict[str, float] = Field(
        default_factory=dict,
        max_length=40,
        description="each grade's points for a gradebook (every grade), or give max_points",
    )
    max_points: float | None = Field(
        None, description="the best grade's points, spread down to 0 (default 100)"
    )


class SubmissionForm(BaseModel):
    source: BaseFile | None = None
    name: str = Field("", max_length=64, description="the bot's name (default: the file's)")
    version: str = Field(
        "", max_length=200, description="instead of a file: a bot of yours, BOT[@N]"
    )
    runtime: str = Field(
        "", max_length=20, description="one the assignment takes (default: by the suffix)"
    )


@dataclass(frozen=True, slots=True)
class Grades:
    """An assignment's grade table."""

    class_name: str
    assignment: str
    references: list[str]
    rows: list[GradeRow]


# --- endpoints -------------------------------------------------------------------------------


@api.post("/classes/<class_name>/assignments")
@guarded("manage-class", early=False)
@spec.validate(
    json=AssignmentCreate,
    resp=Responses(HTTP_201=AssignmentView, HTTP_400=ApiError, HTTP_404=ApiError, **ERRORS),
    tags=TAGS,
)
def api_create_assignment(class_name: str, json: AssignmentCreate) -> tuple[AssignmentView, int]:
    """Create a graded assignment of the class (its teachers; a ``run`` token): each
    submission plays every reference under the sequential test (elo0, elo1, alpha, beta,
    at most max_games games), and the first threshold whose references it beats is its
    grade. 201."""
    account = _caller("run")
    new = NewAssignment(
        class_name=class_name, name=json.name, deadline=json.deadline, opens=json.opens,
        time_zone=json.time_zone, rules=json.rules, references=tuple(json.references),
        grades=tuple((g.grade, g.beats) for g in json.grades), elo0=json.elo0,
        elo1=json.elo1, alpha=json.alpha, beta=json.beta, max_games=json.max_games,
        batch=json.batch, move_ms=json.move_ms, memory_mb=json.memory_mb,
        statistic=json.statistic, description=json.description,
        runtimes=tuple(json.runtimes), points=tuple(json.points.items()),
        max_points=json.max_points,
    )  # fmt: skip
    store = get_store()
    try:
        row = service.create_assignment(store, account, new)
    except (PermissionDenied, NotFound):
        raise
    except (ArenaError, ValueError) as exc:
        _fail(400, str(exc))
    return service.assignment_view(store, account, class_name, row.name), 201


@api.get("/classes/<class_name>/assignments/<name>")
@public
@spec.validate(resp=Responses(HTTP_200=AssignmentView, HTTP_404=ApiError, **ERRORS), tags=TAGS)
def api_assignment(class_name: str, name: str) -> AssignmentView:
    """An assignment (its teachers and students): its settings, references and grade
    thresholds, and the submissions the caller may see (a teacher: all; a student: their
    own) with their verdicts per reference."""
    account = _caller("read")
    return service.assignment_view(get_store(), account, class_name, name)


@api.post("/classes/<class_name>/assignments/<name>/submissions")
@guarded("upload", early=False)
@spec.validate(
    form=SubmissionForm,
    resp=Responses(HTTP_202=SubmissionView, HTTP_400=ApiError, HTTP_404=ApiError,
                   HTTP_413=ApiError, **ERRORS),
    tags=TAGS,
)  # fmt: skip
def api_submit(
    class_name: str, name: str, form: SubmissionForm
) -> tuple[SubmissionView, int, dict[str, str]]:
    """Submit a bot to the assignment (a student of the class; an ``upload`` token):
    multipart ``source`` (a bot file, checked on a worker: ``pending`` until then; ``runtime``
    one the assignment takes, default by the file's suffix) or
    ``version`` (a stored bot of yours, ``BOT[@N]``). 202 with the submission; poll
    ``/submissions/{id}`` for its verdicts and grade. An ``Idempotency-Key`` header sent
    again (or the same file again within a minute) answers the first submission, with
    ``Idempotent-Replayed: true``."""
    account = _caller("upload")
    file: FileStorage | None = request.files.get("source")  # (the form's model documents it)
    version = form.version.strip()
    if (file is None or not file.filename) == (not version):
        _fail(400, "send the bot as the multipart file field 'source', or name 'version'")
    store = get_store()
    headers: dict[str, str] = {}
    try:
        if file is not None and file.filename:
            filename, data = read_file(file)
            received = take_upload(
                store, account, filename, data,
                purpose=Purpose.submission(class_name, name), name=form.name,
                runtime=form.runtime or None, key=idempotency_key(),
            )  # fmt: skip
            assert received.submission is not None
            view, headers = received.submission, replayed(received)
        else:
            view = service.submit_version(store, account, class_name, name, version)
    except (PermissionDenied, NotFound):
        raise
    except ArenaError as exc:
        _fail(400, str(exc))
    return view, 202, headers


@api.get("/submissions/<int:submission_id>")
@public
@spec.validate(resp=Responses(HTTP_200=SubmissionView, HTTP_404=ApiError, **ERRORS), tags=TAGS)
def api_submission(submission_id: int) -> SubmissionView:
    """A submission (its student, the class's teachers): status, verdict per reference
    with the score, Elo difference and interval, the games (the compare tournaments), and
    its grade once every test has ended."""
    account = _caller("read")
    if not 1 <= submission_id <= MAX_ID:
        _fail(404, f"no submission {submission_id}")
    return service.submission_view(get_store(), account, submission_id)


@api.get("/classes/<class_name>/assignments/<name>/grades")
@public
@spec.validate(resp=Responses(HTTP_200=Grades, HTTP_404=ApiError, **ERRORS), tags=TAGS)
def api_grades(class_name: str, name: str) -> Grades:
    """The grade table (the class's teachers): each student with the kept submission (the
    last accepted before the deadline; a late one only when there is none, marked late),
    its rating, its result against each reference and its grade."""
    account = _caller("read")
    store = get_store()
    rows = service.assignment_grades(store, account, class_name, name)
    view = service.assignment_view(store, account, class_name, name)
    return Grades(
        class_name=view.class_name, assignment=view.name, references=view.labels, rows=rows
    )
