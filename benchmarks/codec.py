"""The compact record codec: bytes a record and time a game, against raw JSON and zlib.

Usage::

    ./run python benchmarks/codec.py [--games N] [--seed S] [--processes]

Two kinds of records:

- the demo's: ``draw``, 2 players, every pair of the demo's reference bots
  (``arena serve --demo``: random, greedy, fives, counter) through the referee, the
  bots loaded in its own process, so every play is timed (version 2's ``times``, as
  the demo's sandboxed bots are); ``--processes`` runs each bot in its own plain
  process, as a worker does (without the sandbox), whose times are longer and noisier:
  they compress less;
- each preset at each player count (and 4-player team play where allowed), the
  built-in ``greedy`` and ``random`` in turn at the seats, untimed.

For each: a record's bytes as canonical JSON, as zlib (level 9) of it, and as
:func:`arena.engine.codec.encode` (mean and p95), and the milliseconds a game takes to
encode and to decode (mean). Every record is checked to come back byte-identical.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import statistics
import time
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from arena.engine.codec import CODEC_VERSION, canonical, decode, encode
from arena.engine.records import game_record
from arena.engine.rules import PRESETS, find_rules
from arena.match.play import play_games
from arena.match.players import InProcessPlayer, Player
from arena.match.referee import PlainLauncher, ProcessPlayer, play_match

BOTS = Path(__file__).resolve().parent.parent / "bots"
#: The reference bots ``arena serve --demo`` plays (arena/cli/serve.py's DEMO_BOTS).
DEMO_BOTS = ("random", "greedy", "fives", "counter")


def demo_records(games: int, seed: int, processes: bool) -> Iterator[dict[str, Any]]:
    """``games`` timed ``draw`` games of each pair of the demo's bots."""
    for first, second in itertools.combinations(DEMO_BOTS, 2):
        players = [bot_player(BOTS / f"{name}.py", processes) for name in (first, second)]
        for outcome in play_match(find_rules("draw"), players, games=games, seed=seed):
            verdict = None if outcome.verdict is None else outcome.verdict.to_dict()
            record = game_record(
                outcome.game, [first, second], verdict=verdict, times=outcome.times
            )
            yield json.loads(json.dumps(record))


def bot_player(path: Path, processes: bool) -> Player:
    return ProcessPlayer(path, PlainLauncher()) if processes else InProcessPlayer(path)


def preset_records(name: str, players: int, teams: bool, games: int, seed: int) -> list[Any]:
    names = [("greedy", "random")[seat % 2] for seat in range(players)]
    played = play_games(find_rules(name), names, games=games, seed=seed, teams=teams)
    return [json.loads(json.dumps(game_record(game, names))) for game in played]


def p95(values: list[int]) -> float:
    ordered = sorted(values)
    return float(ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))])


def measure(label: str, records: list[dict[str, Any]]) -> None:
    raw, zipped, coded, encode_ms, decode_ms, compact = [], [], [], [], [], 0
    for record in records:
        text = canonical(record)
        raw.append(len(text.encode()))
        zipped.append(len(zlib.compress(text.encode(), 9)))
        start = time.perf_counter()
        data = encode(record)
        middle = time.perf_counter()
        back = decode(data)
        end = time.perf_counter()
        if canonical(back) != text:
            raise SystemExit(f"{label}: a record did not come back byte-identical")
        coded.append(len(data))
        compact += data[0] == CODEC_VERSION
        encode_ms.append((middle - start) * 1000)
        decode_ms.append((end - middle) * 1000)
    print(
        f"{label:<26} {len(records):>5} {statistics.mean(raw):>8,.0f} {p95(raw):>8,.0f}"
        f" {statistics.mean(zipped):>7,.0f} {p95(zipped):>7,.0f}"
        f" {statistics.mean(coded):>7,.0f} {p95(coded):>7,.0f}"
        f" {statistics.mean(encode_ms):>7.2f} {statistics.mean(decode_ms):>7.2f}"
        f" {compact:>5}/{len(records)}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=20, help="games a setup (default 20)")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument(
        "--processes", action="store_true", help="the demo's bots in their own processes"
    )
    args = parser.parse_args()
    print(f"load {os.getloadavg()[0]:.1f}; bytes a record (mean, p95); ms a game (mean)")
    print(
        f"{'records':<26} {'games':>5} {'json':>8} {'p95':>8} {'zlib':>7} {'p95':>7}"
        f" {'codec':>7} {'p95':>7} {'enc ms':>7} {'dec ms':>7} {'compact':>11}"
    )
    demo = list(demo_records(args.games, args.seed, args.processes))
    measure("demo: draw, 4 bots, timed", demo)
    for name, rules in PRESETS.items():
        for players in rules.players:
            for teams in [False, True] if rules.team_play and players == 4 else [False]:
                label = f"{name} {players}p" + (" teams" if teams else "")
                measure(label, preset_records(name, players, teams, args.games, args.seed))


if __name__ == "__main__":
    main()
