"""The referee against a zoo of misbehaving bots, in plain processes and in the real sandbox.

Each bot of ``tests/bots/`` plays a short match of ``draw`` against ``greedy``;
the test checks its verdict, that only the offender forfeits, that every game
record still verifies, and (in the sandbox) that nothing escaped.
"""

from __future__ import annotations

import json
import os
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena import Termination, find_rules
from arena.engine.records import game_record, verify_record
from arena.engine.rules import Rules
from arena.errors import RulesError
from arena.match.hostpaths import HostPaths
from arena.match.play import play_games
from arena.match.referee import (
    GameOutcome,
    InfrastructureError,
    InProcessPlayer,
    Launcher,
    PlainLauncher,
    Player,
    ProcessPlayer,
    StrategyPlayer,
    TimeControl,
    Verdict,
    play_match,
)
from arena.match.sandbox import Limits, Sandbox, check_sandbox
from tests.paths import ZOO as ZOO_DIR
from tests.paths import own_slot, write_readable

BOTS = ZOO_DIR
CLOCK = TimeControl(move_seconds=0.2, bank_seconds=0.4, startup_seconds=3.0, wall_factor=2.0)

T = Termination
#: Every bot of the zoo and its verdict (None: plays to the end without a fault).
ZOO: dict[str, Termination | None] = {
    "first.py": None,
    "first.js": None,
    "stderr_flood.py": T.PROTOCOL_ERROR,
    "stderr_flood.js": T.PROTOCOL_ERROR,
    "illegal.py": T.ILLEGAL_MOVE,
    "not_a_move.py": T.ILLEGAL_MOVE,
    "raise_in_move.py": T.CRASH,
    "exit_in_move.py": T.CRASH,
    "raise_at_import.py": T.CRASH,
    "exit_at_import.py": T.CRASH,
    "close_stdout.py": T.CRASH,
    "infinite_loop.py": T.TIMEOUT,
    "sleeper.py": T.TIMEOUT,
    "naps.py": T.TIMEOUT,
    "json_patcher.py": None,
    "slow_import.py": T.TIMEOUT,
    "spinning_thread.py": T.TIMEOUT,
    "talking_thread.py": T.PROTOCOL_ERROR,
    "garbage.bot": T.PROTOCOL_ERROR,
    "deep_json.bot": T.PROTOCOL_ERROR,
    "stdout_flood.bot": T.PROTOCOL_ERROR,
    "unsolicited.bot": T.PROTOCOL_ERROR,
    "wrong_seq.bot": T.PROTOCOL_ERROR,
    "bad_handshake.bot": T.PROTOCOL_ERROR,
}
#: Only in the sandbox: outside it these would harm the test machine or the test run.
SANDBOX_ONLY: dict[str, Termination | None] = {
    "memory_bomb.py": T.CRASH,
    "fork_bomb.py": T.TIMEOUT,
    "forker.py": T.CRASH,
    "daemon.py": T.CRASH,
    "stderr_megabytes.py": None,
    "kill_parent.py": None,
    # (huge_file.py: test_sandbox_refuses_a_huge_file, which reads what it said too)
    "snoop.py": None,
    # compiled (the cpp and c runtimes): compiled in the sandbox first
    "compile_error.cpp": T.CRASH,
    "forker.c": T.CRASH,
    "memory_map.c": T.CRASH,
    "ignore_sigterm.c": T.TIMEOUT,
}


def sandbox_launcher(slot: int = 0, memory_mb: int = 256) -> Sandbox:
    missing = check_sandbox()
    assert not missing, "the sandbox is unavailable: " + "; ".join(missing)
    limits = Limits(memory_mb=memory_mb, processes=32, file_size_mb=8, tmp_size_mb=8)
    return Sandbox(limits, own_slot(slot))


def play(bot: str, launcher: Launcher, games: int = 3) -> list[GameOutcome]:
    players: list[Player] = [ProcessPlayer(BOTS / bot, launcher), StrategyPlayer("greedy")]
    outcomes = list(
        play_match(find_rules("draw"), players, games=games, seed=5, time_control=CLOCK)
    )
    assert sorted(o.index for o in outcomes) == list(range(games))
    return outcomes


