"""A bot process's pipes: replies read line by line with a deadline and a length cap, and
stderr drained in a thread keeping its tail for verdicts, up to a cap on a match's output
(:func:`output_cap_bytes`) past which the bot is flooding (a fault)."""

from __future__ import annotations

import collections
import os
import selectors
import threading
import time
from typing import IO

__all__ = [
    "MAX_LINE_BYTES",
    "OUTPUT_BASE_BYTES",
    "OUTPUT_GAME_BYTES",
    "STDERR_CAP_BYTES",
    "STDERR_TAIL_BYTES",
    "LineReader",
    "LineTooLongError",
    "StderrTail",
    "output_cap_bytes",
]

#: The longest line a bot may send (a reply with many moves is far shorter).
MAX_LINE_BYTES = 1 << 20


#: A bot's stderr over a whole match beyond which it is read in large chunks and dropped.
STDERR_CAP_BYTES = 1 << 20
#: How much of a bot's stderr is kept (the tail) for verdicts.
STDERR_TAIL_BYTES = 4096

#: Output (stderr, where a Python bot's prints go) a bot process may write in a match: this
#: much, plus :data:`OUTPUT_GAME_BYTES` per game (:func:`output_cap_bytes`).
OUTPUT_BASE_BYTES = 16 << 20
#: A game's share of a bot's output cap (a bot printing a few KiB a move stays far below).
OUTPUT_GAME_BYTES = 1 << 20


def output_cap_bytes(games: int) -> int:
    """The most a bot process playing ``games`` games may write to stderr: past it the
    drain stops reading (the bot blocks on its full pipe) and the referee rules a fault."""
    return OUTPUT_BASE_BYTES + max(0, games) * OUTPUT_GAME_BYTES


class LineTooLongError(Exception):
    pass


class LineReader:
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
                raise LineTooLongError
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


class StderrTail:
    """Drains a bot's stderr in a thread, keeping the last bytes.

    A bot's stderr is kept up to :data:`STDERR_CAP_BYTES` for its whole match: past that
    the pipe is still drained (a bot blocked on a full pipe would stall), in large reads of
    which only the last :data:`STDERR_TAIL_BYTES` are kept, and the tail says how much was
    discarded. The bot pays for its writes: they are CPU time of its own process. Past
    ``limit`` bytes in all (:func:`output_cap_bytes`) the drain stops: the bot blocks on its
    full pipe and :attr:`flooded` tells the referee, who rules the fault.
    """

    def __init__(self, limit: int | None = None) -> None:
        self._tail: collections.deque[bytes] = collections.deque()
        self._size = 0
        self._total = 0
        #: Bytes past which the bot is flooding (None: no limit).
        self.limit = limit
        self._flooded = False
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    @property
    def total(self) -> int:
        """Bytes the bot has written to stderr so far."""
        with self._lock:
            return self._total

    @property
    def capped(self) -> bool:
        """Whether the bot wrote more than :data:`STDERR_CAP_BYTES`."""
        return self.total > STDERR_CAP_BYTES

    @property
    def flooded(self) -> bool:
        """Whether the bot wrote more than ``limit`` bytes (the drain has stopped)."""
        with self._lock:
            return self._flooded

    def follow(self, stream: IO[bytes]) -> None:
        self._thread = threading.Thread(target=self._drain, args=(stream,), daemon=True)
        self._thread.start()

    def _drain(self, stream: IO[bytes]) -> None:
        fd = stream.fileno()
        while True:
            size = (1 << 16) if self._total <= STDERR_CAP_BYTES else (1 << 20)
            try:
                chunk = os.read(fd, size)
            except OSError:
                return
            if not chunk:
                return
            with self._lock:
                self._tail.append(chunk[-STDERR_TAIL_BYTES:])
                self._size += len(self._tail[-1])
                self._total += len(chunk)
                while self._size - len(self._tail[0]) >= STDERR_TAIL_BYTES:
                    self._size -= len(self._tail.popleft())
                if self.limit is not None and self._total > self.limit:
                    self._flooded = True
                    return

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
            total = self._total
        text = data.decode("utf-8", "replace")
        if self.flooded:
            text = (
                f"[stderr flooded: more than {self.limit:,} bytes written in this match, "
                f"its cap; the bot was stopped; only the last {STDERR_TAIL_BYTES:,} are kept]\n"
                + text
            )
        elif total > STDERR_CAP_BYTES:
            text = (
                f"[stderr capped: {total:,} bytes written in this match, more than "
                f"{STDERR_CAP_BYTES:,}; only the last {STDERR_TAIL_BYTES:,} are kept]\n" + text
            )
        return text
