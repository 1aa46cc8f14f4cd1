"""A bound on a match's wall time as well as each decision's (docs/protocol.md, "Time, and
faults"): a bot that floods its output, or that dawdles within every per-decision clock,
forfeits by the rule in bounded time, in plain processes and in the real sandbox."""

from __future__ import annotations

import time

import pytest

from arena import Termination, find_rules
from arena.match.pipes import output_cap_bytes
from arena.match.referee import (
    GameOutcome,
    Launcher,
    PlainLauncher,
    Player,
    ProcessPlayer,
    StrategyPlayer,
    TimeControl,
    play_match,
)
from arena.match.verdicts import DECISIONS_PER_GAME
from tests.match.test_referee import BOTS, CLOCK, _processes_of, check_verdicts, sandbox_launcher

#: The tests' clock with a match bound of 1 s start-up + 0.5 s a game: a dawdler (0.3 s a
#: move, under the 0.4 s of free wall time a decision) exhausts it in a few seconds.
TIGHT = TimeControl(
    move_seconds=CLOCK.move_seconds,
    bank_seconds=CLOCK.bank_seconds,
    startup_seconds=1.0,
    wall_factor=CLOCK.wall_factor,
    game_wall_seconds=0.5,
)


#: Where the bot runs: plain processes, or the real sandbox.
KINDS = ["plain", "sandbox"]


def launcher_of(kind: str, slot: int) -> Launcher:
    return PlainLauncher() if kind == "plain" else sandbox_launcher(slot)


def timed_match(
    bot: str, launcher: Launcher, clock: TimeControl, games: int = 3
) -> tuple[list[GameOutcome], float]:
    """The outcomes of a match of ``draw`` against greedy, and its wall time in seconds."""
    players: list[Player] = [ProcessPlayer(BOTS / bot, launcher), StrategyPlayer("greedy")]
    started = time.monotonic()
    outcomes = list(
        play_match(find_rules("draw"), players, games=games, seed=5, time_control=clock)
    )
    assert sorted(o.index for o in outcomes) == list(range(games))
    return outcomes, time.monotonic() - started


def test_the_match_bound_is_start_up_plus_games_times_a_game_s_wall() -> None:
    """Derived from the clocks per decision: a game's wall bank plus DECISIONS_PER_GAME
    decisions at the move time each; or set outright."""
    clock = TimeControl(move_seconds=1.0, bank_seconds=10.0, startup_seconds=10.0)
    assert clock.game_wall() == 30.0 + DECISIONS_PER_GAME * 1.0
    assert clock.match_wall_seconds(3) == 10.0 + 3 * clock.game_wall()
    assert TIGHT.match_wall_seconds(3) == 1.0 + 3 * 0.5
    assert output_cap_bytes(3) == (16 + 3) << 20


@pytest.mark.parametrize("bot", ["output_flood.py", "output_flood.js"])
@pytest.mark.parametrize("kind", KINDS)
def test_a_bot_flooding_its_output_forfeits_within_a_move(kind: str, bot: str) -> None:
    """64 MiB to stdout and stderr every move (the match held a worker 84 s over 3 games,
    verdict "ok"): PROTOCOL_ERROR in every game, the tail saying why, in seconds. The same
    for a JavaScript bot under the kit (which died of V8's memory, a crash, while node
    queued what its full stderr pipe did not take)."""
    launcher = launcher_of(kind, 60 if bot.endswith(".py") else 62)
    outcomes, seconds = timed_match(bot, launcher, TimeControl())
    check_verdicts(outcomes, Termination.PROTOCOL_ERROR)
    for outcome in outcomes:
        assert outcome.verdict is not None
        assert "flooded its output" in outcome.verdict.message
        assert f"more than {output_cap_bytes(3):,} bytes" in outcome.verdict.message
        assert outcome.verdict.stderr.startswith("[stderr flooded: ")
    assert seconds < 15, seconds
    if kind == "sandbox":
        assert not _processes_of(sandbox_launcher(60 if bot.endswith(".py") else 62).uid)


@pytest.mark.parametrize("kind", KINDS)
def test_a_dawdler_forfeits_its_remaining_games_at_the_match_bound(kind: str) -> None:
    """0.3 s a move passes every per-decision clock; the match bound (2.5 s here) stops it:
    TIMEOUT in every game left, naming the bound, and the match ends soon after it."""
    launcher = launcher_of(kind, 61)
    outcomes, seconds = timed_match("dawdler.py", launcher, TIGHT)
    check_verdicts(outcomes, Termination.TIMEOUT)
    assert all(o.verdict is not None for o in outcomes)
    for outcome in outcomes:
        assert outcome.verdict is not None
        assert "match's wall-clock bound (2.5 s for 3 game(s)" in outcome.verdict.message
        assert "1 s start-up + 0.5 s a game" in outcome.verdict.message
    assert TIGHT.match_wall_seconds(3) - 0.5 < seconds < TIGHT.match_wall_seconds(3) + 3, seconds
    if kind == "sandbox":
        assert not _processes_of(sandbox_launcher(61).uid)


def test_a_quick_bot_plays_its_match_out_under_the_same_bound() -> None:
    """The bound is on the bot's waits, not the referee's work: a bot that answers at once
    plays all its games under the tight bound."""
    outcomes, _ = timed_match("first.py", PlainLauncher(), TIGHT)
    check_verdicts(outcomes, None)
