"""Tries to kill its parent (the referee, outside a sandbox) and its process group, then plays.

In the sandbox the bot is pid 1 of its own namespace: it has no parent to kill and
its own group is itself, so the attack fails and the game goes on (no fault).
"""

import contextlib
import os
import signal

_tried = False


def play(observation):  # type: ignore[no-untyped-def]
    global _tried
    if not _tried:
        _tried = True
        with contextlib.suppress(OSError):
            os.kill(os.getppid(), signal.SIGKILL)
        with contextlib.suppress(OSError):
            os.killpg(0, signal.SIGKILL)
    return observation.legal_moves[0]
