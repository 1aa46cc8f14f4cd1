"""The competitions' part of the JSON API (docs/api.md, docs/competitions.md), on the
API's blueprint (:mod:`web.api`: tokens, the error shape, the OpenAPI document): the list,
one competition with its ladder, creating one (organisers, a ``run`` token), entering a
bot (an ``upload`` token), the organiser's controls (``run``), the exports (CSV, JSON).

Imported by web.app before the blueprint is registered (its routes join it then).
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from flask import Response
from pydantic import BaseModel, Field
from spectree import Response as Responses
from spectree.model_adapter.pydantic_adapter import BaseFile
from werkzeug.datastructures import FileStorage

from arena.engine.rules import rules_from_document
from arena.errors import ArenaError, NotFound, PermissionDenied
from arena.service import competitions as service
from arena.service import entries
from arena.service.competitions import (
    CompetitionError,
    CompetitionSummary,
    CompetitionView,
    EntryView,
    FinalRow,
    LadderRow,
    NewCompetition,
)
from arena.service.entries import FinalChoice
from arena.service.intake import Purpose, take_upload
from arena.service.permissions import require
from arena.service.uploads import UploadError
from web.api import ERRORS, ApiError, api, idempotency_key, replayed, spec
from web.api import caller as _caller
from web.api import fail as _fail
from web.auth import guarded, public
from web.downloads import disposition
from web.extensions import get_store
from web.forms import read_file
from web.routing import MAX_ID

__all__ = ["CompetitionCreate"]

TAGS = ["competitions"]


# --- models ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Competitions:
    competitions: list[CompetitionSummary]


class CompetitionCreate(BaseModel):
    name: str = Field(min_length=1, max_length=64)
    deadline: datetime = Field(description="ISO 8601 with its offset")
    opens: datetime | None = Field(None, description="default: now")
    time_zone: str = Field("UTC", max_length=64, examples=["Europe/Paris"])
    rules: str = Field("draw", description="a preset rule set (or send rule_set)")
    rule_set: dict[str, Any] | None = Field(None, description="a custom rule file's document")
    players: int = 2
    teams: bool = False
    move_ms: int = Field(1000, description="time a move, in milliseconds")
    memory_mb: int = 256
    runtimes: list[str] = Field(default_factory=lambda: ["python"], max_length=8)
    daily_submissions: int = 5
    sources_public: bool = False
    games_per_deal: int = 2
    final_top: int = 8
    final_confidence: float = 0.95
    final_max_games: int = 14000
    final_versions: int = Field(2, description="versions an entrant may send to the final")
    description: str = Field("", max_length=5000)
    min_account_days: int = Field(0, description="the youngest account that may enter, in days")


class EntryForm(BaseModel):
    source: BaseFile
    name: str = Field("", max_length=64, description="the bot's name (default: the file's)")
    runtime: str = Field(
        "", max_length=20, description="a runtime the competition offers (default: by suffix)"
    )


class FinalChoiceRequest(BaseModel):
    versions: list[int] = Field(
        max_length=100, description="your version ids for the final ([]: the default ones)"
    )


class DeadlineRequest(BaseModel):
    deadline: datetime = Field(description="ISO 8601 with its offset")


class DisqualifyRequest(BaseModel):
    version_id: int = Field(ge=0, le=MAX_ID)
    reason: str = Field(max_length=500)


class RerunRequest(BaseModel):
    reason: str = Field(max_length=500, description="why: shown with the table it replaces")


@dataclass(frozen=True, slots=True)
class Done:
    """A competition after an organiser's control: its status now."""

    name: str
    status: str


# --- endpoints -------------------------------------------------------------------------------


@api.get("/competitions")
@public
@spec.validate(resp=Responses(HTTP_200=Competitions, **ERRORS), tags=TAGS)
def api_competitions() -> Competitions:
    """Every competition, the latest deadline first."""
    _caller("read")
    return Competitions(competitions=service.competition_list(get_store()))


@api.get("/competitions/<name>")
@public
@spec.validate(resp=Responses(HTTP_200=CompetitionView, HTTP_404=ApiError, **ERRORS), tags=TAGS)
def api_competition(name: str) -> CompetitionView:
    """A competition: its settings, status, ladder (rank ranges, ratings with intervals,
    games, last game, provisional marks, disqualifications with their reasons), the final,
    recent games, and the caller's own entries with their notices."""
    account = _caller("read")
    return service.competition_view(get_store(), account, name)  # 404: the handler


