"""The service's operations on stored tournaments: create one from stored bots, play a match
for a worker under its lease, and the workers' heartbeats (docs/workers.md).

The Celery tasks (``workers/tasks.py``) and the CLI call these; neither holds any match state
of its own. A task is a nudge ("play match 42"): :func:`run_match` claims the match in the
database with a lease, keeps the lease alive from a heartbeat thread while the games are
played, and stores the result once (:mod:`arena.store.queue`). Whatever the broker does --
deliver a task twice, lose it with a killed worker or a restarted Redis -- a match is played
to completion and stored exactly once, because the sweep
(:func:`arena.service.dispatch.sweep_matches`) sends a task again for every match whose
lease ran out, and for every pending match when the broker's queue is empty.

Nothing here sends: sending is :mod:`arena.service.dispatch`'s.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from arena.compete.entrants import Entrant
from arena.compete.localrun import MatchStopped, play_one
from arena.compete.names import Reference, parse_reference
from arena.compete.sprt import STATISTICS, preload_scipy
from arena.compete.tournaments import Match as ScheduledMatch
from arena.compete.tournaments import in_legs, schedule
from arena.engine.rules import Rules
from arena.errors import ParseError
from arena.match.lineup import seat_source
from arena.match.referee import InfrastructureError, TimeControl
from arena.match.runtimes import find_runtime
from arena.match.sandbox import SLOT_BLOCK, Limits, SandboxUnavailable
from arena.match.warm import MAX_GAMES
from arena.service.config import Config
from arena.service.livefeed import match_watch
from arena.service.results import result_json, stored_entrants
from arena.store.compares import kept_status
from arena.store.db import TRANSIENT_DATABASE_ERRORS, Store, as_utc
from arena.store.matches import (
    bot_sources,
    finished_rule_set,
    latest_tournament_names,
    match_status,
    record_worker_alive,
    record_worker_stopped,
    tournament_named,
    versions_named,
    worker_rows,
)
from arena.store.models import Tournament
from arena.store.queue import (
    ClaimedMatch,
    claim_match,
    complete_match,
    create_tournament,
    heartbeat,
    pair_of,
    release_match,
    void_match,
)

__all__ = [
    "BANK_MOVES",
    "Config",
    "MatchSettings",
    "MatchStopped",
    "WorkerState",
    "bot_files",
    "create_stored_tournament",
    "finished_rule_set",
    "keep_alive",
    "list_workers",
    "match_status",
    "play_next",
    "resolve_entrants",
    "run_match",
    "worker_heartbeat",
    "worker_id",
    "worker_stopped",
]

logger = logging.getLogger(__name__)


#: A stored tournament's time bank a game, in moves' worth of its move time (10 s at 1 s a
#: move, the protocol's default; 2 s at 200 ms): the grace scales with the limit it pays for.
BANK_MOVES = 10


@dataclass(frozen=True)
class MatchSettings:
    """How a tournament's matches are played (stored as ``tournaments.settings``)."""

    move_seconds: float = 1.0
    memory_mb: int = 512

    def time_control(self) -> TimeControl:
        """The time control its matches are played under: ``move_seconds`` of CPU a move,
        a bank of :data:`BANK_MOVES` moves a game, the protocol's wall-clock factor (what
        a competition's page states: :meth:`TimeControl.rule`)."""
        return TimeControl(
            move_seconds=self.move_seconds, bank_seconds=BANK_MOVES * self.move_seconds
        )

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | None) -> MatchSettings:
        """Settings from the stored JSON (defaults for missing keys)."""
        data = data or {}
        return cls(
            move_seconds=float(data.get("move_seconds", cls.move_seconds)),
            memory_mb=int(data.get("memory_mb", cls.memory_mb)),
        )


def worker_id() -> str:
    """This process's name in leases: ``host:pid``."""
    return f"{socket.gethostname()}:{os.getpid()}"


# --- creating tournaments -----------------------------------------------------------------


