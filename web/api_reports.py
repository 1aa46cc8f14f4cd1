"""The reports' part of the JSON API (docs/api.md, docs/web.md), on the API's blueprint
(:mod:`web.api`: tokens, the error shape, the OpenAPI document): any tournament's
standings, an assignment's grades (its class's teachers), a class's similarity report (its
teachers).

Imported by web.app before the blueprint is registered (its routes join it then).
"""

from __future__ import annotations

from flask import Response, url_for
from pydantic import BaseModel, Field
from spectree import Response as Responses

from arena.service.assignment_views import check_grading_visible
from arena.service.assignments import assignment_grades, assignment_view
from arena.service.classes import ClassError
from arena.service.exports import grade_csv, standings_rows
from arena.service.similarity import THRESHOLD, ReportSide, similarity_report
from arena.service.views import tournament_view
from web.api import ERRORS, ApiError, api, spec
from web.api import caller as _caller
from web.api import fail as _fail
from web.auth import guarded, public
from web.downloads import disposition
from web.extensions import get_store

__all__ = ["SimilarityModel", "StandingsModel"]


class StandingsRowModel(BaseModel):
    rank: int
    entrant: str = Field(description="its label in the tournament")
    name: str = Field(description="the stored version it stands for (owner/bot vN)")
    games: int
    wins: int
    win_rate: float
    points: int
    forfeits: int
    rating: float | None = Field(description="Elo over this tournament's games")
    rating_low: float | None = Field(description="the rating's 95% interval")
    rating_high: float | None


class StandingsModel(BaseModel):
    tournament: str
    status: str
    rows: list[StandingsRowModel]


@api.get("/tournaments/<name>/standings")
@public
@spec.validate(
    resp=Responses(HTTP_200=StandingsModel, HTTP_404=ApiError, **ERRORS), tags=["tournaments"]
)
def api_standings(name: str) -> StandingsModel:
    """Any tournament's standings, best first: the rows of its CSV
    (``/tournaments/NAME/standings.csv``)."""
    check_grading_visible(get_store(), _caller("read"), name=name)
    try:
        view = tournament_view(get_store(), name)
    except LookupError:
        _fail(404, f"no tournament called {name!r}")
    return StandingsModel(
        tournament=view.name,
        status=view.status,
        rows=[StandingsRowModel(**row) for row in standings_rows(view)],
    )


class SimilarityQuery(BaseModel):
    threshold: float = Field(THRESHOLD, ge=0, le=1, description="report pairs above this score")


class SimilarSideModel(BaseModel):
    student: str
    version: str = Field(description="owner/bot vN: the student's latest version")
    similarity: float = Field(description="the share of this source found in the other")
    lines: list[list[int]] = Field(description="its matching lines: [first, last] from 1")
    source: str = Field(description="the source's URL (its teachers may read it)")


class SimilarPairModel(BaseModel):
    score: float = Field(description="the larger of the two similarities")
    tokens: int = Field(description="the length of the text in common (tokenized)")
    a: SimilarSideModel
    b: SimilarSideModel


class SimilarityModel(BaseModel):
    class_name: str
    threshold: float
    students: int
    compared: int = Field(description="students with a version, compared in pairs")
    seconds: float = Field(description="how long the comparison took")
    pairs: list[SimilarPairModel]


def _side(side: ReportSide) -> SimilarSideModel:
    return SimilarSideModel(
        student=side.student,
        version=side.version,
        similarity=round(side.similarity, 4),
        lines=[list(r) for r in side.lines],
        source=url_for("api.api_bot_source", owner=side.owner, name=side.bot, version=side.number),
    )


@api.get("/classes/<name>/similarity")
@guarded("manage-class", early=False)
@spec.validate(
    query=SimilarityQuery,
    resp=Responses(HTTP_200=SimilarityModel, HTTP_400=ApiError, HTTP_404=ApiError, **ERRORS),
    tags=["classes"],
)
def api_similarity(name: str, query: SimilarityQuery) -> SimilarityModel:
    """The class's similarity report (its teachers; a ``read`` token): the pairs of
    students whose latest versions have more than ``threshold`` of a source in common
    (winnowed fingerprints; the reference bots and the starter bot left out), with each
    side's matching lines."""
    account = _caller("read")
    try:
        report = similarity_report(get_store(), account, name, threshold=query.threshold)
    except ClassError as exc:
        _fail(400, str(exc))
    return SimilarityModel(
        class_name=report.class_name,
        threshold=report.threshold,
        students=report.students,
        compared=report.compared,
        seconds=round(report.seconds, 3),
        pairs=[
            SimilarPairModel(score=round(p.score, 4), tokens=p.tokens, a=_side(p.a), b=_side(p.b))
            for p in report.pairs
        ],
    )


@api.get("/classes/<class_name>/assignments/<name>/grades.csv")
@guarded("manage-class", early=False)
@spec.validate(resp=Responses("HTTP_200", HTTP_404=ApiError, **ERRORS), tags=["assignments"])
def api_grades_csv(class_name: str, name: str) -> Response:
    """The grade table as CSV (the class's teachers; a ``read`` token): the rows of
    ``GET .../grades`` flat, a column group per reference (docs/assignments.md), the
    CSV of the assignment's page."""
    account = _caller("read")
    rows = assignment_grades(get_store(), account, class_name, name)
    view = assignment_view(get_store(), account, class_name, name)
    response = Response(
        grade_csv(rows, [label for label, _ in view.references]), mimetype="text/csv"
    )
    response.headers["Content-Disposition"] = disposition(
        f"{view.class_name}-{view.name}-grades.csv"
    )
    return response
