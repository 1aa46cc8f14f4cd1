"""Seats for a match: built-in strategies and bot files, sandboxed unless asked otherwise.

``arena play`` and ``arena check`` go through here. A seat is given as the name
of a built-in strategy (``random``, ``greedy``) or the path of a bot file. Bot
files run in the sandbox, each seat with a uid of its own; where the sandbox is
unavailable they are refused with what is missing, unless the caller opts into
the unsandboxed local mode for its own bots.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from arena.engine.events import Termination
from arena.engine.rules import PRESETS
from arena.errors import ParseError
from arena.match.process import KeptPlayer
from arena.match.referee import (
    GameOutcome,
    PlainLauncher,
    Player,
    ProcessPlayer,
    StrategyPlayer,
    TimeControl,
    play_match,
)
from arena.match.runtimes import find_runtime, runtime_for_upload
from arena.match.sandbox import (
    SLOT_BLOCK,
    Limits,
    Sandbox,
    SandboxUnavailable,
    check_sandbox,
    process_slots,
)
from arena.match.strategies import STRATEGIES

__all__ = [
    "CheckReport",
    "check_bot",
    "is_bot_file",
    "make_players",
    "release_kept_players",
    "seat_name",
]


#: Bots kept running between matches: (spec, copy, sandboxed, limits) -> player, and the
#: process they belong to (a forked child never uses its parent's).
_kept: dict[tuple[str, int, bool, Limits | None], KeptPlayer] = {}
_kept_pid = [0]


def _kept_player(
    spec: str,
    copy: int,
    sandboxed: bool,
    limits: Limits | None,
    first_slot: int | None,
    games: int,
) -> KeptPlayer:
    if _kept_pid[0] != os.getpid():
        _kept.clear()
        _kept_pid[0] = os.getpid()
    key = (spec, copy, sandboxed, limits)
    player = _kept.get(key)
    if player is None:
        if len(_kept) >= SLOT_BLOCK:  # each kept bot holds a slot of this process's block
            release_kept_players()
        slot = (first_slot or 0) + len(_kept)
        launcher = Sandbox(limits or Limits(), slot) if sandboxed else PlainLauncher()
        player = _kept[key] = KeptPlayer(Path(spec), launcher, games)
    return player


def release_kept_players() -> None:
    """Stop every bot this process kept running (``make_players(keep_games=...)``)."""
    if _kept_pid[0] == os.getpid():
        for player in _kept.values():
            player.release()
    _kept.clear()


def is_bot_file(spec: str) -> bool:
    """Whether a seat spec names a bot file rather than a built-in strategy."""
    return spec not in STRATEGIES


def check_specs(specs: Sequence[str]) -> None:
    """Check every seat spec is a built-in strategy or an existing file.

    Raises:
        ParseError: naming the first bad spec.
    """
    for spec in specs:
        if is_bot_file(spec) and not Path(spec).is_file():
            raise ParseError(
                f"{spec!r} is neither a built-in strategy ({', '.join(STRATEGIES)}) nor a bot file"
            )


def seat_name(spec: str) -> str:
    """The name a seat shows before its bot says its own: the strategy, or the file's stem."""
    return Path(spec).stem if is_bot_file(spec) else spec


