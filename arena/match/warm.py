"""Warm bots: a bot's process kept running from one match to the next where the same bots
meet again (the looks of a compare, a ladder's matches between one pair, a gauntlet's
games), so a match between warm bots starts in well under a millisecond instead of the
sandbox's 55-200 ms.

The rule (docs/workers.md, "Warm bots"): what a reused process may carry is what it
learned in earlier matches *of the same key*, and nothing else. A kept process is reused
only for the same :class:`WarmKey`:

- the bot: its file (path, size and modification time: in workers the file is named by
  its source's hash) and its runtime, and which copy it is in the match (a bot playing
  itself runs two processes);
- its opponents: the other seats' bot files (or built-in strategies), as a sorted tuple:
  a fresh process for every other opponent set;
- the match's setup (:class:`MatchSetup`): the rule set's version, players, teams, the
  time control, and the *scope*, the tournament the match belongs to (``tournament-ID``
  on the workers; a compare's run locally): a process never carries data from one
  tournament (a class's private grading, say) into another (a public ladder);
- the sandbox's limits, and sandboxed or not.

And only while it is sound and young:

- after a match in which every game it started also ended, the process still runs,
  has made no fault, answers an empty ``act`` within :data:`PING_SECONDS` (once it has
  read the games' ends) with nothing else written first, and writes nothing after;
- between matches it is stopped (``SIGSTOP`` of its whole tree: a thread it left running
  can neither think nor talk), and resumed when reused; CPU it spent after its last
  reply beyond :data:`IDLE_CPU_SECONDS` makes it retire instead;
- at most :data:`MAX_GAMES` games and :data:`MAX_MINUTES` minutes of life, and its
  tree's resident memory (from /proc) at most :data:`MEMORY_SHARE` of its memory limit
  when a match ends; past any cap it retires and the next match starts it afresh;
- each kept bot holds a sandbox slot (a uid) of this process's block
  (:func:`arena.match.sandbox.process_slots`): when a match needs slots the block no
  longer has, the least recently used kept bots are stopped;
- the pool is this OS process's: a forked child never uses its parent's processes; they
  are released by :func:`release_warm` (at exit, a worker's process shutdown, a compare's
  end).
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import signal
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.engine.rules import Rules
from arena.match.cputime import walk_tree
from arena.match.players import Request
from arena.match.process import Launcher, ProcessPlayer
from arena.match.sandbox import SLOT_BLOCK, Limits
from arena.match.verdicts import Answer, TimeControl

__all__ = [
    "IDLE_CPU_SECONDS",
    "MAX_GAMES",
    "MAX_MINUTES",
    "MEMORY_SHARE",
    "PING_SECONDS",
    "KeptPlayer",
    "MatchSetup",
    "WarmKey",
    "WarmPool",
    "release_warm",
    "tree_rss_bytes",
    "warm_pool",
]

logger = logging.getLogger(__name__)

#: Games a kept process plays at most (its CPU backstop covers them all).
MAX_GAMES = 2000
#: Minutes a kept process lives at most.
MAX_MINUTES = 10.0
#: A kept process whose tree holds more than this share of its memory limit (resident,
#: read from /proc when a match ends) retires.
MEMORY_SHARE = 0.5
#: CPU seconds a kept process may spend after its last reply and still be reused.
IDLE_CPU_SECONDS = 0.5
#: Wall seconds a kept process has, once a match ends, to answer an empty ``act`` (after
#: reading the games' ends): one that does not is not kept.
PING_SECONDS = 1.0


@dataclass(frozen=True, slots=True)
class MatchSetup:
    """What a match shares with the next for its kept bots to be reused.

    Attributes:
        rules: the rule set's version (:attr:`arena.engine.rules.Rules.version`).
        players: seats in the match.
        teams: team play.
        time_control: the match's clock (None: the default one).
        scope: what the match belongs to (``tournament-ID`` on the workers): a process
            never crosses scopes.
    """

    rules: str
    players: int
    teams: bool
    time_control: TimeControl | None = None
    scope: str = ""


@dataclass(frozen=True, slots=True)
class WarmKey:
    """A kept process's identity: it is reused only for a seat with the same key.

    Attributes:
        bot: the bot file's identity (resolved path, size, modification time).
        runtime: the bot's runtime.
        copy: which copy of the bot this seat is (0 unless a bot plays itself).
        opponents: the other seats' identities (files, or strategies' names), sorted.
        setup: the match's setup (rules, seats, clock, scope).
        limits: the sandbox's limits (None: unsandboxed, or the defaults).
        sandboxed: whether the bot runs in the sandbox.
    """

    bot: str
    runtime: str
    copy: int
    opponents: tuple[str, ...]
    setup: MatchSetup
    limits: Limits | None
    sandboxed: bool


def tree_rss_bytes(root: int) -> int:
    """Resident memory of ``root`` and its live descendants, from /proc (0 where unknown)."""
    total = 0
    for pid in _tree(root):
        try:
            with open(f"/proc/{pid}/statm", "rb") as handle:
                total += int(handle.read().split()[1]) * _PAGE
        except (OSError, IndexError, ValueError):
            continue
    return total


_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def _tree(root: int) -> list[int]:
    """``root`` and its live descendants (parents first)."""
    return [pid for pid, _ in walk_tree(root)]


def _signal_tree(root: int, signum: int) -> None:
    for pid in _tree(root):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signum)


class KeptPlayer:
    """A bot file's :class:`ProcessPlayer` kept running from one match to the next under
    the rule of this module: :meth:`close` ends a match (the process is kept if sound,
    stopped with ``SIGSTOP`` until the next match), :meth:`release` stops the bot.

    The process is reused only after a match in which every game it started also ended
    and the bot is still sound; otherwise, or past a cap (``games`` games in all, its CPU
    backstop; ``max_minutes``; ``memory_bytes`` resident), the next match starts a fresh
    one.
    """

    def __init__(
        self,
        path: Path,
        launcher: Launcher,
        games: int = MAX_GAMES,
        *,
        max_minutes: float = MAX_MINUTES,
        memory_bytes: int | None = None,
        slot: int | None = None,
        runtime: str | None = None,
    ) -> None:
        self.path = path
        #: The runtime it runs under (None: its file's name says, arena.match.runtimes).
        self.runtime = runtime
        self.name = path.stem
        self.slot = slot
        self._launcher = launcher
        self._games = games
        #: Games of the match about to be played (set by the referee, as a ProcessPlayer's).
        self.games = 1
        self._max_seconds = max_minutes * 60
        self._memory_bytes = memory_bytes
        self._inner: ProcessPlayer | None = None
        self._open_games: set[str] = set()
        self._born = 0.0
        self._played = 0
        self._match_games = 0
        self._paused = False
        self._greeting = False  # a new process's handshake sent, its reply not yet read
        #: Processes started (1 for a bot kept for every match).
        self.starts = 0
        #: Why the last process retired ("" while none did).
        self.retired = ""

    # -- between matches --

    @property
    def pid(self) -> int | None:
        """The running process's id (None between processes)."""
        return None if self._inner is None else self._inner.pid

    def age_seconds(self) -> float:
        """Seconds since its process started."""
        return time.monotonic() - self._born

    @property
    def warm(self) -> bool:
        """Whether a process is kept for the next match."""
        return self._inner is not None

    def _retire(self, why: str) -> None:
        logger.debug("kept bot %s (slot %s) retires: %s", self.name, self.slot, why)
        self.retired = why
        self.release()

    def _unsound(self, games: int) -> str:
        """Why the kept process may not play a next match of ``games`` games ("" if it may)."""
        inner = self._inner
        if inner is None:
            return ""
        if self._open_games:
            return "a game it started did not end"
        if not inner.alive():
            return "it exited or faulted"
        if self.age_seconds() > self._max_seconds:
            return f"older than {self._max_seconds / 60:g} minutes"
        if self._played + games > self._games:
            return f"another match would pass {self._games} games"
        return ""

    def _memory_check(self) -> str:
        pid = self.pid
        if pid is None or self._memory_bytes is None:
            return ""
        rss = tree_rss_bytes(pid)
        if rss > self._memory_bytes:
            return f"resident memory {rss // 2**20} MiB over {self._memory_bytes // 2**20} MiB"
        return ""

    def _pause(self) -> None:
        pid = self.pid
        if pid is not None and not self._paused:
            _signal_tree(pid, signal.SIGSTOP)
            self._paused = True

    def _resume(self) -> None:
        pid = self.pid
        if pid is not None and self._paused:
            _signal_tree(pid, signal.SIGCONT)
        self._paused = False

    def _reuse_check(self) -> str:
        """Resume a kept process for a new match; why it may not play ("" if it may)."""
        self._resume()
        inner = self._inner
        if inner is None:
            return ""
        why = self._unsound(self.games)
        if why:
            return why
        if not inner.quiet():
            return "it wrote after its last reply"
        idle = inner.settle()
        if idle > IDLE_CPU_SECONDS:
            return f"it used {idle:.2f} s of CPU after its last reply"
        return ""

    # -- the Player protocol --

    def open(self, time_control: TimeControl) -> None:
        self.launch(time_control)
        self.greet(time_control)

    def launch(self, time_control: TimeControl) -> None:
        """The first half of :meth:`open` (as :meth:`ProcessPlayer.launch`): a kept process
        is resumed and ready; a new one is started, its handshake sent."""
        why = self._reuse_check()
        if why:
            self._retire(why)
        self._match_games = 0
        self._greeting = False
        if self._inner is not None:
            self._inner.rearm(time_control, self.games)
            return
        inner = ProcessPlayer(self.path, self._launcher, self.runtime)
        inner.games = self._games  # the CPU backstop: the process's whole life
        self._inner = inner
        self._open_games.clear()
        self._born = time.monotonic()
        self._played = 0
        self.starts += 1
        inner.launch(time_control)
        self._greeting = True

    def greet(self, time_control: TimeControl) -> None:
        """The second half of :meth:`open`: a new process's handshake reply read."""
        if not self._greeting:
            return
        self._greeting = False
        inner = self._player()
        inner.greet(time_control)
        # The wall bound and the output cap are this match's (the CPU backstop, its life's).
        inner.rearm(time_control, self.games, inner.startup_seconds)
        self.name = inner.name

    def _player(self) -> ProcessPlayer:
        assert self._inner is not None, "open() first"
        return self._inner

    def start(
        self, game: str, seat: int, players: int, teams: bool, rules: Rules, seed: int
    ) -> None:
        self._open_games.add(game)
        self._played += 1
        self._match_games += 1
        self._player().start(game, seat, players, teams, rules, seed)

    def send(self, requests: Sequence[Request]) -> None:
        self._player().send(requests)

    def receive(
        self, time_control: TimeControl, banks: Sequence[float], wall_banks: Sequence[float]
    ) -> list[Answer]:
        return self._player().receive(time_control, banks, wall_banks)

    def charged(self) -> list[float]:
        return self._player().charged()

    def waited(self) -> list[float]:
        return self._player().waited()

    def end(self, game: str, result: Mapping[str, Any]) -> None:
        self._open_games.discard(game)
        self._player().end(game, result)

    def stderr_tail(self) -> str:
        return "" if self._inner is None else self._inner.stderr_tail()

    def close(self) -> None:
        """End the match: the bot is kept (stopped until the next) if sound, else stopped."""
        if self._inner is None:
            return
        why = self._unsound(self._match_games) or self._memory_check()
        if not why and not self._player().ping(PING_SECONDS):
            why = "it did not answer once the match ended"
        if why:
            self._retire(why)
        else:
            self._pause()

    def release(self) -> None:
        """Stop the bot's process."""
        self._resume()
        inner, self._inner = self._inner, None
        self._open_games.clear()
        if inner is not None:
            inner.close()


