"""The ladder's pairing rule: which entrants play next, given their current ratings.

A continuous ladder has no schedule: whenever it may start ``K`` more matches it
asks :func:`next_pairings` for them, with the field as it stands (each entrant's
rating and standard error from :mod:`arena.compete.ratings`, its games played and
when it last played; :func:`field_from_ratings` builds it from a fit). The rule,
in order:

1. **Placement.** An entrant with fewer than ``placement_games`` games is new:
   it gets its remaining placement games at once, against a spread of the
   established field -- the opponents nearest to the quantiles 1/2, 1/4, 3/4,
   1/8, 3/8, ... of the established ratings (its n-th game goes to the n-th
   quantile of that sequence), so a handful of games brackets its strength
   wherever it lies. With no established field yet, the new entrants meet each
   other at random (a seeded order breaks the equal ratings).
2. **The floor.** An active entrant whose *load* (rule 4) falls below ``floor``
   times the mean load of the active entrants is *due*: it is paired next
   (least load first, then longest idle), with its most informative free
   opponent (an uncapped one if there is any). No entrant starves.
3. **Information.** The remaining matches go to the pairs whose game is
   expected to reduce the field's rank uncertainty most. The rank uncertainty
   is ``U = sum over pairs of Phi(-g_ik / s_ik)``, the chance that a pair's
   fitted order is wrong (``g`` their rating gap, ``s^2 = v_i + v_k`` the sum of
   their variances). One game between i and j with predicted score ``p`` carries
   Fisher information ``I = p (1 - p)`` on their difference; its Kalman update
   lowers ``v_i`` by ``v_i^2 I / (1 + (v_i + v_j) I)`` (and ``v_j`` likewise). A
   pair's score is the first-order fall of ``U``: each side's fall in variance
   times ``dU/dv_i`` (:func:`rank_sensitivity`). So games go to entrants with
   wide intervals among close rivals (a large ``dU/dv_i``), against opponents
   of similar strength (a large ``I``) whose own rating is well known (a small
   ``v_j``: an uncertain entrant learns most against an anchor). Given the
   fit's covariance, variances and updates are those of the differences
   (``Cov(r_i - r_k, r_i - r_j)``), so a game between entrants whose ratings
   move together (neighbours tied mostly to each other) counts for little;
   without it the ratings count as independent, and in the benchmark that
   rule paired neighbours in chains and ranked worse than random pairing
   (``ladder (no cov)`` in ``benchmarks/ladder.py``). It is a one-step
   approximation (of ``U``, only the pairs that involve i or j), so it is
   scored only over candidate pairs: each entrant with its next ``window``
   rivals up the order of a *draw of the ratings from the fit's posterior*, its
   spread widened ``explore`` times (seeded), and ``random_rivals`` more drawn
   at random. Pairs are taken greedily, best score first. The draw anneals
   between coverage and information by itself: while intervals are wide an
   entrant's sampled neighbours span a wide part of the field (its games tie
   distant parts together, as a round robin's do); as they narrow, the
   neighbours close in. Candidates among the fitted order's nearest rivals
   (``explore=0``, the rule until this draw) made the score pick ever closer
   pairs, and on a field of 500 over 400 Elo the ladder then needed 1.2-1.4
   times the round robin's games for its accuracy; with the draw 0.94-1.15
   (``benchmarks/ladder.py``: on so tight a field no rule can need much less
   than 0.83, the information bound).
4. **Fairness.** An entrant's *load* is its games past placement per unit of
   time since it joined (at least ``MIN_AGE_SHARE`` of the oldest entrant's time),
   scaled to the oldest active entrant's time on the ladder (without ``now``:
   its games past placement). An entrant whose load reaches ``ceiling`` times
   the mean load (or ``placement_games``, whichever is more) is capped: it is not
   picked for information pairs until the others catch up. With the floor,
   every active entrant's load stays between ``floor`` and ``ceiling`` times
   the mean, so within ``factor = ceiling / floor`` of any other's (plus the
   games of one call), once its placement is over; a late entrant is neither
   starved nor allowed to starve the others, and at most ``1 / ceiling`` of the
   field can be capped at once, so the ladder never stalls. Within one call an
   entrant plays at most ``ceil(2K / active)`` matches (its placement games
   excepted).

Inactive entrants (withdrawn, disqualified, superseded by a newer version)
count for nothing and are never paired. Ties in every ordering are broken by a
seeded shuffle, so the same field and seed give the same pairings.

    >>> field = [LadderEntrant(f"e{i}", 1500.0 + 10 * i, 40.0, 20, 0.0) for i in range(4)]
    >>> [p.reason for p in next_pairings(field, 2, seed=1)]
    ['information', 'information']
"""

