"""The competitions' clock's queries (:mod:`arena.service.clock`): which competitions are
due for a tick, a ladder's or final's matches in flight, its done games as a histogram,
adding duplicate-deal groups of matches to a running tournament, the ladder's standings and
rating history, the deadline (close, void the ladder's pending matches), the final's
tournament and its published table.

Concurrency: every change is made under :func:`lock_competition` (``SELECT ... FOR UPDATE``
of the competition's row on PostgreSQL; SQLite's ``BEGIN IMMEDIATE`` already serializes
writers), in one transaction that re-reads what it decides on, so two workers ticking one
competition at once never add its matches twice. Locks are taken in the order competition,
matches, tournament (as :mod:`arena.store.queue` takes matches before their tournament).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import and_, func, insert, or_, select, update
from sqlalchemy.orm import Session

from arena.store.db import Store, as_utc
from arena.store.lanes import PLAYING, in_lane, playable
from arena.store.models import (
    Bot,
    BotVersion,
    Competition,
    CompetitionEntry,
    CompetitionRating,
    Match,
    MatchSeat,
    Tournament,
    User,
)
from arena.store.models import TournamentEntrant as Entrant
from arena.store.queue import add_match_seats, lock_tournament, run_again
from arena.store.ratings import histogram_rows

__all__ = [
    "IN_FLIGHT",
    "Clock",
    "EntryState",
    "add_deal_groups",
    "clock_of",
    "close",
    "competition_of_match",
    "create_final",
    "due_competitions",
    "entry_states",
    "games_histogram",
    "in_flight",
    "in_flight_games",
    "last_games",
    "lock_competition",
    "match_count",
    "other_work_waiting",
    "publish",
    "set_final",
    "tournament_labels",
    "tournament_settings",
    "version_owners",
    "void_pending_matches",
    "write_standings",
]

#: The statuses of a match in flight (sent or not, not yet finished).
IN_FLIGHT = ("pending", "running")


@dataclass(frozen=True, slots=True)
class Clock:
    """What a tick reads of a competition before it decides (detached values).

    Attributes:
        id, name, status, opens, deadline, seed, players, teams, settings, final_top,
        final_confidence, final_max_games, ladder_id, final_id, rule_set_id: the row's.
        standings: the stored standings (None before the first fit).
        standings_computed: the latest ladder result the stored standings include.
        last_result: when the ladder's latest done match finished (None: none yet).
    """

    id: int
    name: str
    status: str
    opens: datetime
    deadline: datetime
    seed: int
    players: int
    teams: bool
    settings: dict[str, Any]
    final_top: int
    final_confidence: float
    final_max_games: int
    ladder_id: int
    final_id: int | None
    rule_set_id: int
    standings: list[Any] | None
    standings_computed: datetime | None
    last_result: datetime | None
    #: Which final plays or comes: 1, then 2 after a rerun, ... (its share of the error).
    final_number: int = 1
    #: The organiser paused the ladder: no ladder match is added (arena.service.clock).
    paused: bool = False


def _last_result(tournament: Any) -> Any:
    return (
        select(func.max(Match.finished))
        .where(Match.tournament_id == tournament, Match.status == "done")
        .scalar_subquery()
    )


def _clock(row: Competition, last: datetime | None) -> Clock:
    return Clock(
        id=row.id,
        name=row.name,
        status=row.status,
        opens=as_utc(row.opens),
        deadline=as_utc(row.deadline),
        seed=int(row.seed),
        players=row.players,
        teams=bool(row.teams),
        settings=dict(row.settings or {}),
        final_top=row.final_top,
        final_confidence=row.final_confidence,
        final_max_games=row.final_max_games,
        ladder_id=row.ladder_id,
        final_id=row.final_id,
        rule_set_id=row.rule_set_id,
        standings=None if row.standings is None else list(row.standings),
        standings_computed=None
        if row.standings_computed is None
        else as_utc(row.standings_computed),
        last_result=None if last is None else as_utc(last),
        final_number=len(row.earlier_finals or []) + 1,
        paused=row.ladder_paused is not None,
    )


def due_competitions(store: Store, now: datetime) -> list[Clock]:
    """The competitions a tick has work for: open ones whose window has opened, and those
    playing their final; one read."""
    with store.read() as session:
        rows = session.execute(
            select(Competition, _last_result(Competition.ladder_id))
            .where(
                or_(
                    and_(Competition.status == "open", Competition.opens <= now),
                    Competition.status == "final",
                )
            )
            .order_by(Competition.id)
        ).all()
    return [_clock(row, last) for row, last in rows]


def clock_of(store: Store, competition_id: int) -> Clock | None:
    """The competition's :class:`Clock`; None if it is not stored."""
    with store.read() as session:
        row = session.execute(
            select(Competition, _last_result(Competition.ladder_id)).where(
                Competition.id == competition_id
            )
        ).first()
    return None if row is None else _clock(row[0], row[1])


