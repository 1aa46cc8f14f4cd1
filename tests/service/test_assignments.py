"""arena.service.assignments on both databases: creation's mistakes (one sentence each),
who may create, submit and read; a submission's life (pending upload -> rejected, or its
gauntlet of compares -> verdicts -> grade), late ones, the kept submission and the grade
table. Matches are played here by the worker's own code, unsandboxed (the reference bots
are trusted), each followed by the hooks a worker runs (stop_if_decided, grade_after_match)."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from celery import Celery
from sqlalchemy import func, select

from arena.compete.sprt import elo_to_score
from arena.errors import NotFound, PermissionDenied
from arena.match.runtimes import RUNTIMES
from arena.service import assignments as assign
from arena.service.accounts import Account, create_account, password_hasher
from arena.service.assignments import AssignmentError, NewAssignment
from arena.service.classes import ClassError, NewClass, create_class, join_class
from arena.service.compare_views import compare_view
from arena.service.compares import stop_if_decided
from arena.service.exports import grade_rows
from arena.service.matches import Config, run_match
from arena.service.permissions import OPERATOR, Actor
from arena.service.work import accept_upload
from arena.store.db import Store
from arena.store.models import Match, SubmissionTest, Tournament
from tests.paths import REFERENCE_BOTS, ZOO
from tests.uploads import submit_upload

HASHER = password_hasher(cheap=True)
NOW = datetime.now(UTC).replace(microsecond=0)
GREEDY = (REFERENCE_BOTS / "greedy.py").read_bytes()
RANDOM = (REFERENCE_BOTS / "random.py").read_bytes()
Actors = dict[str, Actor]
#: The deals of the tests that need the same games every run (greedy is deterministic).
SEED = 1


@pytest.fixture
def celery(url: str, tmp_path: Path) -> Iterator[Celery]:
    """A broker no worker reads (a directory of its own), the service's during the test."""
    from arena.service.broker import make_app, using

    with using(make_app(f"filesystem://{tmp_path / 'broker'}", None, url)) as app:
        yield app


def _class_c1(store: Store, directory: Path) -> dict[str, Account]:
    """A class ``c1`` (rule sets block, draw) taught by ``teach``, with students ``ann``
    and ``bob``; ``other`` teaches no class of theirs; ``admin``, ``stranger``; the
    reference bots stored: made once a run, every test's database a copy of it (the
    ``seed`` marker below, tests/conftest.py)."""
    for bot in ("random", "greedy", "counter"):
        store.add_bot_version("reference", bot, (REFERENCE_BOTS / f"{bot}.py").read_text(), {})
    made: dict[str, Account] = {}
    for name, role in (("teach", "teacher"), ("other", "teacher"), ("admin", "admin"),
                       ("stranger", "user")):  # fmt: skip
        made[name] = create_account(store, name, "correct horse", role=role, hasher=HASHER)
    row = create_class(store, made["teach"], NewClass(name="c1", rule_sets=("block", "draw")))
    assert row.join_code is not None
    for student in ("ann", "bob"):
        made[student] = join_class(store, HASHER, row.join_code, student, "correct horse")
    return made


pytestmark = pytest.mark.seed(build=_class_c1)


@pytest.fixture
def actors(seeded: dict[str, Account]) -> Actors:
    """The accounts of :func:`_class_c1` by name, nobody (``anonymous``) and the
    ``operator``."""
    return {"anonymous": None, "operator": OPERATOR, **seeded}


def _new(**changes: Any) -> NewAssignment:
    base = NewAssignment(
        class_name="c1",
        name="hw1",
        deadline=NOW + timedelta(days=7),
        opens=NOW - timedelta(hours=1),
    )
    return dataclasses.replace(base, **changes)


def _account(actors: Actors, name: str) -> Account:
    actor = actors[name]
    assert isinstance(actor, Account)
    return actor


# --- creation ---------------------------------------------------------------------------------


