"""Reads behind the leaderboards' and the tournaments' pages: the rated rule sets, a rule
set by name, the tournaments with their matches counted, one tournament's facts for its
page, its finished matches, its owner.

Queries live in the store (docs/architecture.md): callers get plain values, frozen
dataclasses and detached rows, never a session.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import bindparam, func, select, text
from sqlalchemy.orm import Session

from arena.engine.rules import MAX_PLAYERS
from arena.store import tallies
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
from arena.store.models import TallyGroup as TallyRow

__all__ = [
    "GameGroup",
    "TournamentPage",
    "TournamentTally",
    "entrant_names",
    "newest_rule_set_id",
    "ratings_version",
    "rule_set_names",
    "stored_tally",
    "tournament_owner",
    "tournament_page",
    "tournament_tally",
    "tournament_totals",
    "tournaments_holding",
]


def rule_set_names(store: Store) -> list[str]:
    """The names of the rule sets with stored ratings or a played match, alphabetically (a
    tournament cancelled before any game, or not yet begun, makes no leaderboard tab)."""
    with store.read_columns() as connection:
        return list(connection.scalars(_RULE_SET_NAMES))


# The statement of :func:`rule_set_names` (built once: every game list and leaderboard
# reads it).
_RULE_SET_NAMES = (
    select(RuleSet.name)
    .where(
        RuleSet.id.in_(
            select(RatingRow.rule_set_id)
            .union(
                select(Tournament.rule_set_id).where(  # one index probe a tournament
                    select(Match.id)
                    .where(Match.tournament_id == Tournament.id, Match.status == "done")
                    .exists()
                )
            )
            .scalar_subquery()
        )
    )
    .distinct()
    .order_by(RuleSet.name)
)


def newest_rule_set_id(store: Store, rules: str) -> int | None:
    """The id of the newest stored rule set called ``rules``, or None."""
    with store.read() as session:
        return session.scalar(
            select(RuleSet.id).where(RuleSet.name == rules).order_by(RuleSet.id.desc()).limit(1)
        )


def ratings_version(store: Store, rule_set_id: int) -> tuple[datetime | None, int]:
    """When the rule set's stored ratings were last written and how many there are: a
    refit rewrites them all with its time, so this changes whenever they do (a reader
    keeps what it built from them until it changes)."""
    with store.read() as session:
        computed, count = session.execute(
            select(func.max(RatingRow.computed), func.count()).where(
                RatingRow.rule_set_id == rule_set_id
            )
        ).one()
    return computed, count


#: Each tournament's counts of matches (built once: building it cost more than its read on
#: the pages that list tournaments).
_MATCH_COUNTS = (
    select(
        Match.tournament_id,
        func.count().label("matches"),
        func.count().filter(Match.status == "done").label("done"),
        func.count().filter(Match.status == "void").label("void"),
    )
    .group_by(Match.tournament_id)
    .subquery()
)

#: :func:`tournament_totals`' rows.
_TOURNAMENT_TOTALS = (
    select(
        Tournament.name,
        Tournament.status,
        Tournament.format,
        RuleSet.name,
        Tournament.players,
        func.coalesce(_MATCH_COUNTS.c.matches, 0),
        func.coalesce(_MATCH_COUNTS.c.done, 0),
        func.coalesce(_MATCH_COUNTS.c.void, 0),
        Tournament.created,
    )
    .join(RuleSet, RuleSet.id == Tournament.rule_set_id)
    .outerjoin(_MATCH_COUNTS, _MATCH_COUNTS.c.tournament_id == Tournament.id)
    .where(Tournament.id.not_in(select(SubmissionTest.tournament_id)))
    .order_by(Tournament.id.desc())
)


def tournament_totals(
    store: Store,
) -> list[tuple[str, str, str, str, int, int, int, int, datetime]]:
    """Every stored tournament but the submissions' tests (a grade is its student's and
    teachers' only: arena.service.assignment_views.check_grading_visible), newest first,
    as (name, status, format, rules, players, matches, matches played (done), matches
    void, created)."""
    with store.read_columns() as connection:
        rows = connection.execute(_TOURNAMENT_TOTALS).all()
    return [
        (name, status, fmt, rules, players, matches, done, void, created)
        for name, status, fmt, rules, players, matches, done, void, created in rows
    ]


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


def tournament_tally(store: Store, tournament_id: int) -> TournamentTally:
    """The tournament's finished matches as its page counts them, counted from its games
    (the database grouping their JSON: time in proportion to its games): the reference
    :func:`stored_tally` equals, and what :func:`arena.store.tallies.fill` stores."""
    sql = tallies.grouped_sql(store.dialect, "m.tournament_id = :tournament AND m.status = 'done'")
    with store.read() as session:
        rows = session.execute(text(sql), {"tournament": tournament_id}).all()
        void = _void(session, tournament_id)
    parsed: dict[str, Any] = {}
    return TournamentTally([_group(parsed, *row[1:]) for row in rows], void)


def stored_tally(store: Store, tournament_id: int) -> TournamentTally:
    """The tournament's finished matches as its page counts them: its stored tally
    (``tournament_tallies``, a few rows a pair of entrants, kept up to date as each match
    is stored: arena.store.tallies) and its void matches."""
    with store.read() as session:
        rows = session.execute(
            select(
                TallyRow.tournament_id,
                TallyRow.labels,
                TallyRow.places,
                TallyRow.fault_seat,
                TallyRow.termination,
                TallyRow.count,
                *(getattr(TallyRow, f"points{seat}") for seat in range(MAX_PLAYERS)),
            )
            .where(TallyRow.tournament_id == tournament_id)
            .order_by(TallyRow.id)
        ).all()
        void = _void(session, tournament_id)
    parsed: dict[str, Any] = {}
    return TournamentTally([_group(parsed, *row[1:]) for row in rows], void)


def _void(session: Session, tournament_id: int) -> list[tuple[str, str]]:
    """The tournament's void matches as (key, reason)."""
    rows = session.execute(
        select(Match.key, Match.result).where(
            Match.tournament_id == tournament_id, Match.status == "void"
        )
    )
    return [(str(key), str((result or {}).get("void", "void"))) for key, result in rows]


