"""Writes 1.2 MB to stderr every move: PROTOCOL_ERROR once its output passes the match's
cap (16 MiB + 1 MiB a game), some twenty moves in."""

import sys


def play(observation):  # type: ignore[no-untyped-def]
    sys.stderr.write("noise " * 200_000 + "\n")
    return observation.legal_moves[0]
