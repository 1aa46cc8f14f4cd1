"""The local tournament runner: a schedule played through a process pool, no broker, no database.

:func:`run_local` plays the matches of :func:`arena.compete.tournaments.schedule` in
``workers`` processes (one match at a time each) and yields a picklable
:class:`MatchResult` per match as it finishes. :func:`play_one` plays a single
match in this process (what each worker runs; a Celery task can call it too).
:class:`Standings` adds results up for the CLI to render; it prints nothing.

Bot files run sandboxed unless asked otherwise; each worker process claims its own
block of sandbox slots from the machine-wide registry
(:func:`arena.match.sandbox.process_slots`), so concurrent matches -- of this run or of
any other on the machine -- never share a slot (its uid, cgroup and process limit). A
failure of the harness (:class:`InfrastructureError`) makes the match void: it is raised
with the match id, or, with ``keep_going=True``, reported as a void result; void matches
are never counted.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import dataclasses
import itertools
import multiprocessing
import multiprocessing.synchronize
import multiprocessing.util
import os
import threading
import time
from collections.abc import Generator, Iterable, Iterator, Mapping, Sequence
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

from arena.compete.entrants import Entrant, check_entrants
from arena.compete.margins import game_lucks
from arena.compete.tournaments import Match
from arena.engine.events import Outcome
from arena.engine.game import Game
from arena.engine.records import game_record
from arena.engine.rules import Rules
from arena.match.lineup import check_specs, make_players, release_kept_players, seat_source
from arena.match.play import game_seeds
from arena.match.referee import InfrastructureError, TimeControl, Verdict, Watch, play_match
from arena.match.sandbox import Limits, SandboxUnavailable, check_sandbox
from arena.match.verdicts import DecisionTime
from arena.match.warm import MatchSetup

#: What stops a match (:func:`play_one`'s ``stop``): a thread's event, or a pool's.
Stop: TypeAlias = threading.Event | multiprocessing.synchronize.Event

if TYPE_CHECKING:  # (the rating fit's numpy loads when ratings are fitted)
    from arena.compete.ratings import GameResult as RatedGame
    from arena.compete.ratings import Rating

__all__ = [
    "EntrantStats",
    "GameResult",
    "LocalPool",
    "MatchResult",
    "MatchStopped",
    "Standings",
    "by_deal",
    "chain_with_retries",
    "finishing_places",
    "play_chain",
    "play_one",
    "play_with_retries",
    "process_pool",
    "rated_games",
    "run_local",
    "tournament_ratings",
]


@dataclass(frozen=True, slots=True)
class GameResult:
    """One game of a match, as the tournament counts it.

    Attributes:
        index: the game's number in its match (0-based).
        seed: the game's seed.
        places: each seat's finishing place, 0 = first (partners share their team's).
        points: each seat's final score (its team's in team play).
        winners: the winning seats.
        termination: how the game ended (``target``, or a bot fault).
        verdict: the forfeit's verdict (``Verdict.to_dict()``), or None.
        record: the game record (``arena.engine.records.game_record``; empty where the
            match was played with ``records=False``).
        luck: each seat's luck of the draw (:func:`arena.compete.margins.game_lucks`: its
            record's :func:`~arena.compete.margins.kept_lucks`),
            for a match of duplicate deals (``deal_group``), computed where the game was
            played; it is stored with the match's result. Empty otherwise.
    """

    index: int
    seed: int
    places: tuple[int, ...]
    points: tuple[int, ...]
    winners: tuple[int, ...]
    termination: str
    verdict: dict[str, Any] | None
    record: dict[str, Any]
    luck: tuple[tuple[float, ...], ...] = ()


@dataclass(frozen=True, slots=True)
class MatchResult:
    """A match's games, in game order, or why the match is void.

    Attributes:
        match: the scheduled match.
        games: its games (empty when void).
        void: why the harness failed (the match's games are not counted), or None.
        seconds: wall-clock time the match took (not compared).
        worker: the id of the process that played it (not compared).
        sources: what each seat ran, as :func:`arena.match.lineup.seat_source` read it
            when the match began (a bot file's SHA-256, ``strategy:NAME``); empty when not
            known (a match stored before sources were kept). Not compared.
    """

    match: Match
    games: tuple[GameResult, ...]
    void: str | None = None
    seconds: float = field(default=0.0, compare=False)
    worker: int = field(default=0, compare=False)
    sources: tuple[str, ...] = field(default=(), compare=False)

    @property
    def id(self) -> str:
        """The match id."""
        return self.match.id


def finishing_places(
    outcome: Outcome, sides: Sequence[int], forfeit: int | None
) -> tuple[int, ...]:
    """Each seat's place (0 = first): winners first, then by final score, the forfeiter last.

    Sides with equal scores share a place (0, 1, 1, 3). In a forfeited game the
    offender's side is last and the other sides are ranked by score. Partners
    share their side's place.
    """
    count = len(outcome.scores)
    scores = outcome.scores
    loser = None if forfeit is None else sides[forfeit]
    winners = set() if loser is not None else {sides[s] for s in outcome.winners}
    place: dict[int, int] = {}
    for side in range(count):
        if side == loser:
            place[side] = count - 1
        elif side in winners:
            place[side] = 0
        else:
            ahead = [o for o in range(count) if o not in winners and o != loser]
            place[side] = len(winners) + sum(scores[o] > scores[side] for o in ahead)
    return tuple(place[side] for side in sides)


# --- playing ---------------------------------------------------------------------------


class MatchStopped(BaseException):
    """Raised by :func:`play_one` when its ``stop`` event is set (the match was voided
    meanwhile: its tournament was cancelled): the bots are closed and nothing is returned.
    A BaseException, so that no handler of bot or harness faults takes it for one."""


def play_one(
    match: Match,
    rules: Rules,
    *,
    sandboxed: bool = True,
    time_control: TimeControl | None = None,
    limits: Limits | None = None,
    first_slot: int | None = None,
    keep_games: int = 0,
    stop: Stop | None = None,
    files: Mapping[int, Path] | None = None,
    scope: str = "",
    luck: bool = True,
    records: bool = True,
    watch: Watch | None = None,
) -> MatchResult:
    """Play one match in this process (bots in slots ``first_slot + seat``; by default in
    this process's block of the registry). ``keep_games`` > 0 keeps the bots' processes
    running for this process's next match between them with the same rules, seats, clock
    and ``scope`` (a tournament's: :mod:`arena.match.warm`'s rule;
    :func:`arena.match.lineup.make_players`). Each seat's entrant plays under its label;
    a stored version's entrant runs its file in ``files`` (by version id: what a worker
    wrote, :func:`arena.service.matches.bot_files`). ``luck``: a duplicate-deal match's
    games carry their luck of the draw (``GameResult.luck``, what the margin test reads:
    rollouts that cost milliseconds a game); False leaves it out (the game-level test).
    ``records=False``: each game's ``record`` is left empty, none is made (a compare reads
    the result's own fields: :func:`arena.compete.compares.new_game`; the luck is read
    from the game itself), so that a pool's results are a tenth of the bytes to send.

    An :class:`InfrastructureError` makes the result void (with the reason),
    whichever games had finished. ``stop``: checked before each step of the games in
    flight (one decision in each) and as each game ends; once set, the bots are closed and
    :class:`MatchStopped` raised (a cooperative stop: the referee is never interrupted
    within one of its steps). ``watch``: the referee's watcher (a live feed:
    :func:`arena.match.referee.play_match`).

    Raises:
        MatchStopped: ``stop`` was set.
        ParseError: a seat's bot file is not there.
        LookupError: a seat's stored version has no file in ``files``.
        SandboxUnavailable: bot files, ``sandboxed``, and no sandbox here.
        RulesError: the player count or teams are not allowed.
    """
    return play_chain(
        [match],
        rules,
        sandboxed=sandboxed,
        time_control=time_control,
        limits=limits,
        first_slot=first_slot,
        keep_games=keep_games,
        stop=stop,
        files=files,
        scope=scope,
        luck=luck,
        records=records,
        watch=watch,
    )[0]


def play_chain(
    matches: Sequence[Match],
    rules: Rules,
    *,
    sandboxed: bool = True,
    time_control: TimeControl | None = None,
    limits: Limits | None = None,
    first_slot: int | None = None,
    keep_games: int = 0,
    stop: Stop | None = None,
    files: Mapping[int, Path] | None = None,
    scope: str = "",
    luck: bool = True,
    records: bool = True,
    watch: Watch | None = None,
) -> list[MatchResult]:
    """:func:`play_one` for several matches with the same seats and teams, played as one:
    the same bots play every match's games (each seeded as in its own match, so each game
    is the one its match would play), more of them in flight at once. A result per match,
    in order; an :class:`InfrastructureError` makes every one of them void. ``watch`` is told
    the games' indices in the chain (a match's own with one match).

    Raises:
        ValueError: no matches, or matches whose seats or teams differ.
        MatchStopped, ParseError, LookupError, SandboxUnavailable, RulesError: as
            :func:`play_one`.
    """
    if not matches or any(
        (m.seats, m.teams) != (matches[0].seats, matches[0].teams) for m in matches
    ):
        raise ValueError("a chain of matches needs one or more matches with the same seats")
    started = time.monotonic()
    first = matches[0]
    specs = [entrant.seat(files) for entrant in first.seats]
    names = [entrant.label for entrant in first.seats]
    check_specs(specs)  # (a missing file is named before it is read)
    sources = tuple(seat_source(spec) for spec in specs)  # what a compare's verdict checks
    places = [(number, index) for number, m in enumerate(matches) for index in range(m.games)]
    seeds = [seed for m in matches for seed in game_seeds(m.seed, m.games)]
    players = make_players(
        specs,
        sandboxed=sandboxed,
        limits=limits,
        first_slot=first_slot,
        salts=names,
        keep_games=keep_games,
        setup=MatchSetup(rules.version, len(specs), first.teams, time_control, scope),
    )
    games: list[list[GameResult]] = [[] for _ in matches]
    try:
        outcomes = play_match(
            rules,
            players,
            games=len(seeds),
            seed=first.seed,
            teams=first.teams,
            time_control=time_control,
            seeds=seeds if len(matches) > 1 else None,
            stop=None if stop is None else stop.is_set,  # (asked between two moves)
            watch=watch,
        )
        # closing(): a stop closes the referee's generator at once, which closes the bots
        with contextlib.closing(outcomes):
            for outcome in outcomes:
                if stop is not None and stop.is_set():
                    raise MatchStopped(f"match {first.id} stopped")
                number, index = places[outcome.index]
                # (without its record, a game's decision times are read by nobody)
                times = outcome.times if records else None
                game = _game_result(index, outcome.game, names, outcome.verdict, times, records)
                if luck and matches[number].deal_group is not None:  # the margin test's
                    game = dataclasses.replace(game, luck=game_lucks(outcome.game))
                games[number].append(game)
        if stop is not None and sum(map(len, games)) < len(seeds):  # stopped between moves
            raise MatchStopped(f"match {first.id} stopped")
    except InfrastructureError as exc:
        seconds = (time.monotonic() - started) / len(matches)
        return [MatchResult(m, (), str(exc), seconds, os.getpid(), sources) for m in matches]
    seconds = (time.monotonic() - started) / len(matches)  # (shared evenly)
    return [
        MatchResult(
            m, tuple(sorted(played, key=lambda g: g.index)), None, seconds, os.getpid(), sources
        )
        for m, played in zip(matches, games, strict=True)
    ]


def _game_result(
    index: int,
    game: Game,
    names: list[str],
    verdict: Verdict | None,
    times: list[DecisionTime | None] | None = None,
    record: bool = True,
) -> GameResult:
    """The game's result; ``record=False``: without its record (``{}``: none is made)."""
    outcome = game.outcome()
    assert outcome is not None
    sides = game.sides
    forfeit = None if verdict is None else verdict.seat
    as_dict = None if verdict is None else verdict.to_dict()
    return GameResult(
        index=index,
        seed=game.seed,
        places=finishing_places(outcome, sides, forfeit),
        points=tuple(outcome.scores[side] for side in sides),
        winners=outcome.winners,
        termination=outcome.termination.value,
        verdict=as_dict,
        record=game_record(game, names, verdict=as_dict, times=times) if record else {},
    )


