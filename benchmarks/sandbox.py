"""Sandbox cost: cold start of a bot, and match speed sandboxed against in-process.

Usage::

    ./run python benchmarks/sandbox.py [--games N] [--starts N] [--rules NAME]

Prints, from one run:

- the cold start of a Python bot (process start to its handshake reply), median
  of ``--starts`` starts, in the sandbox and as a plain subprocess of the same
  interpreter (Debian's ``/usr/bin/python3``), and the CPU a start costs (the referee's
  process and the bot's, its close included);
- the games per second of a match between two ``bots/random.py`` bots, each in
  its own sandboxed process (batched protocol, the referee's ``GAMES_IN_FLIGHT`` games
  at once), and between the same two bots loaded in this process; and the ratio;
- the measure that matters: moves per second of that sandboxed match against the
  engine's own random play (``Game`` with a random legal move, in this process), in
  the same run (goal: at least 0.25): the match's play, from the bots' handshake on
  (their start-up is the first line's, paid once a match), and with start-up; and
  the CPU time a move costs the referee and the bots against the engine's (a loaded
  machine stretches wall-clock time, not CPU time: with every core busy the wall
  ratio is at most engine / (referee + bots));
- ``arena compare bots/greedy.py bots/random.py`` against ``arena play`` of the same
  two bot files, games per second of each command (run as a user runs it, start-up
  included; the test's bounds set so that it plays all ``--compare-games``), goal
  at least 0.8; and ``arena compare --statistic game`` (no luck-of-the-draw rollouts:
  what the default margin statistic costs).

Needs the sandbox (bubblewrap, libseccomp): ``./run test`` installs them as root.
"""

from __future__ import annotations

import argparse
import random
import resource
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from arena import Game, find_rules
from arena.match.lineup import make_players, release_kept_players
from arena.match.referee import (
    InProcessPlayer,
    Launcher,
    PlainLauncher,
    Player,
    ProcessPlayer,
    TimeControl,
    play_match,
)
from arena.match.sandbox import Sandbox, check_sandbox, check_sandbox_report, process_slots
from arena.match.warm import MAX_GAMES, MatchSetup

ROOT = Path(__file__).resolve().parent.parent
RANDOM_BOT = ROOT / "bots" / "random.py"
GREEDY_BOT = ROOT / "bots" / "greedy.py"
CLOCK = TimeControl()


def cold_start(launcher: Launcher, starts: int) -> tuple[float, float]:
    """(median seconds from starting the bot's process to its handshake reply, mean CPU
    seconds of a start: this process's and its children's, the bot's closing included)."""
    times = []
    cpu = time.process_time() + _children_cpu()
    for _ in range(starts):
        player = ProcessPlayer(RANDOM_BOT, launcher)
        began = time.perf_counter()
        player.open(CLOCK)
        times.append(time.perf_counter() - began)
        player.close()
    return statistics.median(times), (time.process_time() + _children_cpu() - cpu) / starts


def warm_start(starts: int, rules: str) -> tuple[float, float]:
    """Median seconds for a match between two sandboxed bots to start (the seats made and
    both bots ready: handshakes cold, kept bots resumed and checked warm): cold, warm."""
    specs = [str(RANDOM_BOT), str(GREEDY_BOT)]
    setup = MatchSetup(find_rules(rules).version, 2, False, CLOCK, "benchmark")
    medians = []
    for keep in (0, MAX_GAMES):
        times = []
        for _ in range(starts + 1):
            began = time.perf_counter()
            players = make_players(specs, keep_games=keep, setup=setup)
            for player in players:
                player.open(CLOCK)
            times.append(time.perf_counter() - began)
            for player in players:
                player.close()
        release_kept_players()
        medians.append(statistics.median(times[1:]))  # the first warm start is a cold one
    return medians[0], medians[1]


def games_per_second(players: list[Player], games: int, rules: str) -> float:
    """Games per second of one match between ``players``."""
    began = time.perf_counter()
    played = sum(1 for _ in play_match(find_rules(rules), players, games=games, seed=1))
    return played / (time.perf_counter() - began)


