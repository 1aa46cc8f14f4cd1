"""greedy: play the heaviest tile that fits.

Shedding the tiles with the most pips first keeps the hand's count low, which is
what a blocked round and the opponents' score are counted from. Ties go to the
first of the tied moves in ``legal_moves`` order (sorted by tile, then lead, left,
right), so greedy is deterministic: the baseline every other bot is measured
against.
"""

from __future__ import annotations

from typing import Any

NAME = "greedy"


def play(observation: Any) -> Any:
    """Return the first legal move with the most pips."""
    return max(observation.legal_moves, key=lambda move: move.tile.pips)
