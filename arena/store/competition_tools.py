"""The organiser's tools' tables (arena.service.competition_tools): a competition's
announcements and action log, the settings that change after creation, the ladder's pause,
an entrant's withdrawal, an account's age.

Each write locks the competition's row first (:func:`arena.store.competitions.
lock_competition`), re-reads what it decides on, and writes its line of the action log in
the same transaction. The service decides who may do what; these functions keep the rows
consistent.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from arena.store.competitions import lock_competition
from arena.store.db import Store, as_utc
from arena.store.models import (
    Competition,
    CompetitionAction,
    CompetitionAnnouncement,
    CompetitionEntry,
    Match,
    User,
)

__all__ = [
    "WITHDRAWABLE",
    "ActionRow",
    "AnnouncementRow",
    "Who",
    "action_rows",
    "add_announcement",
    "announcement_rows",
    "log_action",
    "set_paused",
    "update_settings",
    "user_created",
    "withdraw_entries",
]

#: The entry statuses a withdrawal ends (those that play, may play, or played).
WITHDRAWABLE = ("pending", "active", "superseded", "late")
#: The settings :func:`update_settings` may change: the competition's columns.
SETTINGS = frozenset(
    {"deadline", "description", "daily_submissions", "final_top", "final_confidence",
     "final_max_games", "min_account_days"}
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Who:
    """Who acts, as the log keeps it: an account's id (None: the operator) and its name."""

    id: int | None
    name: str


@dataclass(frozen=True, slots=True)
class ActionRow:
    """A line of the action log: ``changes`` as ``{"what", "from", "to"}`` objects."""

    id: int
    actor: str
    action: str
    changes: list[dict[str, Any]]
    created: datetime


@dataclass(frozen=True, slots=True)
class AnnouncementRow:
    """An announcement: its author's name, its text, when it was posted."""

    id: int
    author: str
    body: str
    created: datetime


def _now(now: datetime | None) -> datetime:
    return datetime.now(UTC) if now is None else as_utc(now)


def _log(
    session: Session,
    competition_id: int,
    who: Who,
    action: str,
    changes: Sequence[dict[str, Any]],
    now: datetime,
) -> None:
    line = CompetitionAction(
        competition_id=competition_id, actor_id=who.id, actor=who.name[:100],
        action=action, changes=list(changes), created=now,
    )  # fmt: skip
    session.add(line)


def log_action(
    store: Store,
    competition_id: int,
    who: Who,
    action: str,
    changes: Sequence[dict[str, Any]],
    now: datetime | None = None,
) -> None:
    """Add a line to the competition's action log (an action made in a transaction of its
    own: the deadline moved, a disqualification, the entries closed, the final rerun)."""
    with store.write() as session:
        _log(session, competition_id, who, action, changes, _now(now))


def action_rows(store: Store, competition_id: int) -> list[ActionRow]:
    """The competition's action log, the latest first."""
    with store.read() as session:
        found = session.scalars(
            select(CompetitionAction)
            .where(CompetitionAction.competition_id == competition_id)
            .order_by(CompetitionAction.created.desc(), CompetitionAction.id.desc())
        ).all()
        return [
            ActionRow(a.id, a.actor, a.action, list(a.changes or []), as_utc(a.created))
            for a in found
        ]


def add_announcement(store: Store, competition_id: int, who: Who, body: str, now: datetime) -> int:
    """Store an announcement of the competition; return its id."""
    with store.write() as session:
        announcement = CompetitionAnnouncement(
            competition_id=competition_id, author_id=who.id, author=who.name[:100], body=body,
            created=now,
        )  # fmt: skip
        session.add(announcement)
        session.flush()
        return announcement.id


def announcement_rows(store: Store, competition_id: int) -> list[AnnouncementRow]:
    """The competition's announcements, the latest first."""
    with store.read() as session:
        found = session.scalars(
            select(CompetitionAnnouncement)
            .where(CompetitionAnnouncement.competition_id == competition_id)
            .order_by(CompetitionAnnouncement.created.desc(), CompetitionAnnouncement.id.desc())
        ).all()
        return [AnnouncementRow(a.id, a.author, a.body, as_utc(a.created)) for a in found]