def competition_of_match(store: Store, match_id: int) -> int | None:
    """The competition whose ladder or final the match is of; None if none."""
    with store.read() as session:
        found: int | None = session.scalar(
            select(Competition.id)
            .join(
                Match,
                or_(
                    Match.tournament_id == Competition.ladder_id,
                    Match.tournament_id == Competition.final_id,
                ),
            )
            .where(Match.id == match_id)
        )
    return found


def lock_competition(store: Store, session: Session, competition_id: int) -> Competition | None:
    """The competition's row, locked for the caller's transaction (PostgreSQL: ``FOR
    UPDATE``; SQLite: the transaction's ``BEGIN IMMEDIATE`` holds the write lock already)."""
    query = select(Competition).where(Competition.id == competition_id)
    if store.dialect == "postgresql":
        query = query.with_for_update()
    found: Competition | None = session.scalar(query.execution_options(populate_existing=True))
    return found


# --- matches -----------------------------------------------------------------------------


def in_flight(session: Session, tournament_id: int) -> int:
    """The tournament's matches pending or running."""
    return int(
        session.scalar(
            select(func.count())
            .select_from(Match)
            .where(Match.tournament_id == tournament_id, Match.status.in_(IN_FLIGHT))
        )
        or 0
    )


def match_count(session: Session, tournament_id: int) -> int:
    """The tournament's matches, whatever their status."""
    return int(
        session.scalar(
            select(func.count()).select_from(Match).where(Match.tournament_id == tournament_id)
        )
        or 0
    )


def in_flight_games(session: Session, tournament_id: int) -> dict[int, int]:
    """Games each bot version has in the tournament's matches in flight (a match counts
    once for a version however many seats it holds)."""
    rows = session.execute(
        select(MatchSeat.bot_version_id, Match.id, Match.games)
        .join(Match, Match.id == MatchSeat.match_id)
        .where(Match.tournament_id == tournament_id, Match.status.in_(IN_FLIGHT))
        .distinct()
    ).all()
    games: dict[int, int] = {}
    for version, _, count in rows:
        games[int(version)] = games.get(int(version), 0) + int(count)
    return games


def other_work_waiting(store: Store, tournament_id: int) -> bool:
    """Whether a match of another tournament waits (pending, and a claim can take it:
    :func:`arena.store.lanes.playable`) in the matches lane."""
    with store.read() as session:
        found = session.scalar(
            select(Match.id)
            .join(Tournament, Tournament.id == Match.tournament_id)
            .where(
                Match.status == "pending",
                Match.tournament_id != tournament_id,
                playable(datetime.now(UTC)),
                in_lane("matches"),
            )
            .limit(1)
        )
    return found is not None


def add_deal_groups(
    session: Session,
    tournament_id: int,
    groups: Sequence[Sequence[Sequence[int]]],
    *,
    games: int,
    seed_of: Callable[[int], int],
    prefix: str,
    now: datetime,
) -> list[int]:
    """Add one duplicate-deal group of pending matches to the tournament for each of
    ``groups`` (a group: the bot version at each seat, one tuple a seat rotation), in the
    caller's transaction; return the new matches' ids. Group ``n`` (numbered on from the
    tournament's last) plays seed ``seed_of(n)`` in every rotation, ``games`` games a match,
    under keys ``PREFIXnnnnnn-r``; each seat's label is its version's entrant label. The
    tournament is running again if it was marked done, and takes its place in the queue
    (``queued``) if it had none; its ``match_seats`` are written.

    Raises:
        ValueError: a seat's version is not one of the tournament's entrants.
    """
    if not groups:
        return []
    lock_tournament(session, tournament_id)  # before the inserts: a finisher then counts them
    labels = {
        int(version): label
        for label, version in session.execute(
            select(Entrant.label, Entrant.bot_version_id).where(
                Entrant.tournament_id == tournament_id
            )
        )
    }
    last = session.scalar(
        select(func.max(Match.deal_group)).where(Match.tournament_id == tournament_id)
    )
    first = 0 if last is None else int(last) + 1
    rows: list[dict[str, Any]] = []
    for number, group in enumerate(groups, start=first):
        for rotation, seats in enumerate(group):
            missing = [v for v in seats if v not in labels]
            if missing:
                raise ValueError(f"bot versions {missing} are not entrants of the tournament")
            rows.append(
                {
                    "tournament_id": tournament_id,
                    "key": f"{prefix}{number:06d}-{rotation}",
                    "seats": [int(v) for v in seats],
                    "labels": [labels[v] for v in seats],
                    "games": games,
                    "seed": seed_of(number),
                    "deal_group": number,
                    "rotation": rotation,
                    "status": "pending",
                    "attempts": 0,
                }
            )
    ids = [int(i) for i in session.scalars(insert(Match).returning(Match.id), rows)]
    add_match_seats(session, tournament_id, ids)
    run_again(session, tournament_id)
    session.execute(
        update(Tournament)
        .where(Tournament.id == tournament_id, Tournament.queued.is_(None))
        .values(queued=now)
    )
    return ids


