"""The classes' part of the JSON API (docs/api.md, docs/classes.md), on the API's blueprint
(:mod:`web.api`: tokens, the error shape, the OpenAPI document): the caller's classes, one
class, creating one (teachers, a ``run`` token), joining one with its code, the teacher's
roster, a roster import, the join code, teachers, password resets, the class leaderboard,
one-click class tournaments, and the requests for the teacher role.

Every action is the service's (arena.service.classes, arena.service.role_requests), which
checks its permission: a class is 404 to strangers, 403 to its students where only its
teachers may act. A mistake is 400 with the service's one sentence.

Imported by web.app before the blueprint is registered (its routes join it then).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from flask import Response, after_this_request, url_for
from pydantic import BaseModel, Field
from spectree import Response as Responses

from arena.errors import ArenaError, NotFound, PermissionDenied
from arena.service import classes as service
from arena.service import role_requests as roles
from arena.service.accounts import Account
from arena.service.classes import ClassRow, NewClass
from web.api import ERRORS, ApiError, api, spec
from web.api import caller as _caller
from web.api import fail as _fail
from web.api import iso as _iso
from web.api import num as _num
from web.auth import guarded, public
from web.extensions import get_store

__all__ = ["ClassCreate", "ClassModel"]

TAGS = ["classes"]
T = TypeVar("T")


# --- models ----------------------------------------------------------------------------------


class ClassModel(BaseModel):
    name: str
    description: str
    rule_sets: list[str] = Field(description="preset names, the first the default")
    settings: dict[str, Any] = Field(description="uploads_per_hour, checks_queued, show_reference")
    teaching: bool = Field(description="the caller is a teacher of it (or an admin)")
    students: int | None = Field(description="how many (teachers only)")
    join_code: str | None = Field(description="teachers only; null: closed")
    join_expires: str | None
    join_path: str | None = Field(description="the join page's path (teachers only)")
    created: str


class ClassesModel(BaseModel):
    teaching: list[ClassModel]
    joined: list[ClassModel]


class ClassCreate(BaseModel):
    name: str = Field(min_length=1, max_length=64)
    description: str = Field("", max_length=5000)
    rule_sets: list[str] = Field(default_factory=lambda: ["block"], max_length=20)
    uploads_per_hour: int = 10
    checks_queued: int = 30
    show_reference: bool = True
    join_hours: float = Field(24.0, description="how long the first join code lasts (0: none)")


class JoinRequest(BaseModel):
    real_name: str = Field("", max_length=200, description="seen by the class's teachers only")


class RosterImport(BaseModel):
    csv: str = Field(max_length=200_000, description="a line 'real name[,login]' a student")


class RosterLoginModel(BaseModel):
    real_name: str
    login: str
    password: str = Field(description="a first-time password, shown this once")


class RosterLoginsModel(BaseModel):
    logins: list[RosterLoginModel]


class RosterRowModel(BaseModel):
    student: str
    real_name: str | None
    via: str = Field(description="code (a new account), roster, or account (an existing one)")
    joined: str
    version: str | None = Field(description="owner/bot vN: the latest version")
    version_id: int | None
    uploaded: str | None
    check: dict[str, Any] | None = Field(description="the latest version's check report")
    rating: float | None
    low: float | None
    high: float | None
    games: int
    faults: int = Field(description="games the latest version forfeited")
    upload_id: int | None
    upload_status: str | None
    upload_message: str | None
    upload_created: str | None
    source: str | None = Field(description="the latest version's source (API path)")


class RosterModel(BaseModel):
    name: str
    rules: str
    students: list[RosterRowModel]


class JoinCodeRequest(BaseModel):
    hours: float = Field(24.0, description="how long the new code lasts")


class TeacherRequest(BaseModel):
    user: str = Field(min_length=1, max_length=100)


class TeachersModel(BaseModel):
    name: str
    teachers: int


class PasswordModel(BaseModel):
    student: str
    password: str = Field(description="a first-time password, to change at the next login")


class LeaderboardRowModel(BaseModel):
    rank: str
    name: str = Field(description="owner/bot vN")
    owner: str
    bot: str
    version: int
    rating: float | None
    low: float | None
    high: float | None
    games: int
    reference: bool


class ClassLeaderboardModel(BaseModel):
    name: str
    rules: str
    computed: str | None
    rows: list[LeaderboardRowModel]


class ClassTournamentRequest(BaseModel):
    reference: bool = Field(True, description="with the reference bots")
    rules: str | None = Field(None, description="default: the class's first rule set")
    games: int = Field(10, description="games a pair")


class TournamentModel(BaseModel):
    id: int
    name: str


class RoleRequestBody(BaseModel):
    role: str = Field("teacher", description="the role asked for")


class RoleRequestModel(BaseModel):
    status: str = Field(description="requested, granted (requests are open) or held")


class RoleRequestRow(BaseModel):
    name: str
    role: str
    requested: str
    at: str | None


class RoleRequestsModel(BaseModel):
    requests: list[RoleRequestRow]


class RoleDecision(BaseModel):
    grant: bool


class RoleDecisionModel(BaseModel):
    name: str
    role: str = Field(description="its role afterwards")


# --- helpers ---------------------------------------------------------------------------------


def _class(row: ClassRow, actor: Account) -> ClassModel:
    teaching = service.is_teacher(get_store(), actor, row.id)
    return ClassModel(
        name=row.name, description=row.description, rule_sets=list(row.rule_sets),
        settings=row.settings, teaching=teaching,
        students=len(service.student_ids(get_store(), row.id)) if teaching else None,
        join_code=row.join_code if teaching else None,
        join_expires=_iso(row.join_expires) if teaching else None,
        join_path=f"/join/{row.join_code}" if teaching and row.join_code else None,
        created=row.created.isoformat(),
    )  # fmt: skip


def _acting(act: Callable[[], T]) -> T:
    """``act()``, its mistakes 400 with their sentence (refusals go to the API's handler)."""
    try:
        return act()
    except (PermissionDenied, NotFound):
        raise
    except (ArenaError, ValueError) as exc:
        return _fail(400, str(exc))  # type: ignore[no-any-return]


# --- endpoints -------------------------------------------------------------------------------


@api.get("/classes")
@public
@spec.validate(resp=Responses(HTTP_200=ClassesModel, **ERRORS), tags=TAGS)
def api_classes() -> ClassesModel:
    """The caller's classes: those it teaches (an admin: every class) and those it joined."""
    account = _caller("read")
    taught, joined = service.my_classes(get_store(), account)
    return ClassesModel(
        teaching=[_class(r, account) for r in taught], joined=[_class(r, account) for r in joined]
    )


@api.get("/classes/<name>")
@public
@spec.validate(resp=Responses(HTTP_200=ClassModel, HTTP_404=ApiError, **ERRORS), tags=TAGS)
def api_class(name: str) -> ClassModel:
    """A class, for its students and teachers (its join code for its teachers only)."""
    account = _caller("read")
    return _class(service.class_for_member(get_store(), account, name), account)


@api.post("/classes")
@guarded("create-class", early=False)
@spec.validate(
    json=ClassCreate, resp=Responses(HTTP_201=ClassModel, HTTP_400=ApiError, **ERRORS), tags=TAGS
)
def api_create_class(json: ClassCreate) -> tuple[ClassModel, int]:
    """Create a class (teachers, organisers, admins; a ``run`` token), the caller its first
    teacher, with a join code lasting ``join_hours``. 201."""
    account = _caller("run")
    new = NewClass(
        name=json.name, description=json.description, rule_sets=tuple(json.rule_sets),
        uploads_per_hour=json.uploads_per_hour, checks_queued=json.checks_queued,
        show_reference=json.show_reference, join_hours=json.join_hours,
    )  # fmt: skip
    row = _acting(lambda: service.create_class(get_store(), account, new))
    return _class(row, account), 201


@api.post("/join/<code>")
@guarded("join-class", early=False)
@spec.validate(
    json=JoinRequest,
    resp=Responses(HTTP_200=ClassModel, HTTP_400=ApiError, **ERRORS),
    tags=TAGS,
)
def api_join(code: str, json: JoinRequest) -> ClassModel:
    """Join the class whose join code is ``code`` as a student (an ``upload`` token); a
    real name, optional, is seen by its teachers only. Joining again changes nothing."""
    account = _caller("upload")
    row = _acting(lambda: service.join_as(get_store(), account, code, json.real_name))
    return _class(row, account)


@api.get("/classes/<name>/roster")
@guarded("manage-class", early=False)
@spec.validate(resp=Responses(HTTP_200=RosterModel, HTTP_404=ApiError, **ERRORS), tags=TAGS)
def api_roster(name: str) -> RosterModel:
    """The class's students (its teachers only): real names, each one's latest version
    with its check report, rating and interval, faults and source, its latest upload."""
    account = _caller("read")
    view = service.roster_view(get_store(), account, name)
    rows = []
    for r in view.students:
        source = None
        if r.version is not None:
            v = r.version
            source = url_for("api.api_bot_source", owner=v.owner, name=v.bot, version=v.version)
        rows.append(RosterRowModel(
            student=r.student, real_name=r.real_name, via=r.via, joined=r.joined.isoformat(),
            version=None if r.version is None else str(r.version), version_id=r.version_id,
            uploaded=_iso(r.uploaded), check=r.check, rating=_num(r.rating), low=_num(r.low),
            high=_num(r.high), games=r.games, faults=r.faults, upload_id=r.upload_id,
            upload_status=r.upload_status, upload_message=r.upload_message,
            upload_created=_iso(r.upload_created), source=source,
        ))  # fmt: skip
    return RosterModel(name=view.row.name, rules=view.rules, students=rows)


def _no_store() -> None:
    """This request's answer (first-time passwords) is kept by no cache, as the pages'."""

    @after_this_request
    def kept_by_none(response: Response) -> Response:
        response.headers["Cache-Control"] = "no-store"
        return response


@api.post("/classes/<name>/roster")
@guarded("manage-class", early=False)
@spec.validate(
    json=RosterImport,
    resp=Responses(HTTP_201=RosterLoginsModel, HTTP_400=ApiError, HTTP_404=ApiError, **ERRORS),
    tags=TAGS,
)
def api_import_roster(name: str, json: RosterImport) -> tuple[RosterLoginsModel, int]:
    """Import a roster CSV (its teachers; a ``run`` token): an account for each line, with
    a login made from the real name where none is given and a first-time password to
    change at the first login. 201 with the logins and passwords, shown this once."""
    from flask import current_app

    account = _caller("run")
    _no_store()
    hasher = current_app.config["ARENA_PASSWORD_HASHER"]
    made = _acting(lambda: service.import_roster(get_store(), account, name, json.csv, hasher))
    logins = [RosterLoginModel(real_name=r.real_name, login=r.login, password=r.password)
              for r in made]  # fmt: skip
    return RosterLoginsModel(logins=logins), 201


@api.post("/classes/<name>/join-code")
@guarded("manage-class", early=False)
@spec.validate(
    json=JoinCodeRequest,
    resp=Responses(HTTP_200=ClassModel, HTTP_400=ApiError, HTTP_404=ApiError, **ERRORS),
    tags=TAGS,
)
def api_rotate_code(name: str, json: JoinCodeRequest) -> ClassModel:
    """Draw a new join code lasting ``hours`` (its teachers): the old one stops working."""
    account = _caller("run")
    row = _acting(lambda: service.rotate_join_code(get_store(), account, name, hours=json.hours))
    return _class(row, account)


@api.delete("/classes/<name>/join-code")
@guarded("manage-class", early=False)
@spec.validate(resp=Responses(HTTP_200=ClassModel, HTTP_404=ApiError, **ERRORS), tags=TAGS)
def api_close_code(name: str) -> ClassModel:
    """Close joining the class by code (its teachers); the roster still adds students."""
    account = _caller("run")
    return _class(service.close_join_code(get_store(), account, name), account)


@api.post("/classes/<name>/teachers")
@guarded("manage-class", early=False)
@spec.validate(
    json=TeacherRequest,
    resp=Responses(HTTP_200=TeachersModel, HTTP_400=ApiError, HTTP_404=ApiError, **ERRORS),
    tags=TAGS,
)
def api_add_teacher(name: str, json: TeacherRequest) -> TeachersModel:
    """Make the user ``user`` (who has the teacher role) a teacher of the class too."""
    account = _caller("run")
    row = _acting(lambda: service.add_teacher(get_store(), account, name, json.user))
    return TeachersModel(name=row.name, teachers=len(row.teacher_ids))


@api.post("/classes/<name>/students/<student>/password")
@guarded("manage-class", early=False)
@spec.validate(
    resp=Responses(HTTP_200=PasswordModel, HTTP_400=ApiError, HTTP_404=ApiError, **ERRORS),
    tags=TAGS,
)
def api_reset_password(name: str, student: str) -> PasswordModel:
    """Give a student of the class a new first-time password (its teachers; never a
    teacher's or above): shown this once, changed at the next login; its sessions end."""
    from flask import current_app

    account = _caller("run")
    _no_store()
    hasher = current_app.config["ARENA_PASSWORD_HASHER"]
    password = _acting(lambda: service.reset_password(get_store(), account, name, student, hasher))
    return PasswordModel(student=student, password=password)


@api.get("/classes/<name>/leaderboard")
@public
@spec.validate(
    resp=Responses(HTTP_200=ClassLeaderboardModel, HTTP_404=ApiError, **ERRORS), tags=TAGS
)
def api_class_leaderboard(name: str) -> ClassLeaderboardModel:
    """The class's leaderboard (its students and teachers): its students' bots, and the
    reference bots as the class shows them (``?reference=true|false``; ``?rules=R``)."""
    from flask import request

    account = _caller("read")
    shown = request.args.get("reference")
    board = service.class_leaderboard(
        get_store(), account, name,
        show_reference=None if shown is None else shown.lower() in ("1", "true", "yes"),
        rules=request.args.get("rules") or None,
    )  # fmt: skip
    rows = [LeaderboardRowModel(
        rank=r.rank, name=str(r.name), owner=r.owner, bot=r.bot, version=r.version,
        rating=_num(r.rating), low=_num(r.low), high=_num(r.high), games=r.games,
        reference=r.reference) for r in board.rows]  # fmt: skip
    return ClassLeaderboardModel(
        name=board.row.name, rules=board.rules, computed=_iso(board.computed), rows=rows
    )


@api.post("/classes/<name>/tournaments")
@guarded("manage-class", early=False)
@spec.validate(
    json=ClassTournamentRequest,
    resp=Responses(HTTP_202=TournamentModel, HTTP_400=ApiError, HTTP_404=ApiError, **ERRORS),
    tags=TAGS,
)
def api_class_tournament(name: str, json: ClassTournamentRequest) -> tuple[TournamentModel, int]:
    """Start a round robin between the students' latest versions, with or without the
    reference bots (its teachers; a ``run`` token). 202: the workers play it."""
    from arena.store.tournaments import get_tournament

    account = _caller("run")
    tournament_id = _acting(lambda: service.start_class_tournament(
        get_store(), account, name, reference=json.reference, rules=json.rules,
        games=json.games))  # fmt: skip
    found = get_tournament(get_store(), tournament_id)
    assert found is not None
    return TournamentModel(id=tournament_id, name=found.name), 202


@api.post("/role-requests")
@guarded("request-role", early=False)
@spec.validate(
    json=RoleRequestBody,
    resp=Responses(HTTP_200=RoleRequestModel, HTTP_400=ApiError, **ERRORS),
    tags=TAGS,
)
def api_request_role(json: RoleRequestBody) -> RoleRequestModel:
    """Ask for the teacher role: ``requested`` (an admin decides), ``granted`` (the server
    grants requests at once) or ``held``; 400 where the server takes no requests."""
    account = _caller("read")
    return RoleRequestModel(status=_acting(lambda: roles.request_role(get_store(), account,
                                                                      json.role)))  # fmt: skip


@api.get("/role-requests")
@guarded("manage-users", early=False)
@spec.validate(resp=Responses(HTTP_200=RoleRequestsModel, **ERRORS), tags=TAGS)
def api_role_requests() -> RoleRequestsModel:
    """The pending role requests, the oldest first (admins only)."""
    account = _caller("read")
    return RoleRequestsModel(requests=[
        RoleRequestRow(name=r.name, role=r.role, requested=r.requested, at=_iso(r.at))
        for r in roles.role_requests(get_store(), account)
    ])  # fmt: skip


@api.post("/role-requests/<name>")
@guarded("manage-users", early=False)
@spec.validate(
    json=RoleDecision,
    resp=Responses(HTTP_200=RoleDecisionModel, HTTP_404=ApiError, **ERRORS),
    tags=TAGS,
)
def api_decide_role(name: str, json: RoleDecision) -> RoleDecisionModel:
    """Grant or refuse a user's role request (admins only)."""
    account = _caller("run")
    role = roles.decide_role_request(get_store(), account, name, json.grant)
    return RoleDecisionModel(name=name, role=role)
