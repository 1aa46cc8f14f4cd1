"""The SPRT statistics (arena.compete.sprt) against hand-computed and fishtest values."""

from __future__ import annotations

import dataclasses
import math
import random

import numpy as np
import numpy.typing as npt
import pytest

from arena.compete.margins import GroupMargin, group_margin
from arena.compete.sprt import (
    FAST_SHARE,
    FAST_SPAN,
    MARGIN_PSEUDO_COUNT,
    MIN_MARGIN_GROUPS,
    PENTANOMIAL,
    SPRT,
    GroupScores,
    MarginMoments,
    MarginScores,
    MarginSPRT,
    elo_estimate,
    elo_to_score,
    los,
    make_test,
    margin_dof,
    margin_elo_estimate,
    margin_llr,
    margin_los,
    margin_verdicts,
    normal_llr,
    read_test,
    small_sample_factor,
    statistic_of,
)
from arena.match.play import game_seeds
from tests.compete.test_margins import duplicate_group

# LLR_logistic(elo0, elo1, pentanomial) as computed by fishtest's
# server/fishtest/stats/LLRcalc.py (run separately; the numbers are copied here).
FISHTEST_LLR = [
    ((10789, 19328, 33806, 19402, 10543), -3, 1, 2.1310678117940807),
    ((39, 2226, 31451, 2412, 40), 0.2, 0.9, 2.1625425800483593),
    ((1, 2, 3, 2, 1), 0, 5, -0.0027953199389112596),
    ((0, 1, 3, 4, 2), 0, 5, 0.14277799805583402),
    ((2, 0, 0, 0, 7), 0, 5, 0.07104431267486123),
    ((0, 0, 10, 0, 0), -2, 3, -0.02859180675223904),
    ((5, 10, 20, 15, 10), 0, 10, 0.5405167233684149),
]


def test_bounds_for_five_percent_errors() -> None:
    lower, upper = SPRT(0, 5).bounds()
    assert lower == pytest.approx(-2.944, abs=1e-3) and upper == pytest.approx(2.944, abs=1e-3)
    assert lower == pytest.approx(math.log(0.05 / 0.95))
    assert SPRT(0, 5, alpha=0.01, beta=0.1).bounds() == pytest.approx(
        (math.log(0.1 / 0.99), math.log(0.9 / 0.01))
    )


@pytest.mark.parametrize(("counts", "elo0", "elo1", "expected"), FISHTEST_LLR)
def test_llr_reproduces_fishtest(
    counts: tuple[int, ...], elo0: float, elo1: float, expected: float
) -> None:
    llr = SPRT(elo0, elo1).llr(GroupScores.from_pentanomial(counts))
    assert llr == pytest.approx(expected, rel=1e-9, abs=1e-12)


def direct_llr(counts: list[float], values: list[float], s0: float, s1: float) -> float:
    """The LLR by maximising each constrained likelihood numerically (SLSQP on the simplex)."""
    from scipy import optimize  # here: a third of a CPU second of every test process's start

    n = np.array(counts, dtype=np.float64)
    a = np.array(values, dtype=np.float64)

    def negative_log_likelihood(q: npt.NDArray[np.float64]) -> float:
        return -float(n @ np.log(q))

    def best_log_likelihood(mean: float) -> float:
        # q on the simplex with mean ``mean``: sum q = 1, sum q a = mean.
        constraint = optimize.LinearConstraint(
            np.vstack([np.ones_like(a), a]), [1, mean], [1, mean]
        )
        result = optimize.minimize(
            negative_log_likelihood,
            n / n.sum(),
            method="SLSQP",
            bounds=optimize.Bounds(1e-12, 1),
            constraints=constraint,
            options={"ftol": 1e-14, "maxiter": 500},
        )
        assert result.success
        return -float(result.fun)

    return best_log_likelihood(s1) - best_log_likelihood(s0)


@pytest.mark.parametrize("counts", [(3, 5, 9, 6, 2), (1, 0, 4, 0, 6), (0, 2, 2, 1, 0)])
def test_llr_matches_direct_maximisation(counts: tuple[int, ...]) -> None:
    # Unseen outcomes carry fishtest's pseudo-count of 0.001.
    regularised = [c or 1e-3 for c in counts]
    quarters = [0, 0.25, 0.5, 0.75, 1]
    for elo0, elo1 in [(0, 5), (-10, 40), (50, 150)]:
        expected = direct_llr(regularised, quarters, elo_to_score(elo0), elo_to_score(elo1))
        got = SPRT(elo0, elo1).llr(GroupScores.from_pentanomial(counts))
        assert got == pytest.approx(expected, abs=1e-6)


