"""Ratings (arena.compete.ratings) against hand-computed Bradley-Terry values."""

from __future__ import annotations

import logging
import math
import random
from pathlib import Path

import numpy as np
import pytest

from arena.compete.ratings import (
    ELO_PER_NAT,
    PRIOR_SD,
    GameResult,
    Rating,
    ResultMatrix,
    fit_ratings,
    fit_ratings_arrays,
    rating_history,
)


def games(first: str, second: str, wins: int, losses: int, draws: int = 0) -> list[GameResult]:
    """``first`` against ``second``: ``wins`` wins, ``losses`` losses, ``draws`` draws."""
    return (
        [GameResult((first, second), (0, 1))] * wins
        + [GameResult((first, second), (1, 0))] * losses
        + [GameResult((first, second), (0, 0))] * draws
    )


def by_bot(ratings: list[Rating]) -> dict[str, Rating]:
    return {r.bot: r for r in ratings}


def assert_same(got: list[Rating], want: list[Rating]) -> None:
    assert [r.bot for r in got] == [r.bot for r in want]
    for a, b in zip(got, want, strict=True):
        assert (a.games, a.rank, a.rank_best, a.rank_worst) == (
            b.games,
            b.rank,
            b.rank_best,
            b.rank_worst,
        )
        assert a.rating == pytest.approx(b.rating, abs=1e-6)
        assert a.stderr == pytest.approx(b.stderr, rel=1e-6)


def elo_gap(score: float) -> float:
    """The Elo difference whose expected score is ``score``: 400 log10(s / (1 - s))."""
    return 400 * math.log10(score / (1 - score))


@pytest.mark.parametrize(("wins", "n"), [(900, 1000), (750, 1000), (5100, 10000)])
def test_two_bots_elo_difference_is_the_logit_of_the_score(wins: int, n: int) -> None:
    rated = by_bot(fit_ratings(games("a", "b", wins, n - wins)))
    # The prior (sd 1000 Elo) pulls the gap in by well under half an Elo point here.
    assert rated["a"].rating - rated["b"].rating == pytest.approx(elo_gap(wins / n), abs=0.5)
    assert rated["a"].rating + rated["b"].rating == pytest.approx(3000)
    assert [rated["a"].rank, rated["b"].rank] == [1, 2]
    assert rated["a"].games == rated["b"].games == n


def test_transitive_three_bots_fit_exactly() -> None:
    # a beats b 3:1, b beats c 3:1, a beats c 9:1: odds multiply, so the
    # Bradley-Terry fit reproduces every pair: gaps 400 log10 3 and 400 log10 9.
    results = games("a", "b", 300, 100) + games("b", "c", 300, 100) + games("a", "c", 900, 100)
    rated = by_bot(fit_ratings(results))
    step = 400 * math.log10(3)
    assert rated["a"].rating - rated["b"].rating == pytest.approx(step, abs=0.5)
    assert rated["b"].rating - rated["c"].rating == pytest.approx(step, abs=0.5)
    assert rated["b"].rating == pytest.approx(1500, abs=0.5)
    assert [r.bot for r in fit_ratings(results)] == ["a", "b", "c"]
    assert all(r.decided for r in rated.values())


def test_symmetry_and_order_independence() -> None:
    results = games("a", "b", 30, 10, 5) + games("b", "c", 12, 20) + games("c", "a", 7, 9, 2)
    forward = by_bot(fit_ratings(results))
    backward = by_bot(fit_ratings(reversed(results)))
    shuffled = list(results)
    random.Random(4).shuffle(shuffled)
    for other in (backward, by_bot(fit_ratings(shuffled))):
        for bot in "abc":
            assert other[bot].rating == pytest.approx(forward[bot].rating, abs=1e-6)
            assert other[bot].stderr == pytest.approx(forward[bot].stderr, rel=1e-6)
    # Swapping every result's winner and loser mirrors the ratings about 1500.
    mirrored = [GameResult(r.bots, tuple(1 - p if p < 2 else p for p in r.places)) for r in results]
    flipped = by_bot(fit_ratings(mirrored))
    for bot in "abc":
        assert flipped[bot].rating - 1500 == pytest.approx(1500 - forward[bot].rating, abs=1e-6)
    # Equal records give equal ratings.
    even = by_bot(fit_ratings(games("a", "b", 20, 20)))
    assert even["a"].rating == pytest.approx(1500) and even["b"].rating == pytest.approx(1500)


