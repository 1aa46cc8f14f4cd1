"""The time control as stated (docs/protocol.md, "Time, and faults"): a stored tournament's
or a competition's rule, :meth:`TimeControl.rule`, is what the referee enforces. One bot,
one game, 50 ms a move: a move over the move time is paid from the bank, and the move
just over what the bank has left loses the game."""

from __future__ import annotations

import dataclasses

from arena import Termination, find_rules
from arena.match.referee import (
    PlainLauncher,
    Player,
    ProcessPlayer,
    StrategyPlayer,
    play_match,
)
from arena.service.matches import MatchSettings
from tests.paths import ZOO


def test_a_bot_just_over_the_stated_time_control_loses_its_game() -> None:
    stated = MatchSettings(move_seconds=0.05).time_control()
    assert stated.rule() == (
        "50 ms of CPU time a move (the bot's whole process tree), with a bank of 500 ms a "
        "game for moves over it; 150 ms of wall-clock time a move, with a wall-clock bank "
        "of 1.5 s a game beyond it"
    )
    # The CPU rule alone: a loaded machine must not decide by the wall clock instead
    # (the wall-clock rule's bots: tests/bots/naps.py, sleeper.py in test_referee.py).
    clock = dataclasses.replace(stated, wall_factor=40.0)
    players: list[Player] = [
        ProcessPlayer(ZOO / "overtime.py", PlainLauncher()),
        StrategyPlayer("greedy"),
    ]
    (outcome,) = play_match(find_rules("draw"), players, games=1, seed=3, time_control=clock)
    assert outcome.verdict is not None and outcome.verdict.seat == 0
    assert outcome.verdict.termination is Termination.TIMEOUT
    # its first move, 0.45 s of CPU, was paid from the bank (9 times the move time over);
    # the second, 0.2 s, is 0.15 s over with 0.1 s left: stopped once its CPU passed the
    # move time plus the bank left, or charged when it answered
    assert outcome.times is not None
    timed = [t for t in outcome.times if t is not None]
    assert 0.45 <= timed[0][0] < 0.55, timed
    message = outcome.verdict.message
    assert (
        message.endswith(f"of CPU time, over the time control ({clock.rule()})")
        or "with the time bank spent (0.05 s a move, 0.5 s bank)" in message
    ), message
