"""A bound on password hashing: at most so many argon2 hashes at once, and a quick refusal
beyond it instead of a queue.

An argon2 hash (argon2-cffi's defaults: 64 MiB, time cost 3) takes 0.2-0.6 s of a core.
Without a bound, 48 concurrent logins with made-up names queued behind each other and the
site's health check took 49 s (docs/web.md). A :class:`HashGuard` hands out *slots*: a
number per process (a semaphore) and, when given a folder, a number per machine (one lock
file per slot, held with ``flock``: every process that names the same folder shares them,
and a process that dies frees its slot). A hash that finds no free slot at once raises
:class:`ServerBusy`: the web answers 503 with ``Retry-After``. :class:`GuardedHasher` is an
argon2 ``PasswordHasher`` whose ``hash`` and ``verify`` take a slot, so the account
functions (:mod:`arena.service.accounts`), which take the hasher as a parameter, are
bounded without knowing it -- the dummy verify of an unknown name included.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

from argon2 import PasswordHasher

__all__ = ["RETRY_SECONDS", "GuardedHasher", "HashGuard", "ServerBusy", "default_slots"]

logger = logging.getLogger(__name__)

#: What a refused request is told to wait: about two hashes' time.
RETRY_SECONDS = 1


class ServerBusy(Exception):  # noqa: N818 (what the client is told)
    """Every hashing slot is taken: try again in :data:`RETRY_SECONDS`.

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


class HashGuard:
    """At most ``per_process`` hashes at once in this process and, with ``folder``, at most
    ``per_machine`` at once among every process that uses that folder."""

    def __init__(
        self, per_process: int, *, per_machine: int | None = None, folder: Path | None = None
    ) -> None:
        if per_process < 1 or (per_machine is not None and per_machine < 1):
            raise ValueError("a hash guard needs at least one slot")
        self.per_process = per_process
        self.per_machine = per_machine if per_machine is not None else per_process
        self.folder = folder
        self._local = threading.BoundedSemaphore(per_process)
        if folder is not None:
            folder.mkdir(parents=True, exist_ok=True)

    @contextlib.contextmanager
    def slot(self) -> Iterator[None]:
        """Hold a slot for the block.

        Raises:
            ServerBusy: no slot is free now (none is waited for).
        """
        if not self._local.acquire(blocking=False):
            raise _busy()
        try:
            with self._machine_slot():
                yield
        finally:
            self._local.release()

    def check(self) -> None:
        """Refuse now if no slot is free (one is taken and given back at once): a request
        that would be refused at its hash is refused before its other work.

        Raises:
            ServerBusy: no slot is free.
        """
        with self.slot():
            pass

    @contextlib.contextmanager
    def _machine_slot(self) -> Iterator[None]:
        if self.folder is None:
            yield
            return
        held = self._lock_a_slot(self.folder)
        if held is None:
            raise _busy()
        try:
            yield
        finally:
            os.close(held)  # closing the descriptor releases its flock

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


def _busy() -> ServerBusy:
    return ServerBusy("The server is busy checking other passwords: try again in a few seconds.")


class GuardedHasher(PasswordHasher):
    """``inner``, each :meth:`hash` and :meth:`verify` in a slot of ``guard`` (raising
    :class:`ServerBusy` when none is free)."""

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
            ServerBusy: no slot is free.
        """
        with self.guard.slot():
            return self.inner.hash(password, salt=salt)

    def verify(self, hash: str | bytes, password: str | bytes) -> Literal[True]:
        """As :meth:`PasswordHasher.verify`, in a slot.

        Raises:
            ServerBusy: no slot is free.
            argon2.exceptions.VerificationError: as the inner hasher.
        """
        with self.guard.slot():
            return self.inner.verify(hash, password)

    def check_needs_rehash(self, hash: str | bytes) -> bool:
        """As the inner hasher's (no hash: no slot)."""
        return self.inner.check_needs_rehash(hash)
