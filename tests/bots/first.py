"""The three-line bot of docs/writing-a-bot.md: the first legal move."""


def play(observation):  # type: ignore[no-untyped-def]
    return observation.legal_moves[0]
