"""The organiser's tools in the JSON API (docs/api.md, docs/competitions.md), on the API's
blueprint (:mod:`web.api`): the copies across entrants, the action log, the settings that
change after creation, the ladder's pause (a ``run`` token, the organiser or an admin); the
announcements (anyone reads; the organiser posts); an entrant's withdrawal (an ``upload``
token); every game of the competition as JSON lines, streamed.

Each route calls the function of arena.service.competition_tools the page and ``arena
competition`` call; a refusal is the API's JSON error with the service's sentence.

Imported by web.app before the blueprint is registered (its routes join it then).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TypeVar

from flask import Response, stream_with_context
from pydantic import BaseModel, Field
from spectree import Response as Responses

from arena.errors import ArenaError, NotFound, PermissionDenied
from arena.service import competition_copies as copies
from arena.service import competition_tools as tools
from arena.service.competition_copies import CopyReport
from arena.service.competition_tools import (
    ActionView,
    AnnouncementView,
    Change,
    SettingsChange,
)
from web.api import ERRORS, ApiError, api, spec
from web.api import caller as _caller
from web.api import fail as _fail
from web.auth import guarded, public
from web.downloads import PRUNED_HEADER, disposition
from web.extensions import get_store

__all__ = ["Announcements", "Withdrawn"]

TAGS = ["competitions"]
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Announcements:
    announcements: list[AnnouncementView]


@dataclass(frozen=True, slots=True)
class ActionLog:
    actions: list[ActionView]


@dataclass(frozen=True, slots=True)
class Changes:
    changes: list[Change]


@dataclass(frozen=True, slots=True)
class Ladder:
    """The ladder after a pause or a resume: ``paused`` since when (null: it plays)."""

    name: str
    paused: datetime | None


@dataclass(frozen=True, slots=True)
class Withdrawn:
    """The versions the withdrawal took out of the ladder and the final."""

    name: str
    versions: list[int]


class CopiesQuery(BaseModel):
    threshold: float = Field(copies.THRESHOLD, ge=0, le=1, description="pairs above this score")


class AnnouncementRequest(BaseModel):
    body: str = Field(max_length=tools.MAX_ANNOUNCEMENT)


def _refused(act: Callable[[], T]) -> T:
    """``act()``, a CompetitionError (any refusal in a sentence) answered as 400."""
    try:
        return act()
    except (PermissionDenied, NotFound):
        raise
    except ArenaError as exc:
        return _fail(400, str(exc))  # type: ignore[no-any-return]


@api.get("/competitions/<name>/copies")
@guarded("manage-competition", early=False)
@spec.validate(
    query=CopiesQuery,
    resp=Responses(HTTP_200=CopyReport, HTTP_400=ApiError, HTTP_404=ApiError, **ERRORS),
    tags=TAGS,
)
def api_competition_copies(name: str, query: CopiesQuery) -> CopyReport:
    """The copies and near-copies across the competition's entrants (its organiser or an
    admin; a ``read`` token): one pair of versions a pair of entrants above ``threshold``,
    byte-for-byte copies always (``identical``), with their scores and matching lines."""
    account = _caller("read")
    return _refused(
        lambda: copies.copy_report(get_store(), account, name, threshold=query.threshold)
    )


@api.get("/competitions/<name>/games.jsonl")
@public
@spec.validate(resp=Responses("HTTP_200", HTTP_404=ApiError, **ERRORS), tags=TAGS)
def api_competition_games(name: str) -> Response:
    """Every game record of the competition (its ladder's, then its final's), one JSON
    document a line, streamed: the records ``arena replay verify`` reads (a forfeit's
    message and stderr for admins only)."""
    account = _caller("read")
    lines = tools.competition_games(get_store(), account, name)  # 404 before the first line
    response = Response(stream_with_context(lines), mimetype="application/x-ndjson")
    response.headers["Content-Disposition"] = disposition(f"{name}-games.jsonl")
    note = tools.competition_games_note(get_store(), name)
    if note is not None:  # retention pruned some: say so beside the lines
        response.headers[PRUNED_HEADER] = note
    return response


@api.get("/competitions/<name>/announcements")
@public
@spec.validate(resp=Responses(HTTP_200=Announcements, HTTP_404=ApiError, **ERRORS), tags=TAGS)
def api_competition_announcements(name: str) -> Announcements:
    """The competition's announcements, the latest first."""
    account = _caller("read")
    return Announcements(list(tools.announcements(get_store(), account, name)))


@api.post("/competitions/<name>/announcements")
@guarded("manage-competition", early=False)
@spec.validate(
    json=AnnouncementRequest,
    resp=Responses(HTTP_201=AnnouncementView, HTTP_400=ApiError, HTTP_404=ApiError, **ERRORS),
    tags=TAGS,
)
def api_post_announcement(name: str, json: AnnouncementRequest) -> tuple[AnnouncementView, int]:
    """Post an announcement on the competition's page (its organiser or an admin; a
    ``run`` token). 201."""
    account = _caller("run")
    return _refused(lambda: tools.post_announcement(get_store(), account, name, json.body)), 201


@api.get("/competitions/<name>/log")
@guarded("manage-competition", early=False)
@spec.validate(resp=Responses(HTTP_200=ActionLog, HTTP_404=ApiError, **ERRORS), tags=TAGS)
def api_competition_log(name: str) -> ActionLog:
    """The competition's action log, the latest first: who changed what, when, from what to
    what (its organiser or an admin; a ``read`` token)."""
    account = _caller("read")
    return ActionLog(list(tools.action_log(get_store(), account, name)))


@api.post("/competitions/<name>/settings")
@guarded("manage-competition", early=False)
@spec.validate(
    json=SettingsChange,
    resp=Responses(HTTP_200=Changes, HTTP_400=ApiError, HTTP_404=ApiError, **ERRORS),
    tags=TAGS,
)
def api_competition_settings(name: str, json: SettingsChange) -> Changes:
    """Change the settings that may change after creation (its organiser or an admin; a
    ``run`` token): the description at any time; the deadline, entries a day, the youngest
    account and the final's settings while it is open. Each change is logged; the answer
    lists them (none: nothing differed)."""
    account = _caller("run")
    return Changes(list(_refused(lambda: tools.edit_settings(get_store(), account, name, json))))


@api.post("/competitions/<name>/<any(pause, resume):act>")
@guarded("manage-competition", early=False)
@spec.validate(
    resp=Responses(HTTP_200=Ladder, HTTP_400=ApiError, HTTP_404=ApiError, **ERRORS), tags=TAGS
)
def api_pause_ladder(name: str, act: str) -> Ladder:
    """Pause the competition's ladder (its pending matches void, none added until it
    resumes) or resume it (its organiser or an admin; a ``run`` token)."""
    account = _caller("run")
    if act == "pause":
        _refused(lambda: tools.pause_ladder(get_store(), account, name))
    else:
        _refused(lambda: tools.resume_ladder(get_store(), account, name))
    return Ladder(name, tools.competition_extras(get_store(), account, name).paused)


@api.post("/competitions/<name>/withdraw")
@guarded("enter-competition", early=False)
@spec.validate(
    resp=Responses(HTTP_200=Withdrawn, HTTP_400=ApiError, HTTP_404=ApiError, **ERRORS),
    tags=TAGS,
)
def api_withdraw_entrant(name: str) -> Withdrawn:
    """Withdraw from the competition (an ``upload`` token): your versions leave the ladder
    and the final, and it takes no new entry of yours."""
    account = _caller("upload")
    return Withdrawn(name, list(_refused(lambda: tools.withdraw(get_store(), account, name))))
