"""The match queue: the database owns each match's state (docs/storage.md, FACTS.md "Queues").

A Celery task is only a nudge: a worker calls :func:`claim_match` to lease a match, keeps the
lease alive with :func:`heartbeat` while it plays, and ends with :func:`complete_match` (or
:func:`void_match`). A match whose lease expired (its worker died or stalled) is claimed again
by the next :func:`claim_match`, or put back to pending by :func:`requeue_expired`. Results are
written idempotently: the first completion wins, a late one stores nothing.

Match life: ``pending`` -> ``running`` (leased; ``attempts`` counts claims) -> ``done`` or
``void``; ``running`` with an expired lease counts as claimable.

Atomicity: every function is one short transaction. On SQLite the transaction starts with
``BEGIN IMMEDIATE`` (:meth:`Store.write`), so writers are serialized and a claim's read and
write cannot interleave with another's. On PostgreSQL a claim picks its row with
``SELECT ... FOR UPDATE SKIP LOCKED`` (concurrent claimers take different rows without
waiting), and the other operations lock the match row with ``FOR UPDATE`` before deciding.

Times are timezone-aware UTC; ``now`` parameters exist for tests and default to the clock.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import bindparam, false, func, insert, or_, select, text, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection
from sqlalchemy.orm import Session

from arena.compete.entrants import Entrant as Entry  # (Entrant here is the model)
from arena.compete.names import check_name
from arena.compete.tournaments import Match as ScheduledMatch
from arena.engine.rules import Rules
from arena.store import tallies
from arena.store.db import Store, as_utc, insert_rows
from arena.store.lanes import LANES, PLAYING, claim_candidates, in_lane, playable
from arena.store.models import (
    MATCH_STATUSES,
    BotVersion,
    GameRecord,
    Match,
    MatchSeat,
    RuleSet,
    Tournament,
    utcnow,
)
from arena.store.models import TournamentEntrant as Entrant
from arena.store.records import encode_records

#: Statuses after which a match never changes again.
FINISHED = ("done", "void")


@dataclass(frozen=True)
class ClaimedMatch:
    """What a worker needs to play a claimed match.

    Attributes:
        match_id: the match row's id (pass it to heartbeat/complete/void).
        tournament_id: its tournament's id.
        key: the schedule's match id (``arena.compete.tournaments.Match.id``).
        seats: the bot version id at each seat.
        labels: the entrant's label at each seat.
        games: games to play; game ``i`` is seeded by ``game_seeds(seed, games)[i]``.
        seed: the match seed.
        deal_group: the duplicate-deal group's number within the tournament, or None.
        rotation: the seat rotation within the deal group (0 otherwise).
        rules_name: the rule set's name; ``rules_params`` its parameters (see :meth:`rules`).
        teams: team play (seats 0+2 v 1+3).
        settings: the tournament's settings (how its matches are played).
        attempts: how many times the match was claimed, this claim included.
        lease_owner: the worker holding the lease.
        lease_expires: when the lease runs out unless extended by :func:`heartbeat`.
    """

    match_id: int
    tournament_id: int
    key: str
    seats: tuple[int, ...]
    labels: tuple[str, ...]
    games: int
    seed: int
    deal_group: int | None
    rotation: int
    rules_name: str
    rules_params: dict[str, Any]
    teams: bool
    settings: dict[str, Any]
    attempts: int
    lease_owner: str
    lease_expires: datetime

    def rules(self) -> Rules:
        """The rule set to play under."""
        return Rules.from_params(self.rules_name, self.rules_params)


def _now(now: datetime | None) -> datetime:
    """``now`` (default: the clock) in UTC; naive datetimes are taken to be UTC already."""
    return datetime.now(UTC) if now is None else as_utc(now)


def _lock_match(store: Store, session: Session, match_id: int) -> Match | None:
    """The match row, locked for this transaction (SQLite: already, by BEGIN IMMEDIATE)."""
    query = select(Match).where(Match.id == match_id)
    if store.dialect == "postgresql":
        query = query.with_for_update()
    match: Match | None = session.scalar(query)
    return match


def create_tournament(
    store: Store,
    *,
    name: str,
    rules: Rules,
    format: str,
    players: int,
    teams: bool,
    games_per_match: int,
    seed: int,
    entrants: Sequence[Entry],
    matches: Sequence[ScheduledMatch],
    settings: Mapping[str, Any] | None = None,
    owner_id: int | None = None,
    upload_id: int | None = None,
) -> int:
    """Store a tournament, its entrants and one pending match per scheduled match; return
    the tournament's id (``owner_id``: the account that created it, if any; ``upload_id``:
    the upload whose placement it is, unique).

    ``settings`` (JSON) says how its matches are played (see :mod:`arena.service.matches`).
    ``entrants`` are stored bot versions (:meth:`arena.compete.entrants.Entrant.stored`),
    each under its own label; a scheduled match's seats are among them, and the match row
    stores each seat's bot version id and label. Deal
    groups (table ids such as ``d0003``) are stored as numbers 0, 1, ... in order of first
    appearance (the column is an integer). The matches' ids follow the schedule's order
    (the order claims take them in), and ``match_seats`` holds their seats.

    Raises:
        ParseError: ``name`` is not a valid name (arena.compete.names).
        ValueError: a tournament called ``name`` exists already, an entrant is not a stored
            version, two share a label, a seat is not one of the entrants, or two scheduled
            matches share an id.
    """
    name = check_name(name, "tournament name")
    versions: dict[str, int] = {}
    for entrant in entrants:
        if entrant.version is None or entrant.label in versions:
            raise ValueError(f"entrant {entrant}: not a stored version, or its label is taken")
        versions[entrant.label] = entrant.version
    seats_of: list[list[int]] = []
    labels_of: list[list[str]] = []
    for match in matches:
        for seat in match.seats:
            if versions.get(seat.label, -1) != seat.version:
                raise ValueError(f"match {match.id}: seat {seat} is not one of the entrants")
        seats_of.append([versions[seat.label] for seat in match.seats])
        labels_of.append([seat.label for seat in match.seats])
    keys = [match.id for match in matches]
    if len(set(keys)) != len(keys):
        raise ValueError("two scheduled matches share an id")
    groups: dict[str, int] = {}
    for match in matches:
        if match.deal_group is not None:
            groups.setdefault(match.deal_group, len(groups))
    rule_set = store.ensure_rule_set(rules)
    with store.write() as session:
        if store.dialect == "postgresql":
            # Serialize creators of the same name (the unique constraint would make the
            # loser's transaction fail with an IntegrityError instead of this message).
            session.execute(text("SELECT pg_advisory_xact_lock(hashtext(:n))"), {"n": name})
        # Core statements on the session's connection, and the matches and their seats
        # as tuples, one executemany a table (insert_rows): the ORM's unit of work and
        # bulk insert cost more than the database's writing of the rows.
        connection = session.connection()
        if connection.scalar(select(Tournament.id).where(Tournament.name == name)) is not None:
            raise ValueError(f"a tournament called {name!r} exists already")
        tournament_id = int(
            connection.execute(
                insert(Tournament)
                .values(
                    name=name,
                    format=format,
                    rule_set_id=rule_set.id,
                    players=players,
                    teams=teams,
                    games_per_match=games_per_match,
                    seed=seed,
                    status="pending",
                    settings=None if settings is None else dict(settings),
                    owner_id=owner_id,
                    upload_id=upload_id,
                )
                .returning(Tournament.id)
            ).scalar_one()
        )
        connection.execute(
            insert(Entrant),
            [
                {"tournament_id": tournament_id, "label": label, "bot_version_id": version}
                for label, version in versions.items()
            ],
        )
        created = utcnow()
        rows = [
            (tournament_id, match.id, seats, labels, match.games, match.seed,
             None if match.deal_group is None else groups[match.deal_group], match.rotation,
             "pending", 0, created)
            for match, seats, labels in zip(matches, seats_of, labels_of, strict=True)
        ]  # fmt: skip
        insert_rows(connection, Match, _MATCH_COLUMNS, rows)
        if rows:
            # The ids the database gave them (in the schedule's order: one row after the
            # other), by key through the (tournament, key) index: RETURNING them in order
            # takes a statement a row on SQLite (SQLAlchemy's insertmanyvalues).
            ids = dict(
                connection.execute(
                    select(Match.key, Match.id).where(Match.tournament_id == tournament_id)
                ).all()
            )
            _insert_match_seats(
                connection, [(ids[key], seats) for key, seats in zip(keys, seats_of, strict=True)]
            )
        return tournament_id


#: The columns :func:`create_tournament` gives a new match (the others are NULL).
_MATCH_COLUMNS = (
    "tournament_id", "key", "seats", "labels", "games", "seed", "deal_group", "rotation",
    "status", "attempts", "created",
)  # fmt: skip


def _insert_match_seats(
    connection: Connection, matches: Sequence[tuple[int, Sequence[int]]]
) -> None:
    """Write ``match_seats`` for new matches, given as (match id, bot version id at each
    seat): what :func:`add_match_seats` writes from the stored rows, without reading them
    (a new match forfeited nothing yet)."""
    wanted = {int(version) for _, seats in matches for version in seats}
    bots = dict(
        connection.execute(
            select(BotVersion.id, BotVersion.bot_id).where(BotVersion.id.in_(wanted))
        ).all()
    )
    rows = [
        (match_id, seat, bots[int(version)], int(version), 0)
        for match_id, seats in matches
        for seat, version in enumerate(seats)
    ]
    insert_rows(
        connection,
        MatchSeat,
        ("match_id", "seat", "bot_id", "bot_version_id", "faults"),
        rows,
    )


def add_match_seats(
    session: Session, tournament_id: int, match_ids: Collection[int] | None = None
) -> None:
    """Write ``match_seats`` for the tournament's matches (``match_ids``: these only, e.g.
    matches added to a running ladder): who holds each seat, by bot and version, and the
    games it forfeited, from their ``seats`` and ``result``."""
    versions = dict(
        session.execute(
            select(BotVersion.id, BotVersion.bot_id).where(
                BotVersion.id.in_(
                    select(Entrant.bot_version_id).where(Entrant.tournament_id == tournament_id)
                )
            )
        ).all()
    )
    query = select(Match.id, Match.seats, Match.result).where(Match.tournament_id == tournament_id)
    if match_ids is not None:
        query = query.where(Match.id.in_(list(match_ids)))
    rows = [
        {"match_id": match_id, "seat": seat, "bot_id": versions[int(v)], "bot_version_id": int(v),
         "faults": seat_faults(result).get(seat, 0)}
        for match_id, seats, result in session.execute(query)
        for seat, v in enumerate(seats)
    ]  # fmt: skip
    for start in range(0, len(rows), 5000):
        session.execute(insert(MatchSeat), rows[start : start + 5000])


def pair_of(seats: Sequence[Any]) -> tuple[int, ...]:
    """A match's pair as :func:`claim_match`'s ``prefer`` names it: its seats' bot version
    ids, sorted (a deal's two seatings are one pair)."""
    return tuple(sorted(int(version) for version in seats))


#: How far past its tournament's first claimable match a claim looks for one of the pairs
#: its process keeps warm, or for the pair with the most matches (``prefer`` and
#: ``gather`` of :func:`claim_match`).
PREFER_WINDOW = 200


def _preferred(
    window: Sequence[tuple[int, tuple[int, ...]]], kept: Collection[tuple[int, ...]]
) -> int | None:
    """Of a tournament's first waiting matches (id, pair), in order: the first of a pair in
    ``kept``; else the first of the pair with the most matches among them, if it has two or
    more (its process will keep that pair's bots for the rest); else None."""
    counts: dict[tuple[int, ...], int] = {}
    for match_id, pair in window:
        if pair in kept:
            return match_id
        counts[pair] = counts.get(pair, 0) + 1
    most = max(counts.values(), default=0)
    if most < 2:
        return None
    return next(match_id for match_id, pair in window if counts[pair] == most)


def _next_claimable(
    store: Store,
    session: Session,
    now: datetime,
    match_id: int | None,
    lane: str | None,
    prefer: Collection[tuple[int, tuple[int, ...]]] = (),
    gather: bool = False,
) -> int | None:
    """The match a claim takes (locked on PostgreSQL: ``FOR UPDATE SKIP LOCKED`` of the
    match row only, so concurrent claimers take different rows without waiting)."""

    def waiting(*conditions: Any) -> Any:
        """The claimable matches (of a tournament being played) by id."""
        return (
            select(Match.id)
            .join(Tournament, Tournament.id == Match.tournament_id)
            .where(playable(now), *conditions)
            .order_by(Match.id)
        )

    def first(*conditions: Any) -> int | None:
        query = waiting(*conditions).limit(1)
        if store.dialect == "postgresql":
            query = query.with_for_update(skip_locked=True, of=Match)
        found: int | None = session.scalar(query)
        return found

    if match_id is not None:
        return first(Match.id == match_id, *(() if lane is None else (in_lane(lane),)))
    for each in LANES if lane is None else (lane,):
        for tournament_id in claim_candidates(session, each, now):
            kept = {seats for tid, seats in prefer if tid == tournament_id}
            if kept or gather:
                window = session.execute(
                    waiting(Match.tournament_id == tournament_id)
                    .add_columns(Match.seats)
                    .limit(PREFER_WINDOW)
                ).all()
                candidate = _preferred([(m, pair_of(seats)) for m, seats in window], kept)
                if candidate is not None:
                    found = first(Match.id == candidate)  # taken meanwhile: None
                    if found is not None:
                        return found
            found = first(Match.tournament_id == tournament_id)
            if found is not None:
                return found
    return None


def claim_match(
    store: Store,
    worker: str,
    *,
    lease_seconds: float,
    match_id: int | None = None,
    lane: str | None = None,
    now: datetime | None = None,
    prefer: Collection[tuple[int, tuple[int, ...]]] = (),
    gather: bool = False,
) -> ClaimedMatch | None:
    """Lease a claimable match (pending, or running with an expired lease) to ``worker`` for
    ``lease_seconds``: the match ``match_id`` if it is claimable, else the next one in
    ``lane`` (or in any lane, by :data:`arena.store.lanes.LANES`' order): the first
    claimable match, by id, of the first tournament in
    :func:`arena.store.lanes.claim_candidates`' order (its queues take turns). The match
    becomes running, ``attempts`` + 1; its tournament running if it was pending. A done or
    cancelled tournament's matches are never claimed (:func:`arena.store.lanes.playable`,
    what a sweep sends again too). Return None when no match (or not
    that one) is claimable. A match is never leased to two workers at once.

    ``prefer``: (tournament id, bot version ids sorted) of the pairs whose bots the
    claiming process keeps warm. Within the tournament the queues' order chose, the first
    claimable match of such a pair among its first :data:`PREFER_WINDOW` claimable ones
    is taken before the first one (the order between tournaments does not change).
    ``gather``: where no kept pair's match is among them, the first match of the pair
    with the most matches among them (two or more) is taken before the first one, so
    that the process starts bots it will keep for that pair's other matches.

    Raises:
        ValueError: ``lane`` is not one of :data:`arena.store.lanes.LANES`.
    """
    now = _now(now)
    expires = now + timedelta(seconds=lease_seconds)
    if lane is not None:
        in_lane(lane)  # the lane is checked before anything is read
    with store.write() as session:
        match_id = _next_claimable(store, session, now, match_id, lane, prefer, gather)
        if match_id is None:
            return None
        session.execute(
            update(Match)
            .where(Match.id == match_id)
            .values(
                status="running",
                lease_owner=worker,
                lease_expires=expires,
                attempts=Match.attempts + 1,
            )
        )
        row = session.execute(
            select(Match, Tournament.teams, Tournament.settings, RuleSet.name, RuleSet.params)
            .join(Tournament, Tournament.id == Match.tournament_id)
            .join(RuleSet, RuleSet.id == Tournament.rule_set_id)
            .where(Match.id == match_id)
            .execution_options(populate_existing=True)
        ).one()
        match, teams, settings, rules_name, rules_params = row
        session.execute(
            update(Tournament)
            .where(Tournament.id == match.tournament_id, Tournament.status == "pending")
            .values(status="running", started=now)
        )
        return ClaimedMatch(
            match_id=match.id,
            tournament_id=match.tournament_id,
            key=match.key,
            seats=tuple(match.seats),
            labels=tuple(match.labels or (str(seat) for seat in match.seats)),
            games=match.games,
            seed=match.seed,
            deal_group=match.deal_group,
            rotation=match.rotation or 0,
            rules_name=rules_name,
            rules_params=dict(rules_params),
            teams=teams,
            settings=dict(settings or {}),
            attempts=match.attempts,
            lease_owner=worker,
            lease_expires=expires,
        )


def heartbeat(
    store: Store,
    match_id: int,
    worker: str,
    *,
    lease_seconds: float,
    now: datetime | None = None,
) -> bool:
    """Extend ``worker``'s lease on the match to ``now + lease_seconds``; return False (and
    change nothing) if the worker no longer holds it (re-claimed by another worker, re-queued,
    or finished). A lease that ran out but was not yet taken by anyone is renewed."""
    now = _now(now)
    with store.write() as session:
        result = session.execute(
            update(Match)
            .where(Match.id == match_id, Match.status == "running", Match.lease_owner == worker)
            .values(lease_expires=now + timedelta(seconds=lease_seconds))
        )
        return bool(result.rowcount)  # type: ignore[attr-defined]


def complete_match(
    store: Store,
    match_id: int,
    worker: str,
    *,
    records: Sequence[Mapping[str, Any]],
    result: Mapping[str, Any],
    now: datetime | None = None,
) -> bool:
    """Store the match's game records (record ``i`` as game index ``i``, as compact bytes:
    arena.store.records) and mark it done with ``result``, in one transaction; return
    True. If the match is already done or void, store nothing and return False: the first
    completion wins, whoever held the lease (the games are seeded alike, so a stale
    worker's result is as valid as a fresh one's, though bots with randomness of their own
    may have played differently: only one is ever kept)."""
    now = _now(now)
    encoded = encode_records(store, records)  # before the write lock: milliseconds a game
    with store.write() as session:
        match = _lock_match(store, session, match_id)
        if match is None:
            raise ValueError(f"no match with id {match_id}")
        if match.status in FINISHED:
            return False
        insert = (postgresql if store.dialect == "postgresql" else sqlite).insert
        if encoded:  # one executemany for all the games
            session.execute(
                insert(GameRecord).on_conflict_do_nothing(
                    index_elements=["match_id", "game_index"]
                ),
                [
                    {"match_id": match_id, "game_index": index, "data": data}
                    for index, data in enumerate(encoded)
                ],
            )
        session.execute(
            update(Match)
            .where(Match.id == match_id)
            .values(
                status="done",
                result=dict(result),
                lease_owner=worker,
                lease_expires=None,
                finished=now,
            )
        )
        for seat, count in seat_faults(result).items():
            session.execute(
                update(MatchSeat)
                .where(MatchSeat.match_id == match_id, MatchSeat.seat == seat)
                .values(faults=count)
            )
        tallies.add_match(session, store.dialect, match_id)  # the page's stored tally
        _finish_tournament_if_done(session, match.tournament_id, now)
        return True


def seat_faults(result: Mapping[str, Any] | None) -> dict[int, int]:
    """Games forfeited by each seat in a done match's ``result`` (seats with none left out)."""
    faults: dict[int, int] = {}
    for game in (result or {}).get("games", []):
        verdict = game.get("verdict") if isinstance(game, Mapping) else None
        seat = verdict.get("seat") if isinstance(verdict, Mapping) else None
        if isinstance(seat, int):
            faults[seat] = faults.get(seat, 0) + 1
    return faults


def void_match(
    store: Store,
    match_id: int,
    worker: str,
    reason: str,
    *,
    held: bool = False,
    now: datetime | None = None,
) -> bool:
    """Mark the match void (it will never be played, e.g. after too many failed attempts),
    with ``{"void": reason, "worker": worker, "attempts": n}`` as its result; return False
    (and change nothing) if it is already done or void, or, with ``held``, unless
    ``worker`` holds its lease."""
    now = _now(now)
    with store.write() as session:
        match = _lock_match(store, session, match_id)
        if match is None:
            raise ValueError(f"no match with id {match_id}")
        if match.status in FINISHED:
            return False
        if held and (match.status != "running" or match.lease_owner != worker):
            return False
        session.execute(
            update(Match)
            .where(Match.id == match_id)
            .values(
                status="void",
                result={"void": reason, "worker": worker, "attempts": match.attempts},
                lease_owner=worker,
                lease_expires=None,
                finished=now,
            )
        )
        _finish_tournament_if_done(session, match.tournament_id, now)
        return True


def run_again(session: Session, tournament_id: int, *also: Any) -> bool:
    """Mark a done tournament running again (``also``: further conditions, e.g. that a
    match of it is pending): matches were added to it, or found pending in it; whether it
    was."""
    result = session.execute(
        update(Tournament)
        .where(Tournament.id == tournament_id, Tournament.status == "done", *also)
        .values(status="running", finished=None)
    )
    return bool(result.rowcount)  # type: ignore[attr-defined]


def lock_tournament(session: Session, tournament_id: int) -> None:
    """Lock the tournament's row for the caller's transaction (PostgreSQL: ``FOR NO KEY
    UPDATE``, what an ``UPDATE`` of it takes; SQLite: ``BEGIN IMMEDIATE`` holds the write
    lock already): whoever adds matches to a tournament takes it before inserting them, as
    a finisher does before counting what is left to play (:func:`_finish_tournament_if_done`),
    so that the tournament is never marked done with the new matches pending (the finisher
    did not see them, uncommitted, and the adder had found the tournament running): a done
    tournament's matches are never claimed. Take it after any stored match row the
    transaction locks, never before one (the finishers' order: no deadlock)."""
    if session.get_bind().dialect.name == "postgresql":
        session.execute(
            select(Tournament.id)
            .where(Tournament.id == tournament_id)
            .with_for_update(key_share=True)
        )


def _finish_tournament_if_done(session: Session, tournament_id: int, now: datetime) -> None:
    """Mark the tournament done once none of its matches is left to play (in the caller's
    transaction, which holds the write lock on SQLite).

    On PostgreSQL the tournament's row is locked first, so that two matches finishing at
    once cannot each count the other as unfinished and both leave the tournament running
    (the count, a new statement under READ COMMITTED, sees whichever committed first). Every
    transaction that locks a tournament row here locks its match rows before it, never
    after, so the two locks cannot deadlock. The lock is ``FOR NO KEY UPDATE``, what an
    ``UPDATE`` of the row takes: it does not wait for the key-share locks of matches being
    inserted into the tournament (a competition's ladder adds them while others finish),
    which ``FOR UPDATE`` did, and a ladder's insert that went on to update the tournament's
    row then waited for the finisher: a deadlock (seen in CI, 2026-11-29). A ladder adding
    matches takes the same lock before it inserts (:func:`lock_tournament`), so the count
    here waits for its matches and sees them."""
    lock_tournament(session, tournament_id)
    left = session.scalar(
        select(func.count())
        .select_from(Match)
        .where(Match.tournament_id == tournament_id, Match.status.not_in(FINISHED))
    )
    if not left:
        session.execute(
            update(Tournament)
            .where(Tournament.id == tournament_id, Tournament.status.not_in(("done", "cancelled")))
            .values(status="done", finished=now)
        )
        session.execute(  # a cancelled one is finished once its last running match is
            update(Tournament)
            .where(
                Tournament.id == tournament_id,
                Tournament.status == "cancelled",
                Tournament.finished.is_(None),
            )
            .values(finished=now)
        )


def cancel_tournament(
    store: Store, tournament_id: int, *, by: str, now: datetime | None = None
) -> int:
    """Cancel a tournament: every match not finished is void ("cancelled by BY"), whatever
    its state -- pending, sent, or running (its worker loses the lease at its next
    heartbeat, stops, and stores nothing) -- and finished results are kept; its status
    becomes ``cancelled`` (a done one is left alone), and no worker ever claims its matches
    again. Return how many matches were voided."""
    return void_pending(
        store, tournament_id, f"cancelled by {by}", now=now, cancel=True, running=True
    )


def void_pending(
    store: Store,
    tournament_id: int,
    reason: str,
    *,
    now: datetime | None = None,
    cancel: bool = False,
    running: bool = False,
) -> int:
    """Void every pending match of the tournament (``{"void": reason}``), and with
    ``running`` the running ones too; return how many. Running matches otherwise are left
    to finish (their completion is stored as usual). ``cancel``: the tournament's status
    becomes ``cancelled`` too (unless it is done)."""
    now = _now(now)
    statuses = ("pending", "running") if running else ("pending",)
    with store.write() as session:
        result = session.execute(  # the matches' rows before the tournament's (see below)
            update(Match)
            .where(Match.tournament_id == tournament_id, Match.status.in_(statuses))
            .values(
                status="void",
                result={"void": reason, "worker": None},
                lease_expires=None,
                finished=now,
            )
        )
        if cancel:
            session.execute(
                update(Tournament)
                .where(Tournament.id == tournament_id, Tournament.status != "done")
                .values(status="cancelled")
            )
        _finish_tournament_if_done(session, tournament_id, now)
        return int(result.rowcount)  # type: ignore[attr-defined]


def release_match(store: Store, match_id: int, worker: str) -> bool:
    """Give ``worker``'s lease on the match back: pending again, for another attempt (e.g.
    after an infrastructure fault). Return False (changing nothing) if the worker does not
    hold it."""
    with store.write() as session:
        result = session.execute(
            update(Match)
            .where(Match.id == match_id, Match.status == "running", Match.lease_owner == worker)
            .values(status="pending", lease_owner=None, lease_expires=None)
        )
        return bool(result.rowcount)  # type: ignore[attr-defined]


def mark_queued(store: Store, match_ids: Sequence[int], now: datetime | None = None) -> None:
    """Record that tasks for these matches were sent to the broker at ``now``; a tournament
    sent for the first time takes its place in the queue (``tournaments.queued``)."""
    if not match_ids:
        return
    now = _now(now)
    with store.write() as session:
        session.execute(update(Match).where(Match.id.in_(match_ids)).values(queued=now))
        session.execute(
            update(Tournament)
            .where(
                Tournament.queued.is_(None),
                Tournament.id.in_(
                    select(Match.tournament_id).where(Match.id.in_(match_ids)).distinct()
                ),
            )
            .values(queued=now)
        )


def unqueued_matches(
    store: Store,
    *,
    tournament_id: int | None = None,
    sent_before: datetime | None = None,
    lanes: Sequence[str] | None = None,
) -> list[int]:
    """Pending matches a claim can take (of one tournament, or all; :func:`claim_match`'s
    condition, :func:`arena.store.lanes.playable`: a done or cancelled tournament's never)
    whose task was never sent; or, given ``sent_before``, whose task was sent, last before
    then: what a sweep sends again when the broker's queue is empty (a task lost with a
    broker or a killed worker). A match never sent is left to ``arena tournament run``:
    creating a tournament starts nothing. ``lanes``: only the matches of these lanes
    (:mod:`arena.store.lanes`)."""
    query = (
        select(Match.id)
        .join(Tournament, Tournament.id == Match.tournament_id)
        .where(Match.status == "pending", playable(_now(None)))
    )
    if lanes is not None:
        query = query.where(or_(false(), *(in_lane(lane) for lane in lanes)))
    if tournament_id is not None:
        query = query.where(Match.tournament_id == tournament_id)
    if sent_before is None:
        query = query.where(Match.queued.is_(None))
    else:
        query = query.where(Match.queued < _now(sent_before))
    with store.read() as session:
        return list(session.scalars(query.order_by(Match.id)))


def requeue_expired(store: Store, now: datetime | None = None) -> list[int]:
    """Put every running match whose lease expired back to pending (clearing the lease);
    return their ids. :func:`claim_match` takes expired matches anyway: this is for sweeps
    (which send their tasks again) and for progress reports that should not count dead
    workers' matches as running. A cancelled tournament's are voided instead (none should
    be left running: :func:`cancel_tournament` voids them)."""
    now = _now(now)
    with store.write() as session:
        rows = session.execute(
            select(Match.id, Match.tournament_id, Tournament.status)
            .join(Tournament, Tournament.id == Match.tournament_id)
            .where(Match.status == "running", Match.lease_expires < now)
        ).all()
        expired = [int(i) for i, _, status in rows if status != "cancelled"]
        cancelled = [int(i) for i, _, status in rows if status == "cancelled"]
        if expired:
            session.execute(
                update(Match)
                .where(Match.id.in_(expired))
                .values(status="pending", lease_owner=None, lease_expires=None)
            )
        if cancelled:
            session.execute(
                update(Match)
                .where(Match.id.in_(cancelled))
                .values(
                    status="void",
                    result={"void": "cancelled", "worker": None},
                    lease_expires=None,
                    finished=now,
                )
            )
            for tournament_id in {t for _, t, status in rows if status == "cancelled"}:
                _finish_tournament_if_done(session, tournament_id, now)
        return expired


def finish_stalled_tournaments(store: Store, now: datetime | None = None) -> list[int]:
    """Mark done every pending or running tournament none of whose matches is left to play
    (what the last match's completion does; a tournament can be left so by a database
    written before that was race-free); return their rule sets' ids (to refit)."""
    now = _now(now)
    unfinished = select(Match.id).where(
        Match.tournament_id == Tournament.id, Match.status.not_in(FINISHED)
    )
    any_match = select(Match.id).where(Match.tournament_id == Tournament.id)
    query = select(Tournament.id, Tournament.rule_set_id).where(
        Tournament.status.in_(PLAYING), any_match.exists(), ~unfinished.exists()
    )
    with store.read() as session:  # every sweep asks; the write lock only when one is found
        stalled = list(session.execute(query))
    if not stalled:
        return []
    with store.write() as session:
        for tournament_id, _ in stalled:  # finishes it only if still nothing is left to play
            _finish_tournament_if_done(session, tournament_id, now)
    return sorted({int(rule_set) for _, rule_set in stalled})


def reopen_unfinished_tournaments(store: Store, now: datetime | None = None) -> list[int]:
    """Put right the tournaments finished with a match pending, which no claim takes
    (:func:`arena.store.lanes.playable`; the other way round from
    :func:`finish_stalled_tournaments`): a done one is running again, a cancelled one's
    pending matches are void. A database written before :func:`lock_tournament` held
    such done ladders (a match finishing as the ladder added some). Return the ids of the
    tournaments reopened."""
    now = _now(now)
    query = (
        select(Tournament.id, Tournament.status)
        .join(Match, Match.tournament_id == Tournament.id)
        .where(Match.status == "pending", Tournament.status.in_(("done", "cancelled")))
        .distinct()
    )
    with store.read() as session:  # every sweep asks; the write lock only when one is found
        found = [(int(tid), status) for tid, status in session.execute(query)]
    if not found:
        return []
    pending = select(Match.id).where(
        Match.tournament_id == Tournament.id, Match.status == "pending"
    )
    for tournament_id in (tid for tid, status in found if status == "cancelled"):
        void_pending(store, tournament_id, "cancelled", now=now)
    reopened: list[int] = []
    done = [tid for tid, status in found if status == "done"]
    with store.write() as session:
        for tournament_id in done:
            lock_tournament(session, tournament_id)  # a finisher's count waits, or is seen
            if run_again(session, tournament_id, pending.exists()):
                reopened.append(tournament_id)
    return reopened


# The tournament's matches counted by status (built once: a tournament's page reads it).
_PROGRESS = (
    select(Match.status, func.count())
    .where(Match.tournament_id == bindparam("tournament"))
    .group_by(Match.status)
)


def tournament_progress(store: Store, tournament_id: int) -> dict[str, int]:
    """The number of the tournament's matches in each status (every status, zeros too)."""
    with store.read_columns() as connection:
        rows = connection.execute(_PROGRESS, {"tournament": tournament_id}).all()
    counts = dict.fromkeys(MATCH_STATUSES, 0)
    counts.update({status: count for status, count in rows})
    return counts
