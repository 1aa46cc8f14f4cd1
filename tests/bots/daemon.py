"""Daemonises at import (fork, setsid, fork again) to leave processes behind: denied in the
sandbox, the bot fails at import: CRASH, and no process is left."""

import os

if os.fork() > 0:
    os._exit(0)
os.setsid()
if os.fork() > 0:
    os._exit(0)


def play(observation):  # type: ignore[no-untyped-def]
    return observation.legal_moves[0]
