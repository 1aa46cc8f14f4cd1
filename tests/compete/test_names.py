"""The grammar of names and references (arena.compete.names)."""

from __future__ import annotations

import pytest

from arena.compete.entrants import Entrant
from arena.compete.names import MAX_NAME, Reference, check_name, fit_name, parse_reference
from arena.errors import ParseError


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("counter", Reference("counter", None, "counter", None)),
        ("counter@2", Reference("counter-v2", None, "counter", 2)),
        ("counter@v2", Reference("counter-v2", None, "counter", 2)),
        ("alice/counter@v12", Reference("counter-v12", "alice", "counter", 12)),
        ("c=alice/counter", Reference("c", "alice", "counter", None)),
        ("héllo", Reference("héllo", None, "héllo", None)),
        ("zoe\u0308/he\u0301llo", Reference("héllo", "zoë", "héllo", None)),
    ],
)
def test_references(spec: str, expected: Reference) -> None:
    assert parse_reference(spec) == expected


@pytest.mark.parametrize(
    "spec", ["", "/x", "a/", "@2", "x@", "x@0", "x@v", "x@2.5", "=x", "a b", "a/b/c", "x" * 65]
)
def test_malformed_references_are_refused(spec: str) -> None:
    with pytest.raises(ParseError):
        parse_reference(spec)


def test_check_name_normalises_and_bounds() -> None:
    assert check_name("\uff41bc") == "abc"
    assert check_name("a" * MAX_NAME) == "a" * MAX_NAME
    with pytest.raises(ParseError, match="not a valid name: use 1-64"):
        check_name("a" * (MAX_NAME + 1))


def test_fit_name_always_gives_a_valid_name() -> None:
    long = "compare " + "x" * 90 + " v " + "y" * 90 + " draw seed 7"
    fitted = fit_name(long)
    assert len(fitted) == MAX_NAME and check_name(fitted) == fitted
    assert fit_name(long) == fitted and fit_name(long + "!") != fitted
    assert fit_name("compare a/b@2 v c") == "compare-a-b-2-v-c"
    assert fit_name("///") == "x"


def test_local_labels_are_names_in_any_script() -> None:
    """``LABEL=SPEC`` for local tournaments: a Unicode label needs no ASCII."""
    assert Entrant.parse("héllo=bots/greedy.py").label == "héllo"
    assert Entrant.parse("héllo=bots/greedy.py").seat() == "bots/greedy.py"
    assert Entrant.parse("bots/héllo.py").label == "héllo"