def _still_open(competition: Competition, now: datetime) -> bool:
    return competition.status == "open" and now < as_utc(competition.deadline)


def update_settings(
    store: Store,
    competition_id: int,
    values: dict[str, Any],
    who: Who,
    changes: Sequence[dict[str, Any]],
    *,
    open_only: bool,
    now: datetime,
) -> bool:
    """Set these settings (:data:`SETTINGS`) of the competition and log ``changes``, in one
    transaction; with ``open_only``, only while it is open (status ``open``, its deadline
    ahead). Return whether it was changed."""
    unknown = set(values) - SETTINGS
    if unknown:
        raise ValueError(f"not a setting that changes: {sorted(unknown)}")
    with store.write() as session:
        competition = lock_competition(store, session, competition_id)
        if open_only and not _still_open(competition, now):
            return False
        for key, value in values.items():
            setattr(competition, key, value)
        _log(session, competition_id, who, "settings", changes, now)
    return True


def _void_versions(
    session: Session,
    tournament_ids: Collection[int],
    versions: Collection[int] | None,
    reason: str,
    now: datetime,
) -> int:
    """Void the pending matches of these tournaments that seat one of ``versions`` (None:
    every pending match), in the caller's transaction; return how many."""
    found = session.scalars(
        select(Match).where(
            Match.tournament_id.in_(list(tournament_ids)), Match.status == "pending"
        )
    )
    voided = 0
    for match in found:
        if versions is None or set(versions) & {int(seat) for seat in match.seats}:
            match.status, match.lease_expires, match.finished = "void", None, now
            match.result = {"void": reason, "worker": None}
            voided += 1
    return voided


def set_paused(
    store: Store, competition_id: int, paused: bool, who: Who, now: datetime
) -> int | None:
    """Pause the competition's ladder (its pending ladder matches void: no new one is
    added while paused, arena.service.clock) or resume it, and log it; return how many
    matches were voided, or None when nothing changed (closed, or paused already / not
    paused)."""
    with store.write() as session:
        competition = lock_competition(store, session, competition_id)
        if not _still_open(competition, now) or (competition.ladder_paused is not None) == paused:
            return None
        competition.ladder_paused = now if paused else None
        voided = 0
        if paused:
            voided = _void_versions(session, [competition.ladder_id], None, "ladder paused", now)
        state = ("running", "paused") if paused else ("paused", "running")
        change = {"what": "ladder", "from": state[0], "to": state[1]}
        _log(session, competition_id, who, "pause" if paused else "resume", [change], now)
    return voided


def withdraw_entries(
    store: Store, competition_id: int, user_id: int, reason: str, who: Who, now: datetime
) -> list[int] | None:
    """Withdraw the user from the competition: their entries that play, may play or played
    (:data:`WITHDRAWABLE`) become ``withdrawn`` with ``reason``, and the pending ladder and
    final matches of their versions are void; logged. Return the versions withdrawn, or
    None while the competition's final table is published (nothing changed)."""
    with store.write() as session:
        competition = lock_competition(store, session, competition_id)
        if competition.status == "done":
            return None
        entries = session.scalars(
            select(CompetitionEntry).where(
                CompetitionEntry.competition_id == competition_id,
                CompetitionEntry.user_id == user_id,
                CompetitionEntry.status.in_(WITHDRAWABLE),
            )
        ).all()
        versions = sorted({e.bot_version_id for e in entries if e.bot_version_id is not None})
        for entry in entries:
            entry.status, entry.reason = "withdrawn", reason
        tournaments = [competition.ladder_id]
        if competition.final_id is not None:
            tournaments.append(competition.final_id)
        if versions:
            _void_versions(session, tournaments, versions, "withdrawn by its entrant", now)
        if entries:
            change = {"what": "entries", "from": f"{len(entries)} entered", "to": "withdrawn"}
            _log(session, competition_id, who, "withdraw", [change], now)
    return versions


def user_created(store: Store, user_id: int) -> datetime | None:
    """When the account was made (None: no such account)."""
    with store.read() as session:
        created = session.scalar(select(User.created).where(User.id == user_id))
    return None if created is None else as_utc(created)
