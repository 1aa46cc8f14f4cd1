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
2. **The floor.** An active entrant whose *load* falls below ``floor`` times the
   mean load of the active entrants is *due*: it is paired next (fewest games first,
   then longest idle), with its most informative opponent. No entrant starves.
3. **Information.** The remaining matches go to the pairs that tell the most
   about the ranking. A pair's score is

       P(their order is wrong) x (expected reduction of var(r_i - r_j) by one game)
       = Phi(-|r_i - r_j| / s) x (s^2 - 1 / (1/s^2 + I)),  s^2 = se_i^2 + se_j^2,

   with ``I = p (1 - p)``, the Fisher information of one game on the difference
   (in nats; ``p`` the predicted score). The first factor is the chance that a
   further game can still change the ranking between them (close ratings); the
   second is what one game would teach about their difference (wide
   intervals, opponents of similar strength, whose games are least predictable).
   It is a one-step, pairwise proxy for the expected reduction of rank
   uncertainty: cheap (numpy over each entrant's nearest ``window`` rivals by
   rating; pairs further apart have a negligible first factor), and it needs
   no covariance, which a service may not have stored. Pairs are taken
   greedily, best score first.
4. **Fairness.** An entrant's *load* is its games per unit of time since it
   joined, scaled to the oldest active entrant's time on the ladder (without
   ``now``: its games). An entrant whose load reaches ``factor`` times
   ``max(least load among the active entrants past placement, placement_games)``
   is capped: it is not picked for information pairs until the others catch up,
   so the active entrants' games per hour stay within ``factor`` of each other
   (plus the games of one call) once placement is over, and a late entrant is
   neither starved nor allowed to starve the others. Within one call an entrant
   plays at most ``ceil(2K / active)`` matches (its placement games excepted).

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
from scipy import special

from arena.compete.ratings import ELO_PER_NAT, MEAN_RATING, PRIOR_SD, Rating

__all__ = [
    "LadderEntrant",
    "LadderPolicy",
    "Pairing",
    "field_from_ratings",
    "next_pairings",
    "pair_scores",
    "placement_quantiles",
]

_log = logging.getLogger(__name__)

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
        factor: the most games an active entrant plays per game of the one with fewest
            (after placement).
        floor: an entrant below this fraction of the mean games is paired first.
        window: information pairs are looked for among each entrant's nearest
            ``window`` rivals by rating.

    Raises:
        ValueError: ``placement_games`` < 1, ``factor`` <= 1, ``floor`` not in
            (0, 1], or ``window`` < 1.
    """

    placement_games: int = 5
    factor: float = 2.0
    floor: float = 0.5
    window: int = 16

    def __post_init__(self) -> None:
        if self.placement_games < 1 or self.window < 1:
            raise ValueError(
                f"placement_games and window must be >= 1, "
                f"got {self.placement_games} and {self.window}"
            )
        if not self.factor > 1.0:
            raise ValueError(f"factor must be above 1, got {self.factor}")
        if not 0.0 < self.floor <= 1.0:
            raise ValueError(f"floor must be in (0, 1], got {self.floor}")


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


def pair_scores(
    rating: FloatArray, stderr: FloatArray, first: npt.ArrayLike, second: npt.ArrayLike
) -> FloatArray:
    """Each pair's information score (module docstring, rule 3), from Elo ratings and errors."""
    a, b = np.asarray(first, dtype=np.int64), np.asarray(second, dtype=np.int64)
    gap = np.abs(rating[a] - rating[b]) / ELO_PER_NAT
    variance = (stderr[a] ** 2 + stderr[b] ** 2) / ELO_PER_NAT**2
    variance = np.maximum(variance, 1e-12)
    wrong = special.ndtr(-gap / np.sqrt(variance))
    p = special.expit(gap)
    information = p * (1.0 - p)
    reduction = variance - 1.0 / (1.0 / variance + information)
    scores: FloatArray = wrong * reduction
    return scores


class _Batch:
    """The pairings of one call being built: counts, capacities, the chosen pairs."""

    def __init__(
        self, field: Sequence[LadderEntrant], count: int, policy: LadderPolicy, now: float | None
    ) -> None:
        self.field = field
        self.count = count
        self.games = [e.games for e in field]
        self.scale = _load_scales(field, now)
        self.played = [0] * len(field)
        self.capacity = max(1, math.ceil(2 * count / len(field)))
        placed = [self.load(i) for i, e in enumerate(field) if e.games >= policy.placement_games]
        self.cap = policy.factor * max(min(placed, default=0.0), policy.placement_games)
        self.pairings: list[Pairing] = []
        self.met: set[tuple[int, int]] = set()

    def full(self) -> bool:
        return len(self.pairings) >= self.count

    def free(self, i: int, extra: int = 0) -> bool:
        return self.played[i] < self.capacity + extra

    def load(self, i: int) -> float:
        """Entrant ``i``'s games (this batch's included) per unit of time, as games."""
        return (self.games[i] + self.played[i]) * self.scale[i]

    def capped(self, i: int) -> bool:
        return self.load(i) >= self.cap

    def add(self, i: int, j: int, reason: str) -> None:
        self.pairings.append(Pairing(self.field[i].id, self.field[j].id, reason))
        for k in (i, j):
            self.played[k] += 1
        self.met.add((min(i, j), max(i, j)))


