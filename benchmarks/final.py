"""The final's games to separate adjacent ranks, against a plain round robin to the same separation.

    ./run python benchmarks/final.py [--runs 10] [--cap 14000] [--finalists 8]
        [--correction none,mixture,pocock,obf] [--schedules final,final+bridges] [--quick]
        [--family holm|bonferroni|none] [--share 0.5]
    ./run python benchmarks/final.py --reruns 40 [--rules stated,per-pair] [--round-deals 16]
        [--fields 0,1,2,3]

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
a few minutes of CPU; ``--quick`` (3 runs) about a minute. The finals share their
error among the neighbour pairs by ``--family`` (Holm's, the policy's default) and
spend ``--share`` of it (0.5: a competition's first final; its rerun 0.25).

``--reruns N`` measures instead what the competition's page promises of a rerun:
for each field (and 8 equal finalists, the worst case), N competitions' first
final and their rerun on independent games, each spending its share
(``rule stated``: Holm, shares 0.5 and 0.25) or, for comparison, each at the
whole error per pair (``per pair``, the rule before). It prints the neighbour
pairs the first table separated, those the rerun separates in the opposite
order (a chain of separated neighbours: what the promise covers) and in how
many competitions one did (the page promises at most 5%), those the rerun merely
places the other way round (through a tie), and in how many competitions the
first table held a wrong separation.
"""

from __future__ import annotations

import argparse
import itertools
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from arena.compete.final import FinalPolicy, FinalState, assess_final, rerun_share
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
    family: str = "holm",
    share: float = 1.0,
) -> Outcome:
    """One final of ``schedule`` on ``truth`` until separated or ``cap`` games, its
    repeated looks corrected by ``correction`` (:attr:`FinalPolicy.correction`), its pairs
    by ``family``, spending ``share`` of the error (a competition's ``r``-th final:
    :func:`rerun_share`)."""
    state, games, rounds = play_final(
        truth, schedule, seed, cap, per_deal, correction, family, share
    )
    wrong, declared = errors(state, {f"f{i}": i for i in range(truth.size)})
    return Outcome(games, rounds, state.ties == 0, wrong, declared, state.ties)


