"""The JSON API, ``/api/v1`` (docs/api.md): what the pages show, for programs.

Authenticated by bearer tokens only (``Authorization: Bearer da_...``, made on the account
page; never a session cookie, so no CSRF token is needed or accepted). Every request needs
a token with the ``read`` scope; uploading a bot needs ``upload``. A request is a pydantic
model (or the service's own dataclass), validated; an answer is the service's view, as
:class:`ViewAdapter` writes it. The OpenAPI 3.1 document is ``/api/v1/openapi.json``
(spectree), and ``/api/v1/docs`` lists the endpoints without any script. Every error is
``{"error": {"status": N, "message": "..."}}`` (:func:`api_error`, the app's one handler
under /api/: refusals, unknown paths, a method a path does not list (405 with ``Allow``),
a database that does not answer (503 with ``Retry-After``)); lists take ``limit`` (1-100)
and ``offset`` (the game list: ``before``, a cursor); a client over its rate limit gets 429
with ``Retry-After``.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import json
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast

from flask import (
    Blueprint,
    Flask,
    Response,
    current_app,
    g,
    render_template,
    request,
    url_for,
)
from pydantic import BaseModel, Field, TypeAdapter
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from spectree import Response as Responses
from spectree import SecurityScheme, SecuritySchemeData, SpecTree
from spectree.model_adapter.pydantic_adapter import BaseFile, PydanticModelAdapter
from spectree.models import SecureType
from werkzeug.datastructures import FileStorage
from werkzeug.exceptions import HTTPException
from werkzeug.wrappers import Response as BaseResponse

from arena.engine.rules import rules_from_document
from arena.errors import ArenaError, NotFound, PermissionDenied, RecordPruned
from arena.service import compare_views as compare_service
from arena.service.accounts import Account
from arena.service.assignment_views import check_grading_visible
from arena.service.board_views import (
    Leaderboard,
    TournamentRow,
    TournamentView,
    leaderboard,
    rule_set_names,
    tournament_list,
    tournament_view,
)
from arena.service.bot_views import BotView, bot_list, bot_view
from arena.service.bots import read_source
from arena.service.classes import upload_target
from arena.service.compare_views import CompareRequest, CompareView, compare_view
from arena.service.games import GameRow, game_list, game_record, match_list
from arena.service.intake import Received, take_upload
from arena.service.matches import MatchSettings
from arena.service.permissions import allowed, require
from arena.service.shapes import TEXT, about, extend, plain
from arena.service.tournaments import (
    NewTournament,
    cancel_tournament,
    entrant_specs,
    preset,
    start_tournament,
)
from arena.service.uploads import UploadError, UploadView, upload_view
from arena.store.bots import BotRow
from arena.store.db import DATABASE_ERRORS
from arena.store.games import MatchRow
from web.auth import guarded, public
from web.downloads import disposition
from web.extensions import csrf, get_store, limiter
from web.forms import read_file
from web.games import FilterError, cursor_text, parse_cursor, parse_filter, record_for_reader
from web.limits import API_LIMIT, api_key, api_limit, bearer, heavy
from web.routing import MAX_ID

__all__ = [
    "API_LIMIT",
    "FORM_TYPES",
    "IDEMPOTENCY_KEY",
    "REPLAYED",
    "api",
    "api_error",
    "idempotency_key",
    "init_api",
    "json_error",
    "json_response",
    "readable_body",
    "replayed",
    "spec",
]

api = Blueprint("api", __name__, url_prefix="/api/v1")

#: Seconds a client is asked to wait when the database did not answer (503).
RETRY_SECONDS = 5
#: What the document says of every operation beyond its own answers.
DESCRIPTION = (
    'Every error is `{"error": {"status": N, "message": "..."}}`. A method a path '
    "does not list answers 405 with an `Allow` header (TRACE too); a database that does not "
    "answer, 503 with `Retry-After`; an id in a path past 2^31 - 1, 404. docs/api.md."
)


class ApiError(BaseModel):
    """Every error's body: ``{"error": {"status": 404, "message": "..."}}``."""

    error: dict[str, Any] = Field(examples=[{"status": 404, "message": "No bot ada/x."}])


