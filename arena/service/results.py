"""Standings and ratings from the database (docs/ratings.md, "Stored ratings").

- :func:`load_results` turns a tournament's finished matches back into the
  :class:`arena.compete.localrun.MatchResult` values the local runner yields, so
  :class:`arena.compete.localrun.Standings` and
  :func:`arena.compete.localrun.tournament_ratings` work on stored tournaments exactly as on
  local ones (per entrant label).
- :func:`refit_ratings` fits one rating per bot version over every done match of every
  tournament played under a rule set, and replaces that rule set's ``ratings`` rows
  (appending to ``rating_history``) in one transaction. It reads the stored games as a
  histogram computed by the database (one row per seat arrangement and finishing order, with
  a count), so a re-fit over a million stored games takes seconds, not minutes.
- :func:`rating_table` and :func:`rating_history_of` read what the last re-fit stored.

A done match's ``result`` is the JSON :func:`result_json` writes:
``{"games": [{"index", "seed", "places", "points", "winners", "termination", "verdict"[,
"luck"]}, ...], "seconds", "worker"[, "sources"]}`` (``sources``: what each seat ran, its
bot file's SHA-256, :attr:`arena.compete.localrun.MatchResult.sources`); a void match's is
``{"void": reason, "worker", "attempts"}``.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import numpy as np

from arena.compete.entrants import Entrant
from arena.compete.localrun import GameResult, MatchResult
from arena.compete.margins import kept_lucks
from arena.compete.ratings import Rating, ResultMatrix
from arena.compete.tournaments import Match as ScheduledMatch
from arena.store import ratings as stored
from arena.store.db import Store, as_utc
from arena.store.models import Match, RuleSet, Tournament
from arena.store.ratings import RatingPoint, RuleSetRef

__all__ = [
    "OUTCOMES",
    "RatingPoint",
    "Refit",
    "RuleSetRef",
    "StoredRating",
    "find_rule_set",
    "find_tournament",
    "games_matrix",
    "load_results",
    "outcome",
    "rating_history_of",
    "rating_table",
    "refit_ratings",
    "result_json",
    "stored_entrants",
    "tournament_records",
    "version_names",
]

_log = logging.getLogger(__name__)


# --- looking things up --------------------------------------------------------------------


def find_tournament(store: Store, name: str) -> Tournament:
    """The tournament called ``name``.

    Raises:
        LookupError: no tournament has that name.
    """
    return stored.find_tournament(store, name)


def find_rule_set(store: Store, rules: RuleSetRef) -> RuleSet:
    """The stored rule set ``rules`` names (see :data:`RuleSetRef`).

    Raises:
        LookupError: no such rule set is stored (no tournament was ever created under it).
    """
    return stored.find_rule_set(store, rules)


def version_names(store: Store, version_ids: Iterable[int]) -> dict[int, str]:
    """``owner/bot@vN`` for each bot version id (ids not stored are left out)."""
    return stored.version_names(store, version_ids)


#: A game's result for one player, in the order records count them.
OUTCOMES = ("win", "draw", "loss")


def outcome(places: Sequence[int], mine: Sequence[int], teams: bool) -> str:
    """``win``, ``draw`` or ``loss`` for the seats ``mine`` (one player's: its best place,
    its side's in team play, seats 0+2 v 1+3): first alone is a win, first with another
    side a draw."""
    side_of = [seat % 2 if teams else seat for seat in range(len(places))]
    best = min(mine, key=lambda seat: places[seat])
    if places[best] != 0:
        return "loss"
    others = {side_of[s] for s, place in enumerate(places) if place == 0} - {side_of[best]}
    return "draw" if others else "win"


# --- a tournament's results -------------------------------------------------------------


def result_json(result: MatchResult, worker: str) -> dict[str, Any]:
    """A played match's ``result`` column (the game records go to ``game_records``). A
    match of duplicate deals keeps each game's luck of the draw as ``luck``
    (:func:`arena.compete.margins.kept_lucks`).

    Raises:
        ValueError: the match is void (store ``{"void": ...}`` with ``void_match``).
    """
    if result.void is not None:
        raise ValueError(f"match {result.id} is void ({result.void}): it has no games to store")
    games: list[dict[str, Any]] = []
    for game in result.games:
        stored: dict[str, Any] = {
            "index": game.index,
            "seed": game.seed,
            "places": list(game.places),
            "points": list(game.points),
            "winners": list(game.winners),
            "termination": game.termination,
            "verdict": game.verdict,
        }
        if result.match.deal_group is not None and game.record.get("rounds") is not None:
            stored["luck"] = [list(luck) for luck in game.luck or kept_lucks(game.record)]
        games.append(stored)
    stored_result: dict[str, Any] = {"games": games, "seconds": result.seconds, "worker": worker}
    if result.sources:
        stored_result["sources"] = list(result.sources)
    return stored_result


def load_results(
    store: Store,
    tournament_id: int,
    *,
    records: bool = False,
    only: Collection[int] | None = None,
) -> list[MatchResult]:
    """The tournament's done and void matches as :class:`MatchResult` values, by match id.

    Each match's seats are its stored entrants (:func:`stored_entrants`), so
    :class:`arena.compete.localrun.Standings` counts per entrant label. Deal groups
    are the stored group numbers as text. ``seconds`` comes from the result; ``worker`` is 0
    (the stored worker is a ``host:pid`` string). A void match has no games and its reason.
    Each game's ``record`` is ``{}`` unless ``records`` (one more query, over
    ``game_records``). ``only``: these match ids only (a page counting what finished since
    it last looked).

    Raises:
        LookupError: no tournament has that id.
    """
    found = stored.finished_matches(store, tournament_id, records=records, only=only)
    return [_match_result(match, found.teams, found.records) for match in found.matches]


def tournament_records(store: Store, tournament_id: int) -> Iterator[dict[str, Any]]:
    """Every stored game record of a tournament, by match id then game index, read in
    batches (a tournament may hold millions). Void matches have none.

    Raises:
        LookupError: no tournament has that id.
    """
    return stored.tournament_records(store, tournament_id)


def stored_entrants(labels: Sequence[str] | None, versions: Sequence[int]) -> tuple[Entrant, ...]:
    """A stored match's seats as entrants (:meth:`Entrant.stored`): each seat's label and bot
    version id (a match row's ``labels`` and ``seats``). A match stored before matches had
    labels (``labels`` NULL) seats its version ids as labels, as the pages show it.

    Raises:
        ValueError: as many labels as seats are not given.
    """
    names = [str(version) for version in versions] if labels is None else labels
    return tuple(
        Entrant.stored(str(label), int(version))
        for label, version in zip(names, versions, strict=True)
    )


def _match_result(
    row: Match, teams: bool, records: Mapping[tuple[int, int], dict[str, Any]]
) -> MatchResult:
    scheduled = ScheduledMatch(
        id=row.key,
        seats=stored_entrants(row.labels, row.seats),
        games=row.games,
        seed=row.seed,
        deal_group=None if row.deal_group is None else str(row.deal_group),
        rotation=row.rotation or 0,
        teams=teams,
    )
    result = row.result or {}
    if row.status == "void":
        return MatchResult(scheduled, (), str(result.get("void", "void")))
    games = tuple(
        GameResult(
            index=game["index"],
            seed=game["seed"],
            places=tuple(game["places"]),
            points=tuple(game["points"]),
            winners=tuple(game["winners"]),
            termination=game["termination"],
            verdict=game.get("verdict"),
            record=records.get((row.id, game["index"]), {}),
            luck=tuple(tuple(float(v) for v in seat) for seat in game.get("luck") or ()),
        )
        for game in result.get("games", ())
    )
    sources = tuple(str(source) for source in result.get("sources") or ())
    return MatchResult(scheduled, games, None, float(result.get("seconds", 0.0)), 0, sources)


# --- per-rule-set ratings -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class StoredRating:
    """One bot version's rating under a rule set.

    Attributes:
        bot_version_id: the rated bot version.
        bot: its name, ``owner/bot@vN``.
        rating, low, high: the rating and its 95% interval (Elo scale, mean 1500).
        games: games it played under the rule set.
        rank: 1 = best.
        rank_best, rank_worst: the ranks consistent with the data (docs/ratings.md), when
            known: a fresh fit has them, the ``ratings`` table does not store them (None).
        computed: when the fit was made.
        wins, draws, losses: its record in the counted games (a win: first alone, or its
            side; a draw: first place shared with another side; else a loss).
        last_game: when the last of those games' match finished (None: not known).
    """

    bot_version_id: int
    bot: str
    rating: float
    low: float
    high: float
    games: int
    rank: int
    rank_best: int | None
    rank_worst: int | None
    computed: datetime
    wins: int = 0
    draws: int = 0
    losses: int = 0
    last_game: datetime | None = None


@dataclass(frozen=True, slots=True)
class Refit:
    """What :func:`refit_ratings` did.

    Attributes:
        rule_set_id: the rule set.
        ratings: every rated bot version, best first (empty with fewer than two versions).
        games: the games counted (done matches only).
        load_seconds: reading the games out of the database.
        fit_seconds: building the result matrix and fitting it.
        write_seconds: replacing the ``ratings`` rows and appending the history.
        computed: the ``computed`` and ``time`` of the rows written.
    """

    rule_set_id: int
    ratings: list[StoredRating]
    games: int
    load_seconds: float
    fit_seconds: float
    write_seconds: float
    computed: datetime

    @property
    def seconds(self) -> float:
        """The whole re-fit."""
        return self.load_seconds + self.fit_seconds + self.write_seconds


@dataclass
class _Histogram:
    """Games grouped by seat count and team play: seats and places (one row a group of
    identical games, as version ids and places) and each group's number of games."""

    seats: dict[tuple[int, bool], list[list[int]]]
    places: dict[tuple[int, bool], list[list[int]]]
    counts: dict[tuple[int, bool], list[int]]
    games: int = 0

    @classmethod
    def from_rows(cls, rows: Iterable[Sequence[Any]]) -> _Histogram:
        histogram = cls({}, {}, {})
        skipped = 0
        for seats_text, places_text, teams, count in rows:
            seats, places = json.loads(seats_text), json.loads(places_text or "null")
            if not isinstance(places, list) or len(places) != len(seats):
                skipped += count
                continue
            key = (len(seats), bool(teams))
            histogram.seats.setdefault(key, []).append(seats)
            histogram.places.setdefault(key, []).append(places)
            histogram.counts.setdefault(key, []).append(count)
            histogram.games += count
        if skipped:
            _log.warning("%d stored games have no usable places: not rated", skipped)
        return histogram

    def records(self) -> dict[int, list[int]]:
        """Each version's [wins, draws, losses]: by its best place in a game (a version
        holding two seats counts once), its side's in team play (:func:`outcome`)."""
        records: dict[int, list[int]] = {}
        for key, rows in self.seats.items():
            teams = key[1]
            for seats, places, count in zip(rows, self.places[key], self.counts[key], strict=True):
                for version in set(seats):
                    mine = [seat for seat, v in enumerate(seats) if v == version]
                    record = records.setdefault(version, [0, 0, 0])
                    record[OUTCOMES.index(outcome(places, mine, teams))] += count
        return records

    def pairs(self) -> dict[tuple[int, int], list[int]]:
        """Each ordered pair of versions' [games, wins, draws, losses]: the first's best
        place against the second's best (its side's in team play), in every game where
        both sat on different sides."""
        pairs: dict[tuple[int, int], list[int]] = {}
        for key, rows in self.seats.items():
            teams = key[1]
            for seats, places, count in zip(rows, self.places[key], self.counts[key], strict=True):
                side_of = [seat % 2 if teams else seat for seat in range(len(seats))]
                for a in set(seats):
                    mine = [s for s, v in enumerate(seats) if v == a]
                    my_sides = {side_of[s] for s in mine}
                    best = min(places[s] for s in mine)
                    for b in set(seats) - {a}:
                        theirs = [
                            places[s]
                            for s, v in enumerate(seats)
                            if v == b and side_of[s] not in my_sides
                        ]
                        if not theirs:
                            continue  # only ever a partner
                        record = pairs.setdefault((a, b), [0, 0, 0, 0])
                        record[0] += count
                        their_best = min(theirs)
                        record[1 if best < their_best else 2 if best == their_best else 3] += count
        return pairs

    def versions(self) -> list[int]:
        """Every bot version that played, by id."""
        return sorted({v for rows in self.seats.values() for row in rows for v in row})

    def matrix(self) -> ResultMatrix:
        """The games as one :class:`ResultMatrix` (bots named by version id)."""
        versions = self.versions()
        matrix = ResultMatrix()
        codes = matrix.codes(str(version) for version in versions)
        first = 0
        for key, rows in self.seats.items():
            seats, teams = key
            counts = np.asarray(self.counts[key], dtype=np.int64)
            # Every group becomes its count of identical games, one row a seat.
            bots = np.repeat(codes[np.searchsorted(versions, rows)], counts, axis=0)
            places = np.repeat(np.asarray(self.places[key], dtype=np.int64), counts, axis=0)
            if seats == 2:  # the same comparisons as add_seats, about 5 times faster
                first_ahead = places[:, 0] <= places[:, 1]
                winners = np.where(first_ahead, bots[:, 0], bots[:, 1])
                losers = np.where(first_ahead, bots[:, 1], bots[:, 0])
                matrix.add_pairs(winners, losers, places[:, 0] == places[:, 1])
                continue
            number = bots.shape[0]
            games = np.repeat(np.arange(first, first + number), seats)
            sides = np.tile(np.arange(seats) % 2 if teams else np.arange(seats), number)
            matrix.add_seats(games, bots.ravel(), places.ravel(), sides)
            first += number
        return matrix


def games_matrix(rows: Iterable[Sequence[Any]]) -> tuple[ResultMatrix, int]:
    """Histogram rows (:func:`arena.store.ratings.histogram_rows`) as one
    :class:`ResultMatrix` (bots named by version id) and the number of games in it."""
    histogram = _Histogram.from_rows(rows)
    return histogram.matrix(), histogram.games


def refit_ratings(store: Store, rules: RuleSetRef, *, now: datetime | None = None) -> Refit:
    """Fit every bot version's rating over all done matches of all tournaments played under
    ``rules``; replace the rule set's ``ratings`` rows and append a ``rating_history`` row
    for each version whose games changed (all with time ``now``, default the clock), and
    record the refit on the rule set (the live ratings' asks it covers:
    :mod:`arena.service.live`), in one transaction.

    Each bot version is one rated player, whatever entrant label it played under: two seats
    held by one version are never compared (the game counts once for it), nor are partners
    (team play: seats 0+2 v 1+3). Void, pending and running matches are not counted. With
    fewer than two versions nothing is fitted and the rule set's rows are deleted.

    Raises:
        LookupError: the rule set is not stored.
    """
    computed = datetime.now(UTC) if now is None else as_utc(now)
    started = time.perf_counter()
    inputs = stored.rating_inputs(store, rules)
    histogram = _Histogram.from_rows(inputs.histogram)
    names, last_games = inputs.names, inputs.last_games
    loaded = time.perf_counter()
    fitted: list[Rating] = []
    if len(names) >= 2:
        fitted = histogram.matrix().fit()
    fit_done = time.perf_counter()
    records = histogram.records()
    ratings = [
        StoredRating(
            bot_version_id=int(r.bot),
            bot=names[int(r.bot)],
            rating=r.rating,
            low=r.low,
            high=r.high,
            games=r.games,
            rank=r.rank,
            rank_best=r.rank_best,
            rank_worst=r.rank_worst,
            computed=computed,
            wins=records.get(int(r.bot), [0, 0, 0])[0],
            draws=records.get(int(r.bot), [0, 0, 0])[1],
            losses=records.get(int(r.bot), [0, 0, 0])[2],
            last_game=last_games.get(int(r.bot)),
        )
        for r in fitted
    ]
    _write(store, inputs.rule_set_id, ratings, computed, histogram.pairs(), inputs.asked)
    return Refit(
        rule_set_id=inputs.rule_set_id,
        ratings=ratings,
        games=histogram.games,
        load_seconds=loaded - started,
        fit_seconds=fit_done - loaded,
        write_seconds=time.perf_counter() - fit_done,
        computed=computed,
    )


def _write(
    store: Store,
    rule_set_id: int,
    ratings: list[StoredRating],
    now: datetime,
    pairs: Mapping[tuple[int, int], Sequence[int]],
    asked: int,
) -> None:
    rows = [
        {
            "bot_version_id": r.bot_version_id,
            "rating": r.rating,
            "low": r.low,
            "high": r.high,
            "games": r.games,
            "rank": r.rank,
            "wins": r.wins,
            "draws": r.draws,
            "losses": r.losses,
            "last_game": r.last_game,
        }
        for r in ratings
    ]
    stored.write_ratings(store, rule_set_id, rows, now, pairs, asked)


def rating_table(store: Store, rules: RuleSetRef) -> list[StoredRating]:
    """The rule set's stored ratings (as the last :func:`refit_ratings` wrote them), best
    first; rank bounds are None (not stored).

    Raises:
        LookupError: the rule set is not stored.
    """
    rows, names = stored.rating_rows(store, rules)
    return [
        StoredRating(
            bot_version_id=row.bot_version_id,
            bot=names[row.bot_version_id],
            rating=row.rating,
            low=row.low,
            high=row.high,
            games=row.games,
            rank=row.rank,
            rank_best=None,
            rank_worst=None,
            computed=as_utc(row.computed),
            wins=row.wins,
            draws=row.draws,
            losses=row.losses,
            last_game=None if row.last_game is None else as_utc(row.last_game),
        )
        for row in rows
    ]


def rating_history_of(store: Store, rules: RuleSetRef, version_id: int) -> list[RatingPoint]:
    """Every rating a bot version was given under the rule set, oldest first (empty if it
    was never rated).

    Raises:
        LookupError: the rule set is not stored.
    """
    rows = stored.rating_history_rows(store, rules, version_id)
    return [
        RatingPoint(when, rating, low, high, games, rank)
        for when, rating, low, high, games, rank in rows
    ]
