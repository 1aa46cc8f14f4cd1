"""The referee: plays matches between bots, batching their decisions, judging their faults.

A :class:`Player` is the referee's handle on one seat's bot for a whole match:
a built-in strategy (:class:`StrategyPlayer`), a bot file loaded in this process
(:class:`InProcessPlayer`, a developer's own bots only), or a bot process
speaking the JSON-lines protocol of ``docs/protocol.md`` (:class:`ProcessPlayer`,
sandboxed or plain). :func:`play_match` plays several games of a match at once
and sends each bot all its pending decisions in one message, because a round
trip between processes costs as much as 25 engine moves (FACTS.md).

Bot faults are data: a timeout, a crash, an illegal move or garbage on the wire
ends that game with the offender forfeiting (:class:`Verdict`), and only that
game, or every game of the offending process when the process itself is gone.
A failure of the harness (the sandbox cannot start) raises
:class:`InfrastructureError`; such games are void, never counted.
"""

from __future__ import annotations

import collections
import contextlib
import json
import logging
import os
import selectors
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Protocol

from arena.engine.events import Termination
from arena.engine.game import Game
from arena.engine.observation import Observation
from arena.engine.rules import Rules
from arena.engine.tiles import Move
from arena.errors import ArenaError
from arena.match import botkit
from arena.match.play import entrant_rng, game_seeds, strategy_rng
from arena.match.sandbox import kill_process_group, plain_spawn
from arena.match.strategies import make_strategy

__all__ = [
    "BotFaultError",
    "GameOutcome",
    "InProcessPlayer",
    "InfrastructureError",
    "Launcher",
    "PlainLauncher",
    "Player",
    "ProcessPlayer",
    "StrategyPlayer",
    "TimeControl",
    "Verdict",
    "play_match",
]

logger = logging.getLogger(__name__)

#: The longest line a bot may send (a reply with many moves is far shorter).
MAX_LINE_BYTES = 1 << 20
#: How often the referee checks a thinking bot's CPU time against its budget.
CPU_POLL_SECONDS = 0.25
#: How much of a bot's stderr is kept (the tail) for verdicts.
STDERR_TAIL_BYTES = 4096
BOTKIT = Path(botkit.__file__).resolve()


class InfrastructureError(ArenaError):
    """The harness failed (not the bot): the games it touched are void."""


@dataclass(frozen=True)
class TimeControl:
    """How long a bot may think.

    Attributes:
        move_seconds: per decision, charged in CPU time where it can be measured.
        bank_seconds: a per-game reserve that pays for decisions over ``move_seconds``.
        startup_seconds: for starting the bot and answering the handshake (wall clock).
        wall_factor: a reply is abandoned after this many times its moves' time plus
            the largest bank in wall-clock time, so a bot that sleeps also times out.
    """

    move_seconds: float = 1.0
    bank_seconds: float = 10.0
    startup_seconds: float = 10.0
    wall_factor: float = 3.0


@dataclass(frozen=True)
class Verdict:
    """A bot's fault in one game: the seat forfeits.

    Attributes:
        seat: the offending seat.
        termination: TIMEOUT, CRASH, ILLEGAL_MOVE or PROTOCOL_ERROR.
        message: what happened, for people.
        stderr: the tail of the bot's stderr (may be empty).
    """

    seat: int
    termination: Termination
    message: str
    stderr: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The JSON form kept in the game record."""
        return {
            "seat": self.seat,
            "termination": self.termination.value,
            "message": self.message,
            "stderr": self.stderr,
        }


class BotFaultError(Exception):
    """A bot misbehaved; carries the verdict's termination and message."""

    def __init__(self, termination: Termination, message: str) -> None:
        super().__init__(message)
        self.termination = termination
        self.message = message


@dataclass
class GameOutcome:
    """One finished game of a match: the game, and the verdict if a bot forfeited."""

    index: int
    game: Game
    verdict: Verdict | None = None


#: What a player answers for one decision: a move, or the fault that stands instead.
Answer = Move | BotFaultError