def _malformed_json(req: Any) -> str | None:
    """What is wrong with a JSON request's body that does not parse, or None."""
    if not req.is_json or not req.get_data(cache=True):
        return None
    try:
        json.loads(req.get_data(cache=True))
    except ValueError as exc:
        return f"the body is not valid JSON: {exc}"
    return None


def _validation_error(req: Any, resp: Any, req_validation_error: Any, *_: Any) -> None:
    """Bad parameters: the same error shape as every other error."""
    if req_validation_error is not None:
        details = json.loads(resp.get_data(as_text=True))
        message = "; ".join(
            f"{'.'.join(map(str, d.get('loc', [])))}: {d.get('msg', '')}" for d in details
        )
        body = _malformed_json(req)
        if body is not None:  # not "name: Field required" for a body that is not JSON
            message = body
        resp.set_data(json.dumps({"error": {"status": 422, "message": message}}))
        resp.mimetype = "application/json"


class ViewSchema(GenerateJsonSchema):
    """pydantic's JSON schema of a view as :func:`~arena.service.shapes.plain` writes it:
    every field it shows is in its JSON (required, no default), a value of
    :data:`~arena.service.shapes.TEXT` is a string, and an answer's docstring is the
    service's, not the API's."""

    def field_is_required(self, field: Any, total: bool) -> bool:
        return self.mode == "serialization" or super().field_is_required(field, total)

    def default_schema(self, schema: Any) -> JsonSchemaValue:
        if self.mode == "serialization":
            return self.generate_inner(schema["schema"])
        return super().default_schema(schema)

    def dataclass_schema(self, schema: Any) -> JsonSchemaValue:
        if schema["cls"] in TEXT:
            return {"type": "string"}
        found = super().dataclass_schema(schema)
        if self.mode == "serialization":
            found.pop("description", None)
        return found


class ViewAdapter(PydanticModelAdapter):
    """spectree's pydantic adapter, answering with the service's views (dataclasses): their
    schema is pydantic's (:class:`ViewSchema`), their JSON
    :func:`arena.service.shapes.plain`'s (times in ISO 8601 as ``isoformat`` writes them,
    floats to their fields' digits)."""

    def dump_json(self, value: Any) -> bytes:
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            return json.dumps(plain(value), ensure_ascii=False, separators=(",", ":")).encode()
        return super().dump_json(value)

    def json_schema(self, model: Any, *, ref_template: str, mode: Any = "validation") -> Any:
        if not (isinstance(model, type) and dataclasses.is_dataclass(model)):
            return super().json_schema(model, ref_template=ref_template, mode=mode)
        return TypeAdapter(model).json_schema(
            ref_template=ref_template, mode=mode, schema_generator=ViewSchema
        )


