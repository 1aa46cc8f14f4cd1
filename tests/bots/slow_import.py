"""Takes far too long to import: TIMEOUT at the handshake."""

import time

time.sleep(3600)


def play(observation):  # type: ignore[no-untyped-def]
    return observation.legal_moves[0]
