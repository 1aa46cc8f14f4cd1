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

:class:`MarginSPRT` is the finer test on the same deal groups: each group's whole point
margin (:mod:`arena.compete.margins`), less a multiple of its luck of the draw, put on
the game-score scale by the exchange rate the data show between margins and game scores,
under an SPRT for a normal mean with the sample's variance. Its hypotheses are in the
same logistic Elo; docs/ratings.md has the argument and its measured error rates.
"""

from __future__ import annotations

import dataclasses
import importlib
import math
import sys
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Literal

import numpy as np
import numpy.typing as npt

from arena.compete.margins import LUCK_TERMS, GroupMargin
from arena.compete.testspec import STATISTICS, Statistic, check_test

__all__ = [
    "FAST_SHARE",
    "FAST_SPAN",
    "PENTANOMIAL",
    "SPRT",
    "STATISTICS",
    "GroupScores",
    "MarginMoments",
    "MarginSPRT",
    "MarginScores",
    "Reading",
    "RegressionTest",
    "Statistic",
    "Status",
    "elo_estimate",
    "elo_to_score",
    "los",
    "make_test",
    "margin_dof",
    "margin_elo_estimate",
    "margin_llr",
    "margin_los",
    "margin_verdicts",
    "normal_llr",
    "preload_scipy",
    "read_test",
    "small_sample_factor",
    "statistic_of",
]

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
    # Loaded here: scipy.optimize is half a second of every process's start (web, workers,
    # the CLI), and only the game-level test's looks need it.
    from scipy.optimize import brentq

    root: float = brentq(secular, a, b, xtol=1e-15, rtol=1e-13)
    return root


def _log_mle_ratio(support: FloatArray, p: FloatArray, mean: float) -> FloatArray:
    """``log(p_i / q_i)`` where q is the MLE of the distribution with the given mean."""
    x = _multiplier(support, p, mean)
    ratio: FloatArray = np.log1p(x * (support - mean))
    return ratio


def _bounds(alpha: float, beta: float) -> tuple[float, float]:
    """Wald's LLR bounds for error rates ``alpha`` and ``beta``."""
    return math.log(beta / (1 - alpha)), math.log((1 - beta) / alpha)


def _decide(llr: float, bounds: tuple[float, float]) -> Status:
    """The verdict of an LLR between ``bounds`` (lower, upper)."""
    if llr <= bounds[0]:
        return "H0 accepted"
    if llr >= bounds[1]:
        return "H1 accepted"
    return "continue"


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
        check_test("game", self.elo0, self.elo1, self.alpha, self.beta)

    def bounds(self) -> tuple[float, float]:
        """The LLR bounds: H0 is accepted at or below the first, H1 at or above the second."""
        return _bounds(self.alpha, self.beta)

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
        return _decide(self.llr(samples), self.bounds())


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


# --- the margin test -------------------------------------------------------------------

#: Below this many deal groups the margin test neither decides nor estimates its exchange
#: rate and luck coefficients (each group then counts by its game score): its normal
#: approximation needs a few groups, and its variance must not come from two or three.
MIN_MARGIN_GROUPS = 16
#: The margin test's regularisation: a pseudo-count of this weight at each pentanomial
#: score, so that the variance is never 0 (as :data:`PSEUDO_COUNT` for :class:`SPRT`).
MARGIN_PSEUDO_COUNT = 1e-3
_PENTA = np.array(PENTANOMIAL)
_TERMS = len(LUCK_TERMS)


