"""Faster verdicts: the margin test (``MarginSPRT``) against the game-level test (``SPRT``).

Usage::

    ./run python benchmarks/verdicts.py [--part all|pools|sim|real|classroom|time] [--runs 2000]
        [--pool 2000] [--repeats 5] [--elo0 0] [--elo1 10] [--alpha 0.05] [--beta 0.05]
        [--batch 16] [--montecarlo] [--unsandboxed] [--remote] [--only TEXT] [--seed 1]
        [--max-games 60] [--before CHECKOUT] [--runs-each 1]

Three parts, each printing a table (docs/ratings.md keeps the last figures), and a
fourth on its own:

**Pools** (``--part pools``). For a few bot pairs under several rule sets, ``--pool``
duplicate deal groups are played in this process (built-in strategies, the engine's own
game loop; fast) and read from their game records by
:func:`arena.compete.margins.group_margin`. For each pool the table gives the Elo of NEW
from its game scores and from the margin test's values (the margin test's calibration:
both estimate the same game-level Elo), the exchange rate, the duplicate correlation of a
round's point margin (round ``r`` of the two games of a pair is the same deal, seats
swapped), and three candidate statistics, each put on the game-score scale by its
regression on the game scores:

- ``paired``: the point margin of the rounds both games reached (round-level duplicates);
- ``margin``: the whole game's point margin (all rounds);
- ``luck``: the margin less its fitted luck of the draw (the statistic of ``MarginSPRT``,
  put on the scale by the margin's regression), all of ``LUCK_TERMS``;
- ``pips+fits``: the same with the first two terms only (the luck before ``value``).

For each: its variance over the game scores', and its calibration ``c``, its mean shift
over the game scores' (1 when its mapping to Elo is right; below 1 it understates NEW).
Near the hypotheses a test on it needs ``ratio / c^2`` of the game-level test's games for
the same true Elo. ``c`` is left out where NEW's game Elo is not clearly away from 0 (a
ratio of two means near 0 means nothing).

**Simulation** (``--part sim``, item 2a). Each test run many times (``--runs`` per point)
at elo0, between, at elo1 and beyond, with looks every ``--batch`` deal groups as ``arena
compare`` makes them, up to 20,000 games. The game-level test draws each group's game
score from the pool's distribution of game scores tilted to the true mean (the maximum
likelihood distribution with that mean, as fishtest's simulations do); so does
``normal``, the margin test's LLR and rules on the game scores alone (to tell the gain of
the statistic from that of the LLR's form). The margin test resamples whole groups of the
pool (a bootstrap: score, margin and luck together, so the exchange rate, the luck's
correlation with the margin and the margins' skew are the real ones), with the luck
centred (its mean is 0 in truth) and the margin shifted by the constant that sets the
true mean value to the score of the true Elo, on the pool's own exchange rate. This tests
the sequential test (its bounds, the variance and nuisance estimates, early looks) at
known truths; whether the exchange rate maps margins to the game's Elo is what the
pools' calibration column measures. Printed per point: the share of runs that passed
(accepted H1), the mean games to a decision, the share undecided at 20,000 games.

**Real bots** (``--part real``, item 2b). Pairs of reference bots play duplicate deal
groups the way ``arena compare`` plays them (``compare_schedule``'s matches through
``run_local`` in this process; bot files in the sandbox when bubblewrap works here,
``--unsandboxed`` otherwise; team play through the same duplicate schedule with
``teams``), ``--repeats`` times each with different seeds, until every test has decided.
The tests read the same groups; each is looked at after every group (the tests' own
sample sizes) and after every ``--batch`` groups (what ``arena compare`` plays), and the
table gives the mean games to a decision, the verdicts, and how often the margin test
agreed with the game-level test. ``--only TEXT[,TEXT...]`` keeps the pairs whose label
has one of them;
``--montecarlo`` adds ``montecarlo`` (a copy of the bot file with a 5 ms budget a move)
against ``counter``: slow, minutes a sequence.

**Short tests** (``--part classroom``, only when asked for). An assignment's "beats R" is a
short test: tests/workers/test_classroom.py's is [0, 100] Elo, alpha 0.001, beta 0.05, up to
60 games, a look every 3 groups (``--max-games 60 --batch 3``). The pools of
:data:`CLASSROOM` (``--pool`` groups each; a bot against its copy, and greedy against random
as it plays) are resampled as in the simulation, ``--runs`` times a point, at
:data:`CLASSROOM_TESTS` (the class's and the defaults' hypotheses and error rates): the game
test, the margin test with the fast pass and Wald's bounds throughout (as before
:func:`~arena.compete.sprt.small_sample_factor`), and the margin test without and with the
fast pass. Printed: the pass rate (at Elo 0 the false passes, flagged against alpha) and
the share undecided at the cap.

**Time to a verdict** (``--part time``, only when asked for; issue 33). For each pair of
:data:`TIMED` (a clear one, one near elo1, one near elo0, a 3-player one), ``arena
compare`` as a process with its default settings (wall seconds to its verdict line and to
its exit, games), the games ``--statistic game`` needs for the same pair and seed, and the
wall seconds ``arena play`` takes for that many games: the ratio is the seconds to the
verdict over the last (``(exit)``: to the exit; goals: 0.5 for a clear pair, 1.0 near the
hypotheses). With ``--remote``, ``arena compare --remote`` of
the pairs of bot files too (the bots stored, one ``arena worker`` of two processes on
SQLite and the filesystem broker, started once for all of them), its ratio against the
same ``arena play``. Printed with the machine's load averages, and the CPU seconds of each
command (its processes and those they waited for; robust to the machine's load) and
their ratio. ``--before CHECKOUT``: that checkout's ``arena compare`` of each pair too,
run just before this one's (a row ``(before)``, against the same ``arena play``); with
``--remote``, that checkout's worker and ``arena compare --remote`` too (a store, broker
and worker of their own), each run just before this one's, ``--runs-each`` times a pair.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import math
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from scipy import optimize

from arena.compete.entrants import Entrant
from arena.compete.localrun import MatchResult, run_local
from arena.compete.margins import LUCK_TERMS, GroupMargin, group_margin, sides_of
from arena.compete.sprt import (
    MIN_MARGIN_GROUPS,
    PENTANOMIAL,
    PSEUDO_COUNT,
    SPRT,
    GroupScores,
    MarginMoments,
    MarginScores,
    MarginSPRT,
    elo_estimate,
    elo_to_score,
    margin_elo_estimate,
    margin_verdicts,
)
from arena.compete.tournaments import Match
from arena.engine.game import Game
from arena.engine.observation import Observation
from arena.engine.records import game_record
from arena.engine.rules import PRESETS, Rules
from arena.engine.tiles import Move
from arena.match.botkit import BotRunner, GameInfo, load_bot
from arena.match.botkit import Observation as BotObservation
from arena.match.lineup import release_kept_players
from arena.match.play import entrant_rng, game_seeds, play_game
from arena.match.sandbox import check_sandbox
from arena.match.strategies import STRATEGIES, Strategy, make_strategy
from arena.service.compares import compare_schedule, deal_groups, group_of

FloatArray = npt.NDArray[np.float64]
BOTS = Path(__file__).resolve().parent.parent / "bots"
MAX_GAMES = 20000  # arena compare's default --max-games


@dataclass(frozen=True)
class Pair:
    """NEW against OLD (built-in strategy names, or names of files in bots/)."""

    rules: str
    players: int
    new: str
    old: str
    teams: bool = False
    #: Built-in strategies draw from a new rng each game (as a bot file with its own
    #: unseeded ``random.Random`` does), not from one per deal whatever the seat.
    fresh: bool = False

    @property
    def label(self) -> str:
        seats = "2v2" if self.teams else f"{self.players}p"
        return f"{self.rules} {seats} {self.new} v {self.old}" + (" (fresh)" if self.fresh else "")

    @property
    def group_games(self) -> int:
        """Games in a deal group (one per seat rotation)."""
        return 2 if self.teams else self.players

    @property
    def labels(self) -> list[str]:
        return ["new", *(f"old{i}" for i in range(1, self.group_games))]


POOLS = [
    Pair("draw", 2, "greedy", "random"),
    Pair("draw", 2, "random", "random"),
    Pair("three-minute", 2, "greedy", "random"),
    Pair("muggins", 2, "greedy", "random"),
    Pair("block", 2, "greedy", "random"),
    Pair("wooden", 2, "greedy", "random"),
    Pair("draw", 3, "greedy", "random"),
    Pair("draw", 4, "greedy", "random"),
    Pair("muggins", 4, "greedy", "random", teams=True),
]
SIMULATED = [0, 1, 2, 3, 6, 7, 8]  # indices into POOLS
REAL = [
    Pair("draw", 2, "greedy", "random"),
    Pair("draw", 2, "counter", "greedy"),
    Pair("muggins", 2, "fives", "greedy"),
    Pair("three-minute", 2, "greedy", "random"),
    Pair("block", 2, "counter", "greedy"),
    Pair("draw", 3, "greedy", "random"),
    Pair("muggins", 4, "fives", "greedy", teams=True),
    Pair("draw", 2, "random", "random"),
]
MONTECARLO = Pair("draw", 2, "montecarlo", "counter")


def _derive(*parts: object) -> int:
    text = ":".join(["arena", "verdicts", *map(str, parts)])
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") >> 1


# --- pools: duplicate groups played in this process -----------------------------------


class _BotStrategy:
    """A bot file loaded in this process, as a strategy for one game."""

    def __init__(self, runner: BotRunner, game: str) -> None:
        self.runner, self.game = runner, game

    def __call__(self, observation: Observation, /) -> Move:
        view = BotObservation.from_dict(observation.to_dict())
        return Move.parse(self.runner.choose(self.game, view))


def _play_group(
    pair: Pair, rules: Rules, seed: int, runners: dict[str, BotRunner]
) -> tuple[list[dict[str, Any]], list[int]]:
    """Every rotation of one deal: the records and NEW's seat in each."""
    labels = pair.labels
    spec = {label: pair.new if label == "new" else pair.old for label in labels}
    records, seats = [], []
    for rotation in range(len(labels)):
        order = labels[rotation:] + labels[:rotation]
        seated = order + order if pair.teams else order
        strategies: list[Strategy] = []
        started: list[tuple[BotRunner, str]] = []
        for seat, label in enumerate(seated):
            if spec[label] in STRATEGIES:
                name = f"{label}/{rotation}" if pair.fresh else label
                strategies.append(make_strategy(spec[label], entrant_rng(seed, name)))
                continue
            runner, game_id = runners[label], f"{seed}-{rotation}-{seat}"
            runner.start(
                GameInfo(game_id, seat, len(seated), pair.teams, rules.name, rules.params())
            )
            started.append((runner, game_id))
            strategies.append(_BotStrategy(runner, game_id))
        game: Game = play_game(rules, strategies, teams=pair.teams, seed=seed)
        outcome = game.outcome()
        assert outcome is not None
        for runner, game_id in started:
            runner.end(game_id, {"winners": list(outcome.winners), "scores": list(outcome.scores)})
        records.append(game_record(game, seated))
        seats.append(seated.index("new"))
    return records, seats


