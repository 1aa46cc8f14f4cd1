"""The queries behind stored standings and ratings (:mod:`arena.service.results` computes
with what they return): a tournament's finished matches and records, a rule set's games as a
histogram the database builds, and the ``ratings``, ``pair_records`` and ``rating_history``
rows a re-fit replaces.

Queries live in the store (docs/architecture.md): callers get plain values or detached rows,
never a session.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import (
    String,
    bindparam,
    case,
    cast,
    delete,
    func,
    insert,
    or_,
    select,
    text,
    update,
)
from sqlalchemy.orm import Session

from arena.engine.rules import Rules
from arena.store.db import Store, as_utc
from arena.store.models import (
    Bot,
    BotVersion,
    Match,
    PairRecord,
    RatingHistory,
    RuleSet,
    Tournament,
    User,
)
from arena.store.models import Rating as RatingRow
from arena.store.queue import FINISHED
from arena.store.records import load_records

__all__ = [
    "FinishedMatches",
    "RatingInputs",
    "RatingPoint",
    "RefitClock",
    "RuleSetRef",
    "book_refit",
    "claim_refit",
    "find_rule_set",
    "find_tournament",
    "finished_matches",
    "histogram_rows",
    "rating_history_rows",
    "rating_inputs",
    "rating_rows",
    "refit_clock",
    "release_refit",
    "stale_rule_sets",
    "tournament_records",
    "version_names",
    "write_ratings",
]

#: How a rule set is named here: the rules themselves, their version hash (``Rules.version``,
#: the ``rule_sets.version`` column) or the ``rule_sets`` row id.
RuleSetRef = Rules | str | int


def find_tournament(store: Store, name: str) -> Tournament:
    """The tournament called ``name`` (detached: read its columns only).

    Raises:
        LookupError: no tournament has that name.
    """
    with store.read() as session:
        tournament = session.scalar(select(Tournament).where(Tournament.name == name))
    if tournament is None:
        raise LookupError(f"no tournament called {name!r} in the database")
    return tournament


def find_rule_set(store: Store, rules: RuleSetRef) -> RuleSet:
    """The stored rule set ``rules`` names (see :data:`RuleSetRef`).

    Raises:
        LookupError: no such rule set is stored (no tournament was ever created under it).
    """
    with store.read() as session:
        return _rule_set(session, rules)


def _rule_set(session: Session, rules: RuleSetRef) -> RuleSet:
    if isinstance(rules, int):
        query = select(RuleSet).where(RuleSet.id == rules)
        shown = f"rule set id {rules}"
    else:
        version = rules.version if isinstance(rules, Rules) else rules
        query = select(RuleSet).where(RuleSet.version == version)
        shown = f"{rules.name} ({version})" if isinstance(rules, Rules) else f"version {version}"
    found = session.scalar(query)
    if found is None:
        raise LookupError(f"no rule set {shown} in the database: no tournament used it yet")
    return found


def version_names(store: Store, version_ids: Iterable[int]) -> dict[int, str]:
    """``owner/bot@vN`` for each bot version id (ids not stored are left out)."""
    with store.read() as session:
        return _version_names(session, version_ids)


def _version_names(session: Session, version_ids: Iterable[int]) -> dict[int, str]:
    ids = sorted(set(version_ids))
    if not ids:
        return {}
    rows = session.execute(
        select(BotVersion.id, User.name, Bot.name, BotVersion.version)
        .join(Bot, Bot.id == BotVersion.bot_id)
        .join(User, User.id == Bot.owner_id)
        .where(BotVersion.id.in_(ids))
    ).all()
    return {version_id: f"{owner}/{bot}@v{number}" for version_id, owner, bot, number in rows}


# --- a tournament's results ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RatingPoint:
    """A bot version's rating as one fit stored it: a point of a rule set's history
    (``rating_history``) or of a competition's ladder (``competition_ratings``)."""

    time: datetime
    rating: float
    low: float
    high: float
    games: int
    rank: int


@dataclass(frozen=True, slots=True)
class FinishedMatches:
    """A tournament's done and void matches (detached rows, by id), whether it is played in
    teams, and, when asked for, its game records by (match id, game index)."""

    teams: bool
    matches: list[Match]
    records: dict[tuple[int, int], dict[str, Any]]


