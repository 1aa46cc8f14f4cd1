"""The final's separation rule: the first round, separation, ties at the cap, places."""

from __future__ import annotations

import itertools
from statistics import NormalDist

import numpy as np
import pytest

from arena.compete.final import FinalPolicy, assess_final, rerun_share, separation_z, separations
from arena.compete.ratings import ELO_PER_NAT, ResultMatrix

#: Hand-made results of a few dozen games: the mixture's boundary (the default) asks more of
#: so few games than the constant one (test_the_mixture_asks_more_of_few_games).
POCOCK = FinalPolicy(correction="pocock")


def matrix_of(results: dict[tuple[str, str], int], names: list[str]) -> ResultMatrix:
    """A matrix where for each (winner, loser) key the winner won that many games."""
    matrix = ResultMatrix()
    codes = dict(zip(names, matrix.codes(names).tolist(), strict=True))
    winners = [codes[w] for (w, _), n in results.items() for _ in range(n)]
    losers = [codes[lo] for (_, lo), n in results.items() for _ in range(n)]
    matrix.add_pairs(winners, losers)
    return matrix


def test_before_any_game_every_pair_plays() -> None:
    state = assess_final(["a", "b", "c", "d"], None, 0, FinalPolicy())
    assert not state.done
    assert state.next_pairs == list(itertools.combinations("abcd", 2))
    assert [s.place for s in state.standings] == [1, 1, 1, 1]
    assert [s.id for s in state.standings] == ["a", "b", "c", "d"]
    assert assess_final(["a", "b"], ResultMatrix(), 0).next_pairs == [("a", "b")]


def test_clear_results_separate_every_neighbour_and_end_the_final() -> None:
    names = ["a", "b", "c"]
    # Each beats every lower one 40-2: far beyond 1.645 standard errors.
    results = {(w, lo): 40 for w, lo in itertools.combinations(names, 2)}
    results.update({(lo, w): 2 for w, lo in itertools.combinations(names, 2)})
    state = assess_final(["c", "b", "a"], matrix_of(results, names), 126, POCOCK)
    assert state.done and state.next_pairs == [] and state.ties == 0
    assert [s.id for s in state.standings] == ["a", "b", "c"]  # the fit's order, not the seeding
    assert [s.place for s in state.standings] == [1, 2, 3]
    assert [s.separated_from_next for s in state.standings] == [True, True, False]
    assert all(s.games == 84 for s in state.standings)
    assert state.standings[0].z > 1.645


def test_unseparated_neighbours_play_on_then_tie_at_the_cap() -> None:
    names = ["a", "b", "c"]
    # a is far ahead; b and c are even.
    results = {("a", "b"): 30, ("b", "a"): 1, ("a", "c"): 30, ("c", "a"): 1}
    results.update({("b", "c"): 10, ("c", "b"): 10})
    matrix = matrix_of(results, names)
    state = assess_final(names, matrix, 82, FinalPolicy(max_games=2000, correction="pocock"))
    assert not state.done
    assert state.next_pairs == [("b", "c")]
    assert [s.place for s in state.standings] == [1, 2, 2]
    capped = assess_final(names, matrix, 2000, FinalPolicy(max_games=2000, correction="pocock"))
    assert capped.done and capped.next_pairs == [] and capped.ties == 1
    assert [s.place for s in capped.standings] == [1, 2, 2]
    assert capped.standings[0].id == "a"


def test_places_skip_after_a_tie() -> None:
    names = ["a", "b", "c", "d"]
    results = {("a", "b"): 10, ("b", "a"): 10, ("a", "c"): 10, ("c", "a"): 10}
    results.update({("b", "c"): 10, ("c", "b"): 10})
    results.update({(x, "d"): 40 for x in "abc"})
    policy = FinalPolicy(max_games=100, correction="pocock", family="none")  # one pair's rule
    state = assess_final(names, matrix_of(results, names), 180, policy)
    assert state.done
    assert [s.place for s in state.standings] == [1, 1, 1, 4]


