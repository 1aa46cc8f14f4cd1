"""What the leaderboards' and tournaments' pages show: the values the web app renders,
built here from the store's reads (:mod:`arena.store.boards`) so that the web app stays
thin. A bot's pages: :mod:`arena.service.bot_views`.

- :func:`rule_set_names` and :func:`leaderboard`: the rated rule sets, and one's
  leaderboard (latest version of each bot by default) with ranks as ranges where the 95%
  intervals overlap, and a provisional marker while an interval is wide; read once a refit
  a process.
- :func:`tournament_list` and :func:`tournament_view`: the stored tournaments, and one's
  progress, standings (with the ratings of its own games) and crosstable.
"""

from __future__ import annotations

import bisect
import dataclasses
import json
import threading
import time
from collections import Counter, OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from arena.compete.localrun import Standings
from arena.compete.ratings import Rating
from arena.errors import NotFound
from arena.service.display import BotName, names_of
from arena.service.matches import Config, list_workers
from arena.service.permissions import Actor
from arena.service.privacy import Hidden, hidden_from
from arena.service.results import StoredRating, games_matrix, rating_table
from arena.service.shapes import ELO, HIDDEN, about
from arena.store import boards, tallies
from arena.store import bots as stored_bots
from arena.store.db import Store, as_utc
from arena.store.lanes import queue_place
from arena.store.models import Tournament
from arena.store.queue import tournament_progress
from arena.store.tournaments import get_tournament

__all__ = [
    "PROVISIONAL_WIDTH",
    "REFERENCE_OWNER",
    "Leaderboard",
    "LeaderboardRow",
    "StandingRow",
    "TournamentRow",
    "TournamentView",
    "leaderboard",
    "queue_position",
    "rank_ranges",
    "refit_figures",
    "rule_set_names",
    "tournament_list",
    "tournament_name",
    "tournament_owner",
    "tournament_view",
]

#: The owner of the reference bots (``bots/``) that ``arena serve --demo`` stores.
REFERENCE_OWNER = "reference"
#: A rating is provisional while its 95% interval is wider than this (Elo points): about
#: +-100, i.e. fewer than a few dozen games against rated opponents.
PROVISIONAL_WIDTH = 200.0


def rank_ranges(intervals: Sequence[tuple[float, float]]) -> list[tuple[int, int]]:
    """Each bot's rank as a range from its 95% interval among the others': the best rank
    is 1 + the number of bots whose interval lies wholly above its own, the worst is the
    number of bots less those wholly below it. Equal ranges mean "cannot be told apart"."""
    count = len(intervals)
    lows = sorted(low for low, _ in intervals)
    highs = sorted(high for _, high in intervals)
    return [
        # above: the lows beyond its high; below: the highs short of its low
        (1 + count - bisect.bisect_right(lows, high), count - bisect.bisect_left(highs, low))
        for low, high in intervals
    ]


# --- leaderboards ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LeaderboardRow:
    """One bot version on a leaderboard.

    Attributes:
        rank_best, rank_worst: its rank as a range (:func:`rank_ranges`) among the rows shown.
        owner, bot, version: who and what (``owner/bot vN``).
        latest: whether it is its bot's newest rated version.
        rating, low, high: the rating and its 95% interval (Elo scale, mean 1500).
        games: games it played under the rule set.
        provisional: its interval is wider than :data:`PROVISIONAL_WIDTH`.
        reference: one of the reference bots (owner :data:`REFERENCE_OWNER`).
        wins, draws, losses: its record in the rated games.
        last_game: when its last rated game's match finished (None: unknown).
    """

    rank_best: int
    rank_worst: int
    owner: str
    bot: str
    version: int
    latest: bool = field(metadata=HIDDEN)
    rating: float = field(metadata=ELO)
    low: float = field(metadata=ELO)
    high: float = field(metadata=ELO)
    games: int
    provisional: bool
    reference: bool
    wins: int = 0
    draws: int = 0
    losses: int = 0
    last_game: datetime | None = field(default=None, metadata=HIDDEN)

    @property
    def name(self) -> BotName:
        """The version's display name (``owner/bot vN``, :mod:`arena.service.display`)."""
        return BotName(self.owner, self.bot, self.version)

    @property
    def rank(self) -> str:
        """``"3"``, or ``"2-4"`` where it cannot be told apart from its neighbours."""
        if self.rank_best == self.rank_worst:
            return str(self.rank_best)
        return f"{self.rank_best}\u2013{self.rank_worst}"


