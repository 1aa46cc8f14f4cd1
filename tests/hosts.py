"""Worker hosts on one machine, for the two-host drill (issue 32; docs/deployment.md, "More
hosts"): tests/workers/test_hosts.py and benchmarks/two_hosts.py.

A :class:`Host` is an ``arena worker`` group (the main process, its pool, their bots: one
process group) started as a machine of its own would run it:

- **its host name**, in a UTS namespace of its own (``unshare --uts``,
  :func:`tests.servers.spawn_worker`): its Celery node name (``arena-PID@NAME``), its
  leases and results (``NAME:PID``) and its row in ``workers`` name it, as on a real host;
- **its own temporary directory** (``TMPDIR``): the bot files it writes for its matches
  (``ARENA_BOT_CACHE``'s default) are its own, written from the sources the database holds,
  as on a host that shares no disk with the others;
- **its slot registry at its own path** (``TMPDIR/arena-slots``), which is a link to this
  machine's registry (:data:`arena.match.sandbox.SLOT_LOCK_DIR`): a slot's number chooses
  the bot's uid and cgroup, which are the machine's, so two hosts on one machine must not
  hand out the same slot (as scaled containers on one Docker host share the ``arena-slots``
  volume); hosts on separate machines share nothing of it.

Both share only the database and the broker, given in the environment.
"""

from __future__ import annotations

import os
import signal
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlalchemy import select

from arena.match.sandbox import SLOT_LOCK_DIR
from arena.service.competitions import NewCompetition, create_competition, enter_with_version
from arena.service.permissions import OPERATOR
from arena.store.db import Store, as_utc
from arena.store.models import Competition, GameRecord, Match
from tests.paths import REFERENCE_BOTS
from tests.servers import Worker, spawn_worker


@dataclass
class Host:
    """An ``arena worker ARGS`` group named ``name``, in ``directory`` (its working and
    temporary directory), with ``env`` (the database's and the broker's URLs, the timings);
    each start is one :class:`Worker` in ``workers``, the latest last."""

    name: str
    directory: Path
    env: dict[str, str]
    args: tuple[str, ...]
    workers: list[Worker] = field(default_factory=list)

    @classmethod
    def make(cls, root: Path, name: str, env: Mapping[str, str], *args: str) -> Host:
        """A host called ``name`` with its directory under ``root`` (made here)."""
        temporary = root / name / "tmp"
        temporary.mkdir(parents=True)
        SLOT_LOCK_DIR.mkdir(mode=0o1777, exist_ok=True)
        (temporary / SLOT_LOCK_DIR.name).symlink_to(SLOT_LOCK_DIR, target_is_directory=True)
        return cls(name, root / name, {**env, "TMPDIR": str(temporary)}, args)

    def spawn(self) -> Worker:
        """Start it (again) without waiting for it: :meth:`Worker.wait_ready` does."""
        worker = spawn_worker(self.directory, self.env, *self.args, name=self.name, host=self.name)
        self.workers.append(worker)
        return worker

    @property
    def worker(self) -> Worker:
        return self.workers[-1]

    @property
    def bot_cache(self) -> Path:
        """Where it writes the bot files it runs (``ARENA_BOT_CACHE``'s default, in its
        ``TMPDIR``)."""
        return Path(self.env["TMPDIR"]) / "arena-bot-cache"

    def kill_mid_match(self, store: Store, timeout: float = 60) -> Kill:
        """``kill -9`` of the whole host while it plays a match: the group is stopped
        (``SIGSTOP``: nothing of it can finish a match or renew a lease meanwhile), the
        database asked which matches it holds, and the group killed if it holds one, else
        resumed and asked again a moment later.

        Raises:
            AssertionError: it held no match within ``timeout`` seconds.
        """
        deadline = time.monotonic() + timeout
        while True:
            os.killpg(self.worker.pid, signal.SIGSTOP)
            held = leases_of(store, self.name)
            if held:
                self.worker.kill()
                return Kill(
                    held={match: owner for match, (owner, _) in held.items()},
                    at=time.monotonic(),
                    lease_expires=max(expires for _, expires in held.values()),
                )
            os.killpg(self.worker.pid, signal.SIGCONT)
            if time.monotonic() > deadline:
                raise AssertionError(f"{self.name} played no match in {timeout} s")
            time.sleep(0.05)


@dataclass(frozen=True)
class Kill:
    """A host killed mid-match: the matches it held (running under its processes' leases),
    by their leases' owners (``HOST:PID``); when (``time.monotonic()``); when the latest of
    those leases was to run out."""

    held: Mapping[int, str]
    at: float
    lease_expires: datetime

    @property
    def matches(self) -> tuple[int, ...]:
        return tuple(sorted(self.held))