def finished_matches(
    store: Store, tournament_id: int, *, records: bool = False, only: Collection[int] | None = None
) -> FinishedMatches:
    """The tournament's done and void matches (``only``: these match ids only), with its
    game records when ``records`` (one more query, over ``game_records``), in one read.

    Raises:
        LookupError: no tournament has that id.
    """
    with store.read() as session:
        tournament = session.get(Tournament, tournament_id)
        if tournament is None:
            raise LookupError(f"no tournament with id {tournament_id} in the database")
        query = select(Match).where(
            Match.tournament_id == tournament_id, Match.status.in_(FINISHED)
        )
        if only is None:
            matches = list(session.scalars(query.order_by(Match.id)))
        else:
            wanted = sorted(only)
            matches = [
                match
                for start in range(0, len(wanted), 1000)  # bound the query's parameters
                for match in session.scalars(
                    query.where(Match.id.in_(wanted[start : start + 1000])).order_by(Match.id)
                )
            ]
        stored: dict[tuple[int, int], dict[str, Any]] = {}
        if records:
            found = load_records(store, session, Match.tournament_id == tournament_id)
            stored = {(match_id, index): record for match_id, index, record in found}
    return FinishedMatches(bool(tournament.teams), matches, stored)


def tournament_records(store: Store, tournament_id: int) -> Iterator[dict[str, Any]]:
    """Every stored game record of a tournament, by match id then game index, read in
    batches (a tournament may hold millions). Void matches have none.

    Raises:
        LookupError: no tournament has that id.
    """
    with store.read() as session:
        if session.get(Tournament, tournament_id) is None:
            raise LookupError(f"no tournament with id {tournament_id} in the database")
        for _, _, record in load_records(store, session, Match.tournament_id == tournament_id):
            yield record


# --- a rule set's ratings -----------------------------------------------------------------

# One row per (seat arrangement, finishing order, team play) of the done games of the rule
# set's tournaments, with its number of games: a histogram the database builds without
# sending every game's JSON to Python. Seats and places stay JSON text (grouped as text).
# SQLite: taking the places out of the match's result by the game's path, in a materialized
# CTE, measured 1.4 s for 1,000,000 games against 2.0 s for json_extract(g.value, ...) in
# the grouping query itself (benchmarks/stored_ratings.py).
_HISTOGRAM = {
    "sqlite": """
        WITH played AS MATERIALIZED (
            SELECT m.seats AS seats, json_extract(m.result, g.fullkey || '.places') AS places,
                   t.teams AS teams
            FROM matches AS m
            JOIN tournaments AS t ON t.id = m.tournament_id, json_each(m.result, '$.games') AS g
            WHERE {scope} AND m.status = 'done'
        )
        SELECT seats, places, teams, count(*) AS n FROM played GROUP BY seats, places, teams
    """,
    "postgresql": """
        SELECT m.seats::text AS seats, (g.value -> 'places')::text AS places, t.teams AS teams,
               count(*) AS n
        FROM matches AS m
        JOIN tournaments AS t ON t.id = m.tournament_id
        CROSS JOIN LATERAL json_array_elements(m.result -> 'games') AS g(value)
        WHERE {scope} AND m.status = 'done'
        GROUP BY 1, 2, 3
    """,
}


@dataclass(frozen=True, slots=True)
class RatingInputs:
    """What a re-fit reads, in one transaction.

    Attributes:
        rule_set_id: the rule set.
        histogram: (seats as JSON text, places as JSON text or None, teams, games) rows,
            one a group of identical done games.
        names: ``owner/bot@vN`` of every version seated in those games.
        last_games: when each version's last done match under the rule set finished.
        asked: the rule set's refits asked for when the read began (``rule_sets.
            refit_asked``): every match whose ask this counts is in ``histogram``.
    """

    rule_set_id: int
    histogram: list[tuple[str, str | None, bool, int]]
    names: dict[int, str]
    last_games: dict[int, datetime]
    asked: int = 0