@dataclass(frozen=True, slots=True)
class Leaderboard:
    """A rule set's leaderboard as the last re-fit left it (``computed``; None: never)."""

    rules: str
    computed: datetime | None
    rows: list[LeaderboardRow]


def rule_set_names(store: Store) -> list[str]:
    """The names of the rule sets with stored ratings or a played match, alphabetically."""
    return boards.rule_set_names(store)


def leaderboard(
    store: Store,
    rules: str,
    *,
    all_versions: bool = False,
    hide_reference: bool = False,
    viewer: Actor = None,
) -> Leaderboard:
    """The stored ratings under the rule set named ``rules`` (its newest stored version of
    that name), best first: each bot's latest rated version, or ``all_versions``; without
    the reference bots if ``hide_reference``; without the bots ``viewer`` may not see
    (arena.service.privacy), ranked among the rows shown. The rule set's ratings are read
    once a refit a process (:func:`_rated`): until they change, every call with the same
    toggles and hidden owners gets the same board (callers do not change it).

    Raises:
        LookupError: no rule set of that name is stored.
    """
    rule_set_id = boards.newest_rule_set_id(store, rules)
    if rule_set_id is None:
        raise LookupError(f"no rule set {rules!r} is stored")
    rated = _rated(store, rule_set_id)
    hidden = hidden_from(store, viewer)
    toggles = (all_versions, hide_reference, hidden)
    with _boards_lock:
        board = rated.boards.get(toggles)
    if board is not None:
        return board
    shown = [
        row
        for row in rated.rows
        if not hidden.owner(row[1])
        and (row[4] or all_versions)
        and not (hide_reference and row[1] == REFERENCE_OWNER)
    ]
    ranges = rank_ranges([(r.low, r.high) for r, *_ in shown])
    rows = [
        LeaderboardRow(
            rank_best=best,
            rank_worst=worst,
            owner=owner,
            bot=bot,
            version=number,
            latest=latest,
            rating=rating.rating,
            low=rating.low,
            high=rating.high,
            games=rating.games,
            provisional=rating.high - rating.low > PROVISIONAL_WIDTH,
            reference=owner == REFERENCE_OWNER,
            wins=rating.wins,
            draws=rating.draws,
            losses=rating.losses,
            last_game=rating.last_game,
        )
        for (rating, owner, bot, number, latest), (best, worst) in zip(shown, ranges, strict=True)
    ]
    board = Leaderboard(rules, rated.computed, rows)
    with _boards_lock:
        if len(rated.boards) >= BOARDS_KEPT:  # many viewers with their own hidden owners
            rated.boards.clear()
        board = rated.boards.setdefault(toggles, board)
    return board


#: A rule set's rated versions, each (its rating, owner, bot, version number, whether it
#: is its bot's newest rated version).
_RatedRow = tuple[StoredRating, str, str, int, bool]


@dataclass(slots=True)
class _Rated:
    """A rule set's stored ratings as one refit left them (``version``: when they were
    written and how many), with their versions' names, and the leaderboards built from
    them by toggles and hidden owners (the same board to every request until they change)."""

    version: tuple[datetime | None, int]
    computed: datetime | None
    rows: list[_RatedRow]
    boards: dict[tuple[bool, bool, Hidden], Leaderboard] = field(default_factory=dict)


#: Rule sets' ratings kept in this process, by (database, rule set), used last at the end.
RULE_SETS_KEPT = 32
#: Leaderboards kept for one rule set's ratings (toggles by viewers' hidden owners).
BOARDS_KEPT = 64
_rated_kept: OrderedDict[tuple[str, int], _Rated] = OrderedDict()
_boards_lock = threading.Lock()


