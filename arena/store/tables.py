"""The tables (games people play in the browser against bots): one stored under its bounds,
an invited person seated, a person's open tables, its worker's lease, its outcome, idle
ones closed, a bot's record against people.

Queries live in the store (docs/architecture.md): callers get plain values and frozen
dataclasses, never a session. Each function is one transaction.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import bindparam, func, or_, select, update
from sqlalchemy.orm import Session

from arena.store.db import Store, as_utc, renew_lease
from arena.store.models import BotVersion, GameTable, RuleSet, TableSeat, User

__all__ = [
    "OPEN_STATUSES",
    "SeatRow",
    "TableAdded",
    "TableRow",
    "add_table",
    "claim_table",
    "close_idle_tables",
    "finish_table",
    "mark_table_sent",
    "open_tables_of",
    "renew_table",
    "seat_invited",
    "table_row",
    "tables_against_people",
]

#: The statuses of a table still open: it counts against the bounds.
OPEN_STATUSES = ("waiting", "pending", "running")


@dataclass(frozen=True, slots=True)
class SeatRow:
    """One seat: a person (``user_id``, None while an invited seat is empty) or a bot
    version (``version_id``), and its name in the record."""

    seat: int
    human: bool
    user_id: int | None
    version_id: int | None
    name: str | None


@dataclass(frozen=True, slots=True)
class TableRow:
    """A stored table with its seats, its rule set's name and parameters."""

    id: int
    owner_id: int
    owner: str
    rules_name: str
    rules_params: dict[str, Any]
    players: int
    teams: bool
    seed: int
    move_seconds: float
    channel: str
    invite: str | None
    status: str
    message: str | None
    record: dict[str, Any] | None
    winners: tuple[int, ...] | None
    created: datetime
    started: datetime | None
    finished: datetime | None
    seats: tuple[SeatRow, ...]


@dataclass(frozen=True, slots=True)
class TableAdded:
    """What :func:`add_table` did: the new table's id, or None with the bound that was full
    (``account``, ``address`` or ``total``) and how many tables it holds; ``repeated``: the
    client's key was sent before, and ``table_id`` is that first table's."""

    table_id: int | None
    full: str | None = None
    count: int = 0
    repeated: bool = False


def add_table(
    store: Store,
    *,
    owner_id: int,
    address: str,
    rule_set_id: int,
    players: int,
    teams: bool,
    seed: int,
    move_seconds: float,
    seats: Sequence[SeatRow],
    channel: str,
    invite: str | None,
    bounds: tuple[int, int, int],
    client_key: str | None = None,
) -> TableAdded:
    """Store a table (``waiting`` while a person's seat is empty, else ``pending``) unless
    one of ``bounds`` (open tables per account, per address, in all) is reached: counted and
    added in one transaction, the account's row locked (PostgreSQL; SQLite's write
    transactions are serialised), so one account's requests at once cannot pass its bound
    (the total may be passed by as many requests as arrive at the same instant). A
    ``client_key`` the owner sent before adds nothing: its table is returned (``repeated``),
    looked up under the same lock, so of two requests at once with one key one table is
    stored (the key is unique for an owner too)."""
    per_account, per_address, total = bounds
    with store.write() as session:  # short: SQLite has one writer at a time (docs/tables.md)
        if store.dialect == "postgresql":
            session.get(User, owner_id, with_for_update=True)
        if client_key is not None:
            first = session.scalar(
                select(GameTable.id).where(
                    GameTable.owner_id == owner_id, GameTable.client_key == client_key
                )
            )
            if first is not None:
                return TableAdded(int(first), repeated=True)
        counts = session.execute(  # the three bounds' counts in one statement
            select(
                func.count().filter(GameTable.owner_id == owner_id),
                func.count().filter(GameTable.address == address),
                func.count(),
            ).where(GameTable.status.in_(OPEN_STATUSES))
        ).one()
        for bound, limit, count in zip(
            ("account", "address", "total"), (per_account, per_address, total), counts, strict=True
        ):
            if count >= limit:
                return TableAdded(None, bound, int(count))
        empty = any(s.human and s.user_id is None for s in seats)
        row = GameTable(
            owner_id=owner_id,
            address=address,
            rule_set_id=rule_set_id,
            players=players,
            teams=teams,
            seed=seed,
            move_seconds=move_seconds,
            channel=channel,
            invite=invite,
            status="waiting" if empty else "pending",
            client_key=client_key,
        )
        session.add(row)
        session.flush()
        for seat in seats:
            session.add(
                TableSeat(
                    table_id=row.id,
                    seat=seat.seat,
                    human=seat.human,
                    user_id=seat.user_id,
                    bot_version_id=seat.version_id,
                    name=seat.name,
                )
            )
        return TableAdded(int(row.id))