def _group(
    parsed: dict[str, Any],
    labels: str,
    places: str | None,
    seat: Any,
    ending: object,
    count: int,
    *sums: Any,
) -> GameGroup:
    """A group of the tally (JSON parsed once a text) as a :class:`GameGroup`."""
    seats = parsed.get(labels)
    if seats is None:
        seats = parsed[labels] = tuple(str(label) for label in json.loads(labels))
    found: tuple[int, ...] = ()
    if places:
        found = parsed.get(places) or parsed.setdefault(places, _places(places))
    return GameGroup(
        labels=seats,
        places=found,
        fault_seat=None if seat is None or int(seat) == tallies.NO_SEAT else int(seat),
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


# The statements of :func:`tournament_page` (built once: building them cost more than
# the database's answers, each by an index).
_TOURNAMENT = select(Tournament).where(Tournament.name == bindparam("name"))
_RULES_NAME = select(RuleSet.name).where(RuleSet.id == bindparam("rule_set"))
_USER_NAME = select(User.name).where(User.id == bindparam("user"))
# its games, and those of its done matches (a done match has stored all its games)
_GAMES_TOTAL_DONE = select(
    func.coalesce(func.sum(Match.games), 0),
    func.coalesce(func.sum(Match.games).filter(Match.status == "done"), 0),
).where(Match.tournament_id == bindparam("tournament"))
_ENTRANTS = (
    select(TournamentEntrant.label, User.name, Bot.name, BotVersion.version)
    .outerjoin(BotVersion, BotVersion.id == TournamentEntrant.bot_version_id)
    .outerjoin(Bot, Bot.id == BotVersion.bot_id)
    .outerjoin(User, User.id == Bot.owner_id)
    .where(TournamentEntrant.tournament_id == bindparam("tournament"))
    .order_by(TournamentEntrant.label)
)


def tournament_page(store: Store, name: str) -> TournamentPage | None:
    """The tournament called ``name`` with its page's counts, or None."""
    with store.read() as session:
        tournament = session.scalar(_TOURNAMENT, {"name": name})
        if tournament is None:
            return None
        rules = session.scalar(_RULES_NAME, {"rule_set": tournament.rule_set_id})
        owner = (
            None
            if tournament.owner_id is None
            else session.scalar(_USER_NAME, {"user": tournament.owner_id})
        )
        games_total, games_done = session.execute(
            _GAMES_TOTAL_DONE, {"tournament": tournament.id}
        ).one()
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
    rows = session.execute(_ENTRANTS, {"tournament": tournament_id}).all()
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
