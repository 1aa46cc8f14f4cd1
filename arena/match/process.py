"""A bot in its own long-lived process for the match (:class:`ProcessPlayer`), speaking the
JSON-lines protocol of ``docs/protocol.md``: started by a launcher -- the sandbox
(:class:`arena.match.sandbox.Sandbox`) or, for a developer's own bots only, plain
subprocesses (:class:`PlainLauncher`) -- timed in CPU time, and judged on every reply."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any, Protocol

from arena.engine.events import Termination
from arena.engine.rules import Rules
from arena.engine.tiles import Move
from arena.errors import ArenaError
from arena.match import botkit
from arena.match.compiler import Built, CompileError, build
from arena.match.cputime import TreeClock
from arena.match.pipes import (
    MAX_LINE_BYTES,
    LineReader,
    LineTooLongError,
    StderrTail,
    output_cap_bytes,
)
from arena.match.players import Request
from arena.match.runtimes import BotRuntime, find_runtime, runtime_of_file
from arena.match.sandbox import Sandbox, kill_process_group, plain_spawn
from arena.match.verdicts import (
    DECISIONS_PER_GAME,
    Answer,
    BotFaultError,
    InfrastructureError,
    TimeControl,
)

__all__ = [
    "BOT_PYTHON",
    "CPU_DECISIONS_PER_GAME",
    "Launcher",
    "PlainLauncher",
    "ProcessPlayer",
    "match_cpu_seconds",
]

#: How often the referee checks a thinking bot's CPU time against its budget.
CPU_POLL_SECONDS = 0.25


BOTKIT = Path(botkit.__file__).resolve()


#: The interpreter of Python bots, as seen inside the sandbox (Debian's python3).
BOT_PYTHON = Path("/usr/bin/python3")


#: The referee's messages are trees it built itself, never circular: skipping the check
#: makes encoding a request a quarter faster (it is sent at every move).
_encode = json.JSONEncoder(separators=(",", ":"), check_circular=False).encode


class Launcher(Protocol):
    """Starts and stops bot processes: a :class:`~arena.match.sandbox.Sandbox` or plain ones."""

    def spawn(
        self,
        files: Mapping[str, Path],
        argv: Sequence[str],
        *,
        interpreter: Path,
        runtime: str | None = None,
    ) -> subprocess.Popen[bytes]:
        """Start ``interpreter argv...`` with ``files`` (inside path -> host path) visible,
        with what ``runtime`` (:mod:`arena.match.runtimes`) needs."""

    def kill(self, proc: subprocess.Popen[bytes]) -> None:
        """Stop every process of the bot and reap them."""

    def started(self, proc: subprocess.Popen[bytes]) -> bool:
        """Whether the launcher's own steps all succeeded and the bot's program ran (asked
        once ``proc`` is killed): if not, its failure is the harness's, not the bot's. Only
        the launcher's own report says so, never what the bot prints (a bot may print a
        sandbox tool's words)."""


class PlainLauncher:
    """UNSANDBOXED plain subprocesses: a developer's own bots on their own machine only.

    Python bots run under this process's interpreter (``python``).
    """

    def __init__(self, python: Path | None = None) -> None:
        self.python = python or Path(sys.executable)

    def spawn(
        self,
        files: Mapping[str, Path],
        argv: Sequence[str],
        *,
        interpreter: Path,
        runtime: str | None = None,
    ) -> subprocess.Popen[bytes]:
        # Debian's python3 (the sandbox's) becomes ours; a bot file run as a program
        # is found at its host path.
        program = self.python if interpreter == BOT_PYTHON else interpreter
        return plain_spawn(files, argv, interpreter=files.get(str(interpreter), program))

    def kill(self, proc: subprocess.Popen[bytes]) -> None:
        kill_process_group(proc)

    def started(self, proc: subprocess.Popen[bytes]) -> bool:
        # Popen raises if the program (or setpriv) cannot be started; past that, setpriv only
        # execs the bot's own interpreter or file: a failure is the bot's.
        return True