@dataclass
class Pool:
    """A pool's deal groups and, per group, the round-level candidates' values."""

    pair: Pair
    groups: list[GroupMargin]
    paired: FloatArray  # NEW's margin over the rounds every game of the group reached
    round_pairs: FloatArray  # (seat 0's margin in game A, in game B) per paired round
    seconds: float


def _paired_rounds(
    records: Sequence[dict[str, Any]], seats: Sequence[int]
) -> tuple[float, list[tuple[float, float]]]:
    """NEW's point margin over the rounds all games reached, and (2 sides) each paired
    round's margin of side 0 in the first two games."""
    reached = min(len(record["rounds"]) for record in records)
    total = 0.0
    for record, seat in zip(records, seats, strict=True):
        sides = sides_of(record)
        mine = sides[seat]
        for round_ in record["rounds"][:reached]:
            points = round_["result"]["points"]
            total += points[mine] - (sum(points) - points[mine]) / (len(points) - 1)
    pairs: list[tuple[float, float]] = []
    if len(records[0]["result"]["scores"]) == 2:
        for a, b in zip(records[0]["rounds"], records[1]["rounds"], strict=False):
            pa, pb = a["result"]["points"], b["result"]["points"]
            pairs.append((pa[0] - pa[1], pb[0] - pb[1]))
    return total / len(records), pairs


def play_pool(pair: Pair, groups: int, seed: int) -> Pool:
    """Play ``groups`` duplicate deal groups of ``pair`` in this process."""
    rules = PRESETS[pair.rules]
    runners = {
        label: load_bot(BOTS / f"{pair.new if label == 'new' else pair.old}.py")
        for label in pair.labels
        if (pair.new if label == "new" else pair.old) not in STRATEGIES
    }
    started = time.perf_counter()
    values, paired, round_pairs = [], [], []
    for game_seed in game_seeds(_derive("pool", seed, pair.label), groups):
        records, seats = _play_group(pair, rules, game_seed, runners)
        values.append(group_margin(records, seats))
        margin, pairs = _paired_rounds(records, seats)
        paired.append(margin)
        round_pairs.extend(pairs)
    return Pool(
        pair,
        values,
        np.array(paired),
        np.array(round_pairs).reshape(-1, 2),
        time.perf_counter() - started,
    )