class LazySpecTree(SpecTree):
    """spectree, naming each route's models when the route is declared but building their
    JSON schemas (pydantic's, ~500 of them: a second of CPU) only when the OpenAPI
    document is first asked for, not at import: every process that serves or tests the
    app starts that much sooner, and most never read the document."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._unbuilt: dict[str, tuple[Any, Any]] = {}

    def _add_model(self, model: Any, mode: Any = "validation") -> str:
        key: str = self.naming_strategy(model)
        self._unbuilt[key] = (model, mode)  # (a later route's use replaces it, as spectree's)
        return key

    def _generate_spec(self) -> dict[str, Any]:
        for model, mode in self._unbuilt.values():
            super()._add_model(model, mode)
        self._unbuilt.clear()
        return super()._generate_spec()


spec = LazySpecTree(
    "flask",
    # (spectree types its parameter with its protocol's generic error, which pydantic's own
    # adapter does not satisfy for mypy)
    model_adapter=cast(Any, ViewAdapter()),
    title="Domino Arena API",
    description=DESCRIPTION,
    version="1",
    # spectree leaves out of the document every route under its own path: not /api/v1
    path="api/spec",
    page_templates={},  # no pages that load a CDN's scripts: /api/v1/docs is ours
    mode="strict",  # the API's routes only, not the pages'
    annotations=True,
    before=_validation_error,
    validation_error_model=ApiError,
    security_schemes=[
        SecurityScheme(
            name="bearer",
            data=SecuritySchemeData(type=SecureType.HTTP, scheme="bearer", bearer_format="da_..."),
        )
    ],
    security={"bearer": []},
)

ERRORS = {"HTTP_401": ApiError, "HTTP_403": ApiError, "HTTP_429": ApiError, "HTTP_503": ApiError}


def json_response(status: int, message: str) -> Response:
    """An error in the API's shape: ``{"error": {"status": N, "message": "..."}}``."""
    response = Response(
        json.dumps({"error": {"status": status, "message": message}}),
        status=status,
        mimetype="application/json",
    )
    if status == 401:
        response.headers["WWW-Authenticate"] = 'Bearer realm="arena"'
    return response


def _fail(status: int, message: str) -> Any:
    raise _Abort(json_response(status, message))


class _Abort(HTTPException):
    def __init__(self, response: Response) -> None:
        super().__init__(response=response)


#: The request header that makes an upload idempotent: the same key sent again (a retried
#: request) returns the first upload (arena.service.intake), answered with :data:`REPLAYED`.
IDEMPOTENCY_KEY = "Idempotency-Key"
#: The response header of an upload received before: ``true``, and the body is the first's.
REPLAYED = "Idempotent-Replayed"


def idempotency_key() -> str | None:
    """The request's ``Idempotency-Key`` (None: it sent none)."""
    return request.headers.get(IDEMPOTENCY_KEY)


def replayed(received: Received) -> dict[str, str]:
    """The response headers that say an upload was received before (none if it is new)."""
    return {REPLAYED: "true"} if received.repeated else {}


def _caller(scope: str) -> Account:
    """The token's account, if the token has ``scope``; else 401 (no or bad token) or 403."""
    found = bearer()  # looked up once a request: the rate limit's key looked first
    if found is None:
        _fail(401, "a bearer token is needed: create one on your account page (/account/tokens)")
    assert found is not None
    account, scopes = found
    if scope not in scopes:
        _fail(403, f"this token lacks the {scope!r} scope")
    if account.must_change_password:  # a first-time password (arena.service.classes)
        _fail(403, "change your first-time password first: log in on the web (/account/password)")
    g.api_account = account
    return account


#: The bodies a form is sent in (spectree reads a JSON model from none of them).
FORM_TYPES = ("multipart/form-data", "application/x-www-form-urlencoded")


@api.before_request
def readable_body() -> None:
    """Refuse (400, a sentence) a body the endpoint cannot read, before anything reads it:
    a multipart body without its boundary (werkzeug would read it as empty), or a form's
    body where the endpoint takes JSON (spectree would give it no body at all). One check
    for every endpoint of the API, present and future."""
    if request.method in ("GET", "HEAD", "OPTIONS", "DELETE"):
        return
    if request.mimetype == "multipart/form-data" and not request.mimetype_params.get("boundary"):
        _fail(
            400,
            "a multipart/form-data body needs its boundary: send Content-Type: "
            "multipart/form-data; boundary=... (curl -F and every HTTP library do)",
        )
    view = current_app.view_functions.get(request.endpoint or "")
    if view is not None and _takes_json(view) and request.mimetype in FORM_TYPES:
        _fail(
            400, f"send this body as JSON (Content-Type: application/json), not {request.mimetype}"
        )


