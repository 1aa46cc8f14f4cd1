"""Writes megabytes to stderr every move, then plays: no fault (stderr is drained and capped)."""

import sys


def play(observation):  # type: ignore[no-untyped-def]
    sys.stderr.write("noise " * 200_000 + "\n")
    return observation.legal_moves[0]
