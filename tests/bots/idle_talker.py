"""Plays its first match, then, as its last game ends, writes a line nobody asked for on
the protocol's output: a kept process that talked after its last reply is not reused."""

import contextlib
import json
import os

#: Games of the first match (the test plays its first match with this many games).
FIRST_MATCH_GAMES = 2
_games = 0
_ended = 0


class Bot:
    def __init__(self) -> None:
        global _games
        _games += 1
        self.number = _games

    def play(self, observation):  # type: ignore[no-untyped-def]
        return observation.legal_moves[0]

    def end(self, result):  # type: ignore[no-untyped-def]
        global _ended
        _ended += 1
        if _ended == FIRST_MATCH_GAMES:  # the first match's games have all ended
            line = json.dumps({"type": "moves", "seq": 99, "moves": []}) + "\n"
            for fd in range(3, 8):  # the protocol's private copy of stdout
                with contextlib.suppress(OSError):
                    os.write(fd, line.encode())