def run_local(
    matches: Iterable[Match],
    rules: Rules,
    *,
    workers: int = 2,
    sandboxed: bool = True,
    time_control: TimeControl | None = None,
    limits: Limits | None = None,
    first_slot: int | None = None,
    keep_going: bool = False,
    pool: LocalPool | None = None,
    keep_games: int = 0,
    luck: bool = True,
    chain_games: int = 0,
    records: bool = True,
) -> Generator[MatchResult, None, None]:
    """Play ``matches`` in ``workers`` processes; yield each result as its match finishes.

    ``pool`` (from :func:`process_pool`) is used instead of a pool of its own, and left
    running: a caller that plays batch after batch (``arena compare``) pays the processes'
    start-up once. A caller that closes the results before the last (a decided test)
    stops the pool's matches in flight (:meth:`LocalPool.stop_matches`): shut it down
    then. With ``keep_games`` > 0 it also keeps the bots running from one match to the
    next (each bot process plays at most that many games); they stop with the pool's
    processes, or, with ``workers=1``, at
    :func:`arena.match.lineup.release_kept_players`. ``luck``, ``records``: as
    :func:`play_one`'s.
    ``chain_games`` > 0: matches with the same seats and teams are played together
    (:func:`play_chain`, in schedule order, chains of doubling size up to that many games):
    more games in flight, fewer round trips to the bots; a match's result then comes
    with its chain's.

    ``workers=1`` plays in this process, in schedule order. Results do not depend
    on ``workers`` (only their order does). Everything is checked before the
    first match starts.

    Raises:
        ValueError: ``workers`` below 1.
        ParseError: a seat's bot file is not there.
        LookupError: a seat is a stored version (the local runner has no stored bots).
        SandboxUnavailable: bot files, ``sandboxed``, and no sandbox here.
        RulesError: a match's player count or teams are not allowed.
        InfrastructureError: a match failed for the harness (the message names
            it); with ``keep_going`` it is yielded as void instead.
    """
    if workers < 1:
        raise ValueError(f"workers must be 1 or more, not {workers}")
    todo = list(matches)
    _check(todo, rules, sandboxed)
    options: dict[str, Any] = {
        "sandboxed": sandboxed,
        "time_control": time_control,
        "limits": limits,
        "keep_games": keep_games,
        "luck": luck,
        "records": records,
    }
    chains = _chains(todo, chain_games)
    if workers == 1:
        results: Iterator[MatchResult] = (
            result
            for chain in chains
            for result in chain_with_retries(chain, rules, first_slot=first_slot, **options)
        )
    else:
        results = _pooled(chains, rules, workers, options, pool)  # each claims its slots
    for result in results:
        if result.void is not None and not keep_going:
            raise InfrastructureError(f"match {result.id}: {result.void}")
        yield result


