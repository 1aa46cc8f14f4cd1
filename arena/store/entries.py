"""An entrant's versions in a competition beyond their entries' life (arena.store.
competitions, which also finds a source entered already): placement
(when a version had played its placement games, and the later version that displaces the
active one then), the placement times of recent entries, and the versions each entrant
chose for the final.

Queries live in the store (docs/architecture.md): callers get frozen values, never a
session. The functions taking a session run in the caller's transaction, the
competition's row locked (arena.store.competitions.lock_competition).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import datetime

from sqlalchemy import delete, select, update
from sqlalchemy.orm import Session

from arena.store.competitions import lock_competition, supersede
from arena.store.db import Store, as_utc
from arena.store.models import CompetitionEntry, FinalChoice

__all__ = [
    "final_choices",
    "leave_unplaced",
    "mark_placed",
    "placement_times",
    "promote_placed",
    "set_final_choices",
]


# --- placement -------------------------------------------------------------------------------


def mark_placed(
    session: Session, competition_id: int, versions: Collection[int], now: datetime
) -> None:
    """Mark the entries of these versions (those that played) placed at ``now``, once."""
    if versions:
        session.execute(
            update(CompetitionEntry)
            .where(
                CompetitionEntry.competition_id == competition_id,
                CompetitionEntry.bot_version_id.in_(sorted(versions)),
                CompetitionEntry.placed.is_(None),
                CompetitionEntry.status.in_(("active", "placing", "superseded", "disqualified")),
            )
            .values(placed=now)
        )


def promote_placed(session: Session, competition_id: int, ladder_id: int, now: datetime) -> int:
    """Make each ``placing`` entry that is placed the user's ``active`` one, the active
    one before it superseded (its pending ladder matches void); return how many."""
    ready = session.scalars(
        select(CompetitionEntry).where(
            CompetitionEntry.competition_id == competition_id,
            CompetitionEntry.status == "placing",
            CompetitionEntry.placed.is_not(None),
        )
    ).all()
    for entry in ready:
        for other in session.scalars(
            select(CompetitionEntry).where(
                CompetitionEntry.competition_id == competition_id,
                CompetitionEntry.user_id == entry.user_id,
                CompetitionEntry.status == "active",
            )
        ).all():
            supersede(session, ladder_id, other, f"version {entry.bot_version_id}", now)
        entry.status = "active"
    return len(ready)


def leave_unplaced(session: Session, competition_id: int, reasons: dict[int, str]) -> None:
    """Give the entries of versions left unplaced when the ladder closed their reason (by
    version id): they stay out of the final, and their entrant reads why."""
    for version, reason in reasons.items():
        session.execute(
            update(CompetitionEntry)
            .where(
                CompetitionEntry.competition_id == competition_id,
                CompetitionEntry.bot_version_id == version,
                CompetitionEntry.status.in_(("active", "placing")),
                CompetitionEntry.placed.is_(None),
            )
            .values(reason=reason)
        )


def placement_times(store: Store, competition_id: int, limit: int = 20) -> list[float]:
    """Seconds from acceptance to placement of the competition's latest ``limit`` placed
    entries, the latest placed first."""
    with store.read() as session:
        rows = session.execute(
            select(CompetitionEntry.accepted, CompetitionEntry.placed)
            .where(
                CompetitionEntry.competition_id == competition_id,
                CompetitionEntry.placed.is_not(None),
                CompetitionEntry.accepted.is_not(None),
            )
            .order_by(CompetitionEntry.placed.desc(), CompetitionEntry.id.desc())
            .limit(limit)
        ).all()
    return [
        max(0.0, (as_utc(placed) - as_utc(accepted)).total_seconds())
        for accepted, placed in rows
        if accepted is not None and placed is not None
    ]


# --- the final's choice ----------------------------------------------------------------------


def final_choices(store: Store, competition_id: int) -> dict[int, list[int]]:
    """The versions each user chose for the competition's final (by user id), in the order
    chosen; users who chose none are absent."""
    with store.read() as session:
        rows = session.execute(
            select(FinalChoice.user_id, FinalChoice.bot_version_id)
            .where(FinalChoice.competition_id == competition_id)
            .order_by(FinalChoice.id)
        ).all()
    chosen: dict[int, list[int]] = {}
    for user, version in rows:
        chosen.setdefault(int(user), []).append(int(version))
    return chosen


def set_final_choices(
    store: Store, competition_id: int, user_id: int, versions: Sequence[int]
) -> None:
    """Replace the user's choice for the competition's final by ``versions`` (none: the
    default ones go), one transaction under the competition's lock."""
    with store.write() as session:
        lock_competition(store, session, competition_id)
        session.execute(
            delete(FinalChoice).where(
                FinalChoice.competition_id == competition_id, FinalChoice.user_id == user_id
            )
        )
        session.add_all(
            FinalChoice(competition_id=competition_id, user_id=user_id, bot_version_id=v)
            for v in versions
        )
