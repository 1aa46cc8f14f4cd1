"""A competition's final: play until adjacent ranks are separated, or declare ties at a cap.

The final takes the ladder's top entrants and plays them on duplicate deals,
round by round; :func:`assess_final` says, after each round, where the final
stands and what the next round plays. The rule:

1. **First round.** Before any game every pair of finalists plays (a round
   robin): every rating is then tied to every other.
2. **Separation.** The results are fitted (:meth:`ResultMatrix.fit_with_covariance`,
   Bradley-Terry on the Elo scale, the leaderboard's fit) and the finalists
   ordered by rating. Neighbours ``i`` and ``i + 1`` of that order are
   *separated* when the one-sided z of their rating difference,
   ``(r_i - r_{i+1}) / sqrt(Var(r_i - r_{i+1}))`` with the variance from the
   fit's covariance (their ratings move together), reaches the confidence's
   normal quantile (1.645 at 0.95).
3. **Later rounds** play only the neighbours not yet separated, each pair
   ``deals_per_round`` duplicate deals (the caller plays them), least separated
   first; with ``round_deals`` the pairs repeat in that order until the round
   has that many deals (a pair listed twice plays twice); with
   ``bridges``, also each entrant of an unseparated run against the entrant
   two places down when both its neighbour pairs are unseparated (a game that
   ties a run of three together). The order is refitted after every round, so
   a pair separated once may be replayed if the order around it changes.
4. **The end.** The final is done when every neighbour pair is separated, or
   when ``games`` reaches ``max_games``: then unseparated neighbours share a
   place (a tie, declared as one). Places count like sports tables: two tied
   for 2nd are both 2nd, the next is 4th.

The confidence is per neighbour pair and tested after every round (no
correction for the repeated looks). ``benchmarks/final.py`` measured, for 8
finalists (median of 10 runs, 2 games a deal): 57 Elo apart, 685 games; 24.5
apart, 3,300; 8.2 apart (the top 8 of 50 entrants over 400 Elo), 20,000, so at
the default cap of 2,000 games such a final ends with about 5 of its 7
neighbour pairs tied. That is 0.26-0.33 of the games a round robin needs for
the same separation. Bridges did not help (8.2 apart: 31,000); ``round_deals=8``
took a quarter to a half of the rounds for 0.86-1.13 of the games. Of the
declared orders 5 in 70 were wrong at 8.2 Elo apart (9 in 70 with 8 deals a
round: the repeated looks), 1 in 70 at 24.5 and at 57.

    >>> state = assess_final(["a", "b", "c"], None, 0, FinalPolicy())
    >>> state.next_pairs, state.done
    ([('a', 'b'), ('a', 'c'), ('b', 'c')], False)
"""

from __future__ import annotations

import itertools
import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np
import numpy.typing as npt

from arena.compete.ratings import MEAN_RATING, PRIOR_SD, ResultMatrix

__all__ = ["FinalPolicy", "FinalStanding", "FinalState", "assess_final", "separation_z"]

_log = logging.getLogger(__name__)

_Z95 = NormalDist().inv_cdf(0.975)


@dataclass(frozen=True, slots=True)
class FinalPolicy:
    """The final's stated parameters (module docstring: what each does).

    Attributes:
        confidence: the one-sided confidence at which neighbours count as separated.
        max_games: the cap; at or past it the final ends with ties declared.
        deals_per_round: duplicate deals each pair of a round plays.
        bridges: whether rounds also pair entrants two places apart inside an
            unseparated run (rule 3).
        round_deals: the fewest deals a later round plays in all (e.g. the
            workers' processes, so that none idles while one pair is left):
            the unseparated pairs are repeated, least separated first, until
            they reach it (0: each pair once).

    Raises:
        ValueError: ``confidence`` not in (0.5, 1), ``max_games`` < 0 or
            ``deals_per_round`` < 1, or ``round_deals`` < 0.
    """

    confidence: float = 0.95
    max_games: int = 2000
    deals_per_round: int = 1
    bridges: bool = False
    round_deals: int = 0

    def __post_init__(self) -> None:
        if not 0.5 < self.confidence < 1.0:
            raise ValueError(f"confidence must be in (0.5, 1), got {self.confidence}")
        if self.max_games < 0:
            raise ValueError(f"max_games must be >= 0, got {self.max_games}")
        if self.deals_per_round < 1:
            raise ValueError(f"deals_per_round must be >= 1, got {self.deals_per_round}")
        if self.round_deals < 0:
            raise ValueError(f"round_deals must be >= 0, got {self.round_deals}")

    @property
    def quantile(self) -> float:
        """The z a neighbour pair's difference must reach: the confidence's normal quantile."""
        return NormalDist().inv_cdf(self.confidence)


@dataclass(frozen=True, slots=True)
class FinalStanding:
    """One finalist's line of the final table, best first.

    Attributes:
        id: the finalist's identity (as given to :func:`assess_final`).
        rating: its fitted rating on the Elo scale (the mean rating before any game).
        low, high: the rating's 95% interval.
        place: 1 = best; tied finalists share a place (the next place skips).
        games: games it played in the final.
        separated_from_next: whether it is separated from the finalist below it
            at the policy's confidence (False for the last one).
        z: the one-sided z of its rating's lead over the next finalist (0 for the last).
    """

    id: str
    rating: float
    low: float
    high: float
    place: int
    games: int
    separated_from_next: bool
    z: float = 0.0