def test_creation_pins_the_references_and_keeps_the_thresholds(
    store: Store, actors: Actors
) -> None:
    new = _new(
        references=("reference/random", "mine=reference/greedy@1"),
        grades=(("pass", ("random", "mine")), ("fail", ())),
    )
    row = assign.create_assignment(store, actors["teach"], new)
    assert [r["label"] for r in row.references] == ["random", "mine"]
    assert row.references[1]["bot"] == "reference/greedy@1"
    assert row.grades == ({"grade": "pass", "beats": ["random", "mine"]},
                          {"grade": "fail", "beats": []})  # fmt: skip
    assert row.rules == "block" and row.settings["elo1"] == 20.0
    assert row.settings["max_games"] == 400 and row.deadline == NOW + timedelta(days=7)
    assert row.settings["runtimes"] == list(RUNTIMES)  # every runtime, unless narrowed
    assert row.settings["points"] == {"pass": 100.0, "fail": 0.0}  # the default scale


def test_the_points_scale_is_the_teachers(store: Store, actors: Actors) -> None:
    row = assign.create_assignment(store, actors["teach"], _new(max_points=10.0))
    assert row.settings["points"] == {"A": 10.0, "B": 6.67, "C": 3.33, "F": 0.0}
    scale = (("A", 20.0), ("B", 16.0), ("C", 12.0), ("F", 5.0))
    row = assign.create_assignment(store, actors["teach"], _new(name="hw2", points=scale))
    assert row.settings["points"] == dict(scale)
    assert assign.assignment_view(store, actors["teach"], "c1", "hw2").max_points == 20.0


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"name": "a/b"}, "not a valid name"),
        ({"name": "new"}, "a page of its own"),
        ({"rules": "muggins"}, "the class plays block, draw: choose one of them"),
        (
            {"references": ("reference/montecarlo",)},
            "is not a stored bot: store it with "
            "`arena bots add bots/montecarlo.py --name montecarlo --owner reference`",
        ),
        ({"references": ("teach/mine",)}, "teach/mine is not a stored bot: upload it first"),
        ({"references": ("reference/random@7",)}, "has no version 7"),
        ({"references": ("random", "reference/random")}, "two references are labelled 'random'"),
        ({"references": ()}, "at least one reference"),
        ({"grades": (("A", ("bogus",)), ("F", ()))}, "'bogus', which is not one of the"),
        ({"grades": (("A", ("counter",)),)}, "must ask for nothing"),
        (
            {"elo1": -5.0},
            "elo1 (-5, the margin a submission beats a reference by) must be above elo0 (0)",
        ),
        ({"alpha": 0.9}, "alpha must be 0.001 to 0.5, not 0.9"),
        ({"max_games": 3}, "max games must be at least 4"),
        ({"move_ms": 0}, "move ms must be 10 to 10000 ms, not 0 ms"),
        ({"statistic": "pips"}, "the test counts margin or game, not 'pips'"),
        (
            {"deadline": NOW - timedelta(hours=1), "opens": NOW - timedelta(hours=2)},
            "has passed already",
        ),
        ({"deadline": NOW.replace(tzinfo=None) + timedelta(days=1)}, "with their time zone"),
        ({"opens": NOW + timedelta(days=8)}, "must come after the opening"),
        ({"opens": NOW.replace(tzinfo=None)}, "with their time zone"),
        ({"opens": datetime(1, 1, 2, tzinfo=UTC)}, "must be within 3660 days of now"),
        ({"time_zone": "Mars/Olympus"}, "not a known time zone"),
        ({"players": 3, "teams": True}, "block has no team play with 3 players"),
        ({"seed": -1}, "the seed must be a whole number from 0 to 2**62 - 1"),
        ({"runtimes": ()}, "one or more of the runtimes python, python-numpy, javascript, cpp"),
        ({"runtimes": ("cobol",)}, "not 'cobol'"),
        ({"points": (("A", 10.0),)}, "give the points of every grade: B, C, F has none"),
        ({"points": (("A", 1), ("B", 2), ("C", 1), ("F", 0))}, "grade A (1 points) is worth"),
        ({"points": (("Z", 1.0),)}, "points are given for 'Z', which is not one of the grades"),
        ({"max_points": -3.0}, "the points of the maximum must be a number from 0 to 10000"),
        ({"max_points": 0.0}, "the maximum points must be above 0"),
        ({"max_points": 10.0, "points": (("A", 1.0),)}, "not both"),
    ],
)
def test_each_mistake_is_refused_in_a_sentence(
    store: Store, actors: Actors, changes: dict[str, Any], message: str
) -> None:
    with pytest.raises(AssignmentError) as refused:
        assign.create_assignment(store, actors["teach"], _new(**changes))
    assert message in str(refused.value)
    with pytest.raises(NotFound):  # nothing stored
        assign.assignment_view(store, actors["teach"], "c1", "hw1")