from __future__ import annotations

import logging
import math
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from arena.compete.ratings import ELO_PER_NAT, MEAN_RATING, PRIOR_SD, Rating, logistic

__all__ = [
    "LadderEntrant",
    "LadderPolicy",
    "Pairing",
    "Scorer",
    "field_from_ratings",
    "next_pairings",
    "pair_scores",
    "placement_quantiles",
]

_log = logging.getLogger(__name__)

#: The shortest time on the ladder a load is measured over, as a share of the oldest entrant's.
MIN_AGE_SHARE = 0.1

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True, slots=True)
class LadderEntrant:
    """One entrant of the ladder as the pairing rule sees it.

    Attributes:
        id: the entrant's identity (a bot version's id, a label).
        rating: its current rating estimate on the Elo scale.
        stderr: the rating's standard error in Elo (``PRIOR_SD`` before any game).
        games: games it has played on this ladder.
        last_played: when it last played (any monotonic scale; ``-inf``: never).
        active: whether it may play (False: withdrawn, disqualified, superseded).
        joined: when it entered the ladder (same scale as ``last_played``).

    Raises:
        ValueError: a negative ``games`` or ``stderr``, or an empty ``id``.
    """

    id: str
    rating: float
    stderr: float
    games: int
    last_played: float = -math.inf
    active: bool = True
    joined: float = 0.0

    def __post_init__(self) -> None:
        if not self.id:
            raise ValueError("a ladder entrant needs a non-empty id")
        if self.games < 0 or not self.stderr >= 0.0:
            raise ValueError(
                f"entrant {self.id!r}: games and stderr must be >= 0, "
                f"got games={self.games} stderr={self.stderr}"
            )


@dataclass(frozen=True, slots=True)
class LadderPolicy:
    """The ladder's stated parameters (module docstring: what each one does).

    Attributes:
        placement_games: games a new entrant gets against a spread of the field.
        floor: an entrant below this fraction of the mean load is paired first.
        ceiling: an entrant at this multiple of the mean load is capped.
        window: information pairs are looked for among each entrant's next
            ``window`` rivals up the order of a posterior draw of the ratings.
        explore: the draw's spread, in posterior standard deviations (0: the
            fitted order itself).
        random_rivals: candidate rivals per entrant drawn at random from the field.

    Raises:
        ValueError: ``placement_games`` < 1, ``floor`` not in (0, 1],
            ``ceiling`` not above 1, ``window`` < 1, or ``explore`` or
            ``random_rivals`` negative.
    """

    placement_games: int = 5
    floor: float = 0.6
    ceiling: float = 1.5
    window: int = 2
    explore: float = 2.0
    random_rivals: int = 0

    def __post_init__(self) -> None:
        if self.placement_games < 1 or self.window < 1:
            raise ValueError(
                f"placement_games and window must be >= 1, "
                f"got {self.placement_games} and {self.window}"
            )
        if not self.explore >= 0.0 or self.random_rivals < 0:
            raise ValueError(
                f"explore and random_rivals must be >= 0, "
                f"got {self.explore} and {self.random_rivals}"
            )
        if not self.ceiling > 1.0:
            raise ValueError(f"ceiling must be above 1, got {self.ceiling}")
        if not 0.0 < self.floor <= 1.0:
            raise ValueError(f"floor must be in (0, 1], got {self.floor}")

    @property
    def factor(self) -> float:
        """The stated fairness factor: no active entrant's load exceeds this times another's."""
        return self.ceiling / self.floor


@dataclass(frozen=True, slots=True)
class Pairing:
    """One match to start: ``first`` against ``second``, and why.

    Attributes:
        first, second: the entrants' ids (never equal).
        reason: ``placement`` (a new entrant's spread game), ``floor`` (an entrant
            below the fairness floor) or ``information``.
    """

    first: str
    second: str
    reason: str


def field_from_ratings(
    ratings: Iterable[Rating],
    entrants: Iterable[str],
    *,
    last_played: Mapping[str, float] | None = None,
    inactive: Iterable[str] = (),
) -> list[LadderEntrant]:
    """The ladder's field from a rating fit: every id of ``entrants``, unrated ones as new.

    An entrant missing from ``ratings`` (no game yet) gets the mean rating, the
    prior's standard error and 0 games.
    """
    fitted = {r.bot: r for r in ratings}
    idle = last_played or {}
    out = set(inactive)
    field = []
    for name in entrants:
        r = fitted.get(name)
        rating, stderr, games = (
            (MEAN_RATING, PRIOR_SD, 0) if r is None else (r.rating, r.stderr, r.games)
        )
        when = idle.get(name, -math.inf)
        field.append(LadderEntrant(name, rating, stderr, games, when, name not in out))
    return field


