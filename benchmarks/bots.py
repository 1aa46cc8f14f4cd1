"""Reference bots' strength: each bot in ``bots/`` against ``greedy``, 2 players, draw and muggins.

Usage::

    ./run python benchmarks/bots.py [--games N] [--mc-games N] [--budget S] [--seed N]
                                    [--rules draw,muggins] [--bots random,fives,...] [--jobs J]

Bots play in this process (no sandbox, no protocol): each file is loaded with
``arena.match.botkit.load_bot`` and each seat is asked with the observation a bot
process would receive (``botkit.Observation.from_dict(observation.to_dict())``).
Games come in seat-swapped pairs with the same seed (the bot in seat 0, then in
seat 1, same deals), which cancels most of the luck of the deal. For each bot
and rule set the script prints the games played, the bot's win rate with a 95%
Wilson interval, and the average thinking time per move of the bot and of greedy (``--baseline``
picks another opponent).
``montecarlo`` thinks for ``--budget`` seconds a move, so it plays ``--mc-games``.
``--jobs`` plays game pairs in that many processes (timings then share the cores).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena import Game, Move, find_rules
from arena.match.botkit import BotRunner, GameInfo, Observation, load_bot
from arena.match.play import game_seeds

BOTS_DIR = Path(__file__).resolve().parent.parent / "bots"
BASELINE = "greedy"


@dataclass
class Tally:
    """One bot's results against the baseline under one rule set."""

    games: int = 0
    wins: int = 0
    moves: int = 0
    seconds: float = 0.0
    base_moves: int = 0
    base_seconds: float = 0.0

    def add(self, other: Tally) -> None:
        """Add another tally's counts."""
        self.games += other.games
        self.wins += other.wins
        self.moves += other.moves
        self.seconds += other.seconds
        self.base_moves += other.base_moves
        self.base_seconds += other.base_seconds


def wilson(wins: int, games: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of a win rate (95% by default)."""
    if games == 0:
        return 0.0, 1.0
    p = wins / games
    denominator = 1 + z * z / games
    centre = (p + z * z / (2 * games)) / denominator
    half = z * math.sqrt(p * (1 - p) / games + z * z / (4 * games * games)) / denominator
    return centre - half, centre + half


def load(name: str, budget: float | None) -> BotRunner:
    """Load ``bots/NAME.py``; set montecarlo's time budget."""
    runner = load_bot(BOTS_DIR / f"{name}.py")
    module: Any = runner._module
    if budget is not None and hasattr(module, "TIME_BUDGET"):
        module.TIME_BUDGET = budget
    return runner


def play_game(
    rules_name: str, runners: list[BotRunner], seed: int, tag: str
) -> tuple[list[int], list[int], list[float]]:
    """Play one game; return the winning seats, and each seat's moves and thinking seconds."""
    rules = find_rules(rules_name)
    players = len(runners)
    game = Game(rules, players, seed=seed)
    game_id = f"{tag}-{seed}"
    for index, runner in enumerate(runners):
        info = GameInfo(game_id, index, players, False, rules.name, rules.params())
        runner.start(info)
    moves = [0] * players
    seconds = [0.0] * players
    while (seat := game.seat) is not None:
        observation = Observation.from_dict(game.observation(seat).to_dict())
        start = time.perf_counter()
        notation = runners[seat].choose(game_id, observation)
        seconds[seat] += time.perf_counter() - start
        moves[seat] += 1
        game.apply(Move.parse(notation))
    outcome = game.outcome()
    assert outcome is not None
    result = {"winners": list(outcome.winners), "scores": list(outcome.scores)}
    for runner in runners:
        runner.end(game_id, result)
    return list(outcome.winners), moves, seconds


def play_pairs(
    bot: str, rules_name: str, seeds: list[int], budget: float | None, baseline: str = BASELINE
) -> Tally:
    """Play a seat-swapped pair of games per seed: ``bot`` against ``baseline``."""
    runner, base = load(bot, budget), load(baseline, budget)
    tally = Tally()
    for seed in seeds:
        for bot_seat in (0, 1):
            runners = [runner, base] if bot_seat == 0 else [base, runner]
            winners, moves, seconds = play_game(rules_name, runners, seed, f"s{bot_seat}")
            tally.games += 1
            tally.wins += bot_seat in winners
            tally.moves += moves[bot_seat]
            tally.seconds += seconds[bot_seat]
            tally.base_moves += moves[1 - bot_seat]
            tally.base_seconds += seconds[1 - bot_seat]
    return tally


def measure(
    bot: str, rules_name: str, seeds: list[int], budget: float | None, jobs: int, baseline: str
) -> Tally:
    """Play all pairs, split over ``jobs`` processes."""
    if jobs <= 1:
        return play_pairs(bot, rules_name, seeds, budget, baseline)
    chunks = [seeds[i::jobs] for i in range(jobs)]
    total = Tally()
    with ProcessPoolExecutor(jobs) as pool:
        futures = [pool.submit(play_pairs, bot, rules_name, c, budget, baseline) for c in chunks]
        for future in futures:
            total.add(future.result())
    return total


def main(argv: list[str] | None = None) -> int:
    """Run the pairings and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=2000, help="games per pairing")
    parser.add_argument("--mc-games", type=int, default=400, help="games for montecarlo")
    parser.add_argument("--budget", type=float, default=None, help="montecarlo s/move")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--rules", default="draw,muggins")
    parser.add_argument("--bots", default="random,greedy,fives,counter,montecarlo")
    parser.add_argument("--jobs", type=int, default=1, help="processes")
    parser.add_argument("--baseline", default=BASELINE, help="the opponent of every bot")
    args = parser.parse_args(argv)
    print(f"each bot v {args.baseline}, 2 players, seat-swapped pairs of games (seed {args.seed})")
    header = f"{'rules':<8} {'bot':<11} {'games':>6} {'win rate':>9} {'95% interval':>15}"
    print(header + f" {'ms/move':>8} {args.baseline + ' ms/move':>15}")
    for rules_name in args.rules.split(","):
        for bot in args.bots.split(","):
            games = args.mc_games if bot == "montecarlo" else args.games
            seeds = game_seeds(args.seed, max(1, games // 2))
            tally = measure(bot, rules_name, seeds, args.budget, args.jobs, args.baseline)
            low, high = wilson(tally.wins, tally.games)
            rate = tally.wins / tally.games
            per_move = 1000 * tally.seconds / max(1, tally.moves)
            base = 1000 * tally.base_seconds / max(1, tally.base_moves)
            print(
                f"{rules_name:<8} {bot:<11} {tally.games:>6} {rate:>9.3f}"
                f"   [{low:.3f}, {high:.3f}] {per_move:>8.3f} {base:>15.3f}",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
