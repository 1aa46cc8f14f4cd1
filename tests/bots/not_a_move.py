"""Answers something that is not a move at all: ILLEGAL_MOVE."""


def play(observation):  # type: ignore[no-untyped-def]
    return 42
