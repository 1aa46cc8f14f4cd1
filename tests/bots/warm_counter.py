"""Counts the games its process has played and says so: its first answer in every game is
``"game-N"`` (not a move: the game is forfeited with that text in the verdict), so a test
reading the verdicts sees whether the process was kept from one match to the next."""

_games = 0


class Bot:
    def __init__(self) -> None:
        global _games
        _games += 1
        self.number = _games
        self.said = False

    def play(self, observation):  # type: ignore[no-untyped-def]
        if not self.said:
            self.said = True
            return f"game-{self.number}"
        return observation.legal_moves[0]