@functools.cache
def _takes_json(view: Callable[..., Any]) -> bool:
    """Whether a view reads a JSON body (spectree's ``json`` parameter, under the
    decorators)."""
    return "json" in inspect.signature(inspect.unwrap(view)).parameters


# --- models ----------------------------------------------------------------------------------


class Page(BaseModel):
    limit: int = Field(50, ge=1, le=100)
    offset: int = Field(0, ge=0, le=MAX_ID)


@dataclass(frozen=True, slots=True)
class RuleSets:
    rule_sets: list[str]


class LeaderboardQuery(BaseModel):
    versions: str = Field("latest", pattern="^(latest|all)$")
    reference: str = Field("show", pattern="^(show|hide)$")


@dataclass(frozen=True, slots=True)
class Bots:
    """A page of bots, and how many there are."""

    total: int
    bots: list[BotRow]


@dataclass(frozen=True, slots=True)
class Tournaments:
    """A page of tournaments, and how many there are."""

    total: int
    tournaments: list[TournamentRow]


class UploadForm(BaseModel):
    source: BaseFile
    name: str = Field("", max_length=64)
    #: a runtime of arena.match.runtimes (python, cpp, ...); default: by the suffix.
    runtime: str = Field("", max_length=20)


class TournamentCreate(BaseModel):
    name: str = Field(min_length=1, max_length=64)
    rules: str = Field("", description="a preset rule set (or send rule_set)", examples=["block"])
    rule_set: dict[str, Any] | None = Field(
        None, description="a custom rule set: a rule file's document (docs/rules.md)"
    )
    format: str = Field("round-robin", examples=["round-robin", "duplicate"])
    bots: list[str] = Field(min_length=2, description="OWNER/NAME of each entrant")
    games: int = Field(20, description="games each pair (or table) plays")
    players: int = 2
    move_ms: int = Field(1000, description="time a move, in milliseconds")


@dataclass(frozen=True, slots=True)
class Matches:
    """A page of a tournament's matches, and how many there are."""

    total: int
    matches: list[MatchRow]


@dataclass(frozen=True, slots=True)
class ListedGame(GameRow):
    """A stored game in the list, with its record's URL."""

    record: str = field(default="", metadata=about("the game record's URL"))

    @classmethod
    def of(cls, row: GameRow, record: str) -> ListedGame:
        """``row`` with its record's URL."""
        return extend(row, cls, record=record)


@dataclass(frozen=True, slots=True)
class Games:
    games: list[ListedGame]
    more: bool = field(metadata=about("older games follow: ask with before=next"))
    next: str | None = field(
        default=None, metadata=about("the cursor of the next page (MATCH-INDEX), or null")
    )


@dataclass(frozen=True, slots=True)
class Cancelled:
    name: str
    voided: int = field(metadata=about("matches that will not be played"))


class MatchQuery(Page):
    status: str | None = Field(None, pattern="^(pending|running|done|void)$")


class GameQuery(BaseModel):
    limit: int = Field(50, ge=1, le=100)
    before: str | None = Field(
        None, description="MATCH-INDEX: the games after this one (the last page's next)"
    )
    #: Gone (a walk past every game before the page): its presence is refused.
    offset: str | None = Field(None, description="gone: page with before")
    tournament: str | None = None
    bot: str | None = Field(None, description="OWNER/NAME")
    opponent: str | None = Field(None, description="OWNER/NAME")
    rules: str | None = None
    result: str | None = Field(None, description="win, draw or loss (for bot)")
    fault: str | None = Field(None, description="any, none, mine (bot's) or a fault's kind")
    a: str | None = Field(None, description="an entrant label of the tournament")
    b: str | None = Field(None, description="another entrant label (a pairing)")
    by: str | None = Field(None, description="the entrant label that forfeited")