def test_llr_of_multi_player_scores_matches_direct_maximisation() -> None:
    # 3-player rotations: NEW's mean normalised score per group in thirds.
    scores = GroupScores([1 / 3, 2 / 3, 2 / 3, 1.0, 0.5, 1 / 3, 2 / 6])
    assert scores.counts[round(1 / 3, 12)] == 3
    values = [0, 0.25, 1 / 3, 0.5, 2 / 3, 0.75, 1]
    counts = [1e-3, 1e-3, 3, 1, 2, 1e-3, 1]
    expected = direct_llr(counts, values, elo_to_score(0), elo_to_score(30))
    assert SPRT(0, 30).llr(scores) == pytest.approx(expected, abs=1e-6)


def test_a_bot_against_itself_drifts_to_h0() -> None:
    test = SPRT(0, 5)
    # Exactly symmetric results: the LLR is negative and falls linearly with the sample.
    llrs = [
        test.llr(GroupScores.from_pentanomial((k, 2 * k, 4 * k, 2 * k, k))) for k in (1, 10, 100)
    ]
    assert llrs[0] < 0 and llrs[1] == pytest.approx(10 * llrs[0], rel=1e-2)
    # 1000 groups per k: -0.000356 each, so H0 is accepted near 8300 groups.
    assert test.status(GroupScores.from_pentanomial((500, 1000, 2000, 1000, 500))) == "continue"
    assert test.status(GroupScores.from_pentanomial((900, 1800, 3600, 1800, 900))) == "H0 accepted"


def sequential(
    test: SPRT, draw: random.Random, weights: list[float], limit: int
) -> tuple[str, int]:
    """Play groups with pentanomial ``weights`` until the test decides, checking every 50."""
    outcomes = [0.0, 0.25, 0.5, 0.75, 1.0]
    scores = GroupScores()
    for played in range(50, limit + 1, 50):
        for score in draw.choices(outcomes, weights, k=50):
            scores.add(score)
        status = test.status(scores)
        if status != "continue":
            return status, played
    return "continue", limit


def test_random_self_play_never_passes() -> None:
    status, played = sequential(SPRT(0, 5), random.Random(1), [1, 2, 4, 2, 1], 40_000)
    assert status == "H0 accepted"
    assert 1000 < played < 40_000


def test_a_clearly_stronger_bot_passes_quickly() -> None:
    # Mean group score 0.6 (about +70 Elo).
    weights = [0.05, 0.15, 0.35, 0.25, 0.20]
    assert sum(
        w * s for w, s in zip(weights, [0, 0.25, 0.5, 0.75, 1], strict=True)
    ) == pytest.approx(0.6)
    status, played = sequential(SPRT(0, 5), random.Random(2), weights, 2000)
    # The expected LLR drift is about +0.011 per group: about 270 groups to reach +2.944.
    assert status == "H1 accepted"
    assert played <= 500


def test_a_clearly_stronger_multi_player_bot_passes() -> None:
    draw = random.Random(3)
    scores = GroupScores(min(1.0, draw.random() * 1.2) for _ in range(300))
    assert scores.mean > 0.55
    assert SPRT(0, 10).status(scores) == "H1 accepted"


def test_elo_estimate() -> None:
    even = GroupScores.from_pentanomial((10, 20, 40, 20, 10))
    elo, low, high = elo_estimate(even)
    assert elo == pytest.approx(0, abs=1e-9)
    assert low == pytest.approx(-high)
    three_to_one = GroupScores([0.75] * 5 + [0.5, 1.0])
    assert three_to_one.mean == 0.75
    assert elo_estimate(three_to_one)[0] == pytest.approx(400 * math.log10(3))
    assert elo_estimate(three_to_one)[0] == pytest.approx(190.8, abs=0.1)
    # Pentanomial variance by hand: scores 0, .25, .5, .75, 1 with weights 1, 2, 4, 2, 1
    # have variance (2 * 0.25 + 4 * 0.0625) / 10 = 0.075; the 95% bound on the mean is
    # 0.5 + 1.96 sqrt(0.075 / 100), mapped to Elo.
    upper = 0.5 + 1.959964 * math.sqrt(0.075 / 100)
    assert even.variance == pytest.approx(0.075)
    assert high == pytest.approx(-400 * math.log10(1 / upper - 1), rel=1e-5)
    assert elo_estimate(GroupScores([1.0, 1.0]))[0] == math.inf