def table_row(store: Store, table_id: int) -> TableRow | None:
    """The table with its seats, or None."""
    with store.read() as session:
        rows = _table_rows(session, _TABLE, {"table": table_id})
        return rows[0] if rows else None


def open_tables_of(store: Store, user_id: int) -> list[TableRow]:
    """The open tables (:data:`OPEN_STATUSES`) where the user has a seat (opened by them, or
    taken by invitation), newest first."""
    with store.read() as session:
        return _table_rows(session, _OPEN_TABLES_OF, {"user": user_id})


# The statements of :func:`table_row` and :func:`open_tables_of` (built once: a table's
# page and each of its moves read it, and building them cost more than the reads).
_TABLES = (
    select(GameTable, RuleSet.name, RuleSet.params, User.name)
    .join(RuleSet, RuleSet.id == GameTable.rule_set_id)
    .join(User, User.id == GameTable.owner_id)
    .order_by(GameTable.id.desc())
)
_TABLE = _TABLES.where(GameTable.id == bindparam("table"))
_OPEN_TABLES_OF = _TABLES.where(
    GameTable.id.in_(select(TableSeat.table_id).where(TableSeat.user_id == bindparam("user"))),
    GameTable.status.in_(OPEN_STATUSES),
)
_SEATS = (
    select(TableSeat)
    .where(TableSeat.table_id.in_(bindparam("tables", expanding=True)))
    .order_by(TableSeat.seat)
)


def _table_rows(session: Session, tables: Any, parameters: dict[str, int]) -> list[TableRow]:
    """The tables the statement ``tables`` finds (with ``parameters``) with their seats,
    newest first."""
    found = session.execute(tables, parameters).all()
    seats: dict[int, list[SeatRow]] = {row.id: [] for row, *_ in found}
    for s in session.scalars(_SEATS, {"tables": list(seats)}):
        seats[s.table_id].append(SeatRow(s.seat, s.human, s.user_id, s.bot_version_id, s.name))
    return [
        TableRow(
            id=row.id,
            owner_id=row.owner_id,
            owner=owner,
            rules_name=rules_name,
            rules_params=dict(params),
            players=row.players,
            teams=row.teams,
            seed=int(row.seed),
            move_seconds=row.move_seconds,
            channel=row.channel,
            invite=row.invite,
            status=row.status,
            message=row.message,
            record=row.record,
            winners=None if row.winners is None else tuple(int(s) for s in row.winners),
            created=as_utc(row.created),
            started=None if row.started is None else as_utc(row.started),
            finished=None if row.finished is None else as_utc(row.finished),
            seats=tuple(seats[row.id]),
        )
        for row, rules_name, params, owner in found
    ]