@dataclass(frozen=True, slots=True)
class MarginMoments:
    """The margin test's sufficient statistics: sums over the deal groups not forfeited
    (``n`` of them) of their game score g, margin m and luck l (a vector of
    :data:`~arena.compete.margins.LUCK_TERMS`), and over the ``forfeits`` forfeited groups
    of their game score (``f``, ``ff``). ``gm`` is the sum of g * m, ``ll`` of the outer
    products l l^T, ``lm`` of l * m, and so on.

    Every field is an array with the same leading shape: ``()`` for one test, or a batch
    of tests at once (the benchmark simulates thousands); ``l`` and ``lm`` add one axis of
    length 2, ``ll`` two.
    """

    n: FloatArray
    g: FloatArray
    gg: FloatArray
    m: FloatArray
    mm: FloatArray
    gm: FloatArray
    l: FloatArray  # noqa: E741 (the luck vector's sum)
    ll: FloatArray
    lm: FloatArray
    forfeits: FloatArray
    f: FloatArray
    ff: FloatArray

    @classmethod
    def of(cls, groups: Sequence[GroupMargin]) -> MarginMoments:
        """The moments of ``groups``."""
        kept = [group for group in groups if not group.forfeit]
        g = np.array([group.score for group in kept], dtype=np.float64)
        m = np.array([group.margin for group in kept], dtype=np.float64)
        luck = np.array([group.luck for group in kept], dtype=np.float64).reshape(-1, _TERMS)
        f = np.array([group.score for group in groups if group.forfeit], dtype=np.float64)
        return cls(
            n=np.array(len(kept), dtype=np.float64), g=g.sum(), gg=g @ g,
            m=m.sum(), mm=m @ m, gm=g @ m, l=luck.sum(axis=0), ll=luck.T @ luck, lm=luck.T @ m,
            forfeits=np.array(len(f), dtype=np.float64), f=f.sum(), ff=f @ f,
        )  # fmt: skip


@dataclass(frozen=True, slots=True)
class _Calibration:
    """The fitted nuisance parameters of the margin test (arrays over the batch)."""

    rate: FloatArray  # b: game score per point of margin (0 where not calibrated)
    luck: FloatArray  # beta: points of margin per unit of each luck term
    calibrated: npt.NDArray[np.bool_]
    sums: tuple[FloatArray, FloatArray, FloatArray]  # N, sum of y, sum of y^2 (kappa-adjusted)
    dof: FloatArray  # the variance's degrees of freedom: N - 1 - the luck terms fitted


def _calibrate(mo: MarginMoments) -> _Calibration:
    """The exchange rate, the luck coefficients and the sums of each group's value
    ``y = 1/2 + b (m - beta . l)`` (or its game score, where not calibrated or forfeited)."""
    n = np.asarray(mo.n, dtype=np.float64)
    safe = np.maximum(n, 1.0)
    mean_m, mean_g = mo.m / safe, mo.g / safe
    var_m = mo.mm / safe - mean_m**2
    cov_gm = mo.gm / safe - mean_g * mean_m
    enough = n >= MIN_MARGIN_GROUPS
    calibrated = enough & (var_m > 1e-12 * (mo.mm / safe + 1.0)) & (cov_gm > 0)
    rate = np.where(calibrated, cov_gm / np.where(calibrated, var_m, 1.0), 0.0)
    # The luck coefficients: least squares of the margin on the luck, with an intercept.
    mean_l = mo.l / safe[..., None]
    cov_ll = mo.ll / safe[..., None, None] - mean_l[..., :, None] * mean_l[..., None, :]
    cov_lm = mo.lm / safe[..., None] - mean_l * mean_m[..., None]
    scale = np.maximum(np.abs(cov_ll).max(axis=(-2, -1)), 1e-300)[..., None, None]
    normed = cov_ll / scale
    terms = np.linalg.matrix_rank(normed, tol=1e-9).astype(np.float64)
    fitted = enough & (terms > 0) & (n > terms + 2)
    beta = np.einsum("...ij,...j->...i", np.linalg.pinv(normed, rcond=1e-9), cov_lm) / scale[..., 0]
    beta = np.where(fitted[..., None], beta, 0.0)
    terms = np.where(fitted, terms, 0.0)
    sum_x = mo.m - np.einsum("...i,...i->...", beta, mo.l)
    sum_xx = (
        mo.mm
        - 2 * np.einsum("...i,...i->...", beta, mo.lm)
        + np.einsum("...i,...ij,...j->...", beta, mo.ll, beta)
    )
    # Lavenberg and Welch's small-sample factor for a control variate with fitted
    # coefficients: the spread of the adjusted margins is inflated by
    # (n - 1)/(n - p - 1) * (n - 2)/(n - p - 2) for p fitted terms (1 for none).
    spread = np.maximum(sum_xx - sum_x**2 / safe, 0.0)
    kappa = np.where(
        terms > 0,
        (n - 1) / np.maximum(n - terms - 1, 1.0) * (n - 2) / np.maximum(n - terms - 2, 1.0),
        1.0,
    )
    sum_xx = sum_x**2 / safe + kappa * spread
    sum_y = np.where(calibrated, 0.5 * n + rate * sum_x, mo.g)
    sum_yy = np.where(calibrated, 0.25 * n + rate * sum_x + rate**2 * sum_xx, mo.gg)
    total = n + mo.forfeits
    dof = np.maximum(total - 1 - terms, 1.0)
    return _Calibration(rate, beta, calibrated, (total, sum_y + mo.f, sum_yy + mo.ff), dof)


