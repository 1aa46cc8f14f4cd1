"""What retention saves: bytes on disk a game with its record and without, and the prune's rate.

    ./run python benchmarks/retention.py [--entrants 10] [--games-per-pair 20] [--url URL]

Plays a round robin of the built-in strategies (``random`` and ``greedy``, in turn) under
the demo's ``draw`` rules in this process, stores every match as a worker does
(:func:`arena.store.queue.complete_match`: its result and its games' records), measures the
database (SQLite: the file after a checkpoint and VACUUM; PostgreSQL, ``--url``: its size
after VACUUM FULL), prunes every record with :func:`arena.service.retention.prune_records`
(the default batches of about 1,000 records, a sweep's bound lifted; timed), and measures
again. The database before the games (schema, bots) is measured too and taken off, so the
figures are the games' own: bytes a game with records, without (the results, the matches'
rows and their indexes: what stays forever), and the records' share; records pruned a second.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import os
import sqlite3
import tempfile
import time
from pathlib import Path

from sqlalchemy import select, text

from arena.compete.entrants import Entrant
from arena.compete.localrun import play_one
from arena.compete.tournaments import schedule
from arena.engine.rules import find_rules
from arena.service.results import result_json
from arena.service.retention import RetentionPolicy, prune_records
from arena.store.db import Store, connect, upgrade
from arena.store.models import Match
from arena.store.queue import complete_match, create_tournament

RULES = find_rules("draw")
STRATEGIES = ("random", "greedy")


def size(store: Store) -> int:
    """The database's bytes on disk, its free pages given back first (the store's pooled
    connections closed for it: it opens new ones after)."""
    store.close()
    if store.dialect == "sqlite":
        path = str(store.engine.url.database)
        with contextlib.closing(sqlite3.connect(path, isolation_level=None)) as connection:
            connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            connection.execute("VACUUM")
            connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return os.path.getsize(path)
    engine = store.engine.execution_options(isolation_level="AUTOCOMMIT")
    with engine.connect() as connection:
        connection.execute(text("VACUUM FULL"))
        found = connection.execute(text("SELECT pg_database_size(current_database())"))
        return int(found.scalar_one())


def play(store: Store, entrants: int, games_per_pair: int) -> int:
    """Store and play the round robin; return how many games were stored."""
    labels = [f"s{i:02d}" for i in range(entrants)]
    versions = {
        label: store.add_bot_version("bench", label, f"# {label}\n", {})[0].id for label in labels
    }
    local = [Entrant.builtin(STRATEGIES[i % 2], label) for i, label in enumerate(labels)]
    scheduled = schedule(
        "round-robin", local, rules=RULES, players=2, teams=False,
        games_per_match=games_per_pair, seed=1,
    )  # fmt: skip
    stored = {label: Entrant.stored(label, versions[label]) for label in labels}
    tournament = create_tournament(
        store, name="retention-bench", rules=RULES, format="round-robin", players=2,
        teams=False, games_per_match=games_per_pair, seed=1, entrants=list(stored.values()),
        matches=[
            dataclasses.replace(m, seats=tuple(stored[s.label] for s in m.seats))
            for m in scheduled
        ],
    )  # fmt: skip
    with store.read() as session:
        ids = dict(
            session.execute(
                select(Match.key, Match.id).where(Match.tournament_id == tournament)
            ).all()
        )
    games = 0
    for match in scheduled:
        result = play_one(match, RULES, sandboxed=False)
        records = [game.record for game in result.games]
        complete_match(
            store, ids[match.id], "bench:1", records=records, result=result_json(result, "bench:1")
        )
        games += len(records)
    return games


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entrants", type=int, default=10)
    parser.add_argument("--games-per-pair", type=int, default=20)
    parser.add_argument("--url", help="a database (default: a SQLite file, made here)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        url = args.url or f"sqlite:///{Path(directory) / 'retention.db'}"
        upgrade(url)
        store = connect(url)
        try:
            store.add_bot_version("bench", "warm-up", "# schema's first rows\n", {})
            empty = size(store)
            started = time.perf_counter()
            games = play(store, args.entrants, args.games_per_pair)
            played = time.perf_counter() - started
            full = size(store)
            policy = RetentionPolicy(keep_days=1e-9, sweep_records=10**9)
            started = time.perf_counter()
            report = prune_records(store, policy, now=None)
            pruning = time.perf_counter() - started
            pruned = size(store)
        finally:
            store.close()
    with_records, without = (full - empty) / games, (pruned - empty) / games
    print(f"{store.dialect}: {games} games of draw stored ({played:.1f} s to play them)")
    print(f"  bytes a game with its record:    {with_records:,.0f}")
    print(f"  bytes a game, record pruned:     {without:,.0f}  (its result and match: kept)")
    print(f"  the record's share:              {1 - without / with_records:.3f}")
    print(
        f"  pruned {report.records:,} records of {report.matches} matches in "
        f"{report.batches} transactions: {report.records / pruning:,.0f} records a second"
    )


if __name__ == "__main__":
    main()
