"""Kills its parent process (the sandbox's init, or botkit's caller): CRASH."""

import os
import signal


def play(observation):  # type: ignore[no-untyped-def]
    os.kill(os.getppid(), signal.SIGKILL)
    os.kill(os.getpid(), signal.SIGKILL)
