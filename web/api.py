"""The JSON API, ``/api/v1`` (docs/api.md): what the pages show, for programs.

Authenticated by bearer tokens only (``Authorization: Bearer da_...``, made on the account
page; never a session cookie, so no CSRF token is needed or accepted). Every request needs
a token with the ``read`` scope; uploading a bot needs ``upload``. Requests and responses
are pydantic models, validated; the OpenAPI 3.1 document is ``/api/v1/openapi.json``
(spectree), and ``/api/v1/docs`` lists the endpoints without any script. Every error is
``{"error": {"status": N, "message": "..."}}`` (:func:`api_error`, the app's one handler
under /api/: refusals, unknown paths, a method a path does not list (405 with ``Allow``),
a database that does not answer (503 with ``Retry-After``)); lists take ``limit`` (1-100)
and ``offset``; a client over its rate limit gets 429 with ``Retry-After``.
"""

from __future__ import annotations

import json
import random
from typing import Annotated, Any

from flask import (
    Blueprint,
    Flask,
    Response,
    g,
    render_template,
    url_for,
)
from pydantic import BaseModel, Field
from spectree import Response as Responses
from spectree import SecurityScheme, SecuritySchemeData, SpecTree
from spectree.model_adapter.pydantic_adapter import BaseFile
from spectree.models import SecureType
from werkzeug.datastructures import FileStorage
from werkzeug.exceptions import HTTPException
from werkzeug.wrappers import Response as BaseResponse

from arena.compete.sprt import Statistic
from arena.engine.rules import rules_from_document
from arena.errors import ArenaError, NotFound, PermissionDenied
from arena.service import compares as compare_service
from arena.service.accounts import Account
from arena.service.assignment_views import check_grading_visible
from arena.service.classes import bot_target
from arena.service.compares import MAX_COMPARE_GAMES, compare_view
from arena.service.competitions import source_opened
from arena.service.games import game_list, game_record, match_list
from arena.service.matches import MatchSettings
from arena.service.permissions import allowed, require
from arena.service.tournaments import (
    NewTournament,
    cancel_tournament,
    entrant_specs,
    preset,
    start_tournament,
)
from arena.service.uploads import UploadError, UploadView, receive_upload, upload_view
from arena.service.views import (
    bot_list,
    bot_source,
    bot_view,
    leaderboard,
    rule_set_names,
    tournament_list,
    tournament_view,
)
from arena.store.db import DATABASE_ERRORS
from web.auth import guarded, public
from web.extensions import csrf, get_store, limiter
from web.forms import read_file
from web.games import FilterError, parse_filter, record_for_reader
from web.limits import API_LIMIT, api_key, api_limit, bearer
from web.routing import MAX_ID

