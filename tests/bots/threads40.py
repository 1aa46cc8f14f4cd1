"""Keeps 40 sleeping threads and plays normally: no fault, alone or beside another run of
itself (when two runs shared a sandbox uid, the second's threads hit the shared process
limit and it crashed in every game: "can't start new thread")."""

import threading
import time

_threads = [threading.Thread(target=time.sleep, args=(3600,), daemon=True) for _ in range(40)]
for _thread in _threads:
    _thread.start()


def play(observation):  # type: ignore[no-untyped-def]
    return observation.legal_moves[0]
