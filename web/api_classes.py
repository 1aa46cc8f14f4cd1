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
from dataclasses import dataclass, field
from typing import Any, TypeVar

from flask import Response, after_this_request, url_for
from pydantic import BaseModel, Field
from spectree import Response as Responses

from arena.errors import ArenaError, NotFound, PermissionDenied
from arena.service import classes as service
from arena.service import role_requests as roles
from arena.service.accounts import Account
from arena.service.board_views import tournament_name
from arena.service.class_roster import RosterImported, RosterPreview
from arena.service.classes import (
    ClassLeaderboard,
    ClassRow,
    ClassView,
    NewClass,
    RosterRow,
    RosterView,
)
from arena.service.role_requests import RoleRequest
from arena.service.shapes import about, extend
from web.api import ERRORS, ApiError, api, spec
from web.api import caller as _caller
from web.api import fail as _fail
from web.auth import guarded, public
from web.extensions import get_store

__all__ = ["ClassAnswer"]

TAGS = ["classes"]
T = TypeVar("T")


# --- models ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ClassAnswer(ClassView):
    """A class, with its join page's path for its teachers."""

    join_path: str | None = field(
        default=None, metadata=about("the join page's path (teachers only)")
    )

    @classmethod
    def of(cls, view: ClassView) -> ClassAnswer:
        """``view`` with its join page's path (where its join code is shown)."""
        path = None if view.join_code is None else f"/join/{view.join_code}"
        return extend(view, cls, join_path=path)


@dataclass(frozen=True, slots=True)
class Classes:
    teaching: list[ClassAnswer]
    joined: list[ClassAnswer]


@dataclass(frozen=True, slots=True)
class SourcedRosterRow(RosterRow):
    """A student of the roster, with its latest version's source's URL."""

    source: str | None = field(
        default=None,
        metadata=about("the latest version's source (API path), once submitted to the class"),
    )


@dataclass(frozen=True, slots=True)
class Roster(RosterView):
    """The roster, its students' sources linked."""

    students: list[SourcedRosterRow]  # type: ignore[assignment]


@dataclass(frozen=True, slots=True)
class Teachers:
    name: str
    teachers: int


@dataclass(frozen=True, slots=True)
class NewPassword:
    student: str
    password: str = field(metadata=about("a first-time password, to change at the next login"))


@dataclass(frozen=True, slots=True)
class Started:
    """A class tournament sent to the workers."""

    id: int
    name: str


@dataclass(frozen=True, slots=True)
class RoleAsked:
    status: str = field(metadata=about("requested, granted (requests are open) or held"))


@dataclass(frozen=True, slots=True)
class RoleRequests:
    requests: list[RoleRequest]


@dataclass(frozen=True, slots=True)
class RoleDecided:
    name: str
    role: str = field(metadata=about("its role afterwards"))


class JoinRequest(BaseModel):
    real_name: str = Field("", max_length=200, description="seen by the class's teachers only")


class RosterImport(BaseModel):
    csv: str = Field(
        max_length=500_000,
        description="the roster file's text as the school's system exports it (Canvas, "
        "Moodle, Google Classroom, a list of names)",
    )
    columns: list[str] | None = Field(
        None,
        max_length=1000,
        description="what each column holds (real name, first, last, id, login, email, "
        "section, ignore; as the preview's columns): none, as recognised",
    )
    logins: str = Field(
        "pseudonym", description="pseudonym (spells no real name) or school (its logins)"
    )
    flagged: str = Field(
        "skip", description="a namesake without the school id in the class: skip, link or new"
    )

    def choices(self) -> dict[str, Any]:
        """The service's keyword arguments."""
        return {"mapping": self.columns, "logins": self.logins, "flagged": self.flagged}


class JoinCodeRequest(BaseModel):
    hours: float = Field(24.0, description="how long the new code lasts")


class PrivacyRequest(BaseModel):
    private: bool = Field(
        description="true: its students' bots, ratings and games for its members and teachers"
    )