def make_players(
    specs: Sequence[str],
    *,
    sandboxed: bool = True,
    limits: Limits | None = None,
    first_slot: int | None = None,
    salts: Sequence[str] | None = None,
    keep_games: int = 0,
    runtime: str | None = None,
) -> list[Player]:
    """One player per seat spec; bot files in the sandbox (slot ``first_slot + seat``; by
    default this process's block of the machine-wide registry, :func:`process_slots`).

    ``keep_games`` > 0: bot files' processes are kept running for the next match
    between the same bots in this process (:class:`~arena.match.process.KeptPlayer`,
    whose CPU backstop covers that many games; each copy of a bot in its own slot of the
    block) until :func:`release_kept_players`.

    ``salts`` (tournament entrants' names) seed built-in strategies by entrant rather
    than by seat (see :class:`arena.match.referee.StrategyPlayer`).

    ``runtime``: the runtime of every bot file of its suffix (:mod:`arena.match.runtimes`:
    ``python-numpy`` for the ``.py`` files); by default each file's name says it (``.py``:
    python, ``.numpy.py``: python-numpy, ``.js``: javascript).

    Raises:
        ParseError: a spec is neither a strategy nor a file.
        SandboxUnavailable: bot files, ``sandboxed``, and no sandbox here (the message
            says what is missing and how to run one's own bots unsandboxed).
    """
    check_specs(specs)
    if sandboxed and any(is_bot_file(spec) for spec in specs):
        missing = check_sandbox()
        if missing:
            raise SandboxUnavailable(
                "cannot run bot files in a sandbox here: "
                + "; ".join(missing)
                + " (for your own bots on your own machine: --unsandboxed)"
            )
    players: list[Player] = []
    if sandboxed and first_slot is None and any(is_bot_file(spec) for spec in specs):
        first_slot = process_slots()
    for seat, spec in enumerate(specs):
        if not is_bot_file(spec):
            players.append(StrategyPlayer(spec, None if salts is None else salts[seat]))
            continue
        if keep_games:
            copy = sum(1 for other in specs[:seat] if other == spec)
            players.append(_kept_player(spec, copy, sandboxed, limits, first_slot, keep_games))
            continue
        launcher = (
            Sandbox(limits or Limits(), (first_slot or 0) + seat) if sandboxed else PlainLauncher()
        )
        players.append(ProcessPlayer(Path(spec), launcher, _runtime_of(spec, runtime)))
    return players


def _runtime_of(spec: str, runtime: str | None) -> str | None:
    """``runtime`` for a bot file of its suffix, else None (the file's name decides)."""
    if runtime is None or Path(spec).suffix != find_runtime(runtime).suffix:
        return None
    return runtime


@dataclass
class CheckReport:
    """What ``arena check`` found for one bot file."""

    bot: str
    name: str = ""
    startup_seconds: float = 0.0
    games: int = 0
    decisions: int = 0
    seconds_spent: float = 0.0
    slowest: float = 0.0
    #: (rule set, verdict) of every game the bot forfeited.
    faults: list[tuple[str, GameOutcome]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Whether the bot played every game without a fault."""
        return not self.faults and self.games > 0

    @property
    def mean_move_seconds(self) -> float:
        """The average time charged per decision."""
        return self.seconds_spent / self.decisions if self.decisions else 0.0


def check_bot(
    path: str,
    *,
    sandboxed: bool = True,
    games: int = 2,
    seed: int = 1,
    time_control: TimeControl | None = None,
    limits: Limits | None = None,
    runtime: str | None = None,
) -> Iterator[tuple[str, CheckReport]]:
    """Validate a bot as an upload would be: it starts, answers the handshake, and plays
    ``games`` 2-player games against ``random`` under every preset, under ``runtime``
    (default: the one the file's name says).

    Yields (preset, report so far) after each preset; the last report is the final one.

    Raises:
        ParseError: no such file.
        RuntimeMissing: ``runtime`` is unknown, or the file is not one of its.
        SandboxUnavailable: as :func:`make_players`.
    """
    if runtime is not None:
        runtime_for_upload(path, runtime)  # its files' suffix
    report = CheckReport(bot=path)
    for name, rules in PRESETS.items():
        players = make_players(
            [path, "random"], sandboxed=sandboxed, limits=limits, runtime=runtime
        )
        bot = players[0]
        assert isinstance(bot, ProcessPlayer)
        for outcome in play_match(
            rules, players, games=games, seed=seed, time_control=time_control
        ):
            report.games += 1
            if outcome.verdict is not None:
                report.faults.append((name, outcome))
        report.name = bot.name
        report.startup_seconds = max(report.startup_seconds, bot.startup_seconds)
        report.decisions += bot.decisions
        report.seconds_spent += bot.seconds_spent
        report.slowest = max(report.slowest, bot.slowest)
        yield name, report
        if any(
            o.verdict and o.verdict.termination is not Termination.ILLEGAL_MOVE
            for _, o in report.faults
        ):
            return  # a bot that crashes or hangs would only do it again
