"""Writes what the sandbox's own tools write when they fail, then exits: at import (before
its handshake reply) or in its second move. Its CRASH, never a void game: what a bot prints
cannot make its failure the harness's. The test writes a copy per prefix and moment."""

import os
import sys

PREFIX = "bwrap:"
MOMENT = "import"  # or "move"


def fail() -> None:
    sys.stderr.write(f"{PREFIX} Creating new namespace failed: Operation not permitted\n")
    sys.stderr.flush()
    os._exit(1)


if MOMENT == "import":
    fail()

calls = 0


def play(observation):  # type: ignore[no-untyped-def]
    global calls
    calls += 1
    if calls == 2:
        fail()
    return observation.legal_moves[0]