def test_a_private_bot_of_another_user_is_no_reference(store: Store, actors: Actors) -> None:
    store.add_bot_version("stranger", "secret", GREEDY.decode(), {})
    with pytest.raises(AssignmentError, match="another user's private bot"):
        assign.create_assignment(store, actors["teach"], _new(references=("stranger/secret",)))
    store.add_bot_version("teach", "mine", GREEDY.decode(), {})
    row = assign.create_assignment(
        store,
        actors["teach"],
        _new(references=("teach/mine",), grades=(("P", ("mine",)), ("F", ()))),
    )
    assert row.references[0]["bot"] == "teach/mine@1"


def test_names_are_unique_within_a_class(store: Store, actors: Actors) -> None:
    assign.create_assignment(store, actors["teach"], _new())
    with pytest.raises(
        AssignmentError,
        match="the class has an assignment called 'hw1' already: choose another name",
    ):
        assign.create_assignment(store, actors["teach"], _new())


@pytest.mark.parametrize(
    ("who", "error"),
    [("anonymous", PermissionDenied), ("ann", PermissionDenied), ("stranger", NotFound),
     ("other", NotFound)],
)  # fmt: skip
def test_only_the_classes_teachers_create(
    store: Store, actors: Actors, who: str, error: type[Exception]
) -> None:
    with pytest.raises(error):
        assign.create_assignment(store, actors[who], _new())


@pytest.mark.parametrize("who", ["teach", "admin", "operator"])
def test_teachers_admins_and_the_operator_create(store: Store, actors: Actors, who: str) -> None:
    assert assign.create_assignment(store, actors[who], _new()).name == "hw1"


# --- submissions ------------------------------------------------------------------------------


def _play(
    store: Store,
    tournament_ids: list[int],
    cache: Path,
    *,
    grade: bool = True,
    sandboxed: bool = False,
) -> None:
    """Play the tournaments' matches in order as a worker would, each followed by the
    worker's hooks (without ``grade``: as a worker that died before grading)."""
    config = Config(bot_cache=cache)
    while True:
        with store.read() as session:
            pending = session.scalar(
                select(Match.id)
                .where(Match.tournament_id.in_(tournament_ids), Match.status == "pending")
                .order_by(Match.id)
                .limit(1)
            )
        if pending is None:
            return
        assert run_match(store, pending, config=config, sandboxed=sandboxed) == "done"
        stop_if_decided(store, pending)
        if grade:
            assign.grade_after_match(store, pending)


def _figure_of(figure: float | None, estimate: float) -> bool:
    """Whether ``figure`` is ``estimate`` as a test's summary keeps it: the same number, or
    a bound that the estimate lies beyond (the same sign, farther from 0)."""
    if figure is None:
        return False
    if figure == pytest.approx(estimate):
        return True
    return figure * estimate > 0 and abs(estimate) > abs(figure)


def _tournaments(store: Store, submission_id: int) -> list[int]:
    with store.read() as session:
        return list(
            session.scalars(
                select(SubmissionTest.tournament_id).where(
                    SubmissionTest.submission_id == submission_id
                )
            )
        )


