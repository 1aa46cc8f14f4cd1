"""fives: score the most points now (for ``muggins``), else play the heaviest tile.

In ``muggins`` a play scores when the open ends add up to a multiple of 5: the
count is the sum of the two ends, where an end showing a double counts both
halves, and while the line is a single tile the count is that tile's pips (a
5-5 lead counts 10). A count of 5, 10, 15 ... scores count / 5.

For every legal move this bot works out the count the line would show after
it, and plays the move that scores most; among equal scores (and in rule sets
without fives) it plays the heaviest tile, like ``greedy``.
"""

from __future__ import annotations

from typing import Any

NAME = "fives"


def count_after(observation: Any, move: Any) -> int:
    """The count of the open ends after ``move`` (muggins rules)."""
    tile = move.tile
    line = observation.line
    if not line:  # the lead: the line is this one tile
        return int(tile.pips)
    left_end, right_end = observation.ends
    # What each end shows, doubled when the tile on that end is a double.
    left = left_end * (2 if line[0][0] == line[0][1] else 1)
    right = right_end * (2 if line[-1][0] == line[-1][1] else 1)
    new = tile.other(left_end if move.end == "L" else right_end)
    shown = new * 2 if tile.is_double else new
    return int(shown + right if move.end == "L" else left + shown)


def points(observation: Any, move: Any) -> int:
    """In-play points ``move`` would score (0 where the rules have no fives)."""
    if observation.params.get("in_play") != "fives":
        return 0
    count = count_after(observation, move)
    return count // 5 if count > 0 and count % 5 == 0 else 0


def play(observation: Any) -> Any:
    """Return the move scoring most in play; ties go to the heaviest tile."""
    return max(observation.legal_moves, key=lambda m: (points(observation, m), m.tile.pips))
