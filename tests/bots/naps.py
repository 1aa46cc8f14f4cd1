"""Sleeps a second per move, using no CPU: TIMEOUT once its game's wall-clock bank is spent
(asked one move at a time it was never forfeited: the CPU bank does not see a sleeper)."""

import time


def play(observation):  # type: ignore[no-untyped-def]
    time.sleep(1.0)
    return observation.legal_moves[0]