def test_an_upload_is_checked_then_its_gauntlet_grades_it(
    store: Store, actors: Actors, celery: Celery, tmp_path: Path
) -> None:
    """Greedy passes "beats random" (H1: +100 Elo against H0: 0, alpha 0.001, beta 0.05:
    it misses a pass with chance at most 5% were it only 100 Elo better; it is far more,
    about +300 by game score)."""
    assign.create_assignment(
        store, actors["teach"],
        _new(references=("reference/random",), grades=(("C", ("random",)), ("F", ())),
             max_games=120, elo1=100.0, alpha=0.001, batch=4, move_ms=2000),
    )  # fmt: skip
    ann = _account(actors, "ann")
    view = submit_upload(store, ann, "c1", "hw1", "greedy.py", GREEDY)
    assert view.status == "pending" and view.student == "ann" and not view.late
    assert [r.verdict for r in view.references] == ["pending"]
    status = accept_upload(store, view.upload_id or 0, config=Config(), sandboxed=False)
    assert status == "accepted"
    with store.read() as session:  # no placement for a submission: its gauntlet only
        names = list(session.scalars(select(Tournament.name)))
    assert len(names) == 1 and names[0].startswith("compare-ann-greedy-1-v-reference-random-1")
    seen = assign.submission_view(store, ann, view.id)
    assert seen.status == "grading" and seen.version == "ann/greedy@1"
    assert [(r.reference, r.verdict) for r in seen.references] == [("random", "running")]
    _play(store, _tournaments(store, view.id), tmp_path)
    graded = assign.submission_view(store, ann, view.id)
    assert graded.status == "graded" and graded.grade == "C", graded
    [result] = graded.references
    assert result.verdict == "pass" and result.tournament == names[0]
    # NEW's Elo as its compare reads it, kept with the verdict (an infinite one as None).
    # Random's moves and the deals are drawn afresh each run, and the margin test's Elo
    # puts no floor of elo1 under a pass: it is +inf when greedy won every game, or when
    # its margins' exchange rate puts its expected score at 1 or more (seen at a game score
    # of 0.84), and was +71 in one run at 0.97. What a pass does guarantee: an LLR above 0,
    # so an expected score above the hypotheses' midpoint (elo0 0, elo1 100: +49 Elo).
    compare = compare_view(store, names[0])
    assert compare.verdict == "passed" and compare.games == result.games
    assert compare.elo is not None and compare.low is not None
    assert elo_to_score(compare.elo) > (elo_to_score(0.0) + elo_to_score(100.0)) / 2
    # kept as figures: the estimate, or the bound of what its groups measure when the
    # estimate lies beyond it (infinite, or margins mapped past a score of 1), marked bounded
    assert _figure_of(result.elo, compare.elo) and _figure_of(result.low, compare.low)
    assert result.bounded == (result.elo != pytest.approx(compare.elo))
    assert 0.5 < (result.score or 0) <= 1 and 4 <= result.games <= 120
    # a match finishing later (or twice) changes nothing
    with store.read() as session:
        last = session.scalar(select(func.max(Match.id)))
    assign.grade_after_match(store, last or 0)
    assert assign.submission_view(store, ann, view.id) == graded


def test_a_broken_upload_rejects_the_submission(
    store: Store, actors: Actors, celery: Celery
) -> None:
    assign.create_assignment(store, actors["teach"], _new())
    ann = _account(actors, "ann")
    broken = (ZOO / "raise_in_move.py").read_bytes()
    view = submit_upload(store, ann, "c1", "hw1", "broken.py", broken)
    accept_upload(store, view.upload_id or 0, config=Config(), sandboxed=False)
    seen = assign.submission_view(store, ann, view.id)
    assert seen.status == "rejected" and seen.reason and "Rejected" in seen.reason
    assert seen.references == () and seen.grade is None
    with store.read() as session:
        assert session.scalar(select(func.count()).select_from(Tournament)) == 0
    rows = {r.student: r for r in assign.assignment_grades(store, actors["teach"], "c1", "hw1")}
    row = rows["ann"]
    assert row.version is None and row.grade is None and row.references == ()
    # rejected, not absent: a state of its own (the cause), 0 points; bob never submitted
    assert (row.state, row.points, row.submissions) == ("rejected: crash", 0.0, 1)
    assert (rows["bob"].state, rows["bob"].points) == ("not submitted", None)


def test_a_bot_that_fails_at_import_is_rejected_so(
    store: Store, actors: Actors, celery: Celery
) -> None:
    assign.create_assignment(store, actors["teach"], _new())
    ann = _account(actors, "ann")
    view = submit_upload(store, ann, "c1", "hw1", "b.py", (ZOO / "raise_at_import.py").read_bytes())
    [row] = [r for r in assign.assignment_grades(store, actors["teach"], "c1", "hw1")
             if r.student == "ann"]  # fmt: skip
    assert row.state == "checking" and row.points is None  # its check is queued
    accept_upload(store, view.upload_id or 0, config=Config(), sandboxed=False)
    [row] = [r for r in assign.assignment_grades(store, actors["teach"], "c1", "hw1")
             if r.student == "ann"]  # fmt: skip
    assert row.state == "rejected: crash at import" and row.points == 0.0