def check_verdicts(outcomes: list[GameOutcome], expected: Termination | None) -> None:
    """The expected fault, always the bot's (seat 0), never the opponent's; records verify."""
    verdicts = [o.verdict for o in outcomes if o.verdict is not None]
    if expected is None:
        assert verdicts == []
    else:
        assert verdicts, f"expected {expected.value}, but every game was played out"
        assert {(v.seat, v.termination) for v in verdicts} == {(0, expected)}, verdicts
    for outcome in outcomes:
        outcome_ = outcome.game.outcome()
        assert outcome_ is not None
        if outcome.verdict is not None:
            assert outcome_.termination is outcome.verdict.termination
            assert outcome_.winners == (1,)  # the opponent wins the forfeited game
        verdict = None if outcome.verdict is None else outcome.verdict.to_dict()
        record = json.loads(
            json.dumps(game_record(outcome.game, ["bot", "greedy"], verdict=verdict))
        )
        assert verify_record(record) == []


@pytest.mark.parametrize("bot", sorted(ZOO))
def test_plain_processes(bot: str) -> None:
    """Outside the sandbox (a developer's own bots), the referee judges every fault alike."""
    check_verdicts(play(bot, PlainLauncher()), ZOO[bot])


@pytest.mark.parametrize("bot", sorted(ZOO | SANDBOX_ONLY))
def test_sandboxed(bot: str) -> None:
    """In the real sandbox every hostile bot gets its verdict and leaves nothing behind."""
    # A slot (uid) of its own per bot: tests run in parallel.
    # Node's V8 reserves gigabytes of address space: a JavaScript bot needs a larger limit.
    memory = 8192 if bot.endswith(".js") else 256
    launcher = sandbox_launcher(10 + sorted(ZOO | SANDBOX_ONLY).index(bot), memory)
    check_verdicts(play(bot, launcher), (ZOO | SANDBOX_ONLY)[bot])
    assert not _processes_of(launcher.uid), "processes of the sandbox were left running"


def test_crash_verdict_keeps_the_stderr_tail() -> None:
    outcomes = play("raise_in_move.py", PlainLauncher(), games=1)
    verdict = outcomes[0].verdict
    assert verdict is not None and verdict.termination is T.CRASH
    assert "bot gave up on purpose" in verdict.message
    assert "Traceback" in verdict.stderr and "ValueError" in verdict.stderr


def test_illegal_move_message_names_the_move_and_the_legal_ones() -> None:
    verdict = play("illegal.py", PlainLauncher(), games=1)[0].verdict
    assert verdict is not None
    assert "not legal" in verdict.message and "legal:" in verdict.message


@pytest.fixture
def planted_secrets() -> Iterator[None]:
    """Another bot's source and a database on the host, a listener on loopback."""
    files = [Path("/var/tmp/arena-zoo-other-bot.py"), Path("/var/tmp/arena-zoo-arena.db")]
    for path in files:
        path.write_text("SECRET\n")
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 47913))
    listener.listen()
    os.environ["ARENA_SECRET_TOKEN"] = "hunter2"
    try:
        yield
    finally:
        listener.close()
        del os.environ["ARENA_SECRET_TOKEN"]
        for path in files:
            path.unlink()


def test_sandbox_contains_a_snooping_bot(planted_secrets: None) -> None:
    """Files, environment, other processes, shell, network: every attempt fails inside."""
    launcher = sandbox_launcher(slot=50)
    snoop = ProcessPlayer(BOTS / "snoop.py", launcher)
    players: list[Player] = [snoop, StrategyPlayer("greedy")]
    match = play_match(find_rules("draw"), players, games=1, seed=1, time_control=CLOCK)
    tail = ""
    for outcome in match:
        assert outcome.verdict is None
        tail = snoop.stderr_tail()
    lines = [line for line in tail.splitlines() if line.startswith(("ok ", "LEAK "))]
    assert len(lines) == 12, tail
    assert not [line for line in lines if line.startswith("LEAK")], tail


