"""The final's separation rule (a stand-in for engineer "final"'s module, to the contract of
notes/competitions.md: replace it with theirs).

A final plays rounds of duplicate deals among its finalists until every pair of adjacent
ranks is separated at ``confidence`` (the rating difference's z from the fit's covariance),
or until ``max_games`` games were played, after which unseparated neighbours share a place.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

from arena.compete.ratings import PRIOR_SD, ResultMatrix

__all__ = ["FinalPolicy", "FinalStanding", "FinalState", "assess_final"]


@dataclass(frozen=True, slots=True)
class FinalPolicy:
    """The final's parameters: the separation's ``confidence``, the ``max_games`` cap, and
    the deal groups a pair plays a round (``deals_per_round``)."""

    confidence: float = 0.95
    max_games: int = 2000
    deals_per_round: int = 1


@dataclass(frozen=True, slots=True)
class FinalStanding:
    """A finalist's standing: rating and interval, ``place`` (shared by ties), games, and
    whether it is separated from the next finalist."""

    id: str
    rating: float
    low: float
    high: float
    place: int
    games: int
    separated_from_next: bool


@dataclass(frozen=True, slots=True)
class FinalState:
    """The final as it stands: standings best first, whether it is over, the next round's
    pairs (empty when done)."""

    standings: list[FinalStanding]
    done: bool
    next_pairs: list[tuple[str, str]]


def assess_final(
    finalists: Sequence[str],
    matrix: ResultMatrix | None,
    games: int,
    policy: FinalPolicy | None = None,
) -> FinalState:
    """Where the final stands after ``games`` games (``matrix``: their results; None before
    any): a round robin first, then the adjacent pairs not yet separated, until all are or
    the cap is reached (then ties share a place)."""
    policy = policy or FinalPolicy()
    names = list(finalists)
    if len(names) < 2:
        alone = [FinalStanding(n, 1500.0, 1500.0, 1500.0, 1, 0, True) for n in names]
        return FinalState(alone, True, [])
    if matrix is None or games == 0 or len(matrix.bots) < 2:
        unplayed = [
            FinalStanding(
                n, 1500.0, 1500.0 - 1.96 * PRIOR_SD, 1500.0 + 1.96 * PRIOR_SD, 1, 0, False
            )
            for n in names
        ]
        pairs = [(a, b) for i, a in enumerate(names) for b in names[i + 1 :]]
        return FinalState(unplayed, False, pairs)
    ratings, covariance = matrix.fit_with_covariance()
    fitted = {r.bot: r for r in ratings}
    code = {bot: k for k, bot in enumerate(matrix.bots)}
    order = sorted(names, key=lambda n: -fitted[n].rating if n in fitted else -1500.0)
    z_needed = float(stats.norm.ppf(0.5 + policy.confidence / 2))
    separated: list[bool] = []
    for a, b in itertools.pairwise(order):
        if a not in fitted or b not in fitted:
            separated.append(False)
            continue
        i, j = code[a], code[b]
        variance = covariance[i, i] + covariance[j, j] - 2 * covariance[i, j]
        gap = fitted[a].rating - fitted[b].rating
        separated.append(bool(gap / np.sqrt(max(variance, 1e-12)) >= z_needed))
    done = all(separated) or games >= policy.max_games
    standings: list[FinalStanding] = []
    place = 1
    for k, name in enumerate(order):
        if k > 0 and separated[k - 1]:
            place = k + 1
        r = fitted.get(name)
        standings.append(
            FinalStanding(
                name,
                r.rating if r else 1500.0,
                r.low if r else 1500.0,
                r.high if r else 1500.0,
                place if done else k + 1,
                r.games if r else 0,
                separated[k] if k < len(separated) else True,
            )
        )
    pairs = (
        []
        if done
        else [
            (a, b) for (a, b), s in zip(itertools.pairwise(order), separated, strict=False) if not s
        ]
    )
    return FinalState(standings, done, pairs)