def test_a_decided_test_never_keeps_a_blank_elo(
    store: Store, actors: Actors, celery: Celery, tmp_path: Path
) -> None:
    """The fresh machine's "pass with an empty random_elo": a test whose submission wins
    (nearly) every game has an expected score of 1, an infinite Elo, which the summary kept
    as None. Here the reference forfeits every game (it raises each move): every group
    scores 1, the pass is certain and its Elo infinite. Its figure is the bound of what
    its groups measure, marked bounded, in the table and every export."""
    store.add_bot_version("reference", "broken", (ZOO / "raise_in_move.py").read_text(), {})
    assign.create_assignment(
        store, actors["teach"],
        _new(references=("reference/broken",), grades=(("C", ("broken",)), ("F", ())),
             max_games=60, elo1=100.0, batch=8, seed=SEED),
    )  # fmt: skip
    ann = _account(actors, "ann")
    store.add_bot_version("ann", "mine", GREEDY.decode(), {})
    view = assign.submit_version(store, ann, "c1", "hw1", "mine")
    _play(store, _tournaments(store, view.id), tmp_path)
    [result] = assign.submission_view(store, ann, view.id).references
    assert result.verdict == "pass"
    # the estimate's interval reaches a score of 1 (its top is infinite): the bound
    assert result.elo is not None and result.low is not None and result.high is not None
    bound = 400 * math.log10(2 * (result.games // 2) - 1)
    assert result.high == pytest.approx(bound) and result.low <= result.elo <= result.high
    [row] = [r for r in assign.assignment_grades(store, actors["teach"], "c1", "hw1")
             if r.student == "ann"]  # fmt: skip
    assert row.grade == "C" and row.points == 100.0 and row.state == "graded"
    [flat] = [r for r in grade_rows([row], ["broken"])]
    assert flat["broken_verdict"] == "pass" and flat["broken_elo"] == round(result.elo, 1)


def test_a_summary_kept_blank_before_reads_as_its_bound(
    store: Store, actors: Actors, celery: Celery, tmp_path: Path
) -> None:
    """A test decided before the figures were bounded kept None for an infinite Elo: it
    reads as the bound of its score all the same."""
    store.add_bot_version("reference", "broken", (ZOO / "raise_in_move.py").read_text(), {})
    assign.create_assignment(
        store, actors["teach"],
        _new(references=("reference/broken",), grades=(("C", ("broken",)), ("F", ())),
             max_games=40, elo1=100.0, batch=8, seed=SEED),
    )  # fmt: skip
    ann = _account(actors, "ann")
    store.add_bot_version("ann", "mine", GREEDY.decode(), {})
    view = assign.submit_version(store, ann, "c1", "hw1", "mine")
    _play(store, _tournaments(store, view.id), tmp_path)
    with store.write() as session:
        test = session.scalars(select(SubmissionTest)).one()
        test.summary = {**(test.summary or {}), "elo": None, "low": None, "high": None,
                        "bounded": False}  # fmt: skip
    [result] = assign.submission_view(store, ann, view.id).references
    assert result.verdict == "pass" and result.bounded
    assert result.elo is not None and result.low is not None and result.high is not None
    assert result.low <= result.elo <= result.high
    assert result.high == pytest.approx(400 * math.log10(2 * (result.games // 2) - 1))


def test_a_copy_of_a_reference_is_not_graded_as_beating_it(
    store: Store, actors: Actors, celery: Celery, tmp_path: Path
) -> None:
    """Random against random: the test must not pass it (undecided at the cap, or fail).
    H0 (0 Elo) is true, so a pass has chance at most alpha = 0.001."""
    assign.create_assignment(
        store, actors["teach"],
        _new(references=("reference/random",), grades=(("C", ("random",)), ("F", ())),
             max_games=40, elo1=200.0, alpha=0.001, batch=5, move_ms=2000),
    )  # fmt: skip
    bob = _account(actors, "bob")
    store.add_bot_version("bob", "copy", RANDOM.decode(), {})
    view = assign.submit_version(store, bob, "c1", "hw1", "copy")
    _play(store, _tournaments(store, view.id), tmp_path)
    graded = assign.submission_view(store, bob, view.id)
    assert graded.grade == "F" and graded.references[0].verdict in ("fail", "undecided")


def test_only_the_classes_students_submit(store: Store, actors: Actors, celery: Celery) -> None:
    assign.create_assignment(store, actors["teach"], _new())
    for who, error in (("teach", AssignmentError), ("stranger", NotFound),
                       ("anonymous", PermissionDenied)):  # fmt: skip
        with pytest.raises(error):
            submit_upload(store, actors[who], "c1", "hw1", "g.py", GREEDY)
    with pytest.raises(NotFound, match="no assignment 'hw9' in class c1"):
        submit_upload(store, actors["ann"], "c1", "hw9", "g.py", GREEDY)
    with pytest.raises(AssignmentError, match="name the student"):
        assign.submit_version(store, OPERATOR, "c1", "hw1", "greedy")
    with pytest.raises(NotFound, match="you have no bot called greedy"):
        assign.submit_version(store, OPERATOR, "c1", "hw1", "greedy", owner="ann")


def test_before_the_opening_nothing_is_taken(store: Store, actors: Actors, celery: Celery) -> None:
    assign.create_assignment(store, actors["teach"], _new(opens=NOW + timedelta(days=1)))
    with pytest.raises(AssignmentError, match="hw1 opens for submissions at"):
        submit_upload(store, actors["ann"], "c1", "hw1", "g.py", GREEDY, now=NOW)


def test_the_upload_quota_of_the_class_holds(store: Store, actors: Actors, celery: Celery) -> None:
    assign.create_assignment(store, actors["teach"], _new())
    ann = _account(actors, "ann")
    with pytest.raises(ClassError, match=r"queued full|uploads in the last hour"):
        for i in range(40):
            source = GREEDY + f"\n# {i}\n".encode()
            submit_upload(store, ann, "c1", "hw1", "g.py", source)


def test_the_kept_submission_is_the_last_before_the_deadline(
    store: Store, actors: Actors, celery: Celery
) -> None:
    assign.create_assignment(store, actors["teach"], _new())
    ann, bob = _account(actors, "ann"), _account(actors, "bob")
    for n in range(1, 4):
        store.add_bot_version("ann", "b", GREEDY.decode() + f"\n# {n}\n", {})
    store.add_bot_version("bob", "late", GREEDY.decode(), {})
    first = assign.submit_version(store, ann, "c1", "hw1", "b@1", now=NOW)
    second = assign.submit_version(store, ann, "c1", "hw1", "b@2", now=NOW)
    late = assign.submit_version(store, ann, "c1", "hw1", "b@3", now=NOW + timedelta(days=8))
    bobs = assign.submit_version(store, bob, "c1", "hw1", "late", now=NOW + timedelta(days=9))
    assert late.late and bobs.late and not second.late
    rows = {r.student: r for r in assign.assignment_grades(store, actors["teach"], "c1", "hw1")}
    assert set(rows) == {"ann", "bob"}
    assert rows["ann"].version == "ann/b@2" and not rows["ann"].late
    assert rows["ann"].grade is None  # still grading
    assert [r.verdict for r in rows["ann"].references] == ["running"] * 3
    assert rows["bob"].version == "bob/late@1" and rows["bob"].late
    mine = assign.assignment_view(store, ann, "c1", "hw1")
    assert [s.id for s in mine.submissions] == [late.id, second.id, first.id]
    assert [s.kept for s in mine.submissions] == [False, True, False]
    everyone = assign.assignment_view(store, actors["teach"], "c1", "hw1")
    assert everyone.teacher and len(everyone.submissions) == 4


def test_who_reads_what(store: Store, actors: Actors, celery: Celery) -> None:
    assign.create_assignment(store, actors["teach"], _new())
    store.add_bot_version("ann", "b", GREEDY.decode(), {})
    view = assign.submit_version(store, actors["ann"], "c1", "hw1", "b")
    for who in ("ann", "teach", "admin", "operator"):
        assert assign.submission_view(store, actors[who], view.id).id == view.id
    for who in ("bob", "other", "stranger", "anonymous"):
        with pytest.raises(NotFound):
            assign.submission_view(store, actors[who], view.id)
    for who, error in (("ann", PermissionDenied), ("other", NotFound),
                       ("anonymous", PermissionDenied)):  # fmt: skip
        with pytest.raises(error):
            assign.assignment_grades(store, actors[who], "c1", "hw1")
    with pytest.raises(NotFound):
        assign.assignment_view(store, actors["stranger"], "c1", "hw1")
    assert assign.assignment_view(store, actors["bob"], "c1", "hw1").submissions == ()
    rows = assign.assignment_grades(store, actors["admin"], "c1", "hw1")
    assert [r.student for r in rows] == ["ann", "bob"]


@pytest.mark.backends("sqlite", "postgresql")  # a grading claim
def test_the_sweep_settles_a_test_whose_worker_died_before_grading(
    store: Store, actors: Actors, celery: Celery, tmp_path: Path
) -> None:
    assign.create_assignment(
        store, actors["teach"],
        # the deals' seed fixed: which verdict a settled test reaches depends on the deals
        # (greedy's margin over random is some 40 Elo, so against elo1 200 it may fail)
        _new(references=("reference/random",), grades=(("C", ("random",)), ("F", ())),
             max_games=32, elo1=200.0, alpha=0.001, batch=8, move_ms=2000, seed=333158),
    )  # fmt: skip
    store.add_bot_version("ann", "g", GREEDY.decode(), {})
    view = assign.submit_version(store, actors["ann"], "c1", "hw1", "g")
    _play(store, _tournaments(store, view.id), tmp_path, grade=False)
    before = assign.submission_view(store, actors["ann"], view.id)
    assert before.status == "grading" and before.references[0].verdict == "running"
    assert before.references[0].games == 32
    assert assign.settle_tests(store) == 1
    after = assign.submission_view(store, actors["ann"], view.id)
    # settled: a verdict of the test's own, no longer "running", and the grade it gives
    assert after.status == "graded"
    assert after.references[0].verdict in ("pass", "fail", "undecided")
    assert after.grade == ("C" if after.references[0].verdict == "pass" else "F")
    assert assign.settle_tests(store) == 0  # nothing left to settle


@pytest.mark.backends("sqlite", "postgresql")  # a grading claim
def test_the_sweep_restarts_a_submission_left_half_settled(
    store: Store, actors: Actors, celery: Celery
) -> None:
    """A worker that died after claiming a submission for grading and before storing its
    tests (or before claiming a stored version's) left it stalled: the sweep starts its
    gauntlet again once it is old enough, and only once."""
    from arena.service.gauntlets import STALLED_SECONDS, restart_stalled
    from arena.store import assignments as stored

    row = assign.create_assignment(
        store, actors["teach"],
        _new(references=("reference/random",), grades=(("C", ("random",)), ("F", ()))),
    )  # fmt: skip
    version = store.add_bot_version("ann", "g", GREEDY.decode(), {})[0].id
    ann = actors["ann"]
    assert isinstance(ann, Account)
    claimed = stored.insert_submission(store, row.id, ann.id, upload_id=None, version_id=version,
                                       late=False)  # fmt: skip
    assert stored.claim_grading(store, claimed, version)  # ... and the worker died here
    never = stored.insert_submission(store, row.id, ann.id, upload_id=None, version_id=version,
                                     late=False)  # fmt: skip  # ... or here
    assert restart_stalled(store) == 0  # too recent: a worker may be on it
    later = datetime.now(UTC) + timedelta(seconds=STALLED_SECONDS + 1)
    assert restart_stalled(store, now=later) == 2
    for submission in (claimed, never):
        view = assign.submission_view(store, ann, submission)
        assert view.status == "grading" and len(_tournaments(store, submission)) == 1
    assert restart_stalled(store, now=later) == 0


# --- runtimes ---------------------------------------------------------------------------------

NUMPY_BOT = (REFERENCE_BOTS / "numpy_greedy.py").read_bytes()
JS_BOT = (ZOO / "first.js").read_bytes()


@pytest.mark.parametrize(
    ("filename", "data", "runtime", "version"),
    [
        ("np.py", NUMPY_BOT, "python-numpy", "ann/numpy-greedy@1"),
        ("first.js", JS_BOT, None, "ann/first@1"),
    ],
)
def test_a_submission_in_another_runtime_is_checked_and_graded_in_the_sandbox(
    store: Store,
    actors: Actors,
    celery: Celery,
    tmp_path: Path,
    filename: str,
    data: bytes,
    runtime: str | None,
    version: str,
) -> None:
    """A numpy bot under python-numpy and a JavaScript bot: checked in the sandbox, their
    gauntlet played in the sandbox under their runtime (a numpy bot under plain python
    fails at import: "No module named 'numpy'"), graded."""
    assign.create_assignment(
        store, actors["teach"],
        _new(references=("reference/random",), grades=(("C", ("random",)), ("F", ())),
             max_games=8, batch=4, seed=SEED),
    )  # fmt: skip
    ann = _account(actors, "ann")
    view = submit_upload(store, ann, "c1", "hw1", filename, data, runtime=runtime)
    assert accept_upload(store, view.upload_id or 0, config=Config()) == "accepted"
    _play(store, _tournaments(store, view.id), tmp_path, sandboxed=True)
    graded = assign.submission_view(store, ann, view.id)
    assert graded.status == "graded" and graded.grade in ("C", "F") and graded.version == version
    [result] = graded.references
    assert result.games == 8 and result.verdict in ("pass", "fail", "undecided")
    [row] = [r for r in assign.assignment_grades(store, actors["teach"], "c1", "hw1")
             if r.student == "ann"]  # fmt: skip
    assert row.state == "graded" and row.points in (100.0, 0.0)


def test_a_runtime_the_assignment_does_not_take_is_refused_in_a_sentence(
    store: Store, actors: Actors, celery: Celery
) -> None:
    assign.create_assignment(store, actors["teach"], _new(runtimes=("python",)))
    ann = _account(actors, "ann")
    with pytest.raises(
        AssignmentError,
        match=r"^assignment hw1 takes bots in python \(\.py files\): first\.js is not one\.$",
    ):
        submit_upload(store, ann, "c1", "hw1", "first.js", JS_BOT)
    with pytest.raises(
        AssignmentError,
        match=r"takes bots in python \(\.py files\): not python-numpy bots; choose one of python",
    ):
        submit_upload(store, ann, "c1", "hw1", "np.py", NUMPY_BOT, runtime="python-numpy")
    store.add_bot_version("ann", "js", JS_BOT.decode(), {}, runtime="javascript")
    with pytest.raises(AssignmentError, match="takes bots in python: js v1 is a javascript bot"):
        assign.submit_version(store, ann, "c1", "hw1", "js")
    with pytest.raises(AssignmentError, match="takes bots in python"):
        assign.submission_runtime(store, OPERATOR, "c1", "hw1", "bot.js")
    assert assign.submission_runtime(store, OPERATOR, "c1", "hw1", "bot.py") == "python"
    # a source stored before keeps its runtime: one the assignment does not take is refused
    assign.create_assignment(store, actors["teach"], _new(name="hw2", runtimes=("python-numpy",)))
    store.add_bot_version("ann", "numpy-greedy", NUMPY_BOT.decode(), {})  # as plain python
    with pytest.raises(
        AssignmentError,
        match=r"this source is already version 1 of your bot numpy-greedy, a python bot \(a "
        r"version's runtime never changes\); submit it as another bot\.",
    ):
        submit_upload(store, ann, "c1", "hw2", "np.py", NUMPY_BOT)  # python-numpy: its only


# --- the school's ids, from the roster --------------------------------------------------------


def test_the_rosters_school_ids_reach_the_gradebook_files(
    store: Store, actors: Actors, celery: Celery
) -> None:
    """A roster imported from the school's file keeps each student's id (else e-mail) and
    section: the grade table carries them, Canvas's file has the SIS User ID and section,
    Moodle's matches by ID number or by e-mail; a student who joined by code has none."""
    from arena.service.classes import import_roster
    from arena.service.gradebooks import canvas_csv, moodle_csv

    roster = (  # Moodle's participants, with a group
        "First name,Last name,ID number,Email address,Group\n"
        "Inés,Núñez,S-7,ines@school.example,5B\n"
        "Pat,Roe,,pat@school.example,5B\n"
    )
    imported = import_roster(store, actors["teach"], "c1", roster, HASHER)
    assert len(imported.logins) == 2
    assign.create_assignment(store, actors["teach"], _new())
    rows = {r.real_name or r.student: r for r in
            assign.assignment_grades(store, actors["teach"], "c1", "hw1")}  # fmt: skip
    ines = rows["Inés Núñez"]
    assert (ines.school_id, ines.email, ines.section) == ("S-7", None, "5B")
    # the roster keeps one id: Pat's is the e-mail, which Moodle matches by e-mail
    assert (rows["Pat Roe"].school_id, rows["Pat Roe"].email) == (None, "pat@school.example")
    assert (rows["ann"].school_id, rows["ann"].section) == (None, None)  # joined by code
    canvas = canvas_csv(list(rows.values()), "hw1", 100.0)
    assert "Inés Núñez,,S-7,,5B,\r\n" in canvas
    by_id, left_out = moodle_csv(list(rows.values()), "hw1", "idnumber")
    assert "ann: no school id known" in left_out and "S-7" not in by_id  # no grade yet
    assert any(line.startswith(f"{rows['Inés Núñez'].student}: not submitted") for line in left_out)
