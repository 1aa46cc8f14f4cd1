"""Plays its first match quietly, then, as its last game of that match ends, leaves a
thread spinning: a kept process must not burn CPU between matches (it is stopped), and
pays for the thread's CPU when it plays again (in its second match it answers only once
the thread has burnt 1.5 s of CPU, more than the test's move time and bank: TIMEOUT)."""

import threading
import time

#: Games of the first match (the test plays its first match with this many games).
FIRST_MATCH_GAMES = 2
_games = 0
_ended = 0


def _spin() -> None:
    while True:
        pass


class Bot:
    def __init__(self) -> None:
        global _games
        _games += 1
        self.number = _games

    def play(self, observation):  # type: ignore[no-untyped-def]
        if self.number > FIRST_MATCH_GAMES:  # the thread runs again: 1.5 s of its CPU
            start = time.process_time()  # CPU of every thread of this process
            while time.process_time() - start < 1.5:
                time.sleep(0.01)
        return observation.legal_moves[0]

    def end(self, result):  # type: ignore[no-untyped-def]
        global _ended
        _ended += 1
        if _ended == FIRST_MATCH_GAMES:  # the first match's games have all ended
            threading.Thread(target=_spin, daemon=True).start()