@dataclass(frozen=True, slots=True)
class CompareAnswer(CompareView):
    """A compare, with its page's URL."""

    url: str = ""

    @classmethod
    def of(cls, view: CompareView, url: str) -> CompareAnswer:
        """``view`` with its page's URL."""
        return extend(view, cls, url=url)


# --- endpoints -------------------------------------------------------------------------------


@api.get("/rule-sets")
@public
@spec.validate(resp=Responses(HTTP_200=RuleSets, **ERRORS), tags=["leaderboards"])
def api_rule_sets() -> RuleSets:
    """The rule sets with ratings or tournaments."""
    _caller("read")
    return RuleSets(rule_sets=rule_set_names(get_store()))


@api.get("/leaderboards/<rules>")
@public
@heavy
@spec.validate(
    query=LeaderboardQuery,
    resp=Responses(HTTP_200=Leaderboard, HTTP_404=ApiError, **ERRORS),
    tags=["leaderboards"],
)
def api_leaderboard(rules: str, query: LeaderboardQuery) -> Leaderboard:
    """A rule set's leaderboard: ranks as ranges, ratings with 95% intervals, records."""
    account = _caller("read")
    try:
        board = leaderboard(
            get_store(),
            rules,
            all_versions=query.versions == "all",
            hide_reference=query.reference == "hide",
            viewer=account,
        )
    except LookupError:
        _fail(404, f"no rule set called {rules!r} has been played here")
    return board


@api.get("/bots")
@public
@spec.validate(query=Page, resp=Responses(HTTP_200=Bots, **ERRORS), tags=["bots"])
def api_bots(query: Page) -> Bots:
    """Every bot, the most recently updated first."""
    bots = bot_list(get_store(), _caller("read"))
    return Bots(total=len(bots), bots=bots[query.offset : query.offset + query.limit])


@api.get("/bots/<owner>/<name>")
@public
@heavy
@spec.validate(resp=Responses(HTTP_200=BotView, HTTP_404=ApiError, **ERRORS), tags=["bots"])
def api_bot(owner: str, name: str) -> BotView:
    """A bot: its versions and their ratings in every rule set."""
    view = bot_view(get_store(), owner, name, _caller("read"))
    if view is None:
        _fail(404, f"no bot {owner}/{name}")
    assert view is not None
    return view


@api.get("/bots/<owner>/<name>/versions/<int:version>/source")
@guarded("read-source", early=False)
@spec.validate(resp=Responses("HTTP_200", HTTP_404=ApiError, **ERRORS), tags=["bots"])
def api_bot_source(owner: str, name: str, version: int) -> Response:
    """A version's source as text, typed as its runtime's file (``text/x-python``,
    ``text/x-java``...): for everyone once its owner made it public, else for its
    owner and the admins only (404 to anyone else: a private source is not acknowledged),
    or for everyone once a competition it entered made its entries' sources public."""
    account = _caller("read")
    try:
        source = read_source(get_store(), account, owner, name, version)
    except NotFound:
        return _fail(404, f"no source of {owner}/{name} version {version} for you")  # type: ignore[no-any-return]
    response = Response(source.text, mimetype=source.media_type)
    response.headers["Content-Disposition"] = disposition(source.filename(name, version), "inline")
    return response


@api.post("/bots")
@guarded("upload", early=False)
@spec.validate(
    form=UploadForm,
    resp=Responses(HTTP_202=UploadView, HTTP_400=ApiError, HTTP_413=ApiError, **ERRORS),
    tags=["bots"],
)
def api_upload(form: UploadForm) -> tuple[UploadView, int, dict[str, str]]:
    """Upload a bot (multipart: ``source``, a bot file
    (.py, .js, .cpp, .c, .go, .rs, .java); ``name``,
    default the file's stem; ``runtime``: one of arena.match.runtimes, default by the file's
    suffix): 202 with the upload, checked on a worker; poll ``/uploads/{id}``. An
    ``Idempotency-Key`` header sent again (or the same file again within a minute) answers
    the first upload, with ``Idempotent-Replayed: true``."""
    account = _caller("upload")
    # no body at all: spectree validates nothing and passes None
    file = form.source if form is not None and isinstance(form.source, FileStorage) else None
    if file is None or not file.filename:
        _fail(400, "send the bot as the multipart file field 'source'")
    assert file is not None
    filename, data = read_file(file)
    try:
        received = take_upload(
            get_store(), account, filename, data, name=form.name,
            runtime=form.runtime or None, key=idempotency_key(),
        )  # fmt: skip
    except PermissionDenied:
        raise
    except (UploadError, ArenaError) as exc:
        _fail(400, str(exc))
    return received.upload, 202, replayed(received)