def _chains(matches: Sequence[Match], games: int) -> list[list[Match]]:
    """``matches`` in chains of the same seats and teams, each in schedule order, ordered by
    their first match: a key's first chain is its first match alone, and each next one may
    hold twice the games of the one before, up to ``games`` (an early result stays early, a
    long run gets long chains); one match a chain if ``games`` is 0."""
    if games <= 0:
        return [[match] for match in matches]
    chains: list[list[Match]] = []
    open_chains: dict[tuple[Any, ...], tuple[list[Match], int]] = {}
    for match in matches:
        key = (match.seats, match.teams)
        chain, limit = open_chains.get(key, ([], 0))
        if not chain or sum(m.games for m in chain) + match.games > limit:
            limit = min(games, 2 * sum(m.games for m in chain)) if chain else match.games
            chain = []
            chains.append(chain)
        chain.append(match)
        open_chains[key] = (chain, limit)
    return chains


def _check(matches: Sequence[Match], rules: Rules, sandboxed: bool) -> None:
    entrants = list({e: None for m in matches for e in m.seats})
    check_entrants(entrants)
    for players, teams in {(len(m.seats), m.teams) for m in matches}:
        rules.check_players(players, teams)
    if sandboxed and any(entrant.file is not None for entrant in entrants):
        missing = check_sandbox()
        if missing:
            raise SandboxUnavailable(
                "cannot run bot files in a sandbox here: " + "; ".join(missing)
            )


