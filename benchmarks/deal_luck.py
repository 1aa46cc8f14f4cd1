"""An exploration: AIVAT-style luck terms from reference-policy rollouts, measured.

Usage::

    ./run python benchmarks/deal_luck.py [--pool 2000] [--only TEXT] [--seed 1]
        [--terms deal,deal3,value3,shuffled]

For the pools of ``benchmarks/verdicts.py`` (duplicate deal groups played in this process)
it computes, besides today's luck of the draw (``pips``, ``fits``), candidate luck terms
with expectation exactly 0 whatever the bots do:

- ``deal``: for every round dealt from the seed, R(D) minus the mean of R over the k
  cyclic rotations of the hands among the seats, where R(D) is each side's points in the
  round when every seat plays the deterministic reference policy (greedy) on exactly that
  deal (same boneyard order, the round's number and the scores before it; the leader
  recomputed by the engine from the rotated hands). The shuffle is uniform and unseen, and
  rotating the hands is a bijection on deals (which keeps "some hand holds a double"), so
  R(D) and R(rotated D) have the same law given the past: the difference has mean 0.
- ``deal3``: the same with R averaged over three reference policies (greedy, lightest
  tile first, first legal move).
- ``value`` (always; now the third term of :func:`arena.compete.margins.group_margin`):
  for every tile drawn from the boneyard, the greedy rollout value of the round (each
  side's points) with that tile drawn, minus its mean over the boneyard's transpositions
  (the tile drawn swapped with each tile left, the rest of the order kept): the tile drawn
  is uniform over the tiles left given the past, and each transposition is a bijection of
  the boneyard orders, so the difference has mean 0. Its CPU time is that of
  ``group_margin`` (the pips and fits cost next to nothing).
- ``value3``: the same with the rollouts averaged over the three reference policies.
- ``shuffled``: the same with greedy rollouts averaged over the boneyard's order behind
  the draw as dealt and two fixed reorderings of it (three rollouts a transposition);
  ``shuffled6``: five fixed reorderings (six rollouts).

NEW's term is its side's sum over the game minus the mean of the other sides', averaged
over the group's games like the margin. For each pool the table gives, per statistic,
its variance over the game scores' (on the game-score scale by the margin's regression on
the game scores, as ``verdicts.py --part pools`` puts "margin - luck") and its
calibration c; the mean of each new term with its standard error (must be near 0), and
the CPU time per game of computing it.

Findings (2,000 groups a pool, greedy v random): ``deal`` removes next to nothing (draw 2p
0.617 to 0.611): a group's games deal the same rounds and the lead follows the hands, so
NEW's deal term of a round both games reached is exactly minus the other game's, and only
the rounds one game alone reached are left. ``value`` removes much (0.617 to 0.475 in draw
2p, 0.762 to 0.646 in draw 3p, 0.657 to 0.572 in 2v2 muggins; block draws nothing),
``shuffled`` more (0.47 to 0.42 to 0.39 with 1, 3, 6 orders in draw 2p, 500 groups)
at 4 and 7 times the CPU; ``value3`` less than ``value``.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # benchmarks.verdicts

from arena.compete.margins import GroupMargin, group_margin, sides_of
from arena.compete.sprt import MarginScores, elo_estimate
from arena.engine.deal import Deal
from arena.engine.records import deal_from_dict
from arena.engine.round import Round
from arena.engine.rules import PRESETS, Rules, rules_from_record
from arena.engine.tiles import Move
from arena.match.botkit import load_bot
from arena.match.play import game_seeds
from arena.match.strategies import STRATEGIES, heaviest
from benchmarks.verdicts import BOTS, Pair, _calibrated, _derive, _play_group
from benchmarks.verdicts import POOLS as VERDICT_POOLS

FloatArray = npt.NDArray[np.float64]
Policy = Callable[[tuple[Move, ...]], Move]


def _pips(move: Move) -> int:
    return move.tile.pips


def lightest(moves: tuple[Move, ...]) -> Move:
    """The lightest tile, first of equals."""
    return min(moves, key=_pips)


def first(moves: tuple[Move, ...]) -> Move:
    """The first legal move (lowest tile id)."""
    return moves[0]


greedy: Policy = heaviest  # the built-in greedy strategy's choice
POLICIES: dict[str, Policy] = {"greedy": greedy, "lightest": lightest, "first": first}


def rollout(round_: Round, policy: Policy) -> tuple[int, ...]:
    """Play ``round_`` to its end with ``policy`` at every seat: each side's points."""
    while round_.result is None:
        round_.apply(policy(round_.legal_moves()))
    return round_.result.points


def _side_term(values: Sequence[float], mine: int) -> float:
    others = [v for side, v in enumerate(values) if side != mine]
    return values[mine] - sum(others) / len(others)