def _calibrated(
    g: FloatArray, x: FloatArray, rate_of: FloatArray | None = None
) -> tuple[float, float]:
    """Put ``x`` on the game-score scale by the regression of g on ``rate_of`` (default x):
    return (c, games ratio): the mean shift over g's, and var(y) / var(g)."""
    base = x if rate_of is None else rate_of
    rate = np.cov(g, base)[0, 1] / base.var(ddof=1)
    y = 0.5 + rate * x
    return float((y.mean() - 0.5) / (g.mean() - 0.5)), float(y.var() / g.var())


def report_pools(pools: Sequence[Pool]) -> None:
    """The calibration and candidates table."""
    print("\nPools: NEW's Elo from game scores and from the margin test; for each candidate,")
    print("its variance on the score scale over the game scores' and its calibration c (the")
    print("games it needs near the hypotheses, over the game-level test's: ratio / c^2)")
    head = (
        f"{'pair':34} {'groups':>6} {'Elo games':>17} {'Elo margin':>17} {'rate':>8} "
        f"{'rho_r':>6} {'paired':>11} {'margin':>11} {'pips+fits':>11} {'luck':>11}"
    )
    print(head)
    for pool in pools:
        scores = MarginScores(pool.groups)
        g = np.array([group.score for group in pool.groups])
        m = np.array([group.margin for group in pool.groups])
        luck = np.array([group.luck for group in pool.groups])
        luck = luck - luck.mean(axis=0)
        design = np.column_stack([np.ones(len(m)), luck])
        beta = np.linalg.lstsq(design, m, rcond=None)[0][1:]
        adjusted = m - luck @ beta
        two = luck[:, :2]  # pips and fits: the luck before the rollout value
        beta_two = np.linalg.lstsq(np.column_stack([np.ones(len(m)), two]), m, rcond=None)[0][1:]
        pips_fits = m - two @ beta_two
        game_elo = elo_estimate(scores.game_scores())
        margin_elo = margin_elo_estimate(scores)
        rho = (
            float(np.corrcoef(pool.round_pairs[:, 0], pool.round_pairs[:, 1])[0, 1])
            if len(pool.round_pairs) > 2
            else math.nan
        )
        cells = []
        for x, rate_of in ((pool.paired, None), (m, None), (pips_fits, m), (adjusted, m)):
            c, ratio = _calibrated(g, x, rate_of)
            known = not game_elo[1] < 0 < game_elo[2]  # c means nothing when Elo may be 0
            cells.append(f"{ratio:4.2f} c{c:4.2f}" if known else f"{ratio:4.2f} c  - ")
        rate = scores.exchange_rate
        print(
            f"{pool.pair.label:34} {len(pool.groups):6d} "
            f"{game_elo[0]:+6.1f} [{game_elo[1]:+.0f},{game_elo[2]:+.0f}] "
            f"{margin_elo[0]:+6.1f} [{margin_elo[1]:+.0f},{margin_elo[2]:+.0f}] "
            f"{(rate or math.nan):8.5f} {rho:6.3f} " + " ".join(f"{c:>11}" for c in cells)
        )


# --- simulation -----------------------------------------------------------------------


def _secular_root(p: FloatArray, d: FloatArray) -> FloatArray:
    """Per row of ``p`` (runs x support), the root x of sum p d / (1 + x d) = 0 (bisection;
    the left side falls from +inf to -inf on (-1/max d, -1/min d))."""
    low = np.full(p.shape[0], -1.0 / d.max())
    high = np.full(p.shape[0], -1.0 / d.min())
    for _ in range(200):
        middle = 0.5 * (low + high)
        value = (p * d / (1.0 + middle[:, None] * d)).sum(axis=1)
        positive = value > 0
        low = np.where(positive, middle, low)
        high = np.where(positive, high, middle)
        if np.all(high - low <= 1e-15 * np.maximum(np.abs(low), 1.0)):
            break
    root: FloatArray = 0.5 * (low + high)
    return root


def game_llr_batch(support: FloatArray, counts: FloatArray, s0: float, s1: float) -> FloatArray:
    """:meth:`SPRT.llr` for many count vectors at once (rows of ``counts`` over ``support``,
    which holds every pentanomial score)."""
    unseen = (counts == 0) & np.isin(support, PENTANOMIAL)[None, :]
    weights = np.where(unseen, PSEUDO_COUNT, counts)
    p = weights / weights.sum(axis=1, keepdims=True)
    jumps = np.zeros_like(p)
    for sign, s in ((1.0, s0), (-1.0, s1)):
        d = support - s
        x = _secular_root(p, d)
        jumps += sign * np.log1p(x[:, None] * d[None, :])
    llr: FloatArray = (weights * jumps).sum(axis=1)
    return llr


def _tilt(support: FloatArray, p: FloatArray, mean: float) -> FloatArray:
    """The maximum-likelihood distribution on ``support`` near ``p`` with the given mean."""
    d = support - mean
    keep = p > 0

    def secular(x: float) -> float:
        return float(np.sum(p[keep] * d[keep] / (1.0 + x * d[keep])))

    low, high = -1.0 / d[keep].max(), -1.0 / d[keep].min()
    width = high - low
    root = optimize.brentq(secular, low + width * 1e-12, high - width * 1e-12, xtol=1e-15)
    q: FloatArray = p / (1.0 + root * d)
    tilted: FloatArray = q / q.sum()
    return tilted


@dataclass(frozen=True)
class SimResult:
    passed: float
    games: float
    undecided: float


def _run_looks(
    llr_at: Callable[[int, npt.NDArray[np.intp]], FloatArray],
    bounds: tuple[float, float],
    runs: int,
    looks: int,
) -> tuple[FloatArray, FloatArray]:
    """Look ``looks`` times (``llr_at(look, runs still going)`` gives their LLRs); return
    each run's decision look (``looks`` if none) and verdict (1 passed, 0 failed, nan
    undecided)."""
    decided_at = np.full(runs, looks, dtype=np.float64)
    verdict = np.full(runs, np.nan)
    for look in range(looks):
        active = np.flatnonzero(np.isnan(verdict))
        if not active.size:
            break
        llr = llr_at(look, active)
        up, down = active[llr >= bounds[1]], active[llr <= bounds[0]]
        verdict[up], verdict[down] = 1.0, 0.0
        decided_at[up], decided_at[down] = look + 1, look + 1
    return decided_at, verdict


