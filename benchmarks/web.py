"""The dashboard's pages against a big database: p50 and p95 response times.

    ./run python benchmarks/web.py [--games 1000000] [--bots 200] [--url URL] [--requests 200]

Fills a fresh database (default: a SQLite file in a temporary directory; ``--url`` for an
empty PostgreSQL database) with ``--games`` stored games (done 2-player matches of 20 games,
their results as the workers store them) among ``--bots`` bot versions of 20 owners, spread
over one round robin per preset (7 rule sets), and refits each rule set's ratings (the
worker's code; timed). Game records (the replays) are not stored: no page here reads them.
Then it serves the app as ``arena serve`` does (gunicorn, 2 processes of 4 threads) and asks,
over one kept-alive HTTP connection, for ``--requests`` leaderboards (a random rule set), bot
pages (a random bot: its versions, ratings, recent games and record against each opponent)
and tournament pages (a random rule set's round robin: 200 entrants and
about 143,000 games each at the defaults), printing the first (cold) time and the p50/p95 of
each. The goal (issue 10) is a p95 under 100 ms on SQLite and PostgreSQL.

The replay viewer (issue 11): the first bench match of ``block`` gets real game records of
``--rounds`` rounds or more (random play, to 100 points); the game page at a random state
and the state fragment the viewer's script fetches are timed the same way, and the game
page's weight is printed. The goal is a game page under 100 ms server-side and 150 KB.
"""

from __future__ import annotations

import argparse
import http.client
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from sqlalchemy import insert, text

from arena.compete.ratings import ELO_PER_NAT
from arena.engine.game import Game
from arena.engine.records import game_record
from arena.engine.rules import PRESETS
from arena.service.results import refit_ratings
from arena.store.db import Store, connect, upgrade
from arena.store.models import GameRecord, Match, Tournament, TournamentEntrant
from arena.store.queue import add_match_seats

GAMES_PER_MATCH = 20
OWNERS = 20
CHUNK = 5_000


def fill(store: Store, games: int, bots: int, seed: int) -> list[tuple[str, str]]:
    """Store the bots, one done round robin per preset and its matches; return the bots
    as (owner, name)."""
    rng = np.random.default_rng(seed)
    truth = 1500.0 + rng.normal(0.0, 200.0, bots)
    names = [(f"owner{i % OWNERS:02d}", f"bot{i:03d}") for i in range(bots)]
    versions = [
        store.add_bot_version(owner, name, f"# {owner}/{name}\n", {})[0].id for owner, name in names
    ]
    per_rules = games // len(PRESETS) // GAMES_PER_MATCH
    number = 0
    for rules in PRESETS.values():
        rule_set = store.ensure_rule_set(rules)
        with store.write() as session:
            tournament = Tournament(
                name=f"bench-{rules.name}",
                format="round-robin",
                rule_set_id=rule_set.id,
                players=2,
                teams=False,
                games_per_match=GAMES_PER_MATCH,
                seed=seed,
                status="done",
            )
            session.add(tournament)
            session.flush()
            tournament_id = tournament.id
            session.add_all(
                TournamentEntrant(tournament_id=tournament_id, label=name, bot_version_id=v)
                for (_, name), v in zip(names, versions, strict=True)
            )
        for start in range(0, per_rules, CHUNK):
            rows = []
            for _ in range(start, min(per_rules, start + CHUNK)):
                rows.append(_match(rng, truth, versions, names, tournament_id, number))
                number += 1
            with store.write() as session:
                session.execute(insert(Match), rows)
        with store.write() as session:  # who holds each seat, as creating a tournament writes
            add_match_seats(session, tournament_id)
    with store.engine.connect() as connection:  # statistics, as autovacuum would gather
        connection.execute(text("ANALYZE"))
        connection.commit()
    return names


def _match(
    rng: np.random.Generator,
    truth: np.typing.NDArray[np.float64],
    versions: list[int],
    names: list[tuple[str, str]],
    tournament_id: int,
    number: int,
) -> dict[str, Any]:
    a, b = rng.choice(len(versions), 2, replace=False)
    p_first = 1.0 / (1.0 + np.exp(-(truth[a] - truth[b]) / ELO_PER_NAT))
    first_wins = rng.random(GAMES_PER_MATCH) < p_first
    games = []
    for index in range(GAMES_PER_MATCH):
        places = [0, 1] if first_wins[index] else [1, 0]
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
        "labels": [names[a][1], names[b][1]],
        "games": GAMES_PER_MATCH,
        "seed": number,
        "status": "done",
        "attempts": 1,
        "result": {"games": games, "seconds": 1.0, "worker": "bench:1"},
    }


