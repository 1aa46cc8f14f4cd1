"""arena.service.results on both backends: stored tournaments give the local runner's standings
and ratings, and the per-rule-set ratings of bot versions are fitted from the database."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta

import pytest
from alembic import command
from alembic.config import Config
from sqlalchemy import func, inspect, select, update

from arena.compete.entrants import Entrant
from arena.compete.localrun import GameResult, MatchResult, Standings, play_one, tournament_ratings
from arena.compete.ratings import ELO_PER_NAT, PRIOR_SD, Rating, fit_ratings
from arena.compete.ratings import GameResult as RatedGame
from arena.compete.tournaments import Match as ScheduledMatch
from arena.compete.tournaments import schedule
from arena.engine.rules import PRESETS, Rules
from arena.service.board_views import FaultCount, TournamentView, VoidMatch, tournament_view
from arena.service.results import (
    find_rule_set,
    find_tournament,
    load_results,
    rating_history_of,
    rating_table,
    refit_ratings,
    result_json,
    version_names,
)
from arena.store.boards import stored_tally, tournament_tally
from arena.store.db import MIGRATIONS, Store
from arena.store.models import Match, RatingHistory
from arena.store.models import Rating as RatingRow
from arena.store.queue import complete_match, create_tournament, void_match
from tests.paths import REFERENCE_BOTS

# SQL can differ here (stored results, the ratings' refit replacing rows): on SQLite and
# PostgreSQL.
pytestmark = pytest.mark.backends("sqlite", "postgresql")

BOTS = REFERENCE_BOTS
# The reference bots' sources are stored; the built-in strategy of the same name plays them.
SOURCES = {name: (BOTS / f"{name}.py").read_text() for name in ("random", "greedy")}
WORKER = "test:1"
VOID = "a harness failure"
T0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)


def add_versions(store: Store, entrants: Mapping[str, tuple[str, str]]) -> dict[str, int]:
    """Store each entrant's (owner, strategy) as a bot version (the reference bot's source):
    label -> version id. Equal (owner, strategy) pairs share one version."""
    return {
        label: store.add_bot_version(owner, strategy, SOURCES[strategy], {})[0].id
        for label, (owner, strategy) in entrants.items()
    }


def match_ids(store: Store, tournament_id: int) -> dict[str, int]:
    """The tournament's match ids by schedule key."""
    with store.read() as session:
        rows = session.execute(
            select(Match.key, Match.id).where(Match.tournament_id == tournament_id)
        ).all()
    return {key: match_id for key, match_id in rows}


def stored_tournament(
    store: Store,
    name: str,
    entrants: Mapping[str, tuple[str, str]],
    *,
    rules: Rules = PRESETS["block"],
    teams: bool = False,
    games: int = 3,
    seed: int = 1,
    void: Sequence[int] = (),
    unplayed: Sequence[int] = (),
) -> tuple[int, list[MatchResult]]:
    """Schedule a round robin of ``entrants`` (label -> (owner, strategy)), store it, play its
    matches here with play_one and store each result as a worker would. Matches numbered in
    ``void`` are voided instead, those in ``unplayed`` stay pending. Return the tournament id
    and the local results (void ones as the local runner reports them; unplayed left out)."""
    versions = add_versions(store, entrants)
    stored = {label: Entrant.stored(label, versions[label]) for label in entrants}
    scheduled = schedule(
        "round-robin",
        [Entrant.builtin(strategy, label) for label, (_owner, strategy) in entrants.items()],
        rules=rules,
        players=4 if teams else 2,
        teams=teams,
        games_per_match=games,
        seed=seed,
    )
    tournament_id = create_tournament(
        store,
        name=name,
        rules=rules,
        format="round-robin",
        players=4 if teams else 2,
        teams=teams,
        games_per_match=games,
        seed=seed,
        entrants=list(stored.values()),
        # the same matches, each seat the stored version of the strategy played here
        matches=[
            dataclasses.replace(m, seats=tuple(stored[seat.label] for seat in m.seats))
            for m in scheduled
        ],
    )
    ids = match_ids(store, tournament_id)
    results: list[MatchResult] = []
    for number, match in enumerate(scheduled):
        if number in unplayed:
            continue
        if number in void:
            assert void_match(store, ids[match.id], WORKER, VOID)
            results.append(MatchResult(match, (), VOID))
            continue
        result = play_one(match, rules, sandboxed=False)
        assert result.void is None
        records = [game.record for game in result.games]
        stored = result_json(result, WORKER)
        assert complete_match(store, ids[match.id], WORKER, records=records, result=stored)
        results.append(result)
    return tournament_id, results


