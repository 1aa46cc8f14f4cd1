"""Tournament formats: counts, balance, seeds, duplicate deals, validation."""

from __future__ import annotations

import itertools
from collections import Counter

import pytest

from arena.compete.entrants import Entrant
from arena.compete.tournaments import (
    Match,
    arrange_seats,
    balanced_tables,
    in_legs,
    schedule,
)
from arena.engine.rules import Rules, find_rules
from arena.errors import RulesError
from arena.match.play import make_strategies, play_game

BLOCK = find_rules("block")
MUGGINS = find_rules("muggins")
FIVE = find_rules("block-and-draw")


def parsed(*texts: str) -> list[Entrant]:
    return [Entrant.parse(text) for text in texts]


def bots(count: int) -> list[Entrant]:
    return parsed(*(f"b{i}={'random' if i % 2 else 'greedy'}" for i in range(count)))


def tables(matches: list[Match]) -> Counter[frozenset[Entrant]]:
    return Counter(frozenset(m.seats) for m in matches)


def test_entrant_names_and_specs() -> None:
    assert Entrant.parse("r1=random").seat() == "random"
    assert Entrant.parse("r1=random").label == "r1"
    assert Entrant.parse("tests/bots/first.py").seat() == "tests/bots/first.py"
    assert Entrant.parse("tests/bots/first.py").label == "first"
    assert Entrant.parse("greedy").label == "greedy"
    assert Entrant.parse("./odd=name.py").seat() == "odd=name.py"  # a path is never a label
    assert Entrant.parse("./odd=name.py").file is not None


def test_two_player_round_robin_plays_every_pair_in_both_seat_orders() -> None:
    matches = schedule("round-robin", bots(6), rules=BLOCK, players=2, games_per_match=10, seed=1)
    assert len(tables(matches)) == 15
    assert all(count == 2 for count in tables(matches).values())
    per_pair: Counter[frozenset[Entrant]] = Counter()
    for match in matches:
        per_pair[frozenset(match.seats)] += match.games
    assert set(per_pair.values()) == {10}
    assert len({m.seats for m in matches}) == 30  # both orders of each pair


def test_odd_games_and_single_games_split_across_seat_orders() -> None:
    matches = schedule("round-robin", bots(6), rules=BLOCK, players=2, games_per_match=3, seed=1)
    assert sorted(Counter(m.id[:-2] for m in matches).values()) == [2] * 15
    assert {m.games for m in matches} == {1, 2}
    single = schedule("round-robin", bots(6), rules=BLOCK, players=2, games_per_match=1, seed=1)
    assert len(single) == 15
    first = Counter(m.seats[0] for m in single)
    assert max(first.values()) - min(first.values()) <= 1  # 15 pairs: 2 or 3 firsts each


def test_three_player_round_robin_plays_every_combination() -> None:
    matches = schedule("round-robin", bots(5), rules=BLOCK, players=3, games_per_match=4, seed=1)
    assert len(matches) == 10
    assert set(tables(matches)) == {frozenset(c) for c in itertools.combinations(bots(5), 3)}
    assert all(m.games == 4 for m in matches)


def test_seats_rotate_across_an_entrants_matches() -> None:
    matches = schedule("round-robin", bots(5), rules=BLOCK, players=3, games_per_match=1, seed=1)
    positions = Counter((entrant, seat) for m in matches for seat, entrant in enumerate(m.seats))
    for entrant in bots(5):  # 6 matches each: 2 at every seat
        assert [positions[entrant, seat] for seat in range(3)] == [2, 2, 2]


def test_balanced_sample_of_twelve_into_four_player_tables() -> None:
    matches = schedule(
        "round-robin", bots(12), rules=BLOCK, players=4, games_per_match=2, seed=7, max_matches=33
    )
    assert len(matches) == 33
    appearances = Counter(e for m in matches for e in m.seats)
    assert max(appearances.values()) - min(appearances.values()) <= 1
    meetings = Counter(frozenset(p) for m in matches for p in itertools.combinations(m.seats, 2))
    pairs = [meetings[frozenset(p)] for p in itertools.combinations(bots(12), 2)]
    assert max(pairs) - min(pairs) <= 2  # 33 * 6 / 66 = 3 meetings on average
    firsts = Counter(m.seats[0] for m in matches)
    assert max(firsts.values()) <= 4  # 11 matches each, about 2.75 at each seat
    assert all(len(set(m.seats)) == 4 for m in matches)


