"""Grade thresholds and the grade a gauntlet's verdicts earn (arena.compete.grading)."""

from __future__ import annotations

import pytest

from arena.compete.grading import (
    GradingError,
    Threshold,
    check_thresholds,
    grade_of,
    verdict_of_status,
)

REFERENCES = ("random", "greedy", "counter")
USUAL = (("A", ("counter",)), ("B", ("greedy",)), ("C", ("random",)), ("F", ()))


def usual() -> tuple[Threshold, ...]:
    return check_thresholds(USUAL, REFERENCES)


def test_the_usual_thresholds_are_kept_in_order() -> None:
    assert [t.grade for t in usual()] == ["A", "B", "C", "F"]
    assert usual()[0].as_json() == {"grade": "A", "beats": ["counter"]}


@pytest.mark.parametrize(
    ("verdicts", "grade"),
    [
        ({"random": "pass", "greedy": "pass", "counter": "pass"}, "A"),
        ({"random": "pass", "greedy": "pass", "counter": "fail"}, "B"),
        ({"random": "pass", "greedy": "undecided", "counter": "fail"}, "C"),
        ({"random": "fail", "greedy": "fail", "counter": "fail"}, "F"),
        ({"random": "undecided", "greedy": "fail", "counter": "undecided"}, "F"),
        # beats counter only: the teacher's thresholds say A (best first)
        ({"random": "fail", "greedy": "fail", "counter": "pass"}, "A"),
        # early: counter beaten, the others still playing
        ({"random": "running", "greedy": "running", "counter": "pass"}, "A"),
        # not yet: counter still running could give an A
        ({"random": "pass", "greedy": "pass", "counter": "running"}, None),
        ({"random": "running", "greedy": "fail", "counter": "fail"}, None),
        ({}, None),
    ],
)
def test_the_first_threshold_beaten_is_the_grade(
    verdicts: dict[str, str], grade: str | None
) -> None:
    assert grade_of(usual(), verdicts) == grade


def test_a_threshold_may_ask_for_several_references() -> None:
    thresholds = check_thresholds(
        [("pass", ("random", "greedy")), ("fail", ())], ("random", "greedy")
    )
    assert grade_of(thresholds, {"random": "pass", "greedy": "pass"}) == "pass"
    assert grade_of(thresholds, {"random": "pass", "greedy": "fail"}) == "fail"
    assert grade_of(thresholds, {"random": "pass", "greedy": "running"}) is None


@pytest.mark.parametrize(
    ("thresholds", "message"),
    [
        ([], "at least one grade"),
        ([("A", ("counter",))], "must ask for nothing"),
        ([("A", ("bogus",)), ("F", ())], "'bogus', which is not one of the references"),
        ([("A", ("random",)), ("A", ())], "given twice"),
        ([(" ", ("random",)), ("F", ())], "threshold 1 has no grade"),
        ([("A" * 21, ("random",)), ("F", ())], "1 to 20 printable"),
        ([("A", ("random", "random")), ("F", ())], "names a reference twice"),
        ([("A", ("random",)), ("B", ("random", "greedy")), ("F", ())], "B can never be given"),
        ([("A", ()), ("F", ())], "F can never be given"),
        ([(f"G{i}", ()) for i in range(25)], "can never be given"),
    ],
)
def test_thresholds_that_cannot_grade_are_refused_in_a_sentence(
    thresholds: list[tuple[str, tuple[str, ...]]], message: str
) -> None:
    with pytest.raises(GradingError, match=message):
        check_thresholds(thresholds, REFERENCES)


def test_too_many_thresholds_are_refused() -> None:
    labels = tuple(f"r{i}" for i in range(25))
    many = [(f"G{i}", (labels[i],)) for i in range(24)] + [("F", ())]
    with pytest.raises(GradingError, match="at most 20 grades"):
        check_thresholds(many, labels)


@pytest.mark.parametrize(
    ("status", "ended", "verdict"),
    [
        ("H1 accepted", False, "pass"),
        ("H0 accepted", True, "fail"),
        ("continue", True, "undecided"),
        ("continue", False, "running"),
    ],
)
def test_a_tests_status_is_a_verdict(status: str, ended: bool, verdict: str) -> None:
    assert verdict_of_status(status, ended) == verdict
