"""The similarity engine on plain sources (arena.service.similarity): copies found through
renamed names, with the matching lines of each side; the reference bots and the starter bot
left out as boilerplate; independent bots not reported."""

from __future__ import annotations

import random
import time

from arena.match.newbot import starter_bot
from arena.service.similarity import boilerplate, compare_sources, line_ranges
from tests.paths import REFERENCE_BOTS

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
