"""The referee: plays matches between bots, batching their decisions, judging their faults.

A :class:`~arena.match.players.Player` is the referee's handle on one seat's bot for a
whole match: a built-in strategy (:class:`~arena.match.players.StrategyPlayer`), a bot
file loaded in this process (:class:`~arena.match.players.InProcessPlayer`, a developer's
own bots only), or a bot process speaking the JSON-lines protocol of ``docs/protocol.md``
(:class:`~arena.match.process.ProcessPlayer`, sandboxed or plain). :func:`play_match`
plays several games of a match at once and sends each bot all its pending decisions in one
message, because a round trip between processes costs as much as 25 engine moves (FACTS.md).

Bot faults are data: a timeout, a crash, an illegal move or garbage on the wire
ends that game with the offender forfeiting (:class:`~arena.match.verdicts.Verdict`), and
only that game, or every game of the offending process when the process itself is gone.
A failure of the harness (the sandbox cannot start: the launcher's own report says so,
:meth:`~arena.match.process.Launcher.started`, never what a bot prints) raises
:class:`~arena.match.verdicts.InfrastructureError`; such games are void, never counted.

The names of the modules it is built from are re-exported here: the referee's vocabulary.
"""

from __future__ import annotations

import collections
from collections.abc import Callable, Generator, Iterator, Sequence
from dataclasses import dataclass, field
from typing import cast

from arena.engine.events import Play, Termination
from arena.engine.game import Game
from arena.engine.rules import Rules
from arena.errors import IllegalMoveError
from arena.match.human import HumanPlayer
from arena.match.play import game_seeds
from arena.match.players import InProcessPlayer, Player, Request, StrategyPlayer
from arena.match.process import Launcher, PlainLauncher, ProcessPlayer
from arena.match.verdicts import (
    BotFaultError,
    DecisionTime,
    GameOutcome,
    InfrastructureError,
    TimeControl,
    Verdict,
)
from arena.match.warm import KeptPlayer

#: Games of a match played at once: every bot gets all its pending decisions in one message,
#: so more games in flight mean fewer round trips per decision (64 against 16: about 40%
#: more moves a second for trivial sandboxed bots; 256 against 64 about 2.5x on a loaded
#: 2-core machine, where every round trip waits for the scheduler: benchmarks/sandbox.py).
GAMES_IN_FLIGHT = 256

#: What a match's watcher is told after each of the referee's steps: the lowest-numbered game
#: in flight (its index in the match, the game as it stands, over on the step it ended).
Watch = Callable[[int, Game], None]

__all__ = [
    "BotFaultError",
    "GameOutcome",
    "InProcessPlayer",
    "InfrastructureError",
    "Launcher",
    "PlainLauncher",
    "Player",
    "ProcessPlayer",
    "Request",
    "StrategyPlayer",
    "TimeControl",
    "Verdict",
    "Watch",
    "play_match",
]


@dataclass
class _Live:
    index: int
    id: str
    game: Game
    banks: list[float]
    wall_banks: list[float]
    verdict: Verdict | None = None
    seats_started: set[int] = field(default_factory=set)
    #: Each decision's (cpu, wall) seconds in order, None where untimed (GameOutcome.times).
    times: list[DecisionTime | None] = field(default_factory=list)


def play_match(
    rules: Rules,
    players: Sequence[Player],
    *,
    games: int,
    seed: int,
    teams: bool = False,
    concurrency: int = GAMES_IN_FLIGHT,
    time_control: TimeControl | None = None,
    start: Sequence[Game] | None = None,
    until_round: int | None = None,
    seeds: Sequence[int] | None = None,
    watch: Watch | None = None,
    stop: Callable[[], bool] | None = None,
) -> Generator[GameOutcome, None, None]:
    """Play ``games`` games with ``players[seat]`` at each seat; yield each game as it ends.

    Up to ``concurrency`` games are played at once, and each bot gets all its
    pending decisions in one message. Game ``i`` is seeded by
    :func:`arena.match.play.game_seeds` from ``seed``. Players are opened first and
    closed at the end, whatever happens.

    Branches (:mod:`arena.match.branch`): with ``start``, game ``i`` goes on from the
    position ``start[i]`` (same rules, seats and teams) instead of a fresh deal, its bots
    still seeded by game ``i``'s seed; with ``until_round``, a game stops (is yielded,
    unfinished) once that round is over. ``seeds``: the games' seeds, instead of ``seed``'s
    (several matches' games played as one, more of them in flight). ``stop``: asked before
    each step of the games in flight (one decision in each); once it answers True, no
    other step is played and the generator ends, its games in flight unfinished and not
    yielded (a decided compare's matches: :func:`arena.compete.localrun.play_chain`).

    ``watch`` (a live feed, :mod:`arena.service.livefeed`): called after every step with the
    lowest-numbered game in flight, so a spectator follows one game, then the next; it must
    be cheap (it runs between the bots' decisions) and never raise.

    Raises:
        InfrastructureError: the harness failed; the games not yet yielded are void.
        RulesError: the player count or teams are not allowed.
        ValueError: ``start`` does not hold ``games`` games of these rules and seats, or
            ``seeds`` not ``games`` seeds.
    """
    rules.check_players(len(players), teams)
    setup = (rules.version, len(players), teams)
    if start is not None and (
        len(start) != games or any((g.rules.version, g.players, g.teams) != setup for g in start)
    ):
        raise ValueError(f"start needs {games} games of {rules.name} with {len(players)} seats")
    clock = time_control or TimeControl()
    if seeds is not None and len(seeds) != games:
        raise ValueError(f"{len(seeds)} seeds for {games} games")
    seeded = game_seeds(seed, games) if seeds is None else list(seeds)
    for player in players:
        if isinstance(player, ProcessPlayer | KeptPlayer):
            player.games = games
    try:
        broken = _open_all(players, clock)
        if (
            all(type(player) is StrategyPlayer for player in players)
            and not broken
            and start is None
            and until_round is None
            and watch is None
        ):
            yield from _play_builtins(rules, players, seeded, teams, stop)
            return
        yield from _play(
            rules,
            players,
            seeded,
            teams,
            concurrency,
            clock,
            broken,
            start,
            until_round,
            watch,
            stop,
        )
    finally:
        for player in players:
            player.close()


