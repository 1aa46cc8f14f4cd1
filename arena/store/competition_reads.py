"""Reads behind a competition's pages and exports beyond its own rows
(arena.store.competitions): an entrant's rating history, the ladder's and final's latest
matches, versions' names, users by name, and whether a version's source was opened by a
competition it entered. Each function is one transaction; callers get frozen values.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select

from arena.compete.names import name_key
from arena.store.db import Store, as_utc
from arena.store.models import (
    Bot,
    BotVersion,
    Competition,
    CompetitionEntry,
    CompetitionRating,
    Match,
    Tournament,
    User,
)
from arena.store.ratings import RatingPoint

__all__ = [
    "LadderMatch",
    "RatingPoint",
    "competition_name",
    "rating_points",
    "recent_matches",
    "source_opened",
    "user_id_named",
    "version_names",
]

#: Entry statuses whose version was entered for good (it played, plays, or came late).
ENTERED = ("active", "superseded", "disqualified", "late")


def competition_name(store: Store, competition_id: int) -> str | None:
    """The name the competition ``competition_id`` is stored under (None: no such)."""
    with store.read() as session:
        name = session.scalar(select(Competition.name).where(Competition.id == competition_id))
        return None if name is None else str(name)


def _aware(value: datetime | None) -> datetime | None:
    return None if value is None else as_utc(value)


@dataclass(frozen=True, slots=True)
class LadderMatch:
    """A finished (or void) match of a competition's ladder or final."""

    id: int
    tournament: str
    labels: tuple[str, ...]
    seats: tuple[int, ...]
    status: str
    games: int
    finished: datetime | None


def rating_points(store: Store, competition_id: int, version_id: int) -> list[RatingPoint]:
    """The version's ladder rating history in the competition, oldest first."""
    with store.read() as session:
        found = session.scalars(
            select(CompetitionRating)
            .where(
                CompetitionRating.competition_id == competition_id,
                CompetitionRating.bot_version_id == version_id,
            )
            .order_by(CompetitionRating.time, CompetitionRating.id)
        ).all()
    return [RatingPoint(as_utc(p.time), p.rating, p.low, p.high, p.games, p.rank) for p in found]


def recent_matches(
    store: Store, tournament_ids: Sequence[int], limit: int = 20
) -> list[LadderMatch]:
    """The latest finished matches of these tournaments (a competition's ladder and
    final), the latest first."""
    with store.read() as session:
        found = session.execute(
            select(Match, Tournament.name)
            .join(Tournament, Tournament.id == Match.tournament_id)
            .where(Match.tournament_id.in_(list(tournament_ids)), Match.status == "done")
            .order_by(Match.finished.desc(), Match.id.desc())
            .limit(limit)
        ).all()
    return [
        LadderMatch(
            id=m.id,
            tournament=str(name),
            labels=tuple(str(label) for label in (m.labels or [])),
            seats=tuple(int(seat) for seat in m.seats),
            status=m.status,
            games=m.games,
            finished=_aware(m.finished),
        )
        for m, name in found
    ]


def version_names(store: Store, version_ids: Sequence[int]) -> dict[int, tuple[int, str, str, int]]:
    """Version id -> (its owner's user id, owner's name, bot's name, version number), for
    the stored ones among ``version_ids``."""
    with store.read() as session:
        found = session.execute(
            select(BotVersion.id, User.id, User.name, Bot.name, BotVersion.version)
            .join(Bot, Bot.id == BotVersion.bot_id)
            .join(User, User.id == Bot.owner_id)
            .where(BotVersion.id.in_(list(version_ids)))
        ).all()
    return {int(v): (int(u), str(owner), str(bot), int(n)) for v, u, owner, bot, n in found}


def user_id_named(store: Store, name: str) -> int | None:
    """The id of the user called ``name`` (compared by name key), or None."""
    with store.read() as session:
        return session.scalar(select(User.id).where(User.name_key == name_key(name)))


def source_opened(store: Store, owner: str, bot: str, version: int, now: datetime) -> bool:
    """Whether the version is an entry (one that played: active, superseded, disqualified;
    or late) of a competition whose sources became public: ``sources_public`` and its
    deadline passed before ``now``."""
    with store.read() as session:
        found = session.scalar(
            select(CompetitionEntry.id)
            .join(Competition, Competition.id == CompetitionEntry.competition_id)
            .join(BotVersion, BotVersion.id == CompetitionEntry.bot_version_id)
            .join(Bot, Bot.id == BotVersion.bot_id)
            .join(User, User.id == Bot.owner_id)
            .where(
                User.name == owner,
                Bot.name == bot,
                BotVersion.version == version,
                CompetitionEntry.status.in_(ENTERED),
                Competition.sources_public.is_(True),
                Competition.deadline <= now,
            )
            .limit(1)
        )
    return found is not None
