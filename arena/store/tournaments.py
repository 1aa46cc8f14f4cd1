"""Reads of stored tournaments that the command line and the service show: a tournament's
counts, the list of tournaments, its entrants' labels, its matches' keys.

Queries live in the store (docs/architecture.md): callers get plain values, never a
session.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import func, select

from arena.store.db import Store
from arena.store.models import GameRecord, Match, RuleSet, Tournament, TournamentEntrant

__all__ = [
    "TournamentCounts",
    "count_tournaments",
    "entrant_labels",
    "get_tournament",
    "match_keys",
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
