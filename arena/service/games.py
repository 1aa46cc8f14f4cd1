"""Stored games for the dashboard and the API: lists with filters, one game's record, a
bot's record against each opponent.

A done match keeps its games' results in ``matches.result`` (see
:mod:`arena.service.results`) and their records in ``game_records``. A list reads the
matches newest first and stops as soon as it has its page, so "a bot's recent games" costs
the matches it looks through, not the whole table; the next page starts after the last game
shown (a cursor, ``before``), through the matches' index, so a deep page costs what the
first one does; of each, it reads only the game summaries
it goes through (the database takes them out of the result's JSON). A game's replay is kept
per process (:class:`ReplayCache`): the viewer's steps replay nothing.

A game's record holds the forfeiting bot's message and stderr tail: who may see those is the
caller's decision (each row says whose bot holds each seat), :func:`redact_record` removes
them.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from arena.engine.replay import Replay, replay_record
from arena.errors import RecordPruned
from arena.service.permissions import Actor
from arena.service.privacy import Hidden, hidden_from
from arena.service.results import OUTCOMES, outcome
from arena.service.shapes import HIDDEN, about
from arena.store.boards import tournaments_holding
from arena.store.db import Store
from arena.store.games import (
    SCAN_LIMIT,
    DoneMatch,
    MatchRow,
    MatchScan,
    VersionNames,
    duplicate_group,
    game_scan,
    game_summary,
    lists_version,
    opponent_sums,
    tournament_matches,
)

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
        record_pruned: the deployment's retention deleted its record (its result stays).
    """

    match_id: int = field(metadata=about(name="match"))
    index: int
    tournament: str
    rules: str
    teams: bool = field(metadata=HIDDEN)
    seats: tuple[str, ...]
    owners: tuple[int, ...] = field(metadata=HIDDEN)
    labels: tuple[str, ...]
    places: tuple[int, ...]
    points: tuple[int, ...]
    termination: str
    fault_seat: int | None
    finished: datetime | None
    outcome: str | None = field(
        default=None, metadata=about("win, draw or loss for the bot filtered on")
    )
    fault_message: str | None = field(default=None, metadata=HIDDEN)
    record_pruned: bool = field(
        default=False, metadata=about("retention deleted its record (its result is kept)")
    )


@dataclass(frozen=True, slots=True)
class GamePage:
    """A page of games, newest first; ``more``: there are older ones (the next page is
    the one ``before`` its last row's key, :attr:`next`)."""

    rows: list[GameRow]
    more: bool
    scanned: int = 0
    #: Whether the scan stopped at :data:`SCAN_LIMIT` matches before the page was full.
    truncated: bool = False

    @property
    def next(self) -> tuple[int, int] | None:
        """The key (match id, game index) the next page starts before, or None."""
        return (self.rows[-1].match_id, self.rows[-1].index) if self.more and self.rows else None


def game_list(
    store: Store,
    wanted: GameFilter,
    *,
    limit: int = 50,
    before: tuple[int, int] | None = None,
    viewer: Actor = None,
) -> GamePage:
    """A page of the games ``wanted`` picks, newest first (a match's games last to first),
    without those holding a bot hidden from ``viewer`` (arena.service.privacy); with
    ``before`` (match id, game index), the games listed after that one ("older than game
    X"): a page starts at its cursor through the matches' index, never walks past those
    before it. A page read is kept (:data:`LIST_KEPT_SECONDS`, keyed by the filter, the
    cursor, what is hidden from ``viewer``, the newest done match and the latest pruning).

    Raises:
        LookupError: ``bot`` or ``opponent`` names no stored bot, ``before`` no stored match.
        ValueError: a ``result`` without a ``bot``, or an unknown ``result``.
    """
    if wanted.result is not None and (wanted.bot is None or wanted.result not in GAME_RESULTS):
        raise ValueError(
            "a result filter needs a bot" if wanted.bot is None
            else f"result must be one of {', '.join(GAME_RESULTS)}"
        )  # fmt: skip
    hidden = hidden_from(store, viewer)
    for ref in (wanted.bot, wanted.opponent):
        if ref is not None and hidden.owner(ref[0]):  # as if there were none
            raise LookupError(f"no bot {ref[0]}/{ref[1]}")
    key = (str(store.engine.url), wanted, limit, before, hidden, lists_version(store))
    now = time.monotonic()
    with _lists_lock:
        kept = _lists.get(key)
        if kept is not None and now - kept[0] < LIST_KEPT_SECONDS:
            _lists.move_to_end(key)
            return kept[1]
    page = _game_list(store, wanted, hidden, limit, before)
    with _lists_lock:
        _lists[key] = (now, page)
        _lists.move_to_end(key)
        while len(_lists) > LISTS_KEPT:
            _lists.popitem(last=False)
    return page


#: Pages of games a process keeps (the least recently read go first), and the seconds one
#: is kept: a page is read again once a match is done or records are pruned (the newest
#: of each is part of its key), what changes otherwise (a bot renamed) within this.
LISTS_KEPT = 256
LIST_KEPT_SECONDS = 5.0
_lists: OrderedDict[tuple[Any, ...], tuple[float, GamePage]] = OrderedDict()
_lists_lock = threading.Lock()