class Player(Protocol):
    """The referee's handle on one seat's bot for a whole match."""

    name: str

    def open(self, time_control: TimeControl) -> None:
        """Start the bot and check it answers (raises BotFaultError or InfrastructureError)."""

    def start(
        self, game: str, seat: int, players: int, teams: bool, rules: Rules, seed: int
    ) -> None:
        """A new game begins with this bot at ``seat`` (``seed``: the game's seed)."""

    def send(self, requests: Sequence[tuple[str, Observation]]) -> None:
        """Ask for one move in each of these games (answers come from :meth:`receive`)."""

    def receive(self, time_control: TimeControl, banks: Sequence[float]) -> list[Answer]:
        """Collect the answers to the last :meth:`send`; ``banks`` are each game's time bank.

        Raises:
            BotFaultError: the whole process failed (every pending game forfeits).
        """

    def charged(self) -> list[float]:
        """The seconds charged to each game of the last batch."""

    def end(self, game: str, result: Mapping[str, Any]) -> None:
        """A game is over (the bot may learn from ``result``)."""

    def close(self) -> None:
        """Stop the bot and release everything it held."""

    def stderr_tail(self) -> str:
        """The last bytes the bot wrote to stderr."""


# --- players in this process -----------------------------------------------------------


class StrategyPlayer:
    """A built-in strategy (``random``, ``greedy``) of :mod:`~arena.match.strategies`: trusted."""

    def __init__(self, name: str, salt: str | None = None) -> None:
        self.name = name
        self._salt = salt
        self._strategies: dict[str, Any] = {}
        self._pending: list[Answer] = []
        make_strategy(name, strategy_rng(0, 0))  # an unknown name fails now

    def open(self, time_control: TimeControl) -> None:
        return

    def start(
        self, game: str, seat: int, players: int, teams: bool, rules: Rules, seed: int
    ) -> None:
        # Seeded as arena.match.play seeds it (the same games as `arena play` gives), or, with a
        # salt (a tournament entrant's name), by the entrant wherever it sits: two
        # `random` entrants must not mirror each other on duplicate deals.
        rng = strategy_rng(seed, seat) if self._salt is None else entrant_rng(seed, self._salt)
        self._strategies[game] = make_strategy(self.name, rng)

    def send(self, requests: Sequence[tuple[str, Observation]]) -> None:
        self._pending = [self._strategies[game](obs) for game, obs in requests]

    def receive(self, time_control: TimeControl, banks: Sequence[float]) -> list[Answer]:
        return self._pending

    def charged(self) -> list[float]:
        return [0.0] * len(self._pending)

    def end(self, game: str, result: Mapping[str, Any]) -> None:
        self._strategies.pop(game, None)

    def close(self) -> None:
        self._strategies.clear()

    def stderr_tail(self) -> str:
        return ""