def histogram_rows(
    session: Session,
    dialect: str,
    *,
    rule_set_id: int | None = None,
    tournament_id: int | None = None,
) -> list[tuple[str, str | None, bool, int]]:
    """The done games of every tournament under rule set ``rule_set_id``, or of the one
    tournament ``tournament_id``, as a histogram (:attr:`RatingInputs.histogram`'s rows).

    Raises:
        ValueError: neither or both of ``rule_set_id`` and ``tournament_id`` given.
    """
    if (rule_set_id is None) == (tournament_id is None):
        raise ValueError("give a rule set or a tournament, not both or neither")
    scope = "t.rule_set_id = :scope" if rule_set_id is not None else "m.tournament_id = :scope"
    value = rule_set_id if rule_set_id is not None else tournament_id
    query = text(_HISTOGRAM[dialect].format(scope=scope))
    return [
        (str(seats), places, bool(teams), int(count))
        for seats, places, teams, count in session.execute(query, {"scope": value})
    ]


def rating_inputs(store: Store, rules: RuleSetRef) -> RatingInputs:
    """The done games of every tournament played under ``rules`` as a histogram, the names
    of the versions in them and their last games' times.

    Raises:
        LookupError: the rule set is not stored.
    """
    with store.read() as session:
        rule_set = _rule_set(session, rules)
        # Read the asks first, in a statement of their own: every match asked for by then
        # was committed before it, so the histogram read after it holds that match.
        asked = int(
            session.scalar(select(RuleSet.refit_asked).where(RuleSet.id == rule_set.id)) or 0
        )
        rows = histogram_rows(session, store.dialect, rule_set_id=rule_set.id)
        versions = {version for row in rows for version in json.loads(row[0])}
        names = _version_names(session, versions)
        last_games = _last_games(session, rule_set.id)
    return RatingInputs(rule_set.id, rows, names, last_games, asked)


def _last_games(session: Session, rule_set_id: int) -> dict[int, datetime]:
    last: dict[int, datetime] = {}
    seats_text = cast(Match.seats, String)  # JSON has no equality on PostgreSQL: its text
    rows = session.execute(
        select(seats_text, func.max(Match.finished))
        .join(Tournament, Tournament.id == Match.tournament_id)
        .where(Tournament.rule_set_id == rule_set_id, Match.status == "done")
        .group_by(seats_text)
    )
    for seats, finished in rows:
        if finished is None:
            continue
        finished = as_utc(finished)
        for version in json.loads(seats):
            if version not in last or finished > last[version]:
                last[version] = finished
    return last


def write_ratings(
    store: Store,
    rule_set_id: int,
    ratings: Sequence[Mapping[str, Any]],
    now: datetime,
    pairs: Mapping[tuple[int, int], Sequence[int]],
    asked: int = 0,
) -> None:
    """Replace the rule set's ``ratings`` and ``pair_records`` rows (rewriting only the pairs
    whose records changed), append a
    ``rating_history`` row for each version whose games changed since its stored row (a
    new point for what it played, not one every live refit), and record the refit on the
    rule set (``refitted`` = ``now``; the asks it covers, ``asked``), in one transaction.

    ``ratings``: one mapping a version with ``bot_version_id``, ``rating``, ``low``,
    ``high``, ``games``, ``rank``, ``wins``, ``draws``, ``losses``, ``last_game``.
    ``pairs``: (version, opponent) -> (games, wins, draws, losses).
    """
    history_keys = ("bot_version_id", "rating", "low", "high", "games", "rank")
    rows = [{**r, "rule_set_id": rule_set_id, "computed": now} for r in ratings]
    with store.write() as session:
        if store.dialect == "postgresql":
            # Serialize re-fits of one rule set: two concurrent delete-then-insert
            # transactions would otherwise collide on the ratings' primary key.
            session.execute(
                text("SELECT pg_advisory_xact_lock(hashtext('arena.compete.ratings'), :id)"),
                {"id": rule_set_id},
            )
        before = {
            version: games
            for version, games in session.execute(
                select(RatingRow.bot_version_id, RatingRow.games).where(
                    RatingRow.rule_set_id == rule_set_id
                )
            )
        }
        history = [
            {"rule_set_id": rule_set_id, "time": now, **{key: r[key] for key in history_keys}}
            for r in ratings
            if before.get(r["bot_version_id"]) != r["games"]
        ]
        _write_pairs(session, rule_set_id, pairs)
        session.execute(delete(RatingRow).where(RatingRow.rule_set_id == rule_set_id))
        if rows:
            session.execute(insert(RatingRow), rows)
        if history:
            session.execute(insert(RatingHistory), history)
        session.execute(
            update(RuleSet)
            .where(RuleSet.id == rule_set_id)
            .values(
                refitted=now,
                refit_covered=case(
                    (RuleSet.refit_covered < asked, asked), else_=RuleSet.refit_covered
                ),
            )
        )


