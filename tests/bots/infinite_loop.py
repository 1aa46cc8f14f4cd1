"""Loops forever in its first move: TIMEOUT."""


def play(observation):  # type: ignore[no-untyped-def]
    while True:
        pass
