"""Warm bots (arena.match.warm): a kept process is reused only for the same key, only
after a sound match, within its caps; the least recently used goes first when the slot
block is full; and the sandbox's guarantees hold in a reused process (a snooping bot in
its second match, a thread left spinning between matches)."""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena.engine.events import Termination
from arena.engine.rules import find_rules
from arena.match.cputime import tree_cpu_seconds
from arena.match.lineup import make_players, release_kept_players
from arena.match.referee import GameOutcome, PlainLauncher, Player, TimeControl, play_match
from arena.match.sandbox import SLOT_BLOCK, Limits, check_sandbox
from arena.match.warm import (
    MAX_GAMES,
    KeptPlayer,
    MatchSetup,
    WarmPool,
    tree_rss_bytes,
    warm_pool,
)
from tests.match.test_referee import planted_secrets  # noqa: F401 (a fixture)
from tests.paths import ZOO, own_slot

RULES = find_rules("draw")
CLOCK = TimeControl(move_seconds=0.5, bank_seconds=0.5, startup_seconds=20)


@pytest.fixture(autouse=True)
def _released() -> Iterator[None]:
    release_kept_players()
    yield
    release_kept_players()


def _setup(scope: str = "t1", players: int = 2) -> MatchSetup:
    return MatchSetup(RULES.version, players, False, CLOCK, scope)


def _kept(
    specs: list[str],
    *,
    scope: str = "t1",
    sandboxed: bool = False,
    games: int = 100,
    first_slot: int | None = None,
    limits: Limits | None = None,
) -> list[Player]:
    return make_players(
        specs,
        sandboxed=sandboxed,
        keep_games=games,
        setup=_setup(scope, len(specs)),
        first_slot=first_slot,
        limits=limits,
    )


def _match(
    players: list[Player], games: int = 2, seed: int = 1, clock: TimeControl = CLOCK
) -> list[GameOutcome]:
    return list(play_match(RULES, players, games=games, seed=seed, time_control=clock))


def _pids(players: list[Player]) -> list[int | None]:
    return [p.pid if isinstance(p, KeptPlayer) else None for p in players]


def _bot(tmp_path: Path, name: str, source: str = "first.py") -> str:
    """A copy of a zoo bot under another file name (another bot)."""
    path = tmp_path / name
    shutil.copy(ZOO / source, path)
    return str(path)


def test_a_kept_process_plays_every_match_of_its_key(tmp_path: Path) -> None:
    a, b = _bot(tmp_path, "a.py"), _bot(tmp_path, "b.py")
    first = _kept([a, b])
    assert all(isinstance(p, KeptPlayer) for p in first)
    outcomes = _match(first)
    pids = _pids(first)
    assert None not in pids
    for seed in (2, 3):
        outcomes += _match(_kept([b, a])[::-1], seed=seed)  # either seat order: one key
        assert _pids(first) == pids
    assert all(o.verdict is None for o in outcomes)
    assert [p.starts for p in first if isinstance(p, KeptPlayer)] == [1, 1]


def test_another_opponent_set_or_scope_gets_a_fresh_process(tmp_path: Path) -> None:
    a, b, c = (_bot(tmp_path, f"{n}.py") for n in "abc")
    ab = _kept([a, b])
    _match(ab)
    ac = _kept([a, c])
    _match(ac)
    assert ac[0] is not ab[0] and ac[0].pid != ab[0].pid  # type: ignore[attr-defined]
    other_scope = _kept([a, b], scope="t2")
    assert other_scope[0] is not ab[0]
    _match(other_scope)
    other_rules = make_players([a, b], sandboxed=False, keep_games=100, setup=_setup("t1", 2))
    assert other_rules[0] is ab[0]  # the same key again: the first process, still warm
    ab_pid = ab[0].pid  # type: ignore[attr-defined]
    edited = Path(a)
    edited.write_text(edited.read_text() + "\n# edited\n")
    os.utime(edited, ns=(time.time_ns(), time.time_ns() + 10**9))
    assert _kept([a, b])[0] is not ab[0]  # an edited file is another bot
    assert ab_pid is not None


def test_a_bot_playing_itself_runs_two_processes(tmp_path: Path) -> None:
    a = _bot(tmp_path, "a.py")
    players = _kept([a, a])
    _match(players)
    assert players[0] is not players[1]
    again = _kept([a, a])
    assert again == players and _pids(again) == _pids(players)