def void_pending_matches(session: Session, tournament_id: int, reason: str, now: datetime) -> int:
    """Void the tournament's pending matches (``{"void": reason}``) in the caller's
    transaction; running ones are left to finish (and count). Return how many."""
    result = session.execute(
        update(Match)
        .where(Match.tournament_id == tournament_id, Match.status == "pending")
        .values(
            status="void", result={"void": reason, "worker": None}, lease_expires=None,
            finished=now,
        )
    )  # fmt: skip
    left = in_flight(session, tournament_id)
    if not left:
        session.execute(
            update(Tournament)
            .where(Tournament.id == tournament_id, Tournament.status.in_(PLAYING))
            .values(status="done", finished=now)
        )
    return int(result.rowcount)  # type: ignore[attr-defined]


# --- games and entrants ------------------------------------------------------------------


def games_histogram(store: Store, tournament_id: int) -> list[tuple[str, str | None, bool, int]]:
    """The tournament's done games as a histogram (:func:`arena.store.ratings.histogram_rows`)."""
    with store.read() as session:
        return histogram_rows(session, store.dialect, tournament_id=tournament_id)


def last_games(store: Store, tournament_id: int) -> dict[int, datetime]:
    """When each bot version's last done match of the tournament finished."""
    with store.read() as session:
        rows = session.execute(
            select(MatchSeat.bot_version_id, func.max(Match.finished))
            .join(Match, Match.id == MatchSeat.match_id)
            .where(Match.tournament_id == tournament_id, Match.status == "done")
            .group_by(MatchSeat.bot_version_id)
        ).all()
    return {int(v): as_utc(when) for v, when in rows if when is not None}


@dataclass(frozen=True, slots=True)
class EntryState:
    """A competition entry of a bot version, as the clock sees it.

    Attributes:
        version_id: the bot version.
        status: the entry's status (arena.store.models.ENTRY_STATUSES).
        accepted: when its upload was accepted (None: not yet).
        first_rated: when the ladder first rated it (None: not yet).
        reason: why it was disqualified or rejected.
        user_id: its entrant.
        placed: when it had played its placement games (None: not yet).
    """

    version_id: int
    status: str
    accepted: datetime | None
    first_rated: datetime | None
    reason: str | None
    user_id: int = 0
    placed: datetime | None = None


def entry_states(store: Store, competition_id: int) -> dict[int, EntryState]:
    """Each bot version's entry in the competition (its latest, if entered twice; a
    rejected entry, e.g. a disqualified version sent again, never hides the one before)."""
    with store.read() as session:
        rows = session.execute(
            select(CompetitionEntry)
            .where(
                CompetitionEntry.competition_id == competition_id,
                CompetitionEntry.bot_version_id.is_not(None),
                CompetitionEntry.status != "rejected",
            )
            .order_by(CompetitionEntry.created, CompetitionEntry.id)
        ).scalars()
        return {
            int(e.bot_version_id): EntryState(
                int(e.bot_version_id),
                e.status,
                None if e.accepted is None else as_utc(e.accepted),
                None if e.first_rated is None else as_utc(e.first_rated),
                e.reason,
                int(e.user_id),
                None if e.placed is None else as_utc(e.placed),
            )
            for e in rows
            if e.bot_version_id is not None
        }


def tournament_labels(store: Store, tournament_id: int) -> dict[int, str]:
    """Each entrant's label in the tournament, by bot version id."""
    with store.read() as session:
        return {
            int(version): label
            for label, version in session.execute(
                select(Entrant.label, Entrant.bot_version_id).where(
                    Entrant.tournament_id == tournament_id
                )
            )
        }


def tournament_settings(store: Store, tournament_id: int) -> dict[str, Any]:
    """The tournament's settings (empty if none, or not stored)."""
    with store.read() as session:
        found = session.scalar(select(Tournament.settings).where(Tournament.id == tournament_id))
    return dict(found or {})


