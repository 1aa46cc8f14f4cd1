"""The dashboard's pages against a big database: p50 and p95 response times.

    ./run python benchmarks/web.py [--games 1000000] [--bots 200] [--url URL] [--requests 200]

Fills a fresh database (default: a SQLite file in a temporary directory; ``--url`` for an
empty PostgreSQL database) with ``--games`` stored games (done 2-player matches of 20 games,
their results as the workers store them) among ``--bots`` bot versions of 20 owners, spread
over one round robin per preset (7 rule sets), with each tournament's stored tally and
figures (as storing each result and the live refit keep them), and refits each rule set's
ratings (the worker's code; timed). Game records (the replays) are not stored: no page here
reads them.
Then it serves the app as ``arena serve`` does (gunicorn, 2 processes of 16 threads) and asks,
over one kept-alive HTTP connection, for ``--requests`` leaderboards (a random rule set), bot
pages (a random bot: its versions, ratings, recent games and record against each opponent)
and tournament pages (a random rule set's round robin: 200 entrants and
about 143,000 games each at the defaults), printing the first (cold) time and the p50/p95 of
each. The goal (issue 10) is a p95 under 100 ms on SQLite and PostgreSQL.

The replay viewer (issue 11): the first bench match of ``block`` gets real game records of
``--rounds`` rounds or more (random play, to 100 points); the game page at a random state
and the state fragment the viewer's script fetches are timed the same way, and the game
page's weight is printed. The goal is a game page under 100 ms server-side and 150 KB.

``--mode load`` (issue 32, the audit's load): the database of ``pages`` (``--games``; with
``--database FILE`` a SQLite file kept, and reused as it is when it holds games), served
as above with the read limit raised out of the way (``ARENA_READ_LIMIT``: the pages' cost
is measured, not the limit); then, for each of the heaviest pages (the game list, its deep
pages by cursor from the oldest matches, a bot's games first and deep, an old ``offset``
link, a bot page, a tournament page, a leaderboard), ``--requests`` GETs ``--parallel`` at
a time on new connections while ``/healthz`` is asked every 0.05 s (``--refit``: the ratings
refitted first, so that a bot page holds its table against each opponent, 90-200 rows at the
defaults); p50/p95 of each page, the
server's CPU time a request (its processes', a figure the machine's load barely moves), and
p50/p95 of ``/healthz`` during the load (p50/p95 over the pages answered; the heavy reads
the server's bound refused, 503, and any unanswered in 60 s are counted beside them), and
the machine's load average. Goal: ``/healthz`` p95 under 200 ms, each page's under 500 ms.

``--mode users`` (issue 19): many users while the worker plays. It stores the reference
bots and plays a round robin between them under ``draw`` (``--history-games`` a pair:
12,000 games at the default, real records, matches of 1,000 games; in-process, no sandbox)
and refits the ratings, serves the app as above, and lets ``--users`` simulated users each
open a page every ``--every`` seconds for ``--seconds``: the leaderboard, the tournament,
a bot, a game or the game list (one in five each). A user on a game opens a random game at
a random state (``game page``) or, two times in three, steps its last game to a random
state (``viewer step``: the fragment the viewer's script fetches). That runs twice: with
the worker idle (none running), then busy: a Celery worker (one process per core, bots
sandboxed) playing a round robin of the reference bots. It prints p50/p95 per page for
both. Goal: a p95 under 150 ms busy, on 2 cores.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import http.client
import os
import random
import signal
import socket
import statistics
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
from sqlalchemy import func, insert, select, text, update
from sqlalchemy.exc import OperationalError

from arena.cli.serve import web_argv
from arena.compete.ratings import ELO_PER_NAT
from arena.engine.game import Game
from arena.engine.records import game_record
from arena.engine.rules import PRESETS
from arena.match.cputime import tree_cpu_seconds
from arena.service.board_views import refit_figures
from arena.service.broker import BROKER_ENV, configure, resolve_broker_url
from arena.service.dispatch import dispatch_matches
from arena.service.matches import Config, create_stored_tournament, run_match
from arena.service.results import refit_ratings
from arena.store import tallies
from arena.store.db import Store, connect, upgrade
from arena.store.models import GameRecord, Match, Tournament, TournamentEntrant
from arena.store.queue import add_match_seats, cancel_tournament
from arena.store.records import encode_records, load_record

GAMES_PER_MATCH = 20
#: When the first bench match finished.
FIRST_FINISHED = datetime(2026, 1, 1, tzinfo=UTC)
OWNERS = 20
CHUNK = 5_000


def fill(store: Store, games: int, bots: int, seed: int) -> list[tuple[str, str]]:
    """Store the bots, one done round robin per preset and its matches; return the bots
    as (owner, name)."""
    rng = np.random.default_rng(seed)
    truth = 1500.0 + rng.normal(0.0, 200.0, bots)
    names = _names(bots)
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
        with store.write() as session:  # its page's tally, as storing each result adds to it
            tallies.fill(session, store.dialect, tournament_id)
        refit_figures(store, rule_set.id)  # its page's figures, as the live refit fits them
    with store.engine.connect() as connection:  # statistics, as autovacuum would gather
        connection.execute(text("ANALYZE"))
        connection.commit()
    return names


def _names(bots: int) -> list[tuple[str, str]]:
    """The bench's bots as (owner, name)."""
    return [(f"owner{i % OWNERS:02d}", f"bot{i:03d}") for i in range(bots)]


