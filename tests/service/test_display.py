"""One display name for a stored bot version (arena/service/display.py)."""

from __future__ import annotations

from arena.service.display import BotName, display_name, entrant_names, seat_name, seat_names
from arena.service.matches import create_stored_tournament
from arena.store.db import Store
from tests.web.conftest import RULES, store_bots


def test_the_display_form() -> None:
    assert display_name("alice", "greedy", 2) == "alice/greedy v2"
    assert display_name("alice", "greedy") == "alice/greedy"
    assert str(BotName("bob", "counter", 1)) == "bob/counter v1"


def test_a_seat_names_its_version_or_nothing() -> None:
    assert seat_name("alice/greedy@v2") == BotName("alice", "greedy", 2)
    assert seat_name("alice/greedy") == BotName("alice", "greedy")
    assert seat_name("version 12") is None
    assert seat_name("alice.greedy") is None


def test_two_seats_of_one_version_are_told_apart_by_label() -> None:
    seats = ("reference/random@v1", "reference/random@v1", "bob/counter@v3")
    assert seat_names(seats, ("r1", "r2", "counter")) == (
        "reference/random v1 (r1)",
        "reference/random v1 (r2)",
        "bob/counter v3",
    )
    assert seat_names(("version 7", "bob/counter@v3")) == ("version 7", "bob/counter v3")


def test_a_tournaments_entrants_by_label(store: Store) -> None:
    store_bots(store)
    create_stored_tournament(
        store,
        name="placing",
        rules=RULES,
        format="round-robin",
        entrants=["alice.greedy=alice/greedy@1", "bob/counter"],
        games_per_match=1,
        seed=1,
    )
    assert entrant_names(store, "placing") == {
        "alice.greedy": BotName("alice", "greedy", 1),
        "counter": BotName("bob", "counter", 1),
    }
    assert entrant_names(store, "no-such-tournament") == {}