def placement_quantiles(count: int) -> list[float]:
    """The quantiles a new entrant's first ``count`` games go to: 1/2, 1/4, 3/4, 1/8, ...

    Raises:
        ValueError: ``count`` < 0.
    """
    if count < 0:
        raise ValueError(f"count must be >= 0, got {count}")
    quantiles: list[float] = []
    depth = 1
    while len(quantiles) < count:
        step = 0.5**depth
        quantiles.extend(step * k for k in range(1, 2**depth, 2))
        depth += 1
    return quantiles[:count]


class Scorer:
    """The information score of candidate pairs (rule 3) for one field's ratings.

    Args:
        rating: the ratings in Elo.
        stderr: their standard errors in Elo (used when ``covariance`` is None).
        covariance: the ratings' covariance in Elo^2 (None: independent ratings).
    """

    #: Candidate pairs scored at once (bounds the memory of a large field).
    CHUNK = 1024

    def __init__(
        self, rating: FloatArray, stderr: FloatArray, covariance: FloatArray | None = None
    ) -> None:
        self.theta = rating / ELO_PER_NAT
        elo2 = np.diag(stderr**2) if covariance is None else covariance
        self.cov = np.asarray(elo2, dtype=np.float64) / ELO_PER_NAT**2
        variance = np.diag(self.cov)
        pair_variance = variance[:, None] + variance[None, :] - 2.0 * self.cov
        spread = np.sqrt(np.maximum(pair_variance, 1e-12))
        gap = np.abs(self.theta[:, None] - self.theta[None, :])
        z = gap / spread
        # d Phi(-g/s) / d(s^2): how fast a pair's chance of a wrong order falls with its variance.
        self.weight = np.exp(-0.5 * z * z) / math.sqrt(2.0 * math.pi) * gap / (2.0 * spread**3)
        self.pair_variance = pair_variance

    def scores(self, first: npt.ArrayLike, second: npt.ArrayLike) -> FloatArray:
        """Each pair's expected first-order fall of the rank uncertainty from one game."""
        a, b = np.asarray(first, dtype=np.int64), np.asarray(second, dtype=np.int64)
        out = np.empty(a.size)
        for start in range(0, a.size, self.CHUNK):
            part = slice(start, start + self.CHUNK)
            out[part] = self._chunk(a[part], b[part])
        return out

    def _chunk(self, a: IntArray, b: IntArray) -> FloatArray:
        cov = self.cov
        p = logistic(self.theta[a] - self.theta[b])
        information = p * (1.0 - p)
        across = cov[a, b]
        rows = cov[a] - cov[b]
        # Cov(r_i - r_k, r_i - r_j) and Cov(r_j - r_k, r_j - r_i) for every k.
        own = (cov[a, a] - across)[:, None] - rows
        other = (cov[b, b] - across)[:, None] + rows
        fall = np.sum(self.weight[a] * own**2, axis=1) + np.sum(self.weight[b] * other**2, axis=1)
        # One game's Kalman update divides by 1 + var(r_i - r_j) I.
        scores: FloatArray = fall * information / (1.0 + self.pair_variance[a, b] * information)
        return scores


def pair_scores(
    rating: FloatArray,
    stderr: FloatArray,
    first: npt.ArrayLike,
    second: npt.ArrayLike,
    covariance: FloatArray | None = None,
) -> FloatArray:
    """Each pair's expected fall of the rank uncertainty from one game (rule 3; :class:`Scorer`)."""
    return Scorer(rating, stderr, covariance).scores(first, second)


class _Batch:
    """The pairings of one call being built: counts, capacities, the chosen pairs."""

    def __init__(
        self, field: Sequence[LadderEntrant], count: int, policy: LadderPolicy, now: float | None
    ) -> None:
        self.field = field
        self.count = count
        self.games = [e.games for e in field]
        self.scale = _load_scales(field, now)
        self.placement = policy.placement_games
        self.played = [0] * len(field)
        self.capacity = max(1, math.ceil(2 * count / len(field)))
        self.mean = sum(self.load(i) for i in range(len(field))) / len(field)
        self.cap = policy.ceiling * max(self.mean, policy.placement_games)
        self.pairings: list[Pairing] = []
        self.met: set[tuple[int, int]] = set()

    def full(self) -> bool:
        return len(self.pairings) >= self.count

    def free(self, i: int, extra: int = 0) -> bool:
        return self.played[i] < self.capacity + extra

    def load(self, i: int) -> float:
        """Entrant ``i``'s games past placement (this batch's included) per unit of time."""
        return max(self.games[i] + self.played[i] - self.placement, 0) * self.scale[i]

    def capped(self, i: int) -> bool:
        return self.load(i) >= self.cap

    def add(self, i: int, j: int, reason: str) -> None:
        self.pairings.append(Pairing(self.field[i].id, self.field[j].id, reason))
        for k in (i, j):
            self.played[k] += 1
        self.met.add((min(i, j), max(i, j)))