@api.get("/uploads/<int:upload_id>")
@guarded("read-faults", early=False)
@spec.validate(resp=Responses(HTTP_200=UploadView, HTTP_404=ApiError, **ERRORS), tags=["bots"])
def api_upload_status(upload_id: int) -> UploadView:
    """An upload's check: pending, accepted, already (stored before) or rejected."""
    account = _caller("read")
    view = upload_view(get_store(), upload_id)
    # its report is its owner's (and the admins'): the pages' rule, the permission table's
    if view is None or not allowed(
        account, "read-faults", upload_target(get_store(), view.owner_id, view.assignment_id)
    ):
        _fail(404, f"no upload {upload_id}")
    assert view is not None
    return view


@api.get("/tournaments")
@public
@spec.validate(query=Page, resp=Responses(HTTP_200=Tournaments, **ERRORS), tags=["tournaments"])
def api_tournaments(query: Page) -> Tournaments:
    """Every tournament, newest first."""
    rows = tournament_list(get_store(), _caller("read"))
    return Tournaments(total=len(rows), tournaments=rows[query.offset : query.offset + query.limit])


@api.get("/tournaments/<name>")
@public
@heavy
@spec.validate(
    resp=Responses(HTTP_200=TournamentView, HTTP_404=ApiError, **ERRORS), tags=["tournaments"]
)
def api_tournament(name: str) -> TournamentView:
    """A tournament: progress, standings with intervals, crosstable, faults, void matches."""
    account = _caller("read")
    check_grading_visible(get_store(), account, name=name)
    try:
        return tournament_view(get_store(), name, viewer=account)
    except LookupError:
        return _fail(404, f"no tournament called {name!r}")  # type: ignore[no-any-return]


@api.post("/tournaments")
@guarded("create-tournament", early=False)
@spec.validate(
    json=TournamentCreate,
    resp=Responses(HTTP_201=TournamentView, HTTP_400=ApiError, **ERRORS),
    tags=["tournaments"],
)
def api_create_tournament(json: TournamentCreate) -> tuple[TournamentView, int]:
    """Create a tournament between stored bots (organisers; a ``run`` token): its matches
    go to the workers at once. 201 with the tournament."""
    account = _caller("run")
    # asked first, so that a refused caller learns nothing of its body's faults
    require(account, "create-tournament", message="only organisers and admins create tournaments")
    try:
        rules = (
            preset(json.rules)
            if json.rule_set is None
            else rules_from_document(json.rule_set, source="rule_set")
        )
        new = NewTournament(
            name=json.name.strip(), rules=rules, format=json.format,
            entrants=entrant_specs(json.bots), players=json.players,
            games_per_match=json.games, seed=random.SystemRandom().getrandbits(62),
            settings=MatchSettings(move_seconds=json.move_ms / 1000),
        )  # fmt: skip
        start_tournament(get_store(), account, new)
    except PermissionDenied:
        raise
    except (ArenaError, ValueError, LookupError) as exc:
        _fail(400, str(exc.args[0] if exc.args else exc))
    return tournament_view(get_store(), json.name.strip(), viewer=account), 201


