"""A thread burns CPU between moves while the bot idles: TIMEOUT (all its CPU is charged).

The bot answers only once its thread has burnt a full second of CPU (more than the
tests' move time and bank together), however little CPU a loaded machine grants it: the
verdict does not depend on the load (the referee's CPU check or, on a machine too busy to
give a second of CPU in time, its wall clock ends the game).
"""

import threading
import time


def _spin() -> None:
    while True:
        pass


threading.Thread(target=_spin, daemon=True).start()


def play(observation):  # type: ignore[no-untyped-def]
    start = time.process_time()  # CPU of every thread of this process
    while time.process_time() - start < 1.0:  # the thread spins meanwhile
        time.sleep(0.01)
    return observation.legal_moves[0]