def _write_pairs(
    session: Session, rule_set_id: int, pairs: Mapping[tuple[int, int], Sequence[int]]
) -> None:
    """Make the rule set's ``pair_records`` rows ``pairs``, rewriting only the rows that
    changed: a live refit changes the pairs of the versions that just played, and rewriting
    all 40,000 pairs of 200 versions took most of its write."""
    existing = {
        (a, b): (games, wins, draws, losses)
        for a, b, games, wins, draws, losses in session.execute(
            select(
                PairRecord.bot_version_id,
                PairRecord.opponent_version_id,
                PairRecord.games,
                PairRecord.wins,
                PairRecord.draws,
                PairRecord.losses,
            ).where(PairRecord.rule_set_id == rule_set_id)
        )
    }
    wanted = {key: tuple(int(v) for v in value) for key, value in pairs.items()}
    stale = [key for key, value in existing.items() if wanted.get(key) != value]
    fresh = [key for key, value in wanted.items() if existing.get(key) != value]
    connection = session.connection()
    if stale:
        connection.execute(
            delete(PairRecord).where(
                PairRecord.rule_set_id == rule_set_id,
                PairRecord.bot_version_id == bindparam("a"),
                PairRecord.opponent_version_id == bindparam("b"),
            ),
            [{"a": a, "b": b} for a, b in stale],
        )
    paired = [
        {"rule_set_id": rule_set_id, "bot_version_id": a, "opponent_version_id": b,
         "games": games, "wins": wins, "draws": draws, "losses": losses}
        for a, b in fresh
        for games, wins, draws, losses in (wanted[a, b],)
    ]  # fmt: skip
    for start in range(0, len(paired), 5000):
        session.execute(insert(PairRecord), paired[start : start + 5000])


def rating_rows(store: Store, rules: RuleSetRef) -> tuple[list[RatingRow], dict[int, str]]:
    """The rule set's stored ``ratings`` rows (detached), best first, and the names of
    their versions.

    Raises:
        LookupError: the rule set is not stored.
    """
    with store.read() as session:
        rule_set = _rule_set(session, rules)
        stored = list(
            session.execute(
                select(RatingRow)
                .where(RatingRow.rule_set_id == rule_set.id)
                .order_by(RatingRow.rank, RatingRow.bot_version_id)
            ).scalars()
        )
        names = _version_names(session, (row.bot_version_id for row in stored))
    return stored, names


def rating_history_rows(
    store: Store, rules: RuleSetRef, version_id: int
) -> list[tuple[datetime, float, float, float, int, int]]:
    """Every (time, rating, low, high, games, rank) a version was given under the rule set,
    oldest first.

    Raises:
        LookupError: the rule set is not stored.
    """
    with store.read() as session:
        rule_set = _rule_set(session, rules)
        rows = session.execute(
            select(
                RatingHistory.time,
                RatingHistory.rating,
                RatingHistory.low,
                RatingHistory.high,
                RatingHistory.games,
                RatingHistory.rank,
            )
            .where(
                RatingHistory.rule_set_id == rule_set.id,
                RatingHistory.bot_version_id == version_id,
            )
            .order_by(RatingHistory.time, RatingHistory.id)
        ).all()
    return [
        (as_utc(when), rating, low, high, games, rank)
        for when, rating, low, high, games, rank in rows
    ]


# --- live ratings: when a rule set is refitted (arena.service.live) ------------------------


