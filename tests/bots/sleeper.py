"""Sleeps past every deadline (uses no CPU): TIMEOUT by the wall clock."""

import time


def play(observation):  # type: ignore[no-untyped-def]
    time.sleep(3600)
