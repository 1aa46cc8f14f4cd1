"""Rule sets: the seven presets of RULES.md, overrides, custom rule sets and version hashes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from arena.engine.rules import (
    PRESETS,
    GameEnd,
    InPlay,
    Lead,
    Rules,
    Scoring,
    find_rules,
    load_rules,
)
from arena.errors import ParseError, RulesError

# RULES.md "Presets" table, one row per preset: players, hand size by player count,
# reserve (tiles that may never be drawn) by player count, tiles a player may draw per
# turn (0 never, None until playable), blocked-round scoring, in-play points, end, target.
PRESET_TABLE: dict[str, dict[str, Any]] = {
    "block": {
        "players": (2, 3, 4),
        "hand": {2: 7, 3: 5, 4: 5},
        "reserve": {2: 0, 3: 0, 4: 0},
        "draw_limit": 0,
        "scoring": Scoring.OPPONENTS_MINUS_OWN,
    },
    "draw": {
        "players": (2, 3, 4),
        "hand": {2: 7, 3: 5, 4: 5},
        "reserve": {2: 2, 3: 1, 4: 1},
        "draw_limit": None,
        "scoring": Scoring.OPPONENTS_MINUS_OWN,
    },
    "muggins": {
        "players": (2, 3, 4),
        "hand": {2: 5, 3: 5, 4: 5},
        "reserve": {2: 2, 3: 1, 4: 1},
        "draw_limit": None,
        "scoring": Scoring.ROUNDED_FIVES,
        "in_play": InPlay.FIVES,
        "team_play": True,
        "target": 61,
    },
    "giant": {
        "players": (2, 3, 4),
        "hand": {2: 5, 3: 5, 4: 5},
        "reserve": {2: 0, 3: 0, 4: 0},
        "draw_limit": None,
        "scoring": Scoring.POSITIVE_DIFFERENCES,
    },
    "block-and-draw": {
        "players": (2, 3, 4, 5),
        "hand": {2: 7, 3: 7, 4: 5, 5: 5},
        "reserve": {2: 0, 3: 0, 4: 0, 5: 0},
        "draw_limit": 3,
        "scoring": Scoring.DIFFERENCES,
    },
    "wooden": {
        "players": (2, 3, 4),
        "hand": {2: 7, 3: 5, 4: 5},
        "reserve": {2: 0, 3: 0, 4: 0},
        "draw_limit": None,
        "lead": Lead.DRAW_FOR_LEAD,
        "scoring": Scoring.ROUND_WINS,
        "end": GameEnd.ROUNDS,
        "target": None,
        "best_of": 3,
    },
    "three-minute": {
        "players": (2, 3, 4),
        "hand": {2: 5, 3: 7, 4: 7},
        "reserve": {2: 0, 3: 0, 4: 0},
        "draw_limit": None,
        "scoring": Scoring.OPPONENTS_MINUS_OWN,
    },
}

#: Version hashes of the presets as first published: a game record names its rules by
#: this hash, so it must never change for the same parameters.
GOLDEN_VERSIONS = {
    "block": "b2732041b78a6cca",
    "draw": "c00b3645860579bf",
    "muggins": "a89d66440d0f6a47",
    "giant": "c5c4d81d971a6a70",
    "block-and-draw": "3ffab75c69f9cd1a",
    "wooden": "679f17275d4d95a0",
    "three-minute": "e73dc4682f499e22",
}


def test_exactly_the_seven_presets_exist() -> None:
    """RULES.md: every preset must exist, by this exact name."""
    assert sorted(PRESETS) == sorted(PRESET_TABLE)
    for name, rules in PRESETS.items():
        assert rules.name == name == str(rules)
        assert find_rules(name) is rules
        assert rules.is_preset
        assert rules.description


@pytest.mark.parametrize("name", sorted(PRESET_TABLE))
def test_preset_parameters_match_rules_md(name: str) -> None:
    """Each preset has the players, hand sizes, reserve, draw rule, scoring and end of RULES.md."""
    expected = PRESET_TABLE[name]
    rules = find_rules(name)
    assert rules.max_pip == 6 and rules.tile_count == 28
    assert rules.players == expected["players"]
    for players in rules.players:
        assert rules.hand_size(players) == expected["hand"][players]
        assert rules.reserve(players) == expected["reserve"][players]
    assert rules.draw_limit == expected["draw_limit"]
    assert rules.draws == (expected["draw_limit"] != 0)
    assert rules.lead is expected.get("lead", Lead.HIGHEST_DOUBLE)
    assert rules.scoring is expected["scoring"]
    assert rules.in_play is expected.get("in_play", InPlay.NONE)
    assert rules.team_play is expected.get("team_play", False)
    assert rules.end is expected.get("end", GameEnd.POINTS)
    assert rules.target == expected.get("target", 100)
    assert rules.best_of == expected.get("best_of")


def test_wooden_is_won_by_two_round_wins() -> None:
    """Wooden: best of 3, the first to win best_of // 2 + 1 = 2 rounds."""
    assert find_rules("wooden").wins_needed == 2
    assert find_rules("wooden", best_of=5).wins_needed == 3
    assert find_rules("muggins").wins_needed == 61


