"""Ratings with uncertainty: a Bradley-Terry fit of pairwise-decomposed results, on the Elo scale.

Every game is broken into pairwise comparisons between seats on different
sides (a win, a draw or a loss by finishing place), weighted so that each seat's
comparisons in one game weigh one game in total. The pairs are aggregated into a
K x K matrix (numpy ``bincount``) and one Bradley-Terry model is fitted on it by
penalised maximum likelihood (damped Newton with a line search), so the
fit is independent of the order of the results. Standard errors come from the
inverse Hessian of the log-posterior. docs/ratings.md derives every choice.

    >>> won, lost = GameResult(("a", "b"), (0, 1)), GameResult(("a", "b"), (1, 0))
    >>> ratings = fit_ratings([won, won, won, lost])
    >>> [(r.bot, r.rank) for r in ratings]
    [('a', 1), ('b', 2)]
"""

from __future__ import annotations

import bisect
import logging
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np
import numpy.typing as npt

__all__ = [
    "ELO_PER_NAT",
    "MEAN_RATING",
    "PRIOR_SD",
    "GameResult",
    "HistoryPoint",
    "Rating",
    "ResultMatrix",
    "fit_ratings",
    "fit_ratings_arrays",
    "logistic",
    "rank_bounds",
    "rating_history",
]

_log = logging.getLogger(__name__)

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

#: Elo points per unit of the Bradley-Terry strength (natural log odds): 400 / ln 10.
ELO_PER_NAT = 400.0 / math.log(10.0)
#: The mean rating (or the anchor bot's rating).
MEAN_RATING = 1500.0
#: Standard deviation, in Elo, of the Gaussian prior on every bot's strength.
PRIOR_SD = 1000.0
_PRIOR_PRECISION = (ELO_PER_NAT / PRIOR_SD) ** 2
_Z95 = NormalDist().inv_cdf(0.975)


@dataclass(frozen=True, slots=True)
class GameResult:
    """One finished game: the bot at each seat and its finishing place.

    Attributes:
        bots: the bot's name at each seat (a bot may hold several seats).
        places: each seat's place, 0 = first; equal places are a tie.
        sides: each seat's side in team play (seats with the same side are
            partners and never compared with each other); None: every seat
            plays for itself.
        time: when the game finished (any monotonic scale), for histories.

    Raises:
        ValueError: fewer than two seats, lengths differ, a negative place, or
            all seats on one side.
    """

    bots: tuple[str, ...]
    places: tuple[int, ...]
    sides: tuple[int, ...] | None = None
    time: float = 0.0

    def __post_init__(self) -> None:
        n = len(self.bots)
        if n < 2:
            raise ValueError(f"a game needs at least two seats, got bots={self.bots!r}")
        if len(self.places) != n:
            raise ValueError(
                f"{n} bots but {len(self.places)} places: bots={self.bots!r} places={self.places!r}"
            )
        if any(place < 0 for place in self.places):
            raise ValueError(f"places must be >= 0, got {self.places!r}")
        if self.sides is not None:
            if len(self.sides) != n:
                raise ValueError(
                    f"{n} bots but {len(self.sides)} sides: bots={self.bots!r} sides={self.sides!r}"
                )
            if len(set(self.sides)) < 2:
                raise ValueError(f"all seats are on one side: sides={self.sides!r}")


@dataclass(frozen=True, slots=True)
class Rating:
    """One bot's fitted rating on the Elo scale.

    Attributes:
        bot: the bot's name.
        rating: the rating (mean of all bots, or the anchor bot, = 1500).
        stderr: its standard error in Elo (0 for the anchor bot).
        low, high: the 95% confidence interval, rating -/+ 1.96 stderr.
        games: games the bot played (a game counts once however many seats it held).
        rank: 1 = best, by rating.
        rank_best, rank_worst: the range of ranks consistent with the data: one
            plus the number of bots significantly better (95%, two-sided, using
            the covariance of the two ratings), and the number of bots minus
            those significantly worse.
    """

    bot: str
    rating: float
    stderr: float
    low: float
    high: float
    games: int
    rank: int
    rank_best: int
    rank_worst: int

    @property
    def decided(self) -> bool:
        """Whether the rank is certain: the bot differs significantly from every other bot."""
        return self.rank_best == self.rank_worst


