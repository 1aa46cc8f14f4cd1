"""Answers a move that is not legal: ILLEGAL_MOVE."""


def play(observation):  # type: ignore[no-untyped-def]
    return "0-0L" if observation.ends is not None else "9-9"