def test_los() -> None:
    assert los(GroupScores.from_pentanomial((10, 20, 40, 20, 10))) == pytest.approx(0.5)
    # mean 0.55, sd of groups 0.25, 100 groups: Phi(0.05 / 0.025) = Phi(2) = 0.97725.
    scores = GroupScores([0.3] * 50 + [0.8] * 50)
    assert los(scores) == pytest.approx(0.9772499, abs=1e-6)
    assert los(GroupScores([0.75])) == 1.0 and los(GroupScores([0.25])) == 0.0


def test_no_samples() -> None:
    assert SPRT(0, 5).llr(GroupScores()) == 0.0
    assert SPRT(0, 5).status(GroupScores()) == "continue"
    with pytest.raises(ValueError, match="no deal-groups"):
        elo_estimate(GroupScores())


def test_invalid_input() -> None:
    with pytest.raises(ValueError, match="elo0 must be below elo1"):
        SPRT(5, 0)
    with pytest.raises(ValueError, match="alpha"):
        SPRT(0, 5, alpha=0.6, beta=0.5)
    with pytest.raises(ValueError, match=r"in \[0, 1\]"):
        GroupScores([1.5])
    with pytest.raises(ValueError, match="pentanomial"):
        GroupScores.from_pentanomial((1, 2, 3))
    with pytest.raises(ValueError, match="negative"):
        GroupScores.from_pentanomial((1, 2, -3, 0, 0))


# --- the margin test ---------------------------------------------------------------------


def test_normal_llr_by_hand() -> None:
    # 100 values, mean 0.55, variance 0.04: LLR = n (s1 - s0) (2 mean - s0 - s1) / (2 var).
    s0, s1 = elo_to_score(0), elo_to_score(10)
    count, mean, var = 100.0, 0.55, 0.04
    total, squares = count * mean, count * (var + mean * mean)
    expected = count * (s1 - s0) * (2 * mean - s0 - s1) / (2 * var)
    got = normal_llr(np.array(count), np.array(total), np.array(squares), s0, s1)
    assert float(got) == pytest.approx(expected, rel=1e-12)
    assert float(normal_llr(np.array(0.0), np.array(0.0), np.array(0.0), s0, s1)) == 0.0


def synthetic_groups(
    n: int, seed: int, shift: float = 0.0, spread: float = 20.0
) -> list[GroupMargin]:
    """Groups whose margin is 3 * pips - 20 * fits luck plus an independent part (mean
    ``shift``, standard deviation ``spread``), and whose game score is 1/2 + 0.004 * margin."""
    draw = np.random.default_rng(seed)
    pips, fits = draw.normal(0, 4, n), draw.normal(0, 0.6, n)
    own = draw.normal(shift, spread, n)
    margin = 3 * pips - 20 * fits + own
    return [
        GroupMargin(0.5 + 0.004 * m, m, (p, f, 0.0))
        for m, p, f in zip(margin, pips, fits, strict=True)
    ]


def test_exchange_rate_and_luck_coefficients() -> None:
    # Standard errors of the slopes: 5 / (4 sqrt(4000)) = 0.02 and 5 / (0.6 sqrt(4000)) = 0.13.
    scores = MarginScores(synthetic_groups(4000, 1, spread=5.0))
    assert scores.exchange_rate == pytest.approx(0.004, rel=1e-9)
    pips, fits, value = scores.luck_coefficients
    assert pips == pytest.approx(3, abs=0.1) and fits == pytest.approx(-20, abs=0.6)
    assert value == 0  # a term that is always 0 explains nothing
    # Each value is 1/2 + b (margin - beta . luck): close to 1/2 + 0.004 * the own part.
    values = scores.values()
    assert values.shape == (4000,)
    assert np.std(values) == pytest.approx(0.004 * 5, rel=0.05)
    assert scores.mean == pytest.approx(float(np.mean(values)), abs=1e-12)