def engine_moves_per_second(games: int, rules: str) -> float:
    """Decisions per second of the engine playing random legal moves by itself."""
    return engine_speed(games, rules)[0]


def engine_speed(games: int, rules: str) -> tuple[float, float]:
    """(decisions per second, CPU seconds a decision) of the engine playing random legal
    moves by itself."""
    rng = random.Random(1)
    moves = 0
    cpu = time.process_time()
    began = time.perf_counter()
    for seed in range(games):
        game = Game(find_rules(rules), 2, seed=seed)
        while not game.is_terminal():
            game.apply(rng.choice(game.legal_moves()))
            moves += 1
    return moves / (time.perf_counter() - began), (time.process_time() - cpu) / moves


@dataclass(frozen=True)
class MatchSpeed:
    """A sandboxed match's speed: moves a second of its play (from the handshakes on) and
    with its bots' start-up, and the CPU seconds a move cost the referee and the bots."""

    play: float
    with_startup: float
    referee_cpu: float
    bots_cpu: float


def sandboxed_moves_per_second(games: int, rules: str) -> MatchSpeed:
    """Decisions per second of a match between two sandboxed random bots."""
    first = process_slots()
    players = [
        ProcessPlayer(RANDOM_BOT, Sandbox(slot=first)),
        ProcessPlayer(RANDOM_BOT, Sandbox(slot=first + 1)),
    ]
    cpu = time.process_time()
    began = time.perf_counter()
    for _ in play_match(find_rules(rules), list[Player](players), games=games, seed=1):
        pass
    seconds = time.perf_counter() - began
    cpu = time.process_time() - cpu
    moves = sum(player.decisions for player in players)
    startup = sum(player.startup_seconds for player in players)  # opened one after the other
    return MatchSpeed(
        play=moves / (seconds - startup),
        with_startup=moves / seconds,
        referee_cpu=cpu / moves,
        bots_cpu=sum(player.seconds_spent for player in players) / moves,
    )


