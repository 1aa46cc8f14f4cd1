"""Re-fit the ratings over 1,000,000 synthetic results among 50 bots of known strength.

    ./run python benchmarks/ratings.py [--games 1000000] [--bots 50]

Times three paths in one run, each aggregation plus optimisation:

- 2-player results as arrays (``fit_ratings_arrays``: what a service reads
  from its database as winner/loser columns);
- a multi-player mix as a seat table (``ResultMatrix.add_seats``): 40%
  2-player, 30% 3-player, 20% 4-player free-for-all, 10% 2v2 teams;
- the 2-player results as ``GameResult`` objects (``fit_ratings``; building the
  objects is not timed).

Prints the seconds and the correlation of the fitted ratings with the true
ones. The goal (issue 4) is under 5 seconds for 1,000,000 results.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from arena.compete.ratings import ELO_PER_NAT, GameResult, Rating, ResultMatrix, fit_ratings_arrays
from arena.compete.ratings import fit_ratings as fit_results

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
DRAW_RATE = 0.04


def correlation(ratings: list[Rating], names: list[str], truth: FloatArray) -> float:
    fitted = {r.bot: r.rating for r in ratings}
    return float(np.corrcoef([fitted[name] for name in names], truth)[0, 1])


def two_player(
    rng: np.random.Generator, truth: FloatArray, games: int
) -> tuple[IntArray, IntArray, npt.NDArray[np.bool_]]:
    """Random pairings; the first seat wins with the Bradley-Terry probability."""
    bots = truth.size
    first = rng.integers(0, bots, games)
    second = (first + rng.integers(1, bots, games)) % bots
    p_first = 1.0 / (1.0 + np.exp(-(truth[first] - truth[second]) / ELO_PER_NAT))
    first_wins = rng.random(games) < p_first
    winners = np.where(first_wins, first, second)
    losers = np.where(first_wins, second, first)
    return winners, losers, rng.random(games) < DRAW_RATE


def seat_table(
    rng: np.random.Generator, truth: FloatArray, games: int
) -> tuple[IntArray, IntArray, IntArray, IntArray]:
    """A multi-player mix: places by Plackett-Luce (Gumbel noise on the strengths)."""
    parts = []
    kinds = [(2, False, 0.4), (3, False, 0.3), (4, False, 0.2), (4, True, 0.1)]
    start = 0
    for seats, teams, share in kinds:
        count = int(games * share)
        bots = np.argsort(rng.random((count, truth.size)), axis=1)[:, :seats]
        sides = np.tile(np.arange(seats) % 2 if teams else np.arange(seats), (count, 1))
        strength = truth[bots] / ELO_PER_NAT
        if teams:
            team = np.stack([strength[:, 0::2].mean(axis=1), strength[:, 1::2].mean(axis=1)], 1)
            utility = (team + rng.gumbel(size=team.shape))[:, sides[0]]
        else:
            utility = strength + rng.gumbel(size=strength.shape)
        places = np.argsort(np.argsort(-utility, axis=1), axis=1)
        if teams:
            places = np.where(places < 2, 0, 1)
        game = np.repeat(np.arange(start, start + count), seats)
        parts.append((game, bots.ravel(), places.ravel(), sides.ravel()))
        start += count
    game, bots, places, sides = (np.concatenate(column) for column in zip(*parts, strict=True))
    return game, bots.astype(np.int64), places.astype(np.int64), sides.astype(np.int64)


def timed(label: str, games: int, run: Callable[[], list[Rating]]) -> list[Rating]:
    began = time.perf_counter()
    ratings = run()
    seconds = time.perf_counter() - began
    print(f"{label:<44} {games:>9,} games  {seconds:6.2f} s", end="  ")
    return ratings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=1_000_000)
    parser.add_argument("--bots", type=int, default=50)
    parser.add_argument("--seed", type=int, default=2024)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    truth = rng.normal(0.0, 200.0, args.bots)
    names = [f"bot{i:02d}" for i in range(args.bots)]

    winners, losers, draws = two_player(rng, truth, args.games)
    ratings = timed(
        "2-player, arrays (fit_ratings_arrays)",
        args.games,
        lambda: fit_ratings_arrays(names, winners, losers, draws),
    )
    print(f"correlation {correlation(ratings, names, truth):.5f}")

    game, bots, places, sides = seat_table(rng, truth, args.games)

    def mixed() -> list[Rating]:
        matrix = ResultMatrix()
        codes = matrix.codes(names)
        matrix.add_seats(game, codes[bots], places, sides)
        return matrix.fit()

    ratings = timed("2-4 seats and 2v2, seat table (add_seats)", int(game.max()) + 1, mixed)
    print(f"correlation {correlation(ratings, names, truth):.5f}")

    results = [
        GameResult((names[w], names[v]), (0, 0) if d else (0, 1))
        for w, v, d in zip(winners.tolist(), losers.tolist(), draws.tolist(), strict=True)
    ]
    ratings = timed(
        "2-player, GameResult objects (fit_ratings)", len(results), lambda: fit_results(results)
    )
    print(f"correlation {correlation(ratings, names, truth):.5f}")


if __name__ == "__main__":
    main()
