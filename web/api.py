"""The JSON API, ``/api/v1`` (docs/api.md): what the pages show, for programs.

Authenticated by bearer tokens only (``Authorization: Bearer da_...``, made on the account
page; never a session cookie, so no CSRF token is needed or accepted). Every request needs
a token with the ``read`` scope; uploading a bot needs ``upload``. Requests and responses
are pydantic models, validated; the OpenAPI 3.1 document is ``/api/v1/openapi.json``
(spectree), and ``/api/v1/docs`` lists the endpoints without any script. Every error is
``{"error": {"status": N, "message": "..."}}``; lists take ``limit`` (1-100) and
``offset``; a client over its rate limit gets 429 with ``Retry-After``.
"""

from __future__ import annotations

import json
from typing import Any

from flask import Blueprint, Flask, Response, current_app, g, render_template, request
from pydantic import BaseModel, Field
from spectree import Response as Responses
from spectree import SecurityScheme, SecuritySchemeData, SpecTree
from spectree.model_adapter.pydantic_adapter import BaseFile
from spectree.models import SecureType
from werkzeug.datastructures import FileStorage
from werkzeug.exceptions import HTTPException

from arena.errors import ArenaError
from arena.service.accounts import Account, token_account
from arena.service.uploads import UploadError, UploadView, upload_view
from arena.service.views import bot_list, bot_view, leaderboard, rule_set_names, tournament_list
from web.app import get_store
from web.auth import allowed

__all__ = ["API_LIMIT", "api", "init_api", "json_error", "spec"]

api = Blueprint("api", __name__, url_prefix="/api/v1")

#: Requests a token (or, without one, an address) may make.
API_LIMIT = "600 per minute"


class ApiError(BaseModel):
    """Every error's body: ``{"error": {"status": 404, "message": "..."}}``."""

    error: dict[str, Any] = Field(examples=[{"status": 404, "message": "No bot ada/x."}])


def _validation_error(req: Any, resp: Any, req_validation_error: Any, *_: Any) -> None:
    """Bad parameters: the same error shape as every other error."""
    if req_validation_error is not None:
        details = json.loads(resp.get_data(as_text=True))
        message = "; ".join(
            f"{'.'.join(map(str, d.get('loc', [])))}: {d.get('msg', '')}" for d in details
        )
        resp.set_data(json.dumps({"error": {"status": 422, "message": message}}))
        resp.mimetype = "application/json"


