"""Exits in its second move: CRASH."""

import os

calls = 0


def play(observation):  # type: ignore[no-untyped-def]
    global calls
    calls += 1
    if calls == 2:
        os._exit(3)
    return observation.legal_moves[0]