def normal_llr(
    count: FloatArray, total: FloatArray, squares: FloatArray, s0: float, s1: float
) -> FloatArray:
    """The SPRT's log-likelihood ratio of H1: mean ``s1`` against H0: mean ``s0`` for a sample
    of ``count`` values with sum ``total`` and sum of squares ``squares``, taken as normal with
    the sample's variance (fishtest's ``LLR_alt2``, the drift over the variance of the LLR's
    Brownian approximation)::

        LLR = count (s1 - s0) (2 mean - s0 - s1) / (2 var)

    Arrays of any (common) shape; 0 where ``count`` is 0; the variance is floored at a tiny
    positive value."""
    safe = np.maximum(count, 1e-300)
    mean = total / safe
    var = np.maximum(squares / safe - mean**2, 1e-12)
    llr: FloatArray = np.where(count > 0, count * (s1 - s0) * (2 * mean - s0 - s1) / (2 * var), 0.0)
    return llr


def margin_llr(moments: MarginMoments, s0: float, s1: float) -> FloatArray:
    """The margin test's log-likelihood ratio of H1: E[y] = ``s1`` against H0: E[y] = ``s0``
    (scores), over the batch of ``moments``: :func:`normal_llr` of the groups' values on the
    game-score scale (:class:`MarginScores`), with a pseudo-count of
    :data:`MARGIN_PSEUDO_COUNT` at each pentanomial score."""
    return _values_llr(_calibrate(moments), s0, s1)


def _values_llr(calibration: _Calibration, s0: float, s1: float) -> FloatArray:
    """:func:`margin_llr` of the moments that ``calibration`` was made of."""
    count, total, squares = calibration.sums
    weight = MARGIN_PSEUDO_COUNT * len(_PENTA)
    return normal_llr(
        count + weight,
        total + MARGIN_PSEUDO_COUNT * _PENTA.sum(),
        squares + MARGIN_PSEUDO_COUNT * (_PENTA**2).sum(),
        s0,
        s1,
    )


def margin_dof(moments: MarginMoments) -> FloatArray:
    """The degrees of freedom of the margin test's variance over the batch of ``moments``:
    the groups less one for the mean and one for each luck coefficient fitted (at least 1).
    (The exchange rate is fitted too, but it scales the values' deviations from 1/2 and
    their spread alike, so it does not change how far in the tail a mean looks.)"""
    return _calibrate(moments).dof


def preload_scipy(test: RegressionTest | Statistic) -> threading.Thread | None:
    """Load the part of scipy that ``test``'s looks need (a test, or what it counts:
    scipy.special for the margin test's :func:`small_sample_factor`, scipy.optimize for the
    game-level test's :func:`_multiplier`: each half a second of a process's start, left out
    of the imports) in a thread of its own, started here, unless it is loaded already
    (None): a caller that waits for its first games meanwhile (``arena compare``; a worker's
    process playing its first match of a compare, whose stop check reads the test) has it
    by the first look."""
    statistic = test if isinstance(test, str) else statistic_of(test)
    module = "scipy.optimize" if statistic == "game" else "scipy.special"
    if module in sys.modules:
        return None
    thread = threading.Thread(target=importlib.import_module, args=(module,), daemon=True)
    thread.start()
    return thread