def _game_list(
    store: Store,
    wanted: GameFilter,
    hidden: Hidden,
    limit: int,
    before: tuple[int, int] | None,
) -> GamePage:
    """The page of :func:`game_list`, read from the store."""
    rows: list[GameRow] = []
    scanned = 0
    with game_scan(store) as scan:
        bot = None if wanted.bot is None else scan.bot_id(wanted.bot)
        opponent = None if wanted.opponent is None else scan.bot_id(wanted.opponent)
        entrants = [*wanted.labels, *([wanted.faulted] if wanted.faulted else [])]
        held = [b for b in (bot, opponent) if b is not None]
        held += scan.entrant_bots(wanted.tournament, entrants)
        faulted = None if wanted.fault in (None, "none") else wanted.fault
        query = MatchScan(wanted.tournament, wanted.rules, tuple(held), faulted, bot)
        start, below = (None, None) if before is None else before
        for match in scan.matches(query, start):
            scanned += 1
            labels = match.labels
            if wanted.labels and not set(wanted.labels) <= set(labels):
                continue
            scan.load_names(match.seats)
            if hidden.any(scan.names[v][1] for v in match.seats):
                continue
            bots = [scan.names[v][2] for v in match.seats]
            mine = [s for s, b in enumerate(bots) if b == bot]
            if bot is not None and not mine:
                continue
            if opponent is not None and not any(
                b == opponent and s not in mine for s, b in enumerate(bots)
            ):
                continue
            for game in scan.newest_games(match.id, below if match.id == start else None):
                # judged on the stored dict: a row is built only for what the page shows
                if not _keep(game, wanted, mine, labels, match.teams):
                    continue
                if len(rows) == limit:
                    return GamePage(rows, more=True, scanned=scanned)
                row = _row(match, game, scan.names, mine)
                if row is not None:
                    rows.append(row)
    truncated = scan.truncated or scanned >= SCAN_LIMIT
    return GamePage(
        rows, more=False, scanned=max(scanned, SCAN_LIMIT if truncated else 0), truncated=truncated
    )


def _row(
    match: DoneMatch, game: dict[str, Any], names: VersionNames, mine: list[int]
) -> GameRow | None:
    places = game.get("places")
    if not isinstance(places, list) or len(places) != len(match.seats):
        return None
    verdict = game.get("verdict") or {}
    seat = verdict.get("seat")
    return GameRow(
        match_id=match.id,
        index=int(game.get("index", 0)),
        tournament=match.tournament,
        rules=match.rules,
        teams=match.teams,
        seats=tuple(names[v][0] for v in match.seats),
        owners=tuple(names[v][1] for v in match.seats),
        labels=match.labels,
        places=tuple(int(p) for p in places),
        points=tuple(int(p) for p in game.get("points", [])),
        termination=str(game.get("termination", "")),
        fault_seat=seat if isinstance(seat, int) else None,
        finished=match.finished,
        outcome=outcome(places, mine, match.teams) if mine else None,
        fault_message=verdict.get("message") if isinstance(verdict.get("message"), str) else None,
        record_pruned=match.pruned is not None,
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


def game_record(store: Store, match_id: int, index: int, viewer: Actor = None) -> StoredGame | None:
    """Game ``index`` of done match ``match_id`` with its record, or None (also when it
    holds a bot hidden from ``viewer``: arena.service.privacy).

    Raises:
        RecordPruned: the deployment's retention deleted its record
            (:mod:`arena.service.retention`; a game hidden from ``viewer`` is None first).
    """
    found = game_summary(store, match_id, index)
    if found is None:
        return None
    row = _row(found.match, found.game, found.names, [])
    if row is None or hidden_from(store, viewer).any(row.owners):
        return None
    if found.record is None:
        raise RecordPruned(match_id, index, found.match.pruned or datetime.now(UTC))
    return StoredGame(row, found.record)


class ReplayCache:
    """The latest replayed games of one process, at most ``size`` (least recently used
    out first), by (match id, game index): a stored game never changes, so an entry never
    goes stale (one whose record retention pruned is shown until it drops out). Safe to
    share between threads."""

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
    store: Store,
    match_id: int,
    index: int,
    cache: ReplayCache | None = None,
    viewer: Actor = None,
) -> ReplayedGame | None:
    """Game ``index`` of done match ``match_id`` verified and stepped through, or None (as
    :func:`game_record`, for ``viewer``); from ``cache`` when it holds the game, else read,
    replayed once (verifying and stepping are one simulation) and kept there.

    Raises:
        ParseError: the stored record does not verify.
        RecordPruned: as :func:`game_record` (unless ``cache`` still holds the game).
    """
    key = (match_id, index)
    found = None if cache is None else cache.get(key)
    if found is not None:
        return None if hidden_from(store, viewer).any(found.row.owners) else found
    stored = game_record(store, match_id, index, viewer)
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
    return duplicate_group(store, match_id, index)


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


def opponent_table(store: Store, owner: str, name: str, viewer: Actor = None) -> list[OpponentRow]:
    """The bot's record against each other bot ``viewer`` may see (arena.service.privacy),
    per rule set, most games first: every version of both, as the last refit of each rule
    set counted them (``pair_records``; a rule set is refitted when one of its tournaments
    finishes).

    Raises:
        LookupError: no bot ``owner/name``.
    """
    hidden = hidden_from(store, viewer)
    table = [
        OpponentRow(*sums)
        for sums in opponent_sums(store, owner, name)
        if not hidden.owner(sums[1].split("/", 1)[0])
    ]
    return sorted(table, key=lambda row: (row.rules, -row.games, row.opponent))


def match_list(
    store: Store,
    tournament: str,
    *,
    status: str | None = None,
    limit: int = 50,
    offset: int = 0,
    viewer: Actor = None,
) -> tuple[int, list[MatchRow]]:
    """The tournament's matches in schedule order (``status``: only those), a page of them
    and how many there are.

    Raises:
        LookupError: no tournament of that name, or none ``viewer`` may see.
    """
    if tournament in tournaments_holding(store, hidden_from(store, viewer).ids):
        raise LookupError(f"no tournament {tournament!r}")
    return tournament_matches(store, tournament, status=status, limit=limit, offset=offset)