@dataclass(frozen=True, slots=True)
class HistoryPoint:
    """A bot's rating after all results up to ``time`` (see :func:`rating_history`)."""

    time: float
    rating: float
    low: float
    high: float
    games: int
    rank: int


def _as_ints(values: npt.ArrayLike, what: str) -> IntArray:
    array = np.asarray(values)
    if array.ndim != 1:
        raise ValueError(f"{what} must be one-dimensional, got shape {array.shape}")
    if array.size and not np.issubdtype(array.dtype, np.integer):
        raise ValueError(f"{what} must hold integers, got dtype {array.dtype}")
    return array.astype(np.int64, copy=False)


class ResultMatrix:
    """Aggregated pairwise results between bots, built incrementally, then fitted.

    Bots are registered by name (:meth:`codes`); the array methods take the
    returned integer codes. Adding is cheap and order-free; :meth:`fit` never
    changes the matrix, so a service can add new results and re-fit.
    """

    def __init__(self) -> None:
        self._index: dict[str, int] = {}
        self._wins: FloatArray = np.zeros((0, 0))
        self._draws: FloatArray = np.zeros((0, 0))
        self._games: IntArray = np.zeros(0, dtype=np.int64)

    @property
    def bots(self) -> tuple[str, ...]:
        """The registered bots, by code."""
        return tuple(self._index)

    @property
    def wins(self) -> FloatArray:
        """``wins[i, j]``: weighted wins of bot i over bot j (a copy)."""
        return self._wins.copy()

    @property
    def draws(self) -> FloatArray:
        """``draws[i, j]``: weighted draws between bots i and j, symmetric (a copy)."""
        return self._draws.copy()

    @property
    def games(self) -> IntArray:
        """Games played by each bot, by code (a copy)."""
        return self._games.copy()

    def codes(self, names: Iterable[str]) -> IntArray:
        """The code of each name, registering new names."""
        index = self._index
        codes = [index.setdefault(name, len(index)) for name in names]
        self._grow(len(index))
        return np.array(codes, dtype=np.int64)

    def _grow(self, size: int) -> None:
        old = self._games.size
        if size > old:
            pad = size - old
            self._wins = np.pad(self._wins, ((0, pad), (0, pad)))
            self._draws = np.pad(self._draws, ((0, pad), (0, pad)))
            self._games = np.pad(self._games, (0, pad))

    def _check_codes(self, codes: IntArray, what: str) -> None:
        if codes.size and (codes.min() < 0 or codes.max() >= self._games.size):
            raise ValueError(f"{what} holds codes outside 0..{self._games.size - 1}")

    def add(self, result: GameResult) -> None:
        """Add one game."""
        self.extend((result,))

    def extend(self, results: Iterable[GameResult]) -> None:
        """Add games (flattened into a seat table, then :meth:`add_seats`)."""
        game: list[int] = []
        names: list[str] = []
        places: list[int] = []
        sides: list[int] = []
        for number, result in enumerate(results):
            n = len(result.bots)
            game.extend([number] * n)
            names.extend(result.bots)
            places.extend(result.places)
            sides.extend(range(n) if result.sides is None else result.sides)
        self.add_seats(
            np.array(game, dtype=np.int64), self.codes(names), np.array(places), np.array(sides)
        )

    def add_pairs(
        self,
        winners: npt.ArrayLike,
        losers: npt.ArrayLike,
        draws: npt.ArrayLike | None = None,
    ) -> None:
        """Add 2-player games by code: ``winners[g]`` beat ``losers[g]`` (drew where ``draws[g]``).

        Raises:
            ValueError: lengths differ or a code is not registered.
        """
        first = _as_ints(winners, "winners")
        second = _as_ints(losers, "losers")
        drawn = np.zeros(first.size, bool) if draws is None else np.asarray(draws, dtype=bool)
        if not first.size == second.size == drawn.size:
            raise ValueError(
                f"winners, losers and draws differ in length: "
                f"{first.size}, {second.size}, {drawn.size}"
            )
        self._check_codes(first, "winners")
        self._check_codes(second, "losers")
        size = self._games.size
        self._games += np.bincount(first, minlength=size)
        self._games += np.bincount(second[second != first], minlength=size)
        self._accumulate(first, second, np.ones(first.size), drawn)

    def add_seats(
        self,
        game: npt.ArrayLike,
        bot: npt.ArrayLike,
        place: npt.ArrayLike,
        side: npt.ArrayLike | None = None,
    ) -> None:
        """Add games given as a seat table: one row per seat (game id, bot code, place, side).

        Rows of one game share its id (any integers; rows need not be sorted).
        ``side`` None: every seat plays for itself.

        Raises:
            ValueError: lengths differ, a code is not registered, a game has
                fewer than two seats, or all its seats are on one side.
        """
        games, bots, places = (
            _as_ints(game, "game"),
            _as_ints(bot, "bot"),
            _as_ints(place, "place"),
        )
        sides = np.arange(games.size) if side is None else _as_ints(side, "side")
        if not games.size == bots.size == places.size == sides.size:
            raise ValueError(
                f"game, bot, place and side differ in length: "
                f"{games.size}, {bots.size}, {places.size}, {sides.size}"
            )
        if games.size == 0:
            return
        self._check_codes(bots, "bot")
        if np.any(games[1:] < games[:-1]):
            order = np.argsort(games, kind="stable")
            games, bots, places, sides = games[order], bots[order], places[order], sides[order]
        _Seats(games, bots, places, sides).add_to(self)

    def _accumulate(
        self, first: IntArray, second: IntArray, weight: FloatArray, drawn: npt.NDArray[np.bool_]
    ) -> None:
        """Add weighted comparisons: ``first`` beat ``second`` (or drew where ``drawn``)."""
        keep = first != second
        first, second, weight, drawn = first[keep], second[keep], weight[keep], drawn[keep]
        size = self._games.size
        won = ~drawn
        self._wins += np.bincount(
            first[won] * size + second[won], weights=weight[won], minlength=size * size
        ).reshape(size, size)
        drawn_pairs = np.bincount(
            first[drawn] * size + second[drawn], weights=weight[drawn], minlength=size * size
        ).reshape(size, size)
        self._draws += drawn_pairs + drawn_pairs.T

    def fit(self, *, anchor: str | None = None) -> list[Rating]:
        """Fit the ratings, best first.

        Raises:
            ValueError: fewer than two bots, or ``anchor`` is not a rated bot.
        """
        return self.fit_with_covariance(anchor=anchor)[0]

    def fit_with_covariance(self, *, anchor: str | None = None) -> tuple[list[Rating], FloatArray]:
        """Fit the ratings, best first, and their covariance about the mean in Elo^2, by code.

        Raises:
            ValueError: fewer than two bots, or ``anchor`` is not a rated bot.
        """
        names = self.bots
        if len(names) < 2:
            raise ValueError(f"ratings need at least two bots, got {list(names)!r}")
        if anchor is not None and anchor not in self._index:
            raise ValueError(f"unknown anchor bot {anchor!r}; rated bots: {sorted(names)!r}")
        # Draws count as half a win for each side.
        score = self._wins + 0.5 * self._draws
        theta = _maximise(score)
        covariance = _contrast_covariance(_hessian(theta, score + score.T))
        elo2: FloatArray = ELO_PER_NAT**2 * covariance
        return _ratings(names, self._games, theta, covariance, anchor), elo2