def test_unknown_preset_names_the_presets() -> None:
    """find_rules rejects an unknown name, naming it and listing the presets."""
    with pytest.raises(RulesError) as info:
        find_rules("dominoes")
    message = str(info.value)
    assert "'dominoes'" in message
    assert all(name in message for name in PRESETS)


@pytest.mark.parametrize("name", sorted(PRESET_TABLE))
@pytest.mark.parametrize("max_pip", [9, 12])
def test_bigger_sets_keep_hand_sizes_and_reserve(name: str, max_pip: int) -> None:
    """RULES.md: hand sizes and the boneyard reserve stay the preset's on bigger sets."""
    preset = find_rules(name)
    rules = find_rules(name, max_pip=max_pip)
    assert rules.max_pip == max_pip
    assert rules.tile_count == {9: 55, 12: 91}[max_pip]
    assert rules.hand_sizes == preset.hand_sizes
    assert rules.reserves == preset.reserves
    assert rules.name == name
    assert not rules.is_preset
    assert rules.version != preset.version


@pytest.mark.parametrize("max_pip", [5, 7, 13, "9"])
def test_preset_max_pip_must_be_6_9_or_12(max_pip: object) -> None:
    """RULES.md: presets accept max_pip 6, 9 or 12."""
    with pytest.raises(RulesError, match="max_pip must be 6, 9 or 12"):
        find_rules("draw", max_pip=max_pip)


def test_target_override() -> None:
    """Block's target is a parameter (seed 001: 100 or 200)."""
    rules = find_rules("block", target=200)
    assert rules.target == rules.wins_needed == 200
    for bad in (0, -5, "100", True, 1.5):
        with pytest.raises(RulesError, match=f"target must be a whole number.*{bad!r}"):
            find_rules("block", target=bad)


def test_target_and_best_of_belong_to_their_end_condition() -> None:
    """Wooden is won by rounds (best_of), the others by points (target)."""
    with pytest.raises(RulesError, match="wooden is won by rounds: set best_of"):
        find_rules("wooden", target=100)
    with pytest.raises(RulesError, match="block is won by points: set target"):
        find_rules("block", best_of=3)
    assert find_rules("wooden", best_of=5).best_of == 5
    with pytest.raises(RulesError, match="best_of must be odd, not 4"):
        find_rules("wooden", best_of=4)


def test_draw_limit_override() -> None:
    """RULES.md: draw_limit is block-and-draw's override, 3 (default) or unlimited (seed 002's
    variation); other presets take none."""
    assert find_rules("block-and-draw").draw_limit == 3
    unlimited = find_rules("block-and-draw", draw_limit=None)
    assert unlimited.draw_limit is None
    assert unlimited.draws
    assert unlimited.version != find_rules("block-and-draw").version
    assert find_rules("block-and-draw", draw_limit="unlimited") == unlimited
    for name in ("block", "draw", "giant"):
        with pytest.raises(RulesError, match=f"{name} takes no draw_limit"):
            find_rules(name, draw_limit=3)
    for value in (0, 2, 4, "3"):
        with pytest.raises(RulesError, match=r"block-and-draw's draw_limit is 3 or unlimited"):
            find_rules("block-and-draw", draw_limit=value)


@pytest.mark.parametrize("key", ["hand_size", "reserve", "players", "lead", "scoring", "teams"])
def test_presets_take_only_the_documented_overrides(key: str) -> None:
    """RULES.md: a preset accepts max_pip, target, best_of and draw_limit only."""
    with pytest.raises(RulesError, match=f"preset 'draw' does not take '{key}'"):
        find_rules("draw", **{key: 3})