__all__ = [
    "API_LIMIT",
    "CompareRequest",
    "api",
    "api_error",
    "init_api",
    "json_error",
    "json_response",
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


spec = SpecTree(
    "flask",
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


# --- models ----------------------------------------------------------------------------------


class Page(BaseModel):
    limit: int = Field(50, ge=1, le=100)
    offset: int = Field(0, ge=0, le=MAX_ID)


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
    #: python, python-numpy or javascript (arena.match.runtimes).
    runtime: str


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
    #: python, python-numpy or javascript (arena.match.runtimes); default: by the suffix.
    runtime: str = Field("", max_length=20)


class UploadModel(BaseModel):
    id: int
    owner: str
    bot: str
    status: str
    message: str | None
    version: int | None
    placement: str | None
    runtime: str


class StandingModel(BaseModel):
    rank: int
    entrant: str
    games: int
    wins: int
    win_rate: float
    points: int
    forfeits: int
    rating: float | None
    low: float | None
    high: float | None


class CrosstableModel(BaseModel):
    """``scores[i][j]``: entrant i's wins plus half draws against entrant j (None: never
    met)."""

    entrants: list[str]
    scores: list[list[float | None]]


class FaultCount(BaseModel):
    entrant: str
    kind: str
    games: int


class VoidMatch(BaseModel):
    match: str
    reason: str


class TournamentModel(BaseModel):
    name: str
    status: str
    format: str
    rules: str
    players: int
    teams: bool
    games_per_match: int
    seed: int
    owner: str | None
    created: str
    started: str | None
    finished: str | None
    progress: dict[str, int] = Field(description="matches by status")
    games_done: int
    games_total: int
    eta_seconds: float | None
    workers_alive: int
    standings: list[StandingModel]
    crosstable: CrosstableModel | None = Field(description="2-player tournaments only")
    faults: list[FaultCount]
    void: list[VoidMatch]


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


class CancelModel(BaseModel):
    name: str
    voided: int = Field(description="matches that will not be played")


class MatchQuery(Page):
    status: str | None = Field(None, pattern="^(pending|running|done|void)$")


class MatchModel(BaseModel):
    id: int
    key: str
    status: str
    labels: list[str]
    seats: list[str]
    games: int
    attempts: int
    finished: str | None
    void: str | None


class MatchesModel(BaseModel):
    total: int
    matches: list[MatchModel]


class GameQuery(Page):
    tournament: str | None = None
    bot: str | None = Field(None, description="OWNER/NAME")
    opponent: str | None = Field(None, description="OWNER/NAME")
    rules: str | None = None
    result: str | None = Field(None, description="win, draw or loss (for bot)")
    fault: str | None = Field(None, description="any, none, mine (bot's) or a fault's kind")
    a: str | None = Field(None, description="an entrant label of the tournament")
    b: str | None = Field(None, description="another entrant label (a pairing)")
    by: str | None = Field(None, description="the entrant label that forfeited")


class GameModel(BaseModel):
    match: int
    index: int
    tournament: str
    rules: str
    seats: list[str]
    labels: list[str]
    places: list[int]
    points: list[int]
    termination: str
    fault_seat: int | None
    outcome: str | None = Field(description="win, draw or loss for the bot filtered on")
    finished: str | None
    record: str = Field(description="the game record's URL")


class GamesModel(BaseModel):
    games: list[GameModel]
    more: bool = Field(description="older games follow: ask with offset + limit")


class CompareRequest(BaseModel):
    """A compare as the API asks for it (the request body; the ranges are checked by
    :func:`arena.service.compares.start_compare`, each with its own message)."""

    new: str = Field(description="your bot, OWNER/NAME[@VERSION]")
    old: str = Field(description="OWNER/NAME[@VERSION]")
    rules: str = Field(description="a preset rule set", examples=["draw"])
    players: Annotated[int, Field(description="seats; 4 with teams")] = 2
    teams: Annotated[
        bool, Field(description="2v2 (muggins, 4 players): NEW and OLD each partner a copy")
    ] = False
    statistic: Annotated[
        Statistic,
        Field(
            description="what the test counts per deal group: margin (point margins less "
            "the luck of the draw, with a fast pass) or game (game results, fishtest's "
            "pentanomial SPRT)"
        ),
    ] = "margin"
    elo0: Annotated[float, Field(description="H0: NEW is at most this much stronger")] = 0.0
    elo1: Annotated[float, Field(description="H1: NEW is at least this much stronger")] = 10.0
    alpha: float = 0.05
    beta: float = 0.05
    max_games: Annotated[int, Field(description=f"at most {MAX_COMPARE_GAMES:,}")] = 2000
    batch: Annotated[int, Field(description="deal groups between two looks at the test")] = 8
    move_ms: Annotated[int, Field(description="time a move, in milliseconds")] = 1000


class CompareModel(BaseModel):
    name: str
    new: str | None
    old: str | None
    rules: str
    players: int
    teams: bool
    status: str
    verdict: str = Field(description="running, passed (H1), failed (H0) or undecided")
    statistic: str | None = Field(description="margin or game: what the test counts")
    elo0: float | None
    elo1: float | None
    alpha: float | None
    beta: float | None
    max_games: int | None
    games: int
    elo: float | None
    low: float | None
    high: float | None
    los: float | None
    llr: float | None
    lower: float | None
    upper: float | None
    fast_llr: float | None = Field(description="the margin test's fast pass (else null)")
    fast_upper: float | None = Field(description="where the fast pass passes NEW")
    progress: dict[str, int]
    url: str


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
@public
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
@public
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
                runtime=v.runtime,
                ratings=[RatingModel(rules=r.rules, rating=round(r.rating, 1), low=round(r.low, 1),
                                     high=round(r.high, 1), games=r.games, rank=r.rank)
                         for r in v.ratings],
            )
            for v in view.versions
        ],
    )  # fmt: skip


