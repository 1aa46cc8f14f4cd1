"""A thread burns CPU between moves while the bot idles: TIMEOUT (all its CPU is charged)."""

import threading
import time


def _spin() -> None:
    while True:
        pass


threading.Thread(target=_spin, daemon=True).start()


def play(observation):  # type: ignore[no-untyped-def]
    time.sleep(0.3)  # the thread spins meanwhile: the bot's CPU, charged to this move
    return observation.legal_moves[0]
