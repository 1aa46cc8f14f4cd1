"""Allocates memory until it dies: CRASH (MemoryError or killed), contained by the sandbox."""


def play(observation):  # type: ignore[no-untyped-def]
    hoard = []
    while True:
        hoard.append(bytearray(64 << 20))
