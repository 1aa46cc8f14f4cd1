"""Classes (issue 22) as an attacker and a careless user would use them: hostile rosters,
guessed names and ids, inputs that must cost only their sender. Each test failed before
the fix it names."""

from __future__ import annotations

import pytest

from arena.service.class_roster import parse_roster
from arena.service.classes import ClassError


def test_a_roster_with_a_field_past_csvs_limit_is_one_sentence() -> None:
    # csv's field limit is 128 KiB: a pasted roster of one long line (the web's form takes
    # up to 1 MiB) raised csv.Error, a server error.
    with pytest.raises(ClassError, match="not a CSV"):
        parse_roster("a" * 200_000)