def test_no_overrides_is_the_preset_itself() -> None:
    """Overriding nothing returns the preset unchanged."""
    assert find_rules("giant").with_overrides() is PRESETS["giant"]


@pytest.mark.parametrize("name", sorted(PRESET_TABLE))
def test_player_counts_are_checked(name: str) -> None:
    """Each preset allows only its player counts; the message names the count."""
    rules = find_rules(name)
    for players in rules.players:
        rules.check_players(players)
    for players in (1, max(rules.players) + 1):
        with pytest.raises(RulesError, match=f"not {players}"):
            rules.check_players(players)
        with pytest.raises(RulesError):
            rules.hand_size(players)


def test_only_muggins_has_teams_and_only_with_four() -> None:
    """RULES.md muggins: with 4 players, seats 0 and 2 play against 1 and 3."""
    find_rules("muggins").check_players(4, teams=True)
    with pytest.raises(RulesError, match="muggins has no team play with 3 players"):
        find_rules("muggins").check_players(3, teams=True)
    for name in PRESETS:
        if name != "muggins":
            with pytest.raises(RulesError, match="team play: muggins with 4 players"):
                find_rules(name).check_players(4, teams=True)


# --- custom rule sets ---------------------------------------------------------------


def params_of(name: str, **changes: Any) -> dict[str, Any]:
    """Return a preset's parameters with ``changes``."""
    return find_rules(name).params() | changes


@pytest.mark.parametrize("name", sorted(PRESET_TABLE))
def test_params_round_trip(name: str) -> None:
    """A preset's params() rebuild the same rule set, through JSON too."""
    preset = find_rules(name)
    assert Rules.from_params(name, preset.params()) == preset
    assert Rules.from_params(name, json.loads(json.dumps(preset.params()))) == preset
    copy = Rules.from_params("my-copy", preset.params())
    assert copy.version == preset.version
    assert not copy.is_preset


def test_custom_rule_set_from_params() -> None:
    """A custom rule set is built from the same parameters, no new code."""
    rules = Rules.from_params(
        "tiny",
        params_of("draw", max_pip=3, players=[2], hand_size={"2": 3}, reserve={"2": 1}),
        description="double-three for teaching",
    )
    assert (rules.max_pip, rules.players, rules.hand_size(2), rules.reserve(2)) == (3, (2,), 3, 1)
    assert rules.tile_count == 10
    assert rules.description == "double-three for teaching"


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        # RULES.md: "Invalid combinations (e.g. hands that need more tiles than the set
        # has) are rejected with a clear message."
        (
            {"players": [4], "hand_size": 8, "reserve": 0},
            "hands need more tiles than the set has: 4 players x 8 tiles = 32, but double-6 has 28",
        ),
        (
            {"max_pip": 3, "players": [2], "hand_size": 4, "reserve": 3},
            r"2 players x 4 tiles \+ 3 reserved = 11, but double-3 has 10",
        ),
        ({"hand_size": 0}, "hand_size for 2 players must be at least 1"),
        ({"hand_size": {"2": 5}}, "hand_size gives no size for 3, 4 players"),
        ({"hand_size": {"2": 5, "3": 5, "4": 5, "5": 5}}, "entry for 5 players"),
        ({"hand_size": {"two": 5}}, "'two' is not a player count"),
        ({"hand_size": [5]}, "hand_size must be a number or a table"),
        ({"players": []}, "players must be a non-empty list"),
        ({"players": [1, 2]}, "players must be a whole number from 2"),
        ({"players": [2, 2]}, "players lists a count twice"),
        ({"max_pip": 13}, "max_pip must be a whole number from 1 to 12, not 13"),
        ({"max_pip": True}, "max_pip must be a whole number"),
        ({"lead": "lowest-double"}, "lead must be one of 'highest-double', 'draw-for-lead'"),
        ({"scoring": "golf"}, "scoring must be one of .*'rounded-fives'.*not 'golf'"),
        ({"in_play": "sevens"}, "in_play must be one of"),
        ({"end": "time"}, "end must be one of"),
        ({"draw_limit": -1}, "draw_limit must be a whole number from 0"),
        ({"team_play": "yes"}, "team_play must be true or false, not 'yes'"),
        (
            {"team_play": True, "players": [2, 3], "hand_size": 5, "reserve": 0},
            "team_play needs 4 players",
        ),
        ({"target": None}, "a game won by points needs target"),
        ({"best_of": 3}, "a game won by points needs target \\(and no best_of\\)"),
        ({"end": "rounds"}, "a game won by rounds needs best_of"),
        (
            {"end": "rounds", "target": None, "best_of": 3},
            "a game won by rounds needs scoring round-wins and in_play none",
        ),
        ({"scoring": "round-wins"}, "scoring round-wins scores no points"),
    ],
)
def test_invalid_custom_rule_sets_are_rejected(changes: dict[str, Any], message: str) -> None:
    """Invalid parameters or combinations raise RulesError with a message naming the problem."""
    with pytest.raises(RulesError, match=message):
        Rules.from_params("custom", params_of("block", **changes))