spec = SpecTree(
    "flask",
    title="Domino Arena API",
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

ERRORS = {"HTTP_401": ApiError, "HTTP_403": ApiError, "HTTP_429": ApiError}


def _fail(status: int, message: str) -> Any:
    response = Response(
        json.dumps({"error": {"status": status, "message": message}}),
        status=status,
        mimetype="application/json",
    )
    if status == 401:
        response.headers["WWW-Authenticate"] = 'Bearer realm="arena"'
    raise _Abort(response)


class _Abort(HTTPException):
    def __init__(self, response: Response) -> None:
        super().__init__(response=response)


def _caller(scope: str) -> Account:
    """The token's account, if the token has ``scope``; else 401 (no or bad token) or 403."""
    header = request.headers.get("Authorization", "")
    kind, _, token = header.partition(" ")
    found = token_account(get_store(), token.strip()) if kind.lower() == "bearer" else None
    if found is None:
        _fail(401, "a bearer token is needed: create one on your account page (/account/tokens)")
    assert found is not None
    account, scopes = found
    if scope not in scopes:
        _fail(403, f"this token lacks the {scope!r} scope")
    g.api_account = account
    return account


# --- models ----------------------------------------------------------------------------------


class Page(BaseModel):
    limit: int = Field(50, ge=1, le=100)
    offset: int = Field(0, ge=0)


class RuleSets(BaseModel):
    rule_sets: list[str]


class LeaderboardQuery(BaseModel):
    versions: str = Field("latest", pattern="^(latest|all)$")
    reference: str = Field("show", pattern="^(show|hide)$")


class LeaderboardRowModel(BaseModel):
    rank_best: int
    rank_worst: int
    owner: str
    bot: str
    version: int
    rating: float
    low: float
    high: float
    games: int
    wins: int
    draws: int
    losses: int
    provisional: bool
    reference: bool


class LeaderboardModel(BaseModel):
    rules: str
    computed: str | None
    rows: list[LeaderboardRowModel]


class BotSummary(BaseModel):
    owner: str
    name: str
    versions: int
    latest: str


class BotsModel(BaseModel):
    total: int
    bots: list[BotSummary]


class RatingModel(BaseModel):
    rules: str
    rating: float
    low: float
    high: float
    games: int
    rank: int


class VersionModel(BaseModel):
    version: int
    sha256: str
    created: str
    ratings: list[RatingModel]


class BotModel(BaseModel):
    owner: str
    name: str
    source_public: bool
    versions: list[VersionModel]


class TournamentSummary(BaseModel):
    name: str
    status: str
    format: str
    rules: str
    players: int
    matches: int
    finished: int
    created: str


class TournamentsModel(BaseModel):
    total: int
    tournaments: list[TournamentSummary]


class UploadForm(BaseModel):
    source: BaseFile
    name: str = Field("", max_length=64)


class UploadModel(BaseModel):
    id: int
    owner: str
    bot: str
    status: str
    message: str | None
    version: int | None
    placement: str | None


# --- endpoints -------------------------------------------------------------------------------


@api.get("/rule-sets")
@spec.validate(resp=Responses(HTTP_200=RuleSets, **ERRORS), tags=["leaderboards"])
def api_rule_sets() -> RuleSets:
    """The rule sets with ratings or tournaments."""
    _caller("read")
    return RuleSets(rule_sets=rule_set_names(get_store()))


@api.get("/leaderboards/<rules>")
@spec.validate(
    query=LeaderboardQuery,
    resp=Responses(HTTP_200=LeaderboardModel, HTTP_404=ApiError, **ERRORS),
    tags=["leaderboards"],
)
def api_leaderboard(rules: str, query: LeaderboardQuery) -> LeaderboardModel:
    """A rule set's leaderboard: ranks as ranges, ratings with 95% intervals, records."""
    _caller("read")
    try:
        board = leaderboard(
            get_store(),
            rules,
            all_versions=query.versions == "all",
            hide_reference=query.reference == "hide",
        )
    except LookupError:
        _fail(404, f"no rule set called {rules!r} has been played here")
    return LeaderboardModel(
        rules=board.rules,
        computed=None if board.computed is None else board.computed.isoformat(),
        rows=[
            LeaderboardRowModel(
                rank_best=r.rank_best, rank_worst=r.rank_worst, owner=r.owner, bot=r.bot,
                version=r.version, rating=round(r.rating, 1), low=round(r.low, 1),
                high=round(r.high, 1), games=r.games, wins=r.wins, draws=r.draws,
                losses=r.losses, provisional=r.provisional, reference=r.reference,
            )
            for r in board.rows
        ],
    )  # fmt: skip


@api.get("/bots")
@spec.validate(query=Page, resp=Responses(HTTP_200=BotsModel, **ERRORS), tags=["bots"])
def api_bots(query: Page) -> BotsModel:
    """Every bot, the most recently updated first."""
    _caller("read")
    bots = bot_list(get_store())
    chosen = bots[query.offset : query.offset + query.limit]
    return BotsModel(
        total=len(bots),
        bots=[BotSummary(owner=b.owner, name=b.name, versions=b.versions,
                         latest=b.latest.isoformat()) for b in chosen],
    )  # fmt: skip


@api.get("/bots/<owner>/<name>")
@spec.validate(resp=Responses(HTTP_200=BotModel, HTTP_404=ApiError, **ERRORS), tags=["bots"])
def api_bot(owner: str, name: str) -> BotModel:
    """A bot: its versions and their ratings in every rule set."""
    _caller("read")
    view = bot_view(get_store(), owner, name)
    if view is None:
        _fail(404, f"no bot {owner}/{name}")
    assert view is not None
    return BotModel(
        owner=view.owner,
        name=view.name,
        source_public=view.source_public,
        versions=[
            VersionModel(
                version=v.version, sha256=v.sha256, created=v.created.isoformat(),
                ratings=[RatingModel(rules=r.rules, rating=round(r.rating, 1), low=round(r.low, 1),
                                     high=round(r.high, 1), games=r.games, rank=r.rank)
                         for r in v.ratings],
            )
            for v in view.versions
        ],
    )  # fmt: skip


@api.post("/bots")
@spec.validate(
    form=UploadForm,
    resp=Responses(HTTP_202=UploadModel, HTTP_400=ApiError, HTTP_413=ApiError, **ERRORS),
    tags=["bots"],
)
def api_upload(form: UploadForm) -> tuple[UploadModel, int]:
    """Upload a bot (multipart: ``source``, a .py file; ``name``, default the file's stem):
    202 with the upload, checked on a worker; poll ``/uploads/{id}``."""
    from web.bots import receive_upload

    account = _caller("upload")
    file = form.source if isinstance(form.source, FileStorage) else None
    if file is None or not file.filename:
        _fail(400, "send the bot as the multipart file field 'source'")
    assert file is not None
    try:
        view = receive_upload(account.id, file, form.name)
    except (UploadError, ArenaError) as exc:
        _fail(400, str(exc))
    return _upload_model(view), 202


def _upload_model(view: UploadView) -> UploadModel:
    return UploadModel(
        id=view.id, owner=view.owner, bot=view.bot, status=view.status, message=view.message,
        version=view.version, placement=view.placement,
    )  # fmt: skip


@api.get("/uploads/<int:upload_id>")
@spec.validate(resp=Responses(HTTP_200=UploadModel, HTTP_404=ApiError, **ERRORS), tags=["bots"])
def api_upload_status(upload_id: int) -> UploadModel:
    """An upload's check: pending, accepted, already (stored before) or rejected."""
    account = _caller("read")
    view = upload_view(get_store(), upload_id)
    # its report is its owner's (and the admins'): the pages' rule, from web.auth's table
    if view is None or not allowed(account, "read-faults", owner=view.owner_id):
        _fail(404, f"no upload {upload_id}")
    assert view is not None
    return _upload_model(view)


@api.get("/tournaments")
@spec.validate(
    query=Page, resp=Responses(HTTP_200=TournamentsModel, **ERRORS), tags=["tournaments"]
)
def api_tournaments(query: Page) -> TournamentsModel:
    """Every tournament, newest first."""
    _caller("read")
    rows = tournament_list(get_store())
    chosen = rows[query.offset : query.offset + query.limit]
    return TournamentsModel(
        total=len(rows),
        tournaments=[
            TournamentSummary(name=t.name, status=t.status, format=t.format, rules=t.rules,
                              players=t.players, matches=t.matches, finished=t.finished,
                              created=t.created.isoformat())
            for t in chosen
        ],
    )  # fmt: skip


@api.get("/openapi.json")
def api_openapi() -> Response:
    """The OpenAPI 3.1 document of this API."""
    return Response(json.dumps(spec.spec), mimetype="application/json")


@api.get("/docs")
def api_docs() -> str:
    """The endpoints, from the OpenAPI document, as a page (no script, no CDN)."""
    document = spec.spec
    return render_template("api_docs.html", document=document)


def json_error(error: HTTPException) -> Any:
    """Errors under /api/ in the API's shape (HTML error pages elsewhere)."""
    if isinstance(error, _Abort):
        return error.get_response()
    status = error.code or 500
    body = {"error": {"status": status, "message": error.description or error.name}}
    response = Response(json.dumps(body), status=status, mimetype="application/json")
    if status == 429:
        retry = getattr(error, "retry_after", None)
        if retry is not None:
            response.headers["Retry-After"] = str(int(retry))
    return response


def init_api(app: Flask) -> None:
    """Add the API to ``app``: its blueprint (no CSRF: tokens only), its OpenAPI document,
    its rate limit, JSON errors under /api/."""
    from web.auth import csrf, limiter

    csrf.exempt(api)
    limiter.limit(_api_limit, key_func=_rate_key)(api)
    app.register_blueprint(api)
    spec.register(app)


def _api_limit() -> str:
    limit: str = current_app.config.get("ARENA_API_LIMIT", API_LIMIT)
    return limit


def _rate_key() -> str:
    header = request.headers.get("Authorization", "")
    return header[-16:] if header else (request.remote_addr or "?")
