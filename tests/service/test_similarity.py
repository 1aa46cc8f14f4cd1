"""The similarity engine on plain sources (arena.service.similarity): copies found through
renamed names, with the matching lines of each side; the reference bots and the starter bot
left out as boilerplate; independent bots not reported. Then a class's report on both
databases: the students' latest versions, cached by the versions compared, for the class's
teachers only."""

from __future__ import annotations

import random
import time

import pytest

from arena.errors import NotFound, PermissionDenied
from arena.match.newbot import starter_bot
from arena.service import classes as cls
from arena.service.accounts import create_account, password_hasher
from arena.service.classes import ClassError, NewClass
from arena.service.permissions import OPERATOR, Actor
from arena.service.similarity import (
    boilerplate,
    compare_sources,
    line_ranges,
    similarity_report,
)
from arena.store.db import Store
from tests.paths import REFERENCE_BOTS
from tests.submissions import submitted

HASHER = password_hasher(cheap=True)
PASSWORD = "correct horse"

#: A bot of its own (none of the reference bots): scores moves by pips, doubles, ends.
OWN = """NAME = "mine"


def score_move(observation, move):
    hand = observation.hand
    value = move.tile.high + move.tile.low
    doubles = sum(1 for t in hand if t.high == t.low)
    if move.tile.high == move.tile.low:
        value += 3 + doubles
    ends = observation.ends or (None, None)
    for end in ends:
        if end is not None and end in (move.tile.high, move.tile.low):
            value += 1
    counts = {}
    for t in hand:
        counts[t.high] = counts.get(t.high, 0) + 1
        counts[t.low] = counts.get(t.low, 0) + 1
    value += max(counts.values(), default=0) * 0.5
    return value


def play(observation):
    moves = list(observation.legal_moves)
    best = moves[0]
    best_value = -1
    for move in moves:
        value = score_move(observation, move)
        if value > best_value:
            best, best_value = move, value
    return best
"""

#: Another bot of its own, unlike OWN.
OTHER = """import random

NAME = "other"


def play(obs):
    options = sorted(obs.legal_moves, key=lambda m: (m.tile.high == m.tile.low, m.tile.high))
    if random.random() < 0.1:
        return random.choice(options)
    return options[-1]
"""


#: What a copier adds of its own at the end.
TAIL = """

def unused_helper(numbers):
    return sorted(set(numbers), reverse=True)[:3] or [0] * len(numbers)
"""


def _renamed(source: str) -> str:
    """``source`` with its names changed and comments added: what a copier does."""
    for old, new in (("value", "v"), ("best", "top"), ("counts", "tally"), ("score_move", "rate")):
        source = source.replace(old, new)
    return source.replace("def play", "# my own work\ndef play") + TAIL


def test_a_copy_with_renamed_names_is_found_with_its_lines() -> None:
    copy = _renamed(OWN)
    pairs = compare_sources({"ann": OWN, "bob": copy, "cy": OTHER}, threshold=0.5)
    assert [(p.a, p.b) for p in pairs] == [("ann", "bob")]
    pair = pairs[0]
    assert pair.score == pair.side_a.similarity > 0.9  # all of OWN is in the copy
    assert 0.75 < pair.side_b.similarity < 0.9  # the copy has its helper too
    # every line of code on both sides, the comment line and blank lines aside
    assert pair.side_a.lines[0][0] == 1 and pair.side_a.lines[-1][1] == len(OWN.splitlines())
    # the comment in the middle is inside the marked run; the helper added is not
    assert pair.side_b.lines == ((1, len(copy.splitlines()) - len(TAIL.splitlines())),)


