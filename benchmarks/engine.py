"""Engine speed: random-vs-random 2-player ``block`` rounds, engine against a bare loop.

Usage::

    ./run python benchmarks/engine.py [--seconds S] [--seed N]

Plays rounds on one core (a) through the engine's public API (``Round.dealt``,
which shuffles and deals as ``Game`` does, then ``legal_moves`` and ``apply``)
and (b) through a minimal loop of the same rules written here with tiles as
tuples in lists. The two are timed in alternating slices of the same run and
the median rate of each is reported, with the ratio engine/bare (goal: at
least 0.6). Tiles played per round and
the blocked fraction of each are printed as a check that both play the same
game (FACTS.md: about 10.6 tiles a round, about two thirds blocked).
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import statistics
import sys
import time
from dataclasses import dataclass

from arena import Round, Termination, find_rules

Tile = tuple[int, int]


@dataclass
class Tally:
    """Rounds played by one contender, and what happened in them."""

    rounds: int = 0
    tiles: int = 0
    blocked: int = 0
    seconds: float = 0.0

    def add(self, other: Tally) -> None:
        """Add another slice's counts."""
        self.rounds += other.rounds
        self.tiles += other.tiles
        self.blocked += other.blocked
        self.seconds += other.seconds


# --- (a) the engine ---------------------------------------------------------------


def engine_slice(rng: random.Random, seconds: float) -> Tally:
    """Play engine rounds for about ``seconds``."""
    rules = find_rules("block")
    tally = Tally()
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        game = Round.dealt(rules, 2, rng)
        played = 0
        while not game.is_terminal():
            game.apply(rng.choice(game.legal_moves()))
            played += 1
        result = game.result
        assert result is not None
        tally.rounds += 1
        tally.tiles += played
        tally.blocked += result.termination is Termination.BLOCKED
        now = time.perf_counter()
        if now >= deadline:
            tally.seconds = now - start
            return tally


# --- (b) the bare loop --------------------------------------------------------------

SET: list[Tile] = [(high, low) for high in range(7) for low in range(high + 1)]


def pips(hand: list[Tile]) -> int:
    """Return the pip count of a hand."""
    return sum(a + b for a, b in hand)


def blocked_points(hands: list[list[Tile]]) -> tuple[int | None, int]:
    """Return (winner, points) of a blocked round: lowest pips, then lowest single tile."""
    counts = [pips(hand) for hand in hands]
    if counts[0] != counts[1]:
        winner = 0 if counts[0] < counts[1] else 1
    else:
        lowest = [min(a + b for a, b in hand) for hand in hands]
        if lowest[0] == lowest[1]:
            return None, 0
        winner = 0 if lowest[0] < lowest[1] else 1
    return winner, counts[1 - winner] - counts[winner]


def bare_round(rng: random.Random, tiles: list[Tile]) -> tuple[int, bool, int | None, int]:
    """Play one 2-player ``block`` round; return (tiles played, blocked, winner, points)."""
    while True:
        rng.shuffle(tiles)
        hands = [tiles[:7], tiles[7:14]]
        doubles = [(a, seat) for seat in (0, 1) for a, b in hands[seat] if a == b]
        if doubles:
            break
    double, seat = max(doubles)
    hands[seat].remove((double, double))
    left = right = double
    played = 1
    while True:
        seat = 1 - seat
        hand = hands[seat]
        moves = []
        for tile in hand:
            a, b = tile
            if a == left or b == left:
                moves.append((tile, 0))
            if a == right or b == right:
                moves.append((tile, 1))
        if not moves:
            other = hands[1 - seat]
            if not any(a in (left, right) or b in (left, right) for a, b in other):
                winner, points = blocked_points(hands)
                return played, True, winner, points
            continue  # pass
        tile, end = rng.choice(moves)
        hand.remove(tile)
        played += 1
        a, b = tile
        if end == 0:
            left = b if a == left else a
        else:
            right = b if a == right else a
        if not hand:
            return played, False, seat, pips(hands[1 - seat])


def bare_slice(rng: random.Random, seconds: float) -> Tally:
    """Play bare-loop rounds for about ``seconds``."""
    tiles = list(SET)
    tally = Tally()
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        played, blocked, _, _ = bare_round(rng, tiles)
        tally.rounds += 1
        tally.tiles += played
        tally.blocked += blocked
        now = time.perf_counter()
        if now >= deadline:
            tally.seconds = now - start
            return tally


# --- the run ------------------------------------------------------------------------


def pin_to_one_core() -> str:
    """Pin the process to one CPU where the OS allows it; say what was done."""
    if not hasattr(os, "sched_setaffinity"):
        return "one process (no sched_setaffinity here: not pinned)"
    cpu = min(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {cpu})
    return f"one core (pinned to CPU {cpu})"


def report(label: str, rates: list[float], total: Tally) -> None:
    """Print one contender's median rate and sanity figures."""
    print(
        f"{label:<7} {statistics.median(rates):>9,.0f} rounds/s median "
        f"(min {min(rates):,.0f}, max {max(rates):,.0f}; {total.rounds:,} rounds); "
        f"{total.tiles / total.rounds:.2f} tiles/round; "
        f"{total.blocked / total.rounds:.1%} blocked"
    )


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; return the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--seconds", type=float, default=20.0, help="total run time (20)")
    parser.add_argument("--seed", type=int, default=1, help="seed of both random streams (1)")
    args = parser.parse_args(argv)
    where = pin_to_one_core()
    print(f"Python {platform.python_version()} ({sys.implementation.name}), {where}")
    slices = max(2, round(args.seconds / 2))
    slice_seconds = args.seconds / (2 * slices)
    engine_rng, bare_rng = random.Random(args.seed), random.Random(args.seed)
    engine_slice(engine_rng, 0.1)  # warm up both before timing
    bare_slice(bare_rng, 0.1)
    engine_total, bare_total = Tally(), Tally()
    engine_rates: list[float] = []
    bare_rates: list[float] = []
    for index in range(slices):
        # Alternate which goes first so drifts in machine speed hit both alike.
        order = ("engine", "bare") if index % 2 == 0 else ("bare", "engine")
        for contender in order:
            if contender == "engine":
                tally = engine_slice(engine_rng, slice_seconds)
                engine_rates.append(tally.rounds / tally.seconds)
                engine_total.add(tally)
            else:
                tally = bare_slice(bare_rng, slice_seconds)
                bare_rates.append(tally.rounds / tally.seconds)
                bare_total.add(tally)
    print(f"{slices} slices of {slice_seconds:.2f} s each, interleaved; seed {args.seed}")
    report("engine", engine_rates, engine_total)
    report("bare", bare_rates, bare_total)
    ratio = statistics.median(engine_rates) / statistics.median(bare_rates)
    print(f"ratio engine/bare: {ratio:.2f} (goal >= 0.60)")
    tiles_gap = abs(
        engine_total.tiles / engine_total.rounds / (bare_total.tiles / bare_total.rounds)
    )
    if abs(tiles_gap - 1) > 0.03:
        print(f"WARNING: tiles per round differ by {abs(tiles_gap - 1):.1%}: not the same game?")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