@dataclass
class Context:
    rules: Rules
    teams: bool
    sides: tuple[int, ...]
    count: int


def _context(record: Mapping[str, Any]) -> Context:
    data = record["rules"]
    sides = sides_of(record)
    return Context(
        rules_from_record(data["name"], data["params"]),
        bool(record.get("teams")),
        sides,
        max(sides) + 1,
    )


def _rounds(record: Mapping[str, Any]) -> list[tuple[Mapping[str, Any], list[int]]]:
    """Each seed-dealt round with the scores before it."""
    out = []
    scores = [0] * (max(sides_of(record)) + 1)
    for round_ in record.get("rounds") or ():
        if round_.get("dealt", "seed") == "seed":
            out.append((round_, list(scores)))
        scores = list(round_.get("scores") or scores)
    return out


def deal_term(record: Mapping[str, Any], policies: Sequence[Policy]) -> list[float]:
    """Each side's deal term over the game (not yet NEW's side minus the others)."""
    ctx = _context(record)
    totals = [0.0] * ctx.count
    for data, scores in _rounds(record):
        deal = deal_from_dict(data["deal"])
        players = len(deal.hands)
        values = []
        for shift in range(players):
            hands = tuple(deal.hands[(seat + shift) % players] for seat in range(players))
            rotated = Deal(hands, deal.boneyard, deal.lead_draw)
            points = [0.0] * ctx.count
            for policy in policies:
                round_ = Round(
                    ctx.rules, rotated, teams=ctx.teams, scores=scores,
                    number=int(data["number"]), check=False,
                )  # fmt: skip
                for side, p in enumerate(rollout(round_, policy)):
                    points[side] += p / len(policies)
            values.append(points)
        for side in range(ctx.count):
            totals[side] += values[0][side] - sum(v[side] for v in values) / players
    return totals


def _tails(size: int, count: int) -> list[list[int]]:
    """``count`` fixed orders of ``size`` places: the identity, then fixed shuffles."""
    rng = random.Random(size)
    orders = [list(range(size))]
    for _ in range(count - 1):
        order = list(range(size))
        rng.shuffle(order)
        orders.append(order)
    return orders


def value_term(
    record: Mapping[str, Any], policies: Sequence[Policy], reorderings: int = 1
) -> list[float]:
    """Each side's draw-rollout value over the game: ``value`` of arena.compete.margins
    with the rollouts averaged over ``policies`` and over ``reorderings`` fixed orders of
    the boneyard behind the draw (1: as dealt)."""
    ctx = _context(record)
    totals = [0.0] * ctx.count
    if not ctx.rules.draws:
        return totals
    for data, scores in _rounds(record):
        deal = deal_from_dict(data["deal"])
        boneyard = list(deal.boneyard)
        plays: list[Move] = []
        draws: list[int] = []
        for event in data["events"]:
            if event["type"] == "play":
                plays.append(Move.parse(event["move"]))
                draws.append(0)
            elif event["type"] == "draw":
                draws[-1] += 1
        place = 0
        for played, made in enumerate(draws):
            for _ in range(made):
                outcomes = []
                for other in range(place, len(boneyard)):
                    swapped = boneyard[:]
                    swapped[place], swapped[other] = swapped[other], swapped[place]
                    points = [0.0] * ctx.count
                    tails = _tails(len(boneyard) - place - 1, reorderings)
                    for tail in tails:
                        order = swapped[: place + 1] + [swapped[place + 1 + i] for i in tail]
                        for policy in policies:
                            trial = Round(
                                ctx.rules, Deal(deal.hands, tuple(order), deal.lead_draw),
                                teams=ctx.teams, scores=scores, number=int(data["number"]),
                                check=False,
                            )  # fmt: skip
                            for move in plays[: played + 1]:
                                trial.apply(move)
                            for side, p in enumerate(rollout(trial, policy)):
                                points[side] += p / (len(tails) * len(policies))
                    outcomes.append(points)
                for s in range(ctx.count):
                    totals[s] += outcomes[0][s] - sum(o[s] for o in outcomes) / len(outcomes)
                place += 1
    return totals


@dataclass
class PoolData:
    pair: Pair
    groups: list[GroupMargin] = field(default_factory=list)
    terms: dict[str, list[float]] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)
    games: int = 0


TERMS: dict[str, Callable[[Mapping[str, Any]], list[float]]] = {
    "deal": lambda record: deal_term(record, [greedy]),
    "deal3": lambda record: deal_term(record, list(POLICIES.values())),
    "value3": lambda record: value_term(record, list(POLICIES.values())),
    "shuffled": lambda record: value_term(record, [greedy], 3),
    "shuffled6": lambda record: value_term(record, [greedy], 6),
}


