"""Writes 64 MiB to stdout and 64 MiB to stderr every move (a Python bot's stdout is its
stderr): PROTOCOL_ERROR once past the match's output cap, within its first move."""

import sys

BLOCK = "x" * (1 << 20)


def play(observation):  # type: ignore[no-untyped-def]
    for _ in range(64):
        sys.stdout.write(BLOCK)
        sys.stderr.write(BLOCK)
    return observation.legal_moves[0]
