"""A bot process lives for a whole match, so its CPU-time backstop (RLIMIT_CPU) must grow
with the match: a fixed 60 s once cut montecarlo off after about 25 games of a long match
(55 of 80 games forfeited as crashes)."""

from __future__ import annotations

import pytest

from arena.engine.rules import PRESETS
from arena.match.process import CPU_DECISIONS_PER_GAME, match_cpu_seconds
from arena.match.referee import ProcessPlayer, StrategyPlayer, TimeControl, play_match
from arena.match.sandbox import Limits, Sandbox
from tests.paths import ZOO, own_slot

BOT = ZOO / "report_cpu_limit.py"


def test_match_cpu_seconds_covers_every_game_at_full_time() -> None:
    clock = TimeControl(move_seconds=0.5, bank_seconds=4.0, startup_seconds=2.0)
    per_game = 4.0 + CPU_DECISIONS_PER_GAME * 0.5
    assert match_cpu_seconds(1, clock) == int(2.0 + per_game) + 1
    assert match_cpu_seconds(100, clock) == int(2.0 + 100 * per_game) + 1


def test_with_cpu_seconds_raises_never_lowers() -> None:
    sandbox = Sandbox(Limits(cpu_seconds=60), slot=3)
    assert sandbox.with_cpu_seconds(30) is sandbox
    raised = sandbox.with_cpu_seconds(600)
    assert (raised.limits.cpu_seconds, raised.slot) == (600, 3)
    assert raised.limits.memory_mb == sandbox.limits.memory_mb


@pytest.mark.parametrize("games", [1, 40])
def test_a_sandboxed_bot_gets_a_cpu_limit_for_its_whole_match(games: int) -> None:
    clock = TimeControl()
    bot = ProcessPlayer(BOT, Sandbox(Limits(), slot=own_slot(40 + games % 7)))
    outcomes = list(
        play_match(PRESETS["draw"], [bot, StrategyPlayer("random")], games=games, seed=1)
    )
    verdict = outcomes[0].verdict
    assert verdict is not None and verdict.seat == 0
    expected = max(Limits().cpu_seconds, match_cpu_seconds(games, clock))
    assert f"cpu limit {expected} {expected}" in verdict.stderr
