"""Spends CPU over its move time: 0.45 s on its first move, 0.2 s on its second, then
plays at once. Under 50 ms a move with a bank of 0.5 s a game (a stored tournament's time
control at 50 ms: arena.service.matches.MatchSettings), the first is paid from the bank,
leaving 0.1 s; the second, 0.15 s over, finds the bank spent: a timeout."""

import time

SPEND = [0.45, 0.2]


def play(observation):  # type: ignore[no-untyped-def]
    if SPEND:
        spend = SPEND.pop(0)
        start = time.process_time()
        while time.process_time() - start < spend:
            pass
    return observation.legal_moves[0]
