"""Tiles, ends and moves: immutable values with a compact notation.

A tile is written high half first, ``"6-4"``; a move is a tile and the end of
the line it goes on, ``"6-4L"`` or ``"6-4R"``, or the tile alone, ``"6-6"``, for
the first tile of a round (the lead). Every tile and move of the double-twelve
set exists once, interned, so that comparing and hashing them is cheap and the
engine can hand out the same objects every turn.

Each tile has a small integer ``id`` that does not depend on the set size
(``0-0`` is 0, ``1-0`` is 1, ``1-1`` is 2, ``2-0`` is 3, ...), so the tiles of a
double-N set are exactly the ids ``0 .. set_size(N) - 1``.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass, field

from arena.errors import ParseError

__all__ = [
    "MAX_PIP_LIMIT",
    "MOVE_TEXT",
    "TILES",
    "TILE_TEXT",
    "End",
    "Move",
    "Tile",
    "set_size",
    "tile_set",
]

#: The largest set the arena knows: double-twelve (91 tiles).
MAX_PIP_LIMIT = 12

_TILE_RE = re.compile(r"^\s*(\d{1,2})\s*[-|:]\s*(\d{1,2})\s*$")
_MOVE_RE = re.compile(r"^\s*(\d{1,2})\s*[-|:]\s*(\d{1,2})\s*([LRlr]?)\s*$")


def _tile_id(high: int, low: int) -> int:
    return high * (high + 1) // 2 + low


def _parse_halves(
    pattern: re.Pattern[str], text: str, kind: str, example: str
) -> tuple[int, int, str]:
    """Match a tile or move notation: (half, half, end letter or "").

    Raises:
        ParseError: naming the text and what was expected.
    """
    match = pattern.match(text) if isinstance(text, str) else None
    if match is None:
        raise ParseError(f"not a {kind}: {text!r} (expected e.g. {example})")
    a, b = int(match.group(1)), int(match.group(2))
    if max(a, b) > MAX_PIP_LIMIT:
        raise ParseError(f"not a {kind}: {text!r} (halves are 0 to {MAX_PIP_LIMIT})")
    return a, b, match.group(3) if pattern.groups >= 3 else ""


def set_size(max_pip: int) -> int:
    """Return the number of tiles in a double-``max_pip`` set (28 for double-six)."""
    return (max_pip + 1) * (max_pip + 2) // 2


@dataclass(frozen=True, slots=True, order=True)
class Tile:
    """A domino tile: two halves, ``high >= low``, each 0 to 12 pips.

    Use :meth:`Tile.of` to build one from halves in any order, :meth:`parse`
    for the notation. Tiles sort by ``(high, low)``, which is also ``id`` order.

    Raises:
        ValueError: halves out of range or ``high < low``.
    """

    high: int
    low: int
    id: int = field(init=False, repr=False, compare=False)
    pips: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not (0 <= self.low <= self.high <= MAX_PIP_LIMIT):
            raise ValueError(
                f"not a tile: Tile({self.high!r}, {self.low!r}) "
                f"(need {MAX_PIP_LIMIT} >= high >= low >= 0; use Tile.of for any order)"
            )
        object.__setattr__(self, "id", _tile_id(self.high, self.low))
        object.__setattr__(self, "pips", self.high + self.low)

    @classmethod
    def of(cls, a: int, b: int) -> Tile:
        """Return the tile with halves ``a`` and ``b`` in either order."""
        high, low = (a, b) if a >= b else (b, a)
        if not (low >= 0 and high <= MAX_PIP_LIMIT):
            raise ValueError(f"not a tile: {a}-{b} (halves are 0 to {MAX_PIP_LIMIT})")
        return TILES[_tile_id(high, low)]

    @classmethod
    def parse(cls, text: str) -> Tile:
        """Parse ``"6-4"`` (or ``"4-6"``, ``"6|4"``).

        Raises:
            ParseError: the text is not a tile.
        """
        tile = _TILE_BY_TEXT.get(text) if type(text) is str else None  # canonical: no regex
        if tile is not None:
            return tile
        a, b, _ = _parse_halves(_TILE_RE, text, "tile", "'6-4'")
        return cls.of(a, b)

    @property
    def is_double(self) -> bool:
        """Whether both halves are equal (``6-6``)."""
        return self.high == self.low

    def matches(self, pip: int) -> bool:
        """Whether either half shows ``pip``."""
        return self.high == pip or self.low == pip

    def other(self, pip: int) -> int:
        """Return the half opposite a half showing ``pip``.

        Raises:
            ValueError: neither half shows ``pip``.
        """
        if self.high == pip:
            return self.low
        if self.low == pip:
            return self.high
        raise ValueError(f"tile {self} has no half {pip}")

    def __str__(self) -> str:
        return TILE_TEXT[self.id]

    def __repr__(self) -> str:
        return f"Tile({self.high}, {self.low})"


#: Every tile of the double-twelve set, indexed by ``Tile.id``.
TILES: tuple[Tile, ...] = tuple(
    Tile(high, low) for high in range(MAX_PIP_LIMIT + 1) for low in range(high + 1)
)
#: TILE_TEXT[id]: a tile's notation (``"6-4"``); the wire format repeats it constantly.
TILE_TEXT: tuple[str, ...] = tuple(f"{t.high}-{t.low}" for t in TILES)
_TILE_BY_TEXT = dict(zip(TILE_TEXT, TILES, strict=True))


def tile_set(max_pip: int) -> tuple[Tile, ...]:
    """Return the double-``max_pip`` set in id order.

    Raises:
        ValueError: ``max_pip`` outside 0..12.
    """
    if not 0 <= max_pip <= MAX_PIP_LIMIT:
        raise ValueError(f"no double-{max_pip} set (max_pip is 0 to {MAX_PIP_LIMIT})")
    return TILES[: set_size(max_pip)]


class End(enum.StrEnum):
    """An open end of the line: the left or the right one (equal to ``"L"``, ``"R"``)."""

    LEFT = "L"
    RIGHT = "R"


_END_ORDER = {None: 0, End.LEFT: 1, End.RIGHT: 2}


@dataclass(frozen=True, slots=True)
class Move:
    """Playing ``tile`` on ``end`` of the line; ``end`` is None for the lead.

    Notation: ``"6-4L"``, ``"6-4R"``, and ``"6-6"`` for a lead. The engine's
    moves are interned (see :meth:`of`), so ``move in observation.legal_moves``
    is fast, but any equal move compares equal.
    """

    tile: Tile
    end: End | None = None
    index: int = field(init=False, repr=False, compare=False)
    tile_id: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "index", 3 * self.tile.id + _END_ORDER[self.end])
        object.__setattr__(self, "tile_id", self.tile.id)

    @classmethod
    def of(cls, tile: Tile, end: End | None = None) -> Move:
        """Return the interned move placing ``tile`` on ``end``."""
        return _MOVES[3 * tile.id + _END_ORDER[end]]

    @classmethod
    def parse(cls, text: str) -> Move:
        """Parse ``"6-4L"``, ``"6-4R"`` or a lead ``"6-6"`` (case-insensitive end).

        Raises:
            ParseError: the text is not a move.
        """
        move = _MOVE_BY_TEXT.get(text) if type(text) is str else None  # canonical: no regex
        if move is not None:
            return move
        a, b, side = _parse_halves(_MOVE_RE, text, "move", "'6-4L', '6-4R' or '6-6'")
        end = End(side.upper()) if side else None
        return cls.of(Tile.of(a, b), end)

    @property
    def is_lead(self) -> bool:
        """Whether this move is the first tile of a round."""
        return self.end is None

    def __str__(self) -> str:
        return MOVE_TEXT[self.index]

    def __repr__(self) -> str:
        return f"Move.parse({str(self)!r})"

    def __lt__(self, other: Move) -> bool:
        return self.index < other.index


_MOVES: tuple[Move, ...] = tuple(
    Move(tile, end) for tile in TILES for end in (None, End.LEFT, End.RIGHT)
)
#: MOVE_TEXT[move.index]: a move's notation (``"6-4L"``).
MOVE_TEXT: tuple[str, ...] = tuple(
    f"{TILE_TEXT[m.tile_id]}{m.end.value if m.end is not None else ''}" for m in _MOVES
)
_MOVE_BY_TEXT = dict(zip(MOVE_TEXT, _MOVES, strict=True))