def test_missing_and_unknown_parameters() -> None:
    """Every parameter is required, and unknown ones are named."""
    params = params_of("block")
    del params["target"]
    with pytest.raises(RulesError, match="rule set 'custom' is missing target"):
        Rules.from_params("custom", params)
    with pytest.raises(RulesError, match="unknown parameter 'spinners'"):
        Rules.from_params("custom", params_of("block", spinners=True))


@pytest.mark.parametrize("name", ["", "Block", "a" * 41, "my rules", "-x"])
def test_rule_set_names_are_checked(name: str) -> None:
    """A rule set's name is 1-40 lower-case letters, digits, '-', '_' or '.'."""
    with pytest.raises(RulesError, match="rule set name must be"):
        Rules.from_params(name, params_of("block"))


def test_custom_rule_set_from_toml(tmp_path: Path) -> None:
    """A rule set file in TOML: a name, an optional base preset, and parameters."""
    path = tmp_path / "club.toml"
    path.write_text(
        'name = "club-draw"\n'
        'base = "draw"\n'
        'description = "Our club: double-nine, to 150"\n'
        "max_pip = 9\n"
        "target = 150\n"
        "[hand_size]\n"
        '"2" = 9\n'
        '"3" = 7\n'
        '"4" = 6\n',
        encoding="utf-8",
    )
    rules = load_rules(path)
    assert rules.name == "club-draw"
    assert rules.description == "Our club: double-nine, to 150"
    assert (rules.max_pip, rules.target) == (9, 150)
    assert [rules.hand_size(n) for n in (2, 3, 4)] == [9, 7, 6]
    assert rules.reserves == find_rules("draw").reserves
    assert load_rules(str(path)) == rules


def test_custom_rule_set_from_json_without_base(tmp_path: Path) -> None:
    """A JSON rule set without a base gives every parameter."""
    params = params_of("giant", max_pip=12, players=[2], hand_size=12, reserve=0)
    path = tmp_path / "giant12.json"
    path.write_text(json.dumps({"name": "giant-12"} | params), encoding="utf-8")
    rules = load_rules(path)
    assert rules.params() == Rules.from_params("giant-12", params).params()
    assert rules.scoring is Scoring.POSITIVE_DIFFERENCES


def test_rule_set_file_errors(tmp_path: Path) -> None:
    """Unreadable or malformed files raise ParseError; bad rule sets RulesError naming the file."""
    missing = tmp_path / "missing.toml"
    with pytest.raises(ParseError, match=r"cannot read rule set file .*missing\.toml"):
        load_rules(missing)
    cases = {
        "rules.yaml": ("name: x", ParseError, "must end in .toml or .json"),
        "bad.toml": ("name = ", ParseError, "not valid TOML"),
        "bad.json": ("{", ParseError, "not valid JSON"),
        "list.json": ("[1, 2]", ParseError, "a rule set is a JSON object, not list"),
        "nameless.toml": ('base = "draw"', RulesError, "a rule set needs a name"),
        "preset.toml": ('name = "draw"\nhand_size = 6', RulesError, "'draw' is a preset's name"),
        "badbase.toml": ('name = "x"\nbase = "nope"', RulesError, "unknown rule set 'nope'"),
        "huge.toml": (
            'name = "huge"\nbase = "block"\nhand_size = 10',
            RulesError,
            r"huge.toml: hands need more tiles than the set has: 3 players x 10 tiles = 30",
        ),
        "desc.json": ('{"name": "x", "base": "draw", "description": 5}', RulesError, "text"),
        "objname.json": ('{"name": {}, "base": "draw"}', RulesError, "name must be text"),
        "numbase.json": ('{"name": "x", "base": 5}', RulesError, "base must be a preset's name"),
    }
    for filename, (text, error, message) in cases.items():
        path = tmp_path / filename
        path.write_text(text, encoding="utf-8")
        with pytest.raises(error, match=message):
            load_rules(path)
    latin = tmp_path / "latin.toml"
    latin.write_bytes(b'name = "caf\xe9"')
    with pytest.raises(ParseError, match="not UTF-8"):
        load_rules(latin)


