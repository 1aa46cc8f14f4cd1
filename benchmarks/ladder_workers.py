"""A competition's ladder on real workers: games per hour per entrant, their spread, and the
ladder's matches in flight against its bound (issue 21, "Measure"; docs/workers.md, "The
ladder's bound").

One ``arena worker`` (2 pool processes by default) on SQLite and the filesystem broker plays
a competition of 8 sandboxed reference bots (2 each of random, greedy, fives, counter, under
different owners) for ``--minutes``; nobody sends anything: the workers' sweeps and finished
matches tick the competition (arena.service.ladder). A third of the way in, a round robin
tournament is sent (other work in the matches lane: the ladder's bound halves while it
waits). At the deadline the final starts by itself; the run waits for its table.

Every half second the benchmark samples the ladder's matches in flight and its bound; it
prints, per entrant, games and games per hour, the spread (max / min), the largest in-flight
count with and without other work waiting against the bound then, and the final's games.

    ./run python benchmarks/ladder_workers.py [--minutes 4] [--concurrency 2]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlalchemy import func, select

from arena.compete.entrants import Entrant
from arena.engine.rules import PRESETS
from arena.service.broker import configure
from arena.service.dispatch import dispatch_matches
from arena.service.ladder import ladder_in_flight_bound
from arena.service.matches import create_stored_tournament
from arena.store.db import Store, as_utc, connect, upgrade
from arena.store.models import (
    Bot,
    BotVersion,
    Competition,
    CompetitionEntry,
    Match,
    MatchSeat,
    Tournament,
)
from arena.store.queue import create_tournament

ROOT = Path(__file__).resolve().parent.parent
ARENA = Path(sys.executable).parent / "arena"
KINDS = ("random", "greedy", "fives", "counter")


@contextlib.contextmanager
def _worker(directory: Path, env: dict[str, str], concurrency: int) -> Iterator[None]:
    log = directory / "worker.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [str(ARENA), "worker", "--concurrency", str(concurrency), "--loglevel", "INFO"],
            stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
            env={**os.environ, **env}, cwd=directory, start_new_session=True,
        )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while "ready." not in log.read_text(errors="replace"):
            if process.poll() is not None or time.monotonic() > deadline:
                sys.exit(f"arena worker did not start:\n{log.read_text(errors='replace')}")
            time.sleep(0.05)
        yield
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def _competition(store: Store, opens: datetime, deadline: datetime) -> tuple[int, dict[int, str]]:
    """A competition of 8 entrants (as arena.service.competitions would store it: the
    ladder tournament, its entrants, active entries); its id and the entrants' kinds."""
    kinds: dict[int, str] = {}
    for kind in KINDS:
        for copy in (1, 2):
            source = (ROOT / "bots" / f"{kind}.py").read_text()
            version, _ = store.add_bot_version(f"{kind}{copy}", kind, source, {"bench": True})
            kinds[version.id] = f"{kind}{copy}"
    played = {"move_seconds": 1.0, "memory_mb": 256}
    ladder = create_tournament(
        store, name="bench-ladder", rules=PRESETS["draw"], format="ladder", players=2,
        teams=False, games_per_match=2, seed=1,
        entrants=[Entrant.stored(label, v) for v, label in kinds.items()], matches=[],
        settings=played,
    )  # fmt: skip
    rule_set = store.ensure_rule_set(PRESETS["draw"])
    with store.write() as session:
        session.get_one(Tournament, ladder).status = "running"
        competition = Competition(
            name="bench", rule_set_id=rule_set.id, players=2, teams=False,
            settings={**played, "games_per_deal": 2, "placement_games": 8}, opens=opens,
            deadline=deadline, seed=5, final_top=4, final_max_games=400, status="open",
            ladder_id=ladder,
        )  # fmt: skip
        session.add(competition)
        session.flush()
        for version_id in kinds:
            owner = session.scalar(
                select(Bot.owner_id).join(BotVersion).where(BotVersion.id == version_id)
            )
            session.add(
                CompetitionEntry(
                    competition_id=competition.id, user_id=owner, bot_version_id=version_id,
                    status="active", accepted=opens,
                )
            )  # fmt: skip
        return competition.id, kinds


def _in_flight(store: Store, tournament_id: int) -> int:
    with store.read() as session:
        return int(
            session.scalar(
                select(func.count())
                .select_from(Match)
                .where(
                    Match.tournament_id == tournament_id,
                    Match.status.in_(("pending", "running")),
                )
            )
            or 0
        )