def test_sandbox_refuses_a_huge_file() -> None:
    """A bot writing a 200 MB file is refused past the file size limit, plays on with no
    fault (its records verify), and leaves nothing running."""
    launcher = sandbox_launcher(slot=51)
    huge = ProcessPlayer(BOTS / "huge_file.py", launcher)
    players: list[Player] = [huge, StrategyPlayer("greedy")]
    outcomes = list(play_match(find_rules("draw"), players, games=3, seed=5, time_control=CLOCK))
    check_verdicts(outcomes, None)
    tail = huge.stderr_tail()
    assert "write refused" in tail and "WROTE" not in tail
    assert not _processes_of(launcher.uid), "processes of the sandbox were left running"


def test_in_process_player_judges_faults_too() -> None:
    players: list[Player] = [InProcessPlayer(BOTS / "illegal.py"), StrategyPlayer("greedy")]
    outcomes = list(play_match(find_rules("draw"), players, games=2, seed=3))
    assert all(o.verdict is not None and o.verdict.termination is T.ILLEGAL_MOVE for o in outcomes)


def test_batching_plays_many_games_per_message() -> None:
    """16 concurrent games: a bot gets about one message per move number, not one per game."""
    launcher = PlainLauncher()
    player = ProcessPlayer(BOTS / "first.py", launcher)
    started = time.perf_counter()
    outcomes = list(
        play_match(find_rules("draw"), [player, StrategyPlayer("random")], games=32, seed=2)
    )
    assert len(outcomes) == 32 and all(o.verdict is None for o in outcomes)
    moves = sum(
        1
        for o in outcomes
        for r in o.game.rounds
        for e in r.events
        if type(e).__name__ == "Play" and e.seat == 0
    )
    assert player._seq < moves / 4, (player._seq, moves)
    assert time.perf_counter() - started < 30


