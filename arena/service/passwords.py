"""A bound on password hashing: at most so many argon2 hashes at once, and a fair, bounded
queue in front of it.

An argon2 hash (argon2-cffi's defaults: 64 MiB, time cost 3) takes 0.2-0.6 s of a core.
Without a bound, 48 concurrent logins with made-up names queued behind each other and the
site's health check took 49 s (docs/web.md). A :class:`HashGuard` hands out *slots*: a
number per process and, when given a folder, a number per machine (one lock file per slot,
held with ``flock``: every process that names the same folder shares them, and a process
that dies frees its slot).

A hash that finds no free slot *waits in line* (issue 30: refused at once, 30 students
joining a class from one address pressed Join 27 times each). The line is bounded three
ways, so that a flood cannot take the CPU nor the server's threads:

- **places**: at most ``queue`` requests wait in a process (each holds a server thread);
  beyond, :class:`ServerBusy` at once, with a ``Retry-After`` of about the hashes ahead of
  its key's next turn (the join and login pages retry by themselves after it);
- **fair shares**: each waiter has a *key* (the web's: the client's address, or the class's
  join code for a join: :func:`hashing_as`); slots go to the keys in turn (round robin: a
  key whose recent hashes mostly got in, :meth:`HashGuard.record`, takes
  :data:`FAVOURED_TURNS` a turn, a key that mostly guessed wrong one), and when the places
  are full a newcomer whose key holds fewer places than the longest key's line takes that
  line's newest place (longest-queue drop; the lines weighed by their keys' turns, so a key
  that gets in holds three places to a guesser's one), so a flood from one address holds at
  most its share of the places and of the hashing time;
- **time**: a waiter gives up after ``wait`` seconds (:class:`ServerBusy`).

Between processes, the waiter at the head of each process's line asks for a machine slot
every :data:`POLL_SECONDS`; a process that has just given one back waits
:data:`HANDOFF_SECONDS` before asking again, so that another process's head gets it first
and the processes take turns.

:class:`GuardedHasher` is an argon2 ``PasswordHasher`` whose ``hash`` and ``verify`` take a
slot, so the account functions (:mod:`arena.service.accounts`), which take the hasher as a
parameter, are bounded without knowing it -- the dummy verify of an unknown name included.
A thread that reserved a slot (:func:`reserved`: a password change, which verifies then
hashes inside a transaction, takes its slot before the transaction) hashes in it without
waiting again.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import math
import os
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Iterator
from contextvars import ContextVar
from pathlib import Path
from typing import Literal

from argon2 import PasswordHasher

__all__ = [
    "FAVOURED_TURNS",
    "HANDOFF_SECONDS",
    "POLL_SECONDS",
    "RETRY_SECONDS",
    "GuardedHasher",
    "HashGuard",
    "ServerBusy",
    "default_slots",
    "hashing_as",
    "reserved",
]

logger = logging.getLogger(__name__)

#: What a refused request is told to wait at least (seconds).
RETRY_SECONDS = 1
#: The longest Retry-After a refusal gives (seconds).
MAX_RETRY_SECONDS = 30
#: How often the head of a process's line asks for a machine slot (seconds).
POLL_SECONDS = 0.005
#: How long a process that has just given back a machine slot lets the others ask first.
HANDOFF_SECONDS = 0.02
#: A slot's hold, assumed until this process has timed one (seconds).
FIRST_GUESS_SECONDS = 0.5
#: Hashes a turn for a key whose recent hashes mostly got in (:meth:`HashGuard.record`).
FAVOURED_TURNS = 3
#: Each outcome counts this much less after every later one of its key; keys remembered.
OUTCOME_DECAY, OUTCOME_KEYS = 0.9, 4096

#: The key of the hashes of this context (the web sets it per request: :func:`hashing_as`).
_KEY: ContextVar[str] = ContextVar("arena_hash_key", default="")


class ServerBusy(Exception):  # noqa: N818 (what the client is told)
    """No hashing slot is free and the line has no place (or the wait ran out): try again
    in ``retry_after`` seconds.

    Deliberately not an :class:`~arena.errors.ArenaError`: those are the asker's mistakes,
    which forms show as 400; this is the server's state, which the web answers with 503.
    """

    def __init__(self, message: str, retry_after: int = RETRY_SECONDS) -> None:
        super().__init__(message)
        self.retry_after = retry_after


def default_slots() -> int:
    """Hashes at once by default: half the cores (at least one), so that pages, the
    workers' matches and the hashes share the machine."""
    return max(1, (os.cpu_count() or 1) // 2)


@contextlib.contextmanager
def hashing_as(key: str) -> Iterator[None]:
    """Hash under ``key`` in the block: whose share of the line this context's hashes
    take (the web: ``address:...`` or ``class-code:...``)."""
    token = _KEY.set(key)
    try:
        yield
    finally:
        _KEY.reset(token)


class _Waiter:
    """A request in line: woken when given a slot (``granted``) or when a newcomer with a
    smaller share took its place (``dropped``)."""

    __slots__ = ("event", "key", "state")

    def __init__(self, key: str) -> None:
        self.key = key
        self.event = threading.Event()
        self.state: Literal["waiting", "granted", "dropped"] = "waiting"


class HashGuard:
    """At most ``per_process`` hashes at once in this process and, with ``folder``, at most
    ``per_machine`` at once among every process that uses that folder; up to ``queue``
    requests of this process wait for one, each at most ``wait`` seconds, the keys served in
    turn (``queue`` 0: refused at once when none is free)."""

    def __init__(
        self,
        per_process: int,
        *,
        per_machine: int | None = None,
        folder: Path | None = None,
        queue: int = 0,
        wait: float = 20.0,
    ) -> None:
        if per_process < 1 or (per_machine is not None and per_machine < 1):
            raise ValueError("a hash guard needs at least one slot")
        if queue < 0 or wait < 0:
            raise ValueError("a hash guard's line has no negative places or wait")
        self.per_process = per_process
        self.per_machine = per_machine if per_machine is not None else per_process
        self.folder = folder
        self.queue, self.wait = queue, wait
        self._lock = threading.Lock()
        self._free = per_process
        self._lines: OrderedDict[str, deque[_Waiter]] = OrderedDict()
        self._waiting = 0
        self._turn = ("", 0)  # the key served last and how many times in a row
        self._outcomes: OrderedDict[str, tuple[float, float]] = OrderedDict()
        self._held = threading.local()
        self._seconds = FIRST_GUESS_SECONDS
        self._given_back = -math.inf  # when this process last gave back a machine slot
        if folder is not None:
            folder.mkdir(parents=True, exist_ok=True)

    @property
    def waiting(self) -> int:
        """Requests of this process in line now."""
        return self._waiting

    @contextlib.contextmanager
    def slot(self, key: str | None = None) -> Iterator[None]:
        """Hold a slot for the block, waiting in line under ``key`` (else this context's:
        :func:`hashing_as`) if none is free. Inside :meth:`reserve`, in its thread, the
        reserved slot is used instead.

        Raises:
            ServerBusy: the line has no place for ``key``, a newcomer took this place,
                or no slot came within ``wait`` seconds.
        """
        if getattr(self._held, "reserved", False):
            yield
            return
        deadline = time.monotonic() + (self.wait if self.queue else 0.0)  # no line: no wait
        key = _KEY.get() if key is None else key
        self._take_local(key, deadline)
        try:
            held = self._take_machine(key, deadline)
            began = time.monotonic()
            try:
                yield
            finally:
                if held is not None:
                    os.close(held)  # closing the descriptor releases its flock
                    self._given_back = time.monotonic()
                self._seconds = 0.8 * self._seconds + 0.2 * (time.monotonic() - began)
        finally:
            self._give_local()

    @contextlib.contextmanager
    def reserve(self, key: str | None = None) -> Iterator[None]:
        """Hold a slot for the block (as :meth:`slot`), which every :meth:`slot` of this
        thread inside the block uses instead of taking another.

        Raises:
            ServerBusy: as :meth:`slot`.
        """
        if getattr(self._held, "reserved", False):
            yield
            return
        with self.slot(key):
            self._held.reserved = True
            try:
                yield
            finally:
                self._held.reserved = False

    def check(self, key: str | None = None) -> None:
        """Refuse now if a hash under ``key`` would be refused at once (no slot free, no
        place in line for it): a request that would be refused at its hash is refused
        before its other work. Nothing is held.

        Raises:
            ServerBusy: no slot and no place.
        """
        with self._lock:
            key = _KEY.get() if key is None else key
            if not self._free and not self._has_place(key):
                raise self._busy(key)

    # --- this process's slots and line ------------------------------------------------------

    def _take_local(self, key: str, deadline: float) -> None:
        with self._lock:
            if self._free:
                self._free -= 1
                return
            waiter = self._enter(key)
        waiter.event.wait(max(0.0, deadline - time.monotonic()))
        with self._lock:
            if waiter.state == "granted":
                return
            if waiter.state == "waiting":  # the wait ran out
                self._leave(waiter)
            raise self._busy(key)

    def _has_place(self, key: str) -> bool:
        if self._waiting < self.queue:
            return True
        if not self.queue:
            return False
        own = (len(self._lines.get(key, ())) + 1) / self._turns(key)
        return max(self._share(line) for line in self._lines.values()) > own

    def _share(self, line: deque[_Waiter]) -> float:
        """A line's places for each hash its key takes a turn: the places are shared as the
        turns are (a key that gets in holds :data:`FAVOURED_TURNS` places to a guesser's
        one). Under the lock."""
        return len(line) / self._turns(line[0].key)

    def _enter(self, key: str) -> _Waiter:
        """A place in line for ``key`` (the newest place of the longest line, weighed by
        its turns, if the line is full and ``key`` holds less than it), or ServerBusy.
        Under the lock."""
        if not self._has_place(key):
            raise self._busy(key)
        if self._waiting >= self.queue:  # full: the longest line's newest place is dropped
            longest = max(self._lines.values(), key=self._share)
            dropped = longest[-1]
            self._leave(dropped)
            dropped.state = "dropped"
            dropped.event.set()
        waiter = _Waiter(key)
        self._lines.setdefault(key, deque()).append(waiter)
        self._waiting += 1
        return waiter

    def _leave(self, waiter: _Waiter) -> None:
        line = self._lines[waiter.key]
        line.remove(waiter)
        if not line:
            del self._lines[waiter.key]
        self._waiting -= 1

    def _give_local(self) -> None:
        """Hand the slot to the next key's first waiter (the keys in turn), else free it."""
        with self._lock:
            if not self._lines:
                self._free += 1
                return
            key, line = next(iter(self._lines.items()))
            if key != self._turn[0]:
                self._turn = (key, 0)
            waiter = line.popleft()
            self._turn = (key, self._turn[1] + 1)
            if not line:
                del self._lines[key]
            elif self._turn[1] >= self._turns(key):
                self._lines.move_to_end(key)  # its turn comes again after the others'
            self._waiting -= 1
            waiter.state = "granted"
            waiter.event.set()

    def record(self, got_in: bool, key: str | None = None) -> None:
        """What a hash of ``key`` (else this context's) led to: a login or a join
        (``got_in``), or a wrong password. A key whose recent hashes mostly got in takes
        :data:`FAVOURED_TURNS` hashes a turn (a class logging in, a class's join code); one
        that mostly guessed wrong, one (a flood of made-up names)."""
        key = _KEY.get() if key is None else key
        with self._lock:
            ins, misses = self._outcomes.pop(key, (0.0, 0.0))
            ins, misses = ins * OUTCOME_DECAY + got_in, misses * OUTCOME_DECAY + (not got_in)
            self._outcomes[key] = (ins, misses)
            if len(self._outcomes) > OUTCOME_KEYS:
                self._outcomes.popitem(last=False)  # the least recently heard of

    def _turns(self, key: str) -> int:
        ins, misses = self._outcomes.get(key, (0.0, 0.0))
        return FAVOURED_TURNS if ins > misses else 1

    def _busy(self, key: str) -> ServerBusy:
        """A refusal, told to come back when about the hashes ahead of its key's next place
        are done: its key's line, each hash of it after one of every other key's (an honest
        client told to wait long while a flood that ignores Retry-After is back at once
        would lose its share). Under the lock."""
        ahead = len(self._lines.get(key, ())) + 1
        keys = len(self._lines) + (key not in self._lines)
        seconds = ahead * keys * self._seconds / self.per_machine
        retry = min(MAX_RETRY_SECONDS, max(RETRY_SECONDS, math.ceil(seconds)))
        return ServerBusy(
            "The server is busy checking other passwords: try again in a few seconds.", retry
        )

    # --- the machine's slots ----------------------------------------------------------------

    def _take_machine(self, key: str, deadline: float) -> int | None:
        """A descriptor holding one of the machine's slots (None without a folder), asked
        for every :data:`POLL_SECONDS` until ``deadline``."""
        if self.folder is None:
            return None
        pause = self._given_back + HANDOFF_SECONDS - time.monotonic()
        if pause > 0:  # just given back: the other processes' heads ask first
            time.sleep(pause)
        while True:
            held = self._lock_a_slot(self.folder)
            if held is not None:
                return held
            if time.monotonic() >= deadline:
                with self._lock:
                    raise self._busy(key)
            time.sleep(POLL_SECONDS)

    def _lock_a_slot(self, folder: Path) -> int | None:
        """A descriptor holding one of the machine's slot files, or None if all are held.
        (Each try opens the file anew: flock locks belong to an open file, so two threads
        of one process exclude each other too.)"""
        for number in range(self.per_machine):
            fd = os.open(folder / f"hash-slot-{number}.lock", os.O_RDWR | os.O_CREAT, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                continue
            return fd
        return None


@contextlib.contextmanager
def reserved(hasher: PasswordHasher) -> Iterator[None]:
    """Hold a slot of ``hasher``'s guard for the block if it has one (a
    :class:`GuardedHasher`): the hashes inside then do not wait, e.g. inside a transaction
    that must not stay open while its request is in line.

    Raises:
        ServerBusy: as :meth:`HashGuard.slot`.
    """
    if isinstance(hasher, GuardedHasher):
        with hasher.guard.reserve():
            yield
    else:
        yield


class GuardedHasher(PasswordHasher):
    """``inner``, each :meth:`hash` and :meth:`verify` in a slot of ``guard`` (waiting in
    its line; raising :class:`ServerBusy` when refused)."""

    def __init__(self, inner: PasswordHasher, guard: HashGuard) -> None:
        super().__init__(
            time_cost=inner.time_cost,
            memory_cost=inner.memory_cost,
            parallelism=inner.parallelism,
            hash_len=inner.hash_len,
            salt_len=inner.salt_len,
            encoding=inner.encoding,
            type=inner.type,
        )
        self.inner, self.guard = inner, guard

    def hash(self, password: str | bytes, *, salt: bytes | None = None) -> str:
        """As :meth:`PasswordHasher.hash`, in a slot.

        Raises:
            ServerBusy: refused by the guard.
        """
        with self.guard.slot():
            return self.inner.hash(password, salt=salt)

    def verify(self, hash: str | bytes, password: str | bytes) -> Literal[True]:
        """As :meth:`PasswordHasher.verify`, in a slot.

        Raises:
            ServerBusy: refused by the guard.
            argon2.exceptions.VerificationError: as the inner hasher.
        """
        with self.guard.slot():
            return self.inner.verify(hash, password)

    def check_needs_rehash(self, hash: str | bytes) -> bool:
        """As the inner hasher's (no hash: no slot)."""
        return self.inner.check_needs_rehash(hash)
