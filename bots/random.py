"""random: a uniformly random legal move.

The weakest reference bot and the usual sparring partner (``arena check`` plays
against it). It never thinks: every legal move is equally likely. It keeps its
own ``random.Random`` so that it does not disturb anyone else's random numbers.
"""

from __future__ import annotations

import random
from typing import Any

NAME = "random"

_rng = random.Random()


def play(observation: Any) -> Any:
    """Return one of ``observation.legal_moves``, chosen uniformly."""
    return _rng.choice(observation.legal_moves)
