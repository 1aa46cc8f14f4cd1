"""web.forms: the sentences the forms' errors are shown as."""

from __future__ import annotations

import pytest

from web.forms import sentence


@pytest.mark.parametrize(
    ("message", "shown"),
    [
        ("choose at least two bots", "Choose at least two bots."),
        ("games must be 1 to 1000, not 0.", "Games must be 1 to 1000, not 0."),
        ("broken.py: line 3: invalid syntax", "broken.py: line 3: invalid syntax."),
        ("alice/greedy has no version 9", "alice/greedy has no version 9."),
        ("move_ms must be a whole number", "move_ms must be a whole number."),
        ("elo1 must be a number, not 'lots'", "Elo1 must be a number, not 'lots'."),
        ("'x.py' is not UTF-8 text", "'x.py' is not UTF-8 text."),
    ],
)
def test_a_message_becomes_a_sentence_and_names_keep_their_case(message: str, shown: str) -> None:
    assert sentence(message) == shown