def _stored_games(store: Store) -> int:
    """The games stored in the bench's matches (0 in a new database)."""
    with store.read() as session:
        return int(session.scalar(select(func.coalesce(func.sum(Match.games), 0))) or 0)


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
        # as a worker stores it: a match a second, the latest the newest
        "finished": FIRST_FINISHED + timedelta(seconds=number),
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
    encoded = encode_records(store, records)
    with store.write() as session:
        match_id = session.execute(
            text(
                "SELECT m.id FROM matches m JOIN tournaments t ON t.id = m.tournament_id "
                "WHERE t.name = 'bench-block' ORDER BY m.id LIMIT 1"
            )
        ).scalar_one()
        session.execute(
            insert(GameRecord),
            [{"match_id": match_id, "game_index": i, "data": d} for i, d in enumerate(encoded)],
        )
    states = [sum(len(r["events"]) + 1 for r in record["rounds"]) for record in records]
    return match_id, states


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def serve(url: str, port: int) -> subprocess.Popen[bytes]:
    """The app under gunicorn as ``arena serve`` runs it (its command: 2 processes of 16
    threads), its read limits out of the way (one address asks for every page here);
    returns once it answers."""
    env = {
        **os.environ, "ARENA_DATABASE_URL": url, "ARENA_SECRET_KEY": "benchmark",
        "ARENA_READ_LIMIT": "1000000 per minute", "ARENA_STEP_LIMIT": "1000000 per minute",
    }  # fmt: skip
    server = subprocess.Popen(web_argv("127.0.0.1", port), env=env)
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
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--mode",
        choices=("pages", "load", "users"),
        default="pages",
        help="pages: one client over a big synthetic database (issue 10, 11); users: many "
        "users with the worker idle, then busy (issue 19). Default: %(default)s.",
    )
    parser.add_argument("--games", type=int, default=1_000_000, help="pages: stored games.")
    parser.add_argument("--bots", type=int, default=200, help="pages: bot versions.")
    parser.add_argument("--requests", type=int, default=200, help="pages: requests a page.")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument(
        "--parallel", type=int, default=20, help="load: requests at once (default 20)."
    )
    parser.add_argument("--url", help="Database URL (default: a new SQLite file).")
    parser.add_argument(
        "--rounds", type=int, default=20, help="pages: rounds of the replayed games."
    )
    parser.add_argument("--users", type=int, default=30, help="users: simulated users.")
    parser.add_argument(
        "--every", type=float, default=2.0, help="users: seconds between a user's pages."
    )
    parser.add_argument(
        "--seconds", type=float, default=90.0, help="users: seconds each phase lasts."
    )
    parser.add_argument(
        "--history-games",
        type=int,
        default=2000,
        help="users: games a pair of reference bots played before (12 matches of half).",
    )
    parser.add_argument(
        "--unsandboxed", action="store_true", help="users: the busy worker runs bots unsandboxed."
    )
    parser.add_argument(
        "--refit",
        action="store_true",
        help="load: refit every rule set's ratings first (as the pages mode does), so that a "
        "bot page shows its ratings and its table against each opponent.",
    )
    parser.add_argument(
        "--database",
        type=Path,
        help="users: a SQLite file to keep; one that holds the history already is reused "
        "(its last busy tournament was cancelled). load: a SQLite file to keep; one that "
        "holds games already is reused as it is (built with the same --bots).",
    )
    args = parser.parse_args()
    if args.mode == "users":
        users_mode(args)
        return
    if args.mode == "load":
        load_mode(args)
        return
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