def _rated(store: Store, rule_set_id: int) -> _Rated:
    """The rule set's rated versions, read once a refit (:func:`boards.ratings_version`
    says whether the kept ones are its latest) rather than once a request: a leaderboard's
    reads then cost one small aggregate."""
    key = (str(store.engine.url), rule_set_id)
    version = boards.ratings_version(store, rule_set_id)
    with _boards_lock:
        kept = _rated_kept.get(key)
        if kept is not None and kept.version == version:
            _rated_kept.move_to_end(key)
            return kept
    # read after the version: a refit in between is read now and read again next time
    ratings = rating_table(store, rule_set_id)
    versions = stored_bots.version_owners(store, [r.bot_version_id for r in ratings])
    newest: dict[int, int] = {}
    for rating in ratings:
        _, bot_id, _, number = versions[rating.bot_version_id]
        newest[bot_id] = max(newest.get(bot_id, 0), number)
    rows = []
    for rating in ratings:
        owner, bot_id, bot, number = versions[rating.bot_version_id]
        rows.append((rating, owner, bot, number, newest[bot_id] == number))
    computed = max((r.computed for r in ratings), default=None)
    rated = _Rated(version, computed, rows)
    with _boards_lock:
        _rated_kept[key] = rated
        _rated_kept.move_to_end(key)
        while len(_rated_kept) > RULE_SETS_KEPT:
            _rated_kept.popitem(last=False)
    return rated


# --- tournaments -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TournamentRow:
    """A stored tournament in the list: its matches, those finished (played, or void:
    never to be played) and those void."""

    name: str
    status: str
    format: str
    rules: str
    players: int
    matches: int
    finished: int
    void: int = field(metadata=HIDDEN)
    created: datetime

    @property
    def played(self) -> int:
        """Matches played (finished, not void)."""
        return self.finished - self.void


def tournament_list(store: Store, viewer: Actor = None) -> list[TournamentRow]:
    """Every stored tournament ``viewer`` may see (none holding a bot hidden from it:
    arena.service.privacy), newest first, with its matches played and void."""
    rows = boards.tournament_totals(store)
    hidden = boards.tournaments_holding(store, hidden_from(store, viewer).ids)
    return [
        TournamentRow(name, status, fmt, rules, players, matches, played + void, void, as_utc(when))
        for name, status, fmt, rules, players, matches, played, void, when in rows
        if name not in hidden
    ]


@dataclass(frozen=True, slots=True)
class StandingRow:
    """One entrant's line in a tournament's standings."""

    rank: int
    entrant: str
    games: int
    wins: int
    win_rate: float = field(metadata=about(digits=4))
    points: int
    forfeits: int
    rating: float | None = field(metadata=ELO)
    low: float | None = field(metadata=ELO)
    high: float | None = field(metadata=ELO)


@dataclass(frozen=True, slots=True)
class Crosstable:
    """A 2-player tournament's crosstable: its entrants in standings order, and each one's
    score against each other."""

    entrants: list[str]
    scores: list[list[float | None]] = field(
        metadata=about(
            "``scores[i][j]``: entrant i's wins plus half draws against entrant j (None: "
            "never met)."
        )
    )


@dataclass(frozen=True, slots=True)
class FaultCount:
    """The games an entrant forfeited by one kind of bot fault."""

    entrant: str
    kind: str
    games: int


@dataclass(frozen=True, slots=True)
class VoidMatch:
    """A match void for a harness failure (``match``: its key), and why."""

    match: str
    reason: str


@dataclass(frozen=True, slots=True)
class TournamentView:
    """A stored tournament as its page shows it.

    Attributes:
        progress: its matches by status (pending, running, done, void).
        games_done, games_total: game records stored, and games scheduled.
        eta_seconds: the time left at the pace so far (None before the first game, or done).
        standings: best first, with each entrant's rating over this tournament's games.
        crosstable: 2-player tournaments only (:class:`Crosstable`); else None.
        void: the matches void for a harness failure.
        faults: the games forfeited by a bot fault, by entrant then kind.
        workers_alive: the workers whose heartbeat is within the lease now.
        queue: its place in the workers' queue, with the reason it waits (see
            :func:`queue_position`); None when finished.
        names: each entrant's label → the stored version it stands for (pages show
            :meth:`shown`; links and filters keep the label).
    """

    name: str
    status: str
    format: str
    rules: str
    players: int
    teams: bool
    games_per_match: int
    seed: int
    created: datetime
    started: datetime | None
    finished: datetime | None
    progress: dict[str, int] = field(metadata=about("matches by status"))
    games_done: int
    games_total: int
    eta_seconds: float | None = field(metadata=ELO)
    standings: list[StandingRow]
    crosstable: Crosstable | None = field(metadata=about("2-player tournaments only"))
    void: list[VoidMatch]
    workers_alive: int
    owner_id: int | None = field(default=None, metadata=HIDDEN)
    owner: str | None = None
    faults: list[FaultCount] = field(default_factory=list)
    queue: str | None = field(default=None, metadata=HIDDEN)
    names: dict[str, BotName] = field(default_factory=dict, metadata=HIDDEN)

    def name_of(self, label: str) -> BotName | None:
        """The stored version the entrant ``label`` stands for, or None (no stored one)."""
        return self.names.get(label)

    def shown(self, label: str) -> str:
        """The entrant as pages show it: its version's display name, else its label."""
        name = self.names.get(label)
        return label if name is None else name.display

    @property
    def done(self) -> bool:
        """Whether every match is finished (done or void)."""
        return self.progress["pending"] + self.progress["running"] == 0

    @property
    def matches(self) -> int:
        """Its number of matches."""
        return sum(self.progress.values())