def _open_all(players: Sequence[Player], clock: TimeControl) -> dict[int, BotFaultError]:
    """Open every seat's player; the bots' processes are all started before the referee
    waits for the first one's handshake (their start-ups overlap)."""
    broken: dict[int, BotFaultError] = {}
    launched: list[ProcessPlayer | KeptPlayer] = []
    for seat, player in enumerate(players):
        try:
            if isinstance(player, ProcessPlayer | KeptPlayer):
                player.launch(clock)
                launched.append(player)
            else:
                player.open(clock)
        except BotFaultError as fault:
            broken[seat] = fault
    for seat, player in enumerate(players):
        if player in launched and seat not in broken:
            try:
                player.greet(clock)
            except BotFaultError as fault:
                broken[seat] = fault
    return broken


def _play(
    rules: Rules,
    players: Sequence[Player],
    seeds: list[int],
    teams: bool,
    concurrency: int,
    clock: TimeControl,
    broken: dict[int, BotFaultError],
    start: Sequence[Game] | None = None,
    until_round: int | None = None,
    watch: Watch | None = None,
    stop: Callable[[], bool] | None = None,
) -> Iterator[GameOutcome]:
    waiting = collections.deque(enumerate(seeds))
    live: list[_Live] = []
    while waiting or live:
        if stop is not None and stop():
            return
        begun: list[_Live] = []  # (a branch may begin past the round it stops after)
        while waiting and len(live) + len(begun) < concurrency:
            index, game_seed = waiting.popleft()
            game = None if start is None else start[index]
            entry = _begin(rules, players, index, game_seed, teams, clock, broken, game)
            (begun if _stopped(entry.game, until_round) else live).append(entry)
        _decide(live, players, clock, broken)  # every game in ``live`` goes on
        if watch is not None and live:  # (``live`` is in game order)
            watch(live[0].index, live[0].game)
        stopped = [e for e in live if _stopped(e.game, until_round)]
        if stopped:
            live = [e for e in live if not _stopped(e.game, until_round)]
        for entry in stopped + begun:
            _finish(entry, players)
            yield GameOutcome(entry.index, entry.game, entry.verdict, entry.times)


def _play_builtins(
    rules: Rules,
    players: Sequence[Player],
    seeds: list[int],
    teams: bool,
    stop: Callable[[], bool] | None = None,
) -> Iterator[GameOutcome]:
    """:func:`_play` when every seat is a built-in strategy (the arena's own code, never
    timed, never at fault): each game played to its end in turn, each strategy asked with
    its legal moves, without a request and an answer a decision. The same games as
    :func:`_play` gives (each game's strategies are seeded by the game:
    :meth:`StrategyPlayer.strategy`), with the same untimed decisions (None each), in order
    (``_play`` yields them as they end). ``stop``: asked before each game."""
    builtins = [cast(StrategyPlayer, player) for player in players]
    for index, game_seed in enumerate(seeds):
        if stop is not None and stop():
            return
        game = Game(rules, len(builtins), teams=teams, seed=game_seed)
        choose = [player.strategy(seat, game_seed).choose for seat, player in enumerate(builtins)]
        decisions = 0
        while (seat := game.seat) is not None:
            game.apply(choose[seat](game.legal_moves()))
            decisions += 1
        yield GameOutcome(index, game, None, [None] * decisions)