class _Seats:
    """A seat table sorted by game, decomposed into weighted pairwise comparisons."""

    def __init__(self, games: IntArray, bots: IntArray, places: IntArray, sides: IntArray) -> None:
        self.games, self.bots, self.places, self.sides = games, bots, places, sides
        starts = np.flatnonzero(np.concatenate(([True], games[1:] != games[:-1])))
        sizes = np.diff(np.append(starts, games.size))
        if sizes.min() < 2:
            bad = games[starts[np.argmin(sizes)]]
            raise ValueError(f"game {bad} has fewer than two seats")
        self.widest = int(sizes.max())
        self.size = np.repeat(sizes, sizes)

    def _neighbours(self, offset: int) -> tuple[IntArray, IntArray]:
        """Rows ``a`` and ``a + offset`` of the same game."""
        first = np.flatnonzero(self.games[offset:] == self.games[:-offset])
        return first, first + offset

    def opponents(self) -> IntArray:
        """Each seat's number of opponents (seats of its game on other sides)."""
        partners = np.zeros(self.games.size, dtype=np.int64)
        for offset in range(1, self.widest):
            a, b = self._neighbours(offset)
            same = self.sides[a] == self.sides[b]
            partners[a[same]] += 1
            partners[b[same]] += 1
        opponents = self.size - 1 - partners
        if np.any(opponents == 0):
            bad = self.games[np.argmin(opponents)]
            raise ValueError(f"game {bad} has all its seats on one side")
        return opponents

    def add_to(self, matrix: ResultMatrix) -> None:
        opponents = self.opponents()
        repeated = np.zeros(self.games.size, dtype=bool)
        for offset in range(1, self.widest):
            a, b = self._neighbours(offset)
            repeated[b[self.bots[a] == self.bots[b]]] = True
            rivals = self.sides[a] != self.sides[b]
            a, b = a[rivals], b[rivals]
            weight = 1.0 / np.maximum(opponents[a], opponents[b])
            a_first = self.places[a] <= self.places[b]
            winner = np.where(a_first, self.bots[a], self.bots[b])
            loser = np.where(a_first, self.bots[b], self.bots[a])
            matrix._accumulate(winner, loser, weight, self.places[a] == self.places[b])
        matrix._games += np.bincount(self.bots[~repeated], minlength=matrix._games.size)


