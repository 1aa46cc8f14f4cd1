"""The ladder's pairing rule against a plain round robin, at equal game counts.

    ./run python benchmarks/ladder.py [--entrants 50 500] [--spread 400] [--runs 2]
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
- ``ladder (no cov)``: the same without the fit's covariance (independent ratings);
- ``round robin``: the circle method's rounds (every entrant plays once a round,
  all pairs once in ``entrants - 1`` rounds), entrants in a seeded random order;
- ``random``: uniformly random pairs.

Prints, per field, the Spearman correlation of the fitted ratings with the
true order and the fraction of adjacent pairs (by true strength) in the right
order at several budgets (games per entrant), averaged over ``--runs`` seeds;
the games each schedule needs to reach 0.95 Spearman; and the ladder's games to
reach the round robin's Spearman at each budget, as a ratio (goal: at most 0.5).
Figures from one run; no timing.
"""

from __future__ import annotations

import argparse
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
#: The ladder's policy (--window).
POLICY = [LadderPolicy()]


def ladder(entrants: int, seed: int, *, covariance: bool = True) -> Scheduler:
    """The ladder's pairing rule on the current fit, ``BATCH`` x ``entrants // 2`` a batch."""
    size = max(1, round(BATCH[0] * (entrants // 2)))

    def schedule(batch: int, names: list[str], fit: Fit) -> Pairs:
        field = field_from_ratings(fit[0] if fit else [], names)
        index = {name: i for i, name in enumerate(names)}
        cov = fit[1] if fit and covariance else None
        pairings = next_pairings(
            field, size, policy=POLICY[0], seed=seed * 100_003 + batch, covariance=cov
        )
        return [(index[p.first], index[p.second]) for p in pairings]

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


def model_player(truth: FloatArray, seed: int, draw_rate: float) -> Player:
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
    "ladder (no cov)": lambda entrants, seed: ladder(entrants, seed, covariance=False),
    "round robin": round_robin,
    "random": random_pairs,
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


def report(setup: Setup) -> None:
    """Simulate every schedule ``runs`` times and print the tables for one field."""
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
    print_targets(results, budgets, entrants)


def mean_games_to(curves: list[Curve], target: float) -> float:
    """The mean games to reach ``target`` over the runs (inf if a run never did)."""
    reached = [c.games_to(target) for c in curves]
    return math.inf if None in reached else float(np.mean([g for g in reached if g is not None]))


def ratio(games: float, baseline: float) -> str:
    """``games / baseline`` to two places, or why there is none (a schedule never got there)."""
    if math.isinf(baseline):
        return "n/a: the round robin never reached it"
    return "inf: never reached" if math.isinf(games) else f"{games / baseline:.2f}"


def print_targets(results: dict[str, list[Curve]], budgets: list[int], entrants: int) -> None:
    """Games to 0.95 Spearman per schedule; the ladder's games to match the round robin."""
    to_target = {name: mean_games_to(curves, TARGET) for name, curves in results.items()}
    print(
        f"games to {TARGET} Spearman: "
        + ", ".join(f"{name} {value:.0f}" for name, value in to_target.items())
        + f"; ladder / round robin {ratio(to_target['ladder'], to_target['round robin'])}"
    )
    for budget in budgets:
        games = budget * entrants // 2
        level = float(np.mean([at(c, games)[0] for c in results["round robin"]]))
        needed = mean_games_to(results["ladder"], level)
        print(
            f"  round robin at {games} games: Spearman {level:.4f}; "
            f"the ladder reaches it in {needed:.0f} games (ratio {ratio(needed, games)})"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entrants", type=int, nargs="+", default=[50, 500])
    parser.add_argument("--spread", type=float, default=400.0)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--budgets", type=int, nargs="+", default=[5, 10, 20, 40, 80, 120])
    parser.add_argument("--draw-rate", type=float, default=0.0)
    parser.add_argument("--schedules", nargs="+", choices=list(SCHEDULES), default=list(SCHEDULES))
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
    parser.add_argument(
        "--window",
        type=int,
        default=LadderPolicy().window,
        help="the ladder's candidate rivals per entrant: this many nearest, this many at random",
    )
    args = parser.parse_args()
    BATCH[0] = args.batch
    POLICY[0] = LadderPolicy(window=args.window)
    budgets, schedules = sorted(args.budgets), args.schedules
    if args.real:
        knobs = np.linspace(0.0, 1.0, args.real)
        title = f"{args.real} greedy entrants, random move with p = 0..1, real {args.rules} games"
        setup = Setup(
            -knobs,
            args.runs,
            budgets,
            schedules,
            lambda seed: real_player(knobs.tolist(), args.rules, seed),
            title,
        )
        report(setup)
        return
    for entrants in args.entrants:
        truth = np.linspace(0.0, args.spread, entrants)
        title = f"{entrants} entrants over {args.spread:.0f} Elo, draw rate {args.draw_rate}"
        player = lambda seed, truth=truth: model_player(truth, seed, args.draw_rate)  # noqa: E731
        report(Setup(truth, args.runs, budgets, schedules, player, title))


if __name__ == "__main__":
    main()
