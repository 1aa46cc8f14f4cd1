"""The ladder's pairing rule: placement, fairness, determinism, and that it learns faster."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest

from arena.compete.ladder import (
    LadderEntrant,
    LadderPolicy,
    Pairing,
    field_from_ratings,
    next_pairings,
    pair_scores,
    placement_quantiles,
)
from arena.compete.ratings import ELO_PER_NAT, PRIOR_SD, ResultMatrix, fit_ratings_arrays


def established(count: int, *, spread: float = 1900.0, games: int = 30) -> list[LadderEntrant]:
    """``count`` entrants rated evenly from 1000 to 1000 + spread, with 30 games each."""
    step = spread / (count - 1)
    return [LadderEntrant(f"e{i:02d}", 1000.0 + step * i, 60.0, games, 0.0) for i in range(count)]


def test_placement_quantiles_halve_the_field_then_quarter_it() -> None:
    assert placement_quantiles(7) == [0.5, 0.25, 0.75, 0.125, 0.375, 0.625, 0.875]
    assert placement_quantiles(0) == []


def test_a_new_entrant_first_meets_a_spread_of_the_field() -> None:
    field = [*established(20), LadderEntrant("new", 1500.0, PRIOR_SD, 0)]
    pairings = next_pairings(field, 5, seed=3)
    assert all(p.first == "new" and p.reason == "placement" for p in pairings)
    opponents = [p.second for p in pairings]
    ranks = sorted(int(name[1:]) for name in opponents)
    assert len(set(opponents)) == 5
    # Quantiles 1/2, 1/4, 3/4, 1/8, 3/8 of 20 entrants ranked 0-19.
    assert ranks == [2, 5, 7, 9, 14]


def test_a_new_entrant_with_games_gets_only_the_rest_of_its_placement() -> None:
    field = [*established(20), LadderEntrant("new", 1500.0, 300.0, 3)]
    placed = [p for p in next_pairings(field, 10, seed=1) if p.reason == "placement"]
    assert len(placed) == 2
    # Its 4th and 5th games go to the quantiles 1/8 and 3/8.
    assert sorted(p.second for p in placed) == ["e02", "e07"]


def test_pairings_are_deterministic_given_the_seed() -> None:
    field = [LadderEntrant(f"e{i}", 1500.0, 100.0, 10) for i in range(30)]
    assert next_pairings(field, 10, seed=7) == next_pairings(field, 10, seed=7)
    assert next_pairings(field, 10, seed=7) != next_pairings(field, 10, seed=8)


def test_pairings_are_among_active_entrants_never_with_themselves() -> None:
    field = [
        LadderEntrant(f"e{i}", 1200.0 + 25 * i, 80.0, 12 + i % 5, active=i % 4 != 0)
        for i in range(24)
    ]
    active = {e.id for e in field if e.active}
    for seed in range(20):
        for pairing in next_pairings(field, 12, seed=seed):
            assert pairing.first != pairing.second
            assert {pairing.first, pairing.second} <= active


def test_fewer_than_two_active_entrants_get_no_pairings() -> None:
    field = [LadderEntrant("a", 1500.0, 50.0, 5), LadderEntrant("b", 1500.0, 50.0, 5, active=False)]
    assert next_pairings(field, 3, seed=1) == []
    assert next_pairings(established(4), 0, seed=1) == []


def play_ladder_rounds(
    truth: list[float], rounds: int, per_round: int, policy: LadderPolicy
) -> list[Counter[str]]:
    """Pair with the ladder each round; ratings are the truth, errors shrink with games."""
    games: Counter[str] = Counter()
    history = []
    for number in range(rounds):
        field = [
            LadderEntrant(f"e{i}", rating, 400.0 / math.sqrt(games[f"e{i}"] + 1), games[f"e{i}"])
            for i, rating in enumerate(truth)
        ]
        for pairing in next_pairings(field, per_round, seed=number, policy=policy):
            games[pairing.first] += 1
            games[pairing.second] += 1
        history.append(Counter(games))
    return history


def test_fairness_floor_and_factor_hold_over_many_rounds() -> None:
    # A dense middle the information rule loves, and an outlier it would starve.
    truth = [1500.0 + 5.0 * i for i in range(29)] + [4000.0]
    policy = LadderPolicy()
    history = play_ladder_rounds(truth, rounds=300, per_round=4, policy=policy)
    names = [f"e{i}" for i in range(len(truth))]
    for games in history[60:]:
        counts = [games[name] for name in names]
        mean = sum(counts) / len(counts)
        # One call's games (at most one each here) of slack on either bound.
        assert min(counts) >= policy.floor * mean - 1
        assert max(counts) <= policy.ceiling * mean + 1
    final = [history[-1][name] for name in names]
    assert max(final) <= policy.factor * min(final)
    assert history[-1]["e29"] >= policy.floor * sum(final) / len(final) - 1


def test_the_information_rule_prefers_close_ratings_and_wide_intervals() -> None:
    rating = np.array([1500.0, 1510.0, 1900.0, 1505.0])
    stderr = np.array([30.0, 30.0, 30.0, 150.0])
    close, far, wide = pair_scores(rating, stderr, [0, 0, 0], [1, 2, 3])
    assert close > far
    assert wide > close


def test_a_late_entrant_is_not_capped_by_its_short_time_on_the_ladder() -> None:
    veterans = [
        LadderEntrant(f"v{i}", 1400.0 + 20 * i, 50.0, 100, 90.0, joined=0.0) for i in range(10)
    ]
    late = LadderEntrant("late", 1500.0, 120.0, 15, 99.0, joined=90.0)
    # 10 games past placement in 10 time units is the veterans' 95 in 100: neither due nor capped.
    pairings = next_pairings([*veterans, late], 5, seed=2, now=100.0)
    assert len(pairings) == 5
    assert all(p.reason == "information" for p in pairings)
    # The widest interval in the middle of the field: it plays.
    assert any("late" in (p.first, p.second) for p in pairings)


def test_invalid_arguments_raise() -> None:
    field = established(4)
    with pytest.raises(ValueError, match="count"):
        next_pairings(field, -1, seed=0)
    with pytest.raises(ValueError, match="distinct"):
        next_pairings([*field, field[0]], 1, seed=0)
    with pytest.raises(ValueError, match="covariance"):
        next_pairings(field, 1, seed=0, covariance=np.eye(3))
    with pytest.raises(ValueError, match="ceiling"):
        LadderPolicy(ceiling=1.0)
    with pytest.raises(ValueError, match="games"):
        LadderEntrant("x", 1500.0, 10.0, -1)


def test_the_field_comes_from_a_rating_fit() -> None:
    ratings = fit_ratings_arrays(["a", "b"], [0, 0, 1], [1, 1, 0])
    field = field_from_ratings(ratings, ["a", "b", "c"], last_played={"a": 5.0}, inactive=["b"])
    assert [(e.id, e.games, e.active) for e in field] == [
        ("a", 3, True),
        ("b", 3, False),
        ("c", 0, True),
    ]
    assert field[0].last_played == 5.0 and field[2].stderr == PRIOR_SD


def test_the_fit_covariance_matches_the_standard_errors() -> None:
    matrix = ResultMatrix()
    codes = matrix.codes(["a", "b", "c"])
    matrix.add_pairs(codes[[0, 0, 1, 2, 1]], codes[[1, 2, 2, 0, 0]])
    ratings, covariance = matrix.fit_with_covariance()
    assert ratings == matrix.fit()
    stderr = {r.bot: r.stderr for r in ratings}
    assert np.sqrt(np.diag(covariance)) == pytest.approx([stderr["a"], stderr["b"], stderr["c"]])


def simulate(truth: np.ndarray, batches: int, seed: int, *, ladder: bool) -> float:
    """Spearman of the fit with the truth after ``batches`` batches of len(truth)//2 games."""
    names = [f"e{i}" for i in range(truth.size)]
    rng = np.random.default_rng(seed)
    matrix = ResultMatrix()
    codes = matrix.codes(names)
    index = {name: i for i, name in enumerate(names)}
    fit = None
    for batch in range(batches):
        half = truth.size // 2
        if ladder:
            field = field_from_ratings(fit[0] if fit else [], names)
            chosen: list[Pairing] = next_pairings(
                field, half, seed=batch, covariance=fit[1] if fit else None
            )
            first = np.array([index[p.first] for p in chosen])
            second = np.array([index[p.second] for p in chosen])
        else:
            first = rng.integers(0, truth.size, half)
            second = (first + rng.integers(1, truth.size, half)) % truth.size
        p_first = 1.0 / (1.0 + np.exp(-(truth[first] - truth[second]) / ELO_PER_NAT))
        wins = rng.random(first.size) < p_first
        matrix.add_pairs(codes[np.where(wins, first, second)], codes[np.where(wins, second, first)])
        fit = matrix.fit_with_covariance()
    estimate = {r.bot: r.rating for r in fit[0]} if fit else {}
    from scipy import stats  # here: scipy.stats is most of a second of every test process's start

    return float(stats.spearmanr([estimate[n] for n in names], truth).statistic)