def logistic(x: FloatArray) -> FloatArray:
    """The logistic function ``1 / (1 + exp(-x))``, elementwise, as scipy's ``expit``
    computes it: from ``e = exp(-|x|)``, which never overflows, ``1 / (1 + e)`` where ``x``
    is not negative and ``e / (1 + e)`` where it is, so ``logistic(-x)`` is
    ``1 - logistic(x)`` to rounding (a fit of mirrored results is the mirror of the fit).
    In numpy: loading ``scipy.special`` for it was 0.2 CPU s of every worker's start and of
    every command that fits."""
    e = np.exp(-np.abs(x))
    result: FloatArray = np.where(x >= 0, 1.0, e) / (1.0 + e)
    return result


def _objective(theta: FloatArray, score: FloatArray, total: FloatArray) -> tuple[float, FloatArray]:
    """Negative log-posterior and its gradient.

    ``-sum_ij S_ij log sigmoid(t_i - t_j) + lambda/2 sum_i t_i^2``.
    """
    diff = theta[:, None] - theta[None, :]
    value = float(np.sum(score * np.logaddexp(0.0, -diff)))
    value += 0.5 * _PRIOR_PRECISION * float(theta @ theta)
    # d/dt_i: sum_j N_ij p_ij - S_ij (row) with p_ij = sigmoid(t_i - t_j).
    gradient = np.sum(total * logistic(diff) - score, axis=1) + _PRIOR_PRECISION * theta
    return value, gradient


def _hessian(theta: FloatArray, total: FloatArray) -> FloatArray:
    """Hessian of the negative log-posterior (observed information plus prior precision)."""
    p = logistic(theta[:, None] - theta[None, :])
    weights = total * p * (1.0 - p)
    hessian = -weights
    hessian[np.diag_indices_from(hessian)] = weights.sum(axis=1) - np.diag(weights)
    hessian += _PRIOR_PRECISION * np.eye(theta.size)
    return hessian


#: Newton steps before the fit gives up (it converges quadratically: about 5-10 are used).
_MAX_NEWTON_STEPS = 200
#: Armijo's sufficient-decrease constant, and the smallest step tried along a direction.
_ARMIJO = 1e-4
_MIN_STEP = 1e-12
#: The objective's rounding, relative to its value (a few units in the last place).
_ROUNDING = 8 * float(np.finfo(np.float64).eps)


def _largest(gradient: FloatArray) -> float:
    """The gradient's largest component, in magnitude."""
    return float(np.max(np.abs(gradient), initial=0.0))