class InProcessPlayer:
    """A bot file run in the referee's own process, through :mod:`arena.match.botkit`.

    Never for uploaded bots: only a developer's own code, explicitly (and for
    measuring the protocol's cost against it). Faults are still judged.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.name = path.stem
        self._runner: botkit.BotRunner | None = None
        self._pending: list[Answer] = []
        self._times: list[float] = []

    def open(self, time_control: TimeControl) -> None:
        try:
            self._runner = botkit.load_bot(self.path)
        except botkit.BotError as exc:
            raise BotFaultError(Termination.CRASH, str(exc)) from None
        self.name = self._runner.name

    def start(
        self, game: str, seat: int, players: int, teams: bool, rules: Rules, seed: int
    ) -> None:
        assert self._runner is not None
        info = botkit.GameInfo(game, seat, players, teams, rules.name, rules.params())
        self._runner.start(info)

    def send(self, requests: Sequence[tuple[str, Observation]]) -> None:
        assert self._runner is not None
        self._pending, self._times = [], []
        for game, observation in requests:
            started = time.process_time()
            self._pending.append(self._choose(game, observation))
            self._times.append(time.process_time() - started)

    def _choose(self, game: str, observation: Observation) -> Answer:
        assert self._runner is not None
        view = botkit.Observation.from_dict(observation.to_dict())
        try:
            return Move.parse(self._runner.choose(game, view))
        except botkit.BotError as exc:
            return BotFaultError(Termination.ILLEGAL_MOVE, str(exc))
        except Exception as exc:  # the bot's own code raised: its crash
            return BotFaultError(Termination.CRASH, f"{type(exc).__name__}: {exc}")

    def receive(self, time_control: TimeControl, banks: Sequence[float]) -> list[Answer]:
        return self._pending

    def charged(self) -> list[float]:
        return self._times

    def end(self, game: str, result: Mapping[str, Any]) -> None:
        if self._runner is not None:
            try:
                self._runner.end(game, dict(result))
            except Exception:  # the game is over: the bot's error changes nothing
                logger.debug("bot %s raised in end()", self.name, exc_info=True)

    def close(self) -> None:
        self._runner = None

    def stderr_tail(self) -> str:
        return ""


# --- players in their own process ---------------------------------------------------------


#: How the sandbox's own tools begin their error messages (the harness failed, not the bot).
HARNESS_ERRORS = ("bwrap:", "setpriv:")
#: The interpreter of Python bots, as seen inside the sandbox (Debian's python3).
BOT_PYTHON = Path("/usr/bin/python3")


class Launcher(Protocol):
    """Starts and stops bot processes: a :class:`~arena.match.sandbox.Sandbox` or plain ones."""

    def spawn(
        self, files: Mapping[str, Path], argv: Sequence[str], *, interpreter: Path
    ) -> subprocess.Popen[bytes]:
        """Start ``interpreter argv...`` with ``files`` (inside path -> host path) visible."""

    def kill(self, proc: subprocess.Popen[bytes]) -> None:
        """Stop every process of the bot and reap them."""


class PlainLauncher:
    """UNSANDBOXED plain subprocesses: a developer's own bots on their own machine only.

    Python bots run under this process's interpreter (``python``).
    """

    def __init__(self, python: Path | None = None) -> None:
        self.python = python or Path(sys.executable)

    def spawn(
        self, files: Mapping[str, Path], argv: Sequence[str], *, interpreter: Path
    ) -> subprocess.Popen[bytes]:
        # Debian's python3 (the sandbox's) becomes ours; a bot file run as a program
        # is found at its host path.
        program = self.python if interpreter == BOT_PYTHON else interpreter
        return plain_spawn(files, argv, interpreter=files.get(str(interpreter), program))

    def kill(self, proc: subprocess.Popen[bytes]) -> None:
        kill_process_group(proc)


#: Decisions a game is assumed to need at most, at its full move time each, for the CPU
#: backstop of a bot process (:func:`match_cpu_seconds`); generous on purpose: the referee's
#: clock, not this limit, is what times a bot out.
CPU_DECISIONS_PER_GAME = 30


def match_cpu_seconds(games: int, clock: TimeControl) -> int:
    """The CPU-time backstop (``RLIMIT_CPU``) for a bot process that plays ``games`` games
    under ``clock``: its start-up, then each game's bank and :data:`CPU_DECISIONS_PER_GAME`
    full-time decisions. A bot within its clock never reaches it."""
    per_game = clock.bank_seconds + CPU_DECISIONS_PER_GAME * clock.move_seconds
    return int(clock.startup_seconds + games * per_game) + 1


class ProcessPlayer:
    """A bot in its own long-lived process for the match, speaking ``docs/protocol.md``.

    Args:
        path: the bot file: a ``.py`` file runs under ``botkit.py``; any other file
            is executed directly and must speak the protocol itself.
        launcher: starts and kills the process: a sandbox, or plain subprocesses
            for a developer's own bots.
    """

    def __init__(self, path: Path, launcher: Launcher) -> None:
        self.path = path.resolve()
        self.name = path.stem
        self._launcher = launcher
        #: Games the process will play (set by :func:`play_match`): its CPU backstop.
        self.games = 1
        self._proc: subprocess.Popen[bytes] | None = None
        self._stdin: IO[bytes] | None = None
        self._lines: _LineReader | None = None
        self._stderr = _StderrTail()
        self._seq = 0
        self._batch = 0
        self._cpu_mark = 0.0
        self._sent_at = 0.0
        self._charged: list[float] = []
        self._dead: BotFaultError | None = None
        #: Seconds from starting the process to its handshake reply.
        self.startup_seconds = 0.0
        #: Decisions answered, and the seconds charged for them (total, and the most for one).
        self.decisions = 0
        self.seconds_spent = 0.0
        self.slowest = 0.0

    # -- life cycle --

    def open(self, time_control: TimeControl) -> None:
        files, interpreter, argv = self._command()
        started = time.monotonic()
        launcher = self._launcher
        raise_cpu = getattr(launcher, "with_cpu_seconds", None)
        if raise_cpu is not None:  # a sandbox: its CPU limit must last the whole match
            launcher = self._launcher = raise_cpu(match_cpu_seconds(self.games, time_control))
        try:
            proc = launcher.spawn(files, argv, interpreter=interpreter)
        except (OSError, ArenaError) as exc:
            raise InfrastructureError(f"cannot start bot {self.name}: {exc}") from exc
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        self._proc, self._stdin = proc, proc.stdin
        self._lines = _LineReader(proc.stdout)
        self._stderr.follow(proc.stderr)
        try:
            reply = self._call(
                {"type": "hello", "protocol": botkit.PROTOCOL_VERSION},
                time_control.startup_seconds,
            )
        except BotFaultError as fault:
            self._blame_harness(fault)
            raise
        if reply.get("type") != "hello" or reply.get("protocol") != botkit.PROTOCOL_VERSION:
            raise self._fault(
                Termination.PROTOCOL_ERROR,
                f"bad handshake {json.dumps(reply)[:200]} (expected hello, protocol "
                f"{botkit.PROTOCOL_VERSION})",
            )
        name = reply.get("bot")
        if isinstance(name, str) and name.strip():
            self.name = name.strip()[:64]
        self._cpu_mark = self._cpu_seconds()  # start-up is paid by its own budget
        self.startup_seconds = time.monotonic() - started

    def _blame_harness(self, fault: BotFaultError) -> None:
        """A sandbox that failed to start is the harness's failure, not the bot's.

        Raises:
            InfrastructureError: the stderr tail is the sandbox tools' own complaint.
        """
        self._stderr.join()
        tail = self._stderr.text().lstrip()
        if fault.termination is Termination.CRASH and tail.startswith(HARNESS_ERRORS):
            raise InfrastructureError(
                f"the sandbox of bot {self.name} failed to start: {tail[:300]}"
            ) from None

    def _command(self) -> tuple[dict[str, Path], Path, list[str]]:
        """(files to expose, interpreter, its arguments) as seen inside the sandbox."""
        inside = "/bot/" + self.path.name
        if self.path.suffix == ".py":
            # The kit lives apart, so a bot file may be called anything (even botkit.py).
            files = {inside: self.path, "/kit/botkit.py": BOTKIT}
            return files, BOT_PYTHON, ["-I", "/kit/botkit.py", inside]
        return {inside: self.path}, Path(inside), []

    def close(self) -> None:
        if self._proc is None:
            return
        if self._dead is None and self._stdin is not None:
            with contextlib.suppress(BotFaultError):
                self._write({"type": "quit"})
        self._launcher.kill(self._proc)
        self._stderr.join()
        if self._lines is not None:
            self._lines.close()
        for stream in (self._proc.stdin, self._proc.stdout, self._proc.stderr):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        self._proc = None

    def stderr_tail(self) -> str:
        return self._stderr.text()

    # -- games --

    def start(
        self, game: str, seat: int, players: int, teams: bool, rules: Rules, seed: int
    ) -> None:
        self._write(
            {
                "type": "start",
                "game": game,
                "seat": seat,
                "players": players,
                "teams": teams,
                "rules": {"name": rules.name, "params": rules.params()},
            }
        )

    def send(self, requests: Sequence[tuple[str, Observation]]) -> None:
        self._seq += 1
        self._batch = len(requests)
        self._sent_at = time.monotonic()
        self._write(
            {
                "type": "act",
                "seq": self._seq,
                "requests": [{"game": g, "observation": o.to_dict()} for g, o in requests],
            }
        )

    def receive(self, time_control: TimeControl, banks: Sequence[float]) -> list[Answer]:
        # CPU: every game of the batch may spend its move time and its bank. Wall
        # clock (for bots that sleep): a multiple of the moves plus the largest bank.
        cpu_budget = sum(time_control.move_seconds + max(0.0, bank) for bank in banks)
        wall = len(banks) * time_control.move_seconds + max(0.0, *banks)
        deadline = self._sent_at + wall * time_control.wall_factor + 0.5
        reply = self._read_reply(deadline, cpu_budget)
        # All CPU since the last reply is charged: a bot that thinks between its
        # moves (a thread left running) pays for it on the next one.
        cpu = self._cpu_seconds()
        spent = cpu - self._cpu_mark if cpu > 0 else time.monotonic() - self._sent_at
        self._cpu_mark = cpu
        self._charged = [spent / self._batch] * self._batch
        self.decisions += self._batch
        self.seconds_spent += spent
        self.slowest = max(self.slowest, spent / self._batch)
        if reply.get("type") != "moves" or reply.get("seq") != self._seq:
            raise self._fault(
                Termination.PROTOCOL_ERROR,
                f"expected the moves of request {self._seq}, got {json.dumps(reply)[:200]}",
            )
        moves = reply.get("moves")
        if not isinstance(moves, list) or len(moves) != self._batch:
            raise self._fault(
                Termination.PROTOCOL_ERROR, f"expected {self._batch} moves, got {str(moves)[:200]}"
            )
        return [_answer(item) for item in moves]

    def charged(self) -> list[float]:
        return self._charged

    def end(self, game: str, result: Mapping[str, Any]) -> None:
        if self._dead is None:
            with contextlib.suppress(BotFaultError):
                self._write({"type": "end", "game": game, "result": dict(result)})

    # -- the wire --

    def _call(self, message: dict[str, Any], seconds: float) -> dict[str, Any]:
        self._write(message)
        return self._read_reply(time.monotonic() + seconds)

    def _write(self, message: dict[str, Any]) -> None:
        if self._dead is not None:
            raise self._dead
        assert self._stdin is not None
        try:
            self._stdin.write(json.dumps(message, separators=(",", ":")).encode() + b"\n")
            self._stdin.flush()
        except (BrokenPipeError, ConnectionResetError, ValueError):
            raise self._fault(Termination.CRASH, self._exit_text("closed its input")) from None

    def _read_reply(self, deadline: float, cpu_budget: float | None = None) -> dict[str, Any]:
        """The next message; TIMEOUT past ``deadline`` or once the bot has used more
        than ``cpu_budget`` CPU seconds since its last reply (checked every 0.25 s)."""
        if self._dead is not None:
            raise self._dead
        assert self._lines is not None
        while True:
            try:
                line = self._lines.read_line(min(deadline, time.monotonic() + CPU_POLL_SECONDS))
                break
            except TimeoutError:
                if time.monotonic() >= deadline:
                    raise self._fault(Termination.TIMEOUT, "no reply in time") from None
                used = self._cpu_seconds() - self._cpu_mark
                if cpu_budget is not None and used > cpu_budget:
                    raise self._fault(
                        Termination.TIMEOUT, f"no reply after {used:.1f} s of CPU time"
                    ) from None
            except _LineTooLongError:
                raise self._fault(
                    Termination.PROTOCOL_ERROR,
                    f"a reply line longer than {MAX_LINE_BYTES} bytes",
                ) from None
        if line is None:
            raise self._fault(Termination.CRASH, self._exit_text("exited"))
        try:
            reply = json.loads(line)
        except (ValueError, RecursionError):
            raise self._fault(
                Termination.PROTOCOL_ERROR, f"not a JSON message: {line[:120]!r}"
            ) from None
        if not isinstance(reply, dict):
            raise self._fault(Termination.PROTOCOL_ERROR, f"not a JSON object: {line[:120]!r}")
        if self._lines.has_more():
            raise self._fault(Termination.PROTOCOL_ERROR, "sent lines nobody asked for")
        return reply

    def _fault(self, termination: Termination, message: str) -> BotFaultError:
        """Mark the process dead (it is killed at close) and return the fault."""
        self._dead = BotFaultError(termination, message)
        if self._proc is not None:
            self._launcher.kill(self._proc)
        return self._dead

    def _exit_text(self, what: str) -> str:
        code = None if self._proc is None else self._proc.poll()
        return f"the bot {what}" + ("" if code is None else f" (exit status {code})")

    def _cpu_seconds(self) -> float:
        """CPU time of the bot's process tree so far (0.0 where /proc cannot tell)."""
        return 0.0 if self._proc is None else _tree_cpu_seconds(self._proc.pid)