# --- version hashes -----------------------------------------------------------------


def test_preset_versions_are_stable() -> None:
    """The version hash of each preset is the published one."""
    assert {name: rules.version for name, rules in PRESETS.items()} == GOLDEN_VERSIONS


def test_version_is_stable_across_processes() -> None:
    """The hash depends on the parameters only, not on the process (no hash randomisation)."""
    code = "from arena.engine.rules import PRESETS; print(PRESETS['muggins'].version)"
    output = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert output.stdout.strip() == GOLDEN_VERSIONS["muggins"]


@pytest.mark.parametrize(
    ("name", "change"),
    [
        ("block", {"max_pip": 9}),
        ("block", {"target": 200}),
        ("wooden", {"best_of": 5}),
        ("block-and-draw", {"draw_limit": None}),
        ("draw", {"max_pip": 12}),
    ],
)
def test_version_changes_with_every_override(name: str, change: dict[str, Any]) -> None:
    """Different parameters, different version; the same again, the same version."""
    rules = find_rules(name, **change)
    assert rules.version != find_rules(name).version
    assert rules.version == find_rules(name, **change).version
    assert len(rules.version) == 16
    assert int(rules.version, 16) >= 0


def test_every_parameter_changes_the_version() -> None:
    """Changing any single parameter of a custom rule set changes its version."""
    base = params_of("muggins")
    changes: dict[str, Any] = {
        "max_pip": 9,
        "players": [2, 3, 4, 5],
        "hand_size": {"2": 5, "3": 5, "4": 4},
        "reserve": {"2": 2, "3": 1, "4": 0},
        "draw_limit": 3,
        "scoring": "opponents-minus-own",
        "in_play": "none",
        "team_play": False,
        "target": 60,
    }
    reference = Rules.from_params("m", base).version
    for key, value in changes.items():
        params = base | {key: value}
        if key == "players":
            params["hand_size"] = 5
        assert Rules.from_params("m", params).version != reference, key
    lead = Rules.from_params("w", params_of("wooden", lead="highest-double")).version
    assert lead != find_rules("wooden").version
    end = Rules.from_params("w", params_of("wooden", best_of=1)).version
    assert end != find_rules("wooden").version


def test_name_and_description_do_not_change_the_version() -> None:
    """The version hashes the parameters, not the name or description."""
    copy = Rules.from_params("house", find_rules("draw").params(), description="ours")
    assert copy.version == find_rules("draw").version
    assert copy != find_rules("draw")


def test_rule_sets_that_can_never_score_are_rejected() -> None:
    """A rounded-fives points game whose rounds all round to 0 would never end: rejected."""
    degenerate = find_rules("muggins").params() | {
        "max_pip": 1,
        "players": [2],
        "hand_size": 1,
        "reserve": 0,
        "in_play": "none",
        "team_play": False,
    }
    with pytest.raises(RulesError, match=r"no round can score with 2 players.*at most 2 pips"):
        Rules.from_params("never-ends", degenerate)
    # The same set with fives in play, or more tiles in hand, can score.
    Rules.from_params("fives", degenerate | {"max_pip": 2, "in_play": "fives"})
    Rules.from_params("bigger", degenerate | {"max_pip": 2, "hand_size": 2})


def test_round_wins_with_unreachable_fives_is_rejected() -> None:
    """round-wins scores only in play: with double-1 no count reaches 5, so a points game
    would never end (rejected); double-2 can count 5 (4 ends of 2, or 2-2 and 1-... )."""
    params = find_rules("draw").params() | {
        "scoring": "round-wins",
        "in_play": "fives",
        "target": 30,
        "max_pip": 1,
        "players": [2],
        "hand_size": 1,
        "reserve": 0,
    }
    with pytest.raises(RulesError, match=r"round-wins scores only in play.*double-1"):
        Rules.from_params("never-ends", params)
    Rules.from_params("can-end", params | {"max_pip": 2})