@api.post("/competitions")
@guarded("create-competition", early=False)
@spec.validate(
    json=CompetitionCreate,
    resp=Responses(HTTP_201=CompetitionView, HTTP_400=ApiError, **ERRORS),
    tags=TAGS,
)
def api_create_competition(json: CompetitionCreate) -> tuple[CompetitionView, int]:
    """Create a competition (organisers; a ``run`` token) with its ladder: entries open at
    ``opens`` and close at ``deadline``; then the final plays by itself. 201."""
    account = _caller("run")
    require(account, "create-competition", message="only organisers and admins create competitions")
    try:
        custom = (
            None if json.rule_set is None else rules_from_document(json.rule_set, source="rule_set")
        )
        new = NewCompetition(
            name=json.name, deadline=json.deadline, opens=json.opens, time_zone=json.time_zone,
            rules=json.rules, custom_rules=custom, players=json.players, teams=json.teams,
            move_seconds=service.seconds_of_ms(json.move_ms), memory_mb=json.memory_mb,
            runtimes=tuple(json.runtimes), daily_submissions=json.daily_submissions,
            sources_public=json.sources_public, games_per_deal=json.games_per_deal,
            final_top=json.final_top, final_confidence=json.final_confidence,
            final_max_games=json.final_max_games, final_versions=json.final_versions,
            description=json.description, min_account_days=json.min_account_days,
        )  # fmt: skip
        competition_id = service.create_competition(get_store(), account, new)
    except (PermissionDenied, NotFound):
        raise
    except (ArenaError, ValueError, LookupError) as exc:
        _fail(400, str(exc.args[0] if exc.args else exc))
    # the stored name: the given one normalised (a full-width letter is its plain one)
    name = service.competition_name(get_store(), competition_id)
    return service.competition_view(get_store(), account, name), 201


@api.post("/competitions/<name>/entries")
@guarded("enter-competition", early=False)
@spec.validate(
    form=EntryForm,
    resp=Responses(HTTP_202=EntryView, HTTP_400=ApiError, HTTP_404=ApiError,
                   HTTP_413=ApiError, **ERRORS),
    tags=TAGS,
)  # fmt: skip
def api_enter(name: str, form: EntryForm) -> tuple[EntryView, int, dict[str, str]]:
    """Enter a bot (multipart: ``source``, a bot file
    (.py, .js, .cpp, .c, .go, .rs, .java); ``name``;
    ``runtime``, one the competition offers, default by the suffix; an ``upload`` token):
    202 with the entry, ``pending`` while its upload is checked on a worker (poll
    ``/uploads/{upload_id}`` or the competition); once accepted it is your active entry
    (``placing`` while your active one is placed; a source you entered already: 400)
    and plays the ladder. An ``Idempotency-Key`` header sent again (or the same file again
    within a minute) answers the first entry, with ``Idempotent-Replayed: true``."""
    account = _caller("upload")
    file = form.source if form is not None and isinstance(form.source, FileStorage) else None
    if file is None or not file.filename:
        _fail(400, "send the bot as the multipart file field 'source'")
    assert file is not None
    filename, data = read_file(file)
    try:
        received = take_upload(
            get_store(), account, filename, data, purpose=Purpose.entry(name),
            name=form.name, runtime=form.runtime or None, key=idempotency_key(),
        )  # fmt: skip
    except (PermissionDenied, NotFound):
        raise
    except (UploadError, ArenaError) as exc:
        _fail(400, str(exc))
    assert received.entry is not None
    return received.entry, 202, replayed(received)


@api.get("/competitions/<name>/final-choice")
@guarded("enter-competition", early=False)
@spec.validate(resp=Responses(HTTP_200=FinalChoice, HTTP_404=ApiError, **ERRORS), tags=TAGS)
def api_final_choice(name: str) -> FinalChoice:
    """Your versions in the competition and which go to its final as things stand (an
    ``upload`` token)."""
    account = _caller("upload")
    return entries.final_choice(get_store(), account, name)


@api.put("/competitions/<name>/final-choice")
@guarded("enter-competition", early=False)
@spec.validate(
    json=FinalChoiceRequest,
    resp=Responses(HTTP_200=FinalChoice, HTTP_400=ApiError, HTTP_404=ApiError, **ERRORS),
    tags=TAGS,
)  # fmt: skip
def api_choose_final(name: str, json: FinalChoiceRequest) -> FinalChoice:
    """Choose which of your versions go to the final (an ``upload`` token), in place of
    your earlier choice: at most the competition's ``final_versions``, until the final is
    made; ``[]``: the default (your best-rated placed version and your latest placed
    one). Sent again, the same choice is the same: safe to repeat."""
    account = _caller("upload")
    if any(not 1 <= v <= MAX_ID for v in json.versions):
        _fail(400, "version ids are whole numbers from 1: send your versions' ids")
    try:
        return entries.choose_final(get_store(), account, name, list(json.versions))
    except (PermissionDenied, NotFound):
        raise
    except ArenaError as exc:
        return _fail(400, str(exc))  # type: ignore[no-any-return]