def test_margin_llr_without_luck_is_the_normal_llr_of_the_values() -> None:
    draw = np.random.default_rng(2)
    margins = draw.normal(3, 30, 200)
    groups = [GroupMargin(float(np.clip(0.5 + 0.005 * m + draw.normal(0, 0.1), 0, 1)), m)
              for m in margins]  # fmt: skip
    scores = MarginScores(groups)
    assert scores.luck_coefficients == (0.0, 0.0, 0.0)
    values = scores.values()
    weights = MARGIN_PSEUDO_COUNT * len(PENTANOMIAL)
    s0, s1 = elo_to_score(-5), elo_to_score(15)
    expected = normal_llr(
        np.array(values.size + weights),
        np.array(values.sum() + MARGIN_PSEUDO_COUNT * sum(PENTANOMIAL)),
        np.array(values @ values + MARGIN_PSEUDO_COUNT * sum(a * a for a in PENTANOMIAL)),
        s0,
        s1,
    )
    assert MarginSPRT(-5, 15).llr(scores) == pytest.approx(float(expected), rel=1e-10)
    assert float(margin_llr(scores.moments(), s0, s1)) == MarginSPRT(-5, 15).llr(scores)


def test_moments_in_a_batch_give_each_tests_llr() -> None:
    samples = [MarginScores(synthetic_groups(60 + 20 * k, k, shift=k)) for k in range(3)]
    single = [MarginSPRT(0, 10).llr(s) for s in samples]
    moments = [s.moments() for s in samples]
    batch = MarginMoments(
        *(np.stack([getattr(m, f) for m in moments]) for f in MarginMoments.__dataclass_fields__)
    )
    got = margin_llr(batch, elo_to_score(0), elo_to_score(10))
    assert got == pytest.approx(single, rel=1e-10)


def test_few_groups_count_by_their_game_scores_and_never_decide() -> None:
    # Below MIN_MARGIN_GROUPS every group counts by its game score, and the test goes on
    # however one-sided the groups are.
    groups = [GroupMargin(1.0, 40.0 + k, (0.5, 0.1 * k, 0.0)) for k in range(MIN_MARGIN_GROUPS)]
    few = MarginScores(groups[:-1])
    assert few.exchange_rate is None
    assert np.all(few.values() == 1.0)
    assert MarginSPRT(0, 10).llr(few) > 0
    assert MarginSPRT(0, 10).status(few) == "continue"
    assert MarginSPRT(0, 10).status(MarginScores(groups)) == "H1 accepted"


def test_identical_deterministic_bots_fail_at_the_first_look() -> None:
    # greedy against greedy: every pair of games splits, every margin is 0.
    groups = [
        group_margin(records, [seats.index("new") for seats in seatings])
        for records, seatings in (
            duplicate_group("draw", {"new": "greedy", "old1": "greedy"}, seed)
            for seed in game_seeds(8, MIN_MARGIN_GROUPS)
        )
    ]
    assert {(g.score, g.margin) for g in groups} == {(0.5, 0.0)}
    scores = MarginScores(groups)
    assert scores.exchange_rate is None
    assert MarginSPRT(0, 10).status(scores) == "H0 accepted"
    assert margin_elo_estimate(scores)[0] == pytest.approx(0, abs=1e-9)


def test_a_bot_against_itself_is_centred() -> None:
    # random against random: NEW's values are centred on 1/2 (the test of symmetry in
    # test_margins.py is exact; this is the sampled consequence).
    groups = [
        group_margin(records, [seats.index("new") for seats in seatings])
        for records, seatings in (
            duplicate_group("draw", {"new": "random", "old1": "random"}, seed)
            for seed in game_seeds(9, 200)
        )
    ]
    scores = MarginScores(groups)
    _, low, high = margin_elo_estimate(scores)
    assert low < 0 < high and high - low < 70
    assert 0.05 < margin_los(scores) < 0.95
    assert scores.exchange_rate is not None and scores.exchange_rate > 0
    # The margin test's values vary less than the game scores (the duplicate groups of
    # 'draw' between identical bots: about 0.6 of the variance).
    assert scores.variance < 0.8 * scores.game_scores().variance


