"""Reads of stored games that :mod:`arena.service.games` shows: the done matches a game list
looks through (newest first, a few at a time) and their game summaries (taken out of the
result's JSON by the database), one game's record, a duplicate-deal group, a bot's record
against each opponent, a tournament's matches.

Queries live in the store (docs/architecture.md): callers get plain values and frozen
dataclasses, never a session. A game list is one read held open while the caller goes
through it (:func:`game_scan`), so that it stops reading as soon as its page is full.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, Integer, Row, Select, bindparam, func, select, text, tuple_
from sqlalchemy.orm import Session, aliased, defer

from arena.store.db import Store, as_utc
from arena.store.models import (
    Bot,
    BotVersion,
    GameRecord,
    Match,
    MatchSeat,
    PairRecord,
    RuleSet,
    SubmissionTest,
    Tournament,
    User,
)
from arena.store.models import TournamentEntrant as Entrant
from arena.store.records import load_record

__all__ = [
    "SCAN_LIMIT",
    "DoneMatch",
    "GameScan",
    "MatchRow",
    "MatchScan",
    "StoredSummary",
    "VersionNames",
    "duplicate_group",
    "game_scan",
    "game_summary",
    "lists_version",
    "opponent_sums",
    "tournament_matches",
]

#: Matches read from the database at a time while looking for a page of games.
_CHUNK = 200
#: At most this many matches are looked through for one page (a filter that matches
#: nothing in a big database says "none among the latest N matches", never scans forever).
SCAN_LIMIT = 20_000
#: A bot with fewer matches than this is looked up by its list of matches (sorted by
#: finish); one with more, by a probe of each match the list walks through (newest first).
FEW_MATCHES = 2_000


@dataclass(slots=True)
class VersionNames:
    """Bot version ids → (``owner/bot@vN``, owner id, bot id), as loaded so far."""

    known: dict[int, tuple[str, int, int]] = field(default_factory=dict)

    def __getitem__(self, version_id: int) -> tuple[str, int, int]:
        return self.known.get(version_id, (f"version {version_id}", 0, 0))


# Bot versions' names (built once: a list reads them for each match it shows).
_NAMES = (
    select(BotVersion.id, User.name, Bot.name, BotVersion.version, User.id, Bot.id)
    .join(Bot, Bot.id == BotVersion.bot_id)
    .join(User, User.id == Bot.owner_id)
    .where(BotVersion.id.in_(bindparam("versions", expanding=True)))
)


def _load_names(session: Session, names: VersionNames, ids: Sequence[int]) -> None:
    """Add the names of the versions in ``ids`` that ``names`` does not know yet."""
    missing = sorted(set(ids) - set(names.known))
    if not missing:
        return
    rows = session.execute(_NAMES, {"versions": missing}).all()
    for vid, owner, bot, number, owner_id, bot_id in rows:
        names.known[vid] = (f"{owner}/{bot}@v{number}", owner_id, bot_id)


# A bot's id by its owner's and its name (users' and bots' unique keys).
_BOT_ID = (
    select(Bot.id)
    .join(User, User.id == Bot.owner_id)
    .where(User.name == bindparam("owner"), Bot.name == bindparam("name"))
)


def _bot_id(session: Session, ref: tuple[str, str]) -> int:
    owner, name = ref
    found = session.scalar(_BOT_ID, {"owner": owner, "name": name})
    if found is None:
        raise LookupError(f"no bot {owner}/{name}")
    return int(found)


@dataclass(frozen=True, slots=True)
class DoneMatch:
    """A done match as a game list shows it (its result is not read with it).

    Attributes:
        seats: the bot version id at each seat.
        labels: each seat's entrant label (the version id when the match has none).
        pruned: when retention deleted its games' records (None: kept).
    """

    id: int
    tournament: str
    rules: str
    teams: bool
    seats: tuple[int, ...]
    labels: tuple[str, ...]
    finished: datetime | None
    pruned: datetime | None = None


def _done_match(match: Match | Row[Any], tournament: str, rules: str, teams: object) -> DoneMatch:
    seats = tuple(int(v) for v in match.seats)
    return DoneMatch(
        id=match.id,
        tournament=tournament,
        rules=rules,
        teams=bool(teams),
        seats=seats,
        labels=tuple(str(label) for label in (match.labels or seats)),
        finished=None if match.finished is None else as_utc(match.finished),
        pruned=None if match.records_pruned is None else as_utc(match.records_pruned),
    )


# The done matches a game list looks through, newest first, with what its rows show (built
# once; a list's filters add to it): a match's result holds every game's summary (2,000
# games: ~0.5 MB of JSON), read only for the matches the page reaches, once their seats
# passed the filter (:meth:`GameScan.newest_games`).
_LISTED = (
    select(
        Match.id,
        Match.seats,
        Match.labels,
        Match.finished,
        Match.records_pruned,
        Tournament.name.label("tournament"),
        RuleSet.name.label("rules"),
        Tournament.teams,
    )
    .join(Tournament, Tournament.id == Match.tournament_id)
    .join(RuleSet, RuleSet.id == Tournament.rule_set_id)
    .where(Match.status == "done")
    # a submission's test is its student's and teachers' (check_grading_visible)
    .where(Tournament.id.not_in(select(SubmissionTest.tournament_id)))
    .order_by(Match.finished.desc(), Match.id.desc())
)
# The matches the list walks, newest first, by the index its order follows: windows of it
# bound what one statement reads when the filters are probes (a filter that matches nothing
# reads no more than SCAN_LIMIT matches); a bot's or its faults' list of matches bounds a
# statement by itself (FEW_MATCHES at most).
_WALK = select(Match.finished, Match.id).where(Match.status == "done")
# A bot's matches, counted up to FEW_MATCHES (match_seats' index by bot).
_FEW_MATCHES = select(func.count()).select_from(
    select(MatchSeat.match_id)
    .where(MatchSeat.bot_id == bindparam("bot"))
    .limit(bindparam("few", type_=Integer))
    .subquery()
)
# When a done match finished (a cursor's start).
_FINISHED = select(Match.finished).where(Match.id == bindparam("match"), Match.status == "done")


@dataclass(frozen=True, slots=True)
class MatchScan:
    """Which done matches a game list looks through; every field left None/empty matches all.

    Attributes:
        held: bots that must each hold a seat (through match_seats' index by bot).
        faulted: a seat forfeited a game (``mine``: one of ``mine``'s seats did).
        mine: the bot whose forfeits ``faulted == "mine"`` means.
    """

    tournament: str | None = None
    rules: str | None = None
    held: tuple[int, ...] = ()
    faulted: str | None = None
    mine: int | None = None


# A match's game summaries by position in ``result.games``, read by the database out of the
# result's JSON (a 2,000-game match holds ~0.3 MB of it: decoding it whole in Python took most
# of a game list): its length, and the summaries from :low to :high, the last first.
_GAMES_SQL = {
    dialect: (text(count), text(games))
    for dialect, (count, games) in {
        "sqlite": (
            "SELECT json_array_length(result, '$.games') FROM matches WHERE id = :match",
            "SELECT g.value FROM matches, json_each(matches.result, '$.games') AS g "
            "WHERE matches.id = :match AND g.key >= :low AND g.key < :high ORDER BY g.key DESC",
        ),
        "postgresql": (
            "SELECT json_array_length(result -> 'games') FROM matches WHERE id = :match",
            "SELECT g.value FROM matches, json_array_elements(matches.result -> 'games') "
            "WITH ORDINALITY AS g(value, n) "
            "WHERE matches.id = :match AND g.n > :low AND g.n <= :high ORDER BY g.n DESC",
        ),
    }.items()
}


class GameScan:
    """One read of the stored games, held open while a game list is built (from
    :func:`game_scan`): the caller asks for what it needs as it goes and stops reading when
    its page is full. Names of bot versions loaded here are kept in :attr:`names`."""

    def __init__(self, session: Session) -> None:
        self._session = session
        self.names = VersionNames()
        #: Whether :meth:`matches` stopped at :data:`SCAN_LIMIT` matches looked through.
        self.truncated = False

    def bot_id(self, ref: tuple[str, str]) -> int:
        """The id of bot ``(owner, name)``.

        Raises:
            LookupError: no such bot.
        """
        return _bot_id(self._session, ref)

    def entrant_bots(self, tournament: str | None, labels: Sequence[str]) -> list[int]:
        """The bots behind these entrant labels of ``tournament`` ([] without both)."""
        if not labels or tournament is None:
            return []
        return list(
            self._session.scalars(
                select(BotVersion.bot_id)
                .join(Entrant, Entrant.bot_version_id == BotVersion.id)
                .join(Tournament, Tournament.id == Entrant.tournament_id)
                .where(Tournament.name == tournament, Entrant.label.in_(labels))
            )
        )

    def load_names(self, ids: Sequence[int]) -> None:
        """Load the names of the versions in ``ids`` into :attr:`names` (those not known)."""
        _load_names(self._session, self.names, ids)

    def matches(self, scan: MatchScan, start: int | None = None) -> Iterator[DoneMatch]:
        """The done matches ``scan`` picks, newest first, read a few at a time (at most
        :data:`SCAN_LIMIT`); with ``start``, from done match ``start`` on (it included,
        when ``scan`` picks it): each read starts after the last match read, by the game
        lists' index (finished, id), so a deep page costs what the first one does.

        Raises:
            LookupError: ``start`` is no done match.
        """
        query, walk = _LISTED, _WALK
        if scan.tournament is not None:
            query = query.where(Tournament.name == scan.tournament)
        if scan.rules is not None:
            query = query.where(RuleSet.name == scan.rules)
        if scan.tournament is not None:
            walk = walk.join(Tournament, Tournament.id == Match.tournament_id).where(
                Tournament.name == scan.tournament
            )
        listed = False
        for bot in scan.held:
            condition, few = self._holding(bot)
            query, listed = query.where(condition), listed or few
        if scan.faulted == "mine" and scan.mine is not None:  # the bot's forfeiting seats
            listed = True
            query = query.where(
                Match.id.in_(
                    select(MatchSeat.match_id).where(
                        MatchSeat.bot_id == scan.mine, MatchSeat.faults > 0
                    )
                )
            )
        elif scan.faulted is not None:  # per match, through match_seats' key
            query = query.where(
                select(MatchSeat.match_id)
                .where(MatchSeat.match_id == Match.id, MatchSeat.faults > 0)
                .exists()
            )
        after: tuple[Any, int] | None = None
        if start is not None:
            finished = self._session.scalar(_FINISHED, {"match": start})
            if finished is None:
                raise LookupError(f"no finished match {start}")
            query = query.where(tuple_(Match.finished, Match.id) <= tuple_(finished, start))
            walk = walk.where(tuple_(Match.finished, Match.id) <= tuple_(finished, start))
        read, size = 0, 16  # most pages need a match or two: start small, then read more
        while read < SCAN_LIMIT:
            page, window = query, walk
            if after is not None:
                page = page.where(tuple_(Match.finished, Match.id) < tuple_(*after))
                window = window.where(tuple_(Match.finished, Match.id) < tuple_(*after))
            low = None
            if not listed:  # the window's oldest match: the statement reads no further
                low = self._session.execute(
                    window.order_by(Match.finished.desc(), Match.id.desc())
                    .offset(_CHUNK - 1)
                    .limit(1)
                ).first()
                if low is not None:
                    page = page.where(tuple_(Match.finished, Match.id) >= tuple_(*low))
            rows = self._session.execute(page.limit(size)).all()
            yield from (_done_match(m, m.tournament, m.rules, m.teams) for m in rows)
            if len(rows) == size:  # more may follow in the window
                read += size
                after = (rows[-1].finished, rows[-1].id)
                size = min(_CHUNK, 2 * size)
            elif low is None:  # the last window, or the list's last matches
                return
            else:  # the window is read: the next one starts below it
                read += _CHUNK
                after = (low[0], low[1])
        self.truncated = True

    def _holding(self, bot: int) -> tuple[ColumnElement[bool], bool]:
        """The matches where ``bot`` holds a seat, as a condition the list's walk can use,
        and whether it is a list: a bot with few matches, the list of them (match_seats'
        index by bot, sorted once); a bot in many, a probe of each match the walk reaches by
        its key (sorting every match of a bot that plays in most of them cost the whole
        table)."""
        matches = self._session.scalar(_FEW_MATCHES, {"bot": bot, "few": FEW_MATCHES}) or 0
        if matches < FEW_MATCHES:
            return Match.id.in_(select(MatchSeat.match_id).where(MatchSeat.bot_id == bot)), True
        probe = (
            select(MatchSeat.match_id)
            .where(MatchSeat.match_id == Match.id, MatchSeat.bot_id == bot)
            .exists()
        )
        return probe, False

    def newest_games(self, match_id: int, below: int | None = None) -> Iterator[dict[str, Any]]:
        """A done match's game summaries (``result.games``), the last first, read a few at
        a time as the caller goes on (most pages need the last few dozen); with ``below``,
        only games of a lower index (a match's games are stored in index order)."""
        session = self._session
        count_sql, games_sql = _GAMES_SQL[session.get_bind().dialect.name]
        high = session.scalar(count_sql, {"match": match_id}) or 0
        if below is not None:
            high = min(high, below)
        size = 64
        while high > 0:
            low = max(0, high - size)
            for value in session.scalars(games_sql, {"match": match_id, "low": low, "high": high}):
                game = json.loads(value) if isinstance(value, str) else value
                if isinstance(game, dict) and (below is None or _index(game) < below):
                    yield game
            high, size = low, 2 * size


def _index(game: dict[str, Any]) -> int:
    index = game.get("index")
    return index if isinstance(index, int) else 0


def lists_version(store: Store) -> tuple[Any, ...]:
    """What changes a game list's pages: the newest done match's (finished, id) (a first
    page), and the latest pruning of records (a row's "record pruned"); two reads of an
    index each (``ix_matches_status_finished``, ``ix_matches_unpruned``), in one statement."""
    with store.read_columns() as connection:
        row = connection.execute(_LISTS_VERSION).first()
        if row is None:  # no done match
            return (connection.scalar(_PRUNED),)
    return tuple(row)


_NEWEST = (
    select(Match.finished, Match.id)
    .where(Match.status == "done")
    .order_by(Match.finished.desc(), Match.id.desc())
    .limit(1)
    .subquery()
)
_PRUNED = select(func.max(Match.records_pruned)).where(Match.status == "done")
_LISTS_VERSION = select(_NEWEST.c.finished, _NEWEST.c.id, _PRUNED.scalar_subquery())


@contextmanager
def game_scan(store: Store) -> Iterator[GameScan]:
    """A :class:`GameScan` over one read of ``store``, for the ``with`` block."""
    with store.read() as session:
        yield GameScan(session)


@dataclass(frozen=True, slots=True)
class StoredSummary:
    """One stored game: its match, its summary (its entry in the result), its record, and
    the names of the match's bot versions."""

    match: DoneMatch
    game: dict[str, Any]
    #: None: retention pruned it (``match.pruned`` says when).
    record: dict[str, Any] | None
    names: VersionNames


def game_summary(store: Store, match_id: int, index: int) -> StoredSummary | None:
    """Game ``index`` of done match ``match_id``: summary, record and names, or None (also
    when its record is missing, unless retention pruned it: then ``record`` is None)."""
    with store.read() as session:
        found = session.execute(
            select(
                Match,
                Tournament.name,
                RuleSet.name,
                Tournament.teams,
                # the game's summary where the worker puts it (games in index order): the
                # database reads it out of the result, Python never decodes the whole result
                Match.result[("games", index)],
            )
            .join(Tournament, Tournament.id == Match.tournament_id)
            .join(RuleSet, RuleSet.id == Tournament.rule_set_id)
            .where(Match.id == match_id, Match.status == "done")
            .options(defer(Match.result))
        ).first()
        if found is None:
            return None
        match, tournament, rules, teams, game = found
        record = load_record(store, session, match_id, index)
        if record is None and match.records_pruned is None:  # never stored
            return None
        if not isinstance(game, dict) or game.get("index") != index:  # elsewhere: look for it
            games = (match.result or {}).get("games", [])
            game = next((g for g in games if g.get("index") == index), None)
            if game is None:
                return None
        done = _done_match(match, tournament, rules, teams)
        names = VersionNames()
        _load_names(session, names, done.seats)
    return StoredSummary(done, game, record, names)


def duplicate_group(store: Store, match_id: int, index: int) -> list[tuple[int, int]]:
    """The games that played the same deals as game ``index`` of match ``match_id`` with
    the seats rotated (this game included), as (match id, game index) in rotation order;
    [] when the match is not part of a group or a rotation's game is missing."""
    with store.read() as session:
        match = session.get(Match, match_id)
        if match is None or match.deal_group is None or match.status != "done":
            return []
        rows = session.execute(
            select(Match.id, Match.status, Match.rotation)
            .where(
                Match.tournament_id == match.tournament_id,
                Match.deal_group == match.deal_group,
            )
            .order_by(Match.rotation, Match.id)
        ).all()
        done = [row.id for row in rows if row.status == "done"]
        if len(done) != len(rows) or len(rows) < 2:
            return []
        found = set(
            session.scalars(
                select(GameRecord.match_id).where(
                    GameRecord.match_id.in_(done), GameRecord.game_index == index
                )
            )
        )
    if found != set(done):
        return []
    return [(group_match, index) for group_match in done]


def _opponent_sums_statement() -> Select[str, str, str, int, int, int, int]:
    mine, theirs = aliased(BotVersion), aliased(BotVersion)
    bot = bindparam("bot", type_=Integer)
    return (
        select(
            RuleSet.name,
            User.name,
            Bot.name,
            func.sum(PairRecord.games),
            func.sum(PairRecord.wins),
            func.sum(PairRecord.draws),
            func.sum(PairRecord.losses),
        )
        .select_from(PairRecord)
        .join(mine, mine.id == PairRecord.bot_version_id)
        .join(theirs, theirs.id == PairRecord.opponent_version_id)
        .join(Bot, Bot.id == theirs.bot_id)
        .join(User, User.id == Bot.owner_id)
        .join(RuleSet, RuleSet.id == PairRecord.rule_set_id)
        .where(mine.bot_id == bot, theirs.bot_id != bot)
        .group_by(RuleSet.name, User.name, Bot.name)
    )


# Built once: building it (two aliases of bot_versions, five joins) cost more CPU than the
# database's answer (pair_records' index by version).
_OPPONENT_SUMS = _opponent_sums_statement()


def opponent_sums(store: Store, owner: str, name: str) -> list[tuple[str, str, int, int, int, int]]:
    """The bot's pair records summed per rule set and opponent bot (every version of
    both): (rules, ``owner/bot``, games, wins, draws, losses), in no order.

    Raises:
        LookupError: no bot ``owner/name``.
    """
    with store.read() as session:
        bot = _bot_id(session, (owner, name))
        rows = session.execute(_OPPONENT_SUMS, {"bot": bot}).all()
    return [
        (rules, f"{other_owner}/{other}", int(games), int(wins), int(draws), int(losses))
        for rules, other_owner, other, games, wins, draws, losses in rows
    ]


@dataclass(frozen=True, slots=True)
class MatchRow:
    """One match of a tournament, for the API's list.

    Attributes:
        key: its key in the schedule (``r1-t0``, ``b00003-...``).
        status: ``pending``, ``running``, ``done`` or ``void``.
        labels: each seat's entrant label; ``seats``: each seat's ``owner/bot@vN``.
        games: games it has (done) or will have.
        void: why it is void (a harness failure, a cancel, a decided compare), or None.
    """

    id: int
    key: str
    status: str
    labels: tuple[str, ...]
    seats: tuple[str, ...]
    games: int
    attempts: int
    finished: datetime | None
    void: str | None


def tournament_matches(
    store: Store, tournament: str, *, status: str | None = None, limit: int = 50, offset: int = 0
) -> tuple[int, list[MatchRow]]:
    """The tournament's matches in schedule order (``status``: only those), a page of them
    and how many there are.

    Raises:
        LookupError: no tournament of that name.
    """
    with store.read() as session:
        tournament_id = session.scalar(select(Tournament.id).where(Tournament.name == tournament))
        if tournament_id is None:
            raise LookupError(f"no tournament called {tournament!r}")
        query = select(Match).where(Match.tournament_id == tournament_id)
        if status is not None:
            query = query.where(Match.status == status)
        total = session.scalar(select(func.count()).select_from(query.subquery())) or 0
        matches = list(session.scalars(query.order_by(Match.id).limit(limit).offset(offset)))
        names = VersionNames()
        _load_names(session, names, [int(v) for m in matches for v in m.seats])
        rows = [
            MatchRow(
                id=m.id,
                key=m.key,
                status=m.status,
                labels=tuple(str(label) for label in (m.labels or m.seats)),
                seats=tuple(names[int(v)][0] for v in m.seats),
                games=m.games,
                attempts=m.attempts,
                finished=None if m.finished is None else as_utc(m.finished),
                void=(m.result or {}).get("void") if m.status == "void" else None,
            )
            for m in matches
        ]
    return total, rows