#: Times the local runner plays a match whose harness failed (a sandbox that would not
#: start) before it counts it void: one bad moment costs a match, never the tournament.
LOCAL_ATTEMPTS = 3
#: Seconds between those attempts.
RETRY_SECONDS = 0.5


def play_with_retries(match: Match, rules: Rules, **options: Any) -> MatchResult:
    """:func:`play_one`, played again (up to :data:`LOCAL_ATTEMPTS` times in all) while its
    result is void: a harness failure is usually a passing one (the machine's process
    table, a slow start); the last void result is returned with the attempts named."""
    result = play_one(match, rules, **options)
    for attempt in range(2, LOCAL_ATTEMPTS + 1):
        if result.void is None:
            return result
        time.sleep(RETRY_SECONDS)
        result = play_one(match, rules, **options)
        if result.void is not None and attempt == LOCAL_ATTEMPTS:
            reason = f"{result.void} (played {LOCAL_ATTEMPTS} times)"
            return dataclasses.replace(result, void=reason)
    return result


def chain_with_retries(matches: Sequence[Match], rules: Rules, **options: Any) -> list[MatchResult]:
    """:func:`play_chain`; where the chain was void, each of its matches is played again on
    its own by :func:`play_with_retries` (a lone match: played again as that does)."""
    if len(matches) == 1:
        return [play_with_retries(matches[0], rules, **options)]
    results = play_chain(matches, rules, **options)
    if all(result.void is None for result in results):
        return results
    time.sleep(RETRY_SECONDS)
    return [play_with_retries(match, rules, **options) for match in matches]


