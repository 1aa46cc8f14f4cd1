"""Reads of stored tournaments that the command line and the service show: a tournament's
counts, the list of tournaments, its entrants' labels, its matches' keys, the matches being
played (what the live pages list and watch).

Queries live in the store (docs/architecture.md): callers get plain values, never a
session.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, or_, select

from arena.store.db import Store
from arena.store.models import (
    Competition,
    GameRecord,
    Match,
    RuleSet,
    Tournament,
    TournamentEntrant,
)

__all__ = [
    "LiveMatch",
    "TournamentCounts",
    "count_tournaments",
    "entrant_labels",
    "get_tournament",
    "live_match",
    "match_keys",
    "running_matches",
    "tournament_counts",
]


@dataclass(frozen=True, slots=True)
class TournamentCounts:
    """What ``arena tournament status`` counts of a tournament beside its matches."""

    #: The rule set's name.
    rules: str
    entrants: int
    #: Game records stored.
    records: int
    #: Matches claimed more than once (a worker died, or the harness failed).
    retried: int
    #: Running matches per lease owner (a worker's name), by owner.
    leases: tuple[tuple[str, int], ...]


def get_tournament(store: Store, tournament_id: int) -> Tournament | None:
    """The tournament with this id (detached: read its columns only), or None."""
    with store.read() as session:
        return session.get(Tournament, tournament_id)


def tournament_counts(store: Store, tournament: Tournament) -> TournamentCounts:
    """The rule set's name, entrants, records, retried matches and leases of ``tournament``."""
    with store.read() as session:
        rules = session.scalar(select(RuleSet.name).where(RuleSet.id == tournament.rule_set_id))
        entrants = session.scalar(
            select(func.count())
            .select_from(TournamentEntrant)
            .where(TournamentEntrant.tournament_id == tournament.id)
        )
        records = session.scalar(
            select(func.count())
            .select_from(GameRecord)
            .join(Match, Match.id == GameRecord.match_id)
            .where(Match.tournament_id == tournament.id)
        )
        retried = session.scalar(
            select(func.count())
            .select_from(Match)
            .where(Match.tournament_id == tournament.id, Match.attempts > 1)
        )
        leases = session.execute(
            select(Match.lease_owner, func.count())
            .where(Match.tournament_id == tournament.id, Match.status == "running")
            .group_by(Match.lease_owner)
            .order_by(Match.lease_owner)
        ).all()
    return TournamentCounts(
        rules=rules or "",
        entrants=entrants or 0,
        records=records or 0,
        retried=retried or 0,
        leases=tuple((str(owner), int(count)) for owner, count in leases),
    )


def count_tournaments(store: Store) -> int:
    """How many tournaments are stored (of every kind: compares and placements too)."""
    with store.read() as session:
        return int(session.scalar(select(func.count()).select_from(Tournament)) or 0)


def entrant_labels(store: Store, tournament_id: int) -> list[str]:
    """The labels of the tournament's entrants, sorted."""
    with store.read() as session:
        return list(
            session.scalars(
                select(TournamentEntrant.label)
                .where(TournamentEntrant.tournament_id == tournament_id)
                .order_by(TournamentEntrant.label)
            )
        )


def match_keys(store: Store, tournament_id: int) -> list[tuple[int, str]]:
    """Each match of the tournament as (id, key), by id."""
    with store.read() as session:
        rows = session.execute(
            select(Match.id, Match.key)
            .where(Match.tournament_id == tournament_id)
            .order_by(Match.id)
        ).all()
    return [(int(match_id), str(key)) for match_id, key in rows]


@dataclass(frozen=True, slots=True)
class LiveMatch:
    """A stored match as the live pages show it: its tournament (and the competition whose
    ladder or final that is, or None), its seats' labels and bot versions, its status."""

    id: int
    tournament_id: int
    tournament: str
    competition: str | None
    key: str
    labels: tuple[str, ...]
    seats: tuple[int, ...]
    games: int
    status: str


def _live_query() -> Any:
    return (
        select(Match, Tournament.name, Competition.name)
        .join(Tournament, Tournament.id == Match.tournament_id)
        .outerjoin(
            Competition,
            or_(Competition.ladder_id == Tournament.id, Competition.final_id == Tournament.id),
        )
    )


def _live(match: Match, tournament: str, competition: str | None) -> LiveMatch:
    seats = tuple(int(seat) for seat in match.seats)
    labels = tuple(str(label) for label in match.labels or [f"v{seat}" for seat in seats])
    return LiveMatch(
        match.id, match.tournament_id, tournament, competition, match.key, labels, seats,
        match.games, match.status,
    )  # fmt: skip


def live_match(store: Store, match_id: int) -> LiveMatch | None:
    """Stored match ``match_id`` (whatever its status), or None."""
    with store.read() as session:
        row = session.execute(_live_query().where(Match.id == match_id)).first()
    return None if row is None else _live(*row)


def running_matches(store: Store, tournament_ids: Sequence[int], limit: int) -> list[LiveMatch]:
    """The matches of these tournaments being played now (status running), the oldest
    first, at most ``limit``."""
    with store.read() as session:
        rows = session.execute(
            _live_query()
            .where(Match.tournament_id.in_(list(tournament_ids)), Match.status == "running")
            .order_by(Match.id)
            .limit(limit)
        ).all()
    return [_live(*row) for row in rows]