def store_games(
    store: Store,
    name: str,
    versions: Mapping[str, int],
    matches: Sequence[tuple[tuple[str, ...], Sequence[tuple[int, ...]]]],
    *,
    rules: Rules = PRESETS["block"],
    teams: bool = False,
) -> int:
    """Store a tournament of hand-made done matches: (seat labels, each game's places)."""
    entrants = {label: Entrant.stored(label, version) for label, version in versions.items()}
    scheduled = [
        ScheduledMatch(
            f"m{n}", tuple(entrants[label] for label in seats), len(places), 100 + n, teams=teams
        )
        for n, (seats, places) in enumerate(matches)
    ]
    tournament_id = create_tournament(
        store,
        name=name,
        rules=rules,
        format="round-robin",
        players=len(matches[0][0]),
        teams=teams,
        games_per_match=1,
        seed=1,
        entrants=list(entrants.values()),
        matches=scheduled,
    )
    ids = match_ids(store, tournament_id)
    for match, (_seats, places) in zip(scheduled, matches, strict=True):
        games = [
            {
                "index": index,
                "seed": index,
                "places": list(game),
                "points": [10 * (len(game) - p) for p in game],
                "winners": [seat for seat, p in enumerate(game) if p == 0],
                "termination": "target",
                "verdict": None,
            }
            for index, game in enumerate(places)
        ]
        result = {"games": games, "seconds": 0.5, "worker": WORKER}
        assert complete_match(store, ids[match.id], WORKER, records=[], result=result)
    return tournament_id


def local_ratings(results: Sequence[MatchResult]) -> dict[str, Rating]:
    """What `arena tournament run --local` rates: every entrant by name, over every game."""
    rated = [
        RatedGame(tuple(seat.label for seat in result.match.seats), game.places)
        for result in results
        for game in result.games
    ]
    return {rating.bot: rating for rating in fit_ratings(rated)}


def figures(standings: Standings) -> tuple[object, ...]:
    """Everything Standings computed, keyed by entrant name."""
    rows = [(s.name, s.games, s.wins, s.points, s.forfeits, s.places) for s in standings.ranking()]
    cross = {
        (a, b): (standings.met[a].get(b), standings.ahead[a].get(b))
        for a in standings.stats
        for b in standings.stats
    }
    return rows, cross, standings.matches, standings.games, standings.void


THREE = {"r": ("alice", "random"), "g": ("alice", "greedy"), "r2": ("bob", "random")}


# --- a tournament's standings and ratings ----------------------------------------------------


def test_stored_standings_and_ratings_equal_the_local_ones(store: Store) -> None:
    tournament_id, local = stored_tournament(store, "t1", THREE, games=3, void=[5])
    loaded = load_results(store, tournament_id)
    assert [r.id for r in loaded] == [r.id for r in local]
    assert loaded[5].void == VOID and loaded[5].games == ()
    assert [r.games for r in loaded] == [
        tuple(dataclasses.replace(game, record={}) for game in r.games) for r in local
    ]
    assert [seat.label for seat in loaded[0].match.seats] == [
        seat.label for seat in local[0].match.seats
    ]
    versions = add_versions(store, THREE)  # (stored already: the same ids)
    assert loaded[0].match.seats == tuple(
        Entrant.stored(seat.label, versions[seat.label]) for seat in local[0].match.seats
    )

    mine = Standings(THREE)
    theirs = Standings(THREE)
    for result in loaded:
        mine.add(result)
    for result in local:
        theirs.add(result)
    assert figures(mine) == figures(theirs)
    # 3 tables of 3 games, each split over both seat orders (2 + 1): 6 matches, 1 void.
    assert (mine.matches, mine.games, mine.void) == (5, 8, [(local[5].id, VOID)])

    stored, played = tournament_ratings(loaded), local_ratings(local)
    assert set(stored) == set(played) == {"r", "g", "r2"}
    for label, rating in played.items():
        assert stored[label].rating == pytest.approx(rating.rating, abs=1e-6)
        assert (stored[label].games, stored[label].rank) == (rating.games, rating.rank)


