"""Reads of stored tournaments that :mod:`arena.service.compares` needs: the tournament a
match belongs to, a tournament with its rule set's and owner's names, a tournament's
settings, the source hashes of bot versions, an account's compares not finished, and why a
tournament's last void match was voided.

Queries live in the store (docs/architecture.md): callers get detached rows and plain
values, never a session.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import bindparam, delete, func, select
from sqlalchemy.dialects import postgresql, sqlite

from arena.store.db import Store, as_utc
from arena.store.models import (
    BotVersion,
    CompareFollower,
    CompareReading,
    Match,
    RuleSet,
    Tournament,
    User,
    utcnow,
)
from arena.store.queue import FINISHED

__all__ = [
    "CompareLoad",
    "NamedTournament",
    "compare_load",
    "finished_among",
    "follow_until",
    "followed_until",
    "forget_follower",
    "keep_reading",
    "kept_reading",
    "kept_status",
    "match_ids",
    "named_tournament",
    "source_hashes",
    "tournament_of_match",
    "tournament_settings",
    "unfollowed_compares",
    "void_reason",
]


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


def match_ids(store: Store, tournament_id: int, status: str) -> list[int]:
    """The ids of the tournament's matches in this status (``"done"``, ``"pending"``, ...), in
    order."""
    with store.read() as session:
        return list(
            session.scalars(
                select(Match.id)
                .where(Match.tournament_id == tournament_id, Match.status == status)
                .order_by(Match.id)
            )
        )


def finished_among(store: Store, match_ids: Collection[int]) -> set[int]:
    """Those of the matches ``match_ids`` that are finished (done or void): what a compare's
    follower asks of its batches in flight, a few matches, between two looks."""
    if not match_ids:
        return set()
    with store.read() as session:
        return set(session.scalars(_FINISHED_AMONG, {"ids": sorted(set(match_ids))}))


_FINISHED_AMONG = select(Match.id).where(
    Match.id.in_(bindparam("ids", expanding=True)), Match.status.in_(FINISHED)
)


def tournament_settings(store: Store, tournament_id: int) -> dict[str, Any] | None:
    """The settings of the tournament with this id (``{}`` if it has none), or None (no such
    tournament)."""
    with store.read() as session:
        found = session.execute(
            select(Tournament.settings).where(Tournament.id == tournament_id)
        ).first()
    return None if found is None else dict(found[0] or {})


def void_reason(store: Store, tournament_id: int) -> str | None:
    """Why the tournament's match voided last was voided (its result's ``void``: e.g.
    "cancelled by alice"), or None (none is void, or it says nothing)."""
    with store.read() as session:
        result = session.scalar(
            select(Match.result)
            .where(Match.tournament_id == tournament_id, Match.status == "void")
            .order_by(Match.finished.desc(), Match.id.desc())
            .limit(1)
        )
    reason = result.get("void") if isinstance(result, dict) else None
    return reason if isinstance(reason, str) and reason else None


def source_hashes(store: Store, version_ids: Collection[int]) -> dict[int, str]:
    """The SHA-256 of each stored one of these bot versions' sources, by version id."""
    with store.read() as session:
        rows = session.execute(
            select(BotVersion.id, BotVersion.sha256).where(BotVersion.id.in_(set(version_ids)))
        ).all()
    return {int(version_id): str(digest) for version_id, digest in rows}


@dataclass(frozen=True, slots=True)
class CompareLoad:
    """An account's compares not finished (pending or running) and their matches not
    yet played (pending or running)."""

    compares: int
    matches: int


def compare_load(store: Store, owner_id: int, format: str) -> CompareLoad:
    """What the account ``owner_id`` has running of tournaments of ``format`` (through
    the tournaments' index by status, then the matches' by tournament and status)."""
    with store.read() as session:
        active = select(Tournament.id).where(
            Tournament.status.in_(("pending", "running")),
            Tournament.owner_id == owner_id,
            Tournament.format == format,
        )
        compares = session.scalar(select(func.count()).select_from(active.subquery())) or 0
        matches = session.scalar(
            select(func.count())
            .select_from(Match)
            .where(Match.tournament_id.in_(active), Match.status.in_(("pending", "running")))
        )
    return CompareLoad(int(compares), int(matches or 0))