def test_the_games_cap_retires_a_process(tmp_path: Path) -> None:
    a, b = _bot(tmp_path, "a.py"), _bot(tmp_path, "b.py")
    players = _kept([a, b], games=5)
    _match(players, games=2)
    pid = _pids(players)[0]
    _match(_kept([a, b], games=5), games=2)  # 4 games: another match of 2 would pass 5
    assert _pids(players)[0] is None
    _match(_kept([a, b], games=5), games=2)
    assert _pids(players)[0] not in (None, pid)
    kept = players[0]
    assert isinstance(kept, KeptPlayer)
    assert kept.starts == 2 and "5 games" in kept.retired


def test_the_minutes_and_memory_caps_retire_a_process(tmp_path: Path) -> None:
    a = _bot(tmp_path, "a.py")
    old = KeptPlayer(Path(a), PlainLauncher(), max_minutes=1e-4)
    big = KeptPlayer(Path(a), PlainLauncher(), memory_bytes=1)
    for kept in (old, big):
        _match([kept, make_players(["random"])[0]])
        _match([kept, make_players(["random"])[0]])
        assert kept.starts == 2, kept.retired
        kept.release()
    assert "minutes" in old.retired and "resident memory" in big.retired


def test_tree_rss_reads_proc() -> None:
    assert 1_000_000 < tree_rss_bytes(os.getpid()) < 10**11
    assert tree_rss_bytes(2**22 + 12345) == 0


def test_a_faulted_or_unfinished_process_is_not_reused(tmp_path: Path) -> None:
    crasher = _bot(tmp_path, "crasher.py", "exit_in_move.py")
    a = _bot(tmp_path, "a.py")
    crashed = _kept([crasher, a])
    assert all(o.verdict is not None for o in _match(crashed))
    _match(_kept([crasher, a]))
    assert crashed[0].starts == 2  # type: ignore[attr-defined]
    assert crashed[1].starts == 1  # type: ignore[attr-defined]
    # A match stopped with games in flight (a cancelled tournament): its bots go.
    players = _kept([a, _bot(tmp_path, "b.py")])
    match = play_match(RULES, players, games=8, seed=4, time_control=CLOCK, concurrency=8)
    next(match)
    match.close()
    assert _pids(players) == [None, None]
    assert "did not end" in players[0].retired  # type: ignore[attr-defined]


def test_a_bot_that_answers_illegally_is_kept(tmp_path: Path) -> None:
    """An illegal answer forfeits a game, not the process: the counter bot's verdicts show
    its game count going on from match to match (what the worker test reads)."""
    counter, a = _bot(tmp_path, "counter.py", "warm_counter.py"), _bot(tmp_path, "a.py")
    said = []
    for seed in (1, 2):
        for outcome in _match(_kept([counter, a]), seed=seed):
            assert outcome.verdict is not None
            said.append(outcome.verdict.message.split("'")[1])
    assert sorted(said) == ["game-1", "game-2", "game-3", "game-4"]


def test_a_process_that_talks_out_of_turn_between_matches_is_not_reused(tmp_path: Path) -> None:
    talker, a = _bot(tmp_path, "talker.py", "idle_talker.py"), _bot(tmp_path, "a.py")
    players = _kept([talker, a])
    assert all(o.verdict is None for o in _match(players))
    second = _match(_kept([talker, a]))
    assert all(o.verdict is None for o in second)
    assert players[0].starts == 2  # type: ignore[attr-defined]
    assert "did not answer" in players[0].retired  # type: ignore[attr-defined]


def test_a_kept_process_has_its_own_matchs_output_cap(tmp_path: Path) -> None:
    """The output cap (and the wall bound) of a kept process is its match's, not its life's
    (2,000 games): a bot that floods in its second match forfeits it, and goes."""
    flood, a = _bot(tmp_path, "flood.py", "flood_later.py"), _bot(tmp_path, "a.py")
    players = _kept([flood, a], games=MAX_GAMES)
    assert all(o.verdict is None for o in _match(players))
    began = time.monotonic()
    second = _match(_kept([flood, a], games=MAX_GAMES))
    assert time.monotonic() - began < 15
    verdicts = [o.verdict for o in second]
    assert all(v is not None and v.termination is Termination.PROTOCOL_ERROR for v in verdicts)
    assert all("flooded its output" in v.message for v in verdicts if v is not None)
    assert players[0].starts == 1 and not players[0].warm  # type: ignore[attr-defined]


