"""The final's games to separate adjacent ranks, against a plain round robin to the same separation.

    ./run python benchmarks/final.py [--runs 10] [--cap 14000] [--finalists 8]
        [--correction none,mixture,pocock,obf] [--schedules final,final+bridges] [--quick]

Eight finalists (``--finalists``) of known strength, from the fields of
``benchmarks/ladder.py``: the top 8 of its 50 entrants over 400 Elo (8.2 Elo
apart: what a final of a tight ladder gets), the top 8 of 50 over 1200 Elo
(24.5 apart: a typical field) and 8 spread over 400 Elo (57 apart). Outcomes
come from the Bradley-Terry model the fit assumes (no draws); a deal is
``--games-per-deal`` games (a duplicate deal, its seats rotated: the model
draws them independently, so it does not credit duplicate deals with their
lower luck).

Schedules, each refitting after every round and stopping when every neighbour
pair of the fitted order is separated at 0.95 (the boundary of
:func:`arena.compete.final.assess_final` under ``--correction``, the policy's
default unless given) or at ``--cap`` games (the policy's ``max_games``: the
boundary depends on it; default the policy's default):

- ``final``: :func:`assess_final`'s rounds (a round robin, then the unseparated
  neighbours only), one deal a pair a round;
- ``final 8 a round``: the same with ``round_deals=8`` (rounds filled to 8
  deals, the least separated pairs repeated: fewer rounds, so fewer waits for a
  round's slowest match);
- ``final+bridges``: the same as ``final``, with the second neighbours inside
  unseparated runs;
- ``round robin``: every pair, one deal a round, until the same separation.

Prints per correction, field and schedule, over ``--runs`` seeds: the median
and mean games (runs that hit the cap count at the cap, and how many did), the
median rounds, the separated neighbour pairs whose declared order is wrong (of
all declared, and as a rate: the confidence promises at most 5%), and the ties
left at the end (of 7). Figures from one run; no timing. The default run takes
a few minutes of CPU; ``--quick`` (3 runs) about a minute.
"""

from __future__ import annotations

import argparse
import itertools
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from arena.compete.final import FinalPolicy, FinalState, assess_final
from arena.compete.ratings import ELO_PER_NAT, ResultMatrix

FloatArray = npt.NDArray[np.float64]
#: The contract's default cap (FinalPolicy.max_games).
DEFAULT_CAP = FinalPolicy().max_games


@dataclass(frozen=True, slots=True)
class Outcome:
    """One simulated final: games played, whether it separated, its errors, its ties."""

    games: int
    rounds: int
    separated: bool
    wrong: int
    declared: int
    ties: int


def fields(finalists: int) -> dict[str, FloatArray]:
    """The true strengths (Elo, best first) of each benchmarked field."""
    tight, wide = np.linspace(400.0, 0.0, 50), np.linspace(1200.0, 0.0, 50)
    return {
        f"top {finalists} of 50 over 400 Elo ({400 / 49:.1f} apart)": tight[:finalists],
        f"top {finalists} of 50 over 1200 Elo ({1200 / 49:.1f} apart)": wide[:finalists],
        f"{finalists} over 400 Elo ({400 / (finalists - 1):.0f} apart)": np.linspace(
            400.0, 0.0, finalists
        ),
    }


def play(
    rng: np.random.Generator,
    truth: FloatArray,
    matrix: ResultMatrix,
    pairs: list[tuple[int, int]],
    games: int,
) -> None:
    """Play ``games`` Bradley-Terry games of each pair into ``matrix`` (codes = indices)."""
    first = np.repeat([a for a, _ in pairs], games)
    second = np.repeat([b for _, b in pairs], games)
    p_first = 1.0 / (1.0 + np.exp(-(truth[first] - truth[second]) / ELO_PER_NAT))
    wins = rng.random(first.size) < p_first
    matrix.add_pairs(np.where(wins, first, second), np.where(wins, second, first))


def errors(state: FinalState, index: dict[str, int]) -> tuple[int, int]:
    """Separated neighbour pairs whose order is wrong (truth: lower index is better), and all."""
    rows = state.standings
    declared = [(a, b) for a, b in itertools.pairwise(rows) if a.separated_from_next]
    wrong = sum(1 for a, b in declared if index[a.id] > index[b.id])
    return wrong, len(declared)


