"""Writes 10 MB to stderr every move, then plays: no fault; its stderr is capped for the
match (read in large chunks and dropped past the cap) and the tail says so."""

import sys

LINE = "x" * 1023 + "\n"


def play(observation):  # type: ignore[no-untyped-def]
    sys.stderr.write(LINE * 10240)
    return observation.legal_moves[0]
