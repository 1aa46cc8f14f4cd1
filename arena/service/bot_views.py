"""What a bot's pages show (over :mod:`arena.store.bots`): the bots, one bot's versions with
their check reports, runtimes and ratings in every rule set, its rating charts, a version's
source (the caller authorizes: :mod:`arena.service.permissions`). What an actor does to a
bot is :mod:`arena.service.bots`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from arena.match.runtimes import DEFAULT_RUNTIME, RUNTIMES, runtime_version
from arena.service.permissions import Actor
from arena.service.privacy import hidden_from
from arena.service.shapes import ELO, HIDDEN
from arena.store import bots as stored_bots
from arena.store.bots import BotRow
from arena.store.db import Store, as_utc

__all__ = [
    "BotRow",
    "BotView",
    "RatingChart",
    "VersionRating",
    "VersionView",
    "bot_list",
    "bot_source",
    "bot_view",
]


@dataclass(frozen=True, slots=True)
class VersionRating:
    """A bot version's stored rating under one rule set."""

    rules: str
    rating: float = field(metadata=ELO)
    low: float = field(metadata=ELO)
    high: float = field(metadata=ELO)
    games: int
    rank: int


@dataclass(frozen=True, slots=True)
class VersionView:
    """One version of a bot: its check report and its ratings."""

    version: int
    sha256: str
    created: datetime
    report: dict[str, Any] = field(metadata=HIDDEN)  # its faults are its owner's
    ratings: list[VersionRating]
    #: The runtime it runs under (arena.match.runtimes).
    runtime: str = DEFAULT_RUNTIME
    #: Its id in the store (a table's seat names it: the page's "Play against this bot").
    id: int = field(default=0, metadata=HIDDEN)

    @property
    def runtime_label(self) -> str:
        """The runtime for people, with its versions: ``python-numpy (Python 3.11.2, numpy
        2.2.6)``."""
        if self.runtime not in RUNTIMES:
            return self.runtime
        return f"{self.runtime} ({runtime_version(self.runtime)})"


@dataclass(frozen=True, slots=True)
class RatingChart:
    """A bot's rating over time under one rule set, for its chart: one point per refit
    (the newest version rated then), and when each later version arrived."""

    rules: str
    times: list[float]
    ratings: list[float]
    lows: list[float]
    highs: list[float]
    versions: list[tuple[float, int]]

    def to_json(self) -> dict[str, Any]:
        """The chart's data as the page's script reads it (times in Unix seconds)."""
        return {
            "rules": self.rules,
            "times": self.times,
            "ratings": [round(r, 1) for r in self.ratings],
            "lows": [round(r, 1) for r in self.lows],
            "highs": [round(r, 1) for r in self.highs],
            "versions": self.versions,
        }


@dataclass(frozen=True, slots=True)
class BotView:
    """A bot for its page: owner, versions newest first, whether its source is public."""

    id: int = field(metadata=HIDDEN)
    owner_id: int = field(metadata=HIDDEN)
    owner: str
    name: str
    source_public: bool
    created: datetime = field(metadata=HIDDEN)
    versions: list[VersionView]
    charts: list[RatingChart] = field(metadata=HIDDEN)


def bot_list(store: Store, viewer: Actor = None) -> list[BotRow]:
    """Every stored bot ``viewer`` may see (arena.service.privacy), the most recently
    updated first."""
    hidden = hidden_from(store, viewer)
    return [row for row in stored_bots.bot_rows(store) if not hidden.owner(row.owner)]


def bot_view(store: Store, owner: str, name: str, viewer: Actor = None) -> BotView | None:
    """The bot ``owner/name`` with every version and its ratings, or None (also when
    ``viewer`` may not see it: arena.service.privacy)."""
    found = stored_bots.bot_record(store, owner, name)
    if found is None or hidden_from(store, viewer).owner(found.bot.owner_id):
        return None
    bot, versions = found.bot, found.versions
    ratings: dict[int, list[VersionRating]] = {}
    for version_id, rules, rating, low, high, games, rank in found.ratings:
        ratings.setdefault(version_id, []).append(
            VersionRating(rules, rating, low, high, games, rank)
        )
    numbers = {vid: (number, created) for vid, number, _, created, _, _ in versions}
    return BotView(
        id=bot.id,
        owner_id=bot.owner_id,
        owner=found.owner,
        name=bot.name,
        source_public=bot.source_public,
        created=as_utc(bot.created),
        versions=[
            VersionView(
                number, sha, as_utc(created), report or {}, ratings.get(vid, []), runtime, vid
            )
            for vid, number, sha, created, report, runtime in versions
        ],
        charts=_rating_charts(found.history, numbers),
    )


def _rating_charts(
    rows: Sequence[tuple[str, datetime, int, float, float, float]],
    versions: dict[int, tuple[int, datetime]],
) -> list[RatingChart]:
    """One chart per rule set the versions were rated under, from their rating history
    (by rule set's name, then time)."""
    points: dict[str, dict[float, tuple[int, float, float, float]]] = {}
    for rules, time, version_id, rating, low, high in rows:
        moment = as_utc(time).timestamp()
        number = versions[version_id][0]
        chart = points.setdefault(rules, {})
        if moment not in chart or chart[moment][0] < number:  # the newest version then
            chart[moment] = (number, rating, low, high)
    charts = []
    for rules, chart in points.items():
        moments = sorted(chart)
        arrivals = [
            (as_utc(created).timestamp(), number)
            for number, created in versions.values()
            if number > 1 and moments and as_utc(created).timestamp() <= moments[-1]
        ]
        charts.append(
            RatingChart(
                rules=rules,
                times=moments,
                ratings=[chart[m][1] for m in moments],
                lows=[chart[m][2] for m in moments],
                highs=[chart[m][3] for m in moments],
                versions=sorted(arrivals),
            )
        )
    return charts


def bot_source(store: Store, owner: str, name: str, version: int) -> str | None:
    """The source of ``owner/name`` version ``version``, or None (authorization is the
    caller's: see :class:`BotView`'s owner and ``source_public``)."""
    return stored_bots.version_source(store, owner, name, version)