#: The crosstable is shown up to this many entrants (a bigger one is a wall of numbers).
CROSSTABLE_LIMIT = 24
#: Tournaments whose figures a process keeps decoded (the least recently read go first).
STANDINGS_CACHED = 64

_Standings = tuple[list[StandingRow], Crosstable | None, list[VoidMatch], list[FaultCount]]


class _Counted:
    """A tournament's figures counted from its stored tally
    (:func:`arena.store.boards.stored_tally`: a few rows a pair of entrants)."""

    def __init__(self, labels: Sequence[str]) -> None:
        self.standings = Standings(labels)
        #: The rated games as histogram rows (:func:`games_matrix`): each entrant label by
        #: its number in :attr:`codes`, so that the fit names it.
        self.rated: Counter[tuple[str, str, bool]] = Counter()
        self.codes: dict[str, int] = {}
        self.faults: Counter[tuple[str, str]] = Counter()

    def add(self, tally: boards.TournamentTally, teams: bool) -> None:
        """Count ``tally``."""
        standings = self.standings
        standings.void.extend(tally.void)
        for group in tally.groups:
            labels, places, seat = group.labels, group.places, group.fault_seat
            if len(places) != len(labels) or not (seat is None or 0 <= seat < len(labels)):
                continue  # a game stored without usable places (never written so)
            standings.add_games(labels, places, group.points, seat, group.count)
            if seat is not None:
                self.faults[labels[seat], group.termination] += group.count
            codes = [self.codes.setdefault(label, len(self.codes)) for label in labels]
            self.rated[json.dumps(codes), json.dumps(list(places)), teams] += group.count

    def ratings(self) -> dict[str, Rating]:
        """Each entrant's rating (by label) over the games counted; {} below two."""
        rows = [(*key, count) for key, count in self.rated.items()]
        matrix, _ = games_matrix(rows)
        if len(matrix.bots) < 2:
            return {}
        labels = {str(code): label for label, code in self.codes.items()}
        return {labels[rating.bot]: rating for rating in matrix.fit()}

    def figures(self, tournament: Tournament) -> _Standings:
        """Standings rows, crosstable, void matches and faults, as counted so far."""
        standings = self.standings
        ratings = self.ratings()
        ranking = standings.ranking()
        rows = []
        for rank, stats in enumerate(ranking, start=1):
            rating = ratings.get(stats.name)
            rows.append(
                StandingRow(
                    rank=rank,
                    entrant=stats.name,
                    games=stats.games,
                    wins=stats.wins,
                    win_rate=stats.win_rate,
                    points=stats.points,
                    forfeits=stats.forfeits,
                    rating=None if rating is None else rating.rating,
                    low=None if rating is None else rating.low,
                    high=None if rating is None else rating.high,
                )
            )
        crosstable = None
        if tournament.players == 2 and not tournament.teams and len(rows) <= CROSSTABLE_LIMIT:
            order = [stats.entrant for stats in ranking]
            cells = [
                [
                    standings.score(a, b) if a != b and standings.met[a].get(b) else None
                    for b in order
                ]
                for a in order
            ]
            crosstable = Crosstable(order, cells)
        void = [VoidMatch(key, reason) for key, reason in sorted(standings.void)]
        faults = [FaultCount(e, kind, n) for (e, kind), n in sorted(self.faults.items())]
        return rows, crosstable, void, faults


