"""Bytes on disk a stored game before (JSON records) and after (compact bytes, migration
0024), on SQLite and PostgreSQL; encode and decode time a game; the conversion's rate; a
bulk reader's time a game.

Usage::

    ./run python benchmarks/storage.py [--games 20000] [--postgresql-games 5000]

1. The demo's games, for real: ``draw``, the demo's four reference bots, a round robin of
   ``--per-pair`` games a pair in matches of 100 games (``arena serve --demo``'s), each
   match played by :func:`arena.service.matches.run_match` as a worker plays it (each bot
   in its own plain process: no sandbox here), so both the records and the matches'
   ``result`` JSON are the demo's.
2. A database at revision 0023 holding ``--games`` such games, the played matches and
   their records copied (the records as JSON, as 0023 stored them).
3. ``VACUUM`` (PostgreSQL: ``VACUUM FULL``), and its size: the whole SQLite file divided
   by the games (every table, index and page counted), and the part of it that is the
   matches' ``result`` JSON; PostgreSQL's ``pg_total_relation_size`` of ``game_records``
   and ``matches`` (TOAST and indexes included) and ``pg_database_size``.
4. A bulk read: the first ``--read`` games through :func:`arena.store.records.load_records`
   (what an export and the ratings' margins read).
5. ``arena db upgrade``'s two steps, timed: the schema (0024) and
   :func:`arena.store.records.convert_records` (games a second).
6. 3 and 4 again; then 3 with every record deleted (what the matches and the rest cost:
   the records' share is the difference).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import select, text
from sqlalchemy.orm import Session

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests.servers, tests.rawsql

from arena.engine.codec import decode, encode
from arena.engine.rules import PRESETS
from arena.service.matches import Config, create_stored_tournament, run_match
from arena.store.db import Store, connect, upgrade
from arena.store.models import GameRecord, Match
from arena.store.ratings import finished_matches
from arena.store.records import StoredRules, convert_records, load_records
from tests.rawsql import insert_row

BOTS = Path(__file__).resolve().parent.parent / "bots"
DEMO_BOTS = ("random", "greedy", "fives", "counter")
MATCH_GAMES = 100  # arena/cli/serve.py's DEMO_MATCH_GAMES
#: Each played match's ``result`` and its records.
Played = list[tuple[dict[str, Any], list[Any]]]


def load() -> str:
    return f"load {os.getloadavg()[0]:.1f}"


def _tournament(store: Store, games_per_pair: int, match_games: int = MATCH_GAMES) -> int:
    for name in DEMO_BOTS:
        store.add_bot_version("reference", name, (BOTS / f"{name}.py").read_text(), {})
    tournament_id, _ = create_stored_tournament(
        store,
        name="demo",
        rules=PRESETS["draw"],
        format="round-robin",
        entrants=[f"reference/{name}" for name in DEMO_BOTS],
        games_per_match=games_per_pair,
        seed=2026,
        match_games=match_games,
    )
    return tournament_id


def play_demo(directory: Path, per_pair: int) -> Played:
    """Each played match's ``result`` and records (the demo's, played for real)."""
    url = f"sqlite:///{directory / 'played.db'}"
    upgrade(url)
    store = connect(url)
    try:
        tournament_id = _tournament(store, per_pair)
        with store.read() as session:
            ids = list(session.scalars(select(Match.id).order_by(Match.id)))
        config = Config(bot_cache=directory / "bots")
        for match_id in ids:
            run_match(store, match_id, config=config, sandboxed=False)
        found = finished_matches(store, tournament_id, records=True)
        return [
            (
                dict(match.result or {}),
                [found.records[match.id, i] for i in range(match.games)],
            )
            for match in found.matches
        ]
    finally:
        store.close()


def build(url: str, games: int, played: Played) -> int:
    """A database at revision 0023 with ``games`` games copied from ``played`` (each match
    a played one's result and records, the records as JSON as 0023 stored them): its games."""
    upgrade(url, "0023")
    rules = PRESETS["draw"]
    texts = [[json.dumps(record) for record in records] for _, records in played]
    now = "2026-11-29 00:00:00"
    store = connect(url)
    try:
        with store.write() as session:
            rule_set = insert_row(
                session, "rule_sets", name=rules.name, version=rules.version,
                params=json.dumps(rules.params()), is_preset=True,
            )  # fmt: skip
            tournament = insert_row(
                session, "tournaments", name="demo", format="round-robin", rule_set_id=rule_set,
                players=2, teams=False, games_per_match=MATCH_GAMES, seed=1, status="done",
                created=now,
            )  # fmt: skip
        stored, number = 0, 0
        while stored < games:
            result, records = played[number % len(played)]
            with store.write() as session:
                match_id = insert_row(
                    session, "matches", tournament_id=tournament, key=f"m{number}",
                    seats="[1, 2]", labels='["a", "b"]', games=len(records), seed=number,
                    status="done", attempts=1, result=json.dumps(result), created=now,
                    finished=now,
                )  # fmt: skip
                session.execute(
                    text(
                        "INSERT INTO game_records (match_id, game_index, record) "
                        "VALUES (:match, :index, :record)"
                    ),
                    [
                        {"match": match_id, "index": i, "record": line}
                        for i, line in enumerate(texts[number % len(played)])
                    ],
                )
            stored += len(records)
            number += 1
        return stored
    finally:
        store.close()


@contextmanager
def opened(url: str) -> Iterator[Store]:
    store = connect(url)
    try:
        yield store
    finally:
        store.close()


def vacuum(store: Store) -> None:
    with store.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
        if store.dialect == "sqlite":
            raw = connection.connection.driver_connection
            raw.execute("VACUUM")  # type: ignore[union-attr]
            # in WAL mode the vacuumed file is in the log until a checkpoint copies it back
            raw.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # type: ignore[union-attr]
        else:
            connection.exec_driver_sql("VACUUM FULL ANALYZE")


def sizes(store: Store, url: str, games: int) -> str:
    """Bytes a game: the whole database, and its parts."""
    vacuum(store)
    with store.read() as session:
        result = session.scalar(
            text("SELECT sum(length(CAST(result AS TEXT))) FROM matches WHERE status = 'done'")
        )
        if store.dialect == "sqlite":
            path = Path(url.removeprefix("sqlite:///"))
            whole = path.stat().st_size
            parts = f"file {whole:,} B"
        else:
            whole = int(session.scalar(text("SELECT pg_database_size(current_database())")) or 0)
            records = int(
                session.scalar(text("SELECT pg_total_relation_size('game_records')")) or 0
            )
            matches = int(session.scalar(text("SELECT pg_total_relation_size('matches')")) or 0)
            parts = (
                f"database {whole:,} B; game_records {records / games:,.0f} B a game, "
                f"matches {matches / games:,.0f} B a game"
            )
    return (
        f"{whole / games:,.0f} B a game ({parts}); the matches' result JSON "
        f"{int(result or 0) / games:,.0f} B a game"
    )


def _number(session: Session, expression: str) -> int:
    return int(session.scalar(text(f"SELECT {expression}")) or 0)


def read_time(store: Store, count: int) -> str:
    """A bulk read of ``count`` games' records through the one reader, ms a game."""
    with store.read() as session:
        last = session.scalar(
            select(GameRecord.match_id)
            .order_by(GameRecord.match_id, GameRecord.game_index)
            .offset(count - 1)
            .limit(1)
        )
        assert last is not None, "fewer games than --read"
        started, cpu = time.perf_counter(), time.process_time()
        read = sum(1 for _ in load_records(store, session, GameRecord.match_id <= last))
        seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    each, cpu_each = seconds / read * 1000, cpu / read * 1000
    return (
        f"{read:,} games read in {seconds:.2f} s: {each:.2f} ms a game "
        f"({cpu_each:.2f} ms of CPU) ({load()})"
    )


def codec_times(played: Played, store: Store) -> str:
    records = [record for _, match in played for record in match]
    table = StoredRules(store)
    encode_ms, decode_ms, lengths = [], [], []
    for record in records:  # CPU time: the machine is shared
        started = time.process_time()
        data = encode(record, table)
        middle = time.process_time()
        decode(data, table)
        encode_ms.append((middle - started) * 1000)
        decode_ms.append((time.process_time() - middle) * 1000)
        lengths.append(len(data))
    return (
        f"{len(records)} demo records: {statistics.mean(lengths):,.0f} B encoded (mean); "
        f"encode {statistics.mean(encode_ms):.2f} ms, decode {statistics.mean(decode_ms):.2f} ms "
        f"of CPU a game ({load()})"
    )


def measure(
    url: str, games: int, played: list[tuple[dict[str, Any], list[Any]]], read: int
) -> None:
    started = time.perf_counter()
    games = build(url, games, played)
    print(f"  built {games:,} games at 0023 in {time.perf_counter() - started:.0f} s ({load()})")
    with opened(url) as store:
        print(f"  before (JSON):    {sizes(store, url, games)}  ({load()})")
    started = time.perf_counter()
    upgrade(url)
    schema = time.perf_counter() - started
    with opened(url) as store:
        print(f"  read before:      {read_time(store, read)}")
        print(f"  schema 0024:      {schema:.1f} s ({load()})")
        cpu = time.process_time()
        done = convert_records(store)
        cpu = time.process_time() - cpu
        rate, cpu_rate = done.converted / done.seconds, done.converted / cpu
        print(
            f"  conversion:       {done.converted:,} games in {done.seconds:.0f} s, "
            f"{rate:,.0f} games/s ({cpu:.0f} s of CPU: {cpu_rate:,.0f} games a CPU second); "
            f"1,000,000 games would take {1e6 / rate / 3600:.1f} h at this load, "
            f"{1e6 / cpu_rate / 3600:.1f} h of one core (extrapolated) ({load()})"
        )
        print(f"  after (compact):  {sizes(store, url, games)}  ({load()})")
        print(f"  read after:       {read_time(store, read)}")
        with store.write() as session:  # what the rest costs: the records' part is the gap
            session.execute(text("DELETE FROM game_records"))
        print(f"  without records:  {sizes(store, url, games)}  ({load()})")


def create_database(admin: Store, name: str) -> None:
    with admin.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
        connection.exec_driver_sql(f"CREATE DATABASE {name}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=20_000, help="games on SQLite (20,000)")
    parser.add_argument(
        "--postgresql-games", type=int, default=5_000, help="games on PostgreSQL (0: skip)"
    )
    parser.add_argument("--per-pair", type=int, default=MATCH_GAMES, help="games played a pair")
    parser.add_argument("--read", type=int, default=2_000, help="games a bulk read reads")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="arena-storage-") as temporary:
        directory = Path(temporary)
        started = time.perf_counter()
        played = play_demo(directory, args.per_pair)
        count = sum(len(records) for _, records in played)
        print(f"played {count} demo games in {time.perf_counter() - started:.0f} s ({load()})")
        with opened(f"sqlite:///{directory / 'played.db'}") as store:
            print(codec_times(played, store))
        print(f"SQLite, {args.games:,} games:")
        measure(f"sqlite:///{directory / 'big.db'}", args.games, played, args.read)
        if args.postgresql_games:
            from tests.servers import running_postgres

            with running_postgres() as server:
                with opened(f"{server}/postgres") as admin:
                    create_database(admin, "storage")
                print(f"PostgreSQL, {args.postgresql_games:,} games:")
                measure(f"{server}/storage", args.postgresql_games, played, args.read)


if __name__ == "__main__":
    main()