def _processes_of(uid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if entry.stat().st_uid == uid:
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


class _UnbindableSandbox(Sandbox):
    """A sandbox bwrap cannot set up: one of its binds names no host path, so bwrap fails
    in its child, after it has cloned it (and reported the child's pid), before the bot."""

    def _bwrap_options(self, runtime: HostPaths) -> list[str]:
        return [*super()._bwrap_options(runtime), "--ro-bind", "/no/such/path", "/nowhere"]


class _UnjoinableSandbox(Sandbox):
    """A sandbox whose memory cgroup cannot be joined: the launcher's shell stops first."""

    def _cgroup_procs(self) -> str | None:
        return "/no/such/cgroup/cgroup.procs"


@pytest.mark.parametrize(
    ("broken", "said"),
    [
        (_UnbindableSandbox, "bwrap: Can't find source path /no/such/path"),
        (_UnjoinableSandbox, "sandbox: cannot join the memory cgroup /no/such/cgroup"),
    ],
)
def test_a_sandbox_that_cannot_start_is_an_infrastructure_failure(
    broken: type[Sandbox], said: str
) -> None:
    """Not the bot's fault: no verdict, no game counted, an InfrastructureError instead
    (bwrap never reported running the bot), saying what the tool said."""
    launcher = broken(Limits(memory_mb=256), own_slot(70 + (broken is _UnjoinableSandbox)))
    players: list[Player] = [ProcessPlayer(BOTS / "first.py", launcher), StrategyPlayer("greedy")]
    with pytest.raises(InfrastructureError, match=f"failed to start: {said}"):
        list(play_match(find_rules("draw"), players, games=2, seed=1, time_control=CLOCK))
    assert not _processes_of(launcher.uid)


#: How the sandbox's own tools (and its launcher's shell) begin what they write when they
#: fail: a bot may write the same words.
TOOL_WORDS = ("bwrap:", "setpriv:", "prlimit:", "sandbox:")


def _fake_harness_error(folder: Path, prefix: str, moment: str) -> Path:
    """tests/bots/fake_harness_error.py, writing ``prefix`` and exiting at ``moment``."""
    text = (BOTS / "fake_harness_error.py").read_text()
    text = text.replace('PREFIX = "bwrap:"', f"PREFIX = {prefix!r}")
    text = text.replace('MOMENT = "import"', f"MOMENT = {moment!r}")
    return write_readable(folder, f"fake_{prefix.rstrip(':')}_{moment}.py", text)


@pytest.mark.parametrize(
    ("kind", "moment"), [("sandbox", "import"), ("sandbox", "move"), ("plain", "import")]
)
@pytest.mark.parametrize("prefix", TOOL_WORDS)
def test_a_bot_writing_the_sandbox_tools_words_crashes_as_itself(
    readable: Path, prefix: str, kind: str, moment: str
) -> None:
    """A bot that writes what a sandbox that cannot start writes ("bwrap: ...") and exits
    -- a hostile bot's way to void the games it would lose -- forfeits them (CRASH, the
    opponent wins): only the launcher's own report says the harness failed, never what the
    bot prints."""
    bot = _fake_harness_error(readable, prefix, moment)
    slot = 72 + TOOL_WORDS.index(prefix) * 2 + (moment == "move")
    launcher = sandbox_launcher(slot) if kind == "sandbox" else PlainLauncher()
    players: list[Player] = [ProcessPlayer(bot, launcher), StrategyPlayer("greedy")]
    outcomes = list(play_match(find_rules("draw"), players, games=1, seed=5, time_control=CLOCK))
    check_verdicts(outcomes, T.CRASH)
    verdict = outcomes[0].verdict
    assert verdict is not None and verdict.stderr.startswith(f"{prefix} Creating new namespace")


def test_a_sleeper_forfeits_on_its_wall_clock_bank() -> None:
    """A bot that sleeps a second a move (no CPU) is charged the wait beyond its free wall
    time (wall_factor x move time) against a wall bank (wall_factor x bank): TIMEOUT by
    the second or third move, not never."""
    outcomes = play("naps.py", PlainLauncher(), games=1)
    verdict = outcomes[0].verdict
    assert verdict is not None and verdict.termination is T.TIMEOUT
    assert "wall bank spent" in verdict.message or "no reply within" in verdict.message
    assert len(outcomes[0].game.round.events) <= 8


def test_process_creation_is_a_clear_crash_in_the_sandbox() -> None:
    verdict = play("forker.py", sandbox_launcher(40), games=1)[0].verdict
    assert verdict is not None and verdict.termination is T.CRASH
    assert "PermissionError" in verdict.message
    assert "may not start processes: threads only" in verdict.message


def test_stderr_is_capped_for_the_match_and_the_tail_says_so() -> None:
    """10 MB (under the match's output cap): the game plays out, the tail is a few KiB and
    names the cap on what is kept."""
    player = ProcessPlayer(BOTS / "stderr_megabytes.py", sandbox_launcher(41))
    outcomes = list(
        play_match(
            find_rules("draw"),
            [player, StrategyPlayer("greedy")],
            games=1,
            seed=5,
            time_control=TimeControl(move_seconds=2.0, bank_seconds=10.0),
        )
    )
    assert outcomes[0].verdict is None
    tail = player.stderr_tail()
    assert tail.startswith("[stderr capped: ") and len(tail) < 5000


def test_a_syntax_error_names_the_bots_line(tmp_path: Path) -> None:
    bot = tmp_path / "broken.py"
    bot.write_text("def play(observation):\n    return observation.legal_moves[0]\nif if\n")
    verdict = play_path(bot, PlainLauncher())
    assert verdict is not None and verdict.termination is T.CRASH
    assert "SyntaxError: invalid syntax (line 3)" in verdict.message


def play_path(bot: Path, launcher: Launcher) -> Verdict | None:
    players: list[Player] = [ProcessPlayer(bot, launcher), StrategyPlayer("greedy")]
    outcomes = list(play_match(find_rules("draw"), players, games=1, seed=5, time_control=CLOCK))
    return outcomes[0].verdict


def test_a_stop_ends_the_match_between_two_moves_and_closes_the_players() -> None:
    rules = find_rules("draw")
    closed: list[int] = []

    class Closing(StrategyPlayer):
        def close(self) -> None:
            closed.append(1)
            super().close()

    steps = 0

    def stop() -> bool:
        nonlocal steps
        steps += 1
        return steps > 3

    players = [Closing("random"), Closing("greedy")]
    games = list(play_match(rules, players, games=4, seed=1, stop=stop))
    assert games == [] and steps == 4 and len(closed) == 2  # (no game ends in 3 moves)
    fresh: list[Player] = [StrategyPlayer("random"), StrategyPlayer("greedy")]
    played = list(play_match(rules, fresh, games=4, seed=1, stop=lambda: False))
    assert len(played) == 4


# A bot that notes when it started (the system's monotonic clock) in a file beside itself,
# then takes a while to load.
SLOW_START = """
import time
from pathlib import Path
Path(__file__).with_suffix(".started").write_text(repr(time.monotonic()))
time.sleep(1.5)


def play(observation):
    return observation.legal_moves[0]
"""


def test_the_seats_bots_start_together_before_the_referee_waits_for_one(tmp_path: Path) -> None:
    """Every seat's process is started before the referee reads the first handshake: two
    bots that each take 1.5 s to load start well within 1.5 s of each other."""
    files = [tmp_path / "first.py", tmp_path / "second.py"]
    for file in files:
        file.write_text(SLOW_START)
    players: list[Player] = [ProcessPlayer(file, PlainLauncher()) for file in files]
    clock = TimeControl(startup_seconds=20.0)
    games = list(play_match(find_rules("draw"), players, games=1, seed=1, time_control=clock))
    assert len(games) == 1 and games[0].verdict is None
    first, second = (float(file.with_suffix(".started").read_text()) for file in files)
    assert abs(second - first) < 1.2  # one after the other: 1.5 s or more apart


@pytest.mark.parametrize("preset", ["draw", "muggins", "block"])
def test_built_in_strategies_play_arena_plays_games_through_the_referee(preset: str) -> None:
    """StrategyPlayer (no salt) asks choose() without an observation: the same games, record
    for record, as the engine's own loop (`arena play`)."""
    rules = find_rules(preset)
    names = ["greedy", "random", "random"]
    played = list(play_games(rules, names, games=6, seed=12))
    seats: list[Player] = [StrategyPlayer(name) for name in names]
    refereed = sorted(play_match(rules, seats, games=6, seed=12), key=lambda o: o.index)
    assert [game_record(outcome.game, names) for outcome in refereed] == [
        game_record(game, names) for game in played
    ]


@pytest.mark.parametrize("salts", [None, ("ada", "bob", "cy", "dee")])
def test_built_in_seats_play_the_same_games_one_after_another(
    salts: tuple[str, ...] | None,
) -> None:
    """A match whose every seat is a built-in strategy is played a game at a time, each
    strategy asked with its legal moves (no request and answer a decision: a compare of
    greedy against random spent two thirds of its CPU on them); its games are those the
    referee plays with games in flight (each strategy seeded by its game), with the same
    untimed decisions, on every preset and player count (with entrants' salts too)."""
    from arena.engine.rules import PRESETS

    for rules in PRESETS.values():
        for players in [n for n in range(2, 5) if _allowed(rules, n)]:
            names = (["greedy", "random"] * 2)[:players]

            fast = list(play_match(rules, _lineup(names, salts), games=6, seed=11))
            slow = list(
                play_match(rules, _lineup(names, salts), games=6, seed=11, watch=lambda i, g: None)
            )
            slow.sort(key=lambda outcome: outcome.index)
            assert [o.index for o in fast] == list(range(6))
            for one, other in zip(fast, slow, strict=True):
                assert game_record(one.game, names) == game_record(other.game, names), rules.name
                assert one.times == other.times and one.verdict is other.verdict is None


def _lineup(names: list[str], salts: tuple[str, ...] | None) -> list[Player]:
    from arena.match.players import StrategyPlayer

    return [StrategyPlayer(n, None if salts is None else salts[s]) for s, n in enumerate(names)]


def _allowed(rules: Rules, players: int) -> bool:
    try:
        rules.check_players(players)
    except RulesError:
        return False
    return True
