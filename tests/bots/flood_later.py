"""Plays its first match (``FIRST_MATCH_GAMES`` games) quietly, then writes 64 MiB to
stdout and stderr every move, as output_flood.py: a kept process's output cap is its
match's, so its second match ends in PROTOCOL_ERROR as a fresh process's would."""

import sys

#: Games of the first match (the test plays its first match with this many games).
FIRST_MATCH_GAMES = 2
BLOCK = "x" * (1 << 20)
_games = 0


class Bot:
    def __init__(self) -> None:
        global _games
        _games += 1
        self.number = _games

    def play(self, observation):  # type: ignore[no-untyped-def]
        if self.number > FIRST_MATCH_GAMES:
            for _ in range(64):
                sys.stdout.write(BLOCK)
                sys.stderr.write(BLOCK)
        return observation.legal_moves[0]