def _other_waiting(store: Store, tournament_id: int | None) -> bool:
    if tournament_id is None:
        return False
    with store.read() as session:
        return bool(
            session.scalar(
                select(func.count())
                .select_from(Match)
                .where(Match.tournament_id == tournament_id, Match.status == "pending")
            )
        )


def _games(store: Store, ladder: int, until: datetime) -> dict[int, int]:
    """Games each version played in the ladder's matches finished by ``until``."""
    with store.read() as session:
        rows = session.execute(
            select(MatchSeat.bot_version_id, Match.id, Match.games, Match.finished)
            .join(Match, Match.id == MatchSeat.match_id)
            .where(Match.tournament_id == ladder, Match.status == "done")
            .distinct()
        ).all()
    games: dict[int, int] = {}
    for version, _, count, finished in rows:
        if finished is not None and as_utc(finished) <= until:
            games[int(version)] = games.get(int(version), 0) + int(count)
    return games


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=4.0, help="the ladder's window")
    parser.add_argument("--concurrency", type=int, default=2, help="the worker's processes")
    parser.add_argument("--no-other", action="store_true", help="send no other tournament")
    args = parser.parse_args()
    directory = Path(tempfile.mkdtemp(prefix="ladder-bench-"))
    url = f"sqlite:///{directory / 'arena.db'}"
    broker = f"filesystem://{directory / 'broker'}"
    upgrade(url)
    store = connect(url)
    opens = datetime.now(UTC)
    deadline = opens + timedelta(minutes=args.minutes)
    cid, kinds = _competition(store, opens, deadline)
    with store.read() as session:
        ladder = session.get_one(Competition, cid).ladder_id
    env = {"ARENA_DATABASE_URL": url, "ARENA_BROKER_URL": broker, "ARENA_SWEEP_SECONDS": "2"}
    samples: list[tuple[float, int, int, bool]] = []  # (seconds, in flight, bound, other)
    other: int | None = None
    with _worker(directory, env, args.concurrency):
        while datetime.now(UTC) < deadline:
            elapsed = (datetime.now(UTC) - opens).total_seconds()
            if other is None and not args.no_other and elapsed > args.minutes * 20:
                other, _ = create_stored_tournament(
                    store, name="other", rules=PRESETS["draw"], format="round-robin",
                    entrants=[f"{k}1={k}1/{k}" for k in KINDS], games_per_match=40, seed=3,
                )  # fmt: skip
                configure(broker)
                dispatch_matches(store, other)
            samples.append(
                (
                    elapsed,
                    _in_flight(store, ladder),
                    ladder_in_flight_bound(store, cid),
                    _other_waiting(store, other),
                )
            )
            time.sleep(0.5)
        window = (deadline - opens).total_seconds()
        games = _games(store, ladder, deadline)
        started = time.monotonic()
        final_games = 0
        while time.monotonic() - started < 600:
            with store.read() as session:
                row = session.get_one(Competition, cid)
                if row.status == "done":
                    final_games = sum(
                        m.games
                        for m in session.scalars(
                            select(Match).where(
                                Match.tournament_id == row.final_id, Match.status == "done"
                            )
                        )
                    )
                    table = row.final_table or []
                    break
            time.sleep(1)
        else:
            table = []
        final_seconds = time.monotonic() - started
    print(f"ladder window {window:.0f} s, {args.concurrency} worker processes, 8 entrants")
    rates = {}
    for version, label in sorted(kinds.items(), key=lambda kv: kv[1]):
        rates[label] = games.get(version, 0) / window * 3600
        print(f"  {label:10s} {games.get(version, 0):5d} games  {rates[label]:7.0f} games/hour")
    low, high = min(rates.values()), max(rates.values())
    print(f"spread max/min: {high / low:.2f}" if low else "spread: an entrant never played")
    alone = [s for s in samples if not s[3]]
    busy = [s for s in samples if s[3]]
    for what, part in (("no other work", alone), ("a tournament waiting", busy)):
        if part:
            over = sum(1 for _, flight, bound, _ in part if flight > bound)
            print(
                f"{what}: {len(part)} samples, in flight max {max(s[1] for s in part)}, "
                f"mean {sum(s[1] for s in part) / len(part):.2f}, bound {min(s[2] for s in part)}"
                f"-{max(s[2] for s in part)}, samples above the bound {over}"
            )
    print(f"final: {final_games} games, published {final_seconds:.0f} s after the deadline")
    for entry in table:
        tie = " (tie)" if entry.get("tie") else ""
        print(f"  {entry['place']}. {entry['name']}{tie}  {entry['rating']:.0f}")
    store.close()


if __name__ == "__main__":
    main()
