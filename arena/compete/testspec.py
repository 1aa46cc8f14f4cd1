"""A regression test as it is asked for, checked without the statistics: what it counts and
its parameters (:func:`check_test`), and the games of a deal group (:func:`group_size`).

Light on purpose (the standard library only): ``arena compare --remote`` checks what it
asks for with it and leaves the statistics (:mod:`arena.compete.sprt`: numpy, and scipy
for a reading) to the workers, whose matches it would otherwise share two cores with.
"""

from __future__ import annotations

from typing import Literal

__all__ = ["STATISTICS", "Statistic", "check_test", "group_size"]

#: What a regression test counts per deal group: ``margin`` (:class:`MarginSPRT`, the
#: default) or ``game``, the pentanomial game results of :class:`SPRT`.
Statistic = Literal["margin", "game"]
STATISTICS: tuple[Statistic, ...] = ("margin", "game")


def check_test(statistic: str, elo0: float, elo1: float, alpha: float, beta: float) -> None:
    """Check a test's statistic and parameters as :func:`arena.compete.sprt.make_test` does
    (the same sentences).

    Raises:
        ValueError: an unknown statistic, or parameters the tests refuse.
    """
    if statistic not in STATISTICS:
        raise ValueError(f"unknown statistic {statistic!r} (statistics: {', '.join(STATISTICS)})")
    if not elo0 < elo1:
        raise ValueError(f"elo0 must be below elo1, got {elo0} and {elo1}")
    if not (0 < alpha < 1 and 0 < beta < 1 and alpha + beta < 1):
        raise ValueError(f"need 0 < alpha, beta and alpha + beta < 1, got {alpha}, {beta}")


def group_size(players: int, teams: bool = False) -> int:
    """The games of a deal group: one per seat rotation (two in team play)."""
    return 2 if teams else players