class WarmPool:
    """This OS process's kept bots, by :class:`WarmKey`, each in a slot of one block of
    :data:`~arena.match.sandbox.SLOT_BLOCK` slots; the least recently used first out.

    Args:
        max_minutes: a kept process's life (:data:`MAX_MINUTES`).
        memory_share: of its memory limit, what a kept tree may hold (:data:`MEMORY_SHARE`).
    """

    def __init__(
        self, *, max_minutes: float = MAX_MINUTES, memory_share: float = MEMORY_SHARE
    ) -> None:
        self.max_minutes = max_minutes
        self.memory_share = memory_share
        self._kept: OrderedDict[WarmKey, KeptPlayer] = OrderedDict()
        self._block: int | None = None
        self._pid = os.getpid()

    def __len__(self) -> int:
        self._own()
        return len(self._kept)

    def _own(self) -> None:
        """Forget a parent's processes in a forked child (they are the parent's to stop)."""
        if self._pid != os.getpid():
            self._kept.clear()
            self._block = None
            self._pid = os.getpid()

    def _use_block(self, block: int) -> None:
        if self._block != block:
            self.release()
            self._block = block

    def _free(self, block: int, wanted: int, keep: set[WarmKey]) -> list[int]:
        """``wanted`` slots of the block no kept bot holds, in order; the least recently
        used kept bots not in ``keep`` are released to make room.

        Raises:
            ValueError: ``wanted`` more than the block can give beside ``keep``.
        """
        while True:
            held = {p.slot for p in self._kept.values()}
            free = [s for s in range(block, block + SLOT_BLOCK) if s not in held]
            if len(free) >= wanted:
                return free[:wanted]
            victim = next((k for k in self._kept if k not in keep), None)
            if victim is None:
                raise ValueError(f"{wanted} more seats than the slot block holds")
            self._kept.pop(victim).release()

    def slots(self, block: int, seats: Sequence[int]) -> dict[int, int]:
        """A slot for each of ``seats`` (cold bots of a match in this process): slot
        ``block + seat`` where no kept bot holds it, else a free one of the block; kept
        bots are released (least recently used first) where the block is short."""
        self._own()
        if not self._kept or block != self._block:  # no kept bot holds a slot of it
            return {seat: block + seat for seat in seats}
        free = self._free(block, len(seats), set())
        spare = [slot for slot in free if slot - block not in seats]
        return {seat: block + seat if block + seat in free else spare.pop(0) for seat in seats}

    def players(
        self,
        keys: Sequence[WarmKey],
        block: int,
        start: Callable[[WarmKey, int], KeptPlayer],
    ) -> list[KeptPlayer]:
        """The kept player of each key (the least recently used moves last); a key without
        one gets ``start(key, slot)`` in a free slot of ``block``.

        Raises:
            ValueError: more keys than a slot block holds.
        """
        self._own()
        self._use_block(block)
        self._retire_old()
        wanted = set(keys)
        for key in keys:
            if key in self._kept:
                self._kept.move_to_end(key)
        new = [key for key in keys if key not in self._kept]
        for key, slot in zip(new, self._free(block, len(new), wanted), strict=True):
            self._kept[key] = start(key, slot)
        self._register_release()
        return [self._kept[key] for key in keys]

    def _retire_old(self) -> None:
        """Release kept bots past their minutes (an idle worker's bots go at its next match)."""
        limit = self.max_minutes * 60
        for key, player in list(self._kept.items()):
            if player.warm and player.age_seconds() > limit:
                self._kept.pop(key).release()

    def _register_release(self) -> None:
        if self._pid not in _registered:
            _registered.add(self._pid)
            atexit.register(release_warm)

    def release(self) -> None:
        """Stop every kept bot of this process."""
        self._own()
        while self._kept:
            _, player = self._kept.popitem(last=False)
            player.release()

    def memory_bytes(self, limits: Limits | None) -> int:
        """What a kept tree may hold under ``limits`` (:attr:`memory_share` of it)."""
        return int((limits or Limits()).memory_mb * 2**20 * self.memory_share)


_registered: set[int] = set()
_pools: dict[int, WarmPool] = {}


def warm_pool() -> WarmPool:
    """This OS process's pool (a new one in a forked child)."""
    pool = _pools.get(os.getpid())
    if pool is None:
        _pools.clear()
        pool = _pools[os.getpid()] = WarmPool()
    return pool


def release_warm() -> None:
    """Stop every bot this process kept running (safe to call at any time, in any process)."""
    pool = _pools.get(os.getpid())
    if pool is not None:
        pool.release()
