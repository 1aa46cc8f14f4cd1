"""A thread writes a fake reply on the protocol's output between moves: PROTOCOL_ERROR."""

import contextlib
import json
import os
import threading
import time


def _talk() -> None:
    while True:
        time.sleep(0.05)
        for fd in range(3, 8):  # the protocol's private copy of stdout
            with contextlib.suppress(OSError):
                os.write(fd, (json.dumps({"type": "moves", "seq": 1, "moves": []}) + "\n").encode())


threading.Thread(target=_talk, daemon=True).start()


def play(observation):  # type: ignore[no-untyped-def]
    time.sleep(0.2)
    return observation.legal_moves[0]
