"""The branches table ("what if" from the web): the bot versions a branch may seat, a
branch stored under its account's cap, its worker's lease, its outcome, and the reads behind
its page.

Queries live in the store (docs/architecture.md): callers get plain values, frozen
dataclasses and detached rows, never a session. Each function is one transaction.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import and_, func, or_, select, update

from arena.store.db import Store, renew_lease
from arena.store.models import Bot, BotVersion, Match, Tournament, User
from arena.store.models import Branch as BranchRow
from arena.store.records import load_record

__all__ = [
    "BranchAdded",
    "BranchInputs",
    "VersionOwner",
    "add_branch",
    "branch_inputs",
    "branch_status",
    "branch_with_requester",
    "claim_branch",
    "due_branches",
    "finish_branch",
    "mark_branches_sent",
    "put_branch_back",
    "renew_branch",
    "seatable_versions",
    "versions_by_id",
]


@dataclass(frozen=True, slots=True)
class VersionOwner:
    """A stored bot version with its bot's and owner's names."""

    version_id: int
    owner: str
    name: str
    version: int
    owner_id: int
    #: Whether the bot's source is public.
    public: bool

    @property
    def label(self) -> str:
        """``owner/name@vN``."""
        return f"{self.owner}/{self.name}@v{self.version}"


def _versions() -> Any:
    return (
        select(BotVersion.id, User.name, Bot.name, BotVersion.version, User.id, Bot.source_public)
        .join(Bot, Bot.id == BotVersion.bot_id)
        .join(User, User.id == Bot.owner_id)
    )


def _owned(rows: Sequence[Any]) -> list[VersionOwner]:
    return [
        VersionOwner(int(vid), str(owner), str(name), int(number), int(owner_id), bool(public))
        for vid, owner, name, number, owner_id, public in rows
    ]


def seatable_versions(
    store: Store, *, account_id: int | None, reference_owner: str
) -> list[VersionOwner]:
    """Every stored bot version (``account_id`` None), or those of the account's bots, of
    ``reference_owner``'s and of bots whose source is public; in no order."""
    query = _versions()
    if account_id is not None:
        query = query.where(
            or_(
                Bot.owner_id == account_id,
                User.name == reference_owner,
                Bot.source_public.is_(True),
            )
        )
    with store.read() as session:
        return _owned(session.execute(query).all())


def versions_by_id(store: Store, version_ids: Collection[int]) -> dict[int, VersionOwner]:
    """The stored ones of these bot versions, by id."""
    with store.read() as session:
        rows = session.execute(_versions().where(BotVersion.id.in_(set(version_ids)))).all()
    return {v.version_id: v for v in _owned(rows)}


@dataclass(frozen=True, slots=True)
class BranchAdded:
    """What :func:`add_branch` did: the new branch's id (None: the cap was reached, nothing
    stored), and the account's branches waiting before it."""

    branch_id: int | None
    waiting: int


def add_branch(
    store: Store,
    *,
    account_id: int,
    max_waiting: int,
    match_id: int,
    game_index: int,
    round_number: int,
    turn: int,
    seats: Sequence[int],
    times: int,
    seed: int,
) -> BranchAdded:
    """Store a pending branch requested by ``account_id`` unless the account has
    ``max_waiting`` branches pending or running already. Counted and added in one
    transaction, the account's row locked (PostgreSQL; SQLite's write transactions are
    serialised): two requests at once cannot both pass the cap."""
    with store.write() as session:
        session.get(User, account_id, with_for_update=store.dialect == "postgresql")
        waiting = int(
            session.scalar(
                select(func.count())
                .select_from(BranchRow)
                .where(
                    BranchRow.requested_by == account_id,
                    BranchRow.status.in_(("pending", "running")),
                )
            )
            or 0
        )
        if waiting >= max_waiting:
            return BranchAdded(None, waiting)
        row = BranchRow(
            match_id=match_id,
            game_index=game_index,
            round_number=round_number,
            turn=turn,
            seats=list(seats),
            times=times,
            seed=seed,
            requested_by=account_id,
            status="pending",
        )
        session.add(row)
        session.flush()
        return BranchAdded(int(row.id), waiting)


def _stale(stale_before: datetime, now: datetime) -> Any:
    """Running, but its worker is gone: its lease ran out (or, a branch from before leases,
    it started before ``stale_before``)."""
    return and_(
        BranchRow.status == "running",
        or_(
            BranchRow.lease_expires < now,
            and_(BranchRow.lease_expires.is_(None), BranchRow.started < stale_before),
        ),
    )