# --- load: the audit's load on the heaviest pages --------------------------------------------


def _status_get(port: int, path: str) -> tuple[int, float]:
    """One GET on a new connection; its status (200, a redirect, or 503: a heavy read the
    server's bound refused, or 500: limits' in-memory storage, which this benchmark's server
    uses, fails now and then under threads, "threads can only be started once") and seconds;
    status 0 when no answer came in 60 s."""
    began = time.perf_counter()
    try:
        status, seconds = _get(port, path)
    except TimeoutError:
        return 0, time.perf_counter() - began
    if status not in (200, 302, 500, 503):
        raise SystemExit(f"GET {path}: {status}")
    return status, seconds


def _answered(replies: list[tuple[int, float]]) -> tuple[list[float], str]:
    """The seconds of the replies answered (200 or a redirect), and what was not."""
    refused = sum(1 for status, _ in replies if status == 503)
    lost = sum(1 for status, _ in replies if status == 0)
    failed = sum(1 for status, _ in replies if status == 500)
    note = (
        (f"  {refused} refused (503)" if refused else "")
        + (f"  {lost} unanswered in 60 s" if lost else "")
        + (f"  {failed} failed (500)" if failed else "")
    )
    return [seconds for status, seconds in replies if status in (200, 302)] or [60.0], note


def _deep_matches(store: Store, count: int) -> list[int]:
    """The ids of the ``count`` matches finished first (the deepest pages start there)."""
    with store.read() as session:
        return list(
            session.scalars(select(Match.id).order_by(Match.finished, Match.id).limit(count))
        )


def load_mode(args: argparse.Namespace) -> None:
    """The load mode: the pages' database, then each heavy page under ``--parallel``
    requests at once while /healthz is timed."""
    with tempfile.TemporaryDirectory() as directory:
        path = args.database or Path(directory) / "bench.db"
        url = args.url or f"sqlite:///{path.resolve()}"
        upgrade(url)
        store = connect(url)
        try:
            began = time.perf_counter()
            if _stored_games(store):
                names = _names(args.bots)
                print(f"{store.dialect}: reused {_stored_games(store):,} stored games")
            else:
                names = fill(store, args.games, args.bots, args.seed)
                print(f"{store.dialect}: stored {args.games:,} games among {args.bots} bots "
                      f"in {time.perf_counter() - began:.1f} s")  # fmt: skip
            deep = _deep_matches(store, 50)
            if args.refit:
                began = time.perf_counter()
                for rules in PRESETS.values():
                    refit_ratings(store, rules)
                print(f"refitted {len(PRESETS)} rule sets in {time.perf_counter() - began:.1f} s")
        finally:
            store.close()
        server = serve(url, port := _free_port())
        rng = random.Random(args.seed)
        bot = "{}/{}".format(*names[0])
        pages: dict[str, Callable[[], str]] = {
            "games": lambda: "/games",
            "games, deep": lambda: f"/games?before={rng.choice(deep)}-0",
            "games of a bot": lambda: f"/games?bot={bot}",
            "games of a bot, deep": lambda: f"/games?bot={bot}&before={rng.choice(deep)}-0",
            "games ?offset=": lambda: f"/games?offset={rng.randrange(10**6)}",
            "bot page": lambda: "/bots/{}/{}".format(*rng.choice(names)),
            "tournament page": lambda: f"/tournaments/bench-{rng.choice(list(PRESETS))}",
            "leaderboard": lambda: f"/leaderboards/{rng.choice(list(PRESETS))}",
        }
        results: dict[str, tuple[list[float], list[float]]] = {}
        try:
            for page, path in pages.items():
                health: list[float] = []
                done = threading.Event()

                def poll(health: list[float] = health, done: threading.Event = done) -> None:
                    while not done.wait(0.05):
                        status, seconds = _status_get(port, "/healthz")
                        health.append(seconds if status == 200 else 60.0)

                poller = threading.Thread(target=poll)
                poller.start()
                paths = [path() for _ in range(args.requests)]
                cpu = tree_cpu_seconds(server.pid)
                with concurrent.futures.ThreadPoolExecutor(args.parallel) as pool:
                    replies = list(pool.map(lambda p: _status_get(port, p), paths))
                done.set()
                poller.join()
                cpu = tree_cpu_seconds(server.pid) - cpu
                times, note = _answered(replies)
                results[page] = (times, health)
                print(f"{page:22} p50 {statistics.median(times) * 1000:7.1f} ms  p95 "
                      f"{_percentile(times, 0.95) * 1000:7.1f} ms  server CPU "
                      f"{cpu * 1000 / len(replies):5.1f} ms a request | /healthz meanwhile p50 "
                      f"{statistics.median(health) * 1000:6.1f} ms  p95 "
                      f"{_percentile(health, 0.95) * 1000:6.1f} ms ({len(health)}){note}",
                      flush=True)  # fmt: skip
        finally:
            server.terminate()
            server.wait(timeout=30)
        every = [t for _, health in results.values() for t in health]
        load = os.getloadavg()
        print(
            f"/healthz over the whole load: p50 {statistics.median(every) * 1000:.1f} ms, "
            f"p95 {_percentile(every, 0.95) * 1000:.1f} ms ({len(every)} checks); load average "
            f"{load[0]:.1f} (1 min) {load[1]:.1f} (5 min), {os.cpu_count()} cores"
        )


