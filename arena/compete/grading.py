"""An assignment's grade thresholds and the grade a submission's verdicts earn: pure.

A submission plays a gauntlet, one sequential test against each reference bot
(arena.service.assignments); each test ends with a **verdict**: ``pass`` (the test accepted
H1: the submission beats the reference by ``elo1`` or more, at the stated error rates),
``fail`` (it accepted H0), ``undecided`` (it reached its cap without deciding), or is still
``running``. The **thresholds** map verdicts to a grade, best first::

    A: beats counter
    B: beats greedy
    C: beats random
    F: (nothing)

A submission earns the first grade all of whose references it beats (``pass``); the last
threshold beats nothing, so every submission whose tests have ended has a grade.
:func:`grade_of` also gives the grade early, as soon as no test still running could change
it (a submission that already beat counter has its A whatever greedy's test says).

A grade is also worth **points** on the teacher's scale (:func:`points_scale`): points for
each grade, or a maximum spread evenly from the best grade down to 0 for the last, for a
school's gradebook. And a test's Elo figure stays within what its games can measure
(:func:`elo_figure`): a test's Elo is +inf when the submission's estimated expected score
reaches 1 (every game won, or, for the margin test, margins whose exchange rate maps to a
score of 1 or more), and a decided test must never show a blank figure.

Standard library only, as the rest of arena.compete's pure parts.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

__all__ = [
    "DEFAULT_MAX_POINTS",
    "ENDED",
    "MAX_GRADE",
    "MAX_POINTS",
    "MAX_THRESHOLDS",
    "VERDICTS",
    "GradingError",
    "Threshold",
    "Verdict",
    "check_thresholds",
    "elo_bound",
    "elo_figure",
    "grade_of",
    "points_scale",
    "verdict_of_status",
]

#: A test's verdict against one reference.
Verdict = Literal["pass", "fail", "undecided", "running"]
VERDICTS: tuple[Verdict, ...] = ("pass", "fail", "undecided", "running")
#: The verdicts of a test that has ended.
ENDED: frozenset[str] = frozenset({"pass", "fail", "undecided"})
#: The longest grade, in characters (the ``grade`` column holds 20).
MAX_GRADE = 20
#: The most thresholds an assignment may have.
MAX_THRESHOLDS = 20
#: The most points a grade may be worth.
MAX_POINTS = 10_000.0
#: The points of the best grade when the teacher chose no scale.
DEFAULT_MAX_POINTS = 100.0


class GradingError(ValueError):
    """Thresholds that cannot grade (the message says why, in a sentence)."""


@dataclass(frozen=True, slots=True)
class Threshold:
    """One grade and the references a submission must beat to earn it."""

    grade: str
    beats: tuple[str, ...]

    def as_json(self) -> dict[str, object]:
        """As stored in ``assignments.grades``."""
        return {"grade": self.grade, "beats": list(self.beats)}


def verdict_of_status(status: str, ended: bool) -> Verdict:
    """A sequential test's status (``H1 accepted``, ``H0 accepted``, ``continue``) as a
    verdict: ``pass``, ``fail``, ``undecided`` when it ``ended`` without deciding (its cap),
    else ``running``."""
    if status == "H1 accepted":
        return "pass"
    if status == "H0 accepted":
        return "fail"
    return "undecided" if ended else "running"


def _grade_name(grade: object, place: int) -> str:
    if not isinstance(grade, str) or not grade.strip():
        raise GradingError(f"threshold {place} has no grade: give each a name such as A or pass.")
    name = grade.strip()
    if len(name) > MAX_GRADE or any(not c.isprintable() for c in name):
        raise GradingError(
            f"the grade {name[:30]!r} must be 1 to {MAX_GRADE} printable characters."
        )
    return name


def check_thresholds(
    thresholds: Iterable[tuple[str, Iterable[str]]], references: Sequence[str]
) -> tuple[Threshold, ...]:
    """``thresholds`` (grade, references it must beat), best first, checked against the
    assignment's reference labels.

    Raises:
        GradingError: none, too many, a grade without a name or given twice, a reference
            that is not one of ``references`` (or named twice in one threshold), a last
            threshold that requires a win (a submission beating nothing would have no
            grade), or a threshold no submission could earn (a better one asks for a
            subset of its references).
    """
    checked: list[Threshold] = []
    known = set(references)
    for place, (grade, beats) in enumerate(thresholds, start=1):
        name = _grade_name(grade, place)
        if name in {t.grade for t in checked}:
            raise GradingError(f"the grade {name!r} is given twice: give each grade once.")
        wanted = tuple(beats)
        unknown = [r for r in wanted if r not in known]
        if unknown:
            raise GradingError(
                f"grade {name} asks to beat {', '.join(map(repr, unknown))}, which is not "
                f"one of the references ({', '.join(references) or 'none'})."
            )
        if len(set(wanted)) != len(wanted):
            raise GradingError(f"grade {name} names a reference twice.")
        for better in checked:
            if set(better.beats) <= set(wanted):
                raise GradingError(
                    f"grade {name} can never be given: a submission that beats "
                    f"{', '.join(wanted) or 'nothing'} earns {better.grade} first (thresholds "
                    "go best first, each asking for more than the next)."
                )
        checked.append(Threshold(name, wanted))
    if not checked:
        raise GradingError("give at least one grade (e.g. A: beats counter; F: nothing).")
    if len(checked) > MAX_THRESHOLDS:
        raise GradingError(f"give at most {MAX_THRESHOLDS} grades, not {len(checked)}.")
    if checked[-1].beats:
        raise GradingError(
            f"the last grade ({checked[-1].grade}) must ask for nothing: it is the grade of a "
            "submission that beats none of the others' references."
        )
    return tuple(checked)


def grade_of(thresholds: Sequence[Threshold], verdicts: Mapping[str, str]) -> str | None:
    """The grade ``verdicts`` (reference label -> verdict) earn: the first threshold whose
    references all have ``pass``; None while a test still running (or missing) could yet
    earn a better grade than the ones already ruled out allow.

    Raises:
        GradingError: no thresholds.
    """
    if not thresholds:
        raise GradingError("give at least one grade.")
    for threshold in thresholds:
        needed = [verdicts.get(reference, "running") for reference in threshold.beats]
        if all(v == "pass" for v in needed):
            return threshold.grade
        if any(v in ENDED and v != "pass" for v in needed):
            continue  # ruled out: a reference it asks for was not beaten
        return None  # still possible: a test it needs is running
    return None


def points_scale(
    thresholds: Sequence[Threshold],
    points: Mapping[str, float] | None = None,
    max_points: float | None = None,
) -> dict[str, float]:
    """Each grade's points: ``points`` as given (every grade of ``thresholds`` once, none
    below the next grade's), or ``max_points`` (default :data:`DEFAULT_MAX_POINTS`) for the
    best grade, spread evenly down to 0 for the last (to 0.01).

    >>> grades = check_thresholds([("A", ["b"]), ("B", ["c"]), ("F", [])], ["b", "c"])
    >>> points_scale(grades, max_points=10)
    {'A': 10.0, 'B': 5.0, 'F': 0.0}

    Raises:
        GradingError: both or neither usable, a grade missing or unknown, a number that is
            not 0 to :data:`MAX_POINTS`, or a better grade worth fewer points than a worse.
    """
    grades = [t.grade for t in thresholds]
    if points:
        if max_points is not None:
            raise GradingError("give points for each grade or a maximum, not both.")
        unknown = [g for g in points if g not in grades]
        if unknown:
            raise GradingError(
                f"points are given for {', '.join(map(repr, unknown))}, which is not one of "
                f"the grades ({', '.join(grades)})."
            )
        missing = [g for g in grades if g not in points]
        if missing:
            raise GradingError(f"give the points of every grade: {', '.join(missing)} has none.")
        scale = {g: _points(g, points[g]) for g in grades}
        for better, worse in itertools.pairwise(grades):
            if scale[better] < scale[worse]:
                raise GradingError(
                    f"grade {better} ({scale[better]:g} points) is worth fewer points than "
                    f"{worse} ({scale[worse]:g}): grades go best first."
                )
        return scale
    top = _points("the maximum", DEFAULT_MAX_POINTS if max_points is None else max_points)
    if top <= 0:
        raise GradingError("the maximum points must be above 0.")
    steps = max(len(grades) - 1, 1)
    return {g: round(top * (len(grades) - 1 - i) / steps, 2) for i, g in enumerate(grades)}


def _points(what: str, value: object) -> float:
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not (math.isfinite(value) and 0 <= value <= MAX_POINTS)
    ):
        raise GradingError(
            f"the points of {what} must be a number from 0 to {MAX_POINTS:g}, not {value!r:.30}."
        )
    return round(float(value), 2)


def elo_bound(groups: int) -> float:
    """The largest Elo difference ``groups`` deal groups measure: the Elo of an expected
    score half a group from 1, ``400 log10(2 groups - 1)`` (+597 at 16 groups, +708 at 30).
    """
    return 400.0 * math.log10(max(2 * groups - 1, 1))


def elo_figure(elo: float | None, groups: int) -> float | None:
    """A test's Elo figure (its estimate, or a bound of its interval) within what ``groups``
    deal groups can measure (:func:`elo_bound`, either way): an infinite estimate (every
    game won, or margins mapped to a score of 1 or more) is that bound, never blank. None:
    no estimate (NaN, None) or no group.

    >>> round(elo_figure(float("inf"), 16) or 0, 1), elo_figure(-50.0, 16), elo_figure(-1e9, 1)
    (596.5, -50.0, -0.0)
    """
    if elo is None or elo != elo or groups < 1:
        return None
    bound = elo_bound(groups)
    return max(-bound, min(bound, elo))
