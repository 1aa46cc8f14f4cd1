"""Reads behind the leaderboards' and the tournaments' pages: the rated rule sets, a rule
set by name, the tournaments with their matches counted, one tournament's facts for its
page, its finished matches, its owner.

Queries live in the store (docs/architecture.md): callers get plain values, frozen
dataclasses and detached rows, never a session.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import bindparam, func, select, text
from sqlalchemy.orm import Session

from arena.engine.rules import MAX_PLAYERS
from arena.store.db import Store
from arena.store.models import (
    Bot,
    BotVersion,
    Match,
    RuleSet,
    SubmissionTest,
    Tournament,
    TournamentEntrant,
    User,
)
from arena.store.models import Rating as RatingRow
from arena.store.queue import FINISHED

__all__ = [
    "GameGroup",
    "TournamentPage",
    "TournamentTally",
    "entrant_names",
    "finished_match_ids",
    "newest_rule_set_id",
    "rule_set_names",
    "tournament_owner",
    "tournament_page",
    "tournament_tally",
    "tournament_totals",
    "tournaments_holding",
]


def rule_set_names(store: Store) -> list[str]:
    """The names of the rule sets with stored ratings or a played match, alphabetically (a
    tournament cancelled before any game, or not yet begun, makes no leaderboard tab)."""
    with store.read() as session:
        rated = select(RatingRow.rule_set_id)
        played = select(Tournament.rule_set_id).where(  # one index probe a tournament
            select(Match.id)
            .where(Match.tournament_id == Tournament.id, Match.status == "done")
            .exists()
        )
        names = session.scalars(
            select(RuleSet.name)
            .where(RuleSet.id.in_(rated.union(played).scalar_subquery()))
            .distinct()
            .order_by(RuleSet.name)
        )
        return list(names)


def newest_rule_set_id(store: Store, rules: str) -> int | None:
    """The id of the newest stored rule set called ``rules``, or None."""
    with store.read() as session:
        return session.scalar(
            select(RuleSet.id).where(RuleSet.name == rules).order_by(RuleSet.id.desc()).limit(1)
        )


def tournament_totals(
    store: Store,
) -> list[tuple[str, str, str, str, int, int, int, int, datetime]]:
    """Every stored tournament but the submissions' tests (a grade is its student's and
    teachers' only: arena.service.assignment_views.check_grading_visible), newest first,
    as (name, status, format, rules, players, matches, matches played (done), matches
    void, created)."""
    with store.read() as session:
        counts = (
            select(
                Match.tournament_id,
                func.count().label("matches"),
                func.count().filter(Match.status == "done").label("done"),
                func.count().filter(Match.status == "void").label("void"),
            )
            .group_by(Match.tournament_id)
            .subquery()
        )
        rows = session.execute(
            select(
                Tournament.name,
                Tournament.status,
                Tournament.format,
                RuleSet.name,
                Tournament.players,
                func.coalesce(counts.c.matches, 0),
                func.coalesce(counts.c.done, 0),
                func.coalesce(counts.c.void, 0),
                Tournament.created,
            )
            .join(RuleSet, RuleSet.id == Tournament.rule_set_id)
            .outerjoin(counts, counts.c.tournament_id == Tournament.id)
            .where(Tournament.id.not_in(select(SubmissionTest.tournament_id)))
            .order_by(Tournament.id.desc())
        ).all()
    return [
        (name, status, fmt, rules, players, matches, done, void, created)
        for name, status, fmt, rules, players, matches, done, void, created in rows
    ]


def finished_match_ids(store: Store, tournament_id: int) -> set[int]:
    """The ids of the tournament's finished (done or void) matches."""
    with store.read() as session:
        return set(
            session.scalars(
                select(Match.id).where(
                    Match.tournament_id == tournament_id, Match.status.in_(FINISHED)
                )
            )
        )


@dataclass(frozen=True, slots=True)
class GameGroup:
    """Done games of a tournament alike in what its page counts: the same entrant label
    at each seat, the same places, the same forfeiting seat (None: none) and ending.

    Attributes:
        points: each seat's points summed over the group's games.
        count: its number of games.
    """

    labels: tuple[str, ...]
    places: tuple[int, ...]
    fault_seat: int | None
    termination: str
    points: tuple[int, ...]
    count: int