def test_a_pasted_part_scores_on_the_side_it_fills() -> None:
    both = OWN + "\n\n" + OTHER.replace('NAME = "other"', "")
    (pair,) = compare_sources({"small": OTHER, "big": both}, threshold=0.5)
    # nearly all of small is in big (its import is greedy's too: boilerplate)
    assert pair.side_a.similarity > 0.75 and pair.side_b.similarity < 0.5
    first = len(OWN.splitlines()) + 2
    assert all(first <= a for a, _ in pair.side_b.lines)  # only the pasted part is marked


def test_the_reference_bots_and_the_starter_bot_are_boilerplate() -> None:
    names = {name for name, _ in boilerplate()}
    assert {"greedy.py", "counter.py", "random.py", "arena new-bot"} <= names
    greedy = (REFERENCE_BOTS / "greedy.py").read_text()
    montecarlo = (REFERENCE_BOTS / "montecarlo.py").read_text()
    sources = {
        1: greedy,
        2: greedy.replace("def ", "def  ") + "\n# tuned\n",
        3: starter_bot("alpha"),
        4: starter_bot("beta"),
        5: montecarlo,
        6: montecarlo.replace("observation", "obs"),
    }
    assert compare_sources(sources, threshold=0.1) == []
    # a copy of a student's own work that also starts from greedy is still found
    mine = greedy + "\n\n" + OWN.replace("def play", "def play_mine")
    (pair,) = compare_sources({1: mine, 2: _renamed(mine)}, threshold=0.5)
    assert pair.score > 0.9
    start = len(greedy.splitlines())  # its last line joins the next k-gram: marked
    assert all(a >= start for a, _ in pair.side_a.lines)  # greedy's other lines are not


def test_a_class_of_30_is_compared_in_well_under_a_second_a_pair() -> None:
    rng = random.Random(5)
    pool = [OWN, _renamed(OWN), OTHER] + [
        (REFERENCE_BOTS / f"{n}.py").read_text() for n in ("greedy", "counter", "montecarlo")
    ]
    students = {
        i: rng.choice(pool)
        + "".join(f"\n\ndef extra_{i}_{j}(x):\n    return x * {i} + {j}\n" for j in range(3))
        for i in range(30)
    }
    compare_sources({0: OWN})  # the boilerplate's fingerprints, made once a process
    began = time.perf_counter()
    pairs = compare_sources(students, threshold=0.5)
    took = time.perf_counter() - began
    assert took < 20, took  # 435 pairs: ~0.4 s here, alone
    own = {i for i, s in students.items() if s.startswith('NAME = "mine"')}
    assert {(p.a, p.b) for p in pairs} >= {(a, b) for a in own for b in own if a < b}


def test_line_ranges_merge_and_drop_the_whitespace_around_slices() -> None:
    text = "a = 1\n\n    b = 2\nc = 3\nd = 4\n"
    assert line_ranges(text, [0, 7], [6, 16]) == ((1, 3),)  # across a blank line
    assert line_ranges(text, [0, 7], [6, 18]) == ((1, 4),)
    assert line_ranges(text, [0, 23], [5, 28]) == ((1, 1), (5, 5))
    assert line_ranges(text, [5], [11]) == ()  # whitespace only


# --- a class's report (arena.service.similarity.similarity_report) ----------------------------

#: Who asks for the report; "teacher" teaches 5b, "teacher2" another class, "ann" and
#: "bob" are students of 5b.
ASKERS = ("anonymous", "user", "ann", "teacher", "teacher2", "admin", "operator")


