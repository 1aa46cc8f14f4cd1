"""arena.service.rule_sets: every rule set by its reference (a preset; a stored custom one by
NAME or, where two share a name, NAME@VERSION), its files read back to the same rules, and
a compare started under a custom rule set (the web's, the API's and `arena remote push`'s
path), an unknown name refused in a sentence."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.engine.rules import PRESETS, Rules, find_rules, parse_rules, rules_from_document
from arena.errors import NotFound
from arena.service.accounts import create_account, password_hasher
from arena.service.compare_views import CompareRequest, compare_view, start_compare
from arena.service.rule_sets import (
    find_rules as find_stored,
)
from arena.service.rule_sets import (
    reference_of,
    rule_file,
    rule_file_name,
    rule_set_list,
    rule_set_view,
)
from arena.store.db import Store
from tests.paths import REFERENCE_BOTS, ZOO
from tests.service.conftest import Recorder

CUP = rules_from_document(
    {
        "name": "cup",
        "base": "draw",
        "players": [2, 3],
        "target": 60,
        "description": "Draw to 60, for 2 or 3.",
    }
)
#: Another organiser's rule set of the same name, stored later: ``cup`` names it now.
CUP_TOO = rules_from_document({"name": "cup", "base": "block", "target": 30})
ROUNDS = rules_from_document({"name": "rounds5", "base": "wooden", "best_of": 5})


@pytest.mark.parametrize(
    "rules",
    [*PRESETS.values(), find_rules("block-and-draw", draw_limit=None), CUP, ROUNDS],
    ids=lambda r: f"{r.name}-{r.version}",
)
def test_a_rule_file_reads_back_to_the_same_rules(rules: Rules, tmp_path: Path) -> None:
    for kind in ("toml", "json"):
        path = tmp_path / rule_file_name(rules, kind)
        path.write_text(rule_file(rules, kind), encoding="utf-8")
        back = parse_rules(path.read_text(encoding="utf-8"), str(path))
        assert back == rules and back.version == rules.version, kind
        assert back.description == rules.description


def test_rule_sets_by_reference(store: Store) -> None:
    assert find_stored(store, "muggins") is PRESETS["muggins"]  # never stored: still a page
    for rules in (CUP, find_rules("draw", target=50), CUP_TOO):
        store.ensure_rule_set(rules)
    assert find_stored(store, "cup") == CUP_TOO  # the newest of the name
    assert find_stored(store, f"cup@{CUP.version}") == CUP
    assert reference_of(store, CUP) == f"cup@{CUP.version}"
    assert reference_of(store, CUP_TOO) == "cup"
    assert find_stored(store, "draw") is PRESETS["draw"]  # the preset, not the override
    overridden = f"draw@{find_rules('draw', target=50).version}"
    assert find_stored(store, overridden) == find_rules("draw", target=50)
    listed = [r.reference for r in rule_set_list(store)]
    assert listed == [*PRESETS, "cup", f"cup@{CUP.version}", overridden]
    view = rule_set_view(store, f"cup@{CUP.version}")
    assert view.summary.players == "2-3" and view.summary.end == "first to 60"
    assert view.others == ("cup",) and view.competitions == ()
    assert {p.name: p.value for p in view.parameters}["target"] == 60
    assert rule_set_view(store, overridden).others == ("draw",)
    for unknown in ("chess", "CUP", "cup@0000000000000000", "x" * 200, "", "draw@zz"):
        with pytest.raises(NotFound, match=r"no rule set called .*: a preset \(block, draw"):
            find_stored(store, unknown)


def test_a_compare_under_a_custom_rule_set(store: Store, recorder: Recorder) -> None:
    alice = create_account(store, "alice", "correct horse", hasher=password_hasher(cheap=True))
    store.add_bot_version("alice", "greedy", (REFERENCE_BOTS / "greedy.py").read_text(), {})
    store.add_bot_version("bob", "first", (ZOO / "first.py").read_text(), {})
    store.ensure_rule_set(CUP)
    wanted = CompareRequest(
        new="alice/greedy", old="bob/first", rules="cup", players=3, max_games=6
    )
    started = start_compare(store, alice, wanted)
    view = compare_view(store, started.name)
    assert (view.rules, view.players) == ("cup", 3)
    assert recorder.sent  # its first batch went to the workers
    with pytest.raises(NotFound, match="no rule set called 'chess'"):
        start_compare(store, alice, CompareRequest(new="alice/greedy", old="bob/first",
                                                   rules="chess"))  # fmt: skip
