"""People playing bots in the browser (issue 35): a move's round trip, p50 and p95.

    PYTHONPATH=$PWD python benchmarks/tables.py [--humans 30] [--postgres | --url URL]
        [--no-tournament] [--think SECONDS]

A deployment on this machine: a throwaway redis-server (the broker and the tables'
channel), the app under gunicorn as ``arena serve`` runs it (2 processes of 16 threads), a
tables worker (``arena worker --lanes tables --concurrency HUMANS``: bots sandboxed), and,
unless ``--no-tournament``, a worker of every lane playing a round robin of the reference
bots meanwhile (one process per core, sandboxed). ``--humans`` simulated people (threads,
each its own account and HTTP client) each log in, open a 2-seat ``draw`` table against
``reference/greedy`` from ``/tables/new`` and play the whole game as the page does: the
first legal move the state offers, posted to ``/tables/ID/move``, whose answer is the
state once the bot has replied and it is the person's turn again (a long poll of
``/tables/ID/state`` when the answer came before that), after ``--think`` seconds (0 by
default: every person moves the moment they can, the worst case). The round trip is the move's POST,
from sending it to the bot's reply on the page; "page" is a GET of the table's page during
the game. Prints p50/p95 of each, the moves and games, and the load average (the machine
is shared: say it beside the figures). The goal is a round trip under 200 ms.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from arena.cli.serve import web_argv
from arena.engine.rules import PRESETS
from arena.service.accounts import create_account, password_hasher
from arena.service.broker import configure
from arena.service.dispatch import dispatch_matches
from arena.service.matches import create_stored_tournament
from arena.store.db import connect, upgrade
from tests.servers import free_port, running_postgres, running_redis, start_worker, stop_workers

BOTS = Path(__file__).resolve().parent.parent / "bots"
PASSWORD = "correct horse battery"
STATE = re.compile(r'id="table-state"([^>]*)>')


def _attrs(html: str) -> dict[str, str]:
    found = STATE.search(html)
    if found is None:
        title = re.search(r"<title>([^<]*)", html)
        shown = re.search(r"<main>\s*(?:<[^>]*>\s*)*([^<]{0,300})", html)
        raise RuntimeError(
            f"no table state in the answer: {title.group(1) if title else ''} "
            f"{shown.group(1).strip() if shown else html[:200]!r}"
        )
    return dict(re.findall(r'(data-[a-z]+)="([^"]*)"', found.group(1)))


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


class Person(threading.Thread):
    """One simulated person: log in, open a table, play the whole game."""

    def __init__(
        self, base: str, name: str, bot: int, start: threading.Barrier, think: float = 0.0
    ) -> None:
        super().__init__(name=name)
        self.think = think
        self.base, self.user, self.bot, self.start_line = base, name, bot, start
        self.client = httpx.Client(base_url=base, timeout=60)
        self.token = ""
        self.trips: list[float] = []
        self.pages: list[float] = []
        self.error: str | None = None
        self.result = ""

    def run(self) -> None:
        try:
            self._play()
        except Exception as exc:  # reported with the figures
            self.error = f"{type(exc).__name__}: {exc}"

    def _token(self, client: httpx.Client, path: str) -> str:
        found = re.search(r'name="csrf_token" value="([^"]+)"', client.get(path).text)
        assert found, f"no CSRF token on {path}"
        return found.group(1)

    def log_in(self) -> None:
        """Log in (one person after another: the login's hashing line is not measured)."""
        token = self._token(self.client, "/login")
        answer = self.client.post("/login", data={"name": self.user, "password": PASSWORD,
                                                  "csrf_token": token})  # fmt: skip
        if answer.status_code != 302:
            raise SystemExit(f"{self.user} could not log in: {answer.status_code}")
        self.token = self._token(self.client, "/tables/new")

    def _play(self) -> None:
        client, token = self.client, self.token
        try:
            self.start_line.wait(timeout=120)
            opened = client.post("/tables/new", data={
                "rules": "draw", "players": "2", "seat": "0", "bot": str(self.bot),
                "csrf_token": token,
            })  # fmt: skip
            if opened.status_code != 302:
                raise RuntimeError(f"open: {opened.status_code} {opened.text[:200]}")
            path = opened.headers["location"]
            html = client.get(f"{path}/state?after=0").text
            for _ in range(2000):
                state = _attrs(html)
                if state["data-status"] in ("done", "closed", "failed"):
                    self.result = state["data-status"]
                    if self.result != "done":
                        found = re.search(r'class="caption">([^<]*)', html)
                        self.error = f"{self.result}: {found.group(1) if found else '?'}"
                    return
                if not state.get("data-mine"):
                    html = client.get(f"{path}/state?after={state['data-after']}").text
                    continue
                move = re.search(r'class="move" data-move="([^"]+)"', html)
                assert move is not None
                time.sleep(self.think)
                began = time.perf_counter()
                answer = client.post(f"{path}/move", data={
                    "move": move.group(1), "turn": state["data-turn"],
                    "after": state["data-after"], "csrf_token": token,
                })  # fmt: skip
                seconds = time.perf_counter() - began
                if answer.status_code != 200:
                    raise RuntimeError(f"move: {answer.status_code} {answer.text[:200]}")
                html = answer.text
                after = _attrs(html)
                if after.get("data-mine") or after["data-status"] == "done":
                    self.trips.append(seconds)  # the bot's reply is on the page
                if len(self.trips) % 10 == 1:
                    began = time.perf_counter()
                    client.get(path)
                    self.pages.append(time.perf_counter() - began)
        finally:
            client.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--humans", type=int, default=30)
    parser.add_argument("--url", help="an empty PostgreSQL database (default: SQLite)")
    parser.add_argument(
        "--postgres", action="store_true", help="a throwaway PostgreSQL server's database"
    )
    parser.add_argument("--no-tournament", action="store_true")
    parser.add_argument(
        "--think",
        type=float,
        default=0.0,
        help="seconds each person thinks before a move (0: every move at once, the worst case)",
    )
    args = parser.parse_args()
    with contextlib.ExitStack() as stack:
        root = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        redis = stack.enter_context(running_redis())
        url = args.url or f"sqlite:///{root / 'tables.db'}"
        if args.postgres:
            url = f"{stack.enter_context(running_postgres())}/postgres"
        upgrade(url)
        store = connect(url)
        hasher = password_hasher(cheap=True)
        for name in ("greedy", "random", "counter"):
            store.add_bot_version("reference", name, (BOTS / f"{name}.py").read_text(), {})
        greedy = store.add_bot_version("reference", "greedy", (BOTS / "greedy.py").read_text(), {})[
            0
        ].id
        names = [f"person{k}" for k in range(args.humans)]
        for name in names:
            create_account(store, name, PASSWORD, hasher=hasher)
        env = {
            "ARENA_DATABASE_URL": url, "ARENA_BROKER_URL": redis.url,
            "ARENA_TABLES_MAX": str(args.humans), "ARENA_SECRET_KEY": "benchmark",
            "ARENA_LOGIN_ADDRESS_LIMIT": "1000 per minute",
            # a deployment's leases (the tests' 2 s ones run out on a loaded machine)
            "ARENA_LEASE_SECONDS": "60", "ARENA_HEARTBEAT_SECONDS": "20",
            "ARENA_SWEEP_SECONDS": "15",
            "ARENA_READ_LIMIT": "1000000 per minute",
            "ARENA_STEP_LIMIT": "1000000 per minute",
        }  # fmt: skip
        os.environ.update(env)
        workers = [start_worker(root, env, "--lanes", "tables", "--concurrency",
                                str(args.humans), "--no-sweep", name="tables")]  # fmt: skip
        if not args.no_tournament:
            configure(redis.url, database=url)
            tournament, _ = create_stored_tournament(
                store, name="busy", rules=PRESETS["draw"], format="round-robin",
                entrants=["reference/greedy", "reference/random", "reference/counter"],
                games_per_match=2000, seed=1,
            )  # fmt: skip
            dispatch_matches(store, tournament)
            workers.append(start_worker(root, env, "--concurrency", str(os.cpu_count() or 2),
                                        name="matches"))  # fmt: skip
        port = free_port()
        server = subprocess.Popen(web_argv("127.0.0.1", port), env={**os.environ})
        base = f"http://127.0.0.1:{port}"
        try:
            for _ in range(300):
                try:
                    if httpx.get(f"{base}/healthz", timeout=2).status_code == 200:
                        break
                except httpx.HTTPError:
                    time.sleep(0.2)
            start = threading.Barrier(args.humans)
            people = [Person(base, name, greedy, start, args.think) for name in names]
            for person in people:
                person.log_in()
            began = time.perf_counter()
            for person in people:
                person.start()
            for person in people:
                person.join()
            seconds = time.perf_counter() - began
            load = os.getloadavg()
        finally:
            server.terminate()
            server.wait(timeout=30)
            stop_workers(workers, grace=5)
            store.close()
        trips = [t for p in people for t in p.trips]
        pages = [t for p in people for t in p.pages]
        errors = [f"{p.name}: {p.error}" for p in people if p.error]
        done = sum(1 for p in people if p.result == "done")
        busy = "no tournament" if args.no_tournament else "a tournament playing"
        backend = "SQLite" if url.startswith("sqlite") else "PostgreSQL"
        print(f"{args.humans} people at once, {args.think:g} s thinking a move, {busy}, {backend}: "
              f"{done} games played to the end in {seconds:.0f} s, {len(trips)} moves")  # fmt: skip
        if trips:
            print(f"move round trip (move posted -> bot's reply on the page): p50 "
                  f"{statistics.median(trips) * 1000:.0f} ms, p95 "
                  f"{_percentile(trips, 0.95) * 1000:.0f} ms, "
                  f"max {max(trips) * 1000:.0f} ms")  # fmt: skip
        if pages:
            print(f"table page: p50 {statistics.median(pages) * 1000:.0f} ms, p95 "
                  f"{_percentile(pages, 0.95) * 1000:.0f} ms ({len(pages)} pages)")  # fmt: skip
        print(f"load average at the end: {load[0]:.1f} (1 min), {os.cpu_count()} cores")
        for error in errors[:5]:
            print("error:", error)


if __name__ == "__main__":
    main()