def test_records_are_loaded_on_request(store: Store) -> None:
    tournament_id, local = stored_tournament(store, "t1", THREE, games=2)
    loaded = load_results(store, tournament_id, records=True)
    assert [[g.record for g in r.games] for r in loaded] == [
        [g.record for g in r.games] for r in local
    ]
    assert loaded[0].games[0].record["seats"] == [seat.label for seat in local[0].match.seats]


def test_a_label_with_a_dot_keeps_its_name(store: Store) -> None:
    assert Entrant.stored("my.bot", 1).label == "my.bot"  # a label is never a file's "stem"
    entrants = {"my.bot": ("alice", "random"), "my.other": ("alice", "greedy")}
    tournament_id, _local = stored_tournament(store, "t1", entrants, games=2)
    loaded = load_results(store, tournament_id)
    standings = Standings(entrants)
    for result in loaded:
        standings.add(result)
    assert sorted(s.name for s in standings.ranking()) == ["my.bot", "my.other"]
    assert [s.games for s in standings.ranking()] == [2, 2]
    assert set(tournament_ratings(loaded)) == {"my.bot", "my.other"}


def test_lookups_raise_lookup_error(store: Store) -> None:
    tournament_id, _local = stored_tournament(store, "t1", THREE, games=1)
    assert find_tournament(store, "t1").id == tournament_id
    with pytest.raises(LookupError, match="no tournament called 'nope'"):
        find_tournament(store, "nope")
    with pytest.raises(LookupError, match="no tournament with id"):
        load_results(store, tournament_id + 100)
    block = find_rule_set(store, PRESETS["block"])
    assert find_rule_set(store, block.id).id == find_rule_set(store, block.version).id == block.id
    with pytest.raises(LookupError, match="no rule set draw"):
        find_rule_set(store, PRESETS["draw"])
    with pytest.raises(LookupError, match="no rule set"):
        refit_ratings(store, PRESETS["draw"])


def test_a_forfeit_round_trips(store: Store) -> None:
    versions = add_versions(store, {"a": ("alice", "greedy"), "b": ("bob", "random")})
    a, b = Entrant.stored("a", versions["a"]), Entrant.stored("b", versions["b"])
    match = ScheduledMatch("m0", (a, b), 2, 5)
    verdict = {"seat": 1, "termination": "crash", "message": "boom", "stderr": ""}
    games = (
        GameResult(0, 11, (0, 1), (100, 30), (0,), "target", None, {}),
        GameResult(1, 12, (0, 1), (20, 45), (0,), "crash", verdict, {}),
    )
    played = MatchResult(match, games, None, 2.5)
    tournament_id = create_tournament(
        store,
        name="t1",
        rules=PRESETS["block"],
        format="round-robin",
        players=2,
        teams=False,
        games_per_match=2,
        seed=1,
        entrants=[a, b],
        matches=[match],
    )
    match_id = match_ids(store, tournament_id)["m0"]
    complete_match(store, match_id, WORKER, records=[], result=result_json(played, WORKER))
    (loaded,) = load_results(store, tournament_id)
    assert loaded == played and loaded.seconds == 2.5
    standings = Standings(["a", "b"])
    standings.add(loaded)
    assert [(s.name, s.wins, s.points, s.forfeits) for s in standings.ranking()] == [
        ("a", 2, 120, 0),
        ("b", 0, 75, 1),
    ]


def test_result_json_refuses_a_void_match() -> None:
    match = ScheduledMatch("m0", (Entrant.builtin("random"), Entrant.builtin("greedy")), 1, 1)
    with pytest.raises(ValueError, match="void"):
        result_json(MatchResult(match, (), VOID), WORKER)


# --- ratings per rule set ----------------------------------------------------------------


