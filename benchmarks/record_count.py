"""``arena serve``'s database step at start against a big database: the schema checked and
the game records still stored as JSON counted (:func:`arena.service.database.upgrade_database`
with ``convert=False``), with the partial index of those rows (``ix_game_records_unconverted``,
migration 0029) and without it, interleaved.

    ./run python benchmarks/record_count.py [--games 200000] [--json 100] [--runs 5] [--url URL]

Fills a fresh database (default: a SQLite file in a temporary directory; ``--url`` for an
empty PostgreSQL database) with ``--games`` stored games (benchmarks/web.py's matches) and a
game record for each: compact bytes (1,400 random bytes, about what the codec writes for a
``draw`` game) but for ``--json`` rows still holding their JSON, as stored before migration
0024. Then it times the start's step ``--runs`` times with the index and without it (dropped,
then created again), one after the other, and prints the best and median wall and CPU time of
each and their ratio, with the load average (the machine is shared). The database's pages are
in the operating system's cache for both (a cold start reads the whole table without the
index, from the disk).
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from sqlalchemy import insert, select, text, update

from arena.service.database import upgrade_database
from arena.store.db import connect, upgrade
from arena.store.models import GameRecord, Match
from arena.store.records import unconverted_records
from benchmarks.web import GAMES_PER_MATCH, fill

#: Bytes of a compact record here (the demo's ``draw`` games: about 1,400 on disk a game).
RECORD_BYTES = 1400
INDEX = "ix_game_records_unconverted"
CHUNK = 5000


def store_records(url: str, json_rows: int) -> int:
    """A record for every game of every stored match, the first ``json_rows`` as JSON;
    return the rows stored."""
    store = connect(url)
    try:
        with store.read() as session:
            matches = list(session.scalars(select(Match.id).order_by(Match.id)))
        keys = [(m, i) for m in matches for i in range(GAMES_PER_MATCH)]
        for start in range(0, len(keys), CHUNK):
            rows = [
                {"match_id": m, "game_index": i, "data": os.urandom(RECORD_BYTES)}
                for m, i in keys[start : start + CHUNK]
            ]
            with store.write() as session:
                session.execute(insert(GameRecord), rows)
        with store.write() as session:
            first = session.scalars(select(GameRecord.id).order_by(GameRecord.id).limit(json_rows))
            session.execute(
                update(GameRecord)
                .where(GameRecord.id.in_(list(first)))
                .values(data=None, record={"version": 2, "rounds": []})
            )
        with store.engine.connect() as connection:
            connection.execute(text("ANALYZE"))
            connection.commit()
        return len(keys)
    finally:
        store.close()


def set_index(url: str, present: bool) -> None:
    """Create or drop the partial index."""
    store = connect(url)
    try:
        with store.engine.connect() as connection:
            if present:
                connection.execute(
                    text(
                        f"CREATE INDEX IF NOT EXISTS {INDEX} ON game_records (id) "
                        "WHERE data IS NULL"
                    )
                )
            else:
                connection.execute(text(f"DROP INDEX IF EXISTS {INDEX}"))
            connection.commit()
    finally:
        store.close()


def timed(step: Callable[[], int]) -> tuple[float, float, int]:
    """Wall and CPU seconds of ``step()``, and what it returned."""
    wall, cpu = time.perf_counter(), time.process_time()
    found = step()
    return time.perf_counter() - wall, time.process_time() - cpu, found


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--games", type=int, default=200_000, help="stored games (records)")
    parser.add_argument("--json", type=int, default=100, help="records still stored as JSON")
    parser.add_argument("--runs", type=int, default=5, help="runs with and without the index")
    parser.add_argument("--url", help="Database URL (default: a new SQLite file).")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        url = args.url or f"sqlite:///{Path(directory) / 'records.db'}"
        upgrade(url)
        store = connect(url)
        try:
            began = time.perf_counter()
            fill(store, args.games, 20, 2026)
        finally:
            store.close()
        rows = store_records(url, args.json)
        print(f"stored {rows:,} game records ({args.json} as JSON) in "
              f"{time.perf_counter() - began:.0f} s")  # fmt: skip
        before = os.getloadavg()[0]
        times: dict[tuple[str, bool], list[tuple[float, float]]] = {}
        store = connect(url)
        try:
            for _ in range(args.runs):
                for present in (False, True):
                    set_index(url, present)
                    steps: dict[str, Callable[[], int]] = {
                        "serve's step": lambda: upgrade_database(url, convert=False).unconverted,
                        "the count": lambda: unconverted_records(store),
                    }
                    for name, step in steps.items():
                        wall, cpu, found = timed(step)
                        assert found == args.json, found
                        times.setdefault((name, present), []).append((wall, cpu))
        finally:
            store.close()
        set_index(url, True)
        after = os.getloadavg()[0]
    for (name, present), runs in times.items():
        walls, cpus = [w for w, _ in runs], [c for _, c in runs]
        label = f"{name}, {'with' if present else 'without'} the index"
        print(f"{label:36} wall best {min(walls) * 1000:8.1f} ms  median "
              f"{statistics.median(walls) * 1000:8.1f} ms | CPU best {min(cpus) * 1000:8.1f} ms  "
              f"median {statistics.median(cpus) * 1000:8.1f} ms")  # fmt: skip
    for name in ("serve's step", "the count"):
        ratio = statistics.median(w for w, _ in times[name, True]) / statistics.median(
            w for w, _ in times[name, False]
        )
        print(f"{name}: with / without the index (median wall) {ratio:.3f}")
    print(f"load average {before:.1f} before, {after:.1f} after (1 min), "
          f"{os.cpu_count()} cores")  # fmt: skip


if __name__ == "__main__":
    main()