@api.post("/tournaments/<name>/cancel")
@guarded("cancel-tournament", early=False)
@spec.validate(
    resp=Responses(HTTP_200=Cancelled, HTTP_404=ApiError, **ERRORS), tags=["tournaments"]
)
def api_cancel_tournament(name: str) -> Cancelled:
    """Cancel a tournament (its creator or an admin; a ``run`` token): every match not
    finished is void (a running one stops at its worker's next heartbeat and stores
    nothing), finished results are kept."""
    account = _caller("run")
    voided = cancel_tournament(get_store(), account, name)  # 404, 403: the app's handler
    return Cancelled(name=name, voided=voided)


@api.get("/tournaments/<name>/matches")
@public
@spec.validate(
    query=MatchQuery,
    resp=Responses(HTTP_200=Matches, HTTP_404=ApiError, **ERRORS),
    tags=["tournaments"],
)
def api_matches(name: str, query: MatchQuery) -> Matches:
    """A tournament's matches in schedule order (``status``: only those)."""
    account = _caller("read")
    check_grading_visible(get_store(), account, name=name)
    try:
        total, rows = match_list(
            get_store(), name, status=query.status, limit=query.limit, offset=query.offset,
            viewer=account,
        )  # fmt: skip
    except LookupError:
        _fail(404, f"no tournament called {name!r}")
    return Matches(total=total, matches=rows)


@api.get("/games")
@public
@heavy
@spec.validate(
    query=GameQuery, resp=Responses(HTTP_200=Games, HTTP_400=ApiError, **ERRORS),
    tags=["games"],
)  # fmt: skip
def api_games(query: GameQuery) -> Games:
    """Stored games, newest first, with the games page's filters."""
    account = _caller("read")
    if query.offset not in (None, "0"):  # 0: the first page, as before
        _fail(400, "offset is gone from the game list: ask for the next page with before=NEXT, "
              "the next of the page before")  # fmt: skip
    args = {k: v for k, v in query.model_dump().items() if isinstance(v, str)}
    try:
        page = game_list(
            get_store(), parse_filter(args), limit=query.limit,
            before=parse_cursor(query.before), viewer=account,
        )  # fmt: skip
    except (FilterError, ValueError, LookupError) as exc:
        _fail(400, str(exc.args[0] if exc.args else exc))
    return Games(
        games=[
            ListedGame.of(g, url_for("api.api_game", match_id=g.match_id, index=g.index))
            for g in page.rows
        ],
        more=page.more,
        next=cursor_text(page.next),
    )


@api.get("/games/<int:match_id>/<int:index>")
@public
@heavy
@spec.validate(
    resp=Responses("HTTP_200", HTTP_404=ApiError, HTTP_410=ApiError, **ERRORS), tags=["games"]
)
def api_game(match_id: int, index: int) -> Response:
    """A game's record (the format ``arena replay verify`` checks); a fault's message and
    stderr only for the faulting bot's owner and the admins. 410 when the deployment's
    retention pruned it (its result is kept; the message says when)."""
    account = _caller("read")
    check_grading_visible(get_store(), account, match_id=match_id)
    found = game_record(get_store(), match_id, index, account)
    if found is None:
        _fail(404, f"no stored game {index} of match {match_id}")
    assert found is not None
    record = record_for_reader(account, found.row, found.record)
    return Response(json.dumps(record), mimetype="application/json")


def _compare(name: str) -> CompareAnswer:
    try:
        c = compare_view(get_store(), name)
    except LookupError:
        _fail(404, f"no compare called {name!r}")
    return CompareAnswer.of(c, url_for("compares.compare_page", name=c.name))