def test_the_least_recently_used_goes_when_the_block_is_full(tmp_path: Path) -> None:
    a = _bot(tmp_path, "a.py")
    others = [_bot(tmp_path, f"o{n}.py") for n in range(SLOT_BLOCK // 2 + 1)]
    first = _kept([a, others[0]], first_slot=0)
    _match(first)
    for other in others[1:-1]:
        _match(_kept([a, other], first_slot=0))
    assert len(warm_pool()) == SLOT_BLOCK
    _match(_kept([a, others[0]], first_slot=0))  # used again: now the most recent
    _match(_kept([a, others[-1]], first_slot=0))  # evicts the pair of others[1]
    assert len(warm_pool()) == SLOT_BLOCK
    assert _kept([a, others[0]], first_slot=0) == first
    slots = [p.slot for p in warm_pool()._kept.values()]
    assert sorted(s for s in slots if s is not None) == list(range(SLOT_BLOCK))


def test_cold_bots_take_the_slots_kept_ones_leave_free(tmp_path: Path) -> None:
    assert WarmPool().slots(16, [0, 1]) == {0: 16, 1: 17}  # nothing kept: slot 16 + seat
    a, b = _bot(tmp_path, "a.py"), _bot(tmp_path, "b.py")
    kept = _kept([a, b], first_slot=16)
    _match(kept)
    held = {p.slot for p in kept if isinstance(p, KeptPlayer)}
    assert held == {16, 17}
    assert warm_pool().slots(16, [0, 1]) == {0: 18, 1: 19}
    assert warm_pool().slots(16, [0, 3]) == {0: 18, 3: 19}
    assert warm_pool().slots(32, [0, 1]) == {0: 32, 1: 33}  # not the kept bots' block
    # A cold match that needs the whole block: the kept bots make room.
    assert sorted(warm_pool().slots(16, list(range(SLOT_BLOCK))).values()) == list(
        range(16, 16 + SLOT_BLOCK)
    )
    assert len(warm_pool()) == 0 and _pids(kept) == [None, None]


def test_a_forked_child_never_uses_its_parents_processes(tmp_path: Path) -> None:
    a, b = _bot(tmp_path, "a.py"), _bot(tmp_path, "b.py")
    _match(_kept([a, b]))
    assert len(warm_pool()) == 2
    child = os.fork()
    if child == 0:  # pragma: no cover (the child's exit status is the assertion)
        os._exit(0 if len(warm_pool()) == 0 else 1)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert len(warm_pool()) == 2


# --- in the sandbox -----------------------------------------------------------------------


def _sandboxed(specs: list[str], slot: int) -> list[Player]:
    missing = check_sandbox()
    assert not missing, "the sandbox is unavailable: " + "; ".join(missing)
    limits = Limits(memory_mb=256, processes=32, file_size_mb=8, tmp_size_mb=8)
    return _kept(specs, sandboxed=True, first_slot=own_slot(slot), limits=limits)


@pytest.mark.usefixtures("planted_secrets")
def test_a_reused_process_is_as_contained_as_a_fresh_one(tmp_path: Path) -> None:
    snoop, a = _bot(tmp_path, "snoop.py", "snoop_warm.py"), _bot(tmp_path, "a.py")
    first = _sandboxed([snoop, a], 200)
    assert all(o.verdict is None for o in _match(first))
    assert "ok " not in first[0].stderr_tail()
    second = _sandboxed([snoop, a], 200)
    assert second[0] is first[0]
    assert all(o.verdict is None for o in _match(second))
    assert first[0].starts == 1  # type: ignore[attr-defined]
    tail = first[0].stderr_tail()
    lines = [line for line in tail.splitlines() if line.startswith(("ok ", "LEAK "))]
    assert len(lines) == 12, tail
    assert not [line for line in lines if line.startswith("LEAK")], tail


def test_a_thread_left_running_is_stopped_between_matches(tmp_path: Path) -> None:
    spinner, a = _bot(tmp_path, "spinner.py", "idle_spinner.py"), _bot(tmp_path, "a.py")
    first = _sandboxed([spinner, a], 210)
    assert all(o.verdict is None for o in _match(first))
    kept = first[0]
    assert isinstance(kept, KeptPlayer) and kept.pid is not None
    before = tree_cpu_seconds(kept.pid)
    time.sleep(0.5)
    assert tree_cpu_seconds(kept.pid) - before < 0.05  # stopped: the thread cannot spin
    # A tighter clock than CLOCK's (the spinning thread's CPU is what runs it out): the
    # TIMEOUT comes after 0.3 s of that CPU rather than 1 s; the wall clock as loose as
    # CLOCK's (3 s a decision with the bank), for the other bot on a loaded machine.
    tight = TimeControl(move_seconds=0.2, bank_seconds=0.1, startup_seconds=20, wall_factor=10)
    second = _match(_sandboxed([spinner, a], 210), clock=tight)
    verdicts = {(o.verdict.seat, o.verdict.termination) for o in second if o.verdict}
    assert verdicts == {(0, Termination.TIMEOUT)}  # its thread's CPU is charged to it
