"""The two-host drill (issue 32): two ``arena worker`` hosts on one machine, each with its own
host name and temporary directory (tests/hosts.py), share a tournament and a competition's
ladder through one PostgreSQL and one Redis; one host is killed (``kill -9`` of its whole
process group) mid-match and started again at once (as ``restart: unless-stopped`` would):
its matches are re-queued within the documented bound (the lease plus one sweep interval,
docs/workers.md "Sweep") and played again, the other host plays on while it starts, and
once back it takes work again. Every done match is stored once, claimed once (the dead
host's twice), with one record a game. benchmarks/two_hosts.py measures the same drill
(matches a second before, during and after, the time to re-queue, each host's share)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import select

from arena.store.db import Store
from arena.store.models import Match, Tournament
from tests.hosts import Host, competition_ladder, done_by_host, stored_once, wait_requeued
from tests.servers import FAST, stop_workers, wait_for
from tests.workers.test_tasks import (  # noqa: F401  (the fixture)
    Service,
    _assert_stored_once,
    _create,
    on_deployment,
    service,
)

#: The hosts' lease: longer than the tests' 2 s, so that only the killed host's matches are
#: claimed twice (a loaded machine once stalled a live host's heartbeats for 2 s, and its
#: match, re-claimed as it should be, was counted as claimed twice).
LEASE = 2 * float(FAST["ARENA_LEASE_SECONDS"])
SWEEP = float(FAST["ARENA_SWEEP_SECONDS"])
#: The ladder's entrants: their owners' reference bots.
ENTRANTS = {"ann": "counter", "bob": "greedy", "dan": "random"}


@on_deployment
def test_two_hosts_share_the_work_and_survive_the_death_of_one(
    service: Service,  # noqa: F811
    tmp_path: Path,
) -> None:
    store = service.store()
    try:
        ladder = competition_ladder(store, "drill", ENTRANTS)
        _create(service, "rr", "arena/random,arena/greedy,arena/fives", games=10)
        with store.read() as session:
            rr = session.scalar(select(Tournament.id).where(Tournament.name == "rr"))
        assert rr is not None
        work = (ladder, rr)
        env = {**service.env, "ARENA_LEASE_SECONDS": f"{LEASE:g}"}
        a, b = (Host.make(tmp_path, n, env, "--concurrency", "1") for n in ("a", "b"))
        service.workers += [a.spawn(), b.spawn()]  # started together
        service.send("rr")
        a.worker.wait_ready()
        b.worker.wait_ready()
        wait_for(
            lambda: set(done_by_host(store, work)) == {"a", "b"}, 60, "both hosts to play a match"
        )

        kill = a.kill_mid_match(store)
        killed = datetime.now(UTC)
        service.workers.append(a.spawn())  # a comes back at once, as restart: unless-stopped
        took = wait_requeued(store, kill)
        # the bound counts from the last heartbeat, before the kill; 2 s for a loaded machine
        assert took < LEASE + SWEEP + 2, f"re-queued {took:.1f} s after the kill"

        def replayed() -> list[Match]:
            with store.read() as session:
                return list(session.scalars(select(Match).where(Match.id.in_(kill.matches))))

        wait_for(lambda: all(m.status == "done" for m in replayed()), 60, "the dead host's matches")
        a.worker.wait_ready()
        returned = datetime.now(UTC)
        assert done_by_host(store, work, since=killed, until=returned)["b"] >= 1, "b stopped"
        wait_for(
            lambda: done_by_host(store, work, since=returned)["a"] >= 1, 60, "a to take work again"
        )
        # arena workers: the dead node gone (silent for a lease), the new one and b alive
        expected = {
            f"arena-{a.workers[0].pid}@a": "gone",
            f"arena-{a.workers[1].pid}@a": "alive",
            f"arena-{b.worker.pid}@b": "alive",
        }

        def listed() -> dict[str, str]:
            lines = service.cli("workers").stdout.splitlines()
            return {line.split()[0]: line.split()[1] for line in lines}

        wait_for(lambda: listed() == expected, 10, f"arena workers to list {expected}")
        wait_for(
            lambda: all(m.status == "done" for m in _rr_matches(store, rr)), 60, "the tournament"
        )
        stop_workers(service.workers)
        _, problems = stored_once(store, work, replayed=kill.matches)
    finally:
        store.close()
    assert not problems, "\n".join([*problems, service.logs()])
    for host in (a, b):  # each wrote the bots it ran from the database, on its own disk
        assert list(host.bot_cache.glob("*.py")), host.name
    _assert_stored_once(service, "rr")


def _rr_matches(store: Store, tournament_id: int) -> list[Match]:
    with store.read() as session:
        return list(session.scalars(select(Match).where(Match.tournament_id == tournament_id)))