def _load_scales(field: Sequence[LadderEntrant], now: float | None) -> list[float]:
    """Per entrant: the oldest entrant's time on the ladder over its own (1 without ``now``).

    An age counts as at least ``MIN_AGE_SHARE`` of the oldest, so a rate measured
    over a few minutes does not cap a late entrant after its first game.
    """
    if now is None:
        return [1.0] * len(field)
    ages = [now - e.joined for e in field]
    oldest = max(max(ages), 1e-9)
    return [oldest / max(age, MIN_AGE_SHARE * oldest) for age in ages]


def next_pairings(
    field: Sequence[LadderEntrant],
    count: int,
    *,
    seed: int,
    policy: LadderPolicy | None = None,
    now: float | None = None,
    covariance: npt.ArrayLike | None = None,
) -> list[Pairing]:
    """Pick up to ``count`` pairings among the active entrants of ``field`` (module docstring).

    ``now`` (same scale as ``joined``) makes fairness count games per unit of time
    since each entrant joined; without it, games. Fewer come back only when fewer
    than two entrants are active or every candidate is out of capacity.
    ``covariance`` (Elo^2, rows and columns in ``field``'s order, e.g. from
    :meth:`arena.compete.ratings.ResultMatrix.fit_with_covariance`) lets the
    scores see that neighbours' ratings move together; without it the ratings
    count as independent, with variances ``stderr^2``.
    Deterministic in its arguments.

    Raises:
        ValueError: ``count`` < 0, two entrants share an id, or ``covariance``
            is not square with a row per entrant.
    """
    if count < 0:
        raise ValueError(f"count must be >= 0, got {count}")
    ids = [e.id for e in field]
    if len(set(ids)) != len(ids):
        raise ValueError("entrant ids must be distinct")
    policy = policy or LadderPolicy()
    rng = random.Random(seed)
    chosen = [k for k, e in enumerate(field) if e.active]
    rng.shuffle(chosen)  # the seeded tie-break of every ordering below
    if len(chosen) < 2 or count == 0:
        return []
    active = [field[k] for k in chosen]
    rating, stderr = _arrays(active)
    sub = None if covariance is None else _select(covariance, len(field), chosen)
    batch = _Batch(active, count, policy, now)
    scorer = Scorer(rating, stderr, sub)
    _place(batch, policy)
    _floor(batch, policy, scorer)
    _inform(batch, policy, scorer, rng)
    _log.debug("ladder: %d pairings for %d active entrants", len(batch.pairings), len(active))
    return batch.pairings


def _place(batch: _Batch, policy: LadderPolicy) -> None:
    """Rule 1: each new entrant's remaining placement games, against the field's quantiles."""
    field = batch.field
    new = sorted(
        (i for i, e in enumerate(field) if e.games < policy.placement_games),
        key=lambda i: (field[i].games, field[i].last_played),
    )
    established = [i for i, e in enumerate(field) if e.games >= policy.placement_games]
    for i in new:
        pool = established or [k for k in range(len(field)) if k != i]
        ladder = sorted(pool, key=lambda k: field[k].rating)  # stable: the seeded order breaks ties
        wanted = placement_quantiles(policy.placement_games)[field[i].games :]
        for quantile in wanted:
            if batch.full() or batch.played[i] >= len(wanted):
                return
            j = _nearest_free(batch, ladder, quantile, i)
            if j is not None:
                batch.add(i, j, "placement")


def _nearest_free(batch: _Batch, ladder: list[int], quantile: float, i: int) -> int | None:
    """The entrant of ``ladder`` nearest the quantile that can still meet ``i`` in this batch."""
    centre = quantile * (len(ladder) - 1)
    nearest = [ladder[k] for k in sorted(range(len(ladder)), key=lambda k: abs(k - centre))]
    fit = [
        j for j in nearest if j != i and (min(i, j), max(i, j)) not in batch.met and batch.free(j)
    ]
    return next((j for j in fit if not batch.capped(j)), fit[0] if fit else None)


