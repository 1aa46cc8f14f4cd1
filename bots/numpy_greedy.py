"""numpy_greedy: greedy with suit control, scored with numpy (the python-numpy runtime's sample).

Upload it under the ``python-numpy`` runtime (``arena check --runtime python-numpy
bots/numpy_greedy.py``): it imports numpy, which the plain ``python`` runtime does not
have. Each move is scored for all legal moves at once, as arrays:

- the tile's pips (shedding weight keeps a blocked hand's count low, as ``greedy``), plus
- ``CONTROL`` for each other tile of the hand that matches the end the move leaves open
  (keeping an end in a suit you hold means you can follow it next turn), plus
- ``DOUBLE`` for a double (doubles are hard to place later: only one suit takes them).

Ties go to the first move in ``legal_moves`` order (``np.argmax``), so it is deterministic.
"""

from __future__ import annotations

from typing import Any

import numpy as np

NAME = "numpy-greedy"

#: Pips' worth of each other tile of the hand matching the end a move leaves open.
CONTROL = 2.0
#: Pips' worth of getting rid of a double.
DOUBLE = 1.5


def play(observation: Any) -> Any:
    """Return the legal move with the best score (pips, suit control, doubles)."""
    moves = observation.legal_moves
    if len(moves) == 1:
        return moves[0]
    tiles = np.array([(move.tile.high, move.tile.low) for move in moves], dtype=np.int64)
    hand = np.array([(tile.high, tile.low) for tile in observation.hand], dtype=np.int64)
    size = int(max(hand.max(), tiles.max())) + 1
    # how many tiles of the hand show each pip (a double counted once)
    suits = np.bincount(hand[:, 0], minlength=size) + np.bincount(
        hand[:, 1][hand[:, 0] != hand[:, 1]], minlength=size
    )
    if observation.ends is None:  # leading: the better-held half stays open
        open_end = np.where(suits[tiles[:, 0]] >= suits[tiles[:, 1]], tiles[:, 0], tiles[:, 1])
    else:
        end = np.array([observation.ends[0 if move.end == "L" else 1] for move in moves])
        open_end = np.where(tiles[:, 0] == end, tiles[:, 1], tiles[:, 0])
    doubles = tiles[:, 0] == tiles[:, 1]
    score = tiles.sum(axis=1) + CONTROL * (suits[open_end] - 1) + DOUBLE * doubles
    return moves[int(np.argmax(score))]