def make_class(store: Store) -> dict[str, Actor]:
    """Class 5b (teacher ``teacher``) with students ann (OWN), bob (OWN renamed: a copy),
    cy (OTHER), dan (greedy: boilerplate), eve (no bot); ann's older version is OTHER
    (only the latest counts); class 6a (``teacher2``); a user, an admin."""
    made: dict[str, Actor] = {"anonymous": None, "operator": OPERATOR}
    for name, role in (("user", "user"), ("teacher", "teacher"), ("teacher2", "teacher"),
                       ("admin", "admin")):  # fmt: skip
        made[name] = create_account(store, name, PASSWORD, role=role, hasher=HASHER)
    row = cls.create_class(store, made["teacher"], NewClass(name="5b"))
    cls.create_class(store, made["teacher2"], NewClass(name="6a"))
    assert row.join_code is not None
    for student in ("ann", "bob", "cy", "dan", "eve"):
        made[student] = cls.join_class(store, HASHER, row.join_code, student, PASSWORD, "Real")
    greedy = (REFERENCE_BOTS / "greedy.py").read_text()
    store.add_bot_version("ann", "mine", OTHER + "\n# old\n", {})
    store.add_bot_version("ann", "mine", OWN, {})
    store.add_bot_version("bob", "copied", _renamed(OWN), {})
    store.add_bot_version("cy", "other", OTHER, {})
    store.add_bot_version("dan", "greedy", greedy.replace("def ", "def  "), {})
    store.add_bot_version("user", "mine", OWN, {})  # not in the class: never compared
    # what is compared is what was submitted to the class (issue 30): a teacher reads no
    # other bot of a student's
    for owner, bot in (("ann", "mine"), ("bob", "copied"), ("cy", "other"), ("dan", "greedy")):
        submitted(store, "5b", owner, bot)
    return made


def test_a_teacher_sees_the_copied_pair_only(store: Store) -> None:
    actors = make_class(store)
    report = similarity_report(store, actors["teacher"], "5b")
    assert (report.class_name, report.students, report.compared) == ("5b", 5, 4)
    assert [(p.a.student, p.b.student) for p in report.pairs] == [("ann", "bob")]
    (pair,) = report.pairs
    assert pair.a.version == "ann/mine v2" and pair.b.version == "bob/copied v1"
    assert pair.a.lines == ((1, len(OWN.splitlines())),)
    assert set(report.sources) == {pair.a.version_id, pair.b.version_id}
    assert report.sources[pair.a.version_id] == OWN
    again = similarity_report(store, actors["teacher"], "5b", threshold=0.0)
    assert again.cached and again.seconds == report.seconds  # the same versions: cached
    assert {(p.a.student, p.b.student) for p in again.pairs} >= {("ann", "bob")}
    assert all(p.score > 0 for p in again.pairs)
    with pytest.raises(ClassError, match="the threshold is a share from 0 to 1"):
        similarity_report(store, actors["teacher"], "5b", threshold=1.5)


def test_a_new_version_is_compared_and_the_cache_follows_it(store: Store) -> None:
    actors = make_class(store)
    first = similarity_report(store, actors["admin"], "5b")
    store.add_bot_version("cy", "other", _renamed(OWN) + "\n# mine now\n", {})
    store.add_bot_version("cy", "unsent", OWN + "\n# never submitted\n", {})
    submitted(store, "5b", "cy", "other")
    second = similarity_report(store, actors["admin"], "5b")
    # (cached only if this process compared these very versions before: the test on the
    # other database did, with the same ids and sources)
    assert similarity_report(store, actors["admin"], "5b").cached
    assert len(first.pairs) == 1 and {(p.a.student, p.b.student) for p in second.pairs} == {
        ("ann", "bob"),
        ("ann", "cy"),
        ("bob", "cy"),
    }


def test_only_the_classes_teachers_admins_and_the_operator_see_it(store: Store) -> None:
    actors = make_class(store)
    said = {}
    for name in ASKERS:
        try:
            similarity_report(store, actors[name], "5b")
        except PermissionDenied:
            said[name] = "denied"
        except NotFound:
            said[name] = "hidden"
        else:
            said[name] = "ok"
    assert said == {
        "anonymous": "denied",
        "user": "hidden",
        "ann": "denied",
        "teacher": "ok",
        "teacher2": "hidden",
        "admin": "ok",
        "operator": "ok",
    }
    with pytest.raises(NotFound):
        similarity_report(store, actors["teacher"], "nope")
