"""What the live feed costs a match: games a second with no feed, with a feed nobody watches,
with a watched feed (throttled, as workers publish), and with a watched feed publishing at
every step (the alternative not chosen). Prints each rate and its ratio to no feed.

The bots are built-in strategies in this process (the cheapest decisions, so the feed's
share is the largest it can be); the modes take turns, repeated, so the machine's load
falls on all alike. A redis-server of its own on a free port.

    PYTHONPATH=$PWD python benchmarks/live.py [--games 200] [--rules draw] [--repeat 5]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from arena.engine.rules import find_rules
from arena.match.referee import StrategyPlayer, Watch, play_match
from arena.service.livefeed import Feed, MatchPublisher
from tests.servers import running_redis


def _rate(rules: str, games: int, seed: int, watch: Watch | None) -> tuple[float, float]:
    """Games a second of wall-clock time and of this process's CPU time."""
    players = [StrategyPlayer("greedy"), StrategyPlayer("random")]
    wall, cpu = time.perf_counter(), time.process_time()
    outcomes = play_match(find_rules(rules), players, games=games, seed=seed, watch=watch)
    played = sum(1 for _ in outcomes)
    return played / (time.perf_counter() - wall), played / (time.process_time() - cpu)


def _median(values: list[float]) -> float:
    return sorted(values)[len(values) // 2]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--rules", default="draw")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with running_redis() as server:
        feed = Feed.from_url(server.url)
        feed.watch("watched")
        feed.watch("every")
        modes: dict[str, object] = {
            "no feed": lambda: None,
            "unwatched": lambda: MatchPublisher(feed, "unwatched"),
            "watched": lambda: MatchPublisher(feed, "watched"),
            "every step": lambda: MatchPublisher(feed, "every", publish_seconds=0.0),
        }
        rates: dict[str, list[tuple[float, float]]] = {mode: [] for mode in modes}
        for repeat in range(args.repeat):
            for mode, make in modes.items():
                watch = make()  # type: ignore[operator]
                rates[mode].append(_rate(args.rules, args.games, repeat, watch))
                feed.watch("watched")
                feed.watch("every")
    wall = {mode: _median([w for w, _ in values]) for mode, values in rates.items()}
    cpu = {mode: _median([c for _, c in values]) for mode, values in rates.items()}
    print(f"{args.games} games of {args.rules} a run, median of {args.repeat} runs each")
    print(f"{'':>11}  {'wall games/s':>12}  {'ratio':>5}  {'CPU games/s':>11}  {'ratio':>5}")
    for mode in modes:
        print(
            f"{mode:>11}  {wall[mode]:12.1f}  {wall[mode] / wall['no feed']:5.3f}"
            f"  {cpu[mode]:11.1f}  {cpu[mode] / cpu['no feed']:5.3f}"
        )


if __name__ == "__main__":
    main()
