"""A submission's gauntlet (arena.service.assignments): started once its version is
accepted, one compare tournament a reference; each test's verdict kept when it ends; the
grade once all have.

- :func:`submission_accepted` (the workers call it after every upload's check,
  arena.service.work.accept_upload) starts an accepted submission's gauntlet, or rejects
  the submission with its upload's message; :func:`start_gauntlet` starts one for a
  stored version.
- :func:`grade_after_match` (the workers call it after each match, once the compare's
  ``stop_if_decided`` ran) keeps a test's verdict when it ended and grades the submission
  (arena.compete.grading) when all its tests have; :func:`settle_tests` (the sweep) does
  it for a test whose last match's worker died in between.

Every step is conditional on the state it leaves (arena.store.assignments): safe to run
twice, from any worker.
"""

from __future__ import annotations

import logging
import math
from datetime import UTC, datetime, timedelta
from typing import Any

from arena.compete.grading import (
    check_thresholds,
    elo_bound,
    elo_figure,
    grade_of,
    verdict_of_status,
)
from arena.compete.sprt import RegressionTest, elo_estimate, make_test
from arena.engine.rules import Rules
from arena.errors import VerdictError
from arena.service.compares import CompareState, CompareTest, compare_state, create_compare
from arena.service.dispatch import dispatch_matches
from arena.service.matches import MatchSettings
from arena.service.tournaments import preset
from arena.store import assignments as stored
from arena.store.assignments import AssignmentRow
from arena.store.compares import tournament_of_match
from arena.store.db import Store
from arena.store.queue import tournament_progress
from arena.store.uploads import upload_with_version

__all__ = [
    "STALLED_SECONDS",
    "grade_after_match",
    "restart_stalled",
    "settle_tests",
    "start_gauntlet",
    "submission_accepted",
]

logger = logging.getLogger(__name__)


def submission_accepted(store: Store, upload_id: int) -> int | None:
    """Settle the submission made with this upload once its check is done (the workers
    call it after every check): accepted (or "already") -> its gauntlet starts; rejected ->
    rejected with the upload's message. Return the submission's id, or None when the
    upload is no submission (a plain upload: it gets its placement). Idempotent."""
    submission = stored.submission_of_upload(store, upload_id)
    if submission is None:
        return None
    found = upload_with_version(store, upload_id)
    if found is None or found[0].status == "pending":
        return submission.id
    upload = found[0]
    if upload.status in ("accepted", "already") and upload.bot_version_id is not None:
        start_gauntlet(store, submission.id, upload.bot_version_id)
    elif stored.reject_submission(store, submission.id, upload.message or "its check failed"):
        logger.info("submission %d (upload %d) rejected", submission.id, upload_id)
    return submission.id


def _assignment_test(row: AssignmentRow) -> tuple[CompareTest, RegressionTest]:
    s = row.settings
    test = make_test(s["statistic"], s["elo0"], s["elo1"], s["alpha"], s["beta"])
    stored_test = CompareTest(
        "", "", s["elo0"], s["elo1"], s["alpha"], s["beta"], int(s["max_games"]),
        int(s["batch"]), s["statistic"],
    )  # fmt: skip
    return stored_test, test


def start_gauntlet(
    store: Store,
    submission_id: int,
    version_id: int,
    *,
    now: datetime | None = None,
) -> None:
    """Claim the pending submission for grading and store one compare a reference (the
    assignment's seed: every submission plays the same deals), then send their matches.
    Nothing if another caller claimed it first."""
    if not stored.claim_grading(store, submission_id, version_id, now=now):
        return
    submission = stored.submission_row(store, submission_id)
    assert submission is not None
    row = stored.assignment_by_id(store, submission.assignment_id)
    new = stored.version_name(store, version_id)
    assert row is not None and new is not None
    plan, test = _assignment_test(row)
    rules = preset(row.rules)
    tests: list[tuple[str, int]] = []
    for reference in row.references:
        old = stored.version_name(store, int(reference["bot_version_id"]))
        assert old is not None
        tests.append((reference["label"], _compare(store, row, plan, test, rules, new, old)))
    stored.add_tests(store, submission_id, tests)
    for _, tournament_id in tests:
        dispatch_matches(store, tournament_id)
    logger.info("submission %d: its gauntlet of %d tests started", submission_id, len(tests))


def _compare(
    store: Store,
    row: AssignmentRow,
    plan: CompareTest,
    test: RegressionTest,
    rules: Rules,
    new: stored.VersionName,
    old: stored.VersionName,
) -> int:
    """One test's compare tournament; its id. Its name carries the time to the second: a
    version submitted twice within one second takes the next second's name."""
    moment = datetime.now(UTC)
    for attempt in range(10):
        try:
            tournament_id, _ = create_compare(
                store, new=new.reference, old=old.reference, rules=rules, players=row.players,
                teams=row.teams, test=test, max_games=plan.max_games, batch=plan.batch,
                seed=row.seed, now=moment + timedelta(seconds=attempt),
                # a submission that is a reference's own source is tested all the same:
                # its verdict (not stronger) is the answer its student needs
                allow_same_source=True,
                settings=MatchSettings(
                    move_seconds=float(row.settings["move_seconds"]),
                    memory_mb=int(row.settings["memory_mb"]),
                ),
            )  # fmt: skip
            return tournament_id
        except ValueError as exc:
            if "exists" not in str(exc) or attempt == 9:
                raise
    raise AssertionError("unreachable")  # pragma: no cover