def resolve_entrants(store: Store, specs: Sequence[str | Reference]) -> list[Entrant]:
    """The stored entrants that references name, in their order, each under its label; the
    bot versions of all of them are looked up in one query.

    A reference is ``[LABEL=][OWNER/]NAME[@VERSION]`` (as a person types it, or already
    parsed: :func:`arena.compete.names.parse_reference`): the bot called NAME (of OWNER,
    needed only when several owners have a bot of that name), its VERSION or else its
    latest one. The label defaults to NAME, or ``NAME-vN`` when a version is given.

    Raises:
        LookupError: a bot or version is not stored, or NAME is ambiguous (the message
            says which owners have it).
        ValueError: a malformed spec, or two entrants with the same label.
    """
    references: list[tuple[str, Reference]] = []
    for spec in specs:
        try:
            ref = spec if isinstance(spec, Reference) else parse_reference(spec)
        except ParseError as exc:
            raise ValueError(str(exc)) from None
        references.append((spec if isinstance(spec, str) else _reference_text(ref), ref))
    rows = versions_named(store, {ref.name for _, ref in references})
    entrants: list[Entrant] = []
    labels: set[str] = set()
    for text, ref in references:
        version_id = _version_of(text, ref, rows)
        if ref.label in labels:
            raise ValueError(f"two entrants are labelled {ref.label!r}: give one LABEL=...")
        labels.add(ref.label)
        entrants.append(Entrant.stored(ref.label, version_id))
    return entrants


def _reference_text(ref: Reference) -> str:
    """A parsed reference as a person would write it, for messages."""
    owner = "" if ref.owner is None else f"{ref.owner}/"
    version = "" if ref.version is None else f"@{ref.version}"
    return f"{ref.label}={owner}{ref.name}{version}"


def _version_of(text: str, ref: Reference, rows: Sequence[tuple[str, str, int, int]]) -> int:
    """The id of the stored version ``ref`` names, among ``rows`` (``versions_named``'s,
    the highest version first).

    Raises:
        LookupError: none, or several owners' bots (the message says which).
    """
    owner, name, version = ref.owner, ref.name, ref.version
    found = [
        (who, version_id)
        for who, bot, number, version_id in rows
        if bot == name and owner in (None, who) and version in (None, number)
    ]
    if not found:
        what = f"version {version} of " if version is not None else ""
        raise LookupError(
            f"{text!r}: no {what}bot {name!r}"
            + (f" of {owner!r}" if owner is not None else "")
            + " is stored (add it with: arena bots add FILE --name NAME --owner OWNER)"
        )
    owners = sorted({who for who, _ in found})
    if len(owners) > 1:
        raise LookupError(
            f"{text!r}: several owners have a bot called {name!r} "
            f"({', '.join(owners)}): write OWNER/{name}"
        )
    return found[0][1]


def create_stored_tournament(
    store: Store,
    *,
    name: str,
    rules: Rules,
    format: str,
    entrants: Sequence[Entrant | Reference | str],
    pool: Sequence[Entrant | Reference | str] = (),
    players: int = 2,
    teams: bool = False,
    games_per_match: int = 10,
    seed: int,
    settings: MatchSettings | None = None,
    extra_settings: Mapping[str, Any] | None = None,
    matches: Sequence[ScheduledMatch] | None = None,
    owner_id: int | None = None,
    upload_id: int | None = None,
    match_games: int | None = None,
) -> tuple[int, list[ScheduledMatch]]:
    """Schedule a tournament between stored bots and store it with its pending matches;
    return its id and its schedule. ``entrants`` and ``pool`` are stored entrants
    (:meth:`Entrant.stored`), or references (as a person typed them, or parsed), which are
    resolved here (:func:`resolve_entrants`: in one query for all of them); the rest is
    :func:`arena.compete.tournaments.schedule`'s, unless ``matches`` gives the schedule
    (its seats are among the entrants). ``extra_settings`` are stored with ``settings``
    (a compare's test, for one). ``upload_id``: the upload whose placement it is.
    ``match_games``: a match of more games is played in legs of at most that many
    (:func:`arena.compete.tournaments.in_legs`).

    Raises:
        LookupError: an entrant is not stored.
        ValueError: as :func:`resolve_entrants` and ``schedule``; an entrant is not a
            stored version; a tournament called ``name`` exists already.
        RulesError: ``players`` or ``teams`` not allowed by ``rules``.
    """
    if not name.strip():
        raise ValueError("a tournament needs a name")
    everyone = _stored([*entrants, *pool], store)
    if matches is None:
        matches = schedule(
            format,
            everyone[: len(entrants)],
            rules=rules,
            players=4 if teams else players,
            teams=teams,
            games_per_match=games_per_match,
            seed=seed,
            pool=everyone[len(entrants) :],
        )
    if match_games is not None:
        matches = in_legs(matches, match_games)
    tournament_id = create_tournament(
        store,
        name=name,
        rules=rules,
        format=format,
        players=4 if teams else players,
        teams=teams,
        games_per_match=games_per_match,
        seed=seed,
        entrants=everyone,
        matches=matches,
        settings={**asdict(settings or MatchSettings()), **(extra_settings or {})},
        owner_id=owner_id,
        upload_id=upload_id,
    )
    return tournament_id, list(matches)