@pytest.mark.parametrize(("entrants", "size", "count"), [(12, 4, 30), (9, 3, 20), (7, 5, 11)])
def test_balanced_tables_appearances_within_one(entrants: int, size: int, count: int) -> None:
    design = balanced_tables(entrants, size, count, seed=3)
    assert len(design) == count
    appearances = Counter(e for table in design for e in table)
    assert len(appearances) == entrants
    assert max(appearances.values()) - min(appearances.values()) <= 1
    assert design == balanced_tables(entrants, size, count, seed=3)
    with pytest.raises(ValueError, match="cannot seat"):
        balanced_tables(3, 4, 1, seed=0)


def test_arrange_seats_balances_first_seats_of_a_pair_round_robin() -> None:
    arranged = arrange_seats(list(itertools.combinations(range(4), 2)))
    firsts = Counter(order[0] for order in arranged)
    assert sorted(firsts.values()) == [1, 1, 2, 2]
    assert sorted(arranged) != sorted(itertools.combinations(range(4), 2))


def test_schedules_are_deterministic_and_seeds_differ() -> None:
    def make(seed: int) -> list[Match]:
        return schedule(
            "round-robin", bots(8), rules=BLOCK, players=3, games_per_match=2, seed=seed
        )

    assert make(5) == make(5)
    assert len({m.id for m in make(5)}) == len(make(5))
    assert len({m.seed for m in make(5)}) == len(make(5))
    assert {m.seed for m in make(5)}.isdisjoint({m.seed for m in make(6)})
    assert [m.seats for m in make(5)] == [m.seats for m in make(6)]  # only sampling uses the seed


@pytest.mark.parametrize(("rules", "players"), [(BLOCK, 2), (BLOCK, 3), (BLOCK, 4), (FIVE, 5)])
def test_duplicate_groups_rotate_every_seat_through_every_position(
    rules: Rules, players: int
) -> None:
    entrants = bots(players + 1)
    matches = schedule(
        "duplicate", entrants, rules=rules, players=players, games_per_match=3, seed=2
    )
    groups: dict[str | None, list[Match]] = {}
    for match in matches:
        groups.setdefault(match.deal_group, []).append(match)
    assert None not in groups
    assert len(groups) == players + 1  # C(n+1, n) tables, one group each
    group_seeds = set()
    for group in groups.values():
        assert [m.rotation for m in group] == list(range(players))
        assert len({m.seed for m in group}) == 1
        group_seeds.add(group[0].seed)
        assert all(m.games == 3 for m in group)
        for entrant in group[0].seats:
            assert sorted(m.seats.index(entrant) for m in group) == list(range(players))
    assert len(group_seeds) == len(groups)


def test_team_duplicate_swaps_the_partnerships() -> None:
    entrants = parsed("a=random", "b=greedy", "c=random")
    matches = schedule(
        "duplicate", entrants, rules=MUGGINS, players=4, teams=True, games_per_match=2, seed=4
    )
    assert len(matches) == 6  # 3 pairs of teams, both sides each
    for first, second in zip(matches[::2], matches[1::2], strict=True):
        assert first.deal_group == second.deal_group and first.seed == second.seed
        assert first.teams and second.teams
        x, y = first.seats[0], first.seats[1]
        assert first.seats == (x, y, x, y)
        assert second.seats == (y, x, y, x)


def test_gauntlet_seats_one_candidate_with_pool_members() -> None:
    pool = parsed(*(f"p{i}=greedy" for i in range(5)))
    candidates = parsed("new=random", "newer=random")
    two = schedule(
        "gauntlet", candidates, pool=pool, rules=BLOCK, players=2, games_per_match=2, seed=1
    )
    assert len(tables(two)) == 10 and len(two) == 20
    four = schedule(
        "gauntlet", candidates, pool=pool, rules=BLOCK, players=4, games_per_match=2, seed=1
    )
    assert len(four) == 2 * 10  # C(5, 3) pool trios per candidate
    for match in four:
        assert len(set(match.seats) & set(candidates)) == 1
    new = Entrant.builtin("random", "new")
    positions = Counter(m.seats.index(new) for m in four if new in m.seats)
    assert set(positions) == {0, 1, 2, 3}
    sampled = schedule(
        "gauntlet", candidates, pool=pool, rules=BLOCK, players=4, games_per_match=1, seed=1,
        max_matches=8, duplicate=True,
    )  # fmt: skip
    assert len(sampled) == 2 * 4 * 4  # 4 tables per candidate, 4 rotations each
    assert all(m.deal_group is not None for m in sampled)


