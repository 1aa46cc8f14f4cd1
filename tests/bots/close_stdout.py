"""Closes every output it can find, the protocol's included: CRASH."""

import contextlib
import os


def play(observation):  # type: ignore[no-untyped-def]
    for fd in range(1, 64):
        if fd != 2:
            with contextlib.suppress(OSError):
                os.close(fd)
    return observation.legal_moves[0]
