"""Reads of stored tournaments that :mod:`arena.service.compares` needs: the tournament a
match belongs to, and a tournament with its rule set's and owner's names.

Queries live in the store (docs/architecture.md): callers get detached rows and plain
values, never a session.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import select

from arena.store.db import Store
from arena.store.models import Match, RuleSet, Tournament, User

__all__ = ["NamedTournament", "named_tournament", "tournament_of_match"]


@dataclass(frozen=True, slots=True)
class NamedTournament:
    """A tournament (detached: read its columns only) with the names its page shows."""

    tournament: Tournament
    #: The rule set's name.
    rules: str
    #: The owner's name (None: the operator's).
    owner: str | None


def tournament_of_match(store: Store, match_id: int) -> Tournament | None:
    """The tournament of the match with this id (detached), or None (no such match)."""
    with store.read() as session:
        return session.scalar(
            select(Tournament)
            .join(Match, Match.tournament_id == Tournament.id)
            .where(Match.id == match_id)
        )


def named_tournament(store: Store, name: str) -> NamedTournament | None:
    """The tournament called ``name`` with its rule set's and owner's names, or None."""
    with store.read() as session:
        found = session.execute(
            select(Tournament, RuleSet.name, User.name)
            .join(RuleSet, RuleSet.id == Tournament.rule_set_id)
            .outerjoin(User, User.id == Tournament.owner_id)
            .where(Tournament.name == name)
        ).first()
    if found is None:
        return None
    tournament, rules, owner = found
    return NamedTournament(tournament, rules, owner)