# --- users: pages while the worker plays ---------------------------------------------------

#: The reference bots the users mode stores and plays (as ``arena serve --demo``).
REFERENCE = ("random", "greedy", "fives", "counter")
#: The pages a user opens, one in five each ("game": a game page or a viewer step).
USER_PAGES = ("leaderboard", "tournament", "bot page", "game", "game list")
#: Games a pool of users picks from (their records are read to know their rounds).
GAME_POOL = 300


def _play_stored(url: str, match_id: int) -> str:
    """Play a stored match in-process until it is stored (a claim that meets a write lock,
    or a lease left by an earlier run, waits and tries again)."""
    store = connect(url)
    try:
        while True:
            try:
                outcome = run_match(store, match_id, sandboxed=False)
            except OperationalError:  # SQLite: another process stores its 1,000 records
                outcome = "locked"
            if outcome in ("done", "finished"):
                return outcome
            time.sleep(5)
    finally:
        store.close()


def store_reference(store: Store) -> list[str]:
    """Store the reference bots (``bots/``); return their specs (``reference/NAME``)."""
    directory = Path(__file__).resolve().parent.parent / "bots"  # benchmarks/bots.py shadows it
    for name in REFERENCE:
        source = (directory / f"{name}.py").read_text(encoding="utf-8")
        store.add_bot_version("reference", name, source, {})
    return [f"reference/{name}" for name in REFERENCE]


def play_history(url: str, games: int, seed: int) -> int:
    """Play and store a round robin of the reference bots under ``draw`` (``games`` a pair),
    in-process on every core, and refit the ratings; return its number of games. A database
    that holds it already: its matches not yet played are played."""
    store = connect(url)
    try:
        with store.read() as session:
            held = session.scalar(select(Tournament.id).where(Tournament.name == "history"))
        if held is None:
            held, _ = create_stored_tournament(
                store, name="history", rules=PRESETS["draw"], format="round-robin",
                entrants=store_reference(store), games_per_match=games, seed=seed,
            )  # fmt: skip
        with store.read() as session:
            matches = session.execute(
                select(Match.id, Match.status, Match.games).where(Match.tournament_id == held)
            ).all()
    finally:
        store.close()
    ids = [m.id for m in matches if m.status != "done"]
    if ids:
        with concurrent.futures.ProcessPoolExecutor(os.cpu_count() or 1) as pool:
            list(pool.map(_play_stored, [url] * len(ids), ids))
        store = connect(url)
        try:
            refit_ratings(store, PRESETS["draw"])
        finally:
            store.close()
    return sum(m.games for m in matches)