def _answer(item: object) -> Answer:
    if isinstance(item, str):
        try:
            return Move.parse(item)
        except ArenaError:
            return BotFaultError(Termination.ILLEGAL_MOVE, f"answered {item[:40]!r}, not a move")
    if isinstance(item, dict):
        kind = item.get("error")
        message = str(item.get("message", ""))[:500]
        if kind == "crash":
            return BotFaultError(Termination.CRASH, message or "the bot raised an exception")
        if kind == "illegal":
            return BotFaultError(Termination.ILLEGAL_MOVE, message or "the bot chose no legal move")
    return BotFaultError(Termination.PROTOCOL_ERROR, f"not a move: {str(item)[:80]!r}")


class _LineTooLongError(Exception):
    pass


class _LineReader:
    """Reads lines from a pipe with a deadline and a length cap."""

    def __init__(self, stream: IO[bytes]) -> None:
        self._fd = stream.fileno()
        os.set_blocking(self._fd, False)
        self._selector = selectors.DefaultSelector()
        self._selector.register(self._fd, selectors.EVENT_READ)
        self._buffer = bytearray()
        self._eof = False

    def read_line(self, deadline: float) -> str | None:
        """The next line (without newline), None at end of input; TimeoutError past the deadline."""
        while True:
            end = self._buffer.find(b"\n")
            if end >= 0:
                line = bytes(self._buffer[:end])
                del self._buffer[: end + 1]
                return line.decode("utf-8", "replace")
            if len(self._buffer) > MAX_LINE_BYTES:
                raise _LineTooLongError
            if self._eof:
                return None
            left = deadline - time.monotonic()
            if left <= 0 or not self._selector.select(left):
                raise TimeoutError
            self._fill()

    def _fill(self) -> None:
        try:
            chunk = os.read(self._fd, 1 << 16)
        except BlockingIOError:
            return
        if chunk:
            self._buffer += chunk
        else:
            self._eof = True

    def close(self) -> None:
        """Stop watching the pipe (the caller closes it)."""
        self._selector.close()

    def has_more(self) -> bool:
        """Whether more bytes arrived after the line just read (an unsolicited line)."""
        if not self._buffer and self._selector.select(0):
            self._fill()
        return bool(self._buffer.strip())


