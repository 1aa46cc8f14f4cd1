"""What the live feed costs a match: games a second with no feed, with a feed nobody watches,
with a watched feed (throttled, as workers publish), and with a watched feed publishing at
every step (the alternative not chosen). Prints each rate and its ratio to no feed.

The bots are built-in strategies in this process (the cheapest decisions, so the feed's
share is the largest it can be); the modes take turns, repeated, so the machine's load
falls on all alike. A redis-server of its own on a free port.

``--pages N``: the live page and its polled fragment instead, N requests each through
the app (Flask's test client, SQLite, one running match whose view is in the feed): p50
and p95 milliseconds.

    PYTHONPATH=$PWD python benchmarks/live.py [--games 200] [--rules draw] [--repeat 5]
    PYTHONPATH=$PWD python benchmarks/live.py --pages 300
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


def _pages(url: str, requests: int) -> None:
    """Time the live page and its fragment for one running match (the feed at ``url``)."""
    import tempfile

    from arena.engine.game import Game
    from arena.engine.spectate import spectator_view
    from arena.service.livefeed import match_key
    from arena.service.matches import create_stored_tournament
    from arena.store.db import connect, upgrade
    from arena.store.queue import claim_match
    from web import create_app

    folder = Path(tempfile.mkdtemp(prefix="arena-live-bench-"))
    database = f"sqlite:///{folder / 'arena.db'}"
    upgrade(database)
    store = connect(database)
    bots = Path(__file__).resolve().parent.parent / "bots"
    for name in ("random", "greedy"):
        store.add_bot_version("reference", name, (bots / f"{name}.py").read_text(), {})
    rules = find_rules("draw")
    create_stored_tournament(
        store, name="watched", rules=rules, format="round-robin",
        entrants=["reference/random", "reference/greedy"], games_per_match=20, seed=1,
    )  # fmt: skip
    claimed = claim_match(store, "bench", lease_seconds=3600)
    assert claimed is not None
    game = Game(rules, 2, seed=5)
    for _ in range(12):
        game.apply(game.legal_moves()[0])
    Feed.from_url(url).publish(match_key(claimed.match_id), spectator_view(game))
    app = create_app(database, {"ARENA_LIVE_URL": url, "ARENA_WATCH_LIMIT": "1000000 per minute",
                                "ARENA_READ_LIMIT": "1000000 per minute"})  # fmt: skip
    client = app.test_client()
    for path in (f"/live/{claimed.match_id}/state", f"/live/{claimed.match_id}"):
        times = []
        cpu = time.process_time()
        for _ in range(requests):
            started = time.perf_counter()
            assert client.get(path).status_code == 200
            times.append(1000 * (time.perf_counter() - started))
        cpu_ms = 1000 * (time.process_time() - cpu) / requests
        times.sort()
        p50, p95 = times[len(times) // 2], times[int(len(times) * 0.95)]
        print(
            f"{path:>16}: p50 {p50:6.1f} ms  p95 {p95:6.1f} ms  CPU {cpu_ms:5.1f} ms a request"
            f"  ({requests} requests)"
        )
    store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--rules", default="draw")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--pages", type=int, default=0)
    args = parser.parse_args()
    if args.pages:
        with running_redis() as server:
            _pages(server.url, args.pages)
        return
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