def _load_scales(field: Sequence[LadderEntrant], now: float | None) -> list[float]:
    """Per entrant: the oldest entrant's time on the ladder over its own (1 without ``now``)."""
    if now is None:
        return [1.0] * len(field)
    ages = [max(now - e.joined, 1e-9) for e in field]
    oldest = max(ages)
    return [oldest / age for age in ages]


def next_pairings(
    field: Sequence[LadderEntrant],
    count: int,
    *,
    seed: int,
    policy: LadderPolicy | None = None,
    now: float | None = None,
) -> list[Pairing]:
    """Pick up to ``count`` pairings among the active entrants of ``field`` (module docstring).

    ``now`` (same scale as ``joined``) makes fairness count games per unit of time
    since each entrant joined; without it, games. Fewer come back only when fewer
    than two entrants are active or every candidate is out of capacity.
    Deterministic in its arguments.

    Raises:
        ValueError: ``count`` < 0 or two entrants share an id.
    """
    if count < 0:
        raise ValueError(f"count must be >= 0, got {count}")
    ids = [e.id for e in field]
    if len(set(ids)) != len(ids):
        raise ValueError("entrant ids must be distinct")
    policy = policy or LadderPolicy()
    rng = random.Random(seed)
    active = [e for e in field if e.active]
    rng.shuffle(active)  # the seeded tie-break of every ordering below
    if len(active) < 2 or count == 0:
        return []
    batch = _Batch(active, count, policy, now)
    _place(batch, policy)
    _floor(batch, policy)
    _inform(batch, policy)
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
    for k in sorted(range(len(ladder)), key=lambda k: abs(k - centre)):
        j = ladder[k]
        if j != i and (min(i, j), max(i, j)) not in batch.met and batch.free(j):
            return j
    return None


def _floor(batch: _Batch, policy: LadderPolicy) -> None:
    """Rule 2: entrants below the floor play first, each against its best free rival."""
    field = batch.field
    mean = sum(batch.load(i) for i in range(len(field))) / len(field)
    due = sorted(
        (i for i in range(len(field)) if batch.load(i) < policy.floor * mean),
        key=lambda i: (batch.load(i), field[i].last_played),
    )
    rating, stderr = _arrays(field)
    for i in due:
        if batch.full():
            return
        if not batch.free(i) or batch.played[i] > 0:
            continue
        others = np.array(
            [j for j in range(len(field)) if j != i and batch.free(j)], dtype=np.int64
        )
        if others.size == 0:
            continue
        scores = pair_scores(rating, stderr, np.full(others.size, i), others)
        batch.add(i, int(others[int(np.argmax(scores))]), "floor")


def _arrays(field: Sequence[LadderEntrant]) -> tuple[FloatArray, FloatArray]:
    rating = np.array([e.rating for e in field], dtype=np.float64)
    stderr = np.array([e.stderr for e in field], dtype=np.float64)
    return rating, stderr


def _candidates(rating: FloatArray, window: int) -> tuple[IntArray, IntArray]:
    """Each entrant paired with its next ``window`` entrants up the rating order (a stable sort)."""
    order = np.argsort(rating, kind="stable")
    first, second = [], []
    for offset in range(1, min(window, order.size - 1) + 1):
        first.append(order[:-offset])
        second.append(order[offset:])
    return np.concatenate(first), np.concatenate(second)


def _inform(batch: _Batch, policy: LadderPolicy) -> None:
    """Rules 3 and 4: the best-scoring pairs of uncapped entrants with capacity left."""
    rating, stderr = _arrays(batch.field)
    first, second = _candidates(rating, policy.window)
    best = np.argsort(-pair_scores(rating, stderr, first, second), kind="stable")
    while not batch.full():
        before = len(batch.pairings)
        for k in best:
            i, j = int(first[k]), int(second[k])
            if batch.full():
                return
            if batch.free(i) and batch.free(j) and not (batch.capped(i) or batch.capped(j)):
                batch.add(i, j, "information")
        if len(batch.pairings) == before:
            return  # everyone left is capped or out of capacity
        batch.capacity += 1 if _all_busy(batch) else 0


def _all_busy(batch: _Batch) -> bool:
    """Whether no two uncapped entrants have capacity left (the batch needs a wider one)."""
    return sum(1 for i in range(len(batch.field)) if batch.free(i) and not batch.capped(i)) < 2
