"""A competition's ladder on real workers: games per hour per entrant, their spread, the
ladder's matches in flight against its bound (issue 21, "Measure"), and what the ladder
leaves others (issue 31, "Measure"; docs/workers.md, "Fair shares"): the longest wait of a
tournament and of a placement while the ladder runs, and new entrants' time from accepted
to first rated.

One ``arena worker`` (``--concurrency`` pool processes; several, comma-separated, one run
each) on SQLite and the filesystem broker plays a competition of 8 sandboxed reference bots
(2 each of random, greedy, fives, counter, under different owners) for ``--minutes``;
nobody sends anything: the workers' sweeps and finished matches tick the competition
(arena.service.clock). A fifth of the way in, a round robin tournament is sent (other work
in the matches lane; with ``--demo``, ``arena serve --demo``'s tournament instead, its
matches as long as the demo's) and a placement (an accepted upload's gauntlet, as
arena.service.uploads.create_placement makes it). From then on ``--newcomers`` new entrants
enter one by one (a stored version entered at once, arena.store.competitions.
add_active_entry, as ``arena competition enter --version`` does). At the deadline the final
starts by itself; the run waits for its table.

Every quarter second the benchmark samples the ladder's matches in flight and its bound, and
the tournament's and the placement's matches: a *wait* is a stretch with a match of theirs
pending and none running. It prints, per entrant, games and games per hour, the spread (max
/ min), the in-flight counts against the bound, the longest waits (and the first, from
sent to the first match running), accepted to first rated (each, p50, p95), the final's
games, and the load average at the start and the end.

    ./run python benchmarks/ladder_workers.py [--minutes 4] [--concurrency 1,2] [--demo]
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import math
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import func, select

from arena.cli.serve import DEMO_GAMES, DEMO_MATCH_GAMES
from arena.compete.entrants import Entrant
from arena.engine.rules import PRESETS
from arena.service.broker import configure
from arena.service.clock import ladder_in_flight_bound
from arena.service.dispatch import dispatch_matches
from arena.service.matches import create_stored_tournament
from arena.service.uploads import create_placement
from arena.store.competitions import add_active_entry
from arena.store.db import Store, as_utc, connect, upgrade
from arena.store.models import (
    Bot,
    BotVersion,
    Competition,
    CompetitionEntry,
    Match,
    MatchSeat,
    Tournament,
    Upload,
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


@dataclass
class _Waits:
    """A tournament's waits, sampled: sent, first running, the longest stretch with a match
    pending and none running (and when the current stretch began)."""

    tournament_id: int
    sent: float
    first: float | None = None
    longest: float = 0.0
    since: float | None = None

    def sample(self, elapsed: float, pending: int, running: int) -> None:
        if running and self.first is None:
            self.first = elapsed - self.sent
        if pending and not running:
            self.since = elapsed if self.since is None else self.since
            self.longest = max(self.longest, elapsed - self.since)
        else:
            self.since = None

    def line(self, what: str) -> str:
        first = "never" if self.first is None else f"{self.first:.1f} s"
        longest = f"{self.longest:.1f} s"
        return f"{what}: first match running {first} after it was sent; longest wait {longest}"


def _counts(store: Store, tournament_id: int) -> tuple[int, int]:
    """The tournament's matches pending, and running."""
    with store.read() as session:
        counts = dict(
            session.execute(
                select(Match.status, func.count())
                .where(Match.tournament_id == tournament_id)
                .group_by(Match.status)
            ).all()
        )
    return int(counts.get("pending", 0)), int(counts.get("running", 0))