def test_holm_shares_the_error_among_the_pairs_step_by_step() -> None:
    """Holm's step-down (FinalPolicy.family): a pair is separated at alpha / (pairs left),
    those separated leave, the rest are judged again at the larger level; Bonferroni judges
    every pair at alpha / m; "none" each at alpha (the former per-pair rule)."""
    policy = FinalPolicy(correction="none", confidence=0.95)
    at = {m: NormalDist().inv_cdf(1 - 0.05 / m) for m in (1, 2, 3)}  # the one-look levels
    z = [at[3] + 0.01, at[2] + 0.01, at[1] + 0.01]  # one clears 0.05/3, then 0.05/2, then 0.05
    info = [1.0, 1.0, 1.0]
    assert separations(policy, 4, 100, z, info) == [True, True, True]
    bonferroni = FinalPolicy(correction="none", family="bonferroni")
    assert separations(bonferroni, 4, 100, z, info) == [True, False, False]
    per_pair = FinalPolicy(correction="none", family="none")
    assert separations(per_pair, 4, 100, [at[1] - 0.01, *z[1:]], info) == [False, True, True]
    # the step stops where no pair clears its level: none clears 0.05 / 3 here
    assert separations(policy, 4, 100, [at[2], at[2], at[1]], info) == [False, False, False]


def test_a_reruns_share_of_the_error_halves_each_time() -> None:
    """The r-th final spends 2^-r of 1 - confidence: all of a competition's finals, however
    many reruns, at most 1 - confidence together; a smaller share asks a larger lead."""
    assert [rerun_share(n) for n in (1, 2, 3)] == [0.5, 0.25, 0.125]
    assert sum(rerun_share(n) for n in range(1, 40)) < 1.0
    with pytest.raises(ValueError, match="1 or more"):
        rerun_share(0)
    first, rerun = FinalPolicy(share=rerun_share(1)), FinalPolicy(share=rerun_share(2))
    assert first.alpha == pytest.approx(0.025) and rerun.alpha == pytest.approx(0.0125)
    information = 1 / 30.0**2
    assert rerun.boundary(8, 5000, information, rerun.alpha) > first.boundary(
        8, 5000, information, first.alpha
    )
    with pytest.raises(ValueError, match="share"):
        FinalPolicy(share=0.0)
    with pytest.raises(ValueError, match="family"):
        FinalPolicy(family="sidak")


def test_bridges_pair_second_neighbours_inside_a_run() -> None:
    names = ["a", "b", "c"]
    results = {(x, y): 5 for x, y in itertools.permutations(names, 2)}
    policy = FinalPolicy(bridges=True)
    state = assess_final(names, matrix_of(results, names), 30, policy)
    assert set(state.next_pairs) == {("a", "b"), ("b", "c"), ("a", "c")}
    assert len(state.next_pairs) == 3


def test_a_finalist_without_games_is_placed_and_played() -> None:
    names = ["a", "b"]
    matrix = matrix_of({("a", "b"): 20, ("b", "a"): 1}, names)
    state = assess_final(["a", "b", "late"], matrix, 21)
    assert not state.done
    row = {s.id: s for s in state.standings}
    assert row["late"].games == 0
    assert any("late" in pair for pair in state.next_pairs)


def test_one_finalist_is_done_at_once() -> None:
    state = assess_final(["solo"], None, 0)
    assert state.done and [s.place for s in state.standings] == [1]


def test_separation_z_uses_the_covariance_of_the_difference() -> None:
    covariance = np.array([[100.0, 80.0], [80.0, 100.0]])
    # Var(r0 - r1) = 100 + 100 - 160 = 40.
    assert separation_z([1510.0, 1500.0], covariance) == pytest.approx([10.0 / np.sqrt(40.0)])


def test_a_simulated_final_separates_well_spaced_finalists() -> None:
    truth = np.linspace(400.0, 0.0, 6)  # 80 Elo apart, best first
    names = [f"f{i}" for i in range(6)]
    rng = np.random.default_rng(5)
    matrix = ResultMatrix()
    codes = matrix.codes(names)
    index = {n: i for i, n in enumerate(names)}
    games = 0
    policy = FinalPolicy(max_games=5000, deals_per_round=4)
    state = assess_final(names, None, games, policy)
    while not state.done:
        for a, b in state.next_pairs:
            i, j = index[a], index[b]
            p = 1.0 / (1.0 + np.exp(-(truth[i] - truth[j]) / ELO_PER_NAT))
            wins = rng.random(2 * policy.deals_per_round) < p
            matrix.add_pairs(codes[np.where(wins, i, j)], codes[np.where(wins, j, i)])
            games += wins.size
        state = assess_final(names, matrix, games, policy)
    assert state.ties == 0 and games < 5000
    assert [s.id for s in state.standings] == names