def _play_in_worker(
    matches: list[Match], rules: Rules, options: dict[str, Any]
) -> list[MatchResult]:
    # Each pool process seats its bots in its own block of the machine-wide registry.
    if _stop is not None and _stop.is_set():  # its run stopped before this chain began
        raise MatchStopped(f"match {matches[0].id} stopped")
    if options.get("keep_games") and os.getpid() not in _releases_at_exit:
        # Kept bots stop when the pool's process does (sandboxed ones would anyway:
        # --die-with-parent); multiprocessing runs these finalizers, not atexit's.
        multiprocessing.util.Finalize(None, release_kept_players, exitpriority=10)
        _releases_at_exit.add(os.getpid())
    return chain_with_retries(matches, rules, stop=_stop, **options)


#: The processes that release their kept bots when they exit.
_releases_at_exit: set[int] = set()

#: In a :class:`LocalPool`'s process: its pool's stop (:meth:`LocalPool.stop_matches`).
_stop: Stop | None = None


def _pool_process_started(stop: Stop) -> None:
    global _stop  # (a pool process's own: set once as it starts)
    _stop = stop


class LocalPool(concurrent.futures.ProcessPoolExecutor):
    """A process pool for :func:`run_local` whose matches in flight can be stopped: once
    :meth:`stop_matches` is called, each of its processes stops its match as its current
    game ends (:class:`MatchStopped`, the bots closed) and starts no other; the pool is
    then only good for shutting down. ``arena compare`` stops them once its test has
    decided, so that a verdict is not followed by seconds of games nobody reads.

    Its processes start at once, forked from this one when it runs a single thread (a
    fork then copies no other thread's locks): they start in milliseconds with everything
    this process has loaded and found (the engine, the sandbox's trial, the bots' host
    paths and seccomp filter). Else from a fork server (a clean process that imports this
    module once, each process forked from it), or spawned where neither is offered."""

    def __init__(self, workers: int) -> None:
        methods = multiprocessing.get_all_start_methods()
        if "fork" in methods and threading.active_count() == 1:
            context: Any = multiprocessing.get_context("fork")
        elif "forkserver" in methods:
            context = multiprocessing.get_context("forkserver")
            # The server imports this module once and each process forks from it with
            # the engine, referee and sandbox loaded (else each imports them again).
            context.set_forkserver_preload([__name__])
        else:
            context = multiprocessing.get_context("spawn")
        self._stop = context.Event()
        super().__init__(
            workers,
            mp_context=context,
            initializer=_pool_process_started,
            initargs=(self._stop,),
        )
        # Started now, all of them (a fork pool starts every process at its first task),
        # before this process starts any thread: warm by the first match.
        for _ in range(workers):
            self.submit(os.getpid)

    def stop_matches(self) -> None:
        """Stop the matches in flight and those not started (see the class)."""
        self._stop.set()