def _as_llr(verdicts: npt.NDArray[np.int8]) -> FloatArray:
    """Verdicts (1 pass, -1 fail, 0 go on) as LLRs beyond, or between, any bounds."""
    llr: FloatArray = np.where(verdicts > 0, np.inf, np.where(verdicts < 0, -np.inf, 0.0))
    return llr


def _summary(decided_at: FloatArray, verdict: FloatArray, batch: int, games: int) -> SimResult:
    return SimResult(
        passed=float(np.nanmean(np.where(np.isnan(verdict), 0.0, verdict))),
        games=float(decided_at.mean() * batch * games),
        undecided=float(np.isnan(verdict).mean()),
    )


def _moments(count: float, sums: FloatArray) -> MarginMoments:
    """Moments of a batch of runs from their summed rows (see :func:`_rows`)."""
    runs = sums.shape[0]
    zero = np.zeros(runs)
    k = math.isqrt(sums.shape[1] - 4) - 1  # the luck terms: 5 + k + k^2 + k columns
    return MarginMoments(
        n=np.full(runs, count, dtype=np.float64),
        g=sums[:, 0], gg=sums[:, 1], m=sums[:, 2], mm=sums[:, 3], gm=sums[:, 4],
        l=sums[:, 5 : 5 + k], ll=sums[:, 5 + k : 5 + k + k * k].reshape(-1, k, k),
        lm=sums[:, 5 + k + k * k :], forfeits=zero, f=zero, ff=zero,
    )  # fmt: skip


def _rows(g: FloatArray, m: FloatArray, luck: FloatArray) -> FloatArray:
    """Each group's terms of the moments, one row per group."""
    k = luck.shape[1]
    products = (luck[:, :, None] * luck[:, None, :]).reshape(-1, k * k)
    return np.column_stack([g, g * g, m, m * m, g * m, luck, products, luck * m[:, None]])