@dataclass(frozen=True, slots=True)
class FinalState:
    """Where the final stands: the table, whether it is over, the next round's pairs.

    Attributes:
        standings: the finalists, best first.
        done: every neighbour pair is separated, or the cap is reached.
        next_pairs: the next round's pairs (empty when done); each entry plays
            ``policy.deals_per_round`` duplicate deals (a pair may be listed
            more than once: ``policy.round_deals``).
    """

    standings: list[FinalStanding]
    done: bool
    next_pairs: list[tuple[str, str]]

    @property
    def ties(self) -> int:
        """Neighbour pairs not separated (declared ties once the final is done)."""
        return sum(1 for s in self.standings[:-1] if not s.separated_from_next)


def separation_z(rating: Sequence[float], covariance: npt.NDArray[np.float64]) -> list[float]:
    """The one-sided z of each neighbour's lead, for ratings given best first (Elo, Elo^2).

    ``z[k] = (r_k - r_{k+1}) / sqrt(Var(r_k - r_{k+1}))``; a difference with no
    variance counts as infinitely separated if positive, else 0.
    """
    out = []
    for k in range(len(rating) - 1):
        variance = covariance[k, k] + covariance[k + 1, k + 1] - 2.0 * covariance[k, k + 1]
        lead = rating[k] - rating[k + 1]
        if variance > 0.0:
            out.append(lead / math.sqrt(variance))
        else:
            out.append(math.inf if lead > 0.0 else 0.0)
    return out


def assess_final(
    finalists: Sequence[str],
    matrix: ResultMatrix | None,
    games: int,
    policy: FinalPolicy | None = None,
) -> FinalState:
    """The final's table, whether it is done, and the next round's pairs (module docstring).

    ``finalists`` in seeding order (the ladder's, best first: it breaks equal
    ratings); ``matrix`` holds the final's results so far (None or empty: no
    game yet; bots in it that are not finalists are fitted but not placed);
    ``games`` is the final's games so far, counted against ``max_games``.

    Raises:
        ValueError: finalists are not distinct or one is empty, or ``games`` < 0.
    """
    policy = policy or FinalPolicy()
    names = list(finalists)
    if len(set(names)) != len(names) or not all(names):
        raise ValueError(f"finalists must be distinct non-empty ids, got {names!r}")
    if games < 0:
        raise ValueError(f"games must be >= 0, got {games}")
    played = matrix is not None and len(matrix.bots) >= 2 and int(matrix.games.sum()) > 0
    if len(names) < 2:
        table = [_unplayed(name, 1) for name in names]
        return FinalState(table, True, [])
    if matrix is None or not played:
        table = [_unplayed(name, 1) for name in names]
        if games >= policy.max_games:
            return FinalState(table, True, [])
        return FinalState(table, False, list(itertools.combinations(names, 2)))
    return _assess(names, matrix, games, policy)


def _unplayed(name: str, place: int) -> FinalStanding:
    return FinalStanding(
        name,
        MEAN_RATING,
        MEAN_RATING - _Z95 * PRIOR_SD,
        MEAN_RATING + _Z95 * PRIOR_SD,
        place,
        0,
        False,
    )


def _assess(names: list[str], matrix: ResultMatrix, games: int, policy: FinalPolicy) -> FinalState:
    """Rules 2-4 on a matrix with games."""
    ratings, elo2 = matrix.fit_with_covariance()
    fitted = {r.bot: r for r in ratings}
    code = {bot: k for k, bot in enumerate(matrix.bots)}
    seed = {name: k for k, name in enumerate(names)}
    rating = {n: fitted[n].rating if n in fitted else MEAN_RATING for n in names}
    order = sorted(names, key=lambda n: (-rating[n], seed[n]))
    size = len(order)
    covariance = np.zeros((size, size))
    for a, first in enumerate(order):
        for b, second in enumerate(order):
            if first in code and second in code:
                covariance[a, b] = elo2[code[first], code[second]]
            elif a == b:
                covariance[a, b] = PRIOR_SD**2
    z = separation_z([rating[n] for n in order], covariance)
    separated = [value >= policy.quantile for value in z]
    done = all(separated) or games >= policy.max_games
    table = []
    place = 1
    for k, name in enumerate(order):
        if k > 0 and separated[k - 1]:
            place = k + 1
        r = fitted.get(name)
        blank = _unplayed(name, 0)
        low, high = (r.low, r.high) if r else (blank.low, blank.high)
        table.append(
            FinalStanding(
                name,
                rating[name],
                low,
                high,
                place,
                r.games if r else 0,
                separated[k] if k < size - 1 else False,
                z[k] if k < size - 1 else 0.0,
            )
        )
    pairs = [] if done else _round(order, separated, z, policy)
    _log.debug("final: %d of %d neighbour pairs separated", sum(separated), size - 1)
    return FinalState(table, done, pairs)


def _round(
    order: list[str], separated: list[bool], z: list[float], policy: FinalPolicy
) -> list[tuple[str, str]]:
    """Rule 3: the unseparated neighbours (and, with bridges, the runs' second neighbours),
    repeated, least separated first, until the round has ``round_deals`` deals."""
    open_pairs = sorted((k for k, ok in enumerate(separated) if not ok), key=lambda k: z[k])
    pairs = [(order[k], order[k + 1]) for k in open_pairs]
    if policy.bridges:
        pairs += [
            (order[k], order[k + 2])
            for k in range(len(separated) - 1)
            if not separated[k] and not separated[k + 1]
        ]
    entries = -(-policy.round_deals // policy.deals_per_round)  # ceiling
    extra = [pairs[n % len(pairs)] for n in range(max(0, entries - len(pairs)))] if pairs else []
    return pairs + extra
