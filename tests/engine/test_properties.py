"""Property tests: random seeds under every preset, and random custom rule sets.

RULES.md "Custom rule sets": an organiser may define a rule set from the same parameters;
invalid combinations are rejected with a clear message. Every valid one must play by the
same rules as the presets, checked by the conformance suite's referee.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from arena.engine.rules import PRESETS, GameEnd, InPlay, Lead, Rules, Scoring
from arena.engine.tiles import set_size
from arena.errors import RulesError
from tests.conftest import soak
from tests.engine.test_conformance import CONFIGS, Checks, play_checked

#: Games of random seeds and rule sets: 15 examples a test (40 with ``ARENA_TEST_FULL=1``).
FAST = settings(
    max_examples=soak(15, 40), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


@FAST
@given(config=st.sampled_from(CONFIGS), seed=st.integers(0, 2**63 - 1))
def test_presets_with_random_seeds(config: tuple[str, int, bool], seed: int) -> None:
    """Any seed, any preset, any legal player count: a game that follows the rules and ends."""
    name, players, teams = config
    play_checked(PRESETS[name], players, teams, seed, Checks(observations=False))


@st.composite
def valid_params(draw: st.DrawFn) -> dict[str, Any]:
    """Parameters of a custom rule set that should be accepted (small sets, short games)."""
    max_pip = draw(st.integers(2, 9))
    tiles = set_size(max_pip)
    players = draw(st.lists(st.integers(2, 6), min_size=1, max_size=3, unique=True))
    hand_size: dict[str, int] = {}
    reserve: dict[str, int] = {}
    for n in players:
        spare = draw(st.integers(0, min(3, tiles - n)))
        reserve[str(n)] = spare
        hand_size[str(n)] = draw(st.integers(1, min(7, (tiles - spare) // n)))
    scoring = draw(st.sampled_from(Scoring))
    in_play = draw(st.sampled_from(InPlay))
    by_rounds = scoring is Scoring.ROUND_WINS and in_play is InPlay.NONE
    return {
        "max_pip": max_pip,
        "players": players,
        "hand_size": hand_size,
        "reserve": reserve,
        "lead": draw(st.sampled_from(Lead)).value,
        "draw_limit": draw(st.one_of(st.none(), st.integers(0, 4))),
        "scoring": scoring.value,
        "in_play": in_play.value,
        "team_play": 4 in players and draw(st.booleans()),
        "end": (GameEnd.ROUNDS if by_rounds else GameEnd.POINTS).value,
        "target": None if by_rounds else draw(st.integers(1, 30)),
        "best_of": draw(st.sampled_from([1, 3, 5])) if by_rounds else None,
    }


@FAST
@given(params=valid_params(), seed=st.integers(0, 2**32), data=st.data())
def test_custom_rule_sets_play_by_the_rules(
    params: dict[str, Any], seed: int, data: st.DataObject
) -> None:
    """A valid custom rule set is accepted, round-trips, and plays rounds the referee accepts.

    Only the first 20 rounds are played: a custom game may need very many (a double-two
    set with rounded fives rarely scores a point)."""
    rules = Rules.from_params("custom", params)
    assert Rules.from_params("custom", rules.params()) == rules
    players = data.draw(st.sampled_from(rules.players), label="players")
    teams = rules.team_play and players == 4 and data.draw(st.booleans(), label="teams")
    play_checked(rules, players, teams, seed, max_rounds=20)


@settings(max_examples=soak(60, 150), deadline=None)
@given(
    params=valid_params(),
    key=st.sampled_from(
        ["max_pip", "players", "hand_size", "reserve", "draw_limit", "target", "best_of"]
    ),
    value=st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-3, 120),
        st.text(max_size=3),
        st.dictionaries(st.sampled_from(["2", "3", "4", "x"]), st.integers(-1, 40), max_size=3),
        st.lists(st.integers(0, 10), max_size=3),
    ),
)
def test_any_parameters_build_or_raise_rules_error(
    params: dict[str, Any], key: str, value: Any
) -> None:
    """Any change to a parameter gives a valid rule set or a RulesError with a message."""
    try:
        rules = Rules.from_params("custom", params | {key: value})
    except RulesError as exc:
        assert str(exc)
    else:
        for n, size in rules.hand_sizes:
            assert n * size + rules.reserve(n) <= rules.tile_count


@settings(max_examples=60, deadline=None)
@given(params=valid_params(), extra=st.integers(1, 60))
def test_hands_bigger_than_the_set_are_rejected(params: dict[str, Any], extra: int) -> None:
    """Hands that need more tiles than the set has: RulesError naming the numbers."""
    n = max(params["players"])
    tiles = set_size(params["max_pip"])
    size = tiles // n + extra
    assume(n * size > tiles)
    try:
        Rules.from_params("custom", params | {"hand_size": params["hand_size"] | {str(n): size}})
    except RulesError as exc:
        message = str(exc)
    else:
        raise AssertionError("an impossible deal was accepted")
    assert f"{n} players x {size} tiles" in message
    assert f"double-{params['max_pip']} has {tiles}" in message