def claim_branch(
    store: Store, branch_id: int, stale_before: datetime, now: datetime, lease_seconds: float
) -> bool:
    """Take the branch for this worker, with a lease: pending, or running with its worker
    gone (its lease ran out, or, from before leases, started before ``stale_before``)."""
    with store.write() as session:
        taken = session.execute(
            update(BranchRow)
            .where(
                BranchRow.id == branch_id,
                or_(BranchRow.status == "pending", _stale(stale_before, now)),
            )
            .values(
                status="running",
                started=now,
                message=None,
                lease_expires=now + timedelta(seconds=lease_seconds),
            )
        )
        return bool(getattr(taken, "rowcount", 0))


def renew_branch(store: Store, branch_id: int, *, lease_seconds: float) -> bool:
    """Extend a running branch's lease; return False once it is no longer running."""
    return renew_lease(store, BranchRow, branch_id, "running", lease_seconds=lease_seconds)


def finish_branch(
    store: Store,
    branch_id: int,
    status: str,
    *,
    message: str | None = None,
    records: list[dict[str, Any]] | None = None,
) -> None:
    """Store a running branch's outcome (nothing if it is no longer running)."""
    with store.write() as session:
        session.execute(
            update(BranchRow)
            .where(BranchRow.id == branch_id, BranchRow.status == "running")
            .values(status=status, message=message, records=records, finished=datetime.now(UTC))
        )


def put_branch_back(store: Store, branch_id: int) -> None:
    """A running branch is pending again, never sent (its worker was interrupted)."""
    with store.write() as session:
        session.execute(
            update(BranchRow)
            .where(BranchRow.id == branch_id, BranchRow.status == "running")
            .values(status="pending", started=None, sent=None, lease_expires=None)
        )


def branch_status(store: Store, branch_id: int) -> str | None:
    """The branch's status (None: no such branch)."""
    with store.read() as session:
        status: str | None = session.scalar(
            select(BranchRow.status).where(BranchRow.id == branch_id)
        )
        return status


@dataclass(frozen=True, slots=True)
class BranchInputs:
    """What a worker reads to play a branch."""

    #: The branch (detached: read its columns only).
    branch: BranchRow
    #: Its game's stored record (None: not stored).
    record: dict[str, Any] | None
    #: Its game's tournament's settings.
    settings: dict[str, Any] | None


def branch_inputs(store: Store, branch_id: int) -> BranchInputs | None:
    """The branch with its game's record and its tournament's settings, or None."""
    with store.read() as session:
        row = session.get(BranchRow, branch_id)
        if row is None:
            return None
        record = load_record(store, session, row.match_id, row.game_index)
        settings = session.scalar(
            select(Tournament.settings)
            .join(Match, Match.tournament_id == Tournament.id)
            .where(Match.id == row.match_id)
        )
    return BranchInputs(row, record, settings)


def due_branches(
    store: Store, *, sent_before: datetime, started_before: datetime, now: datetime
) -> list[int]:
    """Branches pending and never sent or sent before ``sent_before``, and running with
    their worker gone (lease run out before ``now``; from before leases, started before
    ``started_before``); by id."""
    with store.read() as session:
        return list(
            session.scalars(
                select(BranchRow.id)
                .where(
                    or_(
                        and_(
                            BranchRow.status == "pending",
                            or_(BranchRow.sent.is_(None), BranchRow.sent < sent_before),
                        ),
                        _stale(started_before, now),
                    )
                )
                .order_by(BranchRow.id)
            )
        )


def mark_branches_sent(store: Store, branch_ids: Sequence[int]) -> None:
    """Record that these branches' tasks were sent now."""
    if branch_ids:
        with store.write() as session:
            session.execute(
                update(BranchRow).where(BranchRow.id.in_(branch_ids)).values(sent=datetime.now(UTC))
            )


def branch_with_requester(store: Store, branch_id: int) -> tuple[BranchRow, str] | None:
    """The branch (detached) and its requester's name, or None."""
    with store.read() as session:
        found = session.execute(
            select(BranchRow, User.name)
            .join(User, User.id == BranchRow.requested_by)
            .where(BranchRow.id == branch_id)
        ).first()
    return None if found is None else (found[0], str(found[1]))