def test_a_forfeited_group_counts_by_its_game_score() -> None:
    groups = synthetic_groups(100, 3)
    plain = MarginScores(groups)
    with_forfeit = MarginScores([*groups, GroupMargin(0.0, 90.0, (0.0, 0.0, 0.0), forfeit=True)])
    assert with_forfeit.exchange_rate == plain.exchange_rate
    assert with_forfeit.values()[-1] == 0.0
    assert with_forfeit.n == 101
    assert with_forfeit.mean == pytest.approx((plain.mean * 100 + 0.0) / 101)
    assert MarginSPRT(0, 10).llr(with_forfeit) < MarginSPRT(0, 10).llr(plain)


def test_margin_sprt_decides_on_synthetic_truths() -> None:
    # A clearly stronger NEW passes, a clearly weaker one fails, the bounds are SPRT's.
    test = MarginSPRT(0, 10)
    assert MarginSPRT(0, 10, fast_pass=False).bounds() == SPRT(0, 10).bounds()
    assert test.bounds() == pytest.approx(SPRT(0, 10, alpha=0.04).bounds())  # fast pass: 0.01
    stronger = MarginScores(synthetic_groups(400, 4, shift=8.0))  # about +22 Elo
    weaker = MarginScores(synthetic_groups(400, 5, shift=-8.0))
    assert test.status(stronger) == "H1 accepted"
    assert test.status(weaker) == "H0 accepted"
    assert margin_elo_estimate(stronger)[0] == pytest.approx(400 * math.log10(0.532 / 0.468), abs=8)
    assert margin_los(stronger) > 0.99 and margin_los(weaker) < 0.01
    assert stronger.game_scores().n == 400


def test_margin_test_input() -> None:
    with pytest.raises(ValueError, match="elo0 must be below elo1"):
        MarginSPRT(10, 0)
    with pytest.raises(ValueError, match="alpha"):
        MarginSPRT(0, 5, alpha=0.5, beta=0.5)
    with pytest.raises(ValueError, match=r"in \[0, 1\]"):
        MarginScores([GroupMargin(1.5, 0.0)])
    with pytest.raises(ValueError, match="finite"):
        MarginScores([GroupMargin(0.5, math.nan)])
    assert MarginSPRT(0, 5).llr(MarginScores()) == 0.0
    assert MarginSPRT(0, 5).status(MarginScores()) == "continue"
    with pytest.raises(ValueError, match="no deal-groups"):
        margin_elo_estimate(MarginScores())


def test_the_fast_pass_passes_a_clearly_stronger_new_sooner() -> None:
    test, plain = MarginSPRT(0, 10), MarginSPRT(0, 10, fast_pass=False)
    assert (FAST_SPAN, FAST_SHARE) == (5.0, 0.2)
    assert test.fast_elo == 50 and MarginSPRT(-5, 5).fast_elo == 45
    assert test.fast_bound() == pytest.approx(math.log(100))  # Ville: P0(ever) <= 1%
    assert plain.fast_bound() is None and plain.fast_llr(MarginScores()) is None

    def passed_at(sprt: MarginSPRT, seed: int) -> int:
        # A margin of mean 20 points, sd 40, at 0.004 game score a point: about +56 Elo.
        margins = np.clip(np.random.default_rng(seed).normal(20, 40, 3000), -120, 120)
        samples = MarginScores()
        for n, margin in enumerate(margins, 1):
            samples.add(GroupMargin(0.5 + 0.004 * margin, margin))
            if sprt.status(samples) != "continue":
                assert sprt.status(samples) == "H1 accepted"
                return n
        raise AssertionError("undecided")

    fast = [passed_at(test, seed) for seed in range(20)]
    slow = [passed_at(plain, seed) for seed in range(20)]
    assert min(fast) >= MIN_MARGIN_GROUPS
    assert np.mean(fast) < 0.75 * np.mean(slow)  # 40.5 against 68.0 groups
    # At elo0 the fast pass adds no decision of its own on a sample that favours H0.
    weak = MarginScores(synthetic_groups(400, 5, shift=-8.0))
    fast_llr = test.fast_llr(weak)
    assert fast_llr is not None and fast_llr < 0 and test.status(weak) == "H0 accepted"


