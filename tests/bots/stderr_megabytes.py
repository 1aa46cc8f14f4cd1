"""Writes 10 MB to stderr at its first move, then plays: no fault (under the match's output
cap of 16 MiB + 1 MiB a game); only the tail of its stderr is kept, and the tail says so."""

import sys

LINE = "x" * 1023 + "\n"
_written = False


def play(observation):  # type: ignore[no-untyped-def]
    global _written
    if not _written:
        _written = True
        sys.stderr.write(LINE * 10240)
    return observation.legal_moves[0]
