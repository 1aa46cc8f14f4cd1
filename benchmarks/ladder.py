"""The ladder's pairing rule against a plain round robin, at equal game counts.

    ./run python benchmarks/ladder.py              # 50 and 500 entrants, 400 and 1200 Elo
    ./run python benchmarks/ladder.py --quick      # 50 entrants, 2 runs, to 40 games each
    ./run python benchmarks/ladder.py --entrants 50 --spread 400 --runs 8
    ./run python benchmarks/ladder.py --real 10 --runs 4 --budgets 10 20 40 80

Entrants of known strength: true ratings evenly spaced over ``--spread`` Elo (the
built-in ``greedy`` beats ``random`` in 84.5% of 2-player ``block`` games, about
290 Elo: 400 Elo is a field from random play to a little better than greedy;
1200 Elo a field from broken bots to strong ones). Outcomes come from the
Bradley-Terry model the ratings fit assumes, with ``--draw-rate`` draws
(default 0: 2,400 games of ``block`` and ``draw`` between greedy and random,
measured while writing this, had no drawn game -- a game goes on to its target
until one side wins). ``--real N`` checks the model: N entrants playing real
``--rules`` games in this process, greedy with a random legal move with
probability p = 0, 1/(N-1), ..., 1 (the strength knob; the true order is by p).

The schedules play the same number of games, each refitting the ratings
(:meth:`arena.compete.ratings.ResultMatrix.fit_with_covariance`, the
leaderboard's fit) after every batch of ``entrants / 2`` games (the ladder's
batch can be made smaller with ``--batch``):

- ``ladder``: :func:`arena.compete.ladder.next_pairings` on the current fit;
- ``ladder (nearest)``: the rule before its posterior draw (``explore=0``:
  candidates are the 48 nearest rivals in the fitted order and 48 random ones);
- ``ladder (no cov)``: the ladder without the fit's covariance (independent ratings);
- ``round robin``: the circle method's rounds (every entrant plays once a round,
  all pairs once in ``entrants - 1`` rounds), entrants in a seeded random order;
- ``random``: uniformly random pairs;
- ``oracle`` (not run by default): knows the true order, and pairs at random
  within a band of a quarter of the field around each entrant. Knowing the
  order does not make a fixed band good: narrow bands tie the field together
  too loosely (a band of 2-6 ranks of 50 ranked worse than random pairs at every
  budget), and this one needed 1.22 (400 Elo) and 1.31 (1200 Elo) of the round
  robin's games to 0.95 (4 runs); the ladder's bands follow the uncertainty.

Fields up to 100 entrants run every schedule ``--runs`` times; larger ones the
``--large-schedules`` (ladder and round robin) ``--large-runs`` times (a 500-entrant
fit takes 0.15-0.4 s, a run 120 of them). The default run took 76 s of CPU
(6.5 minutes on the shared, loaded machine); ``--quick`` takes a few seconds.

Prints, per field, the Spearman correlation of the fitted ratings with the
true order and the fraction of adjacent pairs (by true strength) in the right
order at several budgets (games per entrant), averaged over the runs; the games
each schedule needs for the runs' mean Spearman to reach 0.95 (interpolated
between batches); each schedule's games to reach the round robin's mean
Spearman at each budget, as a share of the round robin's games (goal for the
ladder: at most 0.5; the round robin's own column shows the figure's noise, as
its mean curve is not monotone); and a summary. Figures from one run; no timing.

What stands in the goal's way is information. A game at even odds carries
Fisher information 1/4 on its pair's difference; a round robin's game carries
the field's mean ``p (1 - p)``: 0.207 over 400 Elo, 0.111-0.115 over 1200. A
schedule whose every game were at even odds would need at least that mean over
1/4 of the round robin's games for the same variances: 0.83 over 400 Elo, 0.44-0.46
over 1200 (the "information bound" printed). On a tight field no pairing rule
can halve the round robin's games; on a wide one halving is at the bound, and
games at even odds only between near neighbours tie the field together loosely
(the oracle's narrow bands).

Figures (ladder / round robin games; 16 runs of 50, ``--runs 16``, 1 of 500):
50 over 400 Elo 0.92 to 0.95 Spearman, 0.92-1.22 at 5-120 games each (bound
0.83); 50 over 1200 Elo 0.76 and 0.57-0.88 (bound 0.44); 500 over 400 Elo 1.03
and 0.94-1.15; 500 over 1200 Elo 0.68 and 0.54-1.03 (bound 0.46). The rule
before the posterior draw (``ladder (nearest)``) did as well on 50 (1.01 and
1.01-1.16; 0.71 and 0.50-0.98) but not on 500 over 400 Elo: 1.39, and 1.20-1.39
at 5-80 games each (same seed): 48 nearest rivals of 500 are too near. The
ladder ranks neighbours better than the round robin on a wide field (adjacent
pairs right at 120 games each: 0.70 against 0.65).
"""