#: 18 deal groups of `random` against its copy under `block` rules (score, margin),
#: resampled from 3,000 played ones: NEW's mean margin is 11.9 points, t = 3.7 standard
#: errors from 0. The test of tests/workers/test_classroom.py ([0, 100] Elo, alpha 0.001)
#: with Wald's bounds passed them at its first look (LLR 7.10 >= 7.08): a t statistic of
#: 17 degrees of freedom gets there 4.5 times as often as a normal one.
COPY_GROUPS = [
    (0.5, 4.0), (0.5, 15.0), (1.0, 23.0), (0.5, 8.0), (0.5, 6.0), (1.0, 37.0),
    (1.0, 36.0), (0.5, 24.0), (0.5, 12.0), (0.5, -3.0), (0.5, 8.0), (0.5, 18.0),
    (0.5, -10.0), (0.5, 5.0), (0.5, 3.0), (0.5, 29.0), (0.5, 0.0), (0.5, -1.0),
]  # fmt: skip


def test_a_copy_does_not_pass_on_a_few_lucky_groups() -> None:
    test = MarginSPRT(0, 100, alpha=0.001, beta=0.05)
    samples = MarginScores(GroupMargin(score, margin) for score, margin in COPY_GROUPS)
    wald = test.bounds()
    llr = test.llr(samples)
    assert llr == pytest.approx(7.098, abs=1e-3) and llr > wald[1]  # Wald's bound: a pass
    assert float(margin_dof(samples.moments())) == 17  # no luck under block rules
    lower, upper = test.bounds(samples)
    factor = float(small_sample_factor(17, wald[1]))
    assert upper == pytest.approx(wald[1] * factor) and factor == pytest.approx(1.625, abs=1e-3)
    assert lower == pytest.approx(wald[0] * float(small_sample_factor(17, wald[0])))
    assert test.status(samples) == "continue"
    # Many groups later the factor has all but gone.
    assert float(small_sample_factor(5000, wald[1])) < 1.01
    assert float(small_sample_factor(math.inf, wald[1])) == 1.0


def test_normal_same_strength_groups_pass_no_more_often_than_with_a_known_variance() -> None:
    # 18 groups of normal margins, mean 0: the t statistic's tail would pass 3.6e-4 of them
    # under Wald's bounds; the widened bounds keep each look's false passes under the normal
    # tail a known variance allows, Phi(-sqrt(2 A)) for each bound A the test can pass at.
    runs, n = 60_000, 18
    rng = np.random.default_rng(18)
    m = rng.normal(0.0, 30.0, (runs, n))
    g = np.where(m > 5, 1.0, np.where(m < -5, 0.0, 0.5))
    zero, luck = np.zeros(runs), np.zeros((runs, 3))
    moments = MarginMoments(
        n=np.full(runs, float(n)), g=g.sum(1), gg=(g * g).sum(1), m=m.sum(1),
        mm=(m * m).sum(1), gm=(g * m).sum(1), l=luck, ll=np.zeros((runs, 3, 3)), lm=luck,
        forfeits=zero, f=zero, ff=zero,
    )  # fmt: skip
    test = MarginSPRT(0, 100, alpha=0.001, beta=0.05)
    upper, fast = test.bounds()[1], test.fast_bound()
    assert fast is not None
    allowed = sum(0.5 * math.erfc(math.sqrt(bound)) for bound in (upper, fast))  # 1.0e-4
    passes = int((margin_verdicts(test, moments) > 0).sum())
    assert passes <= 2 * allowed * runs  # 4 here; with Wald's bounds 29


def test_either_test_reads_the_same_groups() -> None:
    groups = MarginScores(synthetic_groups(200, 3, shift=8.0))
    margin, game = make_test("margin", 0, 10), make_test("game", 0, 10, 0.05, 0.1)
    assert isinstance(margin, MarginSPRT) and isinstance(game, SPRT) and game.beta == 0.1
    assert (statistic_of(margin), statistic_of(game)) == ("margin", "game")
    with pytest.raises(ValueError, match="unknown statistic 'wins'"):
        make_test("wins", 0, 10)  # type: ignore[arg-type]
    read = read_test(margin, groups)
    assert read.statistic == "margin" and read.groups == 200
    assert read.llr == margin.llr(groups) and read.status == margin.status(groups)
    assert (read.lower, read.upper) == margin.bounds(groups)
    assert read.fast_llr == margin.fast_llr(groups) and read.fast_upper == margin.fast_bound(groups)
    assert (read.elo, read.low, read.high) == margin_elo_estimate(groups)
    assert read.los == margin_los(groups)
    scores = groups.game_scores()
    read = read_test(game, groups)
    assert read.statistic == "game" and read.fast_llr is None and read.fast_upper is None
    assert read.llr == game.llr(scores) and read.status == game.status(scores)
    assert (read.elo, read.low, read.high) == elo_estimate(scores) and read.los == los(scores)
    one = read_test(game, MarginScores(synthetic_groups(1, 3)))
    assert one.status == "continue" and one.elo is None and one.los is None