def test_refit_rates_bot_versions_as_the_local_path_rates_entrants(store: Store) -> None:
    _id, local = stored_tournament(store, "t1", THREE, games=4, void=[2], unplayed=[4])
    refit = refit_ratings(store, PRESETS["block"], now=T0)
    names = version_names(store, add_versions(store, THREE).values())
    assert sorted(names.values()) == ["alice/greedy@v1", "alice/random@v1", "bob/random@v1"]
    played = local_ratings(local)
    # 6 matches of 2 games; one void and one pending are not counted.
    assert refit.games == sum(len(r.games) for r in local) == 8
    by_label = {r.bot: r for r in refit.ratings}
    for label, (owner, strategy) in THREE.items():
        mine, theirs = by_label[f"{owner}/{strategy}@v1"], played[label]
        assert mine.rating == pytest.approx(theirs.rating, abs=1e-6)
        assert (mine.low, mine.high) == pytest.approx((theirs.low, theirs.high), abs=1e-6)
        assert (mine.games, mine.rank) == (theirs.games, theirs.rank)
        assert (mine.rank_best, mine.rank_worst) == (theirs.rank_best, theirs.rank_worst)
    assert [r.rank for r in refit.ratings] == [1, 2, 3]
    assert sum(r.rating for r in refit.ratings) == pytest.approx(3 * 1500)
    table = rating_table(store, PRESETS["block"])
    # Floats round-trip exactly (REAL, double precision); rank bounds are not stored.
    assert [dataclasses.replace(r, rank_best=None, rank_worst=None) for r in refit.ratings] == table
    assert all(r.computed == T0 for r in table)


def _bradley_terry_gap(wins: int, losses: int) -> float:
    """The Elo gap of two bots, one of which won ``wins`` of ``wins + losses`` games, at the
    posterior mode with the documented prior: solve d/dd of
    wins log s(d) + losses log s(-d) - lambda d^2 / 4 = 0 (strengths +-d/2) by bisection."""
    precision = (400 / math.log(10) / PRIOR_SD) ** 2

    def slope(d: float) -> float:
        return wins - (wins + losses) / (1 + math.exp(-d)) - precision * d / 2

    low, high = -20.0, 20.0
    for _ in range(200):
        middle = (low + high) / 2
        low, high = (middle, high) if slope(middle) > 0 else (low, middle)
    return ELO_PER_NAT * low


def test_a_hand_computed_bradley_terry_fit(store: Store) -> None:
    versions = add_versions(store, {"a": ("alice", "greedy"), "b": ("bob", "random")})
    # a beats b 3 games of 4, with the seats swapped in the second match.
    store_games(store, "t1", versions, [(("a", "b"), [(0, 1), (1, 0)]), (("b", "a"), [(1, 0)] * 2)])
    best, worst = refit_ratings(store, PRESETS["block"]).ratings
    assert (best.bot, worst.bot) == ("alice/greedy@v1", "bob/random@v1")
    gap = best.rating - worst.rating
    assert gap == pytest.approx(_bradley_terry_gap(3, 1), abs=1e-4)
    # Without the prior the gap is 400 log10 3 = 190.85; the prior pulls it in by about 10.
    assert 180 < gap < 400 * math.log10(3)
    assert best.rating + worst.rating == pytest.approx(3000)
    assert (best.games, worst.games) == (4, 4)
    assert best.high - best.rating == pytest.approx(best.rating - best.low)


def test_one_version_on_two_seats_and_team_play(store: Store) -> None:
    muggins = PRESETS["muggins"]
    entrants = {"r": ("alice", "random"), "g": ("alice", "greedy")}
    versions = add_versions(store, entrants)
    # Two entrants sharing one version: their games compare nothing, and count once.
    twins = {"r": versions["r"], "r2": versions["r"], "g": versions["g"]}
    store_games(
        store,
        "twins",
        twins,
        [(("r", "r2"), [(0, 1), (1, 0), (0, 1)]), (("g", "r2"), [(0, 1), (1, 0)])],
        rules=muggins,
    )
    _id, teams = stored_tournament(store, "teams", entrants, rules=muggins, teams=True, games=4)
    assert teams[0].match.seats[0] == teams[0].match.seats[2]
    refit = refit_ratings(store, muggins)
    assert refit.games == 5 + sum(len(r.games) for r in teams)

    name = {"r": "alice/random@v1", "r2": "alice/random@v1", "g": "alice/greedy@v1"}
    expected = [
        RatedGame(("alice/random@v1",) * 2, (0, 1)),
        RatedGame(("alice/random@v1",) * 2, (1, 0)),
        RatedGame(("alice/random@v1",) * 2, (0, 1)),
        RatedGame(("alice/greedy@v1", "alice/random@v1"), (0, 1)),
        RatedGame(("alice/greedy@v1", "alice/random@v1"), (1, 0)),
    ] + [
        RatedGame(
            tuple(name[seat.label] for seat in result.match.seats),
            game.places,
            (0, 1, 0, 1),
        )
        for result in teams
        for game in result.games
    ]
    fitted = {r.bot: r for r in fit_ratings(expected)}
    for rating in refit.ratings:
        assert rating.rating == pytest.approx(fitted[rating.bot].rating, abs=1e-6)
        assert rating.games == fitted[rating.bot].games
    random_games = 3 + 2 + sum(len(r.games) for r in teams)
    assert {r.bot: r.games for r in refit.ratings}["alice/random@v1"] == random_games
    # The other rule set is untouched.
    with pytest.raises(LookupError):
        refit_ratings(store, PRESETS["block"])