@api.post("/compares")
@guarded("start-compare", early=False)
@spec.validate(
    json=CompareRequest,
    resp=Responses(HTTP_202=CompareAnswer, HTTP_400=ApiError, **ERRORS),
    tags=["compares"],
)
def api_start_compare(json: CompareRequest) -> tuple[CompareAnswer, int]:
    """Start a regression test of your bot (NEW) against OLD (a ``run`` token): 202 with
    the compare; poll ``/compares/{name}`` until its verdict is not ``running``."""
    account = _caller("run")
    try:
        started = compare_service.start_compare(get_store(), account, json)
    except PermissionDenied as exc:
        _fail(403, str(exc))
    except (ArenaError, ValueError, LookupError) as exc:
        _fail(400, str(exc.args[0] if exc.args else exc))
    return _compare(started.name), 202


@api.get("/compares/<name>")
@public
@spec.validate(
    resp=Responses(HTTP_200=CompareAnswer, HTTP_404=ApiError, **ERRORS), tags=["compares"]
)
def api_compare(name: str) -> CompareAnswer:
    """A compare: its verdict, LLR and bounds, NEW's Elo advantage with its 95% interval,
    LOS, games."""
    check_grading_visible(get_store(), _caller("read"), name=name)
    return _compare(name)


@api.get("/openapi.json")
@public
def api_openapi() -> Response:
    """The OpenAPI 3.1 document of this API."""
    return Response(json.dumps(document()), mimetype="application/json")


@api.get("/docs")
@public
def api_docs() -> str:
    """The endpoints, from the OpenAPI document, as a page (no script, no CDN)."""
    return render_template("api_docs.html", document=document())


def document() -> dict[str, Any]:
    """The OpenAPI document: spectree's, with each id in a path the whole number the app's
    ``int`` converter takes (0 to :data:`~web.routing.MAX_ID`; spectree says int32)."""
    found: dict[str, Any] = json.loads(json.dumps(spec.spec))
    for operations in found.get("paths", {}).values():
        for operation in operations.values():
            for parameter in operation.get("parameters", []):
                schema = parameter.get("schema") or {}
                if parameter.get("in") == "path" and schema.get("type") == "integer":
                    parameter["schema"] = {
                        "type": "integer", "format": "int64", "minimum": 0, "maximum": MAX_ID
                    }  # fmt: skip
    return found


def api_error(error: Exception) -> BaseResponse:
    """Any error under /api/ in the API's shape: an HTTP error (:func:`json_error`), a
    refused action (403, 404), a record retention pruned (410), a database that does not
    answer (503, ``Retry-After``)."""
    if isinstance(error, HTTPException):
        return json_error(error)
    if isinstance(error, RecordPruned):  # retention deleted it: 410 Gone, and said so
        return json_response(410, str(error))
    if isinstance(error, PermissionDenied | NotFound):
        return json_response(403 if isinstance(error, PermissionDenied) else 404, str(error))
    if isinstance(error, DATABASE_ERRORS):
        response = json_response(503, "the database did not answer: try again in a moment")
        response.headers["Retry-After"] = str(RETRY_SECONDS)
        return response
    raise error


def json_error(error: HTTPException) -> BaseResponse:
    """An HTTP error in the API's shape, with its headers (a 405's ``Allow``)."""
    if isinstance(error, _Abort):
        return error.get_response()
    status = error.code or 500
    body = {"error": {"status": status, "message": error.description or error.name}}
    response = Response(json.dumps(body), status=status, mimetype="application/json")
    for key, value in error.get_headers():
        if key.lower() != "content-type":
            response.headers[key] = value
    if status == 429:
        retry = getattr(error, "retry_after", None)
        if retry is not None:
            response.headers["Retry-After"] = str(int(retry))
    return response


#: What the API's other modules (web.api_competitions) use of this one: the caller's
#: account by scope, an error answer.
caller, fail = _caller, _fail


def init_api(app: Flask) -> None:
    """Add the API to ``app``: its blueprint (no CSRF: tokens only), its OpenAPI document,
    its rate limit, JSON errors under /api/."""
    csrf.exempt(api)
    limiter.shared_limit(api_limit, scope="api", key_func=api_key)(api)
    app.register_blueprint(api)
    spec.register(app)