@dataclass(frozen=True, slots=True)
class RefitClock:
    """A rule set's live-ratings state (``rule_sets``' refit columns).

    Attributes:
        rule_set_id: the rule set.
        asked: refits asked for (one a done match; :func:`book_refit`).
        covered: the asks its stored ratings cover (:func:`write_ratings`).
        refitted: when its last refit began (None: never refitted since migration 0016).
        seconds: how long its last live refit took (None: not known).
        due: when the refit booked last is due (None: never booked).
        lease: until when the refit in flight holds the rule set (None or past: none).
    """

    rule_set_id: int
    asked: int
    covered: int
    refitted: datetime | None
    seconds: float | None
    due: datetime | None
    lease: datetime | None

    @property
    def changed(self) -> bool:
        """Whether a done match is not in the stored ratings yet (or they were never
        refitted here)."""
        return self.refitted is None or self.asked > self.covered


def _clock(row: RuleSet) -> RefitClock:
    def utc(value: datetime | None) -> datetime | None:
        return None if value is None else as_utc(value)

    return RefitClock(
        rule_set_id=row.id,
        asked=row.refit_asked or 0,
        covered=row.refit_covered or 0,
        refitted=utc(row.refitted),
        seconds=row.refit_seconds,
        due=utc(row.refit_due),
        lease=utc(row.refit_lease),
    )


def refit_clock(store: Store, rule_set_id: int) -> RefitClock:
    """The rule set's live-ratings state.

    Raises:
        LookupError: no rule set has that id.
    """
    with store.read() as session:
        return _clock(_rule_set(session, rule_set_id))


def book_refit(
    store: Store, match_id: int, now: datetime, due_after: Callable[[RefitClock], datetime]
) -> tuple[int, datetime] | None:
    """Count a refit asked for by done match ``match_id`` (after its result was committed)
    on its rule set, and book the refit that will cover it: unless one is due later than
    ``now`` already (its task will run after this ask, and read it), set the due time to
    ``due_after(clock)`` and return (rule set id, due time): the caller sends the task for
    then. None: a booked refit covers it, or the match is not stored. One transaction."""
    with store.write() as session:
        rule_set_id = session.scalar(
            select(Tournament.rule_set_id)
            .join(Match, Match.tournament_id == Tournament.id)
            .where(Match.id == match_id)
        )
        if rule_set_id is None:
            return None
        session.execute(
            update(RuleSet)
            .where(RuleSet.id == rule_set_id)
            .values(refit_asked=RuleSet.refit_asked + 1)
        )
        row = session.get(RuleSet, rule_set_id)
        assert row is not None
        clock = _clock(row)
        if clock.due is not None and clock.due > now:
            return None
        due = max(now, due_after(clock))
        row.refit_due = due
    return rule_set_id, due


def claim_refit(store: Store, rule_set_id: int, now: datetime, until: datetime) -> RefitClock:
    """Take the rule set's refit lease until ``until`` if no live lease holds it. Return
    its state as found (before the claim): the claim succeeded iff its ``lease`` was None
    or not after ``now``.

    Raises:
        LookupError: no rule set has that id.
    """
    with store.write() as session:
        row = session.get(RuleSet, rule_set_id, with_for_update=True)  # PostgreSQL: one claimer
        if row is None:
            raise LookupError(f"no rule set id {rule_set_id} in the database")
        clock = _clock(row)
        if clock.lease is None or clock.lease <= now:
            row.refit_lease = until
    return clock


def release_refit(store: Store, rule_set_id: int, seconds: float | None) -> None:
    """Give the rule set's refit lease back; record the refit's length (``seconds``; None:
    it failed, keep the last)."""
    values: dict[str, Any] = {"refit_lease": None}
    if seconds is not None:
        values["refit_seconds"] = seconds
    with store.write() as session:
        session.execute(update(RuleSet).where(RuleSet.id == rule_set_id).values(**values))


def stale_rule_sets(store: Store, before: datetime, *, now: datetime) -> list[int]:
    """The rule sets with a done match their ratings do not cover whose booked refit was
    due before ``before`` (its task was lost, or is long late) and whose refit lease does
    not hold at ``now`` (what :func:`claim_refit` can take: a refit in flight is not
    lost, and a task sent for it would only find it busy), by id."""
    with store.read() as session:
        return list(
            session.scalars(
                select(RuleSet.id)
                .where(
                    RuleSet.refit_asked > RuleSet.refit_covered,
                    RuleSet.refit_due < before,
                    or_(RuleSet.refit_lease.is_(None), RuleSet.refit_lease <= now),
                )
                .order_by(RuleSet.id)
            )
        )