@api.get("/bots/<owner>/<name>/versions/<int:version>/source")
@guarded("read-source", early=False)
@spec.validate(resp=Responses("HTTP_200", HTTP_404=ApiError, **ERRORS), tags=["bots"])
def api_bot_source(owner: str, name: str, version: int) -> Response:
    """A version's source as text: for everyone once its owner made it public, else for its
    owner and the admins only (404 to anyone else: a private source is not acknowledged),
    or for everyone once a competition it entered made its entries' sources public."""
    account = _caller("read")
    view = bot_view(get_store(), owner, name)
    source = None
    if view is not None and (
        view.source_public
        or allowed(account, "read-source", bot_target(get_store(), view.owner_id))
        or source_opened(get_store(), owner, name, version)
    ):
        source = bot_source(get_store(), owner, name, version)
    if source is None:
        _fail(404, f"no source of {owner}/{name} version {version} for you")
    return Response(source, mimetype="text/x-python")


@api.post("/bots")
@guarded("upload", early=False)
@spec.validate(
    form=UploadForm,
    resp=Responses(HTTP_202=UploadModel, HTTP_400=ApiError, HTTP_413=ApiError, **ERRORS),
    tags=["bots"],
)
def api_upload(form: UploadForm) -> tuple[UploadModel, int]:
    """Upload a bot (multipart: ``source``, a .py or .js file; ``name``, default the file's
    stem; ``runtime``: python, python-numpy or javascript, default by the file's suffix): 202
    with the upload, checked on a worker; poll ``/uploads/{id}``."""
    account = _caller("upload")
    # no body at all: spectree validates nothing and passes None
    file = form.source if form is not None and isinstance(form.source, FileStorage) else None
    if file is None or not file.filename:
        _fail(400, "send the bot as the multipart file field 'source'")
    assert file is not None
    filename, data = read_file(file)
    try:
        view = receive_upload(get_store(), account, filename, data, form.name, form.runtime or None)
    except PermissionDenied:
        raise
    except (UploadError, ArenaError) as exc:
        _fail(400, str(exc))
    return _upload_model(view), 202


def _upload_model(view: UploadView) -> UploadModel:
    return UploadModel(
        id=view.id, owner=view.owner, bot=view.bot, status=view.status, message=view.message,
        version=view.version, placement=view.placement, runtime=view.runtime,
    )  # fmt: skip


@api.get("/uploads/<int:upload_id>")
@guarded("read-faults", early=False)
@spec.validate(resp=Responses(HTTP_200=UploadModel, HTTP_404=ApiError, **ERRORS), tags=["bots"])
def api_upload_status(upload_id: int) -> UploadModel:
    """An upload's check: pending, accepted, already (stored before) or rejected."""
    account = _caller("read")
    view = upload_view(get_store(), upload_id)
    # its report is its owner's (and the admins'): the pages' rule, the permission table's
    if view is None or not allowed(account, "read-faults", bot_target(get_store(), view.owner_id)):
        _fail(404, f"no upload {upload_id}")
    assert view is not None
    return _upload_model(view)


@api.get("/tournaments")
@public
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


def _iso(moment: Any) -> str | None:
    return None if moment is None else moment.isoformat()


def _num(value: float | None, digits: int = 1) -> float | None:
    """A rounded number for JSON (None for none; infinities, which JSON lacks, as None)."""
    if value is None or value != value or value in (float("inf"), float("-inf")):
        return None
    return round(value, digits)