#: Seconds a process's claim to fit a tournament's figures holds (a process that dies while
#: fitting delays the next fit this long; a fit takes a fraction of a second).
FIT_CLAIM_SECONDS = 30.0
#: Seconds between looks at the stored figures while another process fits the first ones.
FIT_POLL_SECONDS = 0.1

#: Figures read from the store, decoded, kept in this process (the least recently read go
#: first): (database, tournament) -> (the tally's version, the figures).
_kept: OrderedDict[tuple[str, int], tuple[tuple[int, int], _Standings]] = OrderedDict()
_kept_lock = threading.Lock()


def _standings(
    store: Store, tournament: Tournament, labels: list[str], version: tuple[int, int]
) -> _Standings:
    """The tournament's standings, crosstable, void matches and faults at the tally's
    ``version`` (its done and void matches), fitted once for every process: read from
    ``tournament_figures`` when they were fitted at ``version``; else the one caller that
    claims the fit (:func:`arena.store.tallies.claim_figures`) counts them from the stored
    tally and stores them, while the others get the figures fitted before (or, before the
    first fit, wait for it)."""
    key = (str(store.engine.url), tournament.id)
    with _kept_lock:
        kept = _kept.get(key)
        if kept is not None:
            _kept.move_to_end(key)
    if kept is not None and kept[0] == version:
        return kept[1]
    deadline = time.monotonic() + FIT_CLAIM_SECONDS
    while True:
        stored = tallies.stored_figures(store, tournament.id)
        if stored is not None and stored.figures is not None:
            if kept is None or kept[0] != stored.version:
                kept = (stored.version, _decode(stored.figures))
                _keep(key, kept)
            if stored.version == version:
                return kept[1]
        now = datetime.now(UTC)
        free = stored is None or stored.claimed_until is None or stored.claimed_until < now
        if free and tallies.claim_figures(store, tournament.id, now, FIT_CLAIM_SECONDS):
            return _fit(store, tournament, labels, version, key)
        if kept is not None:
            return kept[1]  # another process fits the new ones: these meanwhile
        if time.monotonic() > deadline:  # its claim outlived its process: fit here
            return _fit(store, tournament, labels, version, key)
        time.sleep(FIT_POLL_SECONDS)


def _fit(
    store: Store,
    tournament: Tournament,
    labels: list[str],
    version: tuple[int, int],
    key: tuple[str, int],
) -> _Standings:
    """Count and fit the tournament's figures from its stored tally under a claim, store
    them (the claim ended) and keep them in this process."""
    try:
        counted = _Counted(labels)
        counted.add(boards.stored_tally(store, tournament.id), tournament.teams)
        figures = counted.figures(tournament)
    except BaseException:
        tallies.release_figures(store, tournament.id)
        raise
    tallies.store_figures(store, tournament.id, version, _encode(figures), datetime.now(UTC))
    _keep(key, (version, figures))
    return figures


def refit_figures(store: Store, rule_set_id: int) -> int:
    """Fit again the stored figures of the rule set's tournaments that lag their tally
    (:func:`arena.store.tallies.stale_figures`), each under its claim as a page would take
    it (one a page holds is left to it): the live refit's, after the rule set's ratings,
    so that a page reads figures fitted already. Return the tournaments fitted."""
    fitted = 0
    for tournament_id, version in tallies.stale_figures(store, rule_set_id):
        found = get_tournament(store, tournament_id)
        page = None if found is None else boards.tournament_page(store, str(found.name))
        now = datetime.now(UTC)
        if page is None or not tallies.claim_figures(store, tournament_id, now, FIT_CLAIM_SECONDS):
            continue
        key = (str(store.engine.url), tournament_id)
        _fit(store, page.tournament, page.labels, version, key)
        fitted += 1
    return fitted


def _keep(key: tuple[str, int], kept: tuple[tuple[int, int], _Standings]) -> None:
    with _kept_lock:
        _kept[key] = kept
        _kept.move_to_end(key)
        while len(_kept) > STANDINGS_CACHED:
            _kept.popitem(last=False)