class TeacherRequest(BaseModel):
    user: str = Field(min_length=1, max_length=100)


class ClassTournamentRequest(BaseModel):
    reference: bool = Field(True, description="with the reference bots")
    rules: str | None = Field(None, description="default: the class's first rule set")
    games: int = Field(10, description="games a pair")


class RoleRequestBody(BaseModel):
    role: str = Field("teacher", description="the role asked for")


class RoleDecision(BaseModel):
    grant: bool


# --- helpers ---------------------------------------------------------------------------------


def _class(row: ClassRow, actor: Account) -> ClassAnswer:
    return ClassAnswer.of(service.class_view(get_store(), actor, row))


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
@spec.validate(resp=Responses(HTTP_200=Classes, **ERRORS), tags=TAGS)
def api_classes() -> Classes:
    """The caller's classes: those it teaches (an admin: every class) and those it joined."""
    account = _caller("read")
    taught, joined = service.my_classes(get_store(), account)
    return Classes(
        teaching=[_class(r, account) for r in taught], joined=[_class(r, account) for r in joined]
    )


@api.get("/classes/<name>")
@public
@spec.validate(resp=Responses(HTTP_200=ClassAnswer, HTTP_404=ApiError, **ERRORS), tags=TAGS)
def api_class(name: str) -> ClassAnswer:
    """A class, for its students and teachers (its join code for its teachers only)."""
    account = _caller("read")
    return _class(service.class_for_member(get_store(), account, name), account)


@api.post("/classes")
@guarded("create-class", early=False)
@spec.validate(
    json=NewClass, resp=Responses(HTTP_201=ClassAnswer, HTTP_400=ApiError, **ERRORS), tags=TAGS
)
def api_create_class(json: NewClass) -> tuple[ClassAnswer, int]:
    """Create a class (teachers, organisers, admins; a ``run`` token), the caller its first
    teacher, with a join code lasting ``join_hours``. 201."""
    account = _caller("run")
    row = _acting(lambda: service.create_class(get_store(), account, json))
    return _class(row, account), 201


@api.post("/join/<code>")
@guarded("join-class", early=False)
@spec.validate(
    json=JoinRequest,
    resp=Responses(HTTP_200=ClassAnswer, HTTP_400=ApiError, **ERRORS),
    tags=TAGS,
)
def api_join(code: str, json: JoinRequest) -> ClassAnswer:
    """Join the class whose join code is ``code`` as a student (an ``upload`` token); a
    real name, optional, is seen by its teachers only. Joining again changes nothing."""
    account = _caller("upload")
    joined = _acting(lambda: service.join_as(get_store(), account, code, json.real_name))
    return _class(joined.row, account)


@api.get("/classes/<name>/roster")
@guarded("manage-class", early=False)
@spec.validate(resp=Responses(HTTP_200=Roster, HTTP_404=ApiError, **ERRORS), tags=TAGS)
def api_roster(name: str) -> Roster:
    """The class's students (its teachers only): real names, each one's latest version
    with its check report, rating and interval, faults and source, its latest upload."""
    account = _caller("read")
    view = service.roster_view(get_store(), account, name)
    rows = []
    for r in view.students:
        source = None
        if r.version is not None and r.submitted:  # else not the teachers' to read
            v = r.version
            source = url_for("api.api_bot_source", owner=v.owner, name=v.bot, version=v.version)
        rows.append(extend(r, SourcedRosterRow, source=source))
    return Roster(name=view.name, rules=view.rules, students=rows)


def _no_store() -> None:
    """This request's answer (first-time passwords) is kept by no cache, as the pages'."""

    @after_this_request
    def kept_by_none(response: Response) -> Response:
        response.headers["Cache-Control"] = "no-store"
        return response