def _maximise(score: FloatArray) -> FloatArray:
    """The strengths (natural log odds) maximising the posterior; they sum to 0.

    Damped Newton on the negative log-posterior: strictly convex (the prior adds
    ``lambda I`` to a positive semi-definite Hessian), so each Newton direction descends,
    a backtracking (Armijo) line search makes every step decrease it (or, where the decrease
    is below the objective's rounding, shrink the gradient), and the iteration
    converges from any start -- there is no trust region whose arithmetic can fail. It
    stops once the gradient vanishes to ``1e-12`` of the games, or when no step along the
    Newton direction decreases the objective any more, or a damped step leaves it
    unchanged (the optimum to rounding: the gradient's own rounding can exceed the
    tolerance, and the line search then accepts shorter and shorter steps that change
    nothing, for all the Newton steps allowed).
    """
    total = score + score.T
    theta = np.zeros(score.shape[0])
    value, gradient = _objective(theta, score, total)
    tolerance = 1e-12 * max(1.0, float(total.sum()))
    for _ in range(_MAX_NEWTON_STEPS):
        if _largest(gradient) <= tolerance:
            break
        direction = np.linalg.solve(_hessian(theta, total), -gradient)
        slope = float(gradient @ direction)
        if slope >= 0.0:  # rounding: no descent direction is left
            break
        step = 1.0
        while step >= _MIN_STEP:
            candidate = theta + step * direction
            new_value, new_gradient = _objective(candidate, score, total)
            if new_value <= value + _ARMIJO * step * slope:
                break
            # Near the optimum the decrease is below the objective's rounding, which Armijo
            # cannot see: a step within it that shrinks the gradient is taken (without it
            # the fit stopped at a gradient of 4e-7 that the full Newton step took to 4e-15,
            # which way it went hanging on the last bits of the sigmoid).
            level = value + _ROUNDING * abs(value)
            if new_value <= level and _largest(new_gradient) < _largest(gradient):
                break
            step *= 0.5
        else:  # no step decreases the objective: converged to rounding
            break
        if step < 1.0 and new_value >= value:  # a damped step that changed nothing: rounding
            break
        theta, value, gradient = candidate, new_value, new_gradient
    else:
        _log.warning("the rating fit did not converge in %d Newton steps", _MAX_NEWTON_STEPS)
    centred: FloatArray = theta - theta.mean()
    return centred


def _contrast_covariance(hessian: FloatArray) -> FloatArray:
    """Covariance of the strengths about their mean: P H^-1 P, P = I - J/K.

    The all-ones vector is an eigenvector of H (eigenvalue lambda, the prior
    precision), so P H^-1 P = (H + J)^-1 - J / (K (lambda + K)), well conditioned
    however small lambda is.
    """
    size = hessian.shape[0]
    ones = np.ones((size, size))
    inverse = np.asarray(np.linalg.inv(hessian + ones), dtype=np.float64)
    covariance: FloatArray = inverse - ones / (size * (_PRIOR_PRECISION + size))
    return covariance


def _ratings(
    names: Sequence[str],
    games: IntArray,
    theta: FloatArray,
    covariance: FloatArray,
    anchor: str | None,
) -> list[Rating]:
    """Elo-scale ratings with intervals and rank ranges, best first."""
    variance = np.diag(covariance)
    # var(t_i - t_j) for every pair.
    pair_variance = variance[:, None] + variance[None, :] - 2.0 * covariance
    if anchor is None:
        shift, own_variance = 0.0, variance
    else:
        a = names.index(anchor)
        shift, own_variance = float(theta[a]), pair_variance[a]
    ratings = MEAN_RATING + ELO_PER_NAT * (theta - shift)
    stderr = ELO_PER_NAT * np.sqrt(np.maximum(own_variance, 0.0))
    best, worst = rank_bounds(ratings, ELO_PER_NAT**2 * covariance)
    order = sorted(range(len(names)), key=lambda i: (-ratings[i], names[i]))
    return [
        Rating(
            bot=names[i],
            rating=float(ratings[i]),
            stderr=float(stderr[i]),
            low=float(ratings[i] - _Z95 * stderr[i]),
            high=float(ratings[i] + _Z95 * stderr[i]),
            games=int(games[i]),
            rank=rank,
            rank_best=int(best[i]),
            rank_worst=int(worst[i]),
        )
        for rank, i in enumerate(order, start=1)
    ]