#: Decisions a game is assumed to need at most, at its full move time each, for the CPU
#: backstop of a bot process (:func:`match_cpu_seconds`); generous on purpose: the referee's
#: clock, not this limit, is what times a bot out. The match wall bound's count (30 was
#: below the 75-130 decisions a seat of a 2-player game to its target score averages).
CPU_DECISIONS_PER_GAME = DECISIONS_PER_GAME


def match_cpu_seconds(games: int, clock: TimeControl) -> int:
    """The CPU-time backstop (``RLIMIT_CPU``) for a bot process that plays ``games`` games
    under ``clock``: its start-up, then each game's bank and :data:`CPU_DECISIONS_PER_GAME`
    full-time decisions. A bot within its clock never reaches it."""
    per_game = clock.bank_seconds + CPU_DECISIONS_PER_GAME * clock.move_seconds
    return int(clock.startup_seconds + games * per_game) + 1


class ProcessPlayer:
    """A bot in its own long-lived process for the match, speaking ``docs/protocol.md``.

    Args:
        path: the bot file: it runs under its runtime's kit (``botkit.py``, ``botkit.js``);
            a file of no runtime (or a ``.js`` file beginning with ``#!``) is executed
            directly and must speak the protocol itself; a compiled runtime's source is
            compiled first (:meth:`prepare`, :mod:`arena.match.compiler`) and its artefact
            runs.
        launcher: starts and kills the process: a sandbox, or plain subprocesses
            for a developer's own bots.
        runtime: the runtime's name (:data:`arena.match.runtimes.RUNTIMES`); None: the
            one the file's name says (:func:`arena.match.runtimes.runtime_of_file`).

    Raises:
        RuntimeMissing: ``runtime`` is no runtime's name.
    """

    def __init__(self, path: Path, launcher: Launcher, runtime: str | None = None) -> None:
        self.path = path.resolve()
        self.name = path.stem
        self.runtime = runtime_of_file(path) if runtime is None else find_runtime(runtime)
        self._launcher = launcher
        #: Games the process will play (set by :func:`play_match`): its CPU backstop.
        self.games = 1
        self._proc: subprocess.Popen[bytes] | None = None
        self._clock: TreeClock | None = None  # the process tree's CPU time
        self._stdin: IO[bytes] | None = None
        #: Encoded messages waiting to go with the next one written (``start``, ``end``).
        self._outbox: list[str] = []
        self._lines: LineReader | None = None
        self._stderr = StderrTail()
        self._seq = 0
        self._batch = 0
        self._cpu_mark = 0.0
        # The handshake in flight (launch, then greet): sent when, its reply due when, and
        # the fault met sending it.
        self._started = self._deadline = 0.0
        self._greeting: BotFaultError | None = None
        self._sent_at = 0.0
        self._charged: list[float] = []
        self._waited: list[float] = []
        #: The protocol the bot chose in its handshake (2: requests are deltas; 3: events
        #: in notation folded into the round's state by the bot).
        self.protocol = 1
        #: Per game: (round, history events) sent so far, for v2 and v3 requests.
        self._history_sent: dict[str, tuple[int, int]] = {}
        #: Per game: its id as a JSON string (v3's requests are made as text).
        self._game_json: dict[str, str] = {}
        self._dead: BotFaultError | None = None
        #: What is left of the match's wall bound on waiting for this bot (set at open).
        self._wall_left = 0.0
        self._wall_rule = ""
        #: Seconds from starting the process to its handshake reply.
        self.startup_seconds = 0.0
        #: Decisions answered, and the seconds charged for them (total, and the most for one).
        self.decisions = 0
        self.seconds_spent = 0.0
        self.slowest = 0.0
        #: A compiled runtime's artefact, once :meth:`prepare` has it.
        self.built: Built | None = None

    # -- life cycle --

    def prepare(self) -> Built | None:
        """Compile the bot's source if its runtime is compiled (in the sandbox of its slot,
        or unsandboxed with plain processes), or take its artefact from the compile cache;
        None for a runtime that runs its source. Done by :meth:`open` if not before; outside
        every clock of the match.

        Raises:
            CompileError: the source does not compile (the compiler's first lines).
            SandboxUnavailable: the toolchain or the sandbox is missing.
        """
        if self.runtime is None or self.runtime.compiler is None:
            return None
        if self.built is None:
            sandbox = self._launcher if isinstance(self._launcher, Sandbox) else None
            self.built = build(self.path, self.runtime, sandbox)
        return self.built

    def open(self, time_control: TimeControl) -> None:
        self.launch(time_control)
        self.greet(time_control)

    def launch(self, time_control: TimeControl) -> None:
        """The first half of :meth:`open`: build the bot if it is compiled, start its
        process and send it the handshake, whose reply :meth:`greet` reads (the referee
        starts every seat's bot before it waits for the first: their start-ups overlap).

        Raises:
            BotFaultError: the bot does not compile.
            InfrastructureError: it could not be built or its process started.
        """
        try:
            self.prepare()
        except CompileError as exc:
            raise BotFaultError(Termination.CRASH, f"it does not compile: {exc}"[:2000]) from None
        except (OSError, ArenaError) as exc:
            raise InfrastructureError(f"cannot compile bot {self.name}: {exc}") from exc
        files, interpreter, argv = self._command()
        self._started = started = time.monotonic()
        launcher = self._launcher
        raise_cpu = getattr(launcher, "with_cpu_seconds", None)
        if raise_cpu is not None:  # a sandbox: its CPU limit must last the whole match
            launcher = self._launcher = raise_cpu(match_cpu_seconds(self.games, time_control))
        try:
            proc = launcher.spawn(files, argv, interpreter=interpreter, runtime=_name(self.runtime))
        except (OSError, ArenaError) as exc:
            raise InfrastructureError(f"cannot start bot {self.name}: {exc}") from exc
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        self._proc, self._stdin = proc, proc.stdin
        self._clock = TreeClock(proc.pid)
        self._lines = LineReader(proc.stdout)
        self._stderr.limit = output_cap_bytes(self.games)
        self._stderr.follow(proc.stderr)
        self._deadline = started + time_control.startup_seconds
        self._greeting = None
        try:
            # protocol 1 for bots that know only it; "max_protocol" offers deltas (v2) and
            # events folded by the bot (v3)
            self._write({"type": "hello", "protocol": 1, "max_protocol": botkit.PROTOCOL_VERSION})
            self._deadline = time.monotonic() + time_control.startup_seconds
        except BotFaultError as fault:  # (said by greet, as a failed reply is)
            self._greeting = fault

    def greet(self, time_control: TimeControl) -> None:
        """The second half of :meth:`open`: read the handshake's reply (within the time
        control's start-up seconds of sending it) and check it.

        Raises:
            BotFaultError: no reply in time, or a bad one.
            InfrastructureError: the sandbox failed to start.
        """
        started = self._started
        try:
            if self._greeting is not None:
                raise self._greeting
            reply = self._read_reply(self._deadline)
        except BotFaultError as fault:
            self._blame_harness(fault)
            raise self._load_failure() or fault from None
        protocol = reply.get("protocol")
        known = range(1, botkit.PROTOCOL_VERSION + 1)
        if reply.get("type") != "hello" or not isinstance(protocol, int) or protocol not in known:
            raise self._fault(
                Termination.PROTOCOL_ERROR,
                f"bad handshake {json.dumps(reply)[:200]} (expected hello, protocol "
                f"1 to {botkit.PROTOCOL_VERSION})",
            )
        self.protocol = protocol
        name = reply.get("bot")
        if isinstance(name, str) and name.strip():
            self.name = name.strip()[:64]
        self._cpu_mark = self._cpu_seconds()  # start-up is paid by its own budget
        self.startup_seconds = time.monotonic() - started
        self._arm_wall(time_control, self.games, self.startup_seconds)

    def _arm_wall(self, time_control: TimeControl, games: int, used: float) -> None:
        """The match's wall bound for ``games`` games, ``used`` seconds of it spent."""
        bound = time_control.match_wall_seconds(games)
        self._wall_left = bound - used
        self._wall_rule = (
            f"{bound:g} s for {games} game(s): {time_control.startup_seconds:g} s "
            f"start-up + {time_control.game_wall():g} s a game"
        )

    def _blame_harness(self, fault: BotFaultError) -> None:
        """A sandbox that failed to start is the harness's failure, not the bot's: the
        launcher's own report says whether it started the bot (:meth:`Launcher.started`),
        never the words on its stderr, which a bot may write itself.

        Raises:
            InfrastructureError: the process ended before the launcher had started the bot
                (the message holds what the launcher's tools wrote).
        """
        if fault.termination is not Termination.CRASH or self._proc is None:
            return
        self._launcher.kill(self._proc)  # (reaped: the launcher's report is whole)
        if self._launcher.started(self._proc):
            return
        self._stderr.join()
        tail = self._stderr.text().strip()
        raise InfrastructureError(
            f"the sandbox of bot {self.name} failed to start: {tail[:300] or 'it said nothing'}"
        ) from None

    def _load_failure(self) -> BotFaultError | None:
        """The kit's own report when a Python bot could not be loaded (a SyntaxError, an
        exception at import): the verdict says what and where, not just "exited"."""
        lines = self._stderr.text().strip().splitlines()
        if lines and lines[-1].startswith("botkit: "):
            return BotFaultError(Termination.CRASH, lines[-1].removeprefix("botkit: ")[:500])
        return None

    def _command(self) -> tuple[dict[str, Path], Path, list[str]]:
        """(files to expose, interpreter, its arguments) as seen inside the sandbox."""
        inside = "/bot/" + self.path.name
        runtime = self.runtime
        if runtime is None:
            return {inside: self.path}, Path(inside), []
        limits = getattr(self._launcher, "limits", None)
        memory_mb = int(getattr(limits, "memory_mb", 512))
        if runtime.compiler is not None and self.built is not None:
            inside = "/bot/" + runtime.compiler.artefact
            if not runtime.interpreter:  # the artefact is the program
                return {inside: self.built.path}, Path(inside), []
            if not runtime.kit:  # an artefact run by an interpreter (java's jar: its kit in it)
                files = {inside: self.built.path}
                return files, Path(runtime.interpreter), runtime.program_argv(inside, memory_mb)
            # (an artefact run by an interpreter with the runtime's kit beside it)
            kit = f"/kit/{runtime.kit}"
            files = {inside: self.built.path, kit: BOTKIT.with_name(runtime.kit)}
            return files, Path(runtime.interpreter), runtime.argv(kit, inside, memory_mb)
        interpreter = Path(runtime.interpreter)
        if runtime.name == "javascript" and _starts_with_hashbang(self.path):
            return {inside: self.path}, interpreter, runtime.program_argv(inside, memory_mb)
        # The kit lives apart, so a bot file may be called anything (even botkit.py).
        kit = f"/kit/{runtime.kit}"
        files = {inside: self.path, kit: BOTKIT.with_name(runtime.kit)}
        return files, interpreter, runtime.argv(kit, inside, memory_mb)

    def alive(self) -> bool:
        """Whether the bot's process runs and has not failed."""
        return self._dead is None and self._proc is not None and self._proc.poll() is None

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
        if self._clock is not None:
            self._clock.close()
        self._proc = self._clock = None

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
            },
            later=True,
        )

    def send(self, requests: Sequence[Request]) -> None:
        self._seq += 1
        self._batch = len(requests)
        self._sent_at = time.monotonic()
        if self.protocol >= 3:  # made as text: the one request sent at every move
            items = ",".join(self._wire(requests))
            self._write_text(f'{{"type":"act","seq":{self._seq},"requests":[{items}]}}')
            return
        if self.protocol == 2:
            requests_sent = [{"game": r.game, "delta": self._delta(r)} for r in requests]
        else:
            requests_sent = [
                {"game": r.game, "observation": r.observation().to_dict()} for r in requests
            ]
        self._write({"type": "act", "seq": self._seq, "requests": requests_sent})

    def _wire(self, requests: Sequence[Request]) -> list[str]:
        """Protocol v3, as JSON text: for each game, the events since this bot's last
        request in it (with the round's start at its first request in a round), and the
        legal moves."""
        sent_so_far = self._history_sent
        ids = self._game_json
        items = []
        for request in requests:
            game, number = request.game, request.round
            sent = sent_so_far.get(game)
            if sent is not None and sent[0] == number:
                members, count = request.wire_json(sent[1], False)
            else:
                members, count = request.wire_json(0, True)
            sent_so_far[game] = (number, count)
            quoted = ids.get(game)
            if quoted is None:
                quoted = ids[game] = _encode(game)
            items.append(f'{{"game":{quoted},{members}}}')
        return items

    def _delta(self, request: Request) -> dict[str, Any]:
        """Protocol v2: what changed since this bot's last request in the game's round."""
        number = request.round
        sent = self._history_sent.get(request.game)
        since = sent[1] if sent is not None and sent[0] == number else 0
        delta = request.delta(since)
        self._history_sent[request.game] = (number, since + len(delta["events"]))
        return delta

    def receive(
        self, time_control: TimeControl, banks: Sequence[float], wall_banks: Sequence[float]
    ) -> list[Answer]:
        # CPU: every game of the batch may spend its move time and its bank. Wall clock
        # (for bots that sleep): each game's free wall time plus the largest wall bank left
        # (the referee charges each game its share of the wait beyond its free time).
        cpu_budget = sum(time_control.move_seconds + max(0.0, bank) for bank in banks)
        wall = len(banks) * time_control.wall_seconds + max(0.0, *wall_banks)
        # The match's wall bound (TimeControl.match_wall_seconds) cuts a wait short.
        # the limit it broke, said: the whole rule (a caller may add whose)
        late = f"no reply within the time control ({time_control.rule()})"
        deadline = self._sent_at + wall + 0.5
        if self._sent_at + self._wall_left < deadline:
            late = f"the bot's waits used up the match's wall-clock bound ({self._wall_rule})"
            deadline = self._sent_at + max(0.0, self._wall_left)
        try:
            reply = self._read_reply(deadline, cpu_budget, late, time_control.rule())
        finally:
            self._wall_left -= time.monotonic() - self._sent_at
        self._waited = [(time.monotonic() - self._sent_at) / self._batch] * self._batch
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

    def waited(self) -> list[float]:
        return self._waited

    def end(self, game: str, result: Mapping[str, Any]) -> None:
        self._history_sent.pop(game, None)
        self._game_json.pop(game, None)
        if self._dead is None:
            with contextlib.suppress(BotFaultError):
                self._write({"type": "end", "game": game, "result": dict(result)}, later=True)

    # -- the wire --

    def _call(self, message: dict[str, Any], seconds: float) -> dict[str, Any]:
        self._write(message)
        return self._read_reply(time.monotonic() + seconds)

    def _write(self, message: dict[str, Any], *, later: bool = False) -> None:
        """Send one message; with ``later`` (``start``, ``end``: nothing is answered) keep it
        to go with the next message sent now, in one write: a write that wakes the bot costs
        a round trip's share on a busy machine, and a match has two such messages a game."""
        self._write_text(_encode(message), later=later)

    def _write_text(self, message: str, *, later: bool = False) -> None:
        """:meth:`_write` for a message already encoded."""
        if self._dead is not None:
            raise self._dead
        assert self._stdin is not None
        self._outbox.append(message)
        if later:
            return
        data = "\n".join(self._outbox) + "\n"
        self._outbox.clear()
        try:
            self._stdin.write(data.encode())
            self._stdin.flush()
        except (BrokenPipeError, ConnectionResetError, ValueError):
            raise self._fault(Termination.CRASH, self._exit_text("closed its input")) from None

    def _read_reply(
        self,
        deadline: float,
        cpu_budget: float | None = None,
        late: str = "no reply in time",
        rule: str = "",
    ) -> dict[str, Any]:
        """The next message; TIMEOUT (saying ``late``) past ``deadline`` or once the bot has
        used more than ``cpu_budget`` CPU seconds since its last reply (saying the time
        control's ``rule``), PROTOCOL_ERROR once its stderr is over its cap (both checked
        every 0.25 s)."""
        if self._dead is not None:
            raise self._dead
        assert self._lines is not None
        while True:
            self._check_flood()
            try:
                line = self._lines.read_line(min(deadline, time.monotonic() + CPU_POLL_SECONDS))
                break
            except TimeoutError:
                if time.monotonic() >= deadline:
                    raise self._fault(Termination.TIMEOUT, late) from None
                used = self._cpu_seconds() - self._cpu_mark
                if cpu_budget is not None and used > cpu_budget:
                    over = f"no reply after {used:.1f} s of CPU time"
                    if rule:
                        over = f"{over}, over the time control ({rule})"
                    raise self._fault(Termination.TIMEOUT, over) from None
            except LineTooLongError:
                raise self._fault(
                    Termination.PROTOCOL_ERROR,
                    f"a reply line longer than {MAX_LINE_BYTES} bytes",
                ) from None
        self._check_flood()
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

    def _check_flood(self) -> None:
        """PROTOCOL_ERROR if the bot wrote more to stderr than its cap for the match."""
        if self._stderr.flooded:
            raise self._fault(
                Termination.PROTOCOL_ERROR,
                f"flooded its output: more than {self._stderr.limit:,} bytes to stderr, the "
                f"cap for a match of {self.games} game(s) (a Python bot's print() goes there)",
            )

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
        return 0.0 if self._clock is None else self._clock.seconds()

    # -- kept between matches (arena.match.warm) --

    @property
    def pid(self) -> int | None:
        """The process's id (the sandbox's outermost), None when not running."""
        return None if self._proc is None else self._proc.pid

    def quiet(self) -> bool:
        """Whether the bot has written nothing since its last reply."""
        return self._lines is None or not self._lines.has_more()

    def ping(self, seconds: float) -> bool:
        """Whether the bot answers an empty ``act`` (after every message sent before it)
        within ``seconds`` with nothing else written first; its clock restarts from the
        answer. A bot that does not is marked dead (killed at close)."""
        self._seq += 1
        try:
            reply = self._call({"type": "act", "seq": self._seq, "requests": []}, seconds)
        except BotFaultError:
            return False
        self._cpu_mark = self._cpu_seconds()
        return reply == {"type": "moves", "seq": self._seq, "moves": []}

    def rearm(self, time_control: TimeControl, games: int, used: float = 0.0) -> None:
        """Begin a match of ``games`` games in a process kept from an earlier one
        (:mod:`arena.match.warm`): the match's wall bound (``used`` seconds of it spent) and
        its output cap count from now, for these games (the CPU backstop, set at start,
        covers the process's whole life)."""
        self._arm_wall(time_control, games, used)
        self._stderr.limit = self._stderr.total + output_cap_bytes(games)

    def settle(self) -> float:
        """CPU seconds the bot used since its last reply; its clock restarts from now."""
        cpu = self._cpu_seconds()
        idle, self._cpu_mark = max(0.0, cpu - self._cpu_mark), cpu
        return idle


def _name(runtime: BotRuntime | None) -> str | None:
    return None if runtime is None else runtime.name


def _starts_with_hashbang(path: Path) -> bool:
    """Whether a file begins with ``#!`` (a program that speaks the protocol itself)."""
    try:
        with path.open("rb") as handle:
            return handle.read(2) == b"#!"
    except OSError:
        return False


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
