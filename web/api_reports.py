"""The reports' part of the JSON API (docs/api.md, docs/web.md), on the API's blueprint
(:mod:`web.api`: tokens, the error shape, the OpenAPI document): any tournament's
standings, an assignment's grades (its class's teachers), a class's similarity report (its
teachers).

Imported by web.app before the blueprint is registered (its routes join it then).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from flask import Response, url_for
from pydantic import BaseModel, Field
from spectree import Response as Responses

from arena.service.assignment_views import check_grading_visible
from arena.service.board_views import tournament_view
from arena.service.classes import ClassError
from arena.service.exports import StandingsLine, standings_lines
from arena.service.gradebooks import GradebookError
from arena.service.shapes import about, extend
from arena.service.similarity import (
    THRESHOLD,
    ReportPair,
    ReportSide,
    SimilarityReport,
    similarity_report,
)
from web.api import ERRORS, ApiError, api, spec
from web.api import caller as _caller
from web.api import fail as _fail
from web.assignments import download, grade_file
from web.auth import guarded, public
from web.extensions import get_store

__all__ = ["LinkedReport", "Standings"]


@dataclass(frozen=True, slots=True)
class Standings:
    tournament: str
    status: str
    rows: list[StandingsLine]


@api.get("/tournaments/<name>/standings")
@public
@spec.validate(
    resp=Responses(HTTP_200=Standings, HTTP_404=ApiError, **ERRORS), tags=["tournaments"]
)
def api_standings(name: str) -> Standings:
    """Any tournament's standings, best first: the rows of its CSV
    (``/tournaments/NAME/standings.csv``)."""
    check_grading_visible(get_store(), _caller("read"), name=name)
    try:
        view = tournament_view(get_store(), name)
    except LookupError:
        _fail(404, f"no tournament called {name!r}")
    return Standings(tournament=view.name, status=view.status, rows=standings_lines(view))


class SimilarityQuery(BaseModel):
    threshold: float = Field(THRESHOLD, ge=0, le=1, description="report pairs above this score")


@dataclass(frozen=True, slots=True)
class LinkedSide(ReportSide):
    """A side of a similar pair, with its source's URL."""

    source: str = field(default="", metadata=about("the source's URL (its teachers may read it)"))

    @classmethod
    def of(cls, side: ReportSide) -> LinkedSide:
        """``side`` with its source's URL."""
        url = url_for("api.api_bot_source", owner=side.owner, name=side.bot, version=side.number)
        return extend(side, cls, source=url)


@dataclass(frozen=True, slots=True)
class LinkedPair(ReportPair):
    """A similar pair, its sides' sources linked."""

    a: LinkedSide
    b: LinkedSide


@dataclass(frozen=True, slots=True)
class LinkedReport(SimilarityReport):
    """A class's similarity report, its sources linked."""

    pairs: tuple[LinkedPair, ...]


@api.get("/classes/<name>/similarity")
@guarded("manage-class", early=False)
@spec.validate(
    query=SimilarityQuery,
    resp=Responses(HTTP_200=LinkedReport, HTTP_400=ApiError, HTTP_404=ApiError, **ERRORS),
    tags=["classes"],
)
def api_similarity(name: str, query: SimilarityQuery) -> LinkedReport:
    """The class's similarity report (its teachers; a ``read`` token): the pairs of
    students whose latest versions have more than ``threshold`` of a source in common
    (winnowed fingerprints; the reference bots and the starter bot left out), with each
    side's matching lines."""
    account = _caller("read")
    try:
        report = similarity_report(get_store(), account, name, threshold=query.threshold)
    except ClassError as exc:
        _fail(400, str(exc))
    pairs = tuple(
        LinkedPair(score=p.score, tokens=p.tokens, a=LinkedSide.of(p.a), b=LinkedSide.of(p.b))
        for p in report.pairs
    )
    return extend(report, LinkedReport, pairs=pairs)


class GradesQuery(BaseModel):
    format: str = Field("table", max_length=20, description="table, canvas or moodle")
    by: str = Field("idnumber", max_length=20, description="Moodle's: idnumber or email")


@api.get("/classes/<class_name>/assignments/<name>/grades.csv")
@guarded("manage-class", early=False)
@spec.validate(
    query=GradesQuery,
    resp=Responses("HTTP_200", HTTP_400=ApiError, HTTP_404=ApiError, **ERRORS),
    tags=["assignments"],
)
def api_grades_csv(class_name: str, name: str, query: GradesQuery) -> Response:
    """The grades as CSV (the class's teachers; a ``read`` token), UTF-8 with a byte-order
    mark: the rows of ``GET .../grades`` flat, a column group per reference
    (docs/assignments.md), the CSV of the assignment's page; ``?format=canvas`` Canvas's
    gradebook import, ``?format=moodle&by=idnumber|email`` Moodle's (students without that
    identifier or a grade left out: ``X-Left-Out`` says how many)."""
    account = _caller("read")
    try:
        found = grade_file(class_name, name, account)
    except GradebookError as exc:
        _fail(400, str(exc))
    return download(found)
