"""The two-host drill measured (issue 32; docs/deployment.md, "More hosts"): two ``arena
worker`` hosts on this machine (each its own host name, in a UTS namespace, and its own
temporary directory: tests/hosts.py) share a round robin tournament and a competition's
ladder through one PostgreSQL and one Redis. Once both have played, ``--seconds`` pass
("before"); host ``a`` is killed (``kill -9`` of its whole process group) mid-match, and
``--seconds`` pass with ``b`` alone ("during"); then ``a`` starts again ("a starting":
``b`` still alone), and ``--seconds`` pass once it is ready ("after").

Prints, in one run: matches a second (and games a second) in each phase, each host's share;
seconds from the kill to the dead host's matches re-queued (and from the end of their
lease, which the documented bound counts from: lease + one sweep interval after the last
heartbeat), and to their being done again; the returned host's start and first match; and
the store's check (every done match stored once, claimed once, the dead host's twice, one
record a game). The load average at the start and the end.

    ./run python benchmarks/two_hosts.py [--seconds 20] [--concurrency 1] [--games 10]
        [--lease 2] [--sweep 1] [--database postgresql://...]

Without ``--database``, a throwaway PostgreSQL is started (tests/servers.py, as root: the
``postgres`` user runs it); Redis is always a throwaway one. Run as root: each host has a
UTS namespace of its own.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import func, select

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the tests' helpers: tests/hosts.py, tests/servers.py

from arena.engine.rules import PRESETS  # noqa: E402
from arena.service.broker import configure  # noqa: E402
from arena.service.dispatch import dispatch_matches  # noqa: E402
from arena.service.matches import create_stored_tournament  # noqa: E402
from arena.store.db import Store, connect, upgrade  # noqa: E402
from arena.store.models import Match  # noqa: E402
from tests.hosts import (  # noqa: E402
    Host,
    competition_ladder,
    done_by_host,
    stored_once,
    wait_requeued,
)
from tests.servers import running_postgres, running_redis, stop_workers, wait_for  # noqa: E402

KINDS = ("random", "greedy", "fives", "counter")
#: The round robin's owners (each stores the 4 reference bots: 8 entrants, 28 matches).
OWNERS = ("arena", "arena2")
#: The ladder's entrants: owner -> reference bot.
LADDER = {"ann": "counter", "bob": "greedy", "cy": "fives", "dan": "random"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=20.0, help="each phase's length")
    parser.add_argument("--concurrency", type=int, default=1, help="pool processes a host")
    parser.add_argument("--games", type=int, default=10, help="games of a tournament match")
    parser.add_argument("--lease", type=float, default=2.0, help="ARENA_LEASE_SECONDS")
    parser.add_argument("--sweep", type=float, default=1.0, help="ARENA_SWEEP_SECONDS")
    parser.add_argument("--database", help="an empty PostgreSQL database (default: throwaway)")
    args = parser.parse_args()
    print(f"load average at the start: {_load()}")
    with (
        tempfile.TemporaryDirectory(prefix="arena-two-hosts-") as folder,
        _database(args.database) as url,
        running_redis() as redis,
    ):
        _drill(args, Path(folder), url, redis.url)
    print(f"load average at the end: {_load()}")


@contextlib.contextmanager
def _database(url: str | None) -> Iterator[str]:
    if url is not None:
        yield url
        return
    with running_postgres() as server:
        yield f"{server}/postgres"


def _drill(args: argparse.Namespace, folder: Path, database: str, broker: str) -> None:
    upgrade(database)
    store = connect(database)
    env = {
        "ARENA_DATABASE_URL": database,
        "ARENA_BROKER_URL": broker,
        "ARENA_LEASE_SECONDS": str(args.lease),
        "ARENA_HEARTBEAT_SECONDS": str(args.lease / 4),
        "ARENA_SWEEP_SECONDS": str(args.sweep),
        "ARENA_RESEND_GRACE_SECONDS": str(args.sweep),
    }
    hosts = [Host.make(folder, name, env, "--concurrency", str(args.concurrency)) for name in "ab"]
    a = hosts[0]
    try:
        work = (competition_ladder(store, "drill", LADDER), _round_robin(store, args.games))
        for host in hosts:
            host.spawn()
        for host in hosts:
            host.worker.wait_ready()
        configure(broker, database=database)
        dispatch_matches(store, work[1])
        wait_for(lambda: set(done_by_host(store, work)) == {"a", "b"}, 120, "both hosts to play")
        start = datetime.now(UTC)
        time.sleep(args.seconds)
        kill = a.kill_mid_match(store)
        killed = datetime.now(UTC)
        requeued = wait_requeued(store, kill)
        after_lease = (datetime.now(UTC) - kill.lease_expires).total_seconds()
        wait_for(lambda: _all_done(store, kill.matches), 120, "the dead host's matches")
        replayed = time.monotonic() - kill.at
        time.sleep(max(0.0, args.seconds - (time.monotonic() - kill.at)))
        returned = datetime.now(UTC)
        spawned = time.monotonic()
        a.spawn()
        a.worker.wait_ready()
        ready, back = time.monotonic() - spawned, datetime.now(UTC)
        wait_for(lambda: done_by_host(store, work, since=back)["a"] >= 1, 120, "a to take work")
        first = time.monotonic() - spawned
        time.sleep(max(0.0, args.seconds - (time.monotonic() - spawned - ready)))
        end = datetime.now(UTC)
        stop_workers([worker for host in hosts for worker in host.workers])
        print(
            f"two hosts of {args.concurrency} process(es), lease {args.lease:g} s, sweep "
            f"{args.sweep:g} s: a round robin of {args.games}-game matches and a ladder of "
            f"2-game matches"
        )
        for phase, since, until in (
            ("before", start, killed),
            ("during (a dead)", killed, returned),
            ("a starting", returned, back),
            ("after (a back)", back, end),
        ):
            _phase(store, work, phase, since, until)
        print(
            f"a killed holding matches {list(kill.matches)}: re-queued {requeued:.2f} s after "
            f"the kill, {after_lease:.2f} s after their lease's end (bound: "
            f"{args.lease:g} s lease + {args.sweep:g} s sweep from the last heartbeat); "
            f"done again by b {replayed:.2f} s after the kill"
        )
        print(f"a back: ready {ready:.2f} s after its start, its first match done at {first:.2f} s")
        checked, problems = stored_once(store, work, replayed=kill.matches)
        total = done_by_host(store, work)
        print(f"matches done by host: {dict(sorted(total.items()))}")
        print(f"stored once: {checked} done matches checked, problems: {problems or 'none'}")
    finally:
        stop_workers([worker for host in hosts for worker in host.workers])
        store.close()


def _round_robin(store: Store, games: int) -> int:
    """A round robin of the reference bots, stored under each of :data:`OWNERS`."""
    for owner in OWNERS:
        for kind in KINDS:
            source = (ROOT / "bots" / f"{kind}.py").read_text()
            store.add_bot_version(owner, kind, source, {"checked": "by the benchmark"})
    tournament, _ = create_stored_tournament(
        store,
        name="rr",
        rules=PRESETS["draw"],
        format="round-robin",
        entrants=[f"{owner}-{kind}={owner}/{kind}" for owner in OWNERS for kind in KINDS],
        games_per_match=games,
        seed=7,
    )
    return tournament


def _phase(
    store: Store, work: tuple[int, ...], name: str, since: datetime, until: datetime
) -> None:
    seconds = (until - since).total_seconds()
    by_host = done_by_host(store, work, since=since, until=until)
    with store.read() as session:
        games = session.scalar(
            select(func.coalesce(func.sum(Match.games), 0)).where(
                Match.tournament_id.in_(work),
                Match.status == "done",
                Match.finished > since,
                Match.finished <= until,
            )
        )
    matches = sum(by_host.values())
    shares = ", ".join(f"{host} {count}" for host, count in sorted(by_host.items()))
    print(
        f"{name:>16}: {seconds:5.1f} s, {matches / seconds:5.2f} matches/s, "
        f"{int(games or 0) / seconds:6.1f} games/s ({shares or 'none'})"
    )


def _all_done(store: Store, match_ids: tuple[int, ...]) -> bool:
    with store.read() as session:
        statuses = Counter(session.scalars(select(Match.status).where(Match.id.in_(match_ids))))
    return statuses["done"] == len(match_ids)


def _load() -> str:
    return ", ".join(f"{value:.2f}" for value in os.getloadavg())


if __name__ == "__main__":
    main()