def test_invalid_arguments_raise() -> None:
    with pytest.raises(ValueError, match="distinct"):
        assess_final(["a", "a"], None, 0)
    with pytest.raises(ValueError, match="games"):
        assess_final(["a", "b"], None, -1)
    with pytest.raises(ValueError, match="confidence"):
        FinalPolicy(confidence=1.0)
    with pytest.raises(ValueError, match="deals_per_round"):
        FinalPolicy(deals_per_round=0)


def test_round_deals_repeat_the_least_separated_pairs() -> None:
    names = ["a", "b", "c", "d"]
    # a, b and c close together; d far behind (separated).
    results = {("a", "b"): 10, ("b", "a"): 10, ("b", "c"): 12, ("c", "b"): 8}
    results.update({("c", "d"): 40, ("d", "c"): 1, ("a", "c"): 13, ("c", "a"): 7})
    matrix = matrix_of(results, names)
    plain = assess_final(names, matrix, 101, POCOCK)
    rows = plain.standings
    assert [row.id for row in rows][-1] == "d" and rows[2].separated_from_next
    lead = {(a.id, b.id): a.z for a, b in itertools.pairwise(rows)}
    assert plain.next_pairs == sorted(plain.next_pairs, key=lambda pair: lead[pair])
    assert len(plain.next_pairs) == 2
    wider = assess_final(
        names, matrix, 101, FinalPolicy(round_deals=5, deals_per_round=2, correction="pocock")
    )
    # ceil(5 / 2) = 3 entries: both pairs, then the less separated one again.
    assert wider.next_pairs == [*plain.next_pairs, plain.next_pairs[0]]
    with pytest.raises(ValueError, match="round_deals"):
        FinalPolicy(round_deals=-1)


def test_the_boundary_holds_the_confidence_over_every_look() -> None:
    """Equal players' z, looked at after every deal up to the cap, crosses the boundary
    (in either direction: the fitted order puts the leader first) at most at 1 - confidence;
    one look's quantile would be crossed most of the time."""
    rng = np.random.default_rng(11)
    cap = 1000
    games = np.arange(2, cap + 1, 2)
    lead = np.cumsum(rng.choice([-1, 1], size=(4000, cap)), axis=1)[:, 1::2]
    z = np.abs(lead) / np.sqrt(games)
    information = 0.25 / ELO_PER_NAT**2  # of one even game, about the rating difference
    crossed = {}
    for correction in ("mixture", "pocock", "none"):
        policy = FinalPolicy(max_games=cap, correction=correction)
        level = np.array([policy.boundary(2, int(g), g * information) for g in games])
        crossed[correction] = float((z >= level).any(axis=1).mean())
    assert FinalPolicy().correction == "mixture"
    assert crossed["mixture"] <= 0.05 and crossed["pocock"] <= 0.05
    assert crossed["none"] > 0.5


def test_equal_finalists_are_separated_at_most_at_the_stated_rate() -> None:
    names = ["a", "b"]
    policy = FinalPolicy(max_games=120)
    separated = 0
    seeds = 60
    for seed in range(seeds):
        rng = np.random.default_rng(seed)
        matrix = ResultMatrix()
        codes = matrix.codes(names)
        games = 0
        state = assess_final(names, None, games, policy)
        while not state.done:
            wins = rng.random(2 * len(state.next_pairs)) < 0.5
            matrix.add_pairs(codes[np.where(wins, 0, 1)], codes[np.where(wins, 1, 0)])
            games += wins.size
            state = assess_final(names, matrix, games, policy)
        separated += state.ties == 0
    assert separated <= 0.05 * seeds


def test_the_mixture_asks_more_of_few_games() -> None:
    """The mixture's boundary is highest with little information and lowest near the
    information its prior is tuned to (the cap's share of a pair); the constant one is flat."""
    information = 0.25 / ELO_PER_NAT**2
    mixture, pocock = FinalPolicy(), POCOCK
    few, typical = (mixture.boundary(8, 0, n * information) for n in (40, 1500))
    assert few > pocock.boundary(8, 0) > typical > mixture.quantile
    assert pocock.boundary(8, 0) == pocock.boundary(8, 5000)