def test_anchor_fixes_one_bot_at_1500() -> None:
    results = games("a", "b", 300, 100) + games("b", "c", 300, 100) + games("a", "c", 900, 100)
    free = by_bot(fit_ratings(results))
    anchored = by_bot(fit_ratings(results, anchor="c"))
    assert anchored["c"].rating == 1500 and anchored["c"].stderr == 0
    assert anchored["c"].low == anchored["c"].high == 1500
    for bot in "ab":
        gap = free[bot].rating - free["c"].rating
        assert anchored[bot].rating - 1500 == pytest.approx(gap, abs=1e-9)
        # Measured from c, a's error is that of the difference: larger than about the mean.
        assert anchored[bot].stderr > free[bot].stderr
    assert [r.rank for r in anchored.values()] == [r.rank for r in free.values()]


def test_draws_are_half_wins() -> None:
    # 60 wins, 20 losses, 20 draws: score 0.7, gap 400 log10(7/3) = 147.2.
    rated = by_bot(fit_ratings(games("a", "b", 60, 20, 20)))
    assert rated["a"].rating - rated["b"].rating == pytest.approx(elo_gap(0.7), abs=0.3)
    drawn = by_bot(fit_ratings(games("a", "b", 0, 0, 50)))
    assert drawn["a"].rating == pytest.approx(drawn["b"].rating)


def test_four_player_game_decomposes_into_weighted_pairs() -> None:
    matrix = ResultMatrix()
    # a first, b and c tie for second, d last: 6 pairs, each weighing 1/3
    # (every seat has 3 opponents, so each seat's comparisons weigh one game).
    matrix.add(GameResult(("a", "b", "c", "d"), (0, 1, 1, 3)))
    a, b, c, d = range(4)
    third = 1 / 3
    expected_wins = np.zeros((4, 4))
    for winner, loser in [(a, b), (a, c), (a, d), (b, d), (c, d)]:
        expected_wins[winner, loser] = third
    expected_draws = np.zeros((4, 4))
    expected_draws[b, c] = expected_draws[c, b] = third
    assert matrix.bots == ("a", "b", "c", "d")
    np.testing.assert_allclose(matrix.wins, expected_wins)
    np.testing.assert_allclose(matrix.draws, expected_draws)
    assert list(matrix.games) == [1, 1, 1, 1]
    # Each seat's comparisons add up to one game.
    np.testing.assert_allclose((matrix.wins + matrix.wins.T + matrix.draws).sum(axis=1), 1.0)


def test_team_play_never_compares_partners() -> None:
    matrix = ResultMatrix()
    # 2v2: seats 0 and 2 (a, c) beat seats 1 and 3 (b, d); each seat has 2 opponents.
    matrix.add(GameResult(("a", "b", "c", "d"), (0, 1, 0, 1), sides=(0, 1, 0, 1)))
    a, b, c, d = range(4)
    expected = np.zeros((4, 4))
    for winner in (a, c):
        for loser in (b, d):
            expected[winner, loser] = 0.5
    np.testing.assert_allclose(matrix.wins, expected)
    assert matrix.wins[a, c] == matrix.wins[c, a] == 0
    assert not matrix.draws.any()
    # One bot holding both seats of a partnership: still one game, compared only with rivals.
    matrix.add(GameResult(("a", "b", "a", "b"), (1, 0, 1, 0), sides=(0, 1, 0, 1)))
    assert matrix.wins[b, a] == pytest.approx(2.0) and matrix.wins[a, a] == 0
    assert list(matrix.games) == [2, 2, 1, 1]
    rated = by_bot(matrix.fit())
    assert rated["a"].rating > rated["d"].rating