def small_sample_factor(dof: FloatArray | float, bound: float) -> FloatArray:
    """The factor that widens an LLR bound of :func:`normal_llr` for a variance estimated
    with ``dof`` degrees of freedom: ``(t / z)^2``, where ``z = sqrt(2 |bound|)`` and ``t``
    is Student's t quantile with ``dof`` degrees of freedom of the normal tail beyond z.

    With a known variance the normal LLR reaches ``bound`` only if the mean is ``z``
    standard errors beyond the hypothesis it rejects (for every variance: the least
    distance over the standard error); with the sample's variance the mean over its
    estimated standard error is a t statistic, whose tail is heavier. The LLR is inversely
    proportional to the variance, so multiplying the bound by the factor is inflating the
    variance by it: the bound is then reached only if t is beyond the quantile, with the
    normal tail's chance. The factor is 1 for infinite ``dof`` and near it for hundreds
    (1.01 at 1,000 for alpha = 0.05), 1.3 at 14 for alpha = 0.05 and 1.8 for alpha = 0.001.
    """
    z = math.sqrt(2.0 * abs(bound))
    tail = _NORMAL.cdf(-z)
    dofs = np.asarray(dof, dtype=np.float64)
    # Loaded here, as the first look needs it: scipy.special is half a second of a process's
    # start (``arena compare`` loads it while its first games are played: preload_scipy).
    from scipy import special

    # Student's t beyond ``tail`` (scipy.stats.t.isf, by the symmetry of t: without loading
    # scipy.stats, most of a second of every process's start)
    quantile = -np.asarray(
        special.stdtrit(np.where(np.isinf(dofs), 1.0, dofs), tail), dtype=np.float64
    )
    factor: FloatArray = np.where(np.isinf(dofs), 1.0, (quantile / max(z, 1e-300)) ** 2)
    return factor


class MarginScores:
    """The margin test's deal groups: one :class:`~arena.compete.margins.GroupMargin` each.

    Each group counts by its value on the game-score scale,
    ``y = 1/2 + b (margin - beta . luck)``:

    - ``beta``: the luck coefficients, the least-squares slopes of the margin on the luck
      over the groups so far. The luck's expectation is 0 whatever the bots, so the
      adjusted margin has the margin's mean and a smaller variance (a control variate);
    - ``b``: the exchange rate, game score per point of margin: the least-squares slope of
      the groups' game scores on their margins, ``cov(score, margin) / var(margin)``.

    A forfeited group counts by its game score (its margin stops at the fault). With fewer
    than :data:`MIN_MARGIN_GROUPS` groups, or no positive slope yet, every group counts
    by its game score.
    """

    __slots__ = ("_fitted", "_groups")

    def __init__(self, groups: Iterable[GroupMargin] = ()) -> None:
        self._groups: list[GroupMargin] = []
        # The moments and calibration of the groups so far, made once for every figure of
        # a look (a reading asks for them about ten times: 5 ms a look, then 1); cleared
        # by add.
        self._fitted: tuple[MarginMoments, _Calibration] | None = None
        for group in groups:
            self.add(group)

    def add(self, group: GroupMargin) -> None:
        """Record one deal group.

        Raises:
            ValueError: a score outside [0, 1], or a margin or luck that is not finite.
        """
        if not 0.0 <= group.score <= 1.0:
            raise ValueError(f"a group score is in [0, 1], got {group.score!r}")
        if not all(math.isfinite(v) for v in (group.margin, *group.luck)):
            raise ValueError(f"margin and luck must be finite numbers, got {group!r}")
        if len(group.luck) != _TERMS:
            raise ValueError(f"luck has {_TERMS} terms ({', '.join(LUCK_TERMS)}), got {group!r}")
        self._groups.append(group)
        self._fitted = None

    @property
    def groups(self) -> tuple[GroupMargin, ...]:
        """The groups, in the order added."""
        return tuple(self._groups)

    @property
    def n(self) -> int:
        """Number of groups."""
        return len(self._groups)

    def moments(self) -> MarginMoments:
        """The sufficient statistics of the groups (one object until the next :meth:`add`:
        not to be changed)."""
        return self._fit()[0]

    def _fit(self) -> tuple[MarginMoments, _Calibration]:
        if self._fitted is None:
            moments = MarginMoments.of(self._groups)
            self._fitted = moments, _calibrate(moments)
        return self._fitted

    def game_scores(self) -> GroupScores:
        """The same groups' game scores, for :class:`SPRT` (the game-level test)."""
        return GroupScores(group.score for group in self._groups)

    def _calibration(self) -> _Calibration:
        if not self._groups:
            raise ValueError("no deal-groups recorded yet")
        return self._fit()[1]

    @property
    def exchange_rate(self) -> float | None:
        """``b``, game score per point of margin; None while groups count by game score.

        Raises:
            ValueError: no groups.
        """
        calibration = self._calibration()
        return float(calibration.rate) if bool(calibration.calibrated) else None

    @property
    def luck_coefficients(self) -> tuple[float, ...]:
        """``beta``, points of margin per unit of each luck term (0 where not fitted).

        Raises:
            ValueError: no groups.
        """
        return tuple(float(v) for v in self._calibration().luck)

    def values(self) -> FloatArray:
        """Each group's value y on the game-score scale, in the order added.

        Raises:
            ValueError: no groups.
        """
        calibration = self._calibration()
        rate, beta = float(calibration.rate), calibration.luck
        if not bool(calibration.calibrated):
            return np.array([group.score for group in self._groups])
        return np.array(
            [
                group.score
                if group.forfeit
                else 0.5 + rate * (group.margin - float(np.dot(beta, group.luck)))
                for group in self._groups
            ]
        )

    @property
    def mean(self) -> float:
        """The mean value, NEW's estimated expected game score.

        Raises:
            ValueError: no groups.
        """
        total, sum_y, _ = self._calibration().sums
        return float(sum_y / total)

    @property
    def variance(self) -> float:
        """The variance of the values (divided by n; the luck adjustment's small-sample
        factor included).

        Raises:
            ValueError: no groups.
        """
        total, sum_y, sum_yy = self._calibration().sums
        return max(float(sum_yy / total - (sum_y / total) ** 2), 0.0)


