"""The reports' part of the JSON API (docs/api.md, docs/classes.md), on the API's blueprint
(:mod:`web.api`: tokens, the error shape, the OpenAPI document): any tournament's
standings, an assignment's grades (its class's teachers), a class's similarity report (its
teachers).

Imported by web.app before the blueprint is registered (its routes join it then).
"""

from __future__ import annotations

from pydantic import BaseModel, Field
from spectree import Response as Responses

from arena.service.exports import standings_rows
from arena.service.views import tournament_view
from web.api import ERRORS, ApiError, api, spec
from web.api import caller as _caller
from web.api import fail as _fail
from web.auth import public
from web.extensions import get_store

__all__ = ["StandingsModel"]


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
    _caller("read")
    try:
        view = tournament_view(get_store(), name)
    except LookupError:
        _fail(404, f"no tournament called {name!r}")
    return StandingsModel(
        tournament=view.name,
        status=view.status,
        rows=[StandingsRowModel(**row) for row in standings_rows(view)],
    )