def game_pool(store: Store, size: int, rng: random.Random) -> list[tuple[int, int, list[int]]]:
    """``size`` random stored games: (match id, index, each round's number of states)."""
    with store.read() as session:
        keys = session.execute(select(GameRecord.match_id, GameRecord.game_index)).all()
        pool = []
        for match_id, index in rng.sample(keys, min(size, len(keys))):
            record = load_record(store, session, match_id, index)
            assert record is not None
            pool.append((match_id, index, [len(r["events"]) + 1 for r in record["rounds"]]))
    return pool


@dataclass
class Timings:
    """Seconds each page took, shared by the users' threads."""

    seconds: dict[str, list[float]] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, page: str, seconds: float) -> None:
        with self.lock:
            self.seconds.setdefault(page, []).append(seconds)


def _get(port: int, path: str) -> tuple[int, float]:
    """One GET on a new connection (as a browser after its keep-alive ran out)."""
    began = time.perf_counter()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        connection.request("GET", path)
        reply = connection.getresponse()
        reply.read()
    finally:
        connection.close()
    return reply.status, time.perf_counter() - began


def _user(
    port: int, pool: list[tuple[int, int, list[int]]], seed: int, until: float, every: float,
    timings: Timings,
) -> None:  # fmt: skip
    rng = random.Random(seed)
    game: tuple[int, int, list[int]] | None = None
    moment = time.monotonic() + rng.uniform(0, every)  # users do not start in step
    while moment < until:
        time.sleep(max(0.0, moment - time.monotonic()))
        moment += every
        page = rng.choice(USER_PAGES)
        if page == "leaderboard":
            path = "/leaderboards/draw"
        elif page == "tournament":
            path = "/tournaments/history"
        elif page == "bot page":
            path = f"/bots/reference/{rng.choice(REFERENCE)}"
        elif page == "game list":
            path = "/games"
        else:
            suffix = "/state"
            if game is None or rng.random() < 1 / 3:
                game, suffix, page = rng.choice(pool), "", "game page"
            else:
                page = "viewer step"
            match_id, index, frames = game
            number = rng.randint(1, len(frames))
            step = rng.randrange(frames[number - 1])
            path = f"/games/{match_id}/{index}{suffix}?round={number}&step={step}"
        try:
            status, seconds = _get(port, path)
        except OSError as exc:
            timings.errors.append(f"GET {path}: {exc}")
            continue
        if status != 200:
            timings.errors.append(f"GET {path}: {status}")
        timings.add(page, seconds)