#: The margin test's fast pass: beside its main SPRT of elo0 against elo1, a second SPRT of
#: elo0 against ``elo0 + FAST_SPAN * (elo1 - elo0)`` whose acceptance of H1 also passes NEW.
#: The main test gets ``1 - FAST_SHARE`` of alpha and the fast pass the rest, so the chance of
#: a false pass stays at most alpha (their sum); the fast pass only adds passes, so the pass
#: rate at elo1 stays at least 1 - beta. A clearly stronger NEW passes in about half the games.
FAST_SPAN = 5.0
FAST_SHARE = 0.2


@dataclass(frozen=True, slots=True)
class MarginSPRT:
    """The margin test of H0: NEW - OLD = ``elo0`` against H1: NEW - OLD = ``elo1``
    (logistic Elo), on :class:`MarginScores`: H_k says the groups' mean value on the
    game-score scale is ``elo_to_score(elo_k)``. The LLR is :func:`margin_llr` (a normal
    sample with the sample's variance); ``alpha`` and ``beta`` as :class:`SPRT`, and the
    bounds Wald's widened for the variance's degrees of freedom
    (:func:`small_sample_factor`); no decision before :data:`MIN_MARGIN_GROUPS` groups.

    With ``fast_pass`` (the default) a second SPRT runs beside it (:data:`FAST_SPAN`,
    :data:`FAST_SHARE`): NEW also passes once that one's LLR reaches ``log(1 / alpha_f)``,
    widened alike (Ville's inequality: under H0 a likelihood ratio ever gets there with
    chance at most ``alpha_f``).

    Raises:
        ValueError: ``elo0 >= elo1``, or alpha, beta not in (0, 1) with alpha + beta < 1.
    """

    elo0: float
    elo1: float
    alpha: float = 0.05
    beta: float = 0.05
    fast_pass: bool = True

    def __post_init__(self) -> None:
        check_test("margin", self.elo0, self.elo1, self.alpha, self.beta)

    @property
    def main_alpha(self) -> float:
        """The main test's share of alpha."""
        return self.alpha * (1.0 - FAST_SHARE) if self.fast_pass else self.alpha

    @property
    def fast_elo(self) -> float:
        """The fast pass's H1, in Elo."""
        return self.elo0 + FAST_SPAN * (self.elo1 - self.elo0)

    def bounds(self, samples: MarginScores | None = None) -> tuple[float, float]:
        """The main test's LLR bounds over ``samples``: H0 is accepted at or below the
        first, H1 at or above the second. Without samples Wald's, the limit for many groups.
        """
        lower, upper = _bounds(self.main_alpha, self.beta)
        if samples is None or samples.n == 0:
            return lower, upper
        dof = samples._fit()[1].dof
        return (float(lower * small_sample_factor(dof, lower)),
                float(upper * small_sample_factor(dof, upper)))  # fmt: skip

    def fast_bound(self, samples: MarginScores | None = None) -> float | None:
        """The fast pass's LLR bound over ``samples`` (None without a fast pass; without
        samples Ville's, the limit for many groups)."""
        if not self.fast_pass:
            return None
        bound = math.log(1.0 / (self.alpha * FAST_SHARE))
        if samples is None or samples.n == 0:
            return bound
        return float(bound * small_sample_factor(samples._fit()[1].dof, bound))

    def llr(self, samples: MarginScores) -> float:
        """The main test's log-likelihood ratio of H1 against H0 (0 with no samples)."""
        if samples.n == 0:
            return 0.0
        s0, s1 = elo_to_score(self.elo0), elo_to_score(self.elo1)
        return float(_values_llr(samples._fit()[1], s0, s1))

    def fast_llr(self, samples: MarginScores) -> float | None:
        """The fast pass's log-likelihood ratio (None without a fast pass; 0 with no
        samples)."""
        if not self.fast_pass:
            return None
        if samples.n == 0:
            return 0.0
        s0, s1 = elo_to_score(self.elo0), elo_to_score(self.fast_elo)
        return float(_values_llr(samples._fit()[1], s0, s1))

    def status(self, samples: MarginScores) -> Status:
        """Whether the test has accepted H0 or H1, or must go on (always before
        :data:`MIN_MARGIN_GROUPS` groups)."""
        if samples.n == 0:
            return "continue"
        moments, calibration = samples._fit()
        verdict = int(_verdicts(self, moments.n + moments.forfeits, calibration))
        return "H1 accepted" if verdict > 0 else "H0 accepted" if verdict < 0 else "continue"