@dataclass(frozen=True, slots=True)
class TournamentTally:
    """A tournament's finished matches as its page counts them (:func:`tournament_tally`).

    Attributes:
        groups: its done games, grouped (:class:`GameGroup`).
        void: its void matches, as (key, reason).
    """

    groups: list[GameGroup]
    void: list[tuple[str, str]]


# A tournament's done games grouped by the database (labels, places, forfeiting seat,
# ending), each group's count and its seats' points summed: the page's standings, crosstable,
# faults and rating fit come from these groups (a few per match) without sending a game's
# JSON to Python. {ids}: a filter on match ids, or nothing; {points}: a sum per seat.
_TALLY_SQL = {
    "sqlite": """
        WITH played AS MATERIALIZED (
            SELECT coalesce(m.labels, m.seats) AS labels,
                   json_extract(m.result, g.fullkey || '.places') AS places,
                   json_extract(m.result, g.fullkey || '.verdict.seat') AS fault_seat,
                   json_extract(m.result, g.fullkey || '.termination') AS termination,
                   json_extract(m.result, g.fullkey || '.points') AS points
            FROM matches AS m, json_each(m.result, '$.games') AS g
            WHERE m.tournament_id = :tournament AND m.status = 'done' {ids}
        )
        SELECT labels, places, fault_seat, termination, count(*), {points}
        FROM played GROUP BY labels, places, fault_seat, termination
    """,
    "postgresql": """
        SELECT coalesce(m.labels, m.seats)::text, (g.value -> 'places')::text,
               (g.value -> 'verdict' ->> 'seat')::int, g.value ->> 'termination', count(*),
               {points}
        FROM matches AS m CROSS JOIN LATERAL json_array_elements(m.result -> 'games') AS g(value)
        WHERE m.tournament_id = :tournament AND m.status = 'done' {ids}
        GROUP BY 1, 2, 3, 4
    """,
}
_POINTS_SQL = {
    "sqlite": "sum(json_extract(points, '$[{seat}]'))",
    "postgresql": "sum((g.value -> 'points' ->> {seat})::bigint)",
}
#: Match ids a tally's query names at most (the rest in further queries).
_IDS_A_QUERY = 1000


def tournament_tally(
    store: Store, tournament_id: int, only: Collection[int] | None = None
) -> TournamentTally:
    """The tournament's finished matches (``only``: these ids only) as its page counts
    them: the done games grouped by the database, and the void matches."""
    dialect = store.dialect
    points = ", ".join(_POINTS_SQL[dialect].format(seat=seat) for seat in range(MAX_PLAYERS))
    chunks: list[list[int] | None] = [None]
    if only is not None:
        wanted = sorted(only)
        chunks = [wanted[i : i + _IDS_A_QUERY] for i in range(0, len(wanted), _IDS_A_QUERY)]
    groups: list[GameGroup] = []
    void: list[tuple[str, str]] = []
    parsed: dict[str, Any] = {}  # labels and places, as JSON text: a few groups share each
    with store.read() as session:
        for ids in chunks:
            sql = _TALLY_SQL[dialect].format(
                ids="" if ids is None else "AND m.id IN :ids", points=points
            )
            query, values = text(sql), {"tournament": tournament_id, "ids": ids}
            voided = select(Match.key, Match.result).where(
                Match.tournament_id == tournament_id, Match.status == "void"
            )
            if ids is not None:
                query = query.bindparams(bindparam("ids", expanding=True))
                voided = voided.where(Match.id.in_(ids))
            for labels, places, seat, ending, count, *sums in session.execute(query, values):
                groups.append(_group(parsed, labels, places, seat, ending, count, sums))
            for key, result in session.execute(voided):
                void.append((str(key), str((result or {}).get("void", "void"))))
    return TournamentTally(groups, void)


def _group(
    parsed: dict[str, Any],
    labels: str,
    places: str | None,
    seat: Any,
    ending: object,
    count: int,
    sums: list[Any],
) -> GameGroup:
    """A group of the tally's query as a :class:`GameGroup` (JSON parsed once a text)."""
    seats = parsed.get(labels)
    if seats is None:
        seats = parsed[labels] = tuple(str(label) for label in json.loads(labels))
    found: tuple[int, ...] = ()
    if places is not None:
        found = parsed.get(places) or parsed.setdefault(places, _places(places))
    return GameGroup(
        labels=seats,
        places=found,
        fault_seat=None if seat is None else int(seat),
        termination=str(ending or ""),
        points=tuple(int(sums[s] or 0) for s in range(len(seats))),
        count=int(count),
    )