def simulate_game_test(
    pool: Pool, elo: float | None, test: SPRT, runs: int, batch: int, rng: np.random.Generator,
    normal: bool = False, max_games: int = MAX_GAMES,
) -> SimResult:  # fmt: skip
    """The game-level test, group scores drawn from the pool's tilted to ``elo``; with
    ``normal``, the margin test's LLR on the game scores alone (margins all 0). Up to
    ``max_games`` games (the looks every ``batch`` groups up to it). ``elo`` None: the
    pool's own distribution."""
    scores = np.round([group.score for group in pool.groups], 12)
    support = np.union1d(np.unique(scores), PENTANOMIAL)
    p = np.array([(scores == a).sum() for a in support], dtype=np.float64)
    # A pool of one score (a deterministic bot against its copy) cannot be tilted.
    q = p / p.sum()
    if elo is not None and np.ptp(scores):
        q = _tilt(support, q, elo_to_score(elo))
    counts = np.zeros((runs, len(support)))
    s0, s1 = elo_to_score(test.elo0), elo_to_score(test.elo1)
    looks = -(-(max_games // pool.pair.group_games) // batch)
    zeros = np.zeros(len(support))
    rows = _rows(support, zeros, np.zeros((len(support), len(LUCK_TERMS))))

    plain = MarginSPRT(test.elo0, test.elo1, test.alpha, test.beta, fast_pass=False)

    def llr_at(look: int, active: npt.NDArray[np.intp]) -> FloatArray:
        counts[active] += rng.multinomial(batch, q, size=active.size)
        if not normal:
            return game_llr_batch(support, counts[active], s0, s1)
        return _as_llr(margin_verdicts(plain, _moments((look + 1) * batch, counts[active] @ rows)))

    decided_at, verdict = _run_looks(llr_at, test.bounds(), runs, looks)
    return _summary(decided_at, verdict, batch, pool.pair.group_games)


def simulate_margin_test(
    pool: Pool, elo: float | None, test: MarginSPRT, runs: int, batch: int,
    rng: np.random.Generator, max_games: int = MAX_GAMES, small_sample: bool = True,
) -> SimResult:  # fmt: skip
    """The margin test on groups resampled from the pool, the truth set to ``elo`` (None:
    the pool's own), up to
    ``max_games`` games (``small_sample=False``: with Wald's bounds throughout, the test
    before :func:`~arena.compete.sprt.small_sample_factor`)."""
    g = np.array([group.score for group in pool.groups])
    m = np.array([group.margin for group in pool.groups])
    luck = np.array([group.luck for group in pool.groups])
    luck = luck - luck.mean(axis=0)
    if elo is not None and m.var() > 0:  # else as played, or a deterministic bot's copy
        rate = np.cov(g, m, bias=True)[0, 1] / m.var()
        m = m + (elo_to_score(elo) - 0.5) / rate - m.mean()
    rows = _rows(g, m, luck)
    sums = np.zeros((runs, rows.shape[1]))
    looks = -(-(max_games // pool.pair.group_games) // batch)

    def llr_at(look: int, active: npt.NDArray[np.intp]) -> FloatArray:
        picked = rng.integers(0, len(g), size=(active.size, batch))
        sums[active] += rows[picked].sum(axis=1)
        moments = _moments((look + 1) * batch, sums[active])
        return _as_llr(margin_verdicts(test, moments, small_sample))

    decided_at, verdict = _run_looks(llr_at, test.bounds(), runs, looks)
    return _summary(decided_at, verdict, batch, pool.pair.group_games)


def check_batch_llr(rng: np.random.Generator) -> float:
    """The largest difference between :func:`game_llr_batch` and :meth:`SPRT.llr`."""
    support = np.array([0.0, 0.25, 1 / 3, 0.5, 2 / 3, 0.75, 1.0])
    counts = rng.integers(0, 30, size=(50, len(support))).astype(np.float64)
    counts[rng.random(counts.shape) < 0.3] = 0
    counts[:, 3] += 1
    test = SPRT(-5, 15)
    batch = game_llr_batch(support, counts, elo_to_score(-5), elo_to_score(15))
    one = [
        test.llr(GroupScores(a for a, c in zip(support, row, strict=True) for _ in range(int(c))))
        for row in counts
    ]
    return float(np.max(np.abs(batch - np.array(one))))


def report_simulation(
    pools: Sequence[Pool], elo0: float, elo1: float, alpha: float, beta: float, runs: int,
    batch: int, seed: int,
) -> None:  # fmt: skip
    """Item 2a: error rates and mean games of both tests at several true Elo differences."""
    rng = np.random.default_rng(seed)
    check = check_batch_llr(rng)
    error = 100 * math.sqrt(alpha * (1 - alpha) / runs)
    print(f"\nSimulation: {runs} runs a point (a rate near alpha has a standard error of "
          f"{error:.2f}%), [{elo0:g}, {elo1:g}], alpha {alpha:g}, beta {beta:g}, looks every "
          f"{batch} groups; batch LLR check {check:.1e}")  # fmt: skip
    game_test = SPRT(elo0, elo1, alpha, beta)
    margin_test = MarginSPRT(elo0, elo1, alpha, beta, fast_pass=False)
    fast_test = MarginSPRT(elo0, elo1, alpha, beta)
    span = elo1 - elo0
    points = [elo0 - span / 2, elo0, elo0 + span / 4, elo0 + span / 2, elo0 + 3 * span / 4,
              elo1, elo1 + span, elo1 + 3 * span]  # fmt: skip
    print(f"{'pool':34} {'Elo':>6} | {'game: pass':>10} {'games':>6} {'und':>4} | "
          f"{'normal: pass':>12} {'games':>6} {'und':>4} | {'margin: pass':>12} {'games':>6} "
          f"{'und':>4} | {'+fast: pass':>12} {'games':>6} {'und':>4} | {'ratio':>5} "
          f"{'+fast':>5} {'sec':>4}")  # fmt: skip
    for pool in pools:
        for elo in points:
            started = time.perf_counter()
            results = [
                simulate_game_test(pool, elo, game_test, runs, batch, rng),
                simulate_game_test(pool, elo, game_test, runs, batch, rng, normal=True),
                simulate_margin_test(pool, elo, margin_test, runs, batch, rng),
                simulate_margin_test(pool, elo, fast_test, runs, batch, rng),
            ]
            # Within 1.96 Monte Carlo standard errors of the bound counts as meeting it.
            flag, margin = "", 1.96 * math.sqrt(alpha * (1 - alpha) / runs)
            worst = min(results[2].passed, results[3].passed)
            if elo == elo0:
                worst = max(results[2].passed, results[3].passed)
                flag = "  <= alpha" if worst <= alpha + margin else "  ABOVE ALPHA"
            elif elo == elo1:
                margin = 1.96 * math.sqrt(beta * (1 - beta) / runs)
                flag = "  >= 1-beta" if worst >= 1 - beta - margin else "  BELOW 1-BETA"
            cells = " | ".join(
                f"{100 * r.passed:11.1f}% {r.games:6.0f} {100 * r.undecided:3.0f}%" for r in results
            )
            print(
                f"{pool.pair.label:34} {elo:+6.1f} | {cells} | "
                f"{results[2].games / results[0].games:5.2f} "
                f"{results[3].games / results[0].games:5.2f} "
                f"{time.perf_counter() - started:4.0f}{flag}"
            )


#: A bot against its copy (the false passes) under the rules of a class, and greedy
#: against random as it plays (the power): the pools of ``--part classroom``. ``fresh``:
#: each game's own rng, as the bot files' unseeded ones. A deterministic bot against its
#: copy repeats one group (a split pair, margin 0), so a few hundred groups show it.
CLASSROOM = [
    Pair("block", 2, "random", "random", fresh=True),
    Pair("draw", 2, "random", "random", fresh=True),
    Pair("block", 2, "random", "random"),
    Pair("block", 2, "greedy", "greedy"),
    Pair("draw", 2, "greedy", "greedy"),
    Pair("block", 2, "greedy", "random", fresh=True),
]
#: (elo0, elo1, alpha, beta) of an assignment's "beats R" in tests/workers/test_classroom.py,
#: and the defaults'.
CLASSROOM_TESTS = [(0.0, 100.0, 0.001, 0.05), (0.0, 10.0, 0.05, 0.05)]


def report_classroom(
    pools: Sequence[Pool], runs: int, max_games: int, batch: int, seed: int
) -> None:
    """Short tests as an assignment grades them, at :data:`CLASSROOM_TESTS`: the pass
    rates of a bot against its copy (Elo 0: the false passes), at elo1 and twice elo1
    (its groups shifted), and of a stronger bot as it plays (its groups as they are)."""
    rng = np.random.default_rng(seed)
    first = -(-MIN_MARGIN_GROUPS // batch) * batch
    print(f"\nShort tests: {runs} runs a point, up to {max_games} games, looks every {batch} "
          f"groups (the first that may decide: {first} groups). Pass rate, undecided share; "
          "'Wald' is the margin test with the fast pass and Wald's bounds throughout (before "
          "the small-sample factor)")  # fmt: skip
    print(
        f"{'pool':36} {'test':>23} {'Elo':>6} | {'game':>7} {'und':>4} | {'Wald':>7} "
        f"{'und':>4} | {'margin':>7} {'und':>4} | {'+fast':>7} {'und':>4} {'games':>5}"
    )
    for elo0, elo1, alpha, beta in CLASSROOM_TESTS:
        game_test = SPRT(elo0, elo1, alpha, beta)
        plain, fast = (
            MarginSPRT(elo0, elo1, alpha, beta, False),
            MarginSPRT(elo0, elo1, alpha, beta),
        )
        name = f"[{elo0:g}, {elo1:g}] a {alpha:g} b {beta:g}"
        for pool in pools:
            points: list[float | None] = [elo0, elo1, 2 * elo1]
            if pool.pair.new != pool.pair.old:
                points = [None]  # as it plays
            elif not np.ptp([group.margin for group in pool.groups]):
                points = [elo0]  # a deterministic bot's copy: nothing to shift
            for elo in points:
                results = [
                    simulate_game_test(pool, elo, game_test, runs, batch, rng,
                                       max_games=max_games),
                    simulate_margin_test(pool, elo, fast, runs, batch, rng, max_games, False),
                    simulate_margin_test(pool, elo, plain, runs, batch, rng, max_games),
                    simulate_margin_test(pool, elo, fast, runs, batch, rng, max_games),
                ]  # fmt: skip
                flag = ""
                if elo == elo0:
                    bound = alpha + 1.96 * math.sqrt(alpha * (1 - alpha) / runs)
                    worst = max(results[2].passed, results[3].passed)
                    flag = "  <= alpha" if worst <= bound else "  ABOVE ALPHA"
                    flag += " (Wald: above)" if results[1].passed > bound else ""
                cells = " | ".join(
                    f"{100 * r.passed:6.2f}% {100 * r.undecided:3.0f}%" for r in results
                )
                shown = "as is" if elo is None else f"{elo:+.0f}"
                print(
                    f"{pool.pair.label:36} {name:>23} {shown:>6} | {cells} "
                    f"{results[3].games:5.1f}{flag}"
                )


# --- real bots ------------------------------------------------------------------------


def _spec(name: str, directory: Path) -> str:
    return name if name in STRATEGIES else str(directory / f"{name}.py")


def _schedule(pair: Pair, specs: dict[str, str], batch: int, seed: int) -> list[Match]:
    """``arena compare``'s matches (``compare_schedule``) of NEW and OLD as entrants."""
    return compare_schedule(
        PRESETS[pair.rules], pair.players, new=Entrant.from_spec(specs["new"]),
        old=Entrant.from_spec(specs["old1"]), max_games=MAX_GAMES, batch=batch, seed=seed,
        teams=pair.teams,
    )  # fmt: skip


def real_groups(
    pair: Pair, seed: int, batch: int, sandboxed: bool, directory: Path
) -> Iterator[GroupMargin]:
    """The deal groups of ``pair`` as ``arena compare`` plays and counts them, in order
    (checked against :func:`arena.compete.margins.group_margin` of their records)."""
    specs = {label: _spec(pair.new if label == "new" else pair.old, directory) for label in
             pair.labels}  # fmt: skip
    matches = _schedule(pair, specs, batch, seed)
    rules = PRESETS[pair.rules]
    pending: dict[str, list[MatchResult]] = {}
    rotations = pair.group_games
    results = run_local(
        matches, rules, workers=1, sandboxed=sandboxed, keep_going=True, keep_games=MAX_GAMES
    )
    try:
        with contextlib.closing(results):
            for result in results:
                tag = str(result.match.deal_group)
                pending.setdefault(tag, []).append(result)
                if len(pending[tag]) < rotations:
                    continue
                done = pending.pop(tag)
                groups = deal_groups(done)
                for key in sorted(groups):
                    if len(groups[key]) < rotations:
                        continue
                    group = group_of(groups[key])
                    records = [r.games[key[1]].record for r in done]
                    seats = [[s.label for s in r.match.seats].index("new") for r in done]
                    exact = group_margin(records, seats)  # the luck is kept to 6 decimals
                    assert (group.score, group.margin, group.forfeit) == (
                        exact.score, exact.margin, exact.forfeit
                    )  # fmt: skip
                    assert all(
                        math.isclose(a, b, abs_tol=1e-5)
                        for a, b in zip(group.luck, exact.luck, strict=True)
                    )
                    yield group
    finally:
        release_kept_players()


@dataclass
class Decision:
    games: int = 0
    verdict: str = "undecided"


def run_real(
    pair: Pair, seed: int, batch: int, sandboxed: bool, directory: Path,
    elo0: float, elo1: float, alpha: float, beta: float,
) -> dict[tuple[str, int], Decision]:  # fmt: skip
    """Play until both tests decided at both look schedules; their decisions."""
    margin_test = MarginSPRT(elo0, elo1, alpha, beta, fast_pass=False)
    tests: dict[str, Callable[[MarginScores], str]] = {
        "game": lambda s: SPRT(elo0, elo1, alpha, beta).status(s.game_scores()),
        "normal": lambda s: margin_test.status(plain),  # the game scores alone
        "margin": margin_test.status,
        "fast": MarginSPRT(elo0, elo1, alpha, beta).status,  # arena compare's default
    }
    decisions = {(name, every): Decision() for name in tests for every in (1, batch)}
    scores, plain = MarginScores(), MarginScores()
    for group in real_groups(pair, seed, batch, sandboxed, directory):
        scores.add(group)
        plain.add(GroupMargin(group.score, 0.0))
        for (name, every), decision in decisions.items():
            if decision.verdict != "undecided" or scores.n % every or scores.n < 2:
                continue
            status = tests[name](scores)
            if status != "continue":
                decision.verdict = "pass" if status == "H1 accepted" else "fail"
                decision.games = scores.n * pair.group_games
        if all(d.verdict != "undecided" for d in decisions.values()):
            break
    for decision in decisions.values():
        if decision.verdict == "undecided":
            decision.games = scores.n * pair.group_games
    return decisions


def report_real(
    pairs: Sequence[Pair], repeats: int, batch: int, sandboxed: bool, seed: int,
    elo0: float, elo1: float, alpha: float, beta: float,
) -> None:  # fmt: skip
    """Item 2b: games to a decision of both tests on real bots, and their agreement."""
    print(f"\nReal bots: [{elo0:g}, {elo1:g}], alpha {alpha:g}, beta {beta:g}, {repeats} "
          f"sequences a pair, bot files {'sandboxed' if sandboxed else 'unsandboxed'}")  # fmt: skip
    print(f"{'pair':34} {'look':>4} | {'game: games':>11} {'verdicts':>8} | "
          f"{'normal: games':>13} {'verdicts':>8} | {'margin: games':>13} {'verdicts':>8} | "
          f"{'+fast: games':>12} {'verdicts':>8} | {'ratio':>5} {'+fast':>5} {'agree':>5} "
          f"{'sec':>5}")  # fmt: skip
    with tempfile.TemporaryDirectory() as temp:
        directory = Path(temp)
        for path in BOTS.glob("*.py"):
            shutil.copy(path, directory / path.name)
        source = (BOTS / "montecarlo.py").read_text()
        (directory / "montecarlo.py").write_text(
            source.replace("TIME_BUDGET = 0.05", "TIME_BUDGET = 0.005")
        )
        for pair in pairs:
            started = time.perf_counter()
            runs = [
                run_real(pair, _derive("real", seed, pair.label, r), batch, sandboxed, directory,
                         elo0, elo1, alpha, beta)
                for r in range(repeats)
            ]  # fmt: skip
            for every in (1, batch):
                cells = []
                for name in ("game", "normal", "margin", "fast"):
                    games = [run[(name, every)].games for run in runs]
                    verdicts = [run[(name, every)].verdict for run in runs]
                    tally = "/".join(
                        f"{verdicts.count(v)}{v[0]}" for v in ("pass", "fail", "undecided")
                        if verdicts.count(v)
                    )  # fmt: skip
                    cells.append((float(np.mean(games)), tally))
                agree = sum(
                    run[("game", every)].verdict
                    == run[("margin", every)].verdict
                    == run[("fast", every)].verdict
                    for run in runs
                )
                print(
                    f"{pair.label:34} {every:4d} | {cells[0][0]:11.0f} {cells[0][1]:>8} | "
                    f"{cells[1][0]:13.0f} {cells[1][1]:>8} | {cells[2][0]:13.0f} "
                    f"{cells[2][1]:>8} | {cells[3][0]:12.0f} {cells[3][1]:>8} | "
                    f"{cells[2][0] / cells[0][0]:5.2f} {cells[3][0] / cells[0][0]:5.2f} "
                    f"{agree:3d}/{repeats} {time.perf_counter() - started:5.0f}"
                )


@dataclass(frozen=True)
class Timed:
    """A pair of ``--part time``: NEW, OLD (bot files in bots/ or built-in strategies), the
    rule set and the test's options beyond the defaults."""

    label: str
    new: str
    old: str
    rules: str
    options: tuple[str, ...] = ()

    @property
    def files(self) -> bool:
        return self.new not in STRATEGIES and self.old not in STRATEGIES


#: ``--part time``'s pairs (issue 33): a clear one, one near elo1 and one near elo0
#: (greedy against random plays at about +75 Elo in ``draw``: the hypotheses are set
#: around it), and a 3-player one.
TIMED: tuple[Timed, ...] = (
    Timed("clear", "bots/counter.py", "bots/greedy.py", "draw"),
    Timed("near elo1", "greedy", "random", "draw", ("--elo0", "55", "--elo1", "75")),
    Timed("near elo0", "greedy", "random", "draw", ("--elo0", "75", "--elo1", "95")),
    Timed("3 players", "bots/counter.py", "bots/greedy.py", "draw", ("--players", "3")),
)


def _children_cpu() -> float:
    """CPU seconds of this process's children that have ended (and theirs, waited for)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _timed(
    command: list[str], env: dict[str, str] | None = None
) -> tuple[float, str, float | None]:
    """Run an ``arena`` command as a process: its wall seconds to its exit, its last line,
    and its wall seconds to the verdict (the line ``NEW passed ...``, as it is printed;
    None without one). Its CPU seconds go to :data:`_LAST_CPU`."""
    cpu = _children_cpu()
    started = time.perf_counter()
    arena = str(Path(sys.executable).with_name("arena"))  # this environment's
    with subprocess.Popen(
        [arena, *command], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=None if env is None else {**os.environ, **env},
    ) as process:  # fmt: skip
        assert process.stdout is not None and process.stderr is not None
        verdict_at, lines = None, []
        for line in process.stdout:
            if line.startswith("NEW ") and verdict_at is None:
                verdict_at = time.perf_counter() - started
            lines.append(line.strip())
        errors = process.stderr.read()
    lines = [line for line in lines if line] or [errors.strip()]
    _LAST_CPU[0] = _children_cpu() - cpu
    return time.perf_counter() - started, lines[-1], verdict_at


#: The CPU seconds of the last command :func:`_timed` ran (its processes and theirs that
#: were waited for: the pool's, the bots' of ``arena play``; robust to the machine's load).
_LAST_CPU = [0.0]


def _games_of(verdict: str) -> int:
    """The games of ``arena compare``'s verdict line (``NEW passed (..., 32 games)``)."""
    try:
        return int(verdict.rsplit(", ", 1)[-1].split()[0])
    except (IndexError, ValueError):
        sys.exit(f"no verdict: {verdict}")


@contextlib.contextmanager
def _remote_service(directory: Path, checkout: str | None = None) -> Iterator[dict[str, str]]:
    """A store (SQLite) and broker (filesystem) in ``directory``, the reference bots
    stored as ``bench/NAME``, and one ``arena worker`` (two processes) serving them: the
    environment that points ``arena compare --remote`` at them (``checkout``: the worker's
    and the command's code, as ``PYTHONPATH``)."""
    from arena.store.db import connect, upgrade

    url = f"sqlite:///{directory / 'arena.db'}"
    env = {"ARENA_DATABASE_URL": url, "ARENA_BROKER_URL": f"filesystem://{directory / 'broker'}"}
    if checkout is not None:
        env["PYTHONPATH"] = checkout
    upgrade(url)
    store = connect(url)
    for pair in TIMED:
        for name in (pair.new, pair.old):
            if pair.files:
                path = BOTS / Path(name).name
                store.add_bot_version("bench", path.stem, path.read_text(), {"bench": True})
    log = directory / "worker.log"
    with log.open("wb") as out:
        worker = subprocess.Popen(
            [str(Path(sys.executable).with_name("arena")), "worker", "--concurrency", "2"],
            stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
            env={**os.environ, **env}, cwd=directory, start_new_session=True,
        )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while "ready." not in log.read_text(errors="replace"):
            if worker.poll() is not None or time.monotonic() > deadline:
                sys.exit(f"arena worker did not start:\n{log.read_text(errors='replace')}")
            time.sleep(0.05)
        yield env
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(worker.pid, signal.SIGTERM)
        try:
            worker.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(worker.pid, signal.SIGKILL)
            worker.wait()


def report_time(
    seed: int,
    unsandboxed: bool,
    remote: bool,
    only: Sequence[str] = ("",),
    before: str | None = None,
    runs: int = 1,
) -> None:
    """Time to a verdict (issue 33): ``arena compare`` as a process with its default
    settings, against ``arena play`` of the games a game-level SPRT needs for the pair;
    with ``remote``, ``arena compare --remote`` of the pairs of bot files too, on one
    ``arena worker`` of two processes (SQLite, filesystem broker). ``before``: a checkout
    whose ``arena compare`` runs too, just before this one's (``PYTHONPATH``), against the
    same ``arena play``: a row ``(before)`` per pair, interleaved."""
    print(f"load averages at the start {os.getloadavg()}", flush=True)
    print(f"{'pair':10} {'NEW v OLD':30} | {'compare: games':>14} {'verdict s':>9} "
          f"{'exit s':>6} {'CPU s':>5} | {'game-level: games':>17} | {'play s':>6} "
          f"{'CPU s':>5} | {'ratio':>5} {'(exit)':>6} {'(CPU)':>5}", flush=True)  # fmt: skip
    rows = []
    for pair in [pair for pair in TIMED if any(text in pair.label for text in only)]:
        base = ["compare", pair.new, pair.old, "--rules", pair.rules, "--seed", str(seed),
                *pair.options]  # fmt: skip
        base += ["--unsandboxed"] if unsandboxed and pair.files else []
        if before is not None:
            earlier = _timed(base, {"PYTHONPATH": before}), _LAST_CPU[0]
        seconds, verdict, verdict_at = _timed(base)
        compare_cpu = _LAST_CPU[0]
        _, game_verdict, _ = _timed([*base, "--statistic", "game"])
        game_games = _games_of(game_verdict)
        players = pair.options[pair.options.index("--players") + 1] if "--players" in \
            pair.options else "2"  # fmt: skip
        play = ["play", "--rules", pair.rules, "--bots", ",".join(
            [pair.new, *[pair.old] * (int(players) - 1)]), "--games", str(game_games),
            "--seed", str(seed)]  # fmt: skip
        play += ["--unsandboxed"] if unsandboxed and pair.files else []
        play_seconds, _, _ = _timed(play)
        play_cpu = _LAST_CPU[0]
        rows.append((pair, base, play_seconds))
        if before is not None:
            (then, then_verdict, then_at), then_cpu = earlier
            print(
                f"{'(before)':10} {pair.new + ' v ' + pair.old:30.30} | "
                f"{_games_of(then_verdict):14d} {then_at or then:9.2f} {then:6.2f} "
                f"{then_cpu:5.2f} | {'':17} | {play_seconds:6.2f} {play_cpu:5.2f} | "
                f"{(then_at or then) / play_seconds:5.2f} {then / play_seconds:6.2f} "
                f"{then_cpu / play_cpu:5.2f}",
                flush=True,
            )
        print(
            f"{pair.label:10} {pair.new + ' v ' + pair.old:30.30} | {_games_of(verdict):14d} "
            f"{verdict_at or seconds:9.2f} {seconds:6.2f} {compare_cpu:5.2f} | "
            f"{game_games:17d} | {play_seconds:6.2f} {play_cpu:5.2f} | "
            f"{(verdict_at or seconds) / play_seconds:5.2f} {seconds / play_seconds:6.2f} "
            f"{compare_cpu / play_cpu:5.2f}",
            flush=True,
        )
    print(f"load averages {os.getloadavg()}", flush=True)
    if not remote:
        return
    print("arena compare --remote (one arena worker, 2 processes; SQLite, filesystem broker), "
          "against the same arena play; CPU s: the command's own", flush=True)  # fmt: skip
    with contextlib.ExitStack() as stack:
        services = {}
        for which, checkout in (("(before)", before), ("", None)):
            if which and checkout is None:
                continue
            temp = Path(stack.enter_context(tempfile.TemporaryDirectory()))
            services[which] = stack.enter_context(_remote_service(temp, checkout))
        print(f"(workers ready) load averages {os.getloadavg()}", flush=True)
        first = set(services)  # (the services whose worker has played no compare yet)
        for pair, base, play_seconds in rows:
            if not pair.files:
                continue
            stored = [f"bench/{Path(name).stem}" for name in (pair.new, pair.old)]
            options = [o for o in base[3:] if o != "--unsandboxed"]
            for _ in range(runs):
                for which, env in services.items():  # before and after, interleaved
                    seconds, verdict, verdict_at = _timed(
                        ["compare", *stored, *options, "--remote"], env
                    )
                    label = (which or pair.label) + ("*" if which in first else "")
                    first.discard(which)
                    print(
                        f"{label:10} {' v '.join(stored):30.30} | "
                        f"{_games_of(verdict):14d} {verdict_at or seconds:9.2f} {seconds:6.2f} "
                        f"{_LAST_CPU[0]:5.2f} | {'':17} | {play_seconds:6.2f} {'':5} | "
                        f"{(verdict_at or seconds) / play_seconds:5.2f} "
                        f"{seconds / play_seconds:6.2f}",
                        flush=True,
                    )
        print("* the worker's first compare: each of its pool processes loads the test's "
              "scipy.special (0.3 CPU s) while it plays its first match", flush=True)  # fmt: skip
    print(f"load averages at the end {os.getloadavg()}", flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the parts asked for."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument(
        "--part", choices=("all", "pools", "sim", "real", "classroom", "time"), default="all"
    )
    parser.add_argument("--runs", type=int, default=2000, help="simulated tests a point")
    parser.add_argument("--pool", type=int, default=2000, help="deal groups a pool")
    parser.add_argument("--repeats", type=int, default=5, help="real sequences a pair")
    parser.add_argument("--elo0", type=float, default=0.0)
    parser.add_argument("--elo1", type=float, default=10.0)
    parser.add_argument("--alpha", type=float, default=0.05)
    parser.add_argument("--beta", type=float, default=0.05)
    parser.add_argument("--batch", type=int, default=16, help="deal groups between looks")
    parser.add_argument("--montecarlo", action="store_true", help="add montecarlo v counter")
    parser.add_argument("--unsandboxed", action="store_true", help="bot files unsandboxed")
    parser.add_argument(
        "--remote", action="store_true", help="--part time: arena compare --remote too"
    )
    parser.add_argument(
        "--before",
        metavar="CHECKOUT",
        help="--part time: that checkout's arena compare too, interleaved (e.g. /work/main)",
    )
    parser.add_argument(
        "--runs-each",
        type=int,
        default=1,
        help="--part time: runs of each arena compare --remote (before and after, interleaved)",
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--max-games", type=int, default=60, help="--part classroom's cap (and looks: --batch)"
    )
    parser.add_argument(
        "--only", default="", help="pairs whose label contains one of these (comma-separated)"
    )
    args = parser.parse_args(argv)
    if args.part == "time":
        report_time(
            args.seed, args.unsandboxed, args.remote, args.only.split(","), args.before,
            args.runs_each,
        )  # fmt: skip
        return 0
    if args.part == "classroom":
        pools = []
        for pair in [p for p in CLASSROOM if any(t in p.label for t in args.only.split(","))]:
            still = pair.new == pair.old != "random"  # one group over and over
            pool = play_pool(pair, min(args.pool, 300) if still else args.pool, args.seed)
            print(f"pool {pair.label}: {len(pool.groups)} groups in {pool.seconds:.0f} s")
            pools.append(pool)
        report_classroom(pools, args.runs, args.max_games, args.batch, args.seed)
        return 0
    if args.part in ("all", "pools", "sim"):
        pools = []
        for pair in [p for p in POOLS if any(t in p.label for t in args.only.split(","))]:
            pool = play_pool(pair, args.pool, args.seed)
            print(f"pool {pair.label}: {len(pool.groups)} groups in {pool.seconds:.0f} s")
            pools.append(pool)
        report_pools(pools)
        if args.part != "pools":
            simulated = [pool for pool in pools if POOLS.index(pool.pair) in SIMULATED]
            report_simulation(
                simulated, args.elo0, args.elo1, args.alpha, args.beta, args.runs, args.batch,
                args.seed,
            )  # fmt: skip
    if args.part in ("all", "real"):
        sandboxed = not args.unsandboxed
        if sandboxed and (missing := check_sandbox()):
            print(f"no sandbox here ({'; '.join(missing)}): bot files run unsandboxed")
            sandboxed = False
        pairs = [*REAL, MONTECARLO] if args.montecarlo else REAL
        pairs = [pair for pair in pairs if any(t in pair.label for t in args.only.split(","))]
        report_real(
            pairs, args.repeats, args.batch, sandboxed, args.seed,
            args.elo0, args.elo1, args.alpha, args.beta,
        )  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