@api.get("/tournaments/<name>")
@public
@spec.validate(
    resp=Responses(HTTP_200=TournamentModel, HTTP_404=ApiError, **ERRORS), tags=["tournaments"]
)
def api_tournament(name: str) -> TournamentModel:
    """A tournament: progress, standings with intervals, crosstable, faults, void matches."""
    check_grading_visible(get_store(), _caller("read"), name=name)
    try:
        t = tournament_view(get_store(), name)
    except LookupError:
        _fail(404, f"no tournament called {name!r}")
    crosstable = None
    if t.crosstable is not None:
        crosstable = CrosstableModel(entrants=t.crosstable[0], scores=t.crosstable[1])
    return TournamentModel(
        name=t.name, status=t.status, format=t.format, rules=t.rules, players=t.players,
        teams=t.teams, games_per_match=t.games_per_match, seed=t.seed, owner=t.owner,
        created=t.created.isoformat(), started=_iso(t.started), finished=_iso(t.finished),
        progress=t.progress, games_done=t.games_done, games_total=t.games_total,
        eta_seconds=_num(t.eta_seconds), workers_alive=t.workers_alive,
        standings=[
            StandingModel(rank=r.rank, entrant=r.entrant, games=r.games, wins=r.wins,
                          win_rate=round(r.win_rate, 4), points=r.points, forfeits=r.forfeits,
                          rating=_num(r.rating), low=_num(r.low), high=_num(r.high))
            for r in t.standings
        ],
        crosstable=crosstable,
        faults=[FaultCount(entrant=e, kind=k, games=n) for e, k, n in t.faults],
        void=[VoidMatch(match=key, reason=reason) for key, reason in t.void],
    )  # fmt: skip


@api.post("/tournaments")
@guarded("create-tournament", early=False)
@spec.validate(
    json=TournamentCreate,
    resp=Responses(HTTP_201=TournamentModel, HTTP_400=ApiError, **ERRORS),
    tags=["tournaments"],
)
def api_create_tournament(json: TournamentCreate) -> tuple[TournamentModel, int]:
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
    return api_tournament(json.name.strip()), 201


@api.post("/tournaments/<name>/cancel")
@guarded("cancel-tournament", early=False)
@spec.validate(
    resp=Responses(HTTP_200=CancelModel, HTTP_404=ApiError, **ERRORS), tags=["tournaments"]
)
def api_cancel_tournament(name: str) -> CancelModel:
    """Cancel a tournament (its creator or an admin; a ``run`` token): every match not
    finished is void (a running one stops at its worker's next heartbeat and stores
    nothing), finished results are kept."""
    account = _caller("run")
    voided = cancel_tournament(get_store(), account, name)  # 404, 403: the app's handler
    return CancelModel(name=name, voided=voided)


@api.get("/tournaments/<name>/matches")
@public
@spec.validate(
    query=MatchQuery,
    resp=Responses(HTTP_200=MatchesModel, HTTP_404=ApiError, **ERRORS),
    tags=["tournaments"],
)
def api_matches(name: str, query: MatchQuery) -> MatchesModel:
    """A tournament's matches in schedule order (``status``: only those)."""
    check_grading_visible(get_store(), _caller("read"), name=name)
    try:
        total, rows = match_list(
            get_store(), name, status=query.status, limit=query.limit, offset=query.offset
        )
    except LookupError:
        _fail(404, f"no tournament called {name!r}")
    return MatchesModel(
        total=total,
        matches=[
            MatchModel(id=m.id, key=m.key, status=m.status, labels=list(m.labels),
                       seats=list(m.seats), games=m.games, attempts=m.attempts,
                       finished=_iso(m.finished), void=m.void)
            for m in rows
        ],
    )  # fmt: skip


@api.get("/games")
@public
@spec.validate(
    query=GameQuery, resp=Responses(HTTP_200=GamesModel, HTTP_400=ApiError, **ERRORS),
    tags=["games"],
)  # fmt: skip
def api_games(query: GameQuery) -> GamesModel:
    """Stored games, newest first, with the games page's filters."""
    _caller("read")
    args = {k: v for k, v in query.model_dump().items() if isinstance(v, str)}
    try:
        page = game_list(get_store(), parse_filter(args), limit=query.limit, offset=query.offset)
    except (FilterError, ValueError, LookupError) as exc:
        _fail(400, str(exc.args[0] if exc.args else exc))
    return GamesModel(
        games=[
            GameModel(match=g.match_id, index=g.index, tournament=g.tournament, rules=g.rules,
                      seats=list(g.seats), labels=list(g.labels), places=list(g.places),
                      points=list(g.points), termination=g.termination,
                      fault_seat=g.fault_seat, outcome=g.outcome, finished=_iso(g.finished),
                      record=url_for("api.api_game", match_id=g.match_id, index=g.index))
            for g in page.rows
        ],
        more=page.more,
    )  # fmt: skip