def test_a_reading_as_the_groups_come_is_the_tests_own_over_their_moments() -> None:
    """A MarginScores fits its groups once for every figure of a look (its moments and
    calibration are kept until the next add): each reading as the groups come has, to
    the bit, the figures of the test's functions over the moments of the groups so far."""
    groups = synthetic_groups(40, 5, shift=6.0)
    groups[7] = dataclasses.replace(groups[7], forfeit=True, score=0.0)
    groups[30] = dataclasses.replace(groups[30], forfeit=True, score=1.0)
    test = make_test("margin", 0, 30)
    assert isinstance(test, MarginSPRT) and test.fast_pass
    s0, s1, fast = (elo_to_score(elo) for elo in (test.elo0, test.elo1, test.fast_elo))
    verdicts = {1: "H1 accepted", -1: "H0 accepted", 0: "continue"}
    kept, statuses = MarginScores(), set()
    for count, group in enumerate(groups, 1):
        kept.add(group)
        moments = MarginMoments.of(groups[:count])
        assert kept.moments() is kept.moments()
        for field in dataclasses.fields(moments):
            assert np.array_equal(getattr(kept.moments(), field.name), getattr(moments, field.name))
        read, dof = read_test(test, kept), margin_dof(moments)
        lower, upper = test.bounds()
        bound = test.fast_bound()
        assert bound is not None
        assert read.lower == float(lower * small_sample_factor(dof, lower))
        assert read.upper == float(upper * small_sample_factor(dof, upper))
        assert read.fast_upper == float(bound * small_sample_factor(dof, bound))
        assert read.llr == float(margin_llr(moments, s0, s1))
        assert read.fast_llr == float(margin_llr(moments, s0, fast))
        assert read.status == verdicts[int(margin_verdicts(test, moments))]
        assert read == read_test(test, MarginScores(groups[:count]))  # (its own fit)
        statuses.add(read.status)
    assert statuses == {"continue", "H0 accepted"}  # (read before and after it decided)


#: Greedy against random on block, 16 deal groups (game score, margin) from real games:
#: a pass at a game score of 0.84 (the groups random split were won by 21-27 points).
LOPSIDED = [(0.5, 21.0), (0.5, 25.5), (0.5, 25.5), (0.5, 27.0), (0.5, 27.0)] + [
    (1.0, m) for m in (28.0, 32.0, 41.0, 42.0, 43.0, 45.5, 47.5, 50.0, 55.5, 61.0, 64.0)
]
#: A pass at 0.97 (one group split, won by 16.5 points).
NEARLY_ALL = [(0.5, 16.5)] + [
    (1.0, m) for m in (30.5, 37, 50, 11.5, 39, 64, 33.5, 55.5, 36.5, 68, 37, 51.5, 28, 27, 20)
]


@pytest.mark.parametrize(("groups", "elo"), [(LOPSIDED, math.inf), (NEARLY_ALL, 71.1)])
def test_a_pass_puts_the_margin_elo_above_the_midpoint_not_at_elo1(
    groups: list[tuple[float, float]], elo: float
) -> None:
    """The margin test's Elo extrapolates its exchange rate to a margin of 0 (y = 1/2 + b m):
    between a strong and a weak bot it may read +inf at a game score of 0.84, or below elo1
    at 0.97. What a pass guarantees is an LLR above 0: a mean value, so an Elo, above the
    hypotheses' midpoint (the service's test of a gauntlet relies on no more)."""
    test = MarginSPRT(0.0, 100.0, 0.001, 0.05)
    samples = MarginScores(GroupMargin(g, m, (0.0, 0.0, 0.0)) for g, m in groups)
    reading = read_test(test, samples)
    assert reading.status == "H1 accepted" and reading.elo == pytest.approx(elo, abs=0.1)
    assert samples.mean > (elo_to_score(0.0) + elo_to_score(100.0)) / 2