def _placement(store: Store, broker: str) -> int:
    """An accepted upload's placement (arena.service.uploads.create_placement: a gauntlet of
    the new version against the field), sent; its tournament's id."""
    source = (ROOT / "bots" / "greedy.py").read_text()
    version, _ = store.add_bot_version("placed", "greedy", source, {"bench": True})
    with store.write() as session:
        owner = session.scalar(
            select(Bot.owner_id).join(BotVersion).where(BotVersion.id == version.id)
        )
        upload = Upload(
            owner_id=owner, bot_name="greedy", filename="greedy.py", source=source,
            sha256=hashlib.sha256(source.encode()).hexdigest(), status="accepted",
            bot_version_id=version.id,
        )  # fmt: skip
        session.add(upload)
        session.flush()
        upload_id = upload.id
    tournament_id = create_placement(store, upload_id)
    assert tournament_id is not None
    configure(broker)
    dispatch_matches(store, tournament_id)
    return tournament_id


def _newcomer(store: Store, competition_id: int, number: int) -> None:
    """A new entrant: a reference bot under an owner of its own, entered at once."""
    kind = KINDS[number % len(KINDS)]
    source = (ROOT / "bots" / f"{kind}.py").read_text() + f"\n# newcomer {number}\n"
    version, _ = store.add_bot_version(f"new{number}", kind, source, {"bench": True})
    with store.read() as session:
        owner = session.scalar(
            select(Bot.owner_id).join(BotVersion).where(BotVersion.id == version.id)
        )
    assert owner is not None
    add_active_entry(store, competition_id, int(owner), version.id)


def _first_rated(store: Store, competition_id: int, since: datetime) -> list[float | None]:
    """Seconds from accepted to first rated of the entries accepted from ``since`` on, in
    the order accepted (None: not rated yet)."""
    with store.read() as session:
        rows = session.execute(
            select(CompetitionEntry.accepted, CompetitionEntry.first_rated)
            .where(CompetitionEntry.competition_id == competition_id)
            .order_by(CompetitionEntry.accepted)
        ).all()
    return [
        None if rated is None else (as_utc(rated) - as_utc(accepted)).total_seconds()
        for accepted, rated in rows
        if accepted is not None and as_utc(accepted) >= since
    ]


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


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
    parser.add_argument(
        "--concurrency", default="2", help="the worker's processes; several: one run each"
    )
    parser.add_argument("--no-other", action="store_true", help="send no other tournament")
    parser.add_argument(
        "--demo", action="store_true", help="the other tournament is arena serve --demo's"
    )
    parser.add_argument("--newcomers", type=int, default=6, help="entrants arriving later")
    parser.add_argument("--no-final", action="store_true", help="stop at the deadline")
    args = parser.parse_args()
    for concurrency in (int(c) for c in args.concurrency.split(",")):
        _run(args, concurrency)


def _other_tournament(store: Store, demo: bool) -> int:
    """The other tournament: a round robin of 40 games a pair, or the demo's."""
    if not demo:
        other, _ = create_stored_tournament(
            store, name="other", rules=PRESETS["draw"], format="round-robin",
            entrants=[f"{k}1={k}1/{k}" for k in KINDS], games_per_match=40, seed=3,
        )  # fmt: skip
        return other
    other, _ = create_stored_tournament(
        store, name="demo", rules=PRESETS["draw"], format="round-robin",
        entrants=[f"{k}1={k}1/{k}" for k in KINDS], games_per_match=DEMO_GAMES, seed=3,
        match_games=DEMO_MATCH_GAMES,
    )  # fmt: skip
    return other