def simulate(
    truth: FloatArray,
    schedule: str,
    seed: int,
    cap: int,
    per_deal: int,
    correction: str,
) -> Outcome:
    """One final of ``schedule`` on ``truth`` until separated or ``cap`` games, its
    repeated looks corrected by ``correction`` (:attr:`FinalPolicy.correction`)."""
    names = [f"f{i}" for i in range(truth.size)]
    index = {name: i for i, name in enumerate(names)}
    everyone = list(itertools.combinations(range(truth.size), 2))
    policy = FinalPolicy(
        max_games=cap,
        bridges=schedule == "final+bridges",
        round_deals=ROUND_DEALS if schedule == f"final {ROUND_DEALS} a round" else 0,
        correction=correction,
    )
    rng = np.random.default_rng(seed)
    matrix = ResultMatrix()
    matrix.codes(names)
    games, rounds = 0, 0
    state = assess_final(names, None, 0, policy)
    while not state.done:
        rounds += 1
        pairs = (
            everyone
            if schedule == "round robin"
            else [(index[a], index[b]) for a, b in state.next_pairs]
        )
        play(rng, truth, matrix, pairs, per_deal * policy.deals_per_round)
        games += per_deal * policy.deals_per_round * len(pairs)
        state = assess_final(names, matrix, games, policy)
    wrong, declared = errors(state, index)
    return Outcome(games, rounds, state.ties == 0, wrong, declared, state.ties)


#: The final's ``round_deals`` in the schedule that fills its rounds (e.g. 8 worker processes).
ROUND_DEALS = 8
SCHEDULES = ["final", f"final {ROUND_DEALS} a round", "final+bridges", "round robin"]


def report(
    title: str,
    truth: FloatArray,
    runs: int,
    cap: int,
    per_deal: int,
    correction: str,
    schedules: list[str],
) -> None:
    """Print one field's table."""
    print(f"\n{title}, {runs} run(s), cap {cap} games, {per_deal} games a deal, {correction}")
    print(
        f"{'schedule':>17} {'median':>8} {'mean':>8} {'rounds':>7} {'capped':>7} "
        f"{'wrong/declared':>15} {'wrong':>6} {'ties':>5}"
    )
    medians = {}
    for schedule in schedules:
        outcomes = [
            simulate(truth, schedule, seed, cap, per_deal, correction) for seed in range(runs)
        ]
        games = [o.games for o in outcomes]
        capped = sum(1 for o in outcomes if not o.separated)
        wrong = sum(o.wrong for o in outcomes)
        declared = sum(o.declared for o in outcomes)
        ties = np.mean([o.ties for o in outcomes])
        medians[schedule] = float(np.median(games))
        rounds = np.median([o.rounds for o in outcomes])
        print(
            f"{schedule:>17} {np.median(games):>8.0f} {np.mean(games):>8.0f} {rounds:>7.0f} "
            f"{capped:>4}/{runs:<2} {wrong:>7}/{declared:<7} {wrong / max(declared, 1):>6.1%} "
            f"{ties:>5.2f}"
        )
    if "round robin" not in medians:
        return
    baseline = medians["round robin"]
    print(
        "  median games / the round robin's: "
        + ", ".join(f"{name} {value / baseline:.2f}" for name, value in medians.items())
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--finalists", type=int, default=8)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--cap", type=int, default=DEFAULT_CAP, help="the final's max_games")
    parser.add_argument("--games-per-deal", type=int, default=2)
    parser.add_argument(
        "--correction",
        default=",".join(dict.fromkeys(["none", FinalPolicy().correction])),
        help="comma-separated corrections for the repeated looks (FinalPolicy.correction)",
    )
    parser.add_argument("--schedules", default=",".join(SCHEDULES), help="comma-separated")
    parser.add_argument("--quick", action="store_true", help="3 runs: a smoke check")
    args = parser.parse_args()
    runs, cap = (3 if args.quick else args.runs), args.cap
    schedules = args.schedules.split(",")
    for correction in args.correction.split(","):
        for title, truth in fields(args.finalists).items():
            report(
                title,
                truth,
                runs,
                cap,
                args.games_per_deal,
                correction,
                schedules,
            )


if __name__ == "__main__":
    main()