def test_refit_replaces_the_rows_and_appends_the_history(store: Store) -> None:
    versions = add_versions(store, {"a": ("alice", "greedy"), "b": ("bob", "random")})
    store_games(store, "t1", versions, [(("a", "b"), [(0, 1), (1, 0), (0, 1)])])
    first = refit_ratings(store, PRESETS["block"], now=T0)
    later = T0 + timedelta(hours=1)
    store_games(store, "t2", versions, [(("b", "a"), [(0, 1)] * 4)])
    second = refit_ratings(store, PRESETS["block"], now=later)
    assert (first.games, second.games) == (3, 7)
    leader = {r.bot: r.rank for r in second.ratings}
    assert leader == {"bob/random@v1": 1, "alice/greedy@v1": 2}
    with store.read() as session:
        rows = session.scalar(select(func.count()).select_from(RatingRow))
        history = session.scalar(select(func.count()).select_from(RatingHistory))
    assert (rows, history) == (2, 4)
    table = rating_table(store, first.rule_set_id)
    assert [(r.bot, r.games, r.computed) for r in table] == [
        ("bob/random@v1", 7, later),
        ("alice/greedy@v1", 7, later),
    ]
    points = rating_history_of(store, PRESETS["block"], versions["b"])
    assert [(p.time, p.games, p.rank) for p in points] == [(T0, 3, 2), (later, 7, 1)]
    assert points[1].rating == pytest.approx(second.ratings[0].rating)
    assert points[0].low < points[0].rating < points[0].high
    assert rating_history_of(store, PRESETS["block"], versions["b"] + 100) == []


def test_refit_with_one_version_deletes_the_rows(store: Store) -> None:
    versions = add_versions(store, {"a": ("alice", "greedy"), "b": ("bob", "random")})
    store_games(store, "t1", versions, [(("a", "b"), [(0, 1)])])
    refit_ratings(store, PRESETS["block"])
    assert len(rating_table(store, PRESETS["block"])) == 2
    with store.write() as session:  # as if the only game between two versions were gone
        session.execute(update(Match).values(status="void"))
    store_games(store, "t2", {"a": versions["a"], "a2": versions["a"]}, [(("a", "a2"), [(0, 1)])])
    refit = refit_ratings(store, PRESETS["block"])
    assert (refit.games, refit.ratings) == (1, [])
    assert rating_table(store, PRESETS["block"]) == []


def test_records_count_each_version_once_a_game_with_sides_and_shared_firsts() -> None:
    """Wins, draws and losses from stored places: a version on two seats counts once (its
    best place), partners share their side's result, first place shared between sides is a
    draw."""
    from arena.service.results import _Histogram

    histogram = _Histogram.from_rows(
        [
            ("[1, 2]", "[0, 1]", False, 5),  # 1 beats 2, five times
            ("[1, 2]", "[0, 0]", False, 2),  # drawn twice
            ("[1, 2, 3]", "[2, 0, 1]", False, 1),  # 2 first: 1 and 3 lose
            ("[1, 1, 3]", "[1, 0, 2]", False, 1),  # 1 on two seats: its best place, first
            ("[1, 2, 3, 4]", "[0, 1, 0, 1]", True, 3),  # 1 and 3 partners: both win
        ]
    )
    assert histogram.records() == {
        1: [5 + 1 + 3, 2, 1],
        2: [1, 2, 5 + 3],
        3: [3, 0, 2],
        4: [0, 0, 3],
    }