def _encode(figures: _Standings) -> str:
    """The figures as JSON text (floats exactly, NaN as NaN)."""
    rows, crosstable, void, faults = figures
    return json.dumps(
        {
            "standings": [dataclasses.astuple(row) for row in rows],
            "crosstable": None if crosstable is None else dataclasses.asdict(crosstable),
            "void": [dataclasses.astuple(row) for row in void],
            "faults": [dataclasses.astuple(row) for row in faults],
        }
    )


def _decode(text: str) -> _Standings:
    """The figures :func:`_encode` wrote."""
    found = json.loads(text)
    crosstable = found["crosstable"]
    return (
        [StandingRow(*row) for row in found["standings"]],
        None if crosstable is None else Crosstable(**crosstable),
        [VoidMatch(*row) for row in found["void"]],
        [FaultCount(*row) for row in found["faults"]],
    )


def tournament_view(
    store: Store, name: str, *, now: datetime | None = None, viewer: Actor = None
) -> TournamentView:
    """The tournament called ``name`` for its page.

    Raises:
        LookupError: no tournament of that name, or none ``viewer`` may see (it holds a
            bot hidden from it: arena.service.privacy).
    """
    now = now or datetime.now(UTC)
    page = boards.tournament_page(store, name)
    if page is None or hidden_from(store, viewer).any(o for o, _, _ in page.names.values()):
        raise LookupError(f"no tournament {name!r}")
    tournament, rules, owner = page.tournament, page.rules, page.owner
    games_total, games_done, labels = page.games_total, page.games_done, page.labels
    progress = tournament_progress(store, tournament.id)
    version = (progress["done"], progress["void"])  # the tally grows with these only
    rows, crosstable, void, faults = _standings(store, tournament, labels, version)
    started = None if tournament.started is None else as_utc(tournament.started)
    eta = None
    done = progress["pending"] + progress["running"] == 0
    if started is not None and games_done and not done:
        pace = (now - started).total_seconds() / games_done
        eta = max(0.0, pace * ((games_total or 0) - games_done))
    alive = sum(1 for w in list_workers(store, config=Config.from_env(), now=now) if w.alive)
    return TournamentView(
        name=tournament.name,
        status=tournament.status,
        format=tournament.format,
        rules=rules or "?",
        players=tournament.players,
        teams=tournament.teams,
        games_per_match=tournament.games_per_match,
        seed=tournament.seed,
        created=as_utc(tournament.created),
        started=started,
        finished=None if tournament.finished is None else as_utc(tournament.finished),
        progress=progress,
        games_done=games_done or 0,
        games_total=games_total or 0,
        eta_seconds=eta,
        standings=rows,
        crosstable=crosstable,
        void=void,
        workers_alive=alive,
        owner_id=tournament.owner_id,
        owner=owner,
        faults=faults,
        queue=queue_position(store, tournament.id),
        names=names_of(page.names),
    )


def queue_position(store: Store, tournament_id: int) -> str | None:
    """Where the tournament stands in the workers' queue, and why it waits, in a phrase:
    "waiting: 2 tournaments ahead", "next: waiting for a free worker", "playing", "not
    sent to the workers yet"; None when it is finished or cancelled. Within its queue,
    tournaments are played in the order they were first sent; queues (a ladder, a final,
    placements, the other tournaments) take turns (docs/workers.md, "Fair shares")."""
    place = queue_place(store, tournament_id)
    if place is None or (place.waiting == 0 and place.running == 0):
        return None
    if not place.sent:
        return "not sent to the workers yet (arena tournament run NAME sends it)"
    if place.waiting == 0:
        return "playing its last matches"
    if place.ahead:
        ahead = "1 tournament" if place.ahead == 1 else f"{place.ahead} tournaments"
        return f"waiting: {ahead} ahead"
    if place.running:
        return "playing"
    return "next: waiting for a free worker"


def tournament_name(store: Store, tournament_id: int) -> str:
    """The name of the tournament ``tournament_id``.

    Raises:
        NotFound: there is none.
    """
    found = get_tournament(store, tournament_id)
    if found is None:
        raise NotFound(f"no tournament {tournament_id}")
    return str(found.name)


def tournament_owner(store: Store, name: str) -> tuple[int, int | None] | None:
    """(id, owner's account id or None) of the tournament called ``name``, or None."""
    return boards.tournament_owner(store, name)