def version_owners(store: Store, version_ids: Collection[int]) -> dict[int, tuple[str, str, int]]:
    """(owner, bot, version number) of each bot version id."""
    with store.read() as session:
        rows = session.execute(
            select(BotVersion.id, User.name, Bot.name, BotVersion.version)
            .join(Bot, Bot.id == BotVersion.bot_id)
            .join(User, User.id == Bot.owner_id)
            .where(BotVersion.id.in_(sorted(set(version_ids))))
        ).all()
    return {int(v): (owner, bot, int(number)) for v, owner, bot, number in rows}


# --- standings, the deadline, the final --------------------------------------------------


def write_standings(
    session: Session,
    competition: Competition,
    standings: Sequence[Mapping[str, Any]],
    computed: datetime | None,
    now: datetime,
) -> int:
    """Store the ladder's ``standings`` (JSON, best first; each with ``version_id``,
    ``rating``, ``low``, ``high``, ``games``, ``rank``) as of result time ``computed``, in
    the caller's transaction (the competition's row locked); add a history point for each
    ranked entrant (active and rated: ``rank`` set) whose games changed since its last
    point, and mark the entries of newly rated versions first rated (``now``). Return the
    points added."""
    competition.standings = [dict(row) for row in standings]
    competition.standings_computed = computed
    rated = {int(r["version_id"]): r for r in standings if r.get("rating") is not None}
    if not rated:
        return 0
    latest = (
        select(
            CompetitionRating.bot_version_id,
            func.max(CompetitionRating.id).label("last"),
        )
        .where(CompetitionRating.competition_id == competition.id)
        .group_by(CompetitionRating.bot_version_id)
        .subquery()
    )
    known = dict(
        session.execute(
            select(CompetitionRating.bot_version_id, CompetitionRating.games).join(
                latest, CompetitionRating.id == latest.c.last
            )
        ).all()
    )
    points = [
        {"competition_id": competition.id, "bot_version_id": version, "time": now,
         "rating": r["rating"], "low": r["low"], "high": r["high"], "games": r["games"],
         "rank": r["rank"]}
        for version, r in rated.items()
        if known.get(version) != r["games"] and r.get("rank") is not None  # ranked: active
    ]  # fmt: skip
    if points:
        session.execute(insert(CompetitionRating), points)
    session.execute(
        update(CompetitionEntry)
        .where(
            CompetitionEntry.competition_id == competition.id,
            CompetitionEntry.bot_version_id.in_(sorted(rated)),
            CompetitionEntry.first_rated.is_(None),
            CompetitionEntry.status.in_(("active", "superseded", "disqualified", "late")),
        )
        .values(first_rated=now)
    )
    return len(points)


def close(session: Session, competition: Competition, now: datetime) -> int:
    """The deadline, in the caller's transaction (the competition's row locked): status
    ``final``, ``closed`` now, the ladder's pending matches void (running ones finish and
    count). Return how many matches were voided."""
    competition.status = "final"
    competition.closed = now
    return void_pending_matches(session, competition.ladder_id, "the deadline passed", now)


def create_final(
    session: Session,
    competition: Competition,
    *,
    finalists: Sequence[tuple[int, str]],
    settings: Mapping[str, Any],
    games_per_match: int,
    now: datetime,
) -> int:
    """Store the competition's final (format ``final``, running, no match yet) with the
    ``finalists`` (version id, label) as its entrants, and set ``final_id``, in the caller's
    transaction; return the tournament's id. Its name is the competition's with
    ``-final`` (``-final-2``... when a rerun final needs a new one)."""
    base = f"{competition.name}-final"
    taken = set(session.scalars(select(Tournament.name).where(Tournament.name.like(f"{base}%"))))
    name = base
    number = 1
    while name in taken:
        number += 1
        name = f"{base}-{number}"
    tournament = Tournament(
        name=name,
        format="final",
        rule_set_id=competition.rule_set_id,
        players=4 if competition.teams else competition.players,
        teams=competition.teams,
        games_per_match=games_per_match,
        seed=competition.seed,
        status="running",
        started=now,
        settings=dict(settings),
        owner_id=competition.owner_id,
    )
    session.add(tournament)
    session.flush()
    session.add_all(
        Entrant(tournament_id=tournament.id, label=label, bot_version_id=version)
        for version, label in finalists
    )
    session.flush()
    competition.final_id = tournament.id
    return tournament.id


def set_final(session: Session, competition: Competition, tournament_id: int | None) -> None:
    """Point the competition at its final's tournament (caller's transaction)."""
    competition.final_id = tournament_id


def publish(
    session: Session, competition: Competition, table: Sequence[Mapping[str, Any]], now: datetime
) -> None:
    """Publish the final table (frozen JSON), status ``done``, ``finished`` now (caller's
    transaction, the competition's row locked)."""
    competition.final_table = json.loads(json.dumps([dict(row) for row in table]))
    competition.status = "done"
    competition.finished = now