def test_confidence_intervals_shrink_as_one_over_sqrt_n() -> None:
    small = by_bot(fit_ratings(games("a", "b", 60, 40)))
    large = by_bot(fit_ratings(games("a", "b", 6000, 4000)))
    assert small["a"].stderr / large["a"].stderr == pytest.approx(10, rel=0.02)
    # stderr about the mean: var(t_a) = 1 / (4 n p (1 - p)) for two bots.
    assert large["a"].stderr == pytest.approx(ELO_PER_NAT / math.sqrt(4 * 10000 * 0.24), rel=1e-3)
    assert large["a"].low == pytest.approx(large["a"].rating - 1.959964 * large["a"].stderr)
    assert large["a"].high == pytest.approx(large["a"].rating + 1.959964 * large["a"].stderr)


def test_undefeated_bot_gets_a_finite_rating() -> None:
    results = games("a", "b", 20, 0) + games("b", "c", 10, 10)
    rated = by_bot(fit_ratings(results))
    assert math.isfinite(rated["a"].rating) and math.isfinite(rated["a"].stderr)
    assert rated["a"].rating > rated["b"].rating + 400
    assert rated["a"].rank == 1
    alone = by_bot(fit_ratings(games("a", "b", 1, 0)))
    assert 1500 < alone["a"].rating < 2000


def test_ranks_are_undecided_on_little_data() -> None:
    rated = fit_ratings(games("a", "b", 6, 4) + games("b", "c", 5, 5))
    assert [r.rank for r in rated] == [1, 2, 3]
    assert not any(r.decided for r in rated)
    assert all((r.rank_best, r.rank_worst) == (1, 3) for r in rated)


def test_invalid_input_raises_clear_errors() -> None:
    with pytest.raises(ValueError, match="2 bots but 1 places"):
        GameResult(("a", "b"), (0,))
    with pytest.raises(ValueError, match="2 bots but 3 sides"):
        GameResult(("a", "b"), (0, 1), sides=(0, 1, 0))
    with pytest.raises(ValueError, match="at least two seats"):
        GameResult(("a",), (0,))
    with pytest.raises(ValueError, match="one side"):
        GameResult(("a", "b"), (0, 1), sides=(0, 0))
    with pytest.raises(ValueError, match="places must be >= 0"):
        GameResult(("a", "b"), (0, -1))
    with pytest.raises(ValueError, match="at least two bots"):
        fit_ratings([GameResult(("a", "a"), (0, 1))])
    with pytest.raises(ValueError, match="at least two bots"):
        fit_ratings([])
    with pytest.raises(ValueError, match="unknown anchor bot 'z'"):
        fit_ratings(games("a", "b", 1, 1), anchor="z")
    with pytest.raises(ValueError, match="differ in length"):
        fit_ratings_arrays(["a", "b"], [0, 1], [1])
    with pytest.raises(ValueError, match="outside"):
        fit_ratings_arrays(["a", "b"], [0, 2], [1, 0])
    matrix = ResultMatrix()
    codes = matrix.codes(["a", "b"])
    with pytest.raises(ValueError, match="fewer than two seats"):
        matrix.add_seats([7, 7, 8], codes[[0, 1, 0]], [0, 1, 0])
    with pytest.raises(ValueError, match="all its seats on one side"):
        matrix.add_seats([7, 7], codes, [0, 1], [3, 3])


def test_array_paths_match_the_result_path() -> None:
    rng = np.random.default_rng(7)
    winners = rng.integers(0, 4, 500)
    losers = (winners + rng.integers(1, 4, 500)) % 4
    drawn = rng.random(500) < 0.2
    names = ["w", "x", "y", "z"]
    results = [
        GameResult((names[w], names[v]), (0, 0) if d else (0, 1))
        for w, v, d in zip(winners, losers, drawn, strict=True)
    ]
    expected = fit_ratings(results)
    assert_same(fit_ratings_arrays(names, winners, losers, drawn), expected)
    # The same games as a shuffled seat table with arbitrary game ids.
    matrix = ResultMatrix()
    codes = matrix.codes(names)
    game = np.repeat(rng.permutation(500) * 3 + 11, 2)
    bots = np.column_stack([winners, losers]).ravel()
    places = np.column_stack([np.zeros(500), np.where(drawn, 0, 1)]).ravel().astype(int)
    order = rng.permutation(1000)
    matrix.add_seats(game[order], codes[bots[order]], places[order])
    assert_same(matrix.fit(), expected)