def test_the_ladder_ranks_better_than_random_pairing_at_equal_games() -> None:
    truth = np.linspace(0.0, 1200.0, 30)
    ladder = [simulate(truth, 12, seed, ladder=True) for seed in (1, 2)]
    random = [simulate(truth, 12, seed, ladder=False) for seed in (1, 2)]
    assert sum(ladder) > sum(random)


def test_a_refit_stops_at_rounding_instead_of_running_out_of_newton_steps(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # 1,525 random games among 50 entrants: the gradient's rounding (~6e-8) lies above the
    # fit's tolerance, and the line search kept taking steps that changed nothing.
    truth = np.linspace(0.0, 400.0, 50)
    pairs, outcomes = np.random.default_rng(0), np.random.default_rng(0)
    matrix = ResultMatrix()
    codes = matrix.codes([f"e{i}" for i in range(50)])
    for _ in range(61):
        a = pairs.integers(0, 50, 25)
        b = (a + pairs.integers(1, 50, 25)) % 50
        p_a = 1.0 / (1.0 + np.exp(-(truth[a] - truth[b]) / ELO_PER_NAT))
        wins = outcomes.random(a.size) < p_a
        outcomes.random(a.size)  # the benchmark's draws (none at draw rate 0)
        matrix.add_pairs(codes[np.where(wins, a, b)], codes[np.where(wins, b, a)])
    with caplog.at_level("WARNING", logger="arena.compete.ratings"):
        matrix.fit()
    assert not caplog.records


def test_a_full_batch_pairs_every_entrant_once() -> None:
    # Candidates run out before the batch is full: the open entrants get pairs among themselves.
    field = established(40, spread=800.0)
    for seed in range(10):
        pairings = next_pairings(field, 20, seed=seed)
        counts = Counter(name for p in pairings for name in (p.first, p.second))
        assert len(pairings) == 20
        assert set(counts.values()) == {1}


def test_exploration_spreads_rivals_with_the_uncertainty() -> None:
    # Wide intervals: rivals come from a wide part of the field; narrow ones: from close by.
    def mean_gap(stderr: float) -> float:
        field = [LadderEntrant(f"e{i:02d}", 1000.0 + 10.0 * i, stderr, 30) for i in range(60)]
        gaps = [
            abs(int(p.first[1:]) - int(p.second[1:]))
            for seed in range(5)
            for p in next_pairings(field, 30, seed=seed)
        ]
        return sum(gaps) / len(gaps)

    assert mean_gap(200.0) > 2 * mean_gap(10.0)
    with pytest.raises(ValueError, match="explore"):
        LadderPolicy(explore=-1.0)
