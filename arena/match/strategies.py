"""The engine's built-in strategies: ``random`` and ``greedy``.

A strategy is one function of what a seat sees: it takes an
:class:`arena.engine.observation.Observation` and returns one of its ``legal_moves``
(drawing and passing are the referee's job, never the strategy's). These two are
the engine's own, for local play and tests; the reference bots that play over
the bot protocol live in ``bots/``.

Strategies are made by name from :data:`STRATEGIES` with :func:`make_strategy`,
each with its own seeded ``random.Random`` so that a run is reproducible.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Protocol

from arena.engine.observation import Observation
from arena.engine.tiles import Move
from arena.errors import ParseError

__all__ = [
    "BUILTIN_CLASSES",
    "STRATEGIES",
    "BuiltinStrategy",
    "GreedyStrategy",
    "RandomStrategy",
    "Strategy",
    "heaviest",
    "make_strategy",
]


class Strategy(Protocol):
    """Choose a move: called with the seat's observation, returns one of its legal moves.

    Called only when the seat is to move, so ``observation.legal_moves`` is never empty.
    """

    def __call__(self, observation: Observation, /) -> Move: ...


class BuiltinStrategy(Strategy, Protocol):
    """A built-in strategy: its choice reads only the legal moves, so a referee may ask
    :meth:`choose` without building the observation (the same move as calling it)."""

    def choose(self, legal_moves: Sequence[Move], /) -> Move:
        """The move chosen among ``legal_moves`` (never empty)."""
        ...


class RandomStrategy:
    """Uniformly random among the legal moves, from its own ``rng``."""

    name = "random"

    def __init__(self, rng: random.Random) -> None:
        self._rng = rng

    def __call__(self, observation: Observation, /) -> Move:
        return self._rng.choice(observation.legal_moves)

    def choose(self, legal_moves: Sequence[Move], /) -> Move:
        return self._rng.choice(legal_moves)

    def __repr__(self) -> str:
        return "RandomStrategy()"


class GreedyStrategy:
    """Play the heaviest playable tile (most pips) to shed points fast.

    Ties go to the first of the tied moves in legal-move order (sorted by tile,
    then lead/left/right), so the choice is deterministic.
    """

    name = "greedy"

    def __init__(self, rng: random.Random | None = None) -> None:
        # Deterministic: the rng is accepted so every factory has one signature.
        del rng

    def __call__(self, observation: Observation, /) -> Move:
        return heaviest(observation.legal_moves)

    def choose(self, legal_moves: Sequence[Move], /) -> Move:
        return heaviest(legal_moves)

    def __repr__(self) -> str:
        return "GreedyStrategy()"


def heaviest(moves: Sequence[Move]) -> Move:
    """Greedy's choice among ``moves``: the heaviest tile, the first of equals."""
    return max(moves, key=_pips)  # max() keeps the first of equal keys


def _pips(move: Move) -> int:
    return move.tile.pips


#: The built-in strategies' classes (a referee asks their ``choose``: :class:`BuiltinStrategy`).
BUILTIN_CLASSES = (RandomStrategy, GreedyStrategy)
#: The built-in strategies by name: each a factory taking the strategy's own rng.
STRATEGIES: dict[str, Callable[[random.Random], BuiltinStrategy]] = {
    cls.name: cls for cls in BUILTIN_CLASSES
}


def make_strategy(name: str, rng: random.Random) -> BuiltinStrategy:
    """Return a new built-in strategy called ``name``, drawing its chances from ``rng``.

    Raises:
        ParseError: no built-in strategy has that name.
    """
    try:
        factory = STRATEGIES[name]
    except KeyError:
        raise ParseError(f"unknown strategy {name!r} (built-in: {', '.join(STRATEGIES)})") from None
    return factory(rng)