def _control(name: str, act: Any) -> Done:
    account = _caller("run")
    try:
        act(account)
    except (PermissionDenied, NotFound):
        raise
    except CompetitionError as exc:
        _fail(400, str(exc))
    return Done(name=name, status=service.competition_view(get_store(), account, name)
                     .summary.status)  # fmt: skip


CONTROL = Responses(HTTP_200=Done, HTTP_400=ApiError, HTTP_404=ApiError, **ERRORS)


@api.post("/competitions/<name>/close")
@guarded("manage-competition", early=False)
@spec.validate(resp=CONTROL, tags=TAGS)
def api_close(name: str) -> Done:
    """Close an open competition now (its organiser or an admin; a ``run`` token): the
    ladder stops and the final starts by itself."""
    return _control(name, lambda actor: service.close_now(get_store(), actor, name))


@api.post("/competitions/<name>/deadline")
@guarded("manage-competition", early=False)
@spec.validate(json=DeadlineRequest, resp=CONTROL, tags=TAGS)
def api_deadline(name: str, json: DeadlineRequest) -> Done:
    """Move an open competition's deadline later (its organiser or an admin)."""
    return _control(
        name, lambda actor: service.extend_deadline(get_store(), actor, name, json.deadline)
    )


@api.post("/competitions/<name>/disqualify")
@guarded("manage-competition", early=False)
@spec.validate(json=DisqualifyRequest, resp=CONTROL, tags=TAGS)
def api_disqualify(name: str, json: DisqualifyRequest) -> Done:
    """Disqualify an entered version with a reason, shown on its row (its organiser or an
    admin): it stops playing; its pending ladder matches are void."""
    return _control(
        name,
        lambda actor: service.disqualify(get_store(), actor, name, json.version_id, json.reason),
    )


@api.post("/competitions/<name>/final/rerun")
@guarded("manage-competition", early=False)
@spec.validate(json=RerunRequest, resp=CONTROL, tags=TAGS)
def api_rerun_final(name: str, json: RerunRequest) -> Done:
    """Play the final again, for a ``reason`` (its organiser or an admin): its unplayed
    matches are void; its table stays in force, marked replaced with the reason, until
    the new final (which starts by itself) publishes its own; earlier finals stay listed."""
    return _control(name, lambda actor: service.rerun_final(get_store(), actor, name, json.reason))


def _csv(rows: list[dict[str, Any]], columns: list[str], filename: str) -> Response:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=columns, extrasaction="ignore")
    writer.writeheader()
    writer.writerows(rows)
    response = Response(out.getvalue(), mimetype="text/csv")
    response.headers["Content-Disposition"] = disposition(filename)
    return response


def _json(rows: list[dict[str, Any]]) -> Response:
    return Response(json.dumps({"rows": rows}), mimetype="application/json")


LADDER = [f.name for f in dataclasses.fields(LadderRow)]
FINAL = [f.name for f in dataclasses.fields(FinalRow)]
EXPORT = Responses("HTTP_200", HTTP_404=ApiError, **ERRORS)


@api.get("/competitions/<name>/ladder.csv")
@public
@spec.validate(resp=EXPORT, tags=TAGS)
def api_ladder_csv(name: str) -> Response:
    """The ladder as CSV, best first (a header row of the ladder rows' fields)."""
    account = _caller("read")
    rows = service.ladder_rows(get_store(), account, name)
    return _csv(rows, LADDER, f"{name}-ladder.csv")


@api.get("/competitions/<name>/ladder.json")
@public
@spec.validate(resp=EXPORT, tags=TAGS)
def api_ladder_json(name: str) -> Response:
    """The ladder as JSON, ``{"rows": [...]}``, best first."""
    account = _caller("read")
    return _json(service.ladder_rows(get_store(), account, name))


@api.get("/competitions/<name>/final.csv")
@public
@spec.validate(resp=EXPORT, tags=TAGS)
def api_final_csv(name: str) -> Response:
    """The published final table as CSV, first place first (only the header before)."""
    account = _caller("read")
    return _csv(service.final_rows(get_store(), account, name), FINAL, f"{name}-final.csv")


@api.get("/competitions/<name>/final.json")
@public
@spec.validate(resp=EXPORT, tags=TAGS)
def api_final_json(name: str) -> Response:
    """The published final table as JSON, ``{"rows": [...]}`` (empty before)."""
    account = _caller("read")
    return _json(service.final_rows(get_store(), account, name))