def seat_invited(store: Store, table_id: int, invite: str, user_id: int, name: str) -> int | None:
    """Seat ``user_id`` (named ``name``) in the table's first empty person's seat, if
    ``invite`` is its invitation and it waits; the table is then ``pending`` once no seat is
    empty. Return the seat, or None (a wrong code, no empty seat, the table not waiting)."""
    with store.write() as session:
        table = session.get(GameTable, table_id, with_for_update=store.dialect == "postgresql")
        if table is None or table.invite != invite or table.status != "waiting":
            return None
        empty = session.scalars(
            select(TableSeat)
            .where(TableSeat.table_id == table_id, TableSeat.human, TableSeat.user_id.is_(None))
            .order_by(TableSeat.seat)
        ).all()
        if not empty:
            return None
        empty[0].user_id, empty[0].name = user_id, name
        if len(empty) == 1:
            table.status = "pending"
        return int(empty[0].seat)


def mark_table_sent(store: Store, table_id: int) -> None:
    """Record that the table's task went to the broker."""
    with store.write() as session:
        session.execute(
            update(GameTable).where(GameTable.id == table_id).values(sent=datetime.now(UTC))
        )


def claim_table(store: Store, table_id: int, now: datetime, lease_seconds: float) -> bool:
    """Take a pending table for this worker, with a lease (a table is played once: one
    whose worker died is closed by :func:`close_idle_tables`, never played again)."""
    with store.write() as session:
        taken = session.execute(
            update(GameTable)
            .where(GameTable.id == table_id, GameTable.status == "pending")
            .values(
                status="running",
                started=now,
                lease_expires=now + timedelta(seconds=lease_seconds),
            )
        )
        return bool(getattr(taken, "rowcount", 0))


def renew_table(store: Store, table_id: int, *, lease_seconds: float) -> bool:
    """Extend a running table's lease; False once it no longer runs."""
    return renew_lease(store, GameTable, table_id, "running", lease_seconds=lease_seconds)


def finish_table(
    store: Store,
    table_id: int,
    status: str,
    *,
    record: dict[str, Any] | None = None,
    winners: Sequence[int] | None = None,
    message: str | None = None,
) -> None:
    """A running table is over: ``done`` with its record and winners, or ``failed``."""
    with store.write() as session:
        session.execute(
            update(GameTable)
            .where(GameTable.id == table_id, GameTable.status == "running")
            .values(
                status=status,
                record=record,
                winners=None if winners is None else list(winners),
                message=message,
                finished=datetime.now(UTC),
                lease_expires=None,
            )
        )


def close_idle_tables(store: Store, *, idle_before: datetime, now: datetime) -> list[int]:
    """Close the tables nobody will play: waiting for an invited person, or pending (no
    worker took them), since before ``idle_before``; running with their worker gone (the
    lease ran out). Return their ids."""
    with store.write() as session:
        ids = list(
            session.scalars(
                select(GameTable.id).where(
                    or_(
                        GameTable.status.in_(("waiting", "pending"))
                        & (GameTable.created < idle_before),
                        (GameTable.status == "running") & (GameTable.lease_expires < now),
                    )
                )
            )
        )
        if ids:
            session.execute(
                update(GameTable)
                .where(GameTable.id.in_(ids), GameTable.status.in_(OPEN_STATUSES))
                .values(
                    status="closed",
                    finished=now,
                    lease_expires=None,
                    message="Nobody played it in time: the table was closed.",
                )
            )
        return ids


# A bot's finished tables (built once: a bot's page reads it).
_TABLES_AGAINST_PEOPLE = (
    select(TableSeat.seat, GameTable.winners, GameTable.teams)
    .join(GameTable, GameTable.id == TableSeat.table_id)
    .join(BotVersion, BotVersion.id == TableSeat.bot_version_id)
    .where(BotVersion.bot_id == bindparam("bot"), GameTable.status == "done")
)


def tables_against_people(store: Store, bot_id: int) -> list[tuple[int, tuple[int, ...], bool]]:
    """The bot's finished tables with a person in them: each as (the bot's seat, the
    winners, teams)."""
    with store.read_columns() as connection:
        rows = connection.execute(_TABLES_AGAINST_PEOPLE, {"bot": bot_id}).all()
        return [
            (int(seat), tuple(int(s) for s in winners or []), teams)
            for seat, winners, teams in rows
        ]