def _begin(
    rules: Rules,
    players: Sequence[Player],
    index: int,
    game_seed: int,
    teams: bool,
    clock: TimeControl,
    broken: dict[int, BotFaultError],
    game: Game | None = None,
) -> _Live:
    if game is None:
        game = Game(rules, len(players), teams=teams, seed=game_seed)
    seats = len(players)
    entry = _Live(
        index, f"g{index}", game, [clock.bank_seconds] * seats, [clock.wall_bank_seconds] * seats
    )
    # A game taken up (a branch) has plays the referee did not time.
    entry.times = [None] * sum(isinstance(e, Play) for r in game.rounds for e in r.events)
    for seat, player in enumerate(players):
        if seat in broken:
            continue
        try:
            player.start(entry.id, seat, len(players), teams, rules, game_seed)
            entry.seats_started.add(seat)
        except BotFaultError as fault:
            broken[seat] = fault
    return entry


def _stopped(game: Game, until_round: int | None) -> bool:
    """Whether a game is over, or (a branch) past the round it stops after."""
    return game.is_terminal() or (until_round is not None and len(game.rounds) > until_round)


def _decide(
    live: list[_Live],
    players: Sequence[Player],
    clock: TimeControl,
    broken: dict[int, BotFaultError],
) -> None:
    """One decision in every live game: each bot answers all its games in one message."""
    asks: dict[int, list[_Live]] = collections.defaultdict(list)
    for entry in live:
        seat = entry.game.seat
        assert seat is not None
        if seat in broken:
            _forfeit(entry, seat, broken[seat], players[seat])
        else:
            asks[seat].append(entry)
    sent: list[int] = []
    for seat, entries in asks.items():
        try:
            players[seat].send([Request(e.id, e.game, seat) for e in entries])
            sent.append(seat)
        except BotFaultError as fault:
            broken[seat] = fault
            for entry in entries:
                _forfeit(entry, seat, fault, players[seat])
    for seat in sent:
        _collect(seat, asks[seat], players[seat], clock, broken)


def _collect(
    seat: int,
    entries: list[_Live],
    player: Player,
    clock: TimeControl,
    broken: dict[int, BotFaultError],
) -> None:
    try:
        answers = player.receive(
            clock, [e.banks[seat] for e in entries], [e.wall_banks[seat] for e in entries]
        )
    except BotFaultError as fault:
        broken[seat] = fault
        for entry in entries:
            _forfeit(entry, seat, fault, player)
        return
    # Built-in strategies are the arena's own code, not timed: 0 s charged means nothing;
    # nor are people (their stated move time is the feed's: arena.match.human).
    timed = not isinstance(player, StrategyPlayer | HumanPlayer)
    move_seconds, wall_seconds = clock.move_seconds, clock.wall_seconds
    for entry, answer, spent, waited in zip(
        entries, answers, player.charged(), player.waited(), strict=True
    ):
        spent, waited = max(0.0, spent), max(0.0, waited)
        # Every decision asked for, the faulting one included (the last of its game).
        entry.times.append((spent, waited) if timed else None)
        banks, wall_banks = entry.banks, entry.wall_banks
        if spent > move_seconds:
            banks[seat] -= spent - move_seconds
        if waited > wall_seconds:
            wall_banks[seat] -= waited - wall_seconds
        if banks[seat] < 0:
            answer = BotFaultError(
                Termination.TIMEOUT,
                f"used {spent:.2f} s for one move with the time bank spent "
                f"({clock.move_seconds} s a move, {clock.bank_seconds} s bank)",
            )
        elif wall_banks[seat] < 0:
            answer = BotFaultError(
                Termination.TIMEOUT,
                f"took {waited:.2f} s of wall-clock time for one move with the wall bank "
                f"spent ({clock.wall_seconds:g} s a move, {clock.wall_bank_seconds:g} s bank)",
            )
        if isinstance(answer, BotFaultError):
            _forfeit(entry, seat, answer, player)
            continue
        try:  # the engine checks the move against the legal moves it keeps (nothing changes)
            entry.game.apply(answer)
        except IllegalMoveError:
            legal = ", ".join(map(str, entry.game.legal_moves()))
            _forfeit(
                entry,
                seat,
                BotFaultError(Termination.ILLEGAL_MOVE, f"played {answer}; legal: {legal}"),
                player,
            )


def _forfeit(entry: _Live, seat: int, fault: BotFaultError, player: Player) -> None:
    entry.verdict = Verdict(seat, fault.termination, fault.message, player.stderr_tail())
    entry.game.forfeit(seat, fault.termination)


def _finish(entry: _Live, players: Sequence[Player]) -> None:
    outcome = entry.game.outcome()
    result = {  # a branch stopped after its round: the game goes on, nobody has won
        "termination": None if outcome is None else outcome.termination.value,
        "winners": [] if outcome is None else list(outcome.winners),
        "scores": list(entry.game.scores if outcome is None else outcome.scores),
    }
    for seat in entry.seats_started:
        players[seat].end(entry.id, result)
