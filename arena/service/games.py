"""Stored games for the dashboard and the API: lists with filters, one game's record, a
bot's record against each opponent.

A done match keeps its games' results in ``matches.result`` (see
:mod:`arena.service.results`) and their records in ``game_records``. A list reads the
matches newest first and stops as soon as it has its page, so "a bot's recent games" costs
the matches it looks through, not the whole table; of each, it reads only the game summaries
it goes through (the database takes them out of the result's JSON). A game's replay is kept
per process (:class:`ReplayCache`): the viewer's steps replay nothing.

A game's record holds the forfeiting bot's message and stderr tail: who may see those is the
caller's decision (each row says whose bot holds each seat), :func:`redact_record` removes
them.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import func, select, text
from sqlalchemy.orm import Session, aliased, defer

from arena.engine.replay import Replay, replay_record
from arena.service.results import OUTCOMES, outcome
from arena.store.db import Store, as_utc
from arena.store.models import (
    Bot,
    BotVersion,
    GameRecord,
    Match,
    MatchSeat,
    PairRecord,
    RuleSet,
    Tournament,
    User,
)
from arena.store.models import TournamentEntrant as Entrant

__all__ = [
    "GAME_RESULTS",
    "GameFilter",
    "GamePage",
    "GameRow",
    "MatchRow",
    "OpponentRow",
    "ReplayCache",
    "ReplayedGame",
    "StoredGame",
    "duplicate_games",
    "game_list",
    "game_record",
    "match_list",
    "opponent_table",
    "record_verdict",
    "redact_record",
    "replayed_game",
]

#: A game's result for the bot a list is filtered on.
GAME_RESULTS = OUTCOMES
#: Matches read from the database at a time while looking for a page of games.
_CHUNK = 200
#: At most this many matches are looked through for one page (a filter that matches
#: nothing in a big database says "none among the latest N matches", never scans forever).
SCAN_LIMIT = 20_000
#: Replayed games a :class:`ReplayCache` keeps by default (a long game's frames take a few MB).
REPLAYS_KEPT = 32


@dataclass(frozen=True, slots=True)
class GameFilter:
    """Which games a list holds; every field left None matches all.

    Attributes:
        tournament: the tournament's name.
        bot: (owner, name): games with any version of that bot.
        opponent: (owner, name): games where this bot is at another seat than ``bot``'s.
        rules: the rule set's name.
        result: ``win``, ``draw`` or ``loss`` for ``bot`` (needs ``bot``).
        fault: ``any`` (a bot forfeited), ``none``, ``mine`` (``bot`` forfeited), or a
            fault's kind (``timeout``, ``crash``, ``illegal_move``, ``protocol_error``).
        labels: entrant labels that must all hold a seat (a crosstable cell's pairing).
        faulted: the entrant label whose seat forfeited.
    """

    tournament: str | None = None
    bot: tuple[str, str] | None = None
    opponent: tuple[str, str] | None = None
    rules: str | None = None
    result: str | None = None
    fault: str | None = None
    labels: tuple[str, ...] = ()
    faulted: str | None = None


@dataclass(frozen=True, slots=True)
class GameRow:
    """One stored game.

    Attributes:
        match_id, index: the game is ``index`` of match ``match_id`` (its record's key).
        seats: ``owner/bot@vN`` at each seat.
        owners: the account id owning each seat's bot.
        labels: each seat's entrant label in its tournament.
        places: each seat's place, 0 = first (partners share theirs).
        termination: how the game ended (``target``, or a bot's fault).
        fault_seat: the seat that forfeited, or None.
        outcome: ``win``/``draw``/``loss`` for the bot the list is filtered on, else None.
        fault_message: the forfeit's message (private to the bot's owner: the caller
            decides whether to show it).
    """

    match_id: int
    index: int
    tournament: str
    rules: str
    teams: bool
    seats: tuple[str, ...]
    owners: tuple[int, ...]
    labels: tuple[str, ...]
    places: tuple[int, ...]
    points: tuple[int, ...]
    termination: str
    fault_seat: int | None
    finished: datetime | None
    outcome: str | None = None
    fault_message: str | None = None


@dataclass(frozen=True, slots=True)
class GamePage:
    """A page of games, newest first; ``more``: there are older ones."""

    rows: list[GameRow]
    more: bool
    scanned: int = 0
    #: Whether the scan stopped at :data:`SCAN_LIMIT` matches before the page was full.
    truncated: bool = False


@dataclass(slots=True)
class _Names:
    """Bot version ids → (``owner/bot@vN``, owner id, bot id), loaded as needed."""

    session: Session
    known: dict[int, tuple[str, int, int]] = field(default_factory=dict)

    def load(self, ids: Sequence[int]) -> None:
        missing = sorted(set(ids) - set(self.known))
        if not missing:
            return
        rows = self.session.execute(
            select(BotVersion.id, User.name, Bot.name, BotVersion.version, User.id, Bot.id)
            .join(Bot, Bot.id == BotVersion.bot_id)
            .join(User, User.id == Bot.owner_id)
            .where(BotVersion.id.in_(missing))
        ).all()
        for vid, owner, bot, number, owner_id, bot_id in rows:
            self.known[vid] = (f"{owner}/{bot}@v{number}", owner_id, bot_id)

    def __getitem__(self, version_id: int) -> tuple[str, int, int]:
        return self.known.get(version_id, (f"version {version_id}", 0, 0))


def _bot_id(session: Session, ref: tuple[str, str]) -> int:
    owner, name = ref
    found = session.scalar(
        select(Bot.id)
        .join(User, User.id == Bot.owner_id)
        .where(User.name == owner, Bot.name == name)
    )
    if found is None:
        raise LookupError(f"no bot {owner}/{name}")
    return found


def _entrant_bots(session: Session, wanted: GameFilter) -> list[int]:
    """The bots behind the filter's entrant labels (a pairing, a forfeiting entrant)."""
    labels = [*wanted.labels, *([wanted.faulted] if wanted.faulted else [])]
    if not labels or wanted.tournament is None:
        return []
    return list(
        session.scalars(
            select(BotVersion.bot_id)
            .join(Entrant, Entrant.bot_version_id == BotVersion.id)
            .join(Tournament, Tournament.id == Entrant.tournament_id)
            .where(Tournament.name == wanted.tournament, Entrant.label.in_(labels))
        )
    )


def _matches(
    session: Session, wanted: GameFilter, held: Sequence[int], bot: int | None
) -> Iterator[tuple[Match, str, str, bool]]:
    """The done matches ``wanted`` may pick from, newest first: of every bot in ``held``;
    for the fault filters, with a seat that forfeited (``bot``'s own, for ``mine``)."""
    query = (
        select(Match, Tournament.name, RuleSet.name, Tournament.teams)
        .join(Tournament, Tournament.id == Match.tournament_id)
        .join(RuleSet, RuleSet.id == Tournament.rule_set_id)
        .where(Match.status == "done")
        .order_by(Match.finished.desc(), Match.id.desc())
        # a match's result holds every game's summary (2,000 games: ~0.5 MB of JSON): read
        # only for the matches the page reaches, once their seats passed the filter
        .options(defer(Match.result))
    )
    if wanted.tournament is not None:
        query = query.where(Tournament.name == wanted.tournament)
    if wanted.rules is not None:
        query = query.where(RuleSet.name == wanted.rules)
    for bot in held:  # through match_seats' index by bot
        query = query.where(Match.id.in_(select(MatchSeat.match_id).where(MatchSeat.bot_id == bot)))
    if wanted.fault == "mine" and bot is not None:  # the bot's seats that forfeited a game
        query = query.where(
            Match.id.in_(
                select(MatchSeat.match_id).where(MatchSeat.bot_id == bot, MatchSeat.faults > 0)
            )
        )
    elif wanted.fault is not None and wanted.fault != "none":
        query = query.where(Match.id.in_(select(MatchSeat.match_id).where(MatchSeat.faults > 0)))
    offset, size = 0, 16  # most pages need a match or two: start small, then read more
    while offset < SCAN_LIMIT:
        rows = session.execute(query.limit(size).offset(offset)).all()
        yield from ((m, t, r, bool(teams)) for m, t, r, teams in rows)
        if len(rows) < size:
            return
        offset += size
        size = min(_CHUNK, 2 * size)


# A match's game summaries by position in ``result.games``, read by the database out of the
# result's JSON (a 2,000-game match holds ~0.3 MB of it: decoding it whole in Python took most
# of a game list): its length, and the summaries from :low to :high, the last first.
_GAMES_SQL = {
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
}


def _newest_games(session: Session, match_id: int) -> Iterator[dict[str, Any]]:
    """A done match's game summaries (``result.games``), the last first, read a few at a
    time as the caller goes on (most pages need the last few dozen)."""
    count_sql, games_sql = _GAMES_SQL[session.get_bind().dialect.name]
    high = session.scalar(text(count_sql), {"match": match_id}) or 0
    size = 64
    while high > 0:
        low = max(0, high - size)
        for value in session.scalars(
            text(games_sql), {"match": match_id, "low": low, "high": high}
        ):
            game = json.loads(value) if isinstance(value, str) else value
            if isinstance(game, dict):
                yield game
        high, size = low, 2 * size


def game_list(store: Store, wanted: GameFilter, *, limit: int = 50, offset: int = 0) -> GamePage:
    """A page of the games ``wanted`` picks, newest first (a match's games last to first).

    Raises:
        LookupError: ``bot`` or ``opponent`` names no stored bot.
        ValueError: a ``result`` without a ``bot``, or an unknown ``result``.
    """
    if wanted.result is not None and (wanted.bot is None or wanted.result not in GAME_RESULTS):
        raise ValueError(
            "a result filter needs a bot" if wanted.bot is None
            else f"result must be one of {', '.join(GAME_RESULTS)}"
        )  # fmt: skip
    rows: list[GameRow] = []
    skipped = scanned = 0
    with store.read() as session:
        names = _Names(session)
        bot = None if wanted.bot is None else _bot_id(session, wanted.bot)
        opponent = None if wanted.opponent is None else _bot_id(session, wanted.opponent)
        held = [b for b in (bot, opponent) if b is not None] + _entrant_bots(session, wanted)
        for match, tournament, rules, teams in _matches(session, wanted, held, bot):
            scanned += 1
            seats = [int(v) for v in match.seats]
            labels = tuple(str(label) for label in (match.labels or seats))
            if wanted.labels and not set(wanted.labels) <= set(labels):
                continue
            names.load(seats)
            bots = [names[v][2] for v in seats]
            mine = [s for s, b in enumerate(bots) if b == bot]
            if bot is not None and not mine:
                continue
            if opponent is not None and not any(
                b == opponent and s not in mine for s, b in enumerate(bots)
            ):
                continue
            for game in _newest_games(session, match.id):
                # judged on the stored dict: a row is built only for what the page shows
                if not _keep(game, wanted, mine, labels, teams):
                    continue
                if skipped < offset:
                    skipped += 1
                    continue
                if len(rows) == limit:
                    return GamePage(rows, more=True, scanned=scanned)
                row = _row(match, game, tournament, rules, teams, labels, seats, names, mine)
                if row is not None:
                    rows.append(row)
    return GamePage(rows, more=False, scanned=scanned, truncated=scanned >= SCAN_LIMIT)


def _row(
    match: Match,
    game: dict[str, Any],
    tournament: str,
    rules: str,
    teams: bool,
    labels: tuple[str, ...],
    seats: list[int],
    names: _Names,
    mine: list[int],
) -> GameRow | None:
    places = game.get("places")
    if not isinstance(places, list) or len(places) != len(seats):
        return None
    verdict = game.get("verdict") or {}
    seat = verdict.get("seat")
    return GameRow(
        match_id=match.id,
        index=int(game.get("index", 0)),
        tournament=tournament,
        rules=rules,
        teams=teams,
        seats=tuple(names[v][0] for v in seats),
        owners=tuple(names[v][1] for v in seats),
        labels=labels,
        places=tuple(int(p) for p in places),
        points=tuple(int(p) for p in game.get("points", [])),
        termination=str(game.get("termination", "")),
        fault_seat=seat if isinstance(seat, int) else None,
        finished=None if match.finished is None else as_utc(match.finished),
        outcome=outcome(places, mine, teams) if mine else None,
        fault_message=verdict.get("message") if isinstance(verdict.get("message"), str) else None,
    )


def _keep(
    game: dict[str, Any],
    wanted: GameFilter,
    mine: list[int],
    labels: tuple[str, ...],
    teams: bool,
) -> bool:
    """Whether a stored game (its ``result`` entry) passes the filter's result and fault
    parts (the match's bots and labels were checked before)."""
    places = game.get("places")
    if not isinstance(places, list) or len(places) != len(labels):
        return False
    verdict = game.get("verdict") or {}
    seat = verdict.get("seat") if isinstance(verdict.get("seat"), int) else None
    if wanted.result is not None and (not mine or outcome(places, mine, teams) != wanted.result):
        return False
    if wanted.faulted is not None and (
        seat is None or not 0 <= seat < len(labels) or labels[seat] != wanted.faulted
    ):
        return False
    fault = wanted.fault
    if fault is None:
        return True
    if fault == "none":
        return seat is None
    if fault == "any":
        return seat is not None
    if fault == "mine":
        return seat is not None and seat in mine
    return game.get("termination") == fault


@dataclass(frozen=True, slots=True)
class StoredGame:
    """One game's record and who played it (for the caller's authorization)."""

    row: GameRow
    record: dict[str, Any]


def game_record(store: Store, match_id: int, index: int) -> StoredGame | None:
    """Game ``index`` of done match ``match_id`` with its record, or None."""
    with store.read() as session:
        found = session.execute(
            select(
                Match,
                Tournament.name,
                RuleSet.name,
                Tournament.teams,
                GameRecord.record,
                # the game's summary where the worker puts it (games in index order): the
                # database reads it out of the result, Python never decodes the whole result
                Match.result[("games", index)],
            )
            .join(Tournament, Tournament.id == Match.tournament_id)
            .join(RuleSet, RuleSet.id == Tournament.rule_set_id)
            .join(GameRecord, GameRecord.match_id == Match.id)
            .where(Match.id == match_id, GameRecord.game_index == index, Match.status == "done")
            .options(defer(Match.result))
        ).first()
        if found is None:
            return None
        match, tournament, rules, teams, record, game = found
        if not isinstance(game, dict) or game.get("index") != index:  # elsewhere: look for it
            games = (match.result or {}).get("games", [])
            game = next((g for g in games if g.get("index") == index), None)
            if game is None:
                return None
        seats = [int(v) for v in match.seats]
        names = _Names(session)
        names.load(seats)
        labels = tuple(str(label) for label in (match.labels or seats))
        row = _row(match, game, tournament, rules, bool(teams), labels, seats, names, [])
    if row is None:
        return None
    return StoredGame(row, record)


class ReplayCache:
    """The latest replayed games of one process, at most ``size`` (least recently used
    out first), by (match id, game index): a stored game never changes, so an entry never
    goes stale. Safe to share between threads."""

    def __init__(self, size: int = REPLAYS_KEPT) -> None:
        self.size = size
        self._games: OrderedDict[tuple[int, int], ReplayedGame] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple[int, int]) -> ReplayedGame | None:
        """The game kept under ``key``, or None."""
        with self._lock:
            found = self._games.get(key)
            if found is not None:
                self._games.move_to_end(key)
            return found

    def put(self, key: tuple[int, int], game: ReplayedGame) -> None:
        """Keep ``game`` under ``key``, dropping the least recently used beyond the size."""
        with self._lock:
            self._games[key] = game
            self._games.move_to_end(key)
            while len(self._games) > self.size:
                self._games.popitem(last=False)

    def __len__(self) -> int:
        return len(self._games)


@dataclass(frozen=True, slots=True)
class ReplayedGame:
    """A stored game stepped through: who played it, its (whole, unredacted) record and
    its replay."""

    row: GameRow
    record: dict[str, Any]
    replay: Replay


def replayed_game(
    store: Store, match_id: int, index: int, cache: ReplayCache | None = None
) -> ReplayedGame | None:
    """Game ``index`` of done match ``match_id`` verified and stepped through, or None;
    from ``cache`` when it holds the game (then without a query), else read, replayed once
    (verifying and stepping are one simulation) and kept there.

    Raises:
        ParseError: the stored record does not verify.
    """
    key = (match_id, index)
    found = None if cache is None else cache.get(key)
    if found is not None:
        return found
    stored = game_record(store, match_id, index)
    if stored is None:
        return None
    found = ReplayedGame(stored.row, stored.record, replay_record(stored.record))
    if cache is not None:
        cache.put(key, found)
    return found


def duplicate_games(store: Store, match_id: int, index: int) -> list[tuple[int, int]]:
    """The games that played the same deals as game ``index`` of match ``match_id`` with
    the seats rotated (its duplicate-deal group, this game included), as (match id, game
    index) in rotation order; [] when the match is not part of a group or a rotation's
    game is missing (void or not yet played)."""
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


def redact_record(record: dict[str, Any]) -> dict[str, Any]:
    """The record without the forfeiting bot's message and stderr (``result.verdict``;
    its seat and the kind of fault are kept), for readers who may not see that bot's
    faults. The redacted record still verifies (``arena replay verify``)."""
    result = record.get("result")
    verdict = result.get("verdict") if isinstance(result, dict) else None
    if not isinstance(result, dict) or not isinstance(verdict, dict):
        return record
    redacted = {**verdict, "message": None, "stderr": None}
    return {**record, "result": {**result, "verdict": redacted}}


def record_verdict(record: dict[str, Any]) -> dict[str, Any] | None:
    """The record's verdict (``result.verdict``), or None."""
    result = record.get("result")
    verdict = result.get("verdict") if isinstance(result, dict) else None
    return verdict if isinstance(verdict, dict) else None


@dataclass(frozen=True, slots=True)
class OpponentRow:
    """A bot's record against one opponent bot under one rule set (every version of both).

    ``games`` counts the games both played (a game counts once for each pair of versions
    in it); a multi-player game counts against every opponent at the table, as won, drawn
    or lost by place: ahead of, level with or behind that opponent.
    """

    rules: str
    opponent: str
    games: int
    wins: int
    draws: int
    losses: int

    @property
    def score(self) -> float:
        """Wins plus half the draws, as a share of the games."""
        return (self.wins + 0.5 * self.draws) / self.games if self.games else 0.0


def opponent_table(store: Store, owner: str, name: str) -> list[OpponentRow]:
    """The bot's record against each other bot, per rule set, most games first: every
    version of both, as the last refit of each rule set counted them (``pair_records``;
    a rule set is refitted when one of its tournaments finishes).

    Raises:
        LookupError: no bot ``owner/name``.
    """
    mine, theirs = aliased(BotVersion), aliased(BotVersion)
    with store.read() as session:
        bot = _bot_id(session, (owner, name))
        rows = session.execute(
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
        ).all()
    table = [
        OpponentRow(rules, f"{other_owner}/{other}", int(games), int(wins), int(draws),
                    int(losses))
        for rules, other_owner, other, games, wins, draws, losses in rows
    ]  # fmt: skip
    return sorted(table, key=lambda row: (row.rules, -row.games, row.opponent))


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


def match_list(
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
        names = _Names(session)
        names.load([int(v) for m in matches for v in m.seats])
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