from __future__ import annotations

import os

# One BLAS thread: on a shared 2-core machine a 500 x 500 fit took 0.9-1.3 s with
# OpenBLAS's threads fighting over the cores and 0.15 s with one (set before numpy loads).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import functools
import math
import random
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy import stats

from arena.compete.ladder import LadderPolicy, field_from_ratings, next_pairings
from arena.compete.ratings import ELO_PER_NAT, Rating, ResultMatrix
from arena.engine.observation import Observation
from arena.engine.rules import find_rules
from arena.engine.tiles import Move
from arena.match.play import play_game
from arena.match.strategies import heaviest

FloatArray = npt.NDArray[np.float64]
Pairs = list[tuple[int, int]]
#: Plays a batch: the pairs, then winners, losers and draws (entrant indices).
Player = Callable[[Pairs], tuple[list[int], list[int], list[bool]]]
#: The current fit: ratings and their covariance (Elo^2, by entrant index), None before any game.
Fit = tuple[list[Rating], FloatArray] | None
#: A schedule: (batch number, entrant names, current fit) -> the batch's pairs.
Scheduler = Callable[[int, list[str], Fit], Pairs]
TARGET = 0.95


@dataclass(frozen=True, slots=True)
class Curve:
    """One schedule's accuracy after each batch: games, Spearman, adjacent pairs right."""

    games: list[int]
    spearman: list[float]
    adjacent: list[float]

    def games_to(self, target: float) -> int | None:
        """The first game count at which the Spearman reached ``target`` (None: never)."""
        return next(
            (g for g, s in zip(self.games, self.spearman, strict=True) if s >= target), None
        )


def accuracy(ratings: list[Rating], names: list[str], truth: FloatArray) -> tuple[float, float]:
    """Spearman with the true strengths, and the share of true-adjacent pairs in the right order."""
    fitted = {r.bot: r.rating for r in ratings}
    estimate = np.array([fitted[name] for name in names])
    spearman = float(stats.spearmanr(estimate, truth).statistic)
    order = np.argsort(truth)
    adjacent = float(np.mean(np.diff(estimate[order]) > 0))
    return spearman, adjacent


def play(
    rng: np.random.Generator, truth: FloatArray, pairs: Pairs, draw_rate: float
) -> tuple[list[int], list[int], list[bool]]:
    """Outcomes of ``pairs`` under Bradley-Terry with a fixed draw rate: winners, losers, draws."""
    first = np.array([a for a, _ in pairs])
    second = np.array([b for _, b in pairs])
    p_first = 1.0 / (1.0 + np.exp(-(truth[first] - truth[second]) / ELO_PER_NAT))
    first_wins = rng.random(len(pairs)) < p_first
    winners = np.where(first_wins, first, second)
    losers = np.where(first_wins, second, first)
    draws = rng.random(len(pairs)) < draw_rate
    return winners.tolist(), losers.tolist(), draws.tolist()