def competition_ladder(store: Store, name: str, entrants: Mapping[str, str]) -> int:
    """A competition called ``name``, open for an hour, entered by the reference bots of
    ``entrants`` (owner: the bot's name) with their owners' stored versions: its ladder
    plays matches of 2 games from the workers' next sweep on. Return the ladder's id."""
    new = NewCompetition(name=name, deadline=datetime.now(UTC) + timedelta(hours=1))
    competition = create_competition(store, OPERATOR, new)
    for owner, bot in entrants.items():
        source = (REFERENCE_BOTS / f"{bot}.py").read_text()
        version = store.add_bot_version(owner, bot, source, {"checked": "by the drill"})[0]
        enter_with_version(store, OPERATOR, name, version.id, owner=owner)
    with store.read() as session:
        ladder = session.scalar(select(Competition.ladder_id).where(Competition.id == competition))
    assert ladder is not None
    return ladder


def host_of(worker: str | None) -> str:
    """The host of a lease's or a result's worker (``HOST:PID``)."""
    return (worker or "").rpartition(":")[0]


def leases_of(store: Store, host: str) -> dict[int, tuple[str, datetime]]:
    """The matches running under a lease of ``host``'s processes: their leases' owners
    (``HOST:PID``) and ends."""
    with store.read() as session:
        rows = session.execute(
            select(Match.id, Match.lease_owner, Match.lease_expires).where(
                Match.status == "running", Match.lease_owner.like(f"{host}:%")
            )
        ).all()
    return {
        int(match_id): (str(owner), as_utc(expires))
        for match_id, owner, expires in rows
        if expires is not None
    }


def wait_requeued(store: Store, kill: Kill, timeout: float = 60) -> float:
    """Seconds from the kill until none of the matches the host held is under its dead
    processes' leases any more (back to pending, or claimed by a live process). Asked
    every 20 ms from when the latest of those leases runs out (none is claimable before:
    200 queries of a 4 s lease saved).

    Raises:
        AssertionError: some still are after ``timeout`` seconds.
    """
    deadline = kill.at + timeout
    time.sleep(max(0.0, (kill.lease_expires - datetime.now(UTC)).total_seconds()))
    while True:
        with store.read() as session:
            rows = session.execute(
                select(Match.id, Match.lease_owner).where(
                    Match.id.in_(kill.matches), Match.status == "running"
                )
            ).all()
        held = sorted(int(match) for match, owner in rows if kill.held[match] == owner)
        if not held:
            return time.monotonic() - kill.at
        if time.monotonic() > deadline:
            raise AssertionError(f"matches {held} still leased to the dead {kill.held}")
        time.sleep(0.02)


def done_by_host(
    store: Store,
    tournament_ids: Sequence[int],
    since: datetime | None = None,
    until: datetime | None = None,
) -> Counter[str]:
    """Matches of these tournaments done (finished after ``since`` and not after ``until``,
    when given), by host."""
    query = select(Match.result["worker"].as_string()).where(
        Match.tournament_id.in_(tournament_ids), Match.status == "done"
    )
    if since is not None:
        query = query.where(Match.finished > since)
    if until is not None:
        query = query.where(Match.finished <= until)
    with store.read() as session:
        return Counter(host_of(worker) for worker in session.scalars(query))


def stored_once(
    store: Store, tournament_ids: Sequence[int], replayed: Sequence[int] = ()
) -> tuple[int, list[str]]:
    """Check that every done match of these tournaments was stored once: its result lists
    its games in order, it has exactly one record per game (the schema's unique key forbids
    two; this finds one missing or extra), and it was claimed once, except the ``replayed``
    matches (a dead host's), claimed twice. Return the done matches checked and what is
    wrong (nothing when all is well)."""
    problems: list[str] = []
    with store.read() as session:
        matches = list(
            session.scalars(
                select(Match).where(Match.tournament_id.in_(tournament_ids), Match.status == "done")
            )
        )
        records: dict[int, list[int]] = {match.id: [] for match in matches}
        for match_id, index in session.execute(
            select(GameRecord.match_id, GameRecord.game_index)
            .where(GameRecord.match_id.in_(records))
            .order_by(GameRecord.match_id, GameRecord.game_index)
        ):
            records[match_id].append(index)
    for match in matches:
        games = list(range(match.games))
        if [game["index"] for game in (match.result or {}).get("games", [])] != games:
            problems.append(f"match {match.id}: its result does not list games 0-{match.games - 1}")
        if records[match.id] != games:
            problems.append(f"match {match.id}: records of games {records[match.id]}, not {games}")
        claims = 2 if match.id in replayed else 1
        if match.attempts != claims:
            problems.append(f"match {match.id}: claimed {match.attempts} times, not {claims}")
    return len(matches), problems