def test_incremental_adds_equal_one_batch() -> None:
    results = games("a", "b", 30, 10, 5) + [GameResult(("a", "b", "c"), (2, 0, 1))] * 7
    matrix = ResultMatrix()
    for result in results:
        matrix.add(result)
    assert_same(matrix.fit(), fit_ratings(results))


def test_rating_history_refits_cumulatively() -> None:
    early = [GameResult(("a", "b"), (0, 1), time=t) for t in (1.0, 2.0, 3.0)]
    late = [GameResult(("c", "b"), (0, 1), time=t) for t in (5.0, 6.0)]
    history = rating_history(late + early, [0.5, 3.0, 10.0])
    assert sorted(history) == ["a", "b", "c"]
    assert [p.time for p in history["a"]] == [3.0, 10.0]
    assert [p.time for p in history["c"]] == [10.0]
    assert [p.games for p in history["b"]] == [3, 5]
    at_three = by_bot(fit_ratings(early))
    assert history["a"][0].rating == pytest.approx(at_three["a"].rating)
    assert history["a"][0].low == pytest.approx(at_three["a"].low)
    anchored = rating_history(early + late, [3.0, 10.0], anchor="c")
    assert [p.rating for p in anchored["c"]] == [1500.0]
    with pytest.raises(ValueError, match="unknown anchor"):
        rating_history(early, [3.0], anchor="c")


DATA = Path(__file__).parent / "data"


def test_the_fit_converges_on_the_table_that_crashed_trust_exact() -> None:
    """8 bots, 100 games a pair, 20% draws: scipy's trust-exact raised "math domain error"
    here (2 of about 4,150 simulated fits). The damped Newton fit converges: its gradient
    vanishes, and every rating is finite with a finite interval."""
    table = np.load(DATA / "ratings-fit-crash.npz")
    bots = [f"b{i}" for i in range(8)]
    ratings = fit_ratings_arrays(bots, table["w"], table["l"], table["d"])
    assert sorted(r.bot for r in ratings) == bots
    assert all(math.isfinite(r.rating) and 0 < r.stderr < 100 for r in ratings)
    assert sum(r.rating for r in ratings) == pytest.approx(1500 * 8)


@pytest.mark.parametrize(("wins", "losses"), [(18, 2), (14, 6), (11, 9)])
def test_two_bots_agree_with_an_exact_solve_and_warn_nothing(
    wins: int, losses: int, caplog: pytest.LogCaptureFixture
) -> None:
    """The fit between two bots equals the root of its one-dimensional score equation
    (solved by bisection to machine precision) within 1e-5 Elo, with no warning logged:
    these results made the old fit print "stopped early: A bad approximation..."."""
    caplog.set_level(logging.WARNING)
    ratings = {
        r.bot: r
        for r in fit_ratings_arrays(
            ["a", "b"], [0] * wins + [1] * losses, [1] * wins + [0] * losses
        )
    }
    # Strengths +x and -x: d/dx of the negative log-posterior, halved, is
    # games * expit(2x) - wins + lambda * x = 0 (lambda: the prior's precision).
    precision = (ELO_PER_NAT / PRIOR_SD) ** 2
    games = wins + losses

    def slope(x: float) -> float:
        return games / (1 + math.exp(-2 * x)) - wins + precision * x

    from scipy import optimize  # here: a third of a CPU second of every test process's start

    x = optimize.brentq(slope, -10, 10, xtol=1e-15, rtol=4 * np.finfo(float).eps)
    assert ratings["a"].rating - ratings["b"].rating == pytest.approx(2 * x * ELO_PER_NAT, abs=1e-5)
    assert not caplog.records