def process_pool(workers: int, sandboxed: bool = False) -> LocalPool:
    """A pool of ``workers`` processes for :func:`run_local`, started at once (see
    :class:`LocalPool`), whose matches can be stopped. ``sandboxed``: the sandbox is tried
    here first (:func:`arena.match.sandbox.check_sandbox`, cached), so that forked
    processes start with what the trial found (the bots' host paths: half a second of
    ``ldd`` each on a loaded machine) instead of each finding it again."""
    if sandboxed:
        check_sandbox()  # (its verdict is given by run_local's check)
    return LocalPool(workers)


#: Chains each process of a pool has submitted for it at a time, the one it plays
#: included: the pool's own queue refills a process at once as its chain ends, and this
#: reader tops the submitted chains up as it reads each result, with a few matches' time
#: to spare for a reader held up on a loaded machine (7 matches of 16 built-in games a
#: process: about 0.35 s). A long schedule is not submitted whole: a compare's 20,000
#: games are 1,250 matches, 0.03-0.05 s of its start before its first match, and as many
#: futures to cancel once its test has decided.
CHAINS_AHEAD = 8


def _pooled(
    chains: list[list[Match]],
    rules: Rules,
    workers: int,
    options: dict[str, Any],
    shared: LocalPool | None,
) -> Iterator[MatchResult]:
    """The results of ``chains`` played in a pool (``shared``, or one of ``workers``
    processes of its own), in the order they end, the chains submitted in order,
    :data:`CHAINS_AHEAD` a process at a time."""
    pool = shared or process_pool(workers)  # (run_local's check tried the sandbox)
    waiting = iter(chains)
    futures: dict[concurrent.futures.Future[list[MatchResult]], list[Match]] = {}

    def submit() -> None:  # up to the window, in schedule order
        for chain in itertools.islice(waiting, workers * CHAINS_AHEAD - len(futures)):
            futures[pool.submit(_play_in_worker, chain, rules, options)] = chain

    try:
        submit()
        while futures:
            done, _ = concurrent.futures.wait(
                futures, return_when=concurrent.futures.FIRST_COMPLETED
            )
            ended = [(f, futures.pop(f)[0].id) for f in list(futures) if f in done]
            submit()  # (before the results are read: no process waits for the reader)
            for future, first in ended:
                try:
                    yield from future.result()
                except BrokenProcessPool as exc:
                    raise InfrastructureError(f"match {first}: a worker process died") from exc
                except Exception as exc:
                    exc.add_note(f"in match {first}")
                    raise
    finally:  # a caller that stops early (a decided test) stops what is not done
        if not all(future.done() for future in futures):
            pool.stop_matches()
        for future in futures:
            future.cancel()
        if shared is None:
            pool.shutdown(wait=True, cancel_futures=True)


# --- standings -------------------------------------------------------------------------


@dataclass(slots=True)
class EntrantStats:
    """One entrant's figures over the counted games.

    Attributes:
        entrant: the entrant's label.
        games: games played.
        wins: games won (place 0; its team's win in team play).
        points: final scores added up (its team's in team play).
        forfeits: games it forfeited for a fault.
        places: finishing places added up (for the mean place).
    """

    entrant: str
    games: int = 0
    wins: int = 0
    points: int = 0
    forfeits: int = 0
    places: int = 0

    @property
    def name(self) -> str:
        """The entrant's name: its label."""
        return self.entrant

    @property
    def win_rate(self) -> float:
        """Share of games won (0.0 before any game)."""
        return self.wins / self.games if self.games else 0.0

    @property
    def mean_place(self) -> float:
        """Average finishing place, 0 = first (0.0 before any game)."""
        return self.places / self.games if self.games else 0.0


