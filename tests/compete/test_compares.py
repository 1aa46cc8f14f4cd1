"""A compare's schedule (arena/compete/compares.py): the same matches as the generic
duplicate schedule made a batch at a time, which it no longer calls a batch."""

from __future__ import annotations

import dataclasses

import pytest

from arena.compete.compares import batch_seed, compare_entrants, compare_schedule, group_size
from arena.compete.entrants import Entrant
from arena.compete.tournaments import Match, schedule
from arena.engine.rules import Rules, find_rules
from arena.errors import RulesError

NEW, OLD = Entrant.stored("new", 1), Entrant.stored("old", 2)


def _a_schedule_a_batch(
    rules: Rules, players: int, max_games: int, batch: int, seed: int, teams: bool
) -> list[Match]:
    """The schedule as it was made before: the generic duplicate schedule of every batch,
    seeded by the batch, its ids and deal group tagged with the batch."""
    size = group_size(players, teams)
    entrants = compare_entrants(NEW, OLD, size)
    deals = max_games // size
    matches: list[Match] = []
    for number in range(-(-deals // batch)):
        tag = f"b{number:05d}"
        for match in schedule(
            "duplicate", entrants, rules=rules, players=players, teams=teams,
            games_per_match=min(batch, deals - number * batch), seed=batch_seed(seed, number),
        ):  # fmt: skip
            matches.append(dataclasses.replace(match, id=f"{tag}-{match.id}", deal_group=tag))
    return matches


@pytest.mark.parametrize(
    ("rules", "players", "max_games", "batch", "teams"),
    [
        ("draw", 2, 20_000, 16, False),  # the defaults: 625 batches
        ("draw", 2, 31, 4, False),  # an odd game left over, a short last batch
        ("block", 3, 30, 4, False),
        ("draw", 4, 40, 3, False),
        ("muggins", 4, 8, 2, True),
        ("muggins", 4, 22, 4, True),
        ("draw", 2, 2, 16, False),  # one deal group
    ],
)
def test_the_schedule_is_the_generic_one_a_batch(
    rules: str, players: int, max_games: int, batch: int, teams: bool
) -> None:
    for seed in (0, 5, 2**40):
        got = compare_schedule(
            find_rules(rules), players, new=NEW, old=OLD, max_games=max_games, batch=batch,
            seed=seed, teams=teams,
        )  # fmt: skip
        assert got == _a_schedule_a_batch(find_rules(rules), players, max_games, batch, seed, teams)


def test_the_schedule_checks_the_players_as_before() -> None:
    with pytest.raises(RulesError, match="no team play with 2 players"):
        compare_schedule(
            find_rules("muggins"), 2, new=NEW, old=OLD, max_games=8, batch=2, seed=1, teams=True
        )