def play(pair: Pair, groups: int, seed: int, terms: Sequence[str]) -> PoolData:
    rules = PRESETS[pair.rules]
    runners = {
        label: load_bot(BOTS / f"{pair.new if label == 'new' else pair.old}.py")
        for label in pair.labels
        if (pair.new if label == "new" else pair.old) not in STRATEGIES
    }
    data = PoolData(pair, terms={name: [] for name in terms}, seconds=dict.fromkeys(terms, 0.0))
    data.seconds["value"] = 0.0
    for game_seed in game_seeds(_derive("pool", seed, pair.label), groups):
        records, seats = _play_group(pair, rules, game_seed, runners)
        started = time.process_time()
        data.groups.append(group_margin(records, seats))
        data.seconds["value"] += time.process_time() - started
        data.games += len(records)
        for name in terms:
            started = time.process_time()
            value = 0.0
            for record, seat in zip(records, seats, strict=True):
                sides = sides_of(record)
                value += _side_term(TERMS[name](record), sides[seat])
            data.seconds[name] += time.process_time() - started
            data.terms[name].append(value / len(records))
    return data


def _adjusted(m: FloatArray, luck: FloatArray) -> FloatArray:
    luck = luck - luck.mean(axis=0)
    design = np.column_stack([np.ones(len(m)), luck])
    beta = np.linalg.lstsq(design, m, rcond=None)[0][1:]
    result: FloatArray = m - luck @ beta
    return result


def report(pools: Sequence[PoolData], terms: Sequence[str]) -> None:
    sets: list[tuple[str, list[str]]] = [("margin", []), ("- pf", ["pips", "fits"])]
    terms = ["value", *terms]
    for name in terms:
        sets.append((f"- pf+{name}", ["pips", "fits", name]))
    if "deal" in terms:
        sets.append(("- pf+v+deal", ["pips", "fits", "value", "deal"]))
    print("\nVariance over the game scores' (on the score scale) and calibration c, per statistic;")
    print("each new term's mean +- standard error, and its CPU ms a game")
    head = f"{'pair':34} {'groups':>6} {'Elo games':>17} " + " ".join(
        f"{label:>13}" for label, _ in sets
    )
    head += " " + " ".join(f"{name + ' mean+-se':>17} {'ms':>6}" for name in terms)
    print(head)
    for pool in pools:
        g = np.array([group.score for group in pool.groups])
        m = np.array([group.margin for group in pool.groups])
        columns: dict[str, FloatArray] = {
            "pips": np.array([group.luck[0] for group in pool.groups]),
            "fits": np.array([group.luck[1] for group in pool.groups]),
            "value": np.array([group.luck[2] for group in pool.groups]),
        }
        for name in terms[1:]:
            columns[name] = np.array(pool.terms[name])
        game_elo = elo_estimate(MarginScores(pool.groups).game_scores())
        known = not game_elo[1] < 0 < game_elo[2]
        cells = []
        for _, names in sets:
            x = m if not names else _adjusted(m, np.column_stack([columns[n] for n in names]))
            c, ratio = _calibrated(g, x, m)
            cells.append(f"{ratio:5.3f} c{c:4.2f}" if known else f"{ratio:5.3f} c  - ")
        extra = []
        for name in terms:
            values = columns[name]
            se = values.std(ddof=1) / math.sqrt(len(values))
            ms = 1000 * pool.seconds[name] / pool.games
            extra.append(f"{values.mean():+8.3f}+-{se:6.3f} {ms:6.2f}")
        print(
            f"{pool.pair.label:34} {len(pool.groups):6d} "
            f"{game_elo[0]:+6.1f} [{game_elo[1]:+.0f},{game_elo[2]:+.0f}] "
            + " ".join(f"{c:>13}" for c in cells)
            + " "
            + " ".join(extra),
            flush=True,
        )


#: verdicts.py's pools but random v random, wooden and 4-player draw, and counter v greedy.
POOLS = [
    *VERDICT_POOLS[:1],
    Pair("draw", 2, "counter", "greedy"),
    *(p for p in VERDICT_POOLS[2:] if (p.rules != "wooden" and p.players != 4) or p.teams),
]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--pool", type=int, default=2000, help="deal groups a pool")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--only", default="", help="pools whose label contains this")
    parser.add_argument(
        "--terms",
        default="deal,deal3",
        help="more terms to compute: deal,deal3,value3,shuffled,shuffled6",
    )
    args = parser.parse_args(argv)
    terms = [t for t in args.terms.split(",") if t]
    pools = []
    for pair in POOLS:
        if args.only not in pair.label:
            continue
        started = time.perf_counter()
        pool = play(pair, args.pool, args.seed, terms)
        print(f"pool {pair.label}: {len(pool.groups)} groups in "
              f"{time.perf_counter() - started:.0f} s", flush=True)  # fmt: skip
        pools.append(pool)
        report([pool], terms)
    report(pools, terms)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
