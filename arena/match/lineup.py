"""Seats for a match: built-in strategies and bot files, sandboxed unless asked otherwise.

``arena play`` and ``arena check`` go through here. A seat is given as the name
of a built-in strategy (``random``, ``greedy``) or the path of a bot file. Bot
files run in the sandbox, each seat with a uid of its own; where the sandbox is
unavailable they are refused with what is missing, unless the caller opts into
the unsandboxed local mode for its own bots.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from arena.engine.events import Termination
from arena.engine.rules import PRESETS
from arena.errors import ParseError
from arena.match.compiler import CompileError
from arena.match.referee import (
    GameOutcome,
    PlainLauncher,
    Player,
    ProcessPlayer,
    StrategyPlayer,
    TimeControl,
    play_match,
)
from arena.match.runtimes import find_runtime, runtime_for_upload, runtime_of_file
from arena.match.sandbox import (
    Limits,
    Sandbox,
    SandboxUnavailable,
    check_sandbox,
    process_slots,
)
from arena.match.strategies import STRATEGIES
from arena.match.warm import KeptPlayer, MatchSetup, WarmKey, release_warm, warm_pool

__all__ = [
    "CheckReport",
    "check_bot",
    "is_bot_file",
    "make_players",
    "release_kept_players",
    "seat_name",
    "seat_source",
]


def release_kept_players() -> None:
    """Stop every bot this process kept running (``make_players(keep_games=...)``)."""
    release_warm()


def _identity(spec: str) -> str:
    """A seat's identity in a warm key: a strategy's name, or the bot file's resolved path,
    size and modification time (a file edited between matches is another bot)."""
    if not is_bot_file(spec):
        return spec
    path = Path(spec).resolve()
    stat = path.stat()
    return f"{path}:{stat.st_size}:{stat.st_mtime_ns}"


def _warm_keys(
    specs: Sequence[str],
    setup: MatchSetup,
    limits: Limits | None,
    sandboxed: bool,
    runtime: str | None = None,
) -> dict[int, WarmKey]:
    """The warm key of each bot file's seat (:mod:`arena.match.warm`'s rule)."""
    identities = [_identity(spec) for spec in specs]
    keys: dict[int, WarmKey] = {}
    for seat, spec in enumerate(specs):
        if is_bot_file(spec):
            keys[seat] = WarmKey(
                bot=identities[seat],
                runtime=_runtime_name(spec, runtime),
                copy=identities[:seat].count(identities[seat]),
                opponents=tuple(sorted(identities[:seat] + identities[seat + 1 :])),
                setup=setup,
                limits=limits,
                sandboxed=sandboxed,
            )
    return keys


def _kept_players(
    specs: Sequence[str],
    setup: MatchSetup,
    limits: Limits | None,
    sandboxed: bool,
    block: int,
    games: int,
    runtime: str | None = None,
) -> dict[int, KeptPlayer]:
    """The kept player of every bot file's seat, from this process's :func:`warm_pool`."""
    pool = warm_pool()
    keys = _warm_keys(specs, setup, limits, sandboxed, runtime)

    def start(key: WarmKey, slot: int) -> KeptPlayer:
        spec = specs[next(seat for seat, k in keys.items() if k == key)]
        launcher = Sandbox(limits or Limits(), slot) if sandboxed else PlainLauncher()
        return KeptPlayer(
            Path(spec),
            launcher,
            games,
            max_minutes=pool.max_minutes,
            memory_bytes=pool.memory_bytes(limits),
            slot=slot,
            runtime=_runtime_of(spec, runtime),
        )

    kept = pool.players(list(keys.values()), block, start)
    return dict(zip(keys, kept, strict=True))


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


def seat_source(spec: str) -> str:
    """What a seat runs, as a value equal for equal code and different otherwise: a bot
    file's SHA-256 in hex (the bytes read now: for a stored version, the ``sha256`` it is
    stored under, arena.store.db.source_hash), or ``strategy:NAME`` for a built-in one.

    Raises:
        OSError: the bot file cannot be read.
    """
    if not is_bot_file(spec):
        return f"strategy:{spec}"
    return hashlib.sha256(Path(spec).read_bytes()).hexdigest()


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
    setup: MatchSetup | None = None,
    runtime: str | None = None,
) -> list[Player]:
    """One player per seat spec; bot files in the sandbox (slot ``first_slot + seat``; by
    default this process's block of the machine-wide registry, :func:`process_slots`).

    ``keep_games`` > 0: bot files' processes are kept running for the next match with
    the same key in this process (:mod:`arena.match.warm`'s rule: the same bot, opponents
    and ``setup`` -- rules, seats, clock, scope; :class:`~arena.match.warm.KeptPlayer`,
    whose CPU backstop covers that many games; each kept bot holds a slot of the block)
    until :func:`release_kept_players`. Cold bots take the slots kept ones leave free.

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
    bots = [seat for seat, spec in enumerate(specs) if is_bot_file(spec)]
    block = first_slot
    if block is None:
        block = process_slots() if sandboxed and bots else 0
    if keep_games and bots:
        setup = setup or MatchSetup("", len(specs), False)
        kept = _kept_players(specs, setup, limits, sandboxed, block, keep_games, runtime)
    else:
        kept = {}
    cold = [seat for seat in bots if seat not in kept]
    slots = warm_pool().slots(block, cold) if sandboxed else {}
    for seat, spec in enumerate(specs):
        if not is_bot_file(spec):
            players.append(StrategyPlayer(spec, None if salts is None else salts[seat]))
        elif seat in kept:
            players.append(kept[seat])
        else:
            launcher = Sandbox(limits or Limits(), slots[seat]) if sandboxed else PlainLauncher()
            players.append(ProcessPlayer(Path(spec), launcher, _runtime_of(spec, runtime)))
    return players


def _runtime_name(spec: str, runtime: str | None) -> str:
    """The name of the runtime a bot file runs under (``program``: its own ``#!`` line)."""
    given = _runtime_of(spec, runtime)
    if given is not None:
        return given
    found = runtime_of_file(spec)
    return "program" if found is None else found.name


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
    #: A compiled runtime's compile: its seconds (0.0 when the artefact was cached), and
    #: what the compiler printed when the source does not compile (then no game is played).
    compile_seconds: float = 0.0
    compile_error: str = ""

    @property
    def ok(self) -> bool:
        """Whether the bot compiled (if it is compiled) and played every game without a
        fault."""
        return not self.compile_error and not self.faults and self.games > 0

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
    presets: Sequence[str] | None = None,
) -> Iterator[tuple[str, CheckReport]]:
    """Validate a bot as an upload would be: a compiled runtime's source compiles (in the
    sandbox, :mod:`arena.match.compiler`), it starts, answers the handshake, and plays
    ``games`` 2-player games against ``random`` under every preset (or only those of
    ``presets``), under ``runtime`` (default: the one the file's name says).

    Yields (preset, report so far) after each preset; the last report is the final one.
    A source that does not compile yields (``"compile"``, its report with the compiler's
    output in ``compile_error``) and plays nothing.

    Raises:
        ParseError: no such file.
        RuntimeMissing: ``runtime`` is unknown, or the file is not one of its.
        SandboxUnavailable: as :func:`make_players`.
    """
    if runtime is not None:
        runtime_for_upload(path, runtime)  # its files' suffix
    report = CheckReport(bot=path)
    for name in PRESETS if presets is None else presets:
        rules = PRESETS[name]
        players = make_players(
            [path, "random"], sandboxed=sandboxed, limits=limits, runtime=runtime
        )
        bot = players[0]
        assert isinstance(bot, ProcessPlayer)
        try:
            built = bot.prepare()
        except CompileError as exc:
            report.compile_error = str(exc)
            yield "compile", report
            return
        if built is not None and not built.cached:
            report.compile_seconds = built.seconds
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