def _run(args: argparse.Namespace, concurrency: int) -> None:
    directory = Path(tempfile.mkdtemp(prefix="ladder-bench-"))
    url = f"sqlite:///{directory / 'arena.db'}"
    broker = f"filesystem://{directory / 'broker'}"
    upgrade(url)
    store = connect(url)
    load_before = os.getloadavg()
    env = {"ARENA_DATABASE_URL": url, "ARENA_BROKER_URL": broker, "ARENA_SWEEP_SECONDS": "2"}
    samples: list[tuple[float, int, int, bool]] = []  # (seconds, in flight, bound, other)
    waits: dict[str, _Waits] = {}
    with _worker(directory, env, concurrency):
        opens = datetime.now(UTC)  # once the worker is ready (a minute, on a loaded machine)
        deadline = opens + timedelta(minutes=args.minutes)
        cid, kinds = _competition(store, opens, deadline)
        with store.read() as session:
            ladder = session.get_one(Competition, cid).ladder_id
        window = (deadline - opens).total_seconds()
        sent_at = window / 5
        arrivals = [sent_at + (k + 0.5) * window * 0.6 / max(1, args.newcomers)
                    for k in range(args.newcomers)]  # fmt: skip
        while datetime.now(UTC) < deadline:
            elapsed = (datetime.now(UTC) - opens).total_seconds()
            if not waits and not args.no_other and elapsed > sent_at:
                other = _other_tournament(store, args.demo)
                configure(broker)
                dispatch_matches(store, other)
                waits["a tournament"] = _Waits(other, elapsed)
                waits["a placement"] = _Waits(_placement(store, broker), elapsed)
            while arrivals and elapsed > arrivals[0]:
                _newcomer(store, cid, args.newcomers - len(arrivals))
                arrivals.pop(0)
            waiting = False
            for wait in waits.values():
                pending, running = _counts(store, wait.tournament_id)
                wait.sample(elapsed, pending, running)
                waiting = waiting or bool(pending)
            samples.append(
                (elapsed, _in_flight(store, ladder), ladder_in_flight_bound(store, cid), waiting)
            )
            time.sleep(0.25)
        games = _games(store, ladder, deadline)
        rated = _first_rated(store, cid, opens)
        started = time.monotonic()
        final_games = 0
        table: list[dict[str, Any]] = []
        while not args.no_final and time.monotonic() - started < 600:
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
        final_seconds = time.monotonic() - started
    load_after = os.getloadavg()
    print(
        f"ladder window {window:.0f} s, {concurrency} worker processes, 8 entrants "
        f"+ {args.newcomers} newcomers{', the demo' if args.demo else ''}; load average "
        f"{load_before[0]:.1f} at the start, {load_after[0]:.1f} at the end"
    )
    rates = {}
    for version, label in sorted(kinds.items(), key=lambda kv: kv[1]):
        rates[label] = games.get(version, 0) / window * 3600
        print(f"  {label:10s} {games.get(version, 0):5d} games  {rates[label]:7.0f} games/hour")
    low, high = min(rates.values()), max(rates.values())
    print(f"spread max/min: {high / low:.2f}" if low else "spread: an entrant never played")
    alone = [s for s in samples if not s[3]]
    busy = [s for s in samples if s[3]]
    for what, part in (("no other work", alone), ("other work waiting", busy)):
        if part:
            over = sum(1 for _, flight, bound, _ in part if flight > bound)
            print(
                f"{what}: {len(part)} samples, in flight max {max(s[1] for s in part)}, "
                f"mean {sum(s[1] for s in part) / len(part):.2f}, bound {min(s[2] for s in part)}"
                f"-{max(s[2] for s in part)}, samples above the bound {over}"
            )
    for what, wait in waits.items():
        print(wait.line(what))
    done = [r for r in rated if r is not None]
    shown = ", ".join("not yet" if r is None else f"{r:.0f}" for r in rated)
    print(f"accepted to first rated (s; the 8 at the opening, then the newcomers): {shown}")
    if done:
        print(
            f"  p50 {_percentile(done, 0.5):.1f} s, p95 {_percentile(done, 0.95):.1f} s, "
            f"{len(rated) - len(done)} not rated by the deadline"
        )
    if not args.no_final:
        print(f"final: {final_games} games, published {final_seconds:.0f} s after the deadline")
    for entry in table:
        tie = " (tie)" if entry.get("tie") else ""
        print(f"  {entry['place']}. {entry['name']}{tie}  {entry['rating']:.0f}")
    store.close()


if __name__ == "__main__":
    main()
