"""Sequential probability ratio test: "is NEW stronger than OLD?" over duplicate deal-groups.

A deal-group is one deal played with the seats rotated (2 players: two games,
seats swapped); its score is NEW's mean normalised score over the group's
games, in [0, 1]. For 2 players the scores are the pentanomial outcomes
LL, LD, DD/WL, WD, WW = 0, 1/4, 1/2, 3/4, 1.

The test is the generalised SPRT of fishtest's ``LLRcalc.LLR_logistic``
(M. Van den Bergh, "A note on the MLE of a multinomial distribution with a
given expectation value", support_MLE_multinomial.pdf, Proposition 1.1): the
group scores are a sample from an unknown distribution on their observed
values; under each hypothesis ``H: E[score] = s`` that distribution is replaced
by its maximum-likelihood estimate with that mean, and the LLR is the log of
the ratio of the two likelihoods. Elo here is logistic Elo,
``score = 1 / (1 + 10 ** (-elo / 400))``. docs/ratings.md explains how to read it.

    >>> SPRT(0, 5).status(GroupScores.from_pentanomial((0, 30, 120, 90, 60)))
    'H1 accepted'
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Literal

import numpy as np
import numpy.typing as npt
from scipy import optimize

__all__ = ["PENTANOMIAL", "SPRT", "GroupScores", "Status", "elo_estimate", "elo_to_score", "los"]

FloatArray = npt.NDArray[np.float64]
Status = Literal["H0 accepted", "H1 accepted", "continue"]

#: The group scores of the pentanomial outcomes LL, LD, DD/WL, WD, WW.
PENTANOMIAL = (0.0, 0.25, 0.5, 0.75, 1.0)
#: Pseudo-count given to each pentanomial score never observed (fishtest's ``regularize``).
PSEUDO_COUNT = 1e-3
_NORMAL = NormalDist()


class GroupScores:
    """Counts of deal-group scores in [0, 1] (NEW's mean normalised score per group)."""

    __slots__ = ("_counts",)

    def __init__(self, scores: Iterable[float] = ()) -> None:
        self._counts: dict[float, int] = {}
        for score in scores:
            self.add(score)

    @classmethod
    def from_pentanomial(cls, counts: Sequence[int]) -> GroupScores:
        """Scores from 2-player pentanomial counts (LL, LD, DD/WL, WD, WW).

        Raises:
            ValueError: not five counts, or a negative count.
        """
        if len(counts) != 5:
            raise ValueError(f"pentanomial counts are (LL, LD, DD/WL, WD, WW), got {counts!r}")
        scores = cls()
        if any(count < 0 for count in counts):
            raise ValueError(f"negative pentanomial count in {counts!r}")
        for score, count in zip(PENTANOMIAL, counts, strict=True):
            if count:
                scores.add(score, count)
        return scores

    def add(self, score: float, count: int = 1) -> None:
        """Record ``count`` groups that scored ``score``.

        Raises:
            ValueError: ``score`` is not in [0, 1] or ``count`` < 1.
        """
        if not 0.0 <= score <= 1.0:
            raise ValueError(f"a group score is in [0, 1], got {score!r}")
        if count < 1:
            raise ValueError(f"count must be >= 1, got {count!r}")
        # Rounded so that equal scores computed differently (1/3 vs 2/6) share a key.
        key = round(float(score), 12)
        self._counts[key] = self._counts.get(key, 0) + count

    @property
    def counts(self) -> dict[float, int]:
        """Groups per score, by ascending score."""
        return dict(sorted(self._counts.items()))

    @property
    def n(self) -> int:
        """Number of groups."""
        return sum(self._counts.values())

    @property
    def mean(self) -> float:
        """Mean group score.

        Raises:
            ValueError: no groups.
        """
        n = self._require()
        return sum(score * count for score, count in self._counts.items()) / n

    @property
    def variance(self) -> float:
        """Variance of the group scores (divided by n, as the MLE)."""
        mean = self.mean
        return sum(c * (s - mean) ** 2 for s, c in self._counts.items()) / self.n

    def _require(self) -> int:
        n = self.n
        if n == 0:
            raise ValueError("no deal-groups recorded yet")
        return n

    def regularised(self) -> tuple[FloatArray, FloatArray]:
        """Support and counts for the LLR: every pentanomial score gets a pseudo-count if unseen.

        This keeps every hypothesis mean in (0, 1) feasible, as fishtest's
        ``regularize`` does for the five pentanomial outcomes.
        """
        counts = dict(self._counts)
        for score in PENTANOMIAL:
            counts.setdefault(score, 0)
        support = np.array(sorted(counts))
        weights = np.array([counts[s] or PSEUDO_COUNT for s in support], dtype=np.float64)
        return support, weights


def elo_to_score(elo: float) -> float:
    """The expected score of a player ``elo`` logistic-Elo points stronger."""
    return 1.0 / (1.0 + math.pow(10.0, -elo / 400.0))


def _score_to_elo(score: float) -> float:
    if score <= 0.0:
        return -math.inf
    if score >= 1.0:
        return math.inf
    return 0.0 - 400.0 * math.log10(1.0 / score - 1.0)


def _multiplier(support: FloatArray, p: FloatArray, mean: float) -> float:
    """Solve the secular equation ``sum_i p_i d_i / (1 + x d_i) = 0``, ``d_i = a_i - mean``.

    The root lies in (-1/max d, -1/min d), where the left side falls from +inf
    to -inf; the bracket is narrowed towards each end until the sign is right.
    """
    d = support - mean

    def secular(x: float) -> float:
        return float(np.sum(p * d / (1.0 + x * d)))

    low, high = -1.0 / d.max(), -1.0 / d.min()
    width = high - low
    a = b = 0.0
    for exponent in range(1, 40):
        a = low + width * 10.0**-exponent
        if secular(a) > 0:
            break
    for exponent in range(1, 40):
        b = high - width * 10.0**-exponent
        if secular(b) < 0:
            break
    root: float = optimize.brentq(secular, a, b, xtol=1e-15, rtol=1e-13)
    return root


def _log_mle_ratio(support: FloatArray, p: FloatArray, mean: float) -> FloatArray:
    """``log(p_i / q_i)`` where q is the MLE of the distribution with the given mean."""
    x = _multiplier(support, p, mean)
    ratio: FloatArray = np.log1p(x * (support - mean))
    return ratio


@dataclass(frozen=True, slots=True)
class SPRT:
    """The test of H0: NEW - OLD = ``elo0`` against H1: NEW - OLD = ``elo1`` (logistic Elo).

    ``alpha``: the chance of accepting H1 when H0 holds; ``beta``: of accepting
    H0 when H1 holds.

    Raises:
        ValueError: ``elo0 >= elo1``, or alpha, beta not in (0, 1) with alpha + beta < 1.
    """

    elo0: float
    elo1: float
    alpha: float = 0.05
    beta: float = 0.05

    def __post_init__(self) -> None:
        if not self.elo0 < self.elo1:
            raise ValueError(f"elo0 must be below elo1, got {self.elo0} and {self.elo1}")
        if not (0 < self.alpha < 1 and 0 < self.beta < 1 and self.alpha + self.beta < 1):
            raise ValueError(
                f"need 0 < alpha, beta and alpha + beta < 1, got {self.alpha}, {self.beta}"
            )

    def bounds(self) -> tuple[float, float]:
        """The LLR bounds: H0 is accepted at or below the first, H1 at or above the second."""
        return math.log(self.beta / (1 - self.alpha)), math.log((1 - self.beta) / self.alpha)

    def llr(self, samples: GroupScores) -> float:
        """The generalised log-likelihood ratio of H1 against H0 (0 with no samples)."""
        if samples.n == 0:
            return 0.0
        support, counts = samples.regularised()
        p = counts / counts.sum()
        s0, s1 = elo_to_score(self.elo0), elo_to_score(self.elo1)
        # log L1 - log L0 = sum_i n_i (log q1_i - log q0_i) = sum_i n_i (log(p/q0) - log(p/q1)).
        jumps = _log_mle_ratio(support, p, s0) - _log_mle_ratio(support, p, s1)
        return float(counts @ jumps)

    def status(self, samples: GroupScores) -> Status:
        """Whether the test has accepted H0 or H1, or must go on."""
        lower, upper = self.bounds()
        llr = self.llr(samples)
        if llr <= lower:
            return "H0 accepted"
        if llr >= upper:
            return "H1 accepted"
        return "continue"


def _standard_error(samples: GroupScores) -> float:
    return math.sqrt(samples.variance / samples.n)


def elo_estimate(samples: GroupScores) -> tuple[float, float, float]:
    """NEW's logistic Elo advantage and its 95% interval ``(elo, low, high)``.

    From the mean group score and its standard error over groups (the
    pentanomial variance for 2 players); the interval is the mean's normal
    interval mapped to Elo, so it is not symmetric. A mean of 0 or 1 gives -inf or inf.

    Raises:
        ValueError: no groups.
    """
    mean = samples.mean
    margin = _NORMAL.inv_cdf(0.975) * _standard_error(samples)
    return _score_to_elo(mean), _score_to_elo(mean - margin), _score_to_elo(mean + margin)


def los(samples: GroupScores) -> float:
    """Likelihood of superiority: the probability that NEW is stronger, Phi((mean - 1/2) / se).

    Raises:
        ValueError: no groups.
    """
    mean, error = samples.mean, _standard_error(samples)
    if error == 0.0:
        return 1.0 if mean > 0.5 else 0.0 if mean < 0.5 else 0.5
    return _NORMAL.cdf((mean - 0.5) / error)
