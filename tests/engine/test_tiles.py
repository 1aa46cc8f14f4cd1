"""Tiles, ends and moves: values with a notation that reads back (STYLE.md, "The domain" 1).

RULES.md "Common ground": the double-six set is 0-0 ... 6-6 (28 tiles); double-nine (55)
and double-twelve (91) are a rule-set parameter.
"""

from __future__ import annotations

import pytest

from arena.engine.tiles import MAX_PIP_LIMIT, TILES, End, Move, Tile, set_size, tile_set
from arena.errors import ParseError

ALL_MOVES = [Move.of(tile, end) for tile in TILES for end in (None, End.LEFT, End.RIGHT)]


@pytest.mark.parametrize(("max_pip", "size"), [(6, 28), (9, 55), (12, 91)])
def test_set_sizes(max_pip: int, size: int) -> None:
    """Double-six has 28 tiles, double-nine 55, double-twelve 91 (RULES.md, seed 004)."""
    assert set_size(max_pip) == size
    tiles = tile_set(max_pip)
    assert len(tiles) == len(set(tiles)) == size
    assert [t.id for t in tiles] == list(range(size))
    assert {(t.high, t.low) for t in tiles} == {
        (high, low) for high in range(max_pip + 1) for low in range(high + 1)
    }


def test_double_six_has_seven_doubles_and_twenty_one_singles() -> None:
    """Seed 001: "7 doubles (... double blank to double six) and 21 singles"."""
    tiles = tile_set(6)
    assert sum(t.is_double for t in tiles) == 7
    assert sum(not t.is_double for t in tiles) == 21
    assert sum(t.pips for t in tiles) == 168


@pytest.mark.parametrize("max_pip", [-1, 13])
def test_tile_set_out_of_range(max_pip: int) -> None:
    """Sets other than double-0 ... double-12 do not exist."""
    with pytest.raises(ValueError, match=f"double-{max_pip}"):
        tile_set(max_pip)


@pytest.mark.parametrize("tile", TILES, ids=str)
def test_tile_notation_round_trips(tile: Tile) -> None:
    """A tile is written high half first ("6-4"); parse, str and repr read back."""
    assert str(tile) == f"{tile.high}-{tile.low}"
    assert Tile.parse(str(tile)) is tile
    assert Tile.parse(f"{tile.low}-{tile.high}") is tile
    assert eval(repr(tile)) == tile
    assert Tile.of(tile.low, tile.high) is tile


def test_tile_parse_accepts_separators_and_spaces() -> None:
    """'6-4', '4-6', '6|4', '6:4' and surrounding spaces all name the tile 6-4."""
    six_four = Tile.of(6, 4)
    for text in ("6-4", "4-6", "6|4", "6:4", " 6 - 4 "):
        assert Tile.parse(text) is six_four
    assert Tile.parse("12-12") is Tile.of(12, 12)


def test_tile_values() -> None:
    """Pips, doubles, matching halves and the opposite half (RULES.md pip count)."""
    tile = Tile.parse("6-4")
    assert (tile.high, tile.low, tile.pips) == (6, 4, 10)
    assert not tile.is_double
    assert Tile.parse("0-0").pips == 0
    assert Tile.parse("5-5").is_double
    assert tile.matches(6) and tile.matches(4) and not tile.matches(5)
    assert tile.other(6) == 4 and tile.other(4) == 6
    assert Tile.parse("3-3").other(3) == 3
    with pytest.raises(ValueError, match="6-4 has no half 5"):
        tile.other(5)


def test_tiles_sort_by_high_then_low() -> None:
    """Tiles sort by (high, low), which is id order."""
    assert sorted(TILES, reverse=True) == sorted(TILES, key=lambda t: -t.id)
    assert Tile.parse("6-0") > Tile.parse("5-5") > Tile.parse("5-4")


@pytest.mark.parametrize(("high", "low"), [(4, 6), (13, 0), (0, -1)])
def test_tile_constructor_rejects_non_tiles(high: int, low: int) -> None:
    """Tile(high, low) needs 12 >= high >= low >= 0; the message names the halves."""
    with pytest.raises(ValueError, match=rf"Tile\({high}, {low}\)"):
        Tile(high, low)


@pytest.mark.parametrize(("a", "b"), [(13, 0), (0, -1)])
def test_tile_of_rejects_out_of_range_halves(a: int, b: int) -> None:
    """Tile.of names the halves it rejects."""
    with pytest.raises(ValueError, match=f"{a}-{b}"):
        Tile.of(a, b)


@pytest.mark.parametrize(
    "text", ["", "6", "6-", "-4", "a-b", "6-4-2", "13-0", "6-13", "6_4", "6-4L", "six-four"]
)
def test_tile_parse_errors_name_the_input(text: str) -> None:
    """Text that is not a tile raises ParseError (a ValueError) quoting the input."""
    with pytest.raises(ParseError) as info:
        Tile.parse(text)
    assert repr(text) in str(info.value)
    assert isinstance(info.value, ValueError)


def test_tile_parse_rejects_non_text() -> None:
    """A non-string is not a tile either (ParseError, not a TypeError)."""
    with pytest.raises(ParseError, match="None"):
        Tile.parse(None)  # type: ignore[arg-type]


@pytest.mark.parametrize("move", ALL_MOVES, ids=str)
def test_move_notation_round_trips(move: Move) -> None:
    """A move is the tile and its end ("6-4L", "6-4R"), or the tile alone for a lead."""
    suffix = "" if move.end is None else move.end.value
    assert str(move) == f"{move.tile}{suffix}"
    assert Move.parse(str(move)) is move
    assert Move.parse(str(move).lower()) is move
    assert eval(repr(move), {"Move": Move}) == move
    assert move.is_lead == (move.end is None)
    assert Move.of(move.tile, move.end) is move
    assert Move(move.tile, move.end) == move


def test_move_parse_variants() -> None:
    """Halves in either order, a lower-case end and spaces are accepted."""
    assert Move.parse("4-6l") is Move.of(Tile.of(6, 4), End.LEFT)
    assert Move.parse(" 6|4 R ") is Move.of(Tile.of(6, 4), End.RIGHT)
    assert Move.parse("6-6") is Move.of(Tile.of(6, 6))
    assert repr(Move.parse("6-4r")) == "Move.parse('6-4R')"


@pytest.mark.parametrize("text", ["", "6-4X", "6-4LR", "L", "6L", "13-0L", "6-4 L R", "6-4-L"])
def test_move_parse_errors_name_the_input(text: str) -> None:
    """Text that is not a move raises ParseError quoting the input."""
    with pytest.raises(ParseError) as info:
        Move.parse(text)
    assert repr(text) in str(info.value)


def test_moves_sort_by_tile_then_end() -> None:
    """Moves sort by tile, then lead, left, right: the order of legal_moves()."""
    assert sorted(reversed(ALL_MOVES)) == ALL_MOVES
    six_four = Tile.of(6, 4)
    assert Move.of(six_four, End.LEFT) < Move.of(six_four, End.RIGHT) < Move.of(Tile.of(6, 5))


def test_ends() -> None:
    """An end is written L or R."""
    assert [str(end) for end in End] == ["L", "R"]
    assert End("L") is End.LEFT


def test_tiles_are_interned() -> None:
    """Every tile of double-twelve exists once, indexed by its id."""
    assert len(TILES) == set_size(MAX_PIP_LIMIT) == 91
    for index, tile in enumerate(TILES):
        assert tile.id == index
        assert Tile.of(tile.high, tile.low) is tile