class _StderrTail:
    """Drains a bot's stderr in a thread, keeping the last bytes."""

    def __init__(self) -> None:
        self._tail: collections.deque[bytes] = collections.deque()
        self._size = 0
        self._total = 0
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def follow(self, stream: IO[bytes]) -> None:
        self._thread = threading.Thread(target=self._drain, args=(stream,), daemon=True)
        self._thread.start()

    def _drain(self, stream: IO[bytes]) -> None:
        while chunk := stream.read1(1 << 16) if hasattr(stream, "read1") else stream.read(4096):
            with self._lock:
                self._tail.append(chunk)
                self._size += len(chunk)
                self._total += len(chunk)
                while self._size - len(self._tail[0]) >= STDERR_TAIL_BYTES:
                    self._size -= len(self._tail.popleft())

    def join(self) -> None:
        if self._thread is not None:
            self._thread.join(timeout=2)

    def text(self, settle: float = 0.02, patience: float = 0.3) -> str:
        """The tail, once the bot has stopped writing for ``settle`` seconds (a crashing
        bot's traceback may still be in the pipe when its reply arrives)."""
        deadline = time.monotonic() + patience
        while True:
            with self._lock:
                seen = self._total
            if self._thread is None or not self._thread.is_alive():
                break
            time.sleep(settle)
            with self._lock:
                if self._total == seen or time.monotonic() > deadline:
                    break
        with self._lock:
            data = b"".join(self._tail)[-STDERR_TAIL_BYTES:]
        return data.decode("utf-8", "replace")


_CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _tree_cpu_seconds(root: int) -> float:
    """CPU seconds of ``root`` and its live descendants (every thread), from /proc.

    Nanoseconds from each thread's ``schedstat`` where the kernel keeps them, else
    the clock ticks (10 ms) of ``stat``.
    """
    total = 0.0
    stack = [root]
    while stack:
        pid = stack.pop()
        try:
            tasks = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tasks:
            total += _task_cpu_seconds(f"/proc/{pid}/task/{tid}")
            try:
                with open(f"/proc/{pid}/task/{tid}/children", "rb") as handle:
                    stack.extend(int(child) for child in handle.read().split())
            except (OSError, ValueError):
                continue
    return total


def _task_cpu_seconds(task: str) -> float:
    try:
        with open(f"{task}/schedstat", "rb") as handle:
            return int(handle.read().split()[0]) / 1e9
    except (OSError, IndexError, ValueError):
        pass
    try:
        with open(f"{task}/stat", "rb") as handle:
            fields = handle.read().rsplit(b")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / _CLOCK_TICKS  # utime, stime
    except (OSError, IndexError, ValueError):
        return 0.0


# --- the match ------------------------------------------------------------------------------


@dataclass
class _Live:
    index: int
    id: str
    game: Game
    banks: list[float]
    verdict: Verdict | None = None
    seats_started: set[int] = field(default_factory=set)


def play_match(
    rules: Rules,
    players: Sequence[Player],
    *,
    games: int,
    seed: int,
    teams: bool = False,
    concurrency: int = 16,
    time_control: TimeControl | None = None,
) -> Iterator[GameOutcome]:
    """Play ``games`` games with ``players[seat]`` at each seat; yield each game as it ends.

    Up to ``concurrency`` games are played at once, and each bot gets all its
    pending decisions in one message. Game ``i`` is seeded by
    :func:`arena.match.play.game_seeds` from ``seed``. Players are opened first and
    closed at the end, whatever happens.

    Raises:
        InfrastructureError: the harness failed; the games not yet yielded are void.
        RulesError: the player count or teams are not allowed.
    """
    rules.check_players(len(players), teams)
    clock = time_control or TimeControl()
    seeds = game_seeds(seed, games)
    for player in players:
        if isinstance(player, ProcessPlayer):
            player.games = games
    try:
        broken = _open_all(players, clock)
        yield from _play(rules, players, seeds, teams, concurrency, clock, broken)
    finally:
        for player in players:
            player.close()


def _open_all(players: Sequence[Player], clock: TimeControl) -> dict[int, BotFaultError]:
    broken: dict[int, BotFaultError] = {}
    for seat, player in enumerate(players):
        try:
            player.open(clock)
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
) -> Iterator[GameOutcome]:
    waiting = collections.deque(enumerate(seeds))
    live: list[_Live] = []
    while waiting or live:
        while waiting and len(live) < concurrency:
            index, game_seed = waiting.popleft()
            live.append(_begin(rules, players, index, game_seed, teams, clock, broken))
        _decide(live, players, clock, broken)
        for entry in [e for e in live if e.game.is_terminal()]:
            live.remove(entry)
            _finish(entry, players)
            yield GameOutcome(entry.index, entry.game, entry.verdict)