def _children_cpu() -> float:
    """CPU seconds of this process's children that have ended (and theirs, waited for)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


#: Games per CPU second of each command :func:`command_games_per_second` ran, by its command
#: and ``--statistic`` (its processes and those they waited for: robust to the load).
GAMES_PER_CPU: dict[str, float] = {}


def command_games_per_second(args: list[str], games: int) -> float:
    """Games per second of one ``arena`` command that plays ``games`` games."""
    arena = Path(sys.executable).parent / "arena"
    cpu = _children_cpu()
    began = time.perf_counter()
    done = subprocess.run([str(arena), *args], check=False, stdout=subprocess.DEVNULL)
    seconds = time.perf_counter() - began
    label = " ".join(
        [args[0], *args[args.index("--statistic") :][:2]] if "--statistic" in args else args[:1]
    )
    GAMES_PER_CPU[label] = games / (_children_cpu() - cpu)
    if done.returncode not in (0, 1, 2):  # compare's verdicts: passed, failed, undecided
        raise SystemExit(f"arena {' '.join(args)} failed with status {done.returncode}")
    return games / seconds


def compare_against_play(games: int, rules: str) -> tuple[float, float, float]:
    """(``arena compare``, ``arena play``, ``arena compare --statistic game``) games per
    second, greedy against random."""
    bots = [str(GREEDY_BOT), str(RANDOM_BOT)]
    # elo1 so close to elo0, with alpha = beta = 0.001, that the test plays every game
    sprt = ["--elo0", "0", "--elo1", "2", "--alpha", "0.001", "--beta", "0.001"]
    compare_args = ["compare", *bots, "--rules", rules, "--seed", "1"]
    compare_args += ["--max-games", str(games), *sprt]
    compare = command_games_per_second(compare_args, games)
    play = command_games_per_second(
        ["play", "--rules", rules, "--seed", "1", "--bots", ",".join(bots), "--games", str(games)],
        games,
    )
    game_test = command_games_per_second([*compare_args, "--statistic", "game"], games)
    return compare, play, game_test


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; return the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--games", type=int, default=400, help="games per match (400)")
    parser.add_argument("--starts", type=int, default=20, help="cold starts to time (20)")
    parser.add_argument("--rules", default="draw", help="the rule set (draw)")
    parser.add_argument(
        "--compare-games", type=int, default=640, help="games of arena compare and play (640)"
    )
    args = parser.parse_args(argv)
    missing = check_sandbox()
    if missing:
        print("the sandbox is unavailable: " + "; ".join(missing), file=sys.stderr)
        return 1
    print(check_sandbox_report())
    plain = PlainLauncher(Path("/usr/bin/python3"))
    sandboxed, sandboxed_cpu = cold_start(Sandbox(slot=process_slots()), args.starts)
    bare, bare_cpu = cold_start(plain, args.starts)
    print(
        f"cold start to handshake (median of {args.starts}): sandboxed {sandboxed * 1000:.1f} ms, "
        f"plain subprocess {bare * 1000:.1f} ms, ratio {sandboxed / bare:.2f}; CPU a start "
        f"(this process's and the bot's processes'): sandboxed {sandboxed_cpu * 1000:.1f} ms, "
        f"plain {bare_cpu * 1000:.1f} ms"
    )
    cold, warm = warm_start(args.starts, args.rules)
    print(
        f"start-up of a warm bot against a cold one: a match of 2 sandboxed bots starts in "
        f"{warm * 1000:.2f} ms warm, {cold * 1000:.1f} ms cold (median of {args.starts}; "
        f"goal: warm under 5 ms)"
    )
    boxed: list[Player] = [
        ProcessPlayer(RANDOM_BOT, Sandbox(slot=process_slots())),
        ProcessPlayer(RANDOM_BOT, Sandbox(slot=process_slots() + 1)),
    ]
    local: list[Player] = [InProcessPlayer(RANDOM_BOT), InProcessPlayer(RANDOM_BOT)]
    in_process = games_per_second(local, args.games, args.rules)
    sandbox_rate = games_per_second(boxed, args.games, args.rules)
    print(
        f"{args.rules}, 2 random bots, {args.games} games: sandboxed {sandbox_rate:,.0f} games/s, "
        f"in-process {in_process:,.0f} games/s"
    )
    print(f"ratio sandboxed/in-process: {sandbox_rate / in_process:.2f}")
    engine, engine_cpu = engine_speed(args.games, args.rules)
    speed = sandboxed_moves_per_second(args.games, args.rules)
    print(
        f"{args.rules}, moves per second: sandboxed match of 2 random bots {speed.play:,.0f} "
        f"({speed.with_startup:,.0f} with the bots' start-up), the engine's own random play "
        f"{engine:,.0f}"
    )
    print(
        f"ratio sandboxed match/engine: {speed.play / engine:.3f} (goal >= 0.25; "
        f"{speed.with_startup / engine:.3f} with start-up)"
    )
    print(
        f"CPU a move: referee {speed.referee_cpu * 1e6:.1f} us, bots {speed.bots_cpu * 1e6:.1f} "
        f"us, engine alone {engine_cpu * 1e6:.1f} us; engine/(referee + bots) "
        f"{engine_cpu / (speed.referee_cpu + speed.bots_cpu):.3f}, engine/referee "
        f"{engine_cpu / speed.referee_cpu:.3f}"
    )
    compare, play, game_test = compare_against_play(args.compare_games, args.rules)
    print(
        f"{args.rules}, greedy against random, {args.compare_games} games: arena compare "
        f"{compare:,.0f} games/s, arena play {play:,.0f} games/s, arena compare --statistic "
        f"game {game_test:,.0f} games/s"
    )
    print(
        f"ratio compare/play: {compare / play:.2f} (goal >= 0.8); with --statistic game "
        f"{game_test / play:.2f}"
    )
    per_cpu = GAMES_PER_CPU
    print(
        f"games a CPU second (the commands' processes and the bots they waited for): arena "
        f"compare {per_cpu['compare']:,.0f}, arena play {per_cpu['play']:,.0f}, --statistic "
        f"game {per_cpu['compare --statistic game']:,.0f}; ratio compare/play "
        f"{per_cpu['compare'] / per_cpu['play']:.2f}, with --statistic game "
        f"{per_cpu['compare --statistic game'] / per_cpu['play']:.2f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
