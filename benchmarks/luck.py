"""The luck of the draw's CPU a game (``arena.compete.margins.game_lucks``), alone.

Usage::

    ./run python benchmarks/luck.py [--games N] [--runs N] [--bots greedy,random]
        [--only WORD] [--before TREE]

For every preset and player count (and 2v2 ``muggins``), each run plays ``--games`` seeded
games of the built-in strategies ``--bots`` (taking the seats in turn, the first one
moving round from game to game), then times ``game_lucks`` on each game just played (its
events never made, as a compare's worker has them), in CPU time: the games and every cache
are frozen out of the garbage collector's full collections first, which would otherwise
fall in one preset's measurement or another's as the allocations happen to add up.
Prints the median over the runs of the milliseconds a game, per setup and summed, and the
load average before and after (the machine is shared). ``--before TREE`` also times
another source tree (the code before a change, ``git archive main | tar -x -C TREE``),
put first on ``PYTHONPATH``, each of its runs right before the same run of this tree's,
so that both meet the same load; it checks that both gave the same lucks, to the bit.
``--only WORD`` keeps the setups whose name contains WORD.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
#: One run's result: ``ms`` (each setup's milliseconds a game) and ``lucks`` (its games').
Run = dict[str, Any]


def measure(games: int, seed: int, bots: list[str], only: str) -> Run:
    """One run in this process: each setup's milliseconds a game and its lucks."""
    from arena.compete.margins import game_lucks
    from arena.engine.rules import PRESETS
    from arena.match.play import game_seeds, play_game
    from arena.match.strategies import make_strategy

    setups = [(name, n, False) for name, rules in PRESETS.items() for n in rules.players]
    ms: dict[str, float] = {}
    lucks: dict[str, list[tuple[tuple[float, ...], ...]]] = {}
    for name, players, teams in [*setups, ("muggins", 4, True)]:
        label = f"{name}-{players}p" + ("-teams" if teams else "")
        if only not in label:
            continue
        played = []
        for game_seed in game_seeds(seed, games):
            strategies = [
                make_strategy(bots[(seat + game_seed) % len(bots)], random.Random(game_seed + seat))
                for seat in range(players)
            ]
            played.append(play_game(PRESETS[name], strategies, teams=teams, seed=game_seed))
        gc.collect()
        gc.freeze()
        started = time.process_time()
        lucks[label] = [game_lucks(game) for game in played]
        ms[label] = (time.process_time() - started) * 1000 / games
        gc.unfreeze()
    return {"ms": ms, "lucks": lucks}


def run_tree(tree: Path, args: argparse.Namespace, seed: int) -> Run:
    """One run in a process of its own, ``tree`` first on ``PYTHONPATH``."""
    env = dict(os.environ, PYTHONPATH=str(tree))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    command = [sys.executable, __file__, "--child", str(seed), "--games", str(args.games)]
    command += ["--bots", args.bots, "--only", args.only]
    out = subprocess.run(command, env=env, cwd=tree, capture_output=True, text=True, check=True)
    result: Run = json.loads(out.stdout)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=60)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--bots", default="greedy,random")
    parser.add_argument("--only", default="")
    parser.add_argument("--before", metavar="TREE", type=Path)
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        print(json.dumps(measure(args.games, args.child, args.bots.split(","), args.only)))
        return
    trees = [ROOT] if args.before is None else [args.before.resolve(), ROOT]
    print(f"load {os.getloadavg()[0]:.1f}")
    runs: dict[Path, list[Run]] = {tree: [] for tree in trees}
    for seed in range(1, args.runs + 1):
        for tree in trees:
            runs[tree].append(run_tree(tree, args, seed))
        if args.before is not None:
            same = runs[trees[0]][-1]["lucks"] == runs[ROOT][-1]["lucks"]
            print(f"run {seed}: the same lucks to the bit: {same}")
    report(runs, trees)
    print(f"load {os.getloadavg()[0]:.1f}")


def report(runs: dict[Path, list[Run]], trees: list[Path]) -> None:
    """Each setup's median milliseconds a game per tree, their ratio, and the sums."""

    def median(tree: Path, label: str) -> float:
        return float(statistics.median(run["ms"][label] for run in runs[tree]))

    labels = list(runs[ROOT][0]["ms"])
    heads = ["before", "after", "ratio"] if len(trees) == 2 else ["ms a game"]
    print(f"{'setup':22}" + "".join(f"{head:>10}" for head in heads))
    totals = [0.0] * len(trees)
    for label in [*labels, "sum"]:
        if label == "sum":
            values = totals
        else:
            values = [median(tree, label) for tree in trees]
            totals = [total + value for total, value in zip(totals, values, strict=True)]
        cells = [f"{value:10.3f}" for value in values]
        if len(trees) == 2:
            cells.append(f"{values[1] / values[0]:10.2f}")
        print(f"{label:22}" + "".join(cells))


if __name__ == "__main__":
    main()
