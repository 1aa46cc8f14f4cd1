"""The entrant type (arena.compete.entrants): a label and exactly one of a stored version, a
bot file or a built-in strategy; the command line's notation parsed once; the seat it takes;
and the same value carried through a schedule to the referee (play_one)."""

from __future__ import annotations

import dataclasses
import pickle
from pathlib import Path

import pytest

from arena.compete.entrants import Entrant, check_entrants
from arena.compete.localrun import play_one, run_local
from arena.compete.tournaments import schedule
from arena.engine.records import verify_record
from arena.engine.rules import find_rules
from arena.errors import ParseError
from tests.paths import ZOO

DRAW = find_rules("draw")
FIRST = ZOO / "first.py"


def test_each_kind_and_its_seat() -> None:
    builtin = Entrant.builtin("greedy")
    assert (builtin.label, builtin.strategy, builtin.seat()) == ("greedy", "greedy", "greedy")
    assert Entrant.builtin("random", "r1") == Entrant("r1", strategy="random")
    bot = Entrant.bot_file(FIRST)
    assert (bot.label, bot.file, bot.seat()) == ("first", FIRST, str(FIRST))
    assert Entrant.bot_file(str(FIRST), "mine").label == "mine"
    stored = Entrant.stored("greedy-v2", 17)
    assert (stored.label, stored.version) == ("greedy-v2", 17)
    assert stored.seat({17: Path("/cache/ab12.py")}) == "/cache/ab12.py"
    with pytest.raises(LookupError, match="no file for stored version 17"):
        stored.seat()
    with pytest.raises(LookupError, match="no file for stored version 17"):
        stored.seat({18: Path("/cache/other.py")})
    assert [str(e) for e in (Entrant.builtin("random", "r1"), bot, stored)] == [
        "r1 (strategy random)", f"first (file {FIRST})", "greedy-v2 (stored version 17)",
    ]  # fmt: skip


def test_exactly_one_kind_and_a_label() -> None:
    with pytest.raises(ValueError, match="exactly one"):
        Entrant("x")
    with pytest.raises(ValueError, match="exactly one"):
        Entrant("x", version=1, strategy="random")
    with pytest.raises(ValueError, match="exactly one"):
        Entrant("x", version=1, file=FIRST)
    with pytest.raises(ValueError, match="needs a label"):
        Entrant("", strategy="random")
    with pytest.raises(ParseError, match="'nope' is not a built-in strategy"):
        Entrant.builtin("nope")


def test_a_value_frozen_hashable_and_picklable() -> None:
    """It crosses the local runner's process pool and keys the standings' sets."""
    entrants = [Entrant.builtin("random"), Entrant.bot_file(FIRST), Entrant.stored("s", 3)]
    assert [pickle.loads(pickle.dumps(e)) for e in entrants] == entrants
    assert len({*entrants, *entrants}) == 3
    with pytest.raises(dataclasses.FrozenInstanceError):
        entrants[0].label = "other"  # type: ignore[misc]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("random", Entrant("random", strategy="random")),
        ("r1=random", Entrant("r1", strategy="random")),
        ("bots/greedy.py", Entrant("greedy", file=Path("bots/greedy.py"))),
        ("v2=bots/mine.py", Entrant("v2", file=Path("bots/mine.py"))),
        ("héllo=bots/greedy.py", Entrant("héllo", file=Path("bots/greedy.py"))),
        ("./odd=name.py", Entrant("odd=name", file=Path("./odd=name.py"))),  # no label
        ("a=", Entrant("a=", file=Path("a="))),  # no SPEC after it: a file's name
    ],
)
def test_the_command_lines_notation(text: str, expected: Entrant) -> None:
    assert Entrant.parse(text) == expected


def test_an_empty_entrant_is_refused() -> None:
    for text in ("", " ", "x= "):
        with pytest.raises(ParseError, match="cannot be empty"):
            Entrant.parse(text)
    assert Entrant.from_spec("random") == Entrant.builtin("random")
    assert Entrant.from_spec("x=random") == Entrant.bot_file("x=random")  # no label parsed


def test_check_entrants_names_what_cannot_play(tmp_path: Path) -> None:
    check_entrants([Entrant.builtin("random"), Entrant.bot_file(FIRST)])
    check_entrants([Entrant.stored("s", 3)], {3: FIRST})
    with pytest.raises(ParseError, match=r"nope\.py"):
        check_entrants([Entrant.bot_file(tmp_path / "nope.py")])
    with pytest.raises(LookupError, match="stored version 3"):
        check_entrants([Entrant.stored("s", 3)])
    entrants = [Entrant.builtin("random"), Entrant.stored("s", 3)]
    matches = schedule("round-robin", entrants, rules=DRAW, players=2, games_per_match=1, seed=1)
    with pytest.raises(LookupError, match="stored version 3"):  # the local runner has none
        list(run_local(matches, DRAW, workers=1))


def test_a_file_and_a_builtin_reach_the_referee_as_scheduled() -> None:
    """The schedule's entrants are the match's seats, each playing under its label: the bot
    file as a process of its own, the strategy in this process."""
    bot, builtin = Entrant.bot_file(FIRST, "mine"), Entrant.builtin("greedy", "g")
    (match, *_) = schedule("round-robin", [bot, builtin], rules=DRAW, players=2,
                           games_per_match=2, seed=4)  # fmt: skip
    assert set(match.seats) == {bot, builtin}
    result = play_one(match, DRAW, sandboxed=False)
    assert result.void is None and len(result.games) == match.games
    for game in result.games:
        assert game.record["seats"] == [seat.label for seat in match.seats]
        assert verify_record(game.record) == []


def test_a_stored_version_plays_its_file(tmp_path: Path) -> None:
    """A stored entrant plays the file play_one is given for its version id (what a worker
    writes from the database), under the entrant's label."""
    cached = tmp_path / "0123abcd.py"
    cached.write_text(FIRST.read_text())
    stored, builtin = Entrant.stored("first-v3", 3), Entrant.builtin("random")
    (match, *_) = schedule("round-robin", [stored, builtin], rules=DRAW, players=2,
                           games_per_match=1, seed=4)  # fmt: skip
    result = play_one(match, DRAW, sandboxed=False, files={3: cached})
    assert result.void is None and result.match.seats == match.seats
    assert result.games[0].record["seats"] == [seat.label for seat in match.seats]
    with pytest.raises(LookupError, match="stored version 3"):
        play_one(match, DRAW, sandboxed=False, files={})