def play_final(
    truth: FloatArray,
    schedule: str,
    seed: int,
    cap: int,
    per_deal: int,
    correction: str,
    family: str = "holm",
    share: float = 1.0,
    round_deals: int | None = None,
) -> tuple[FinalState, int, int]:
    """One final (:func:`simulate`; ``round_deals`` overrides the schedule's): its last
    state, its games and its rounds."""
    names = [f"f{i}" for i in range(truth.size)]
    index = {name: i for i, name in enumerate(names)}
    everyone = list(itertools.combinations(range(truth.size), 2))
    policy = FinalPolicy(
        max_games=cap,
        bridges=schedule == "final+bridges",
        round_deals=(
            round_deals
            if round_deals is not None
            else ROUND_DEALS
            if schedule == f"final {ROUND_DEALS} a round"
            else 0
        ),
        correction=correction,
        family=family,
        share=share,
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
    return state, games, rounds


@dataclass(frozen=True, slots=True)
class Rerun:
    """A published final and its rerun: the neighbour pairs the first separated, those the
    rerun separates the other way round (a chain of separated neighbours from the lower to
    the higher: a claim of the rerun's table), and those it merely places the other way
    round (a better place, through a tie), and whether the first separated any pair wrongly."""

    declared: int
    contradicted: int
    placed_above: int
    first_wrong: bool


def reversals(first: FinalState, rerun: FinalState) -> tuple[int, int, int]:
    """The first table's separated neighbour pairs; of them, those the rerun separates in
    the opposite order, and those it places the other way round."""
    order = [s.id for s in rerun.standings]
    at = {name: k for k, name in enumerate(order)}
    place = {s.id: s.place for s in rerun.standings}
    separated = [s.separated_from_next for s in rerun.standings]
    declared = contradicted = placed = 0
    for upper, lower in itertools.pairwise(first.standings):
        if not upper.separated_from_next:
            continue
        declared += 1
        if place[lower.id] < place[upper.id]:
            placed += 1
        a, b = at[lower.id], at[upper.id]
        if a < b and all(separated[a:b]):
            contradicted += 1
    return declared, contradicted, placed


def rerun_pair(
    truth: FloatArray,
    seed: int,
    cap: int,
    per_deal: int,
    family: str,
    reruns: bool,
    round_deals: int = 0,
) -> Rerun:
    """A competition's first final and its rerun on ``truth`` (independent games), each
    spending its share of the error (:func:`rerun_share`; ``reruns`` False: each the whole
    error, as if reruns were independent), their rounds filled to ``round_deals`` deals."""
    shares = (rerun_share(1), rerun_share(2)) if reruns else (1.0, 1.0)
    correction = FinalPolicy().correction
    first, _, _ = play_final(
        truth, "final", seed, cap, per_deal, correction, family, shares[0], round_deals
    )
    again, _, _ = play_final(
        truth, "final", seed + 100_000, cap, per_deal, correction, family, shares[1], round_deals
    )
    declared, contradicted, placed = reversals(first, again)
    wrong, _ = errors(first, {f"f{i}": i for i in range(truth.size)})
    return Rerun(declared, contradicted, placed, wrong > 0)


#: The rules :func:`report_reruns` compares: (label, the pairs' family, reruns share).
RERUN_RULES = {
    "stated": ("holm, reruns share (stated)", "holm", True),
    "per-pair": ("per pair, reruns independent", "none", False),
}


def report_reruns(
    title: str,
    truth: FloatArray,
    runs: int,
    cap: int,
    per_deal: int,
    confidence: float,
    rules: list[str],
    round_deals: int = 0,
) -> None:
    """Print how often a rerun reverses a separated neighbour pair of the published
    table, under the rule the page states (Holm, shares) and the per-pair rule before."""
    print(
        f"\n{title}: a final and its rerun, {runs} times, cap {cap} games, "
        f"rounds of {round_deals} deals"
    )
    print(
        f"{'rule':>34} {'declared':>9} {'contradicted':>13} {'reruns with one':>16} "
        f"{'placed above':>13} {'first wrong':>12}"
    )
    for label, family, reruns in (RERUN_RULES[rule] for rule in rules):
        pairs = [
            rerun_pair(truth, seed, cap, per_deal, family, reruns, round_deals)
            for seed in range(runs)
        ]
        declared = sum(p.declared for p in pairs)
        contradicted = sum(p.contradicted for p in pairs)
        any_contradicted = sum(1 for p in pairs if p.contradicted)
        placed = sum(p.placed_above for p in pairs)
        wrong = sum(1 for p in pairs if p.first_wrong)
        print(
            f"{label:>34} {declared:>9} {contradicted:>6} ({contradicted / max(declared, 1):>4.1%})"
            f" {any_contradicted:>6}/{runs:<3} ({any_contradicted / runs:>4.1%})"
            f" {placed:>6} ({placed / max(declared, 1):>4.1%}) {wrong:>5}/{runs:<3}"
        )
    print(f"  the page promises: a rerun contradicts a separated pair in at most "
          f"{1 - confidence:.0%} of competitions")  # fmt: skip


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
    family: str = "holm",
    share: float = 1.0,
) -> None:
    """Print one field's table."""
    print(
        f"\n{title}, {runs} run(s), cap {cap} games, {per_deal} games a deal, {correction}, "
        f"pairs {family}, share {share:g}"
    )
    print(
        f"{'schedule':>17} {'median':>8} {'mean':>8} {'rounds':>7} {'capped':>7} "
        f"{'wrong/declared':>15} {'wrong':>6} {'ties':>5}"
    )
    medians = {}
    for schedule in schedules:
        outcomes = [
            simulate(truth, schedule, seed, cap, per_deal, correction, family, share)
            for seed in range(runs)
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
    parser.add_argument("--family", default="holm", help="the pairs' correction: holm, none")
    parser.add_argument(
        "--share",
        type=float,
        default=rerun_share(1),
        help="the error's share the final spends (a competition's first: 0.5)",
    )
    parser.add_argument(
        "--reruns",
        type=int,
        default=0,
        metavar="N",
        help="instead: N finals and their reruns a field (and 8 equal finalists)",
    )
    parser.add_argument("--rules", default="stated,per-pair", help="with --reruns")
    parser.add_argument(
        "--round-deals",
        type=int,
        default=16,
        help="with --reruns: each round filled to so many deals (the clock fills rounds to "
        "the workers' in-flight bound; fewer rounds, a faster simulation)",
    )
    parser.add_argument("--fields", default="", help="with --reruns: comma-separated indexes")
    args = parser.parse_args()
    runs, cap = (3 if args.quick else args.runs), args.cap
    schedules = args.schedules.split(",")
    if args.reruns:
        fielded = {**fields(args.finalists), f"{args.finalists} equal": np.zeros(args.finalists)}
        chosen = [int(k) for k in args.fields.split(",")] if args.fields else range(len(fielded))
        for k, (title, truth) in enumerate(fielded.items()):
            if k in chosen:
                report_reruns(title, truth, args.reruns, cap, args.games_per_deal, 0.95,
                              args.rules.split(","), args.round_deals)  # fmt: skip
        return
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
                args.family,
                args.share,
            )


if __name__ == "__main__":
    main()
