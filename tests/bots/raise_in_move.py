"""Raises in its third move: CRASH, with its traceback in the stderr tail."""

calls = 0


def play(observation):  # type: ignore[no-untyped-def]
    global calls
    calls += 1
    if calls == 3:
        raise ValueError("bot gave up on purpose")
    return observation.legal_moves[0]