@api.post("/classes/<name>/roster/preview")
@guarded("manage-class", early=False)
@spec.validate(
    json=RosterImport,
    resp=Responses(HTTP_200=RosterPreview, HTTP_400=ApiError, HTTP_404=ApiError, **ERRORS),
    tags=TAGS,
)
def api_preview_roster(name: str, json: RosterImport) -> RosterPreview:
    """What importing a roster file will do, nothing made (its teachers; a ``run`` token):
    the format and each column's role recognised, each student made, updated, unchanged or
    flagged (a namesake without its school id is in the class), the lines skipped."""
    account = _caller("run")
    return _acting(
        lambda: service.preview_roster(get_store(), account, name, json.csv, **json.choices())
    )


@api.post("/classes/<name>/roster")
@guarded("manage-class", early=False)
@spec.validate(
    json=RosterImport,
    resp=Responses(HTTP_201=RosterImported, HTTP_400=ApiError, HTTP_404=ApiError, **ERRORS),
    tags=TAGS,
)
def api_import_roster(name: str, json: RosterImport) -> tuple[RosterImported, int]:
    """Import a roster file as its preview shows (its teachers; a ``run`` token): an
    account for each student made (a pseudonym, or the school's login) with a first-time
    password to change at the first login; the students its school ids name updated,
    never made twice. 201 with the logins and passwords, shown this once."""
    from flask import current_app

    account = _caller("run")
    _no_store()
    hasher = current_app.config["ARENA_PASSWORD_HASHER"]
    made = _acting(
        lambda: service.import_roster(
            get_store(), account, name, json.csv, hasher, **json.choices()
        )
    )
    return made, 201


@api.post("/classes/<name>/join-code")
@guarded("manage-class", early=False)
@spec.validate(
    json=JoinCodeRequest,
    resp=Responses(HTTP_200=ClassAnswer, HTTP_400=ApiError, HTTP_404=ApiError, **ERRORS),
    tags=TAGS,
)
def api_rotate_code(name: str, json: JoinCodeRequest) -> ClassAnswer:
    """Draw a new join code lasting ``hours`` (its teachers): the old one stops working."""
    account = _caller("run")
    row = _acting(lambda: service.rotate_join_code(get_store(), account, name, hours=json.hours))
    return _class(row, account)


@api.delete("/classes/<name>/join-code")
@guarded("manage-class", early=False)
@spec.validate(resp=Responses(HTTP_200=ClassAnswer, HTTP_404=ApiError, **ERRORS), tags=TAGS)
def api_close_code(name: str) -> ClassAnswer:
    """Close joining the class by code (its teachers); the roster still adds students."""
    account = _caller("run")
    return _class(service.close_join_code(get_store(), account, name), account)


@api.put("/classes/<name>/privacy")
@guarded("manage-class", early=False)
@spec.validate(
    json=PrivacyRequest,
    resp=Responses(HTTP_200=ClassAnswer, HTTP_404=ApiError, **ERRORS),
    tags=TAGS,
)
def api_privacy(name: str, json: PrivacyRequest) -> ClassAnswer:
    """Make the class private (its students' bots, ratings, games and tournaments seen by
    its members, its teachers and the admins only; 404 to anyone else) or public again."""
    account = _caller("run")
    row = _acting(lambda: service.set_private(get_store(), account, name, json.private))
    return _class(row, account)


@api.post("/classes/<name>/teachers")
@guarded("manage-class", early=False)
@spec.validate(
    json=TeacherRequest,
    resp=Responses(HTTP_200=Teachers, HTTP_400=ApiError, HTTP_404=ApiError, **ERRORS),
    tags=TAGS,
)
def api_add_teacher(name: str, json: TeacherRequest) -> Teachers:
    """Make the user ``user`` (who has the teacher role) a teacher of the class too."""
    account = _caller("run")
    row = _acting(lambda: service.add_teacher(get_store(), account, name, json.user))
    return Teachers(name=row.name, teachers=len(row.teacher_ids))