def store_records(store: Store, rounds: int, seed: int) -> tuple[int, list[int]]:
    """Real records of ``rounds`` rounds or more (random play under ``block``) for every game
    of the first bench match of ``block``; its id and each game's number of states."""
    rng = random.Random(seed)
    records: list[dict[str, Any]] = []
    game_seed = seed
    while len(records) < GAMES_PER_MATCH:
        game_seed += 1
        game = Game(PRESETS["block"], 2, seed=game_seed)
        while not game.is_terminal():
            game.apply(rng.choice(game.legal_moves()))
        if len(game.rounds) >= rounds:
            records.append(game_record(game, ["owner00/bot000@v1", "owner01/bot001@v1"]))
    with store.write() as session:
        match_id = session.execute(
            text(
                "SELECT m.id FROM matches m JOIN tournaments t ON t.id = m.tournament_id "
                "WHERE t.name = 'bench-block' ORDER BY m.id LIMIT 1"
            )
        ).scalar_one()
        session.execute(
            insert(GameRecord),
            [{"match_id": match_id, "game_index": i, "record": r} for i, r in enumerate(records)],
        )
    states = [sum(len(r["events"]) + 1 for r in record["rounds"]) for record in records]
    return match_id, states


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def serve(url: str, port: int) -> subprocess.Popen[bytes]:
    """The app under gunicorn as ``arena serve`` runs it; returns once it answers."""
    env = {**os.environ, "ARENA_DATABASE_URL": url, "ARENA_SECRET_KEY": "benchmark"}
    server = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "--bind", f"127.0.0.1:{port}", "--workers", "2",
         "--worker-class", "gthread", "--threads", "4", "--log-level", "warning",
         "web:create_app()"],
        env=env,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            connection.request("GET", "/healthz")
            if connection.getresponse().status == 200:
                return server
        except OSError:
            time.sleep(0.2)
    server.kill()
    raise SystemExit("the web server did not start")


def timed(connection: http.client.HTTPConnection, path: str) -> float:
    """Seconds for one GET of ``path`` (the whole body read); it must answer 200."""
    began = time.perf_counter()
    connection.request("GET", path)
    reply = connection.getresponse()
    reply.read()
    seconds = time.perf_counter() - began
    if reply.status != 200:
        raise SystemExit(f"GET {path}: {reply.status}")
    return seconds


def _state_path(rng: random.Random, match_id: int, states: list[int], suffix: str) -> str:
    """A random state of a random stored game: its page (``suffix`` "") or fragment."""
    index = rng.randrange(len(states))
    return f"/games/{match_id}/{index}{suffix}?round={rng.randint(1, 20)}&step={rng.randint(0, 40)}"


def _body(connection: http.client.HTTPConnection, path: str) -> bytes:
    connection.request("GET", path)
    reply = connection.getresponse()
    return reply.read()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--games", type=int, default=1_000_000)
    parser.add_argument("--bots", type=int, default=200)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--url", help="Database URL (default: a new SQLite file).")
    parser.add_argument("--rounds", type=int, default=20, help="Rounds of the replayed games.")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        url = args.url or f"sqlite:///{Path(directory) / 'bench.db'}"
        upgrade(url)
        store = connect(url)
        try:
            began = time.perf_counter()
            names = fill(store, args.games, args.bots, args.seed)
            print(
                f"{store.dialect}: stored {args.games:,} games among {args.bots} bots, "
                f"{len(PRESETS)} rule sets, in {time.perf_counter() - began:.1f} s"
            )
            began = time.perf_counter()
            for rules in PRESETS.values():
                refit_ratings(store, rules)
            print(f"refitted {len(PRESETS)} rule sets in {time.perf_counter() - began:.1f} s")
            match_id, states = store_records(store, args.rounds, args.seed)
            print(
                f"stored {len(states)} game records of {args.rounds}+ rounds "
                f"({min(states)}-{max(states)} states each) in match {match_id}"
            )
        finally:
            store.close()
        server = serve(url, port := _free_port())
        try:
            rng = random.Random(args.seed)
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            pages: dict[str, Callable[[], str]] = {
                "leaderboard": lambda: f"/leaderboards/{rng.choice(list(PRESETS))}",
                "bot page": lambda: "/bots/{}/{}".format(*rng.choice(names)),
                "tournament page": lambda: f"/tournaments/bench-{rng.choice(list(PRESETS))}",
                "game page": lambda: _state_path(rng, match_id, states, ""),
                "game state": lambda: _state_path(rng, match_id, states, "/state"),
            }
            weights = [
                len(_body(connection, _state_path(rng, match_id, states, ""))) for _ in range(20)
            ]
            print(
                f"game page weight: median {statistics.median(weights) / 1024:.1f} KB, "
                f"largest {max(weights) / 1024:.1f} KB (20 random states)"
            )
            for page, path in pages.items():
                cold = timed(connection, path())
                times = sorted(timed(connection, path()) for _ in range(args.requests))
                p95 = times[int(0.95 * (len(times) - 1))]
                print(
                    f"{page:16} first {cold * 1000:7.1f} ms  p50 "
                    f"{statistics.median(times) * 1000:6.1f} ms  p95 {p95 * 1000:6.1f} ms  "
                    f"({args.requests} requests)"
                )
        finally:
            server.terminate()
            server.wait(timeout=30)


if __name__ == "__main__":
    main()