def _stored(given: Sequence[Entrant | Reference | str], store: Store) -> list[Entrant]:
    """``given`` as stored entrants, references resolved in one query (in order).

    Raises:
        LookupError, ValueError: as :func:`resolve_entrants`; an entrant is no stored
            version, or two share a label.
    """
    references = [item for item in given if not isinstance(item, Entrant)]
    resolved = iter(resolve_entrants(store, references) if references else ())
    entrants = [item if isinstance(item, Entrant) else next(resolved) for item in given]
    for entrant in entrants:
        if entrant.version is None:
            raise ValueError(f"a stored tournament's entrants are stored bots, not {entrant}")
    labels = [entrant.label for entrant in entrants]
    if len(set(labels)) != len(labels):
        twice = sorted({label for label in labels if labels.count(label) > 1})
        raise ValueError(f"two entrants are labelled {twice[0]!r}: give one LABEL=...")
    return entrants


# --- playing a match ---------------------------------------------------------------------


def bot_files(store: Store, version_ids: Sequence[int], directory: Path) -> dict[int, Path]:
    """Each bot version's source as a file named by its hash and its runtime's stored suffix
    (``<sha256>.py``, ``.numpy.py``, ``.js``: :func:`arena.match.runtimes.runtime_of_file`
    reads the runtime back), written atomically: what a worker runs, for matches and
    branches alike. A file already there is used only if its bytes hash to its name (the
    directory is shared by every worker of the machine, and outlives them): any other is
    written again, so a version never runs another's code.

    Raises:
        InfrastructureError: the files cannot be written, or a version is not stored.
    """
    try:
        return _write_bot_files(store, version_ids, directory)
    except OSError as exc:
        raise InfrastructureError(f"cannot write the bots' files to {directory}: {exc}") from exc


def _write_bot_files(store: Store, version_ids: Sequence[int], directory: Path) -> dict[int, Path]:
    directory.mkdir(parents=True, exist_ok=True)
    paths: dict[int, Path] = {}
    for version_id, digest, source, runtime in bot_sources(store, version_ids):
        path = directory / f"{digest}{find_runtime(runtime).stored_suffix}"
        if not path.exists() or seat_source(str(path)) != digest:
            fd, partial = tempfile.mkstemp(dir=directory, suffix=".part")
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(source)
            os.replace(partial, path)
        paths[version_id] = path
    missing = set(version_ids) - set(paths)
    if missing:
        raise InfrastructureError(f"bot versions {sorted(missing)} are not in the database")
    return paths


