"""Forks without end: contained by the process limit; its moves never come: TIMEOUT."""

import contextlib
import os


def play(observation):  # type: ignore[no-untyped-def]
    while True:
        with contextlib.suppress(OSError):
            os.fork()