def _select(covariance: npt.ArrayLike, size: int, chosen: list[int]) -> FloatArray:
    """The rows and columns ``chosen`` of a ``size`` x ``size`` covariance matrix."""
    matrix = np.asarray(covariance, dtype=np.float64)
    if matrix.shape != (size, size):
        raise ValueError(f"covariance must be {size} x {size}, got shape {matrix.shape}")
    picked: FloatArray = matrix[np.ix_(chosen, chosen)]
    return picked


def _floor(batch: _Batch, policy: LadderPolicy, scorer: Scorer) -> None:
    """Rule 2: entrants below the floor play first, each against its best free rival."""
    field = batch.field
    due = sorted(
        (i for i in range(len(field)) if batch.load(i) < policy.floor * batch.mean),
        key=lambda i: (batch.load(i), field[i].last_played),
    )
    for i in due:
        if batch.full():
            return
        if not batch.free(i) or batch.played[i] > 0:
            continue
        free = [j for j in range(len(field)) if j != i and batch.free(j)]
        uncapped = [j for j in free if not batch.capped(j)]
        others = np.array(uncapped or free, dtype=np.int64)
        if others.size == 0:
            continue
        scores = scorer.scores(np.full(others.size, i), others)
        batch.add(i, int(others[int(np.argmax(scores))]), "floor")


def _arrays(field: Sequence[LadderEntrant]) -> tuple[FloatArray, FloatArray]:
    rating = np.array([e.rating for e in field], dtype=np.float64)
    stderr = np.array([e.stderr for e in field], dtype=np.float64)
    return rating, stderr


def _sample(scorer: Scorer, scale: float, rng: random.Random) -> FloatArray:
    """A draw of the strengths from the fit's posterior, its spread times ``scale``."""
    draws = np.random.default_rng(rng.getrandbits(64)).standard_normal(scorer.theta.size)
    cov = scorer.cov
    jitter = 1e-9 * max(float(np.mean(np.diag(cov))), 1e-12)
    try:
        root = np.linalg.cholesky(cov + jitter * np.eye(cov.shape[0]))
    except np.linalg.LinAlgError:
        root = np.diag(np.sqrt(np.maximum(np.diag(cov), 0.0)))
    sample: FloatArray = scorer.theta + scale * (root @ draws)
    return sample


def _candidates(
    rating: FloatArray, window: int, rng: random.Random, extra: int
) -> tuple[IntArray, IntArray]:
    """Each entrant with its next ``window`` entrants up the order of ``rating``, and ``extra``
    more drawn at random (seeded) from the whole field."""
    size = rating.size
    order = np.argsort(rating, kind="stable")
    first, second = [], []
    for offset in range(1, min(window, size - 1) + 1):
        first.append(order[:-offset])
        second.append(order[offset:])
    rolls = np.random.default_rng(rng.getrandbits(64))
    for _ in range(extra if size - 1 > window else 0):
        shift = rolls.integers(1, size, size)
        first.append(np.arange(size))
        second.append((np.arange(size) + shift) % size)
    return np.concatenate(first), np.concatenate(second)


def _inform(batch: _Batch, policy: LadderPolicy, scorer: Scorer, rng: random.Random) -> None:
    """Rules 3 and 4: the best-scoring pairs of uncapped entrants with capacity left.

    When the candidates run out before the batch is full, the entrants still open
    get candidates among themselves (by the same draw's order); when fewer than two
    are open, the batch's capacity grows by one game an entrant.
    """
    order_by = _sample(scorer, policy.explore, rng) if policy.explore > 0.0 else scorer.theta
    first, second = _candidates(order_by, policy.window, rng, policy.random_rivals)
    while True:
        _take(batch, scorer, first, second)
        if batch.full():
            return
        remaining = _open(batch)
        if len(remaining) < 2:
            batch.capacity += 1
            remaining = _open(batch)
            if len(remaining) < 2:
                return  # everyone left is capped
        pool = np.array(remaining, dtype=np.int64)
        first, second = _candidates(order_by[pool], policy.window, rng, policy.random_rivals)
        first, second = pool[first], pool[second]


def _take(batch: _Batch, scorer: Scorer, first: IntArray, second: IntArray) -> None:
    """Add candidate pairs, best score first, while both sides are open and the batch has room."""
    for k in np.argsort(-scorer.scores(first, second), kind="stable"):
        if batch.full():
            return
        i, j = int(first[k]), int(second[k])
        if batch.free(i) and batch.free(j) and not (batch.capped(i) or batch.capped(j)):
            batch.add(i, j, "information")


def _open(batch: _Batch) -> list[int]:
    """The entrants that may still get an information pair: uncapped, with capacity left."""
    return [i for i in range(len(batch.field)) if batch.free(i) and not batch.capped(i)]