def rank_bounds(
    ratings: Sequence[float] | FloatArray, covariance: FloatArray
) -> tuple[IntArray, IntArray]:
    """The range of ranks (best, worst; 1 = best) the data allow each of these bots, among
    them alone: one is above another when their rating difference exceeds its 95% margin,
    ``1.96 sqrt(Var(r_i - r_j))``. ``ratings`` in Elo, ``covariance`` their covariance in
    Elo^2 (the fit's, restricted to the bots ranked: a bot left out moves no one's range).

    >>> best, worst = rank_bounds([1700.0, 1500.0, 1490.0], np.diag([100.0, 100.0, 100.0]))
    >>> best.tolist(), worst.tolist()
    ([1, 2, 2], [1, 3, 3])
    """
    values = np.asarray(ratings, dtype=np.float64)
    variance = np.diag(covariance)
    pair_variance = variance[:, None] + variance[None, :] - 2.0 * covariance
    margin = _Z95 * np.sqrt(np.maximum(pair_variance, 0.0))
    gap = values[None, :] - values[:, None]
    better = np.sum(gap > margin, axis=1)
    worse = np.sum(-gap > margin, axis=1)
    return (1 + better).astype(np.int64), (values.size - worse).astype(np.int64)


def fit_ratings(results: Iterable[GameResult], *, anchor: str | None = None) -> list[Rating]:
    """Fit every bot's rating over all ``results`` (order does not matter), best first.

    Raises:
        ValueError: fewer than two bots, or ``anchor`` is not among them.
    """
    matrix = ResultMatrix()
    matrix.extend(results)
    return matrix.fit(anchor=anchor)


def fit_ratings_arrays(
    bots: Sequence[str],
    winners: npt.ArrayLike,
    losers: npt.ArrayLike,
    draws: npt.ArrayLike | None = None,
    *,
    anchor: str | None = None,
) -> list[Rating]:
    """Fit 2-player results given as arrays of indices into ``bots``, best first.

    ``winners[g]`` beat ``losers[g]`` in game g, or they drew where ``draws[g]``.

    Raises:
        ValueError: lengths differ, an index is out of range, fewer than two
            bots, or ``anchor`` is not in ``bots``.
    """
    matrix = ResultMatrix()
    codes = matrix.codes(bots)
    first, second = _as_ints(winners, "winners"), _as_ints(losers, "losers")
    for what, values in (("winners", first), ("losers", second)):
        if values.size and (values.min() < 0 or values.max() >= len(bots)):
            raise ValueError(f"{what} holds indices outside 0..{len(bots) - 1}")
    matrix.add_pairs(codes[first], codes[second], draws)
    return matrix.fit(anchor=anchor)


def rating_history(
    results: Iterable[GameResult],
    checkpoints: Iterable[float],
    *,
    anchor: str | None = None,
) -> dict[str, list[HistoryPoint]]:
    """Each bot's rating after the results with ``time <= checkpoint``, for every checkpoint.

    Each point is a full re-fit of the results so far. A checkpoint with fewer
    than two bots (or before the anchor's first game) has no points.

    Raises:
        ValueError: ``anchor`` never plays.
    """
    ordered = sorted(results, key=lambda result: result.time)
    if anchor is not None and not any(anchor in result.bots for result in ordered):
        raise ValueError(f"unknown anchor bot {anchor!r}: it plays in none of the results")
    times = [result.time for result in ordered]
    history: dict[str, list[HistoryPoint]] = {}
    matrix = ResultMatrix()
    done = 0
    for checkpoint in sorted(checkpoints):
        end = bisect.bisect_right(times, checkpoint)
        matrix.extend(ordered[done:end])
        done = end
        if len(matrix.bots) < 2 or (anchor is not None and anchor not in matrix.bots):
            continue
        for r in matrix.fit(anchor=anchor):
            point = HistoryPoint(checkpoint, r.rating, r.low, r.high, r.games, r.rank)
            history.setdefault(r.bot, []).append(point)
    return history