# --- grading ----------------------------------------------------------------------------------


def _finite(value: float | None) -> float | None:
    """A number JSON (and PostgreSQL's JSON) can hold: NaN or an infinity is None."""
    return None if value is None or not math.isfinite(value) else float(value)


def _summary(state: CompareState) -> dict[str, Any]:
    """A test's reading as kept with its verdict. Its Elo and interval are figures
    (arena.compete.grading.elo_figure): within what its deal groups measure, so a test
    whose estimate is infinite (every game won; or margins whose exchange rate maps to a
    score of 1 or more, seen at a game score of 0.84) keeps the bound, marked ``bounded``,
    never None (docs/assignments.md: a decided grade's evidence is never blank)."""
    reading = state.reading
    if state.samples is None:  # (a reading the workers kept: a grade reads its own)
        raise ValueError("a test's summary reads its deal groups: a kept reading has none")
    scores = state.samples.game_scores()
    estimate = (reading.elo, reading.low, reading.high)
    if reading.elo is None and scores.n:  # fewer than two groups: the game score's
        estimate = elo_estimate(scores)
    groups = max(reading.groups, scores.n)
    elo, low, high = (elo_figure(value, groups) for value in estimate)
    beyond = estimate[0] is not None and not abs(estimate[0]) <= elo_bound(groups)
    return {
        "score": _finite(scores.mean) if scores.n else None, "elo": elo, "low": low,
        "high": high, "bounded": elo is not None and beyond,
        "games": state.played, "llr": _finite(reading.llr), "status": state.status,
    }  # fmt: skip


def grade_after_match(store: Store, match_id: int) -> None:
    """After a match of a submission's test finished (the compare's ``stop_if_decided``
    ran): if the test has ended (decided, or its matches are all played or void), keep its
    verdict and summary; once every test of the submission has ended, grade it. Nothing
    for other matches. Safe to call any number of times, from any worker."""
    tournament = tournament_of_match(store, match_id)
    if tournament is None:
        return
    test = stored.test_of_tournament(store, tournament.id)
    if test is None:
        return
    if test.verdict is None:
        plan = CompareTest.from_settings(tournament.settings)
        if plan is None:  # pragma: no cover (a submission's compare keeps its test)
            return
        try:
            state = compare_state(
                store, tournament.id, plan.sprt, tournament.players, tournament.teams
            )
        except VerdictError as exc:  # a seat ran another source: no verdict to grade by
            logger.error("submission %d: %s: %s", test.submission_id, test.reference, exc)
            summary = {"games": 0, "status": "refused", "problem": str(exc)}
            stored.end_test(store, test.id, "undecided", summary)
            _grade(store, test.submission_id)
            return
        progress = tournament_progress(store, tournament.id)
        ended = progress["pending"] + progress["running"] == 0 or state.played >= plan.max_games
        verdict = verdict_of_status(state.status, ended)
        if verdict == "running":
            return
        if stored.end_test(store, test.id, verdict, _summary(state)):
            logger.info("submission %d: %s -> %s", test.submission_id, test.reference, verdict)
    _grade(store, test.submission_id)


def _grade(store: Store, submission_id: int) -> None:
    """Grade the submission if every one of its tests has a verdict."""
    submission = stored.submission_row(store, submission_id)
    if submission is None or submission.status != "grading":
        return
    row = stored.assignment_by_id(store, submission.assignment_id)
    assert row is not None
    tests = stored.tests_of(store, [submission_id]).get(submission_id, [])
    verdicts = {t.reference: t.verdict for t in tests if t.verdict is not None}
    if len(verdicts) < len(row.references):
        return
    labels = [r["label"] for r in row.references]
    thresholds = check_thresholds(((g["grade"], tuple(g["beats"])) for g in row.grades), labels)
    grade = grade_of(thresholds, verdicts)
    if grade is not None and stored.grade_submission(store, submission_id, grade):
        logger.info("submission %d graded %s", submission_id, grade)


#: Seconds after which the sweep settles a submission a worker left half-settled.
STALLED_SECONDS = 300.0


def restart_stalled(store: Store, *, now: datetime | None = None) -> int:
    """Settle again each submission a worker left half-settled :data:`STALLED_SECONDS`
    ago or more (its check ended but the submission stayed ``pending``; or it was claimed
    for grading and no test was stored): the sweep calls it. Return how many."""
    before = (now or datetime.now(UTC)) - timedelta(seconds=STALLED_SECONDS)
    found = stored.stalled_submissions(store, before)
    for submission_id, upload_id in found:
        submission = stored.submission_row(store, submission_id)
        if submission is None:
            continue
        if submission.status == "grading":
            stored.unclaim_grading(store, submission_id)
        if upload_id is not None:
            submission_accepted(store, upload_id)
        elif submission.bot_version_id is not None:  # a stored version submitted
            start_gauntlet(store, submission_id, submission.bot_version_id)
        logger.warning("submission %d was left half-settled: settled again", submission_id)
    return len(found)


def settle_tests(store: Store) -> int:
    """Keep the verdict of every test whose compare has no match left to play but was
    never settled (its last match's worker died between the two): the sweep calls it.
    Return how many were looked at."""
    found = stored.ungraded_tests(store)
    for _, match_id in found:
        grade_after_match(store, match_id)
    return len(found)
