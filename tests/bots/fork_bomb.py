"""Forks without end: every fork is refused in the sandbox (and the process limit would
stop it anyway); it never answers: TIMEOUT."""

import contextlib
import os


def play(observation):  # type: ignore[no-untyped-def]
    while True:
        with contextlib.suppress(OSError):
            os.fork()