@api.post("/classes/<name>/students/<student>/password")
@guarded("manage-class", early=False)
@spec.validate(
    resp=Responses(HTTP_200=NewPassword, HTTP_400=ApiError, HTTP_404=ApiError, **ERRORS),
    tags=TAGS,
)
def api_reset_password(name: str, student: str) -> NewPassword:
    """Give a student of the class a new first-time password (its teachers; never a
    teacher's or above): shown this once, changed at the next login; its sessions end."""
    from flask import current_app

    account = _caller("run")
    _no_store()
    hasher = current_app.config["ARENA_PASSWORD_HASHER"]
    password = _acting(lambda: service.reset_password(get_store(), account, name, student, hasher))
    return NewPassword(student=student, password=password)


@api.get("/classes/<name>/leaderboard")
@public
@spec.validate(resp=Responses(HTTP_200=ClassLeaderboard, HTTP_404=ApiError, **ERRORS), tags=TAGS)
def api_class_leaderboard(name: str) -> ClassLeaderboard:
    """The class's leaderboard (its students and teachers): its students' bots, and the
    reference bots as the class shows them (``?reference=true|false``; ``?rules=R``)."""
    from flask import request

    account = _caller("read")
    shown = request.args.get("reference")
    return service.class_leaderboard(
        get_store(), account, name,
        show_reference=None if shown is None else shown.lower() in ("1", "true", "yes"),
        rules=request.args.get("rules") or None,
    )  # fmt: skip


@api.post("/classes/<name>/tournaments")
@guarded("manage-class", early=False)
@spec.validate(
    json=ClassTournamentRequest,
    resp=Responses(HTTP_202=Started, HTTP_400=ApiError, HTTP_404=ApiError, **ERRORS),
    tags=TAGS,
)
def api_class_tournament(name: str, json: ClassTournamentRequest) -> tuple[Started, int]:
    """Start a round robin between the students' latest versions, with or without the
    reference bots (its teachers; a ``run`` token). 202: the workers play it."""
    account = _caller("run")
    tournament_id = _acting(lambda: service.start_class_tournament(
        get_store(), account, name, reference=json.reference, rules=json.rules,
        games=json.games))  # fmt: skip
    return Started(id=tournament_id, name=tournament_name(get_store(), tournament_id)), 202


@api.post("/role-requests")
@guarded("request-role", early=False)
@spec.validate(
    json=RoleRequestBody,
    resp=Responses(HTTP_200=RoleAsked, HTTP_400=ApiError, **ERRORS),
    tags=TAGS,
)
def api_request_role(json: RoleRequestBody) -> RoleAsked:
    """Ask for the teacher role: ``requested`` (an admin decides), ``granted`` (the server
    grants requests at once) or ``held``; 400 where the server takes no requests. A ``run``
    token: a write, not a read (a read token leaked from a script asks for nothing)."""
    account = _caller("run")
    return RoleAsked(status=_acting(lambda: roles.request_role(get_store(), account,
                                                                      json.role)))  # fmt: skip


@api.get("/role-requests")
@guarded("manage-users", early=False)
@spec.validate(resp=Responses(HTTP_200=RoleRequests, **ERRORS), tags=TAGS)
def api_role_requests() -> RoleRequests:
    """The pending role requests, the oldest first (admins only)."""
    account = _caller("read")
    return RoleRequests(requests=roles.role_requests(get_store(), account))


@api.post("/role-requests/<name>")
@guarded("manage-users", early=False)
@spec.validate(
    json=RoleDecision,
    resp=Responses(HTTP_200=RoleDecided, HTTP_404=ApiError, **ERRORS),
    tags=TAGS,
)
def api_decide_role(name: str, json: RoleDecision) -> RoleDecided:
    """Grant or refuse a user's role request (admins only)."""
    account = _caller("run")
    role = roles.decide_role_request(get_store(), account, name, json.grant)
    return RoleDecided(name=name, role=role)