def run_users(
    port: int, pool: list[tuple[int, int, list[int]]], args: argparse.Namespace, seed: int
) -> Timings:
    """``args.users`` users for ``args.seconds``; their pages' times."""
    timings = Timings()
    until = time.monotonic() + args.seconds
    threads = [
        threading.Thread(
            target=_user, args=(port, pool, seed + n, until, args.every, timings), daemon=True
        )
        for n in range(args.users)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return timings


def start_worker(url: str, unsandboxed: bool) -> subprocess.Popen[bytes]:
    """A Celery worker as ``arena serve`` starts it (one process per core), in a session of
    its own."""
    from arena.cli.worker import celery_worker_argv

    env = {
        **os.environ,
        "ARENA_DATABASE_URL": url,
        BROKER_ENV: resolve_broker_url(None, url),
        "ARENA_WORKER_UNSANDBOXED": "1" if unsandboxed else "0",
    }
    argv = celery_worker_argv(os.cpu_count() or 1, "WARNING", quiet=True)
    return subprocess.Popen(argv, env=env, start_new_session=True)


def start_busy_tournament(url: str, seed: int) -> tuple[int, str]:
    """A round robin of the reference bots long enough to outlast the phase, sent to the
    worker; its id and name."""
    name = f"busy-{time.time():.0f}"
    store = connect(url)
    try:
        tournament_id, _ = create_stored_tournament(
            store, name=name, rules=PRESETS["draw"], format="round-robin",
            entrants=[f"reference/{name}" for name in REFERENCE], games_per_match=10_000,
            seed=seed,
        )  # fmt: skip
        configure(resolve_broker_url(None, url), Config.from_env(), url)
        dispatch_matches(store, tournament_id)
    finally:
        store.close()
    return tournament_id, name


def wait_until_playing(
    url: str, worker: subprocess.Popen[bytes], tournament: str, seconds: float = 120
) -> None:
    """Return once the worker holds a match of ``tournament``."""
    store = connect(url)
    try:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if worker.poll() is not None:
                raise SystemExit("the worker stopped")
            with store.read() as session:
                running = session.scalar(
                    select(Match.id)
                    .join(Tournament, Tournament.id == Match.tournament_id)
                    .where(Tournament.name == tournament, Match.status == "running")
                    .limit(1)
                )
            if running is not None:
                return
            time.sleep(0.5)
    finally:
        store.close()
    raise SystemExit("the worker did not start playing")


def stop(program: subprocess.Popen[bytes]) -> None:
    """SIGTERM to the program's session, SIGKILL after 20 s."""
    for signum, wait in ((signal.SIGTERM, 20.0), (signal.SIGKILL, 10.0)):
        try:
            os.killpg(program.pid, signum)
        except ProcessLookupError:
            return
        try:
            program.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


def _cancel(url: str, tournament_id: int) -> None:
    store = connect(url)
    try:
        cancel_tournament(store, tournament_id, by="the benchmark")
        with store.write() as session:  # its running matches too: the next run plays its own
            session.execute(
                update(Match)
                .where(Match.tournament_id == tournament_id, Match.status == "running")
                .values(status="void", lease_owner=None, lease_expires=None)
            )
    finally:
        store.close()


def _percentile(times: list[float], share: float) -> float:
    ordered = sorted(times)
    return ordered[int(share * (len(ordered) - 1))]


def report(phases: dict[str, Timings]) -> None:
    """p50 and p95 of each page in each phase, side by side."""
    names = list(phases)
    print(f"{'page':12}" + "".join(f" | {name:>31}" for name in names))
    print(f"{'':12}" + " | {:>9} {:>9} {:>11}".format("p50 ms", "p95 ms", "requests") * len(names))
    pages = ["leaderboard", "tournament", "bot page", "game page", "viewer step", "game list"]
    for page in [*pages, "all"]:
        cells = []
        for timings in phases.values():
            times = (
                [t for ts in timings.seconds.values() for t in ts]
                if page == "all"
                else timings.seconds.get(page, [])
            )
            if not times:
                cells.append(f" | {'-':>9} {'-':>9} {0:>11}")
                continue
            cells.append(
                f" | {statistics.median(times) * 1000:9.1f} "
                f"{_percentile(times, 0.95) * 1000:9.1f} {len(times):>11}"
            )
        print(f"{page:12}" + "".join(cells))
    for name, timings in phases.items():
        if timings.errors:
            print(f"{name}: {len(timings.errors)} errors, e.g. {timings.errors[0]}")


def users_mode(args: argparse.Namespace) -> None:
    """The users mode: history, then the users with the worker idle, then busy."""
    with tempfile.TemporaryDirectory() as directory:
        path = args.database or Path(directory) / "users.db"
        url = args.url or f"sqlite:///{path.resolve()}"
        upgrade(url)
        began = time.perf_counter()
        games = play_history(url, args.history_games, args.seed)
        print(f"played and stored {games:,} games of the reference bots in "
              f"{time.perf_counter() - began:.0f} s")  # fmt: skip
        store = connect(url)
        try:
            pool = game_pool(store, GAME_POOL, random.Random(args.seed))
        finally:
            store.close()
        server = serve(url, port := _free_port())
        phases: dict[str, Timings] = {}
        try:
            print(f"{args.users} users, a page every {args.every} s each, {args.seconds} s "
                  "a phase: the worker idle ...")  # fmt: skip
            phases["worker idle"] = run_users(port, pool, args, args.seed)
            worker = start_worker(url, args.unsandboxed)
            busy = None
            try:
                busy, name = start_busy_tournament(url, args.seed)
                wait_until_playing(url, worker, name)
                print("... the worker busy (a round robin of the reference bots) ...")
                phases["worker busy"] = run_users(port, pool, args, args.seed + 1000)
            finally:
                stop(worker)
                if busy is not None:
                    _cancel(url, busy)
        finally:
            server.terminate()
            server.wait(timeout=30)
        load = os.getloadavg()
        print(f"load average at the end: {load[0]:.1f} (1 min), {os.cpu_count()} cores")
        report(phases)


if __name__ == "__main__":
    main()