@contextlib.contextmanager
def keep_alive(renew: Callable[[], bool | None], seconds: float, name: str) -> Iterator[None]:
    """Call ``renew()`` every ``seconds`` in a thread while the block runs, until it returns
    False (a lease lost) or the block ends; a database hiccup (an exception) is tried again
    at the next beat. What renews a match's, a check's or a branch's lease."""
    stop = threading.Event()

    def beat() -> None:
        while not stop.wait(seconds):
            try:
                if renew() is False:
                    return
            except Exception:  # the database is away: try again next beat
                continue

    thread = threading.Thread(target=beat, name=name, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


@contextlib.contextmanager
def _heartbeating(
    store: Store, claimed: ClaimedMatch, worker: str, config: Config
) -> Iterator[threading.Event]:
    """Renew the lease every ``config.heartbeat_seconds`` while the block runs; once the
    lease is lost, stop renewing (another worker may be playing the match: the first result
    stored wins), and if the match was voided (its tournament cancelled) set the event the
    block gets, which the match checks as each game ends (:func:`play_one`'s ``stop``)."""
    stop = threading.Event()

    def renew() -> bool:
        if heartbeat(store, claimed.match_id, worker, lease_seconds=config.lease_seconds):
            return True
        if match_status(store, claimed.match_id) == "void":
            stop.set()
        return False

    with keep_alive(renew, config.heartbeat_seconds, f"heartbeat-{claimed.match_id}"):
        yield stop


#: How often a worker playing a compare's match looks whether the compare's test has
#: decided (or was refused) meanwhile (another process's stop check after another match):
#: once it has, the match stops at its bots' next decision and is void, and the process is free (a
#: compare's next batches are sent ahead, so one process or more is usually playing one
#: when the test decides).
DECIDED_POLL_SECONDS = 0.25


@contextlib.contextmanager
def _until_decided(
    store: Store, claimed: ClaimedMatch, stop: threading.Event, decided: threading.Event
) -> Iterator[None]:
    """While the block runs, if the claimed match is a compare's, look every
    :data:`DECIDED_POLL_SECONDS` whether the compare's test has decided (its kept reading:
    :func:`arena.service.compares.stop_if_decided`); once it has, set ``decided`` and
    ``stop`` (the match stops at its next decision: :class:`MatchStopped`)."""
    if not isinstance((claimed.settings or {}).get("sprt"), dict):
        yield
        return

    def look() -> bool:
        if kept_status(store, claimed.tournament_id) in (None, "continue"):
            return True
        decided.set()
        stop.set()
        return False

    with keep_alive(look, DECIDED_POLL_SECONDS, f"decided-{claimed.match_id}"):
        yield


def run_match(
    store: Store,
    match_id: int,
    *,
    worker: str | None = None,
    config: Config | None = None,
    first_slot: int | None = None,
    sandboxed: bool = True,
) -> str:
    """Claim match ``match_id``, play it, store its result; return what happened:

    - ``"done"``: played and stored by this call;
    - ``"finished"``: already done or void (a duplicate task: nothing to do);
    - ``"held"``: another worker holds a live lease on it (it will finish it, or its lease
      runs out and a sweep sends the match again);
    - ``"stale"``: played, but another worker stored it first (nothing stored twice);
    - ``"void"``: the harness failed on the last allowed attempt: the match is void (or
      ``"stale"`` if this worker had lost its lease meanwhile: the match is left to the
      worker that holds it);
    - ``"stopped"``: its tournament was cancelled while it played: stopped, nothing stored;
    - ``"missing"``: no such match.

    Bots run in the sandbox, in slots ``first_slot + seat`` (by default this process's
    block of the machine-wide registry).

    Raises:
        InfrastructureError: the harness failed (sandbox, bot sources missing): the match
            is pending again for another attempt; retry the task later. Any other exception
            (a time limit, a bug) also puts the match back, and is raised as it is.
    """
    config = config or Config()
    worker = worker or worker_id()
    claimed = claim_match(store, worker, lease_seconds=config.lease_seconds, match_id=match_id)
    if claimed is None:
        status = match_status(store, match_id)
        return {None: "missing", "running": "held", "pending": "held"}.get(status, "finished")
    return _run_claimed(store, claimed, worker, config, first_slot, sandboxed)


def play_next(
    store: Store,
    lane: str,
    *,
    worker: str | None = None,
    config: Config | None = None,
    first_slot: int | None = None,
    sandboxed: bool = True,
) -> tuple[int | None, str]:
    """Claim the next match of ``lane`` (the oldest-sent tournament's first, or with warm
    bots one of the pairs this process keeps, else the first of the pair with the most
    matches waiting: :func:`arena.store.queue.claim_match`'s ``prefer`` and ``gather``,
    :class:`_KeptPairs`), play it and store it; return its id and what
    happened (as :func:`run_match`), or ``(None, "idle")`` when nothing in the lane is
    claimable. What a worker does with a task: the task is a token, the database decides
    which match it plays.

    Raises:
        InfrastructureError, ValueError (no such lane): as :func:`run_match`.
    """
    config = config or Config()
    worker = worker or worker_id()
    prefer = _KEPT.prefer() if config.warm_bots else ()
    gather = config.warm_bots and _KEPT.asked
    claimed = claim_match(
        store, worker, lease_seconds=config.lease_seconds, lane=lane, prefer=prefer,
        gather=gather,
    )  # fmt: skip
    if claimed is None:
        return None, "idle"
    outcome = _run_claimed(store, claimed, worker, config, first_slot, sandboxed)
    if config.warm_bots:
        _KEPT.played(claimed.tournament_id, claimed.seats, outcome == "done")
    return claimed.match_id, outcome


#: Claims in a row a process makes preferring the pairs it keeps warm (or gathering a
#: pair's matches) before one takes its tournament's first waiting match again (so none
#: waits for more than this many claims of each process).
WARM_STREAK = 7


class _KeptPairs:
    """The pairs whose bots this process keeps warm, as a claim prefers them
    (:func:`arena.store.queue.claim_match`'s ``prefer`` and ``gather``): the latest played
    (tournament, versions) whose seats fit in the process's slot block (:data:`SLOT_BLOCK`,
    as the warm pool keeps them), and how many claims in a row preferred (at most
    :data:`WARM_STREAK`, then one takes the tournament's first waiting match). A forked
    process starts with none (the warm pool is its own)."""

    def __init__(self) -> None:
        self.pid = os.getpid()
        self.pairs: dict[tuple[int, tuple[int, ...]], None] = {}
        self.streak = 0
        #: Whether the next claim prefers (kept pairs, else gathers a pair's matches).
        self.asked = False

    def prefer(self) -> tuple[tuple[int, tuple[int, ...]], ...]:
        """The pairs the next claim prefers (none after a streak of :data:`WARM_STREAK`
        claims that preferred: then :attr:`asked` is False too)."""
        if self.pid != os.getpid():
            self.pid, self.pairs, self.streak = os.getpid(), {}, 0
        self.asked = self.streak < WARM_STREAK
        return tuple(self.pairs) if self.asked else ()

    def played(self, tournament_id: int, seats: Sequence[int], kept: bool) -> None:
        """Book a claimed match: its pair is kept if it was played to its end."""
        pair = (tournament_id, pair_of(seats))
        self.streak = self.streak + 1 if self.asked else 0
        self.pairs.pop(pair, None)
        if kept:
            self.pairs[pair] = None  # the latest last
            while sum(len(versions) for _, versions in self.pairs) > SLOT_BLOCK:
                del self.pairs[next(iter(self.pairs))]


_KEPT = _KeptPairs()


def _run_claimed(
    store: Store,
    claimed: ClaimedMatch,
    worker: str,
    config: Config,
    first_slot: int | None,
    sandboxed: bool,
) -> str:
    match_id = claimed.match_id
    decided = threading.Event()
    try:
        with (
            _heartbeating(store, claimed, worker, config) as stop,
            _until_decided(store, claimed, stop, decided),
        ):
            result, records = _play(
                store, claimed, worker, first_slot, sandboxed, config.bot_cache, stop,
                warm=config.warm_bots,
            )  # fmt: skip
    except MatchStopped:
        if decided.is_set():  # its games could not change the verdict: void, not played
            reason = "its compare's test ended while it was played"
            return "void" if void_match(store, match_id, worker, reason, held=True) else "stale"
        return "stopped"
    except Exception as exc:
        # The harness failed (bot faults are verdicts, never exceptions): another attempt
        # may succeed, up to max_attempts; then the match is void, so a bug cannot make a
        # match bounce between workers for ever.
        reason = f"{type(exc).__name__}: {exc}"
        if claimed.attempts >= config.max_attempts:
            # Only while this worker holds the lease: another may be playing it by now.
            voided = void_match(
                store, match_id, worker, f"{reason} ({claimed.attempts} attempts)", held=True
            )
            return "void" if voided else "stale"
        release_match(store, match_id, worker)
        if isinstance(exc, InfrastructureError | SandboxUnavailable):
            raise InfrastructureError(f"match {match_id}: {reason}") from exc
        raise
    except BaseException:
        # Interrupted (a shutdown): another attempt will finish it.
        release_match(store, match_id, worker)
        raise
    return "done" if _store_played(store, match_id, worker, records, result) else "stale"


#: Pauses before storing a played match again after a transient database error (a
#: deadlock's victim, a broken connection): its games are in hand, so they are stored again
#: rather than played again (the task's retry would claim and replay the match).
STORE_PAUSES = (0.2, 1.0, 3.0)


def _store_played(
    store: Store,
    match_id: int,
    worker: str,
    records: Sequence[Mapping[str, Any]],
    result: Mapping[str, Any],
) -> bool:
    """Store the played match (:func:`complete_match`), again after each of
    :data:`STORE_PAUSES` while the database fails transiently; then the error is raised
    (the task retries: the match is played again). Return whether this result was kept."""
    for pause in STORE_PAUSES:
        try:
            return complete_match(store, match_id, worker, records=records, result=result)
        except TRANSIENT_DATABASE_ERRORS as exc:
            logger.warning("match %s: storing failed (%s); again in %s s", match_id, exc, pause)
            time.sleep(pause)
    return complete_match(store, match_id, worker, records=records, result=result)


def _play(
    store: Store,
    claimed: ClaimedMatch,
    worker: str,
    first_slot: int | None,
    sandboxed: bool,
    bot_cache: Path,
    stop: threading.Event | None = None,
    *,
    warm: bool = True,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Play the claimed match (until ``stop`` is set: :class:`MatchStopped`); return its
    ``result`` column and its game records. With ``warm``, its bots are kept running in
    this process for its next match with the same key (:mod:`arena.match.warm`), whose
    scope is the match's tournament. Its game in play is published for spectators on the
    deployment's live feed, while someone watches (:mod:`arena.service.livefeed`)."""
    files = bot_files(store, claimed.seats, bot_cache)
    settings = MatchSettings.from_json(claimed.settings)
    test = (claimed.settings or {}).get("sprt")
    statistic = test.get("statistic", "game") if isinstance(test, dict) else None
    if statistic in STATISTICS:  # a compare's: its stop check reads the test after it
        preload_scipy(statistic)  # (loaded while the match plays, once a process)
    match = ScheduledMatch(
        id=claimed.key,
        seats=stored_entrants(claimed.labels, claimed.seats),
        games=claimed.games,
        seed=claimed.seed,
        deal_group=None if claimed.deal_group is None else str(claimed.deal_group),
        rotation=claimed.rotation,
        teams=claimed.teams,
    )
    played = play_one(
        match,
        claimed.rules(),
        sandboxed=sandboxed,
        time_control=settings.time_control(),
        limits=Limits(memory_mb=settings.memory_mb),
        first_slot=first_slot,
        stop=stop,
        files=files,
        keep_games=MAX_GAMES if warm else 0,
        scope=f"tournament-{claimed.tournament_id}",
        watch=match_watch(claimed.match_id),
    )
    if played.void is not None:
        raise InfrastructureError(played.void)
    return result_json(played, worker), [game.record for game in played.games]


# --- workers' heartbeats ---------------------------------------------------------------


def worker_heartbeat(
    store: Store,
    name: str,
    *,
    host: str,
    pid: int,
    concurrency: int,
    now: datetime | None = None,
    started: datetime | None = None,
) -> None:
    """Record that worker ``name`` is alive (``online``, ``last_seen`` now), registering it
    (``started``: when this life of it started, by default now) if it is new, was stopped,
    or died under that name and started again since (a container restarted after a crash
    keeps its node name: ``arena workers`` then shows the new start, not the first)."""
    now = datetime.now(UTC) if now is None else now
    record_worker_alive(
        store, name, host=host, pid=pid, concurrency=concurrency, now=now, started=started
    )


def worker_stopped(store: Store, name: str, now: datetime | None = None) -> None:
    """Record a clean shutdown of worker ``name``."""
    now = datetime.now(UTC) if now is None else now
    record_worker_stopped(store, name, now)


@dataclass(frozen=True)
class WorkerState:
    """A worker as status pages show it: ``alive`` if online and seen within the lease."""

    name: str
    host: str
    pid: int
    concurrency: int
    status: str
    started: datetime
    last_seen: datetime
    alive: bool


def list_workers(
    store: Store, *, config: Config | None = None, now: datetime | None = None
) -> list[WorkerState]:
    """Every worker ever recorded, the most recently seen first. A worker is alive if it
    is online and was seen within the lease (a worker gone longer has its matches taken)."""
    config = config or Config()
    now = datetime.now(UTC) if now is None else now
    states = []
    for row in worker_rows(store):
        seen, started = as_utc(row.last_seen), as_utc(row.started)
        alive = row.status == "online" and (now - seen).total_seconds() < config.lease_seconds
        states.append(
            WorkerState(
                row.name, row.host, row.pid, row.concurrency, row.status, started, seen, alive
            )
        )
    return states


def tournament_by_name(store: Store, name: str) -> Tournament:
    """The tournament called ``name``.

    Raises:
        LookupError: none is (the message lists a few that are).
    """
    found = tournament_named(store, name)
    if found is not None:
        return found
    names = latest_tournament_names(store, 5)
    known = f" (latest: {', '.join(names)})" if names else " (none is stored)"
    raise LookupError(f"no tournament called {name!r}{known}")
