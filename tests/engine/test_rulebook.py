"""arena.engine.rulebook: each parameter's meaning (one source for `arena rules` and the
rules' pages), and a rule set as a file's document that reads back to equal rules (a
preset's too: a file named like a preset is that preset, with RULES.md's overrides only)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from arena.engine.rulebook import parameters, rule_document
from arena.engine.rules import PRESETS, Rules, find_rules, rules_from_document
from arena.errors import RulesError

#: A custom rule set, won by rounds (its ``target`` unused), and overridden presets.
CUSTOM = rules_from_document(
    {
        "name": "cup-rounds",
        "base": "wooden",
        "players": [2, 3],
        "best_of": 5,
        "description": "Wooden, best of 5, for 2 or 3.",
    }
)
OVERRIDDEN = [find_rules("draw", target=50), find_rules("block-and-draw", draw_limit=None)]


@pytest.mark.parametrize(
    "rules", [*PRESETS.values(), *OVERRIDDEN, CUSTOM], ids=lambda r: f"{r.name}-{r.version}"
)
def test_a_document_reads_back_to_the_same_rules(rules: Rules) -> None:
    for toml in (False, True):
        document = json.loads(json.dumps(rule_document(rules, toml=toml)))
        back = rules_from_document(document)
        assert back == rules and back.version == rules.version
        assert back.is_preset == rules.is_preset
    assert None not in rule_document(rules, toml=True).values()  # TOML has no null


def test_a_file_named_like_a_preset_may_change_only_its_overrides() -> None:
    assert rules_from_document({"name": "draw"}) is PRESETS["draw"]
    assert rules_from_document({"name": "muggins", "target": 31}) == find_rules(
        "muggins", target=31
    )
    refused: list[tuple[dict[str, Any], str]] = [
        ({"name": "draw", "hand_size": 6}, "'draw' is a preset's name; name your rule set"),
        ({"name": "draw", "base": "block"}, "'draw' is a preset's name; name your rule set"),
        ({"name": "block", "draw_limit": 3}, "block takes no draw_limit"),  # block-and-draw's
    ]
    for document, message in refused:
        with pytest.raises(RulesError, match=message):
            rules_from_document(document)


def test_every_parameter_has_a_meaning_in_words() -> None:
    for rules in [*PRESETS.values(), CUSTOM]:
        found = parameters(rules)
        assert [p.name for p in found] == list(rules.params())
        assert all(p.meaning for p in found)
    meanings = {p.name: p.meaning for p in parameters(PRESETS["muggins"])}
    assert meanings["in_play"].startswith("after each tile, open ends adding up to a multiple")
    assert meanings["end"] == "the first to 61 points wins the game"
    wooden = {p.name: p.meaning for p in parameters(PRESETS["wooden"])}
    assert wooden["end"] == "the first to win 2 rounds (best of 3) wins"
    assert {p.name: p.meaning for p in parameters(CUSTOM)}["target"] == "not used"