def margin_verdicts(
    test: MarginSPRT, moments: MarginMoments, small_sample: bool = True
) -> npt.NDArray[np.int8]:
    """:meth:`MarginSPRT.status` over the batch of ``moments``: 1 where H1 is accepted
    (by the main test or the fast pass), -1 where H0 is, 0 where the test goes on.
    ``small_sample=False`` keeps Wald's bounds whatever the groups (the test as it was
    before :func:`small_sample_factor`, for benchmarks/verdicts.py's comparison)."""
    return _verdicts(test, moments.n + moments.forfeits, _calibrate(moments), small_sample)


def _verdicts(
    test: MarginSPRT, groups: FloatArray, calibration: _Calibration, small_sample: bool = True
) -> npt.NDArray[np.int8]:
    """:func:`margin_verdicts` of ``groups`` deal groups (forfeited ones included) whose
    moments ``calibration`` was made of."""
    s0 = elo_to_score(test.elo0)
    llr = _values_llr(calibration, s0, elo_to_score(test.elo1))
    dof = calibration.dof if small_sample else np.full_like(llr, np.inf)
    lower, upper = _bounds(test.main_alpha, test.beta)
    passed = llr >= upper * small_sample_factor(dof, upper)
    bound = test.fast_bound()
    if bound is not None:
        fast = _values_llr(calibration, s0, elo_to_score(test.fast_elo))
        passed |= fast >= bound * small_sample_factor(dof, bound)
    failed = ~passed & (llr <= lower * small_sample_factor(dof, lower))
    verdict = np.where(passed, 1, np.where(failed, -1, 0)).astype(np.int8)
    return np.where(groups >= MIN_MARGIN_GROUPS, verdict, 0).astype(np.int8)