def test_pair_records_compare_best_places_and_skip_partners() -> None:
    """Each ordered pair of versions: games together on different sides, and the first's
    best place against the second's (wins, draws, losses)."""
    from arena.service.results import _Histogram

    histogram = _Histogram.from_rows(
        [
            ("[1, 2]", "[0, 1]", False, 5),
            ("[1, 2]", "[0, 0]", False, 2),
            ("[1, 2, 3]", "[2, 0, 1]", False, 1),
            ("[1, 1, 3]", "[1, 0, 2]", False, 1),  # 1 on two seats: its best, first
            ("[1, 2, 3, 4]", "[0, 1, 0, 1]", True, 3),  # 1+3 v 2+4: partners never count
        ]
    )
    pairs = histogram.pairs()
    assert pairs[(1, 2)] == [5 + 2 + 1 + 3, 5 + 3, 2, 1]
    assert pairs[(2, 1)] == [11, 1, 2, 8]
    assert pairs[(1, 3)] == [1 + 1 + 0, 1, 0, 1]  # 3 ahead of 1 in the 3-player game
    assert pairs[(3, 1)] == [2, 1, 0, 1]
    assert (2, 4) not in pairs and (1, 3) in pairs  # 1+3 and 2+4 partners in the team game
    assert pairs[(1, 4)] == [3, 3, 0, 0] and pairs[(2, 3)] == [1 + 3, 1, 0, 3]
    for (a, b), (games, wins, draws, losses) in pairs.items():
        assert games == wins + draws + losses
        assert pairs[(b, a)] == [games, losses, draws, wins]  # each pair both ways


def test_refit_stores_the_pair_records(store: Store) -> None:
    from arena.store.models import PairRecord

    versions = add_versions(store, {"a": ("alice", "greedy"), "b": ("bob", "random")})
    # a beats b 3 games of 4, with the seats swapped in the second match.
    store_games(store, "t1", versions, [(("a", "b"), [(0, 1), (1, 0)]), (("b", "a"), [(1, 0)] * 2)])
    refit_ratings(store, PRESETS["block"])
    with store.read() as session:
        rows = session.execute(
            select(
                PairRecord.bot_version_id, PairRecord.opponent_version_id, PairRecord.games,
                PairRecord.wins, PairRecord.draws, PairRecord.losses,
            )
        ).all()  # fmt: skip
    a, b = versions["a"], versions["b"]
    assert sorted(tuple(row) for row in rows) == sorted([(a, b, 4, 3, 0, 1), (b, a, 4, 1, 0, 3)])
    refit_ratings(store, PRESETS["block"])  # replaced, not added to
    with store.read() as session:
        assert session.scalar(select(func.count()).select_from(PairRecord)) == 2


# --- a tournament's page: its games grouped by the database ----------------------------------


def _page_agrees(store: Store, name: str, tournament_id: int) -> TournamentView:
    """The tournament's page (its games grouped by the database) counts what the local
    runner's Standings and fit count over every stored result; the page's view."""
    view = tournament_view(store, name)
    stored, counted = stored_tally(store, tournament_id), tournament_tally(store, tournament_id)
    assert stored.groups and sorted(stored.groups, key=repr) == sorted(counted.groups, key=repr)
    assert sorted(stored.void) == sorted(counted.void)
    loaded = load_results(store, tournament_id)
    local = Standings(sorted({s.label for r in loaded for s in r.match.seats}))
    for result in loaded:
        local.add(result)
    assert [(r.entrant, r.games, r.wins, r.points, r.forfeits) for r in view.standings] == [
        (s.name, s.games, s.wins, s.points, s.forfeits) for s in local.ranking()
    ]
    assert [(v.match, v.reason) for v in view.void] == sorted(local.void)
    fitted = tournament_ratings(loaded)
    assert {r.entrant for r in view.standings if r.rating is not None} == set(fitted)
    for row in view.standings:
        if row.rating is not None:
            assert row.rating == pytest.approx(fitted[row.entrant].rating, abs=1e-6)
    return view


