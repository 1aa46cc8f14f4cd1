"""Starts a process in play (os.fork): in the sandbox process creation is denied, the
fork raises PermissionError and the bot crashes: CRASH (threads are still allowed)."""

import os
import threading


def play(observation):  # type: ignore[no-untyped-def]
    thread = threading.Thread(target=lambda: None)
    thread.start()  # threads are fine
    thread.join()
    if os.fork() == 0:
        os._exit(0)
    return observation.legal_moves[0]
