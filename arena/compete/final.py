"""A competition's final: play until adjacent ranks are separated, or declare ties at a cap.

The final takes the ladder's top entrants and plays them on duplicate deals,
round by round; :func:`assess_final` says, after each round, where the final
stands and what the next round plays. The rule:

1. **First round.** Before any game every pair of finalists plays (a round
   robin): every rating is then tied to every other.
2. **Separation.** The results are fitted (:meth:`ResultMatrix.fit_with_covariance`,
   Bradley-Terry on the Elo scale, the leaderboard's fit) and the finalists
   ordered by rating. Neighbours ``i`` and ``i + 1`` of that order are
   *separated* when the z of their rating difference,
   ``(r_i - r_{i+1}) / sqrt(Var(r_i - r_{i+1}))`` with the variance from the
   fit's covariance (their ratings move together), reaches the policy's
   boundary (:meth:`FinalPolicy.boundary`).
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

**The repeated looks.** The rule looks after every round, and a z that wanders
like a random walk crosses a fixed level sooner or later: with the one-look
quantile (1.645 at 0.95) two equal finalists were declared separated in 74% of
simulated finals of 2,000 games looked at after every deal. The default
boundary (``correction="mixture"``) is anytime-valid: a pair is separated when
the one-sided normal-mixture martingale of its lead (a half-normal prior of
precision ``rho`` on the true difference) reaches ``1 / (1 - confidence)``, so
by Ville's inequality a wrong order is declared with probability at most
``1 - confidence``, however many rounds are looked at and however large they
are (``round_deals`` may fill them freely). In z: ``sqrt((1 + rho / I)
(log(1 + I / rho) + 2 log(1 / (2 alpha)) - 2 log Phi(.)))`` for the pair's
information ``I = 1 / Var(r_i - r_{i+1})``; ``rho`` is the information of
``max_games / (6 finalists)`` even games, which puts the boundary's lowest
point (2.77 at 0.95) near the information a neighbour pair of the typical
field has when the cap nears, and keeps it high with little information
(6.3 with the information of 40 even games, 8 finalists, a cap of 14,000: an
early result must be very lopsided). Measured on equal finalists (2, looked at after every deal):
separated, in either order, in 4.1% (cap 1,000), 4.6% (2,000) and 4.9%
(12,000) of 4,000, 4,000 and 2,500 finals. ``"pocock"`` is one constant for
the whole final, ``1 - Phi(c) + L c phi(c) / 2 = 1 - confidence`` (Pickands'
approximation for the z as an Ornstein-Uhlenbeck process in log information,
``L = log(2 max_games / finalists)``; 2.94 for 8 finalists and a cap of 2,000,
3.05 at 16,000), separating equal finalists in 4.5-5.0% of the same finals;
``"obf"`` an O'Brien-Fleming-like boundary in the cap's share of the games
(10-12%: it holds the one-sided rate only); ``"none"`` the one-look quantile.
**The whole table, and reruns.** The boundary above holds one neighbour pair at
``alpha``; a top 8 has seven, and a reader takes the table as one claim. So the
pairs share the final's error by Holm's step-down (``family="holm"``,
:func:`separations`): at each look the pairs whose lead reaches the boundary at
``alpha / 7`` are separated, then the rest are judged again at ``alpha / (pairs
left)``, and so on. Each pair's boundary is anytime-valid (a test martingale),
so its ``1 / M`` is a p-value valid at any look, and Holm's union bound makes the
table's separations right *together* with probability at least ``1 - alpha``:
what the confidence covers is every "separated" boundary of the published table
at once. A competition's finals share ``1 - confidence`` too: its ``r``-th final
(1 the first, 2 its first rerun, ...) spends ``2^-r`` of it
(:func:`rerun_share`, ``FinalPolicy.share``), so every table a competition ever
publishes, reruns included, is right together with probability at least the
stated confidence, and a rerun contradicts a separated pair of an earlier table
(the two declare it in opposite orders) with at most that probability.
``family="none"`` is the former per-pair rule.

``benchmarks/final.py`` (10 simulated finals a field, 8 finalists, 2 games a
deal, the default cap of 14,000, 8 deals a round), with the whole table held
(Holm, a first final's share 0.5): 8.2 Elo apart, 14,000 (all capped, 6.9 of 7
pairs tied); 24.5 apart, 14,000 median (6 of 10 capped, 2.1 ties on average);
57 apart, 3,890 (none capped); no declared order wrong (0 of 1, 49, 70). A
final and its rerun (``--reruns 60``, 16 deals a round): no rerun separated a
pair of the first table in the opposite order in 60 competitions of each field
(0 of 5, 233 and 420 separated pairs; 8 equal finalists: none separated), nor
placed one the other way round; per pair (``family="none"``, each final the whole
error) 5 of 60 first tables of 8 equal finalists (8%) held a wrong separation.
Per neighbour pair only (``family="none"``, whole share), before issue 31:
8.2 Elo apart, 14,000 (all capped, 6.3 of 7 neighbour pairs tied); 24.5 apart, 10,550 (none capped;
10,360 with 8 deals a round, none capped; at a cap of 12,000, 4 in 10 of
those were); 57 apart, 2,650 (2,480 with 8 deals a round). No declared order
was wrong (0 of 7, 70, 70). Before (one-look quantile, cap 2,000): 3 of 17
declared orders wrong at 8.2 apart (8 of 17 with 8 deals a round), and 5.3,
3.4 and 0 ties. Uncorrected and uncapped the same fields took 20,000, 3,300 and
685 games: the honest boundary costs 3 to 4 times the games. At a cap of
16,000 the constant boundary took 12,200 and 2,190 (24.5 and 57 apart) where
the mixture took 10,480 and 2,760.

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

from arena.compete.ratings import ELO_PER_NAT, MEAN_RATING, PRIOR_SD, ResultMatrix

__all__ = [
    "FinalPolicy",
    "FinalStanding",
    "FinalState",
    "assess_final",
    "rerun_share",
    "separation_z",
    "separations",
]

_log = logging.getLogger(__name__)

_Z95 = NormalDist().inv_cdf(0.975)

#: The corrections for the repeated looks (:meth:`FinalPolicy.boundary`).
CORRECTIONS = ("none", "pocock", "obf", "mixture")
#: How the neighbour pairs share the final's error (:func:`separations`).
FAMILIES = ("holm", "bonferroni", "none")


def _crossing_level(alpha: float, span: float) -> float:
    """The level ``c`` a standardised Brownian z (an Ornstein-Uhlenbeck process in log
    information) crosses with probability ``alpha`` over ``span`` nats of log information:
    ``1 - Phi(c) + span * c * phi(c) / 2 = alpha`` (Pickands' approximation), by bisection."""
    unit = NormalDist()
    low, high = unit.inv_cdf(1.0 - alpha), 10.0
    for _ in range(60):
        level = (low + high) / 2.0
        if 1.0 - unit.cdf(level) + span * level * unit.pdf(level) / 2.0 > alpha:
            low = level
        else:
            high = level
    return high


@dataclass(frozen=True, slots=True)
class FinalPolicy:
    """The final's stated parameters (module docstring: what each does).

    Attributes:
        confidence: the confidence at which neighbours count as separated, over
            every look up to the cap (``correction``).
        max_games: the cap; at or past it the final ends with ties declared.
        deals_per_round: duplicate deals each pair of a round plays.
        bridges: whether rounds also pair entrants two places apart inside an
            unseparated run (rule 3).
        round_deals: the fewest deals a later round plays in all (e.g. the
            workers' processes, so that none idles while one pair is left):
            the unseparated pairs are repeated, least separated first, until
            they reach it (0: each pair once).
        correction: how the boundary pays for looking after every round
            (:meth:`boundary`): ``"mixture"`` (the default: an anytime-valid
            normal-mixture bound on the pair's information), ``"pocock"`` (one
            constant z for the whole final, from the information the cap
            allows), ``"obf"`` (an O'Brien-Fleming-like boundary in the cap's
            share of games) or ``"none"`` (the one-look quantile at every look:
            the stated confidence does not hold).
        family: how the neighbour pairs share the error (:func:`separations`):
            ``"holm"`` (the default: Holm's step-down over the ``k - 1`` pairs, so the
            whole table's separations hold together at ``confidence``),
            ``"bonferroni"`` (each pair at ``(1 - confidence) / (k - 1)``) or ``"none"``
            (each pair at ``1 - confidence``: the confidence is per pair only).
        share: the share of ``1 - confidence`` this final may spend (a competition's
            ``r``-th final spends :func:`rerun_share` ``= 2^-r`` of it, so all its finals,
            reruns included, are right together at ``confidence``).

    Raises:
        ValueError: ``confidence`` not in (0.5, 1), ``max_games`` < 0 or
            ``deals_per_round`` < 1, ``round_deals`` < 0, ``correction`` or ``family``
            unknown, or ``share`` not in (0, 1].
    """

    confidence: float = 0.95
    max_games: int = 14000
    deals_per_round: int = 1
    bridges: bool = False
    round_deals: int = 0
    correction: str = "mixture"
    family: str = "holm"
    share: float = 1.0

    def __post_init__(self) -> None:
        if self.correction not in CORRECTIONS:
            raise ValueError(f"correction must be one of {CORRECTIONS}, got {self.correction!r}")
        if self.family not in FAMILIES:
            raise ValueError(f"family must be one of {FAMILIES}, got {self.family!r}")
        if not 0.0 < self.share <= 1.0:
            raise ValueError(f"share must be in (0, 1], got {self.share}")
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
        """The confidence's normal quantile (the z of one look: 1.645 at 0.95)."""
        return NormalDist().inv_cdf(self.confidence)

    @property
    def alpha(self) -> float:
        """The error this final may spend over its whole table: ``(1 - confidence) * share``."""
        return (1.0 - self.confidence) * self.share

    def boundary(
        self,
        finalists: int,
        games: int,
        information: float = math.inf,
        alpha: float | None = None,
    ) -> float:
        """The z a neighbour pair's lead must reach after ``games`` games of a final of
        ``finalists``, with ``information`` (Elo^-2: ``1 / Var`` of the pair's rating
        difference; only the mixture uses it), under the policy's correction, for an error
        of ``alpha`` on this pair (default: 1 - confidence, one pair alone)."""
        alpha = 1.0 - self.confidence if alpha is None else alpha
        if self.correction == "none":
            return NormalDist().inv_cdf(1.0 - alpha)
        if self.correction == "obf":
            share = min(1.0, max(games, 1) / max(self.max_games, 1))
            return NormalDist().inv_cdf(1.0 - alpha / 2.0) / math.sqrt(share)
        if self.correction == "mixture":
            rho = _GAME_INFORMATION * max(self.max_games, 1) / (6.0 * max(finalists, 2))
            return _mixture_level(alpha, information, rho)
        span = math.log(max(1.0, 2.0 * self.max_games / max(finalists, 2)))
        return _crossing_level(alpha, span)


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
    separated = separations(policy, size, games, z, _informations(covariance))
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


def _informations(covariance: npt.NDArray[np.float64]) -> list[float]:
    """Each neighbour pair's information ``1 / Var(r_k - r_{k+1})`` (best first)."""
    out = []
    for k in range(covariance.shape[0] - 1):
        variance = covariance[k, k] + covariance[k + 1, k + 1] - 2.0 * covariance[k, k + 1]
        out.append(1.0 / variance if variance > 0.0 else math.inf)
    return out


def separations(
    policy: FinalPolicy,
    finalists: int,
    games: int,
    z: Sequence[float],
    information: Sequence[float],
) -> list[bool]:
    """Which neighbour pairs (best first: their ``z`` and ``information``) are separated,
    the policy's error ``alpha`` shared among the ``m = finalists - 1`` pairs by its
    ``family``: ``"holm"`` separates, step by step, every pair whose lead reaches the
    boundary at ``alpha / (pairs left)`` (Holm's step-down: the separated pairs leave, the
    rest are judged again at the larger level), so that with probability at least
    ``1 - alpha`` no separated pair of the table is in the wrong order, at any look;
    ``"bonferroni"`` judges each at ``alpha / m``; ``"none"`` each at ``alpha``.
    """
    pairs = len(z)
    if policy.family == "none":
        return [
            value >= policy.boundary(finalists, games, info, policy.alpha)
            for value, info in zip(z, information, strict=True)
        ]
    separated = [False] * pairs
    while True:
        left = pairs - sum(separated) if policy.family == "holm" else pairs
        if left == 0:
            return separated
        alpha = policy.alpha / left
        newly = [
            k
            for k in range(pairs)
            if not separated[k] and z[k] >= policy.boundary(finalists, games, information[k], alpha)
        ]
        for k in newly:
            separated[k] = True
        if not newly or policy.family == "bonferroni":
            return separated


def rerun_share(number: int) -> float:
    """The share of ``1 - confidence`` a competition's ``number``-th final spends
    (1: the first, 2: its first rerun, ...): ``2^-number``, so that its finals, however
    many reruns, together spend at most ``1 - confidence``.

    Raises:
        ValueError: ``number`` < 1.
    """
    if number < 1:
        raise ValueError(f"a final's number is 1 or more, got {number}")
    return 0.5**number


#: The information (Elo^-2) one even game gives about a rating difference.
_GAME_INFORMATION = 0.25 / ELO_PER_NAT**2


def _mixture_level(alpha: float, info: float, rho: float) -> float:
    """The z at which the one-sided normal-mixture martingale (prior precision ``rho``)
    reaches ``1 / alpha`` at information ``info`` (Ville: crossed with probability at
    most ``alpha`` ever)."""
    if math.isinf(info):
        return 0.0
    total = info + rho
    spread = math.log(total / rho)
    level = math.sqrt(total * (2.0 * math.log(1.0 / (2.0 * alpha)) + spread))
    for _ in range(3):  # the Phi factor of the half-normal mixture
        shortfall = -2.0 * math.log(NormalDist().cdf(level / math.sqrt(total)))
        level = math.sqrt(total * (2.0 * math.log(1.0 / (2.0 * alpha)) + spread + shortfall))
    return level / math.sqrt(info)


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