def test_a_tournament_page_counts_what_the_local_runner_counts(store: Store) -> None:
    tournament_id, local = stored_tournament(store, "t1", THREE, games=3, void=[5])
    view = _page_agrees(store, "t1", tournament_id)
    assert view.void == [VoidMatch(local[5].id, VOID)]
    assert view.crosstable is not None and len(view.crosstable.entrants) == 3
    muggins = {"r": ("alice", "random"), "g": ("alice", "greedy")}
    teams_id, _ = stored_tournament(store, "teams", muggins, rules=PRESETS["muggins"], teams=True)
    _page_agrees(store, "teams", teams_id)


def _migrate(store: Store, revision: str, *, down: bool = False) -> None:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    with store.engine.begin() as connection:
        config.attributes["connection"] = connection
        (command.downgrade if down else command.upgrade)(config, revision)


def test_the_migration_fills_the_tally_of_a_tournament_played_before_it(store: Store) -> None:
    tournament_id, _ = stored_tournament(store, "t1", THREE, games=3, void=[2])
    before = tournament_view(store, "t1")
    _migrate(store, "0025", down=True)  # as stored before the table existed
    with store.read() as session:
        assert "tournament_tallies" not in inspect(session.connection()).get_table_names()
    _migrate(store, "head")
    assert tournament_view(store, "t1") == before
    _page_agrees(store, "t1", tournament_id)


@pytest.mark.backends("sqlite", "postgresql")
def test_one_caller_claims_a_tournaments_fit_until_it_stores_or_expires(store: Store) -> None:
    from arena.store import tallies

    tournament_id, _ = stored_tournament(store, "t1", THREE, games=1)
    now = datetime.now(UTC)
    assert tallies.stored_figures(store, tournament_id) is None
    assert tallies.claim_figures(store, tournament_id, now, 30)
    assert not tallies.claim_figures(store, tournament_id, now, 30)
    held = tallies.stored_figures(store, tournament_id)
    assert held is not None and held.figures is None and held.version == (-1, -1)
    assert held.claimed_until == now + timedelta(seconds=30)
    tallies.store_figures(store, tournament_id, (3, 0), '{"x": NaN}', now)
    assert tallies.stored_figures(store, tournament_id) == tallies.StoredFigures(
        (3, 0), '{"x": NaN}', None
    )
    assert tallies.claim_figures(store, tournament_id, now, 30)  # stored: free again
    later = now + timedelta(seconds=31)  # a claim its process never ended
    assert tallies.claim_figures(store, tournament_id, later, 30)
    tallies.release_figures(store, tournament_id)
    assert tallies.claim_figures(store, tournament_id, later, 30)


def test_a_tournament_page_counts_forfeits_by_entrant_and_kind(store: Store) -> None:
    versions = add_versions(store, {"a": ("alice", "greedy"), "b": ("bob", "random")})
    a, b = Entrant.stored("a", versions["a"]), Entrant.stored("b", versions["b"])
    matches = [ScheduledMatch(f"m{n}", (a, b) if n else (b, a), 3, 5 + n) for n in range(2)]
    tournament_id = create_tournament(
        store, name="t1", rules=PRESETS["block"], format="round-robin", players=2, teams=False,
        games_per_match=3, seed=1, entrants=[a, b], matches=matches,
    )  # fmt: skip
    crash = {"seat": 1, "termination": "crash", "message": "boom", "stderr": ""}
    timeout = {"seat": 0, "termination": "timeout", "message": "slow", "stderr": ""}
    for match, verdicts in zip(
        matches, [(None, crash, crash), (timeout, None, crash)], strict=True
    ):
        games = tuple(
            GameResult(i, 11 + i, (0, 1) if v is None or v["seat"] else (1, 0), (30 + i, 7 * i),
                       (0,), "target" if v is None else str(v["termination"]), v, {})
            for i, v in enumerate(verdicts)
        )  # fmt: skip
        played = result_json(MatchResult(match, games, None, 1.0), WORKER)
        ids = match_ids(store, tournament_id)
        assert complete_match(store, ids[match.id], WORKER, records=[], result=played)
    view = _page_agrees(store, "t1", tournament_id)
    # m0 (b, a): a at seat 1 crashed twice; m1 (a, b): a at seat 0 timed out, b crashed
    assert view.faults == [
        FaultCount("a", "crash", 2),
        FaultCount("a", "timeout", 1),
        FaultCount("b", "crash", 1),
    ]
    assert {r.entrant: r.forfeits for r in view.standings} == {"a": 3, "b": 1}