class Standings:
    """Tournament figures, updated from each :class:`MatchResult` with :meth:`add`.

    Per entrant (by label) an :class:`EntrantStats`; and a crosstable: ``ahead[a][b]``,
    the games ``a`` finished ahead of ``b`` (in 2-player games: won against ``b``), and
    ``met[a][b]``, the games both played. Void matches go to ``void``, never
    into the figures.

    Args:
        labels: every entrant's label (more are added as they appear).
    """

    def __init__(self, labels: Iterable[str] = ()) -> None:
        self.stats: dict[str, EntrantStats] = {}
        self.ahead: dict[str, dict[str, int]] = {}
        self.met: dict[str, dict[str, int]] = {}
        self.void: list[tuple[str, str]] = []
        self.matches = 0
        self.games = 0
        for label in labels:
            self._entrant(label)

    def _entrant(self, entrant: str) -> EntrantStats:
        if entrant not in self.stats:
            self.stats[entrant] = EntrantStats(entrant)
            self.ahead[entrant] = {}
            self.met[entrant] = {}
        return self.stats[entrant]

    def add(self, result: MatchResult) -> None:
        """Count a match's games (a void match only goes to ``void``)."""
        if result.void is not None:
            self.void.append((result.id, result.void))
            return
        self.matches += 1
        for game in result.games:
            self._add_game(result.match.seats, game)

    def _add_game(self, seats: Sequence[Entrant], game: GameResult) -> None:
        offender = None if game.verdict is None else game.verdict["seat"]
        self.add_games([seat.label for seat in seats], game.places, game.points, offender)

    def add_games(
        self,
        labels: Sequence[str],
        places: Sequence[int],
        points: Sequence[int],
        offender: int | None,
        count: int = 1,
    ) -> None:
        """Count ``count`` games with the entrant ``labels`` at their seats that ended alike:
        the same ``places``, the same forfeiting seat ``offender`` (None: none); ``points``:
        each seat's points over them (a stored tournament's games grouped by the database)."""
        self.games += count
        place: dict[str, int] = {}
        scored: dict[str, int] = {}
        for seat, label in enumerate(labels):  # a self-partnered entrant counts once
            place[label] = min(place.get(label, len(labels)), places[seat])
            scored[label] = points[seat]
        offending = None if offender is None else labels[offender]
        for label in place:
            stats = self._entrant(label)
            stats.games += count
            stats.wins += count * (place[label] == 0)
            stats.points += scored[label]
            stats.places += count * place[label]
            stats.forfeits += count * (label == offending)
        for a in place:
            for b in place:
                if a != b:
                    self.met[a][b] = self.met[a].get(b, 0) + count
                    self.ahead[a][b] = self.ahead[a].get(b, 0) + count * (place[a] < place[b])

    def score(self, a: str, b: str) -> float:
        """``a``'s score against ``b``: games finished ahead, plus half the ties."""
        met = self.met[a].get(b, 0)
        ahead, behind = self.ahead[a].get(b, 0), self.ahead[b].get(a, 0)
        return ahead + (met - ahead - behind) / 2

    def ranking(self) -> list[EntrantStats]:
        """Entrants best first: win rate, then mean place (lower first), then points."""
        return sorted(
            self.stats.values(),
            key=lambda s: (-s.win_rate, s.mean_place, -s.points, s.name),
        )


def by_deal(results: Iterable[MatchResult]) -> dict[tuple[str, int], dict[int, GameResult]]:
    """Group duplicate-deal games: ``(deal group, game index) -> {rotation: game}``.

    Game ``i`` of every rotation of a deal group has the same seed, so the same
    deals. Void and non-duplicate matches are left out.
    """
    groups: dict[tuple[str, int], dict[int, GameResult]] = {}
    for result in results:
        group = result.match.deal_group
        if group is None or result.void is not None:
            continue
        for game in result.games:
            groups.setdefault((group, game.index), {})[result.match.rotation] = game
    return groups


def rated_games(results: Iterable[MatchResult]) -> list[RatedGame]:
    """The games of ``results`` as the rating fit takes them: each seat's entrant (by
    label) and place; team play: seats 0+2 v 1+3. Void matches have none."""
    from arena.compete.ratings import GameResult as RatedGame  # (numpy: when used)

    return [
        RatedGame(
            bots=tuple(seat.label for seat in result.match.seats),
            places=game.places,
            sides=tuple(seat % 2 for seat in range(4)) if result.match.teams else None,
        )
        for result in results
        for game in result.games
    ]


def tournament_ratings(results: Sequence[MatchResult]) -> dict[str, Rating]:
    """Each entrant's rating (by label) over the games of ``results`` (void
    matches have none); ``{}`` with fewer than two entrants. Team play: seats 0+2 v 1+3."""
    from arena.compete.ratings import fit_ratings  # (numpy: when used)

    rated = rated_games(results)
    if len({bot for game in rated for bot in game.bots}) < 2:
        return {}
    return {rating.bot: rating for rating in fit_ratings(rated)}