def round_robin(entrants: int, seed: int) -> Scheduler:
    """The circle method: round r pairs position i with position -i after rotating by r."""
    order = np.random.default_rng(seed).permutation(entrants).tolist()
    size = entrants + entrants % 2  # a bye for an odd field

    def schedule(batch: int, names: list[str], fit: Fit) -> Pairs:
        r = batch % (size - 1)
        ring = [0, *((k + r) % (size - 1) + 1 for k in range(size - 1))]
        pairs = [(ring[i], ring[size - 1 - i]) for i in range(size // 2)]
        return [(order[a], order[b]) for a, b in pairs if a < entrants and b < entrants]

    return schedule


def random_pairs(entrants: int, seed: int) -> Scheduler:
    """Uniformly random distinct pairs, ``entrants // 2`` a batch."""
    rng = np.random.default_rng(seed)

    def schedule(batch: int, names: list[str], fit: Fit) -> Pairs:
        first = rng.integers(0, entrants, entrants // 2)
        second = (first + rng.integers(1, entrants, entrants // 2)) % entrants
        return list(zip(first.tolist(), second.tolist(), strict=True))

    return schedule


#: The ladder's matches per batch, as a share of ``entrants // 2`` (--batch).
BATCH = [1.0]
#: The ladder's policy (--window, --explore, --random-rivals).
POLICY = [LadderPolicy()]
#: The rule before the posterior draw: the fitted order's 48 nearest rivals and 48 random ones.
NEAREST = LadderPolicy(window=48, explore=0.0, random_rivals=48)


def ladder(
    entrants: int, seed: int, *, covariance: bool = True, policy: LadderPolicy | None = None
) -> Scheduler:
    """The ladder's pairing rule on the current fit, ``BATCH`` x ``entrants // 2`` a batch."""
    size = max(1, round(BATCH[0] * (entrants // 2)))

    def schedule(batch: int, names: list[str], fit: Fit) -> Pairs:
        field = field_from_ratings(fit[0] if fit else [], names)
        index = {name: i for i, name in enumerate(names)}
        cov = fit[1] if fit and covariance else None
        pairings = next_pairings(
            field, size, policy=policy or POLICY[0], seed=seed * 100_003 + batch, covariance=cov
        )
        return [(index[p.first], index[p.second]) for p in pairings]

    return schedule


def oracle(entrants: int, seed: int) -> Scheduler:
    """Pairs neighbours of the true order shuffled within a quarter of the field.

    Entrants are indexed in true order (the fields are built so); each batch sorts
    them by index plus a uniform draw over ``entrants / 4`` and pairs consecutive ones.
    """
    rng = np.random.default_rng(seed + 7_919)
    width = max(2.0, entrants / 4)

    def schedule(batch: int, names: list[str], fit: Fit) -> Pairs:
        order = np.argsort(np.arange(entrants) + rng.uniform(0.0, width, entrants))
        return [(int(order[2 * k]), int(order[2 * k + 1])) for k in range(entrants // 2)]

    return schedule


class Noisy:
    """The built-in greedy strategy with a strength knob: a random legal move with chance ``p``."""

    def __init__(self, p: float, rng: random.Random) -> None:
        self.p, self.rng = p, rng

    def __call__(self, observation: Observation, /) -> Move:
        moves = observation.legal_moves
        return self.rng.choice(moves) if self.rng.random() < self.p else heaviest(moves)


def real_player(knobs: list[float], rules_name: str, seed: int) -> Player:
    """Real games of ``rules_name`` between noisy-greedy entrants, seats drawn at random."""
    rules = find_rules(rules_name)
    rng = random.Random(seed)

    def play_pairs(pairs: Pairs) -> tuple[list[int], list[int], list[bool]]:
        winners, losers = [], []
        for a, b in pairs:
            seats = [a, b] if rng.random() < 0.5 else [b, a]
            strategies = [Noisy(knobs[k], random.Random(rng.getrandbits(64))) for k in seats]
            game = play_game(rules, strategies, seed=rng.getrandbits(63))
            outcome = game.outcome()
            won = outcome.winners[0] if outcome is not None and outcome.winners else 0
            winners.append(seats[won])
            losers.append(seats[1 - won])
        return winners, losers, [False] * len(pairs)

    return play_pairs


def model_player(truth: FloatArray, seed: int, *, draw_rate: float) -> Player:
    """Outcomes drawn from the Bradley-Terry model of the true ratings."""
    rng = np.random.default_rng(seed)
    return lambda pairs: play(rng, truth, pairs, draw_rate)


def simulate(scheduler: Scheduler, truth: FloatArray, max_games: int, player: Player) -> Curve:
    """Play batches until ``max_games`` games, refitting after each; the accuracy curve."""
    names = [f"e{i}" for i in range(truth.size)]
    matrix = ResultMatrix()
    codes = matrix.codes(names)
    fit: Fit = None
    curve = Curve([], [], [])
    played, batch = 0, 0
    while played < max_games:
        pairs = scheduler(batch, names, fit)[: max_games - played]
        winners, losers, draws = player(pairs)
        matrix.add_pairs(codes[winners], codes[losers], draws)
        played, batch = played + len(pairs), batch + 1
        fit = matrix.fit_with_covariance()
        spearman, adjacent = accuracy(fit[0], names, truth)
        curve.games.append(played)
        curve.spearman.append(spearman)
        curve.adjacent.append(adjacent)
    return curve


def at(curve: Curve, games: int) -> tuple[float, float]:
    """The curve's Spearman and adjacent-pairs figure at the last batch within ``games``."""
    k = max(i for i, g in enumerate(curve.games) if g <= games)
    return curve.spearman[k], curve.adjacent[k]


SCHEDULES: dict[str, Callable[[int, int], Scheduler]] = {
    "ladder": ladder,
    "ladder (nearest)": lambda entrants, seed: ladder(entrants, seed, policy=NEAREST),
    "ladder (no cov)": lambda entrants, seed: ladder(entrants, seed, covariance=False),
    "round robin": round_robin,
    "random": random_pairs,
    "oracle": oracle,
}


@dataclass(frozen=True, slots=True)
class Setup:
    """One table's field: its true strengths, how games are played, which schedules run."""

    truth: FloatArray
    runs: int
    budgets: list[int]
    schedules: list[str]
    player: Callable[[int], Player]
    title: str


def report(setup: Setup) -> list[str]:
    """Simulate every schedule ``runs`` times and print the tables for one field (the
    summary's cells: :func:`print_targets`)."""
    entrants, budgets = setup.truth.size, setup.budgets
    max_games = max(budgets) * entrants // 2
    results: dict[str, list[Curve]] = {name: [] for name in setup.schedules}
    for seed in range(setup.runs):
        for name in setup.schedules:
            scheduler = SCHEDULES[name](entrants, seed)
            curve = simulate(scheduler, setup.truth, max_games, setup.player(seed))
            results[name].append(curve)
    print(f"\n{setup.title}, {setup.runs} run(s)")
    print(f"{'games/entrant':>13} {'games':>7}  " + "  ".join(f"{n:>19}" for n in results))
    print(f"{'':>13} {'':>7}  " + "  ".join(f"{'spearman adjacent':>19}" for _ in results))
    for budget in budgets:
        games = budget * entrants // 2
        cells = []
        for curves_of in results.values():
            spearman, adjacent = np.mean([at(c, games) for c in curves_of], axis=0)
            cells.append(f"{spearman:>10.4f} {adjacent:>8.3f}")
        print(f"{budget:>13} {games:>7}  " + "  ".join(f"{c:>19}" for c in cells))
    return print_targets(results, budgets, setup.truth)


def mean_games_to(curves: list[Curve], target: float) -> float:
    """The games at which the runs' mean Spearman first reaches ``target`` (inf: never).

    The mean is taken at each batch's game count (the first run's), and the count
    interpolated linearly between the batches on either side of the crossing.
    """
    grid = curves[0].games
    mean = [float(np.mean([at(c, games)[0] for c in curves])) for games in grid]
    for k, value in enumerate(mean):
        if value >= target:
            if k == 0:
                return float(grid[0])
            below, above = mean[k - 1], value
            share = (target - below) / (above - below) if above > below else 1.0
            return grid[k - 1] + share * (grid[k] - grid[k - 1])
    return math.inf


def ratio(games: float, baseline: float) -> str:
    """``games / baseline`` to two places, or ``never`` / ``n/a`` (one never got there)."""
    if math.isinf(baseline):
        return "n/a"
    return "never" if math.isinf(games) else f"{games / baseline:.2f}"


def information_bound(truth: FloatArray) -> float:
    """The round robin's mean Fisher information a game over that of a game at even odds (1/4)."""
    theta = truth / ELO_PER_NAT
    p = 1.0 / (1.0 + np.exp(-(theta[:, None] - theta[None, :])))
    off = ~np.eye(truth.size, dtype=bool)
    return float(np.mean((p * (1.0 - p))[off]) / 0.25)


def print_targets(
    results: dict[str, list[Curve]], budgets: list[int], truth: FloatArray
) -> list[str]:
    """Games to 0.95 Spearman per schedule; each schedule's games to match the round robin.

    Returns the summary's cells: the ladder's ratio to 0.95 and its range over the budgets.
    """
    entrants = truth.size
    to_target = {name: mean_games_to(curves, TARGET) for name, curves in results.items()}
    print(
        f"games to {TARGET} Spearman: "
        + ", ".join(f"{name} {value:.0f}" for name, value in to_target.items())
    )
    if "round robin" not in results:
        return []
    baseline = to_target["round robin"]
    print(
        "  as a share of the round robin's: "
        + ", ".join(f"{name} {ratio(value, baseline)}" for name, value in to_target.items())
    )
    print("games to reach the round robin's Spearman at each budget, as a share of its games:")
    print(f"{'games/entrant':>13} {'rr spearman':>12}  " + "  ".join(f"{n:>17}" for n in results))
    ladder_ratios = []
    for budget in budgets:
        games = budget * entrants // 2
        level = float(np.mean([at(c, games)[0] for c in results["round robin"]]))
        cells = []
        for name, curves_of in results.items():
            share = ratio(mean_games_to(curves_of, level), games)
            cells.append(share)
            if name == "ladder" and share[0].isdigit():
                ladder_ratios.append(float(share))
        print(f"{budget:>13} {level:>12.4f}  " + "  ".join(f"{c:>17}" for c in cells))
    bound = information_bound(truth)
    print(f"  information bound (every game at even odds): {bound:.2f} of the round robin's games")
    span = f"{min(ladder_ratios):.2f}-{max(ladder_ratios):.2f}" if ladder_ratios else "n/a"
    ladder_to = ratio(to_target.get("ladder", math.inf), baseline)
    return [ladder_to, span, f"{bound:.2f}"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entrants", type=int, nargs="+", default=[50, 500])
    parser.add_argument("--spread", type=float, nargs="+", default=[400.0, 1200.0])
    parser.add_argument("--runs", type=int, default=4)
    parser.add_argument("--large-runs", type=int, default=1, help="runs of fields over 100")
    parser.add_argument("--budgets", type=int, nargs="+", default=[5, 10, 20, 40, 80, 120])
    parser.add_argument("--draw-rate", type=float, default=0.0)
    parser.add_argument(
        "--schedules",
        nargs="+",
        choices=list(SCHEDULES),
        default=[name for name in SCHEDULES if name != "oracle"],
    )
    parser.add_argument(
        "--large-schedules",
        nargs="+",
        choices=list(SCHEDULES),
        default=["ladder", "round robin"],
        help="the schedules of fields over 100 entrants",
    )
    parser.add_argument(
        "--quick", action="store_true", help="a smoke check: 50 entrants, 2 runs, to 40 games each"
    )
    parser.add_argument(
        "--real",
        type=int,
        default=0,
        metavar="N",
        help="instead: N noisy-greedy entrants (p = 0..1) playing real games",
    )
    parser.add_argument("--rules", default="block", help="the rule set of --real games")
    parser.add_argument(
        "--batch",
        type=float,
        default=1.0,
        help="the ladder's matches between refits, as a share of entrants // 2",
    )
    default = LadderPolicy()
    parser.add_argument("--window", type=int, default=default.window, help="LadderPolicy.window")
    parser.add_argument(
        "--explore", type=float, default=default.explore, help="LadderPolicy.explore"
    )
    parser.add_argument(
        "--random-rivals",
        type=int,
        default=default.random_rivals,
        help="LadderPolicy.random_rivals",
    )
    args = parser.parse_args()
    if args.quick:
        args.entrants, args.runs, args.budgets = [50], 2, [5, 10, 20, 40]
        args.schedules = ["ladder", "round robin"]
    BATCH[0] = args.batch
    POLICY[0] = LadderPolicy(
        window=args.window, explore=args.explore, random_rivals=args.random_rivals
    )
    budgets = sorted(args.budgets)
    if args.real:
        knobs = np.linspace(0.0, 1.0, args.real)
        title = f"{args.real} greedy entrants, random move with p = 0..1, real {args.rules} games"

        def player(seed: int) -> Player:
            return real_player(knobs.tolist(), args.rules, seed)

        report(Setup(-knobs, args.runs, budgets, args.schedules, player, title))
        return
    summary = []
    for entrants in args.entrants:
        large = entrants > 100
        for spread in args.spread:
            truth = np.linspace(0.0, spread, entrants)
            runs = args.large_runs if large else args.runs
            schedules = args.large_schedules if large else args.schedules
            title = f"{entrants} entrants over {spread:.0f} Elo, draw rate {args.draw_rate}"
            player = functools.partial(model_player, truth, draw_rate=args.draw_rate)
            cells = report(Setup(truth, runs, budgets, schedules, player, title))
            summary.append((f"{entrants} over {spread:.0f} Elo, {runs} run(s)", cells))
    print("\nsummary: the ladder's games as a share of the round robin's (goal: at most 0.5)")
    print(f"{'field':>28} {'to 0.95':>8} {'at budgets':>11} {'info bound':>11}")
    for field, cells in summary:
        if cells:
            print(f"{field:>28} {cells[0]:>8} {cells[1]:>11} {cells[2]:>11}")


if __name__ == "__main__":
    main()
