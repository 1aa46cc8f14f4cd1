"""Retention's queries (:mod:`arena.service.retention`): the done matches whose game records
a deployment's limits no longer keep, their records deleted in short transactions, and
what the readers ask of a pruned game.

Pruning deletes rows of ``game_records`` and stamps the match's ``records_pruned``; the
match's result (places, points, luck a game) and every rating stay. The records of a
competition's finals (the current one and those a rerun replaced), of assignments'
gauntlets and of games a branch was taken from are never candidates.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, and_, delete, func, or_, select, update
from sqlalchemy.orm import Session

from arena.store.db import Store
from arena.store.models import (
    Branch,
    Competition,
    GameRecord,
    Match,
    SubmissionTest,
    Tournament,
)

__all__ = [
    "Prunable",
    "crowded_tournaments",
    "newest_beyond",
    "older_than",
    "prune_matches",
    "pruned_count",
]


@dataclass(frozen=True, slots=True)
class Prunable:
    """A done match whose records may go: its id and its number of games."""

    match_id: int
    games: int


def _kept_forever(session: Session) -> list[ColumnElement[bool]]:
    """The conditions a match meets unless its records are kept whatever the limits: not a
    final's (current or replaced: ``earlier_finals`` names them), not an assignment's
    gauntlet's, no branch taken from one of its games."""
    earlier: set[str] = set()
    for finals in session.scalars(
        select(Competition.earlier_finals).where(Competition.earlier_finals.is_not(None))
    ):
        earlier |= {str(f["tournament"]) for f in finals or () if f.get("tournament")}
    conditions: list[ColumnElement[bool]] = [
        Match.tournament_id.not_in(
            select(Competition.final_id).where(Competition.final_id.is_not(None))
        ),
        Match.tournament_id.not_in(select(SubmissionTest.tournament_id)),
        Match.id.not_in(select(Branch.match_id)),
    ]
    if earlier:
        conditions.append(
            Match.tournament_id.not_in(select(Tournament.id).where(Tournament.name.in_(earlier)))
        )
    return conditions


def _unpruned(session: Session) -> list[ColumnElement[bool]]:
    return [Match.status == "done", Match.records_pruned.is_(None), *_kept_forever(session)]


def older_than(store: Store, before: datetime, limit: int) -> list[Prunable]:
    """At most ``limit`` done matches finished before ``before`` whose records are still
    stored and not kept forever, the oldest first (through ``ix_matches_unpruned``)."""
    with store.read() as session:
        rows = session.execute(
            select(Match.id, Match.games)
            .where(*_unpruned(session), Match.finished < before)
            .order_by(Match.finished, Match.id)
            .limit(limit)
        ).all()
    return [Prunable(match_id, games) for match_id, games in rows]


def crowded_tournaments(store: Store, keep_games: int, limit: int) -> list[int]:
    """At most ``limit`` tournaments, the most crowded first, whose done matches with
    records may hold more than the newest ``keep_games`` games and one match more: those
    where :func:`newest_beyond` may find something (every match of a tournament usually
    plays as many games, and then it does)."""
    with store.read() as session:
        rows = session.scalars(
            select(Match.tournament_id)
            .where(*_unpruned(session))
            .group_by(Match.tournament_id)
            .having(func.sum(Match.games) - func.min(Match.games) >= keep_games)
            .order_by(func.sum(Match.games).desc(), Match.tournament_id)
            .limit(limit)
        )
        return list(rows)


def newest_beyond(store: Store, tournament_id: int, keep_games: int, limit: int) -> list[Prunable]:
    """At most ``limit`` done matches of the tournament with records, not kept forever,
    older than its newest done matches that hold ``keep_games`` games together (a match
    crossing the count is kept whole), the oldest first."""
    with store.read() as session:
        newest = session.execute(
            select(Match.id, Match.finished, Match.games)
            .where(Match.tournament_id == tournament_id, Match.status == "done")
            .order_by(Match.finished.desc(), Match.id.desc())
            .limit(keep_games)  # a match holds one game at least
        ).all()
        held = 0
        edge: Any = None
        for row in newest:
            held += row.games
            if held >= keep_games:
                edge = row
                break
        if edge is None:
            return []
        older = or_(
            Match.finished < edge.finished,
            and_(Match.finished == edge.finished, Match.id < edge.id),
        )
        rows = session.execute(
            select(Match.id, Match.games)
            .where(Match.tournament_id == tournament_id, *_unpruned(session), older)
            .order_by(Match.finished, Match.id)
            .limit(limit)
        ).all()
    return [Prunable(match_id, games) for match_id, games in rows]


def prune_matches(store: Store, match_ids: Sequence[int], now: datetime) -> int:
    """Delete the game records of the done matches ``match_ids`` and stamp their
    ``records_pruned`` with ``now`` (one that is stamped already keeps its time), in one
    transaction. Return how many records were deleted (0 when another process was first)."""
    if not match_ids:
        return 0
    ids = sorted(set(match_ids))
    with store.write() as session:
        deleted = session.execute(delete(GameRecord).where(GameRecord.match_id.in_(ids)))
        session.execute(
            update(Match)
            .where(Match.id.in_(ids), Match.status == "done", Match.records_pruned.is_(None))
            .values(records_pruned=now)
        )
    return int(deleted.rowcount)  # type: ignore[attr-defined]


def pruned_count(store: Store, tournament_ids: Collection[int]) -> int:
    """How many done matches of these tournaments had their records pruned."""
    if not tournament_ids:
        return 0
    with store.read() as session:
        count = session.scalar(
            select(func.count())
            .select_from(Match)
            .where(
                Match.tournament_id.in_(sorted(set(tournament_ids))),
                Match.status == "done",
                Match.records_pruned.is_not(None),
            )
        )
    return int(count or 0)