def margin_elo_estimate(samples: MarginScores) -> tuple[float, float, float]:
    """NEW's logistic Elo advantage and its 95% interval ``(elo, low, high)`` from the mean
    value of the groups and its standard error, as :func:`elo_estimate` does for game scores.

    Raises:
        ValueError: no groups.
    """
    mean = samples.mean
    margin = _NORMAL.inv_cdf(0.975) * math.sqrt(samples.variance / samples.n)
    return _score_to_elo(mean), _score_to_elo(mean - margin), _score_to_elo(mean + margin)


def margin_los(samples: MarginScores) -> float:
    """Likelihood of superiority from the groups' values: Phi((mean - 1/2) / se).

    Raises:
        ValueError: no groups.
    """
    mean, error = samples.mean, math.sqrt(samples.variance / samples.n)
    if error == 0.0:
        return 1.0 if mean > 0.5 else 0.0 if mean < 0.5 else 0.5
    return _NORMAL.cdf((mean - 0.5) / error)


# --- either test, as a regression test reads -------------------------------------------

RegressionTest = SPRT | MarginSPRT


def make_test(
    statistic: Statistic, elo0: float, elo1: float, alpha: float = 0.05, beta: float = 0.05
) -> RegressionTest:
    """The regression test counting ``statistic``: :class:`MarginSPRT` for ``margin`` (with
    its fast pass), :class:`SPRT` for ``game``.

    Raises:
        ValueError: an unknown statistic, or parameters the tests refuse.
    """
    check_test(statistic, elo0, elo1, alpha, beta)
    return (
        MarginSPRT(elo0, elo1, alpha, beta)
        if statistic == "margin"
        else SPRT(elo0, elo1, alpha, beta)
    )


def statistic_of(test: RegressionTest) -> Statistic:
    """``margin`` or ``game``: what ``test`` counts."""
    return "margin" if isinstance(test, MarginSPRT) else "game"


@dataclass(frozen=True, slots=True)
class Reading:
    """Where a regression test stands over its deal groups.

    Attributes:
        statistic: what it counts, ``margin`` or ``game``.
        groups: the deal groups read.
        status: the test's verdict so far.
        llr, lower, upper: its (main) log-likelihood ratio and the bounds that decide.
        fast_llr, fast_upper: the margin test's fast pass and the bound at which it passes
            NEW (None for the game-level test).
        elo, low, high: NEW's Elo advantage with its 95% interval, as the statistic
            estimates it (None before two groups).
        los: the likelihood of superiority (None before two groups).
    """

    statistic: Statistic
    groups: int
    status: Status
    llr: float
    lower: float
    upper: float
    fast_llr: float | None = None
    fast_upper: float | None = None
    elo: float | None = None
    low: float | None = None
    high: float | None = None
    los: float | None = None


def read_test(test: RegressionTest, samples: MarginScores) -> Reading:
    """``test`` over ``samples`` (the game-level test reads their game scores)."""
    if isinstance(test, MarginSPRT):
        lower, upper = test.bounds(samples)
        status = test.status(samples)
        fast_llr, fast_upper = test.fast_llr(samples), test.fast_bound(samples)
        reading = Reading("margin", samples.n, status, test.llr(samples), lower, upper,
                          fast_llr, fast_upper)  # fmt: skip
        if samples.n >= 2:
            elo, low, high = margin_elo_estimate(samples)
            reading = dataclasses.replace(
                reading, elo=elo, low=low, high=high, los=margin_los(samples)
            )
        return reading
    lower, upper = test.bounds()
    scores = samples.game_scores()
    status = test.status(scores) if scores.n >= 2 else "continue"
    reading = Reading("game", scores.n, status, test.llr(scores), lower, upper)
    if scores.n >= 2:
        elo, low, high = elo_estimate(scores)
        reading = dataclasses.replace(reading, elo=elo, low=low, high=high, los=los(scores))
    return reading