@api.get("/games/<int:match_id>/<int:index>")
@public
@spec.validate(resp=Responses("HTTP_200", HTTP_404=ApiError, **ERRORS), tags=["games"])
def api_game(match_id: int, index: int) -> Response:
    """A game's record (the format ``arena replay verify`` checks); a fault's message and
    stderr only for the faulting bot's owner and the admins."""
    account = _caller("read")
    check_grading_visible(get_store(), account, match_id=match_id)
    found = game_record(get_store(), match_id, index)
    if found is None:
        _fail(404, f"no stored game {index} of match {match_id}")
    assert found is not None
    record = record_for_reader(account, found.row, found.record)
    return Response(json.dumps(record), mimetype="application/json")


def _compare_model(name: str) -> CompareModel:
    try:
        c = compare_view(get_store(), name)
    except LookupError:
        _fail(404, f"no compare called {name!r}")
    t = c.test
    return CompareModel(
        name=c.name, new=None if t is None else t.new, old=None if t is None else t.old,
        rules=c.rules, players=c.players, teams=c.teams, status=c.status, verdict=c.verdict,
        statistic=None if t is None else t.statistic, elo0=None if t is None else t.elo0,
        elo1=None if t is None else t.elo1,
        alpha=None if t is None else t.alpha, beta=None if t is None else t.beta,
        max_games=None if t is None else t.max_games, games=c.games,
        elo=_num(c.elo), low=_num(c.low), high=_num(c.high), los=_num(c.los, 4),
        llr=_num(c.llr, 3), lower=_num(c.lower, 3), upper=_num(c.upper, 3),
        fast_llr=_num(c.fast_llr, 3), fast_upper=_num(c.fast_upper, 3), progress=c.progress,
        url=url_for("compares.compare_page", name=c.name),
    )  # fmt: skip


@api.post("/compares")
@guarded("start-compare", early=False)
@spec.validate(
    json=CompareRequest,
    resp=Responses(HTTP_202=CompareModel, HTTP_400=ApiError, **ERRORS),
    tags=["compares"],
)
def api_start_compare(json: CompareRequest) -> tuple[CompareModel, int]:
    """Start a regression test of your bot (NEW) against OLD (a ``run`` token): 202 with
    the compare; poll ``/compares/{name}`` until its verdict is not ``running``."""
    account = _caller("run")
    wanted = compare_service.CompareRequest(**json.model_dump())
    try:
        started = compare_service.start_compare(get_store(), account, wanted)
    except PermissionDenied as exc:
        _fail(403, str(exc))
    except (ArenaError, ValueError, LookupError) as exc:
        _fail(400, str(exc.args[0] if exc.args else exc))
    return _compare_model(started.name), 202


@api.get("/compares/<name>")
@public
@spec.validate(
    resp=Responses(HTTP_200=CompareModel, HTTP_404=ApiError, **ERRORS), tags=["compares"]
)
def api_compare(name: str) -> CompareModel:
    """A compare: its verdict, LLR and bounds, NEW's Elo advantage with its 95% interval,
    LOS, games."""
    check_grading_visible(get_store(), _caller("read"), name=name)
    return _compare_model(name)


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
    refused action (403, 404), a database that does not answer (503, ``Retry-After``)."""
    if isinstance(error, HTTPException):
        return json_error(error)
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
#: account by scope, an error answer, a time and a number for JSON.
caller, fail, iso, num = _caller, _fail, _iso, _num


def init_api(app: Flask) -> None:
    """Add the API to ``app``: its blueprint (no CSRF: tokens only), its OpenAPI document,
    its rate limit, JSON errors under /api/."""
    csrf.exempt(api)
    limiter.shared_limit(api_limit, scope="api", key_func=api_key)(api)
    app.register_blueprint(api)
    spec.register(app)
