"""Re-fit the stored ratings of a rule set over 1,000,000 games in the database.

    ./run python benchmarks/stored_ratings.py [--matches 100000] [--bots 50] [--url URL]

Fills a fresh database (default: a SQLite file in a temporary directory; ``--url`` for
PostgreSQL, which must not hold the benchmark's tournaments yet) with ``--matches`` done
2-player matches of 10 games each, among ``--bots`` bot versions of known strength, spread
over 10 tournaments (bulk inserts, then ANALYZE; not timed), then times
``arena.service.results.refit_ratings`` ``--repeat`` times: reading the games out of the
database (load), building the result matrix and fitting it (fit), and replacing the ratings
rows and appending the history (write). The goal (issue 4) is under 5 seconds in all.
Prints the correlation of the fitted ratings with the true ones.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from sqlalchemy import insert, text

from arena.compete.ratings import ELO_PER_NAT
from arena.engine.rules import PRESETS
from arena.service.results import refit_ratings
from arena.store.db import Store, connect, upgrade
from arena.store.models import Match, Tournament

GAMES_PER_MATCH = 10
TOURNAMENTS = 10
DRAW_RATE = 0.04
CHUNK = 10_000


def fill(store: Store, matches: int, bots: int, seed: int) -> dict[int, float]:
    """Store the bot versions, tournaments and done matches; return each version's true
    rating (Elo, mean about 1500)."""
    rng = np.random.default_rng(seed)
    truth = 1500.0 + rng.normal(0.0, 200.0, bots)
    versions = [
        store.add_bot_version("bench", f"bot{i:03d}", f"# bot {i}\n", {})[0].id for i in range(bots)
    ]
    rules = PRESETS["block"]
    rule_set = store.ensure_rule_set(rules)
    with store.write() as session:
        tournaments = [
            Tournament(
                name=f"stored-ratings-bench-{seed}-{t}",
                format="round-robin",
                rule_set_id=rule_set.id,
                players=2,
                teams=False,
                games_per_match=GAMES_PER_MATCH,
                seed=seed,
                status="done",
            )
            for t in range(TOURNAMENTS)
        ]
        session.add_all(tournaments)
        session.flush()
        tournament_ids = [t.id for t in tournaments]
    for start in range(0, matches, CHUNK):
        rows = [
            _match(rng, truth, versions, tournament_ids[number % TOURNAMENTS], number)
            for number in range(start, min(matches, start + CHUNK))
        ]
        with store.write() as session:
            session.execute(insert(Match), rows)
    # Table statistics, as autovacuum (PostgreSQL) would gather them after such inserts:
    # without them PostgreSQL plans the re-fit's query as nested loops over a few rows, and it
    # took 3 times as long (measured 6.6-7.3 s against 2.3-2.5 s, on a busy machine).
    with store.engine.connect() as connection:
        connection.execute(text("ANALYZE"))
        connection.commit()
    return {version: float(truth[i]) for i, version in enumerate(versions)}


def _match(
    rng: np.random.Generator,
    truth: np.typing.NDArray[np.float64],
    versions: list[int],
    tournament_id: int,
    number: int,
) -> dict[str, Any]:
    a, b = rng.choice(len(versions), 2, replace=False)
    p_first = 1.0 / (1.0 + np.exp(-(truth[a] - truth[b]) / ELO_PER_NAT))
    first_wins = rng.random(GAMES_PER_MATCH) < p_first
    drawn = rng.random(GAMES_PER_MATCH) < DRAW_RATE
    games = []
    for index in range(GAMES_PER_MATCH):
        places = [0, 0] if drawn[index] else [0, 1] if first_wins[index] else [1, 0]
        games.append(
            {
                "index": index,
                "seed": number * GAMES_PER_MATCH + index,
                "places": places,
                "points": [100, 40] if places == [0, 1] else [40, 100],
                "winners": [places.index(0)],
                "termination": "target",
                "verdict": None,
            }
        )
    return {
        "tournament_id": tournament_id,
        "key": f"m{number:07d}",
        "seats": [versions[a], versions[b]],
        "labels": [f"bot{a:03d}", f"bot{b:03d}"],
        "games": GAMES_PER_MATCH,
        "seed": number,
        "status": "done",
        "attempts": 1,
        "result": {"games": games, "seconds": 1.0, "worker": "bench:1"},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=100_000)
    parser.add_argument("--bots", type=int, default=50)
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--url", help="Database URL (default: a new SQLite file).")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        url = args.url or f"sqlite:///{Path(directory) / 'bench.db'}"
        upgrade(url)
        store = connect(url)
        try:
            began = time.perf_counter()
            truth = fill(store, args.matches, args.bots, args.seed)
            games = args.matches * GAMES_PER_MATCH
            print(
                f"{store.dialect}: filled {args.matches:,} matches ({games:,} games, "
                f"{args.bots} bots) in {time.perf_counter() - began:.1f} s"
            )
            for _ in range(args.repeat):
                refit = refit_ratings(store, PRESETS["block"])
                fitted = [r.rating for r in refit.ratings]
                true = [truth[r.bot_version_id] for r in refit.ratings]
                print(
                    f"refit {refit.games:,} games: load {refit.load_seconds:.2f} s, "
                    f"fit {refit.fit_seconds:.2f} s, write {refit.write_seconds:.2f} s, "
                    f"total {refit.seconds:.2f} s; "
                    f"correlation {float(np.corrcoef(fitted, true)[0, 1]):.5f}"
                )
        finally:
            store.close()


if __name__ == "__main__":
    main()
