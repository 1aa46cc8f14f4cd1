"""The SPRT statistics (arena.compete.sprt) against hand-computed and fishtest values."""

from __future__ import annotations

import math
import random

import numpy as np
import numpy.typing as npt
import pytest
from scipy import optimize

from arena.compete.sprt import SPRT, GroupScores, elo_estimate, elo_to_score, los

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