def keep_reading(store: Store, tournament_id: int, done: int, status: str, reading: str) -> bool:
    """Keep ``reading`` (JSON text) as where the compare's test stands over its ``done`` done
    matches (``status``: the test's), unless one over as many or more is kept already (two
    workers storing a batch's last matches at once each read the test: the later reading,
    over both, stays) or the kept one has ended (any status but ``continue``: the first
    that ends the test stays); return whether it was kept."""
    insert = (postgresql if store.dialect == "postgresql" else sqlite).insert
    row = insert(CompareReading).values(
        tournament_id=tournament_id, done=done, status=status, reading=reading, computed=utcnow()
    )
    with store.write() as session:
        result = session.execute(
            row.on_conflict_do_update(
                index_elements=["tournament_id"],
                set_={
                    "done": done,
                    "status": status,
                    "reading": reading,
                    "computed": row.excluded.computed,
                },
                # (a decided test stays decided: a match stored just after the decision
                # may move the reading back, but its pending matches are void already)
                where=(CompareReading.done < done) & (CompareReading.status == "continue"),
            ).returning(CompareReading.tournament_id)  # (a row only if written: rowcount is
            # not the statement's on PostgreSQL through the ORM's session)
        )
        return result.first() is not None


def kept_status(store: Store, tournament_id: int) -> str | None:
    """The test's status in the compare's kept reading (:func:`keep_reading`), or None."""
    with store.read() as session:
        return session.scalar(
            select(CompareReading.status).where(CompareReading.tournament_id == tournament_id)
        )


def kept_reading(store: Store, tournament_id: int) -> tuple[int, str, str] | None:
    """The compare's kept reading (:func:`keep_reading`): the done matches it is over, the
    test's status and the reading's JSON text; None if none is kept."""
    with store.read() as session:
        row = session.execute(
            select(CompareReading.done, CompareReading.status, CompareReading.reading).where(
                CompareReading.tournament_id == tournament_id
            )
        ).first()
    return None if row is None else (int(row[0]), str(row[1]), str(row[2]))


def follow_until(store: Store, tournament_id: int, until: datetime) -> None:
    """Record that the compare is followed until ``until`` (a later time only: two followers'
    renewals never shorten it)."""
    insert = (postgresql if store.dialect == "postgresql" else sqlite).insert
    row = insert(CompareFollower).values(tournament_id=tournament_id, until=until)
    with store.write() as session:
        session.execute(
            row.on_conflict_do_update(
                index_elements=["tournament_id"],
                set_={"until": until},
                where=CompareFollower.until < until,
            )
        )


def followed_until(store: Store, tournament_id: int) -> datetime | None:
    """Until when the compare is held for its follower (None: it has none)."""
    with store.read() as session:
        until = session.scalar(
            select(CompareFollower.until).where(CompareFollower.tournament_id == tournament_id)
        )
    return None if until is None else as_utc(until)


def unfollowed_compares(store: Store, now: datetime) -> list[int]:
    """The tournaments, not finished, whose follower's time ran out before ``now``."""
    with store.read() as session:
        return list(
            session.scalars(
                select(CompareFollower.tournament_id)
                .join(Tournament, Tournament.id == CompareFollower.tournament_id)
                .where(CompareFollower.until < now, Tournament.status.not_in(("done", "cancelled")))
                .order_by(CompareFollower.tournament_id)
            )
        )


def forget_follower(store: Store, tournament_id: int) -> None:
    """Forget the compare's follower (it is stopped, or finished)."""
    with store.write() as session:
        session.execute(
            delete(CompareFollower).where(CompareFollower.tournament_id == tournament_id)
        )