def _places(text: str) -> tuple[int, ...]:
    found = json.loads(text)
    return tuple(int(p) for p in found) if isinstance(found, list) else ()


@dataclass(frozen=True, slots=True)
class TournamentPage:
    """A tournament with what its page counts beside its matches.

    Attributes:
        tournament: the tournament (detached: read its columns only).
        rules: its rule set's name (None: missing).
        owner: its owner's name (None: the operator's).
        games_total: games of all its matches; ``games_done``: of its done matches.
        labels: its entrants' labels, sorted.
        names: each entrant's label → its stored version (owner's name, bot's name,
            version number).
    """

    tournament: Tournament
    rules: str | None
    owner: str | None
    games_total: int
    games_done: int
    labels: list[str]
    names: dict[str, tuple[str, str, int]] = field(default_factory=dict)


def tournament_page(store: Store, name: str) -> TournamentPage | None:
    """The tournament called ``name`` with its page's counts, or None."""
    with store.read() as session:
        tournament = session.scalar(select(Tournament).where(Tournament.name == name))
        if tournament is None:
            return None
        rules = session.scalar(select(RuleSet.name).where(RuleSet.id == tournament.rule_set_id))
        owner = (
            None
            if tournament.owner_id is None
            else session.scalar(select(User.name).where(User.id == tournament.owner_id))
        )
        games_total = session.scalar(
            select(func.coalesce(func.sum(Match.games), 0)).where(
                Match.tournament_id == tournament.id
            )
        )
        games_done = session.scalar(  # a done match has stored all its games
            select(func.coalesce(func.sum(Match.games), 0)).where(
                Match.tournament_id == tournament.id, Match.status == "done"
            )
        )
        labels, names = _entrants(session, tournament.id)
        session.expunge(tournament)
    return TournamentPage(
        tournament, rules, owner, games_total or 0, games_done or 0, labels, names
    )


def _entrants(
    session: Session, tournament_id: int
) -> tuple[list[str], dict[str, tuple[str, str, int]]]:
    """The tournament's entrant labels, sorted, and the stored version of each (owner's
    name, bot's name, version number), in one query."""
    rows = session.execute(
        select(TournamentEntrant.label, User.name, Bot.name, BotVersion.version)
        .outerjoin(BotVersion, BotVersion.id == TournamentEntrant.bot_version_id)
        .outerjoin(Bot, Bot.id == BotVersion.bot_id)
        .outerjoin(User, User.id == Bot.owner_id)
        .where(TournamentEntrant.tournament_id == tournament_id)
        .order_by(TournamentEntrant.label)
    ).all()
    names = {
        label: (owner, bot, number)
        for label, owner, bot, number in rows
        if owner is not None and bot is not None and number is not None
    }
    return [label for label, *_ in rows], names


def entrant_names(store: Store, name: str) -> dict[str, tuple[str, str, int]]:
    """The entrants of the tournament called ``name``: label → its stored version (owner's
    name, bot's name, version number); {} when there is no such tournament."""
    with store.read() as session:
        tournament_id = session.scalar(select(Tournament.id).where(Tournament.name == name))
        if tournament_id is None:
            return {}
        return _entrants(session, tournament_id)[1]


def tournament_owner(store: Store, name: str) -> tuple[int, int | None] | None:
    """(id, owner's account id or None) of the tournament called ``name``, or None."""
    with store.read() as session:
        row = session.execute(
            select(Tournament.id, Tournament.owner_id).where(Tournament.name == name)
        ).first()
        return None if row is None else (row[0], row[1])


def tournaments_holding(store: Store, owner_ids: frozenset[int]) -> set[str]:
    """The names of the tournaments with an entrant owned by one of ``owner_ids``."""
    if not owner_ids:
        return set()
    with store.read() as session:
        return {
            str(name)
            for name in session.scalars(
                select(Tournament.name)
                .join(TournamentEntrant, TournamentEntrant.tournament_id == Tournament.id)
                .join(BotVersion, BotVersion.id == TournamentEntrant.bot_version_id)
                .join(Bot, Bot.id == BotVersion.bot_id)
                .where(Bot.owner_id.in_(owner_ids))
                .distinct()
            )
        }