def _begin(
    rules: Rules,
    players: Sequence[Player],
    index: int,
    game_seed: int,
    teams: bool,
    clock: TimeControl,
    broken: dict[int, BotFaultError],
) -> _Live:
    game = Game(rules, len(players), teams=teams, seed=game_seed)
    entry = _Live(index, f"g{index}", game, [clock.bank_seconds] * len(players))
    for seat, player in enumerate(players):
        if seat in broken:
            continue
        try:
            player.start(entry.id, seat, len(players), teams, rules, game_seed)
            entry.seats_started.add(seat)
        except BotFaultError as fault:
            broken[seat] = fault
    return entry


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
            players[seat].send([(e.id, e.game.observation(seat)) for e in entries])
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
        answers = player.receive(clock, [e.banks[seat] for e in entries])
    except BotFaultError as fault:
        broken[seat] = fault
        for entry in entries:
            _forfeit(entry, seat, fault, player)
        return
    for entry, answer, spent in zip(entries, answers, player.charged(), strict=True):
        entry.banks[seat] -= max(0.0, spent - clock.move_seconds)
        if entry.banks[seat] < 0:
            answer = BotFaultError(
                Termination.TIMEOUT,
                f"used {spent:.2f} s for one move with the time bank spent "
                f"({clock.move_seconds} s a move, {clock.bank_seconds} s bank)",
            )
        if isinstance(answer, BotFaultError):
            _forfeit(entry, seat, answer, player)
        elif answer not in entry.game.legal_moves():
            legal = ", ".join(map(str, entry.game.legal_moves()))
            _forfeit(
                entry,
                seat,
                BotFaultError(Termination.ILLEGAL_MOVE, f"played {answer}; legal: {legal}"),
                player,
            )
        else:
            entry.game.apply(answer)


def _forfeit(entry: _Live, seat: int, fault: BotFaultError, player: Player) -> None:
    entry.verdict = Verdict(seat, fault.termination, fault.message, player.stderr_tail())
    entry.game.forfeit(seat, fault.termination)


def _finish(entry: _Live, players: Sequence[Player]) -> None:
    outcome = entry.game.outcome()
    assert outcome is not None
    result = {
        "termination": outcome.termination.value,
        "winners": list(outcome.winners),
        "scores": list(outcome.scores),
    }
    for seat in entry.seats_started:
        players[seat].end(entry.id, result)