def test_duplicate_rotations_deal_the_same_rounds() -> None:
    """Deals depend on the seed only (not on play): every round two rotations both
    reach is dealt the same, hand for hand by seat."""
    seed = 123456
    for rules, players in ((BLOCK, 3), (find_rules("draw"), 2), (MUGGINS, 4)):
        names = ["random", "greedy", "random", "greedy"][:players]
        games = [
            play_game(rules, make_strategies(names[r:] + names[:r], seed), seed=seed)
            for r in range(players)
        ]
        for game in games[1:]:
            shared = min(len(game.rounds), len(games[0].rounds))
            assert shared >= 1
            for index in range(shared):
                assert game.rounds[index].deal == games[0].rounds[index].deal
                assert game.rounds[index].leader == games[0].rounds[index].leader


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"format": "swiss"}, ValueError, "unknown tournament format"),
        ({"entrants": bots(2), "players": 3}, ValueError, "at least 3 entrants"),
        ({"players": 6}, RulesError, "not 6"),
        ({"teams": True, "players": 4}, RulesError, "no team play"),
        ({"rules": MUGGINS, "teams": True, "players": 3}, RulesError, "no team play"),
        ({"entrants": ["random", "random"]}, ValueError, "duplicate entrant name 'random'"),
        ({"entrants": ["x=random", "x=greedy"]}, ValueError, "duplicate entrant name 'x'"),
        ({"games_per_match": 0}, ValueError, "games per match"),
        ({"max_matches": 0}, ValueError, "max matches"),
        ({"pool": ["greedy"]}, ValueError, "no reference pool"),
        ({"format": "gauntlet"}, ValueError, "pool of at least 1"),
        ({"format": "gauntlet", "entrants": [], "pool": ["greedy"]}, ValueError, "1 candidate"),
        (
            {"format": "gauntlet", "entrants": ["random"], "pool": ["p=greedy", "random"]},
            ValueError,
            "duplicate entrant name",
        ),
        ({"entrants": ["", "random"]}, ValueError, "cannot be empty"),
    ],
)
def test_invalid_setups_are_refused(
    kwargs: dict[str, object], error: type[Exception], message: str
) -> None:
    args: dict[str, object] = {
        "format": "round-robin",
        "entrants": bots(4),
        "rules": BLOCK,
        "players": 2,
        "games_per_match": 2,
        "seed": 1,
    }
    args.update(kwargs)
    with pytest.raises(error, match=message):
        for key in ("entrants", "pool"):  # the command line's notation, parsed as it would be
            given = args.get(key, [])
            assert isinstance(given, list)
            args[key] = [Entrant.parse(e) if isinstance(e, str) else e for e in given]
        schedule(**args)  # type: ignore[arg-type]


def test_long_matches_are_played_in_legs_of_the_same_seats() -> None:
    """The demo's 2,000-game matches in legs of 100 (docs/workers.md, "Fair shares"): the
    same seats and games in all, distinct ids and seeds; a duplicate deal's legs keep one
    seed across its rotations; short matches untouched."""
    matches = schedule("round-robin", bots(3), rules=BLOCK, players=2, games_per_match=500, seed=4)
    legs = in_legs(matches, 100)
    assert len(legs) == 3 * len(matches)
    for match in matches:
        mine = [leg for leg in legs if leg.id.startswith(f"{match.id}.")]
        assert [leg.games for leg in mine] == [100, 100, 50]  # 250 a seating
        assert {leg.seats for leg in mine} == {match.seats}
    assert len({leg.id for leg in legs}) == len({leg.seed for leg in legs}) == len(legs)
    duplicate = schedule("duplicate", bots(2), rules=BLOCK, players=2, games_per_match=30, seed=4)
    split = in_legs(duplicate, 20)
    assert {(leg.deal_group, leg.games) for leg in split} == {("d0000.0", 20), ("d0000.1", 10)}
    for group in ("d0000.0", "d0000.1"):
        assert len({leg.seed for leg in split if leg.deal_group == group}) == 1
    assert in_legs(matches, 250) == matches
    with pytest.raises(ValueError, match="games a leg must be 1 or more"):
        in_legs(matches, 0)
