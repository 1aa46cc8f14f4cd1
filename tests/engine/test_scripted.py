"""Scripted deals: RULES.md's worked examples and each subtle rule, with exact events and scores.

Each test deals explicit hands (``Deal.complete``: the boneyard continues with the rest of
the set in id order) under a preset or a small custom rule set, plays a short script and
checks every event. Custom rule sets keep scripts short; each says what it changes.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from arena.engine.deal import Deal, deal_round, lead_draw_winner
from arena.engine.events import Draw, Event, Pass, Play, RoundResult, Termination
from arena.engine.game import Game
from arena.engine.round import Round, fives_points, round_points
from arena.engine.rules import Rules, Scoring, find_rules
from arena.engine.tiles import Move, Tile, tile_set
from arena.errors import DealError, IllegalMoveError, RulesError

BLOCKED, DOMINO, TARGET = Termination.BLOCKED, Termination.DOMINO, Termination.TARGET


def variant(base: str, **changes: Any) -> Rules:
    """A custom rule set: preset ``base``'s parameters with ``changes`` (the hand-size and
    reserve tables are cut down to the new ``players``)."""
    params = find_rules(base).params()
    if "players" in changes:
        for key in ("hand_size", "reserve"):
            params[key] = {n: v for n, v in params[key].items() if int(n) in changes["players"]}
    return Rules.from_params(f"{base}-script", params | changes)


def deal_of(
    rules: Rules, hands: list[str], boneyard: str = "", lead_draw: str | None = None
) -> Deal:
    """A deal of hands written as ``"6-6 5-4"``; the boneyard starts with ``boneyard``."""
    return Deal.complete(
        rules,
        [hand.split() for hand in hands],
        boneyard.split(),
        None if lead_draw is None else lead_draw.split(),
    )


def start(
    rules: Rules,
    hands: list[str],
    boneyard: str = "",
    lead_draw: str | None = None,
    *,
    teams: bool = False,
    scores: list[int] | None = None,
) -> Round:
    """A round of :func:`deal_of`."""
    return Round(rules, deal_of(rules, hands, boneyard, lead_draw), teams=teams, scores=scores)


def play(round_: Round | Game, *moves: str) -> None:
    """Apply moves written as ``"6-4L"``."""
    for move in moves:
        round_.apply(Move.parse(move))


def plays(seat: int, move: str, points: int = 0) -> Play:
    """The event of ``seat`` playing ``move``."""
    return Play(seat, Move.parse(move), points)


def draws(seat: int, tiles: str) -> list[Event]:
    """The events of ``seat`` drawing ``tiles`` in order."""
    return [Draw(seat, Tile.parse(tile)) for tile in tiles.split()]


def legal(round_: Round) -> list[str]:
    """The legal moves in notation."""
    return [str(move) for move in round_.legal_moves()]


# --- RULES.md worked examples: the scoring formulas ------------------------------------


@pytest.mark.parametrize(
    ("scoring", "pips", "winner", "points"),
    [
        # block (seed 001): hands 4, 9, 3, 12: the 3 wins (4 + 9 + 12) - 3 = 22.
        (Scoring.OPPONENTS_MINUS_OWN, [4, 9, 3, 12], 2, 22),
        # giant (seed 000): the same hands score 1 + 6 + 9 = 16 ...
        (Scoring.POSITIVE_DIFFERENCES, [4, 9, 3, 12], 2, 16),
        # ... and hands 0, 9, 3, 12 score 9 + 3 + 12 = 24.
        (Scoring.POSITIVE_DIFFERENCES, [0, 9, 3, 12], 0, 24),
        # block-and-draw (seed 002): winner 10, others 14 and 15: 4 + 5 = 9.
        (Scoring.DIFFERENCES, [10, 14, 15], 0, 9),
        # three-minute (seed 004): 30 - 5 = 25.
        (Scoring.OPPONENTS_MINUS_OWN, [5, 30], 0, 25),
        # three-minute (seed 004): a loser holding 5-2, 1-0, 1-1 gives the winner 10.
        (Scoring.OPPONENTS_MINUS_OWN, [0, 10], 0, 10),
        # wooden: no points, one round won.
        (Scoring.ROUND_WINS, [3, 9], 0, 1),
    ],
)
def test_round_points_worked_examples(
    scoring: Scoring, pips: list[int], winner: int, points: int
) -> None:
    """round_points gives the worked examples of RULES.md and the seeds."""
    assert round_points(scoring, winner, pips) == points


@pytest.mark.parametrize(("count", "points"), [(5, 1), (7, 1), (8, 2), (12, 2), (18, 4)])
def test_muggins_end_of_round_rounding(count: int, points: int) -> None:
    """Muggins end of round: (n + 2) // 5; seed 001: 5->1, 7->1, 8->2, 12->2, 18->4."""
    assert round_points(Scoring.ROUNDED_FIVES, 0, [0, count]) == points
    assert round_points(Scoring.ROUNDED_FIVES, 1, [count - 3, 2, 3]) == points


@pytest.mark.parametrize(
    ("count", "points"), [(5, 1), (10, 2), (15, 3), (20, 4), (0, 0), (7, 0), (12, 0), (16, 0)]
)
def test_muggins_in_play_fives(count: int, points: int) -> None:
    """Muggins in play: a count that is a positive multiple of 5 scores count / 5."""
    assert fives_points(count) == points


# --- the same examples in real rounds ---------------------------------------------------

# Four hands of two tiles: seat 1 leads 6-6 and nobody holds another 6, so the round
# blocks at once with 4, 9, 3 and 12 pips in hand (block: no drawing).
FOUR_NINE_THREE_TWELVE = ["3-0 1-0", "6-6 5-4", "2-1 0-0", "5-5 1-1"]
# Seat 0 leads 6-6 and keeps 0-0: 0, 9, 3 and 12 pips.
ZERO_NINE_THREE_TWELVE = ["6-6 0-0", "2-0 5-2", "1-1 1-0", "4-4 4-0"]


@pytest.mark.parametrize(
    ("base", "hands", "pips", "winner", "points"),
    [
        ("block", FOUR_NINE_THREE_TWELVE, (4, 9, 3, 12), 2, 22),
        ("giant", FOUR_NINE_THREE_TWELVE, (4, 9, 3, 12), 2, 16),
        ("giant", ZERO_NINE_THREE_TWELVE, (0, 9, 3, 12), 0, 24),
    ],
)
def test_worked_examples_in_blocked_rounds(
    base: str, hands: list[str], pips: tuple[int, ...], winner: int, points: int
) -> None:
    """Seed 001 / seed 000: blocked at once, the lowest hand wins and scores as RULES.md says.

    Custom rule sets: 4 players with 2 tiles each, and no drawing (so the round blocks
    at the lead)."""
    rules = variant(base, players=[4], hand_size=2, draw_limit=0)
    round_ = start(rules, hands)
    leader = round_.leader
    play(round_, "6-6")
    assert round_.events == [plays(leader, "6-6")]
    expected = [0, 0, 0, 0]
    expected[winner] = points
    assert round_.result == RoundResult(BLOCKED, winner, None, pips, tuple(expected))
    assert round_.scores == tuple(expected)


def test_block_and_draw_worked_example() -> None:
    """Seed 002: winner 10, others 14 and 15 -> 9 (Σ (opponent - own)).

    Custom rule set: 3 players with 2 tiles each, no drawing."""
    rules = variant("block-and-draw", players=[3], hand_size=2, draw_limit=0)
    round_ = start(rules, ["6-6 5-5", "5-4 5-0", "5-3 4-3"])
    play(round_, "6-6")
    assert round_.result == RoundResult(BLOCKED, 0, None, (10, 14, 15), (9, 0, 0))


def test_three_minute_blocked_worked_example() -> None:
    """Seed 004: the fewest points wins and scores the others' total minus its own: 30 - 5 = 25.

    Custom rule set: 2 players with 4 tiles each, no drawing."""
    rules = variant("three-minute", players=[2], hand_size=4, draw_limit=0)
    round_ = start(rules, ["6-6 0-0 1-0 2-2", "5-5 5-4 4-4 2-1"])
    play(round_, "6-6")
    assert round_.result == RoundResult(BLOCKED, 0, None, (5, 30), (25, 0))


def test_three_minute_domino_worked_example() -> None:
    """Seed 004: going out against [5|2], [1|0], [1|1] scores 5+2+1+0+1+1 = 10.

    Custom rule set: 2 players with 3 tiles each, no drawing (seat 1 passes)."""
    rules = variant("three-minute", players=[2], hand_size=3, draw_limit=0)
    round_ = start(rules, ["6-6 6-4 4-3", "5-2 1-0 1-1"])
    play(round_, "6-6", "6-4R", "4-3R")
    assert round_.events == [
        plays(0, "6-6"),
        Pass(1),
        plays(0, "6-4R"),
        Pass(1),
        plays(0, "4-3R"),
    ]
    assert round_.result == RoundResult(DOMINO, 0, 0, (0, 10), (10, 0))


@pytest.mark.parametrize(
    ("loser_hand", "points"),
    [("3-2 0-0", 1), ("4-3 0-0", 1), ("5-3 0-0", 2), ("5-5 1-1", 2), ("5-5 4-4", 4)],
)
def test_muggins_rounding_after_a_domino(loser_hand: str, points: int) -> None:
    """Muggins: the rounding of the opponents' count applies after a domino too
    (5->1, 7->1, 8->2, 12->2, 18->4).

    Custom rule set: 2 tiles each, no drawing. The counts in play are 12 and 12: no fives."""
    rules = variant("muggins", players=[2], hand_size=2, draw_limit=0, team_play=False)
    round_ = start(rules, ["6-6 6-0", loser_hand])
    play(round_, "6-6", "6-0R")
    assert round_.events == [plays(0, "6-6"), Pass(1), plays(0, "6-0R")]
    assert round_.result is not None
    assert round_.result.termination is DOMINO and round_.result.winner == 0
    assert round_.result.points == (points, 0) == round_.scores


# --- muggins in play --------------------------------------------------------------------


def test_muggins_double_on_an_end_counts_both_halves() -> None:
    """Seed 001: open ends 6, 6 (the double 6) and 3: count 15, 3 points."""
    round_ = start(find_rules("muggins"), ["6-6 0-0 1-0 1-1 2-0", "6-3 2-1 2-2 3-0 3-1"])
    play(round_, "6-6", "6-3R")
    # The lead 6-6 alone counts 12 (no points); then 6 + 6 + 3 = 15.
    assert round_.events[:2] == [plays(0, "6-6"), plays(1, "6-3R", 3)]
    assert round_.scores == (0, 3)


def test_muggins_ends_one_and_four_score_one() -> None:
    """Seed 001: open ends 1 and 4: count 5, 1 point."""
    round_ = start(find_rules("muggins"), ["6-6 6-1 0-0 1-0 1-1", "6-4 2-0 2-1 2-2 3-0"])
    play(round_, "6-6", "6-4R", "6-1L")
    # 6-6 alone: 12; then the double 6 (12) and 4: 16; then 1 and 4: 5.
    assert round_.events == [plays(0, "6-6"), plays(1, "6-4R"), plays(0, "6-1L", 1)]
    assert round_.ends == (1, 4)
    assert round_.scores == (1, 0)


def test_muggins_lead_five_five_counts_ten() -> None:
    """RULES.md: while the layout is a single tile, the count is its pip total (5-5: 10, 2 points);
    a double no longer on an end is not counted (seed 001)."""
    round_ = start(find_rules("muggins"), ["5-5 5-3 1-1 2-0 2-1", "5-0 4-0 4-1 2-2 3-0"], "6-6")
    assert round_.leader == 0 and legal(round_) == ["5-5"]
    play(round_, "5-5")
    assert round_.events == [plays(0, "5-5", 2)]
    play(round_, "5-0R")  # the double 5 (10) and 0: 10, 2 points
    play(round_, "5-3L")  # 3 and 0: the double 5 is inside the line now
    assert round_.events[1:] == [plays(1, "5-0R", 2), plays(0, "5-3L")]
    assert round_.scores == (2, 2)


def test_muggins_reaching_61_mid_round_ends_at_once() -> None:
    """Muggins: the play that reaches 61 ends the game at once; nothing more is scored."""
    round_ = start(
        find_rules("muggins"), ["5-5 5-3 1-1 2-0 2-1", "5-0 4-0 4-1 2-2 3-0"], "6-6", scores=[59, 0]
    )
    play(round_, "5-5")
    assert round_.is_terminal() and not round_.legal_moves() and round_.seat is None
    assert round_.events == [plays(0, "5-5", 2)]
    assert round_.result == RoundResult(TARGET, 0, 0, (15, 21), (2, 0))
    assert round_.scores == (61, 0)
    with pytest.raises(IllegalMoveError, match="is over"):
        play(round_, "5-0R")


def test_muggins_target_on_the_last_tile_scores_no_domino_points() -> None:
    """Muggins: a last tile that reaches the target ends the game by TARGET; the opponent's
    hand (18 pips: 4 points) is not scored.

    Custom rule set: 2 tiles each, no drawing."""
    rules = variant("muggins", players=[2], hand_size=2, draw_limit=0, team_play=False)
    round_ = start(rules, ["6-6 6-3", "5-5 4-4"], scores=[58, 0])
    play(round_, "6-6", "6-3R")
    assert round_.events == [plays(0, "6-6"), Pass(1), plays(0, "6-3R", 3)]
    assert round_.result == RoundResult(TARGET, 0, 0, (0, 18), (3, 0))
    assert round_.scores == (61, 0)


def test_muggins_game_ends_mid_round() -> None:
    """In a Game, the play that reaches the target ends it: TARGET, and no further round.

    Preset muggins with the target overridden to 3."""
    rules = find_rules("muggins", target=3)
    deal = deal_of(rules, ["6-6 0-0 1-0 1-1 2-0", "6-3 2-1 2-2 3-0 3-1"])
    game = Game(rules, 2, seed=1, deals=[deal])
    play(game, "6-6", "6-3R")
    assert game.is_terminal() and game.seat is None and not game.legal_moves()
    outcome = game.outcome()
    assert outcome is not None
    assert (outcome.termination, outcome.winners, outcome.scores) == (TARGET, (1,), (0, 3))
    assert len(game.rounds) == 1 and game.explicit == [True]
    assert game.round.result == RoundResult(TARGET, 1, 1, (5, 14), (0, 3))


# --- muggins teams ----------------------------------------------------------------------

# Four players, no drawing (custom), so that the round blocks at the lead 6-6: pips in hand
# 16, 8, 26, 42. Seat 1 holds the fewest, but its team (1 + 3) holds 50 against 42.
TEAM_BLOCK = [
    "6-6 2-2 3-0 3-1 3-2",
    "0-0 1-0 1-1 2-0 2-1",
    "3-3 4-0 4-1 5-0 5-1",
    "5-5 5-4 5-3 5-2 4-4",
]
# Teams tied at 48 pips: the lowest single tile held by any member (seat 1's 0-0) wins,
# though seat 0 alone holds the fewest pips (14).
TEAM_TIE = [
    "6-6 1-0 2-2 3-1 5-0",
    "0-0 2-1 3-0 5-1 5-3",
    "2-0 3-2 4-4 5-4 5-5",
    "3-3 4-0 4-1 4-2 5-2",
]


def test_muggins_teams_blocked_lower_combined_count_wins() -> None:
    """Muggins teams: in a blocked round the team with the lower combined count wins and scores
    its opponents' combined count rounded: (50 + 2) // 5 = 10."""
    rules = variant("muggins", draw_limit=0)
    round_ = start(rules, TEAM_BLOCK, teams=True)
    play(round_, "6-6")
    assert round_.result == RoundResult(BLOCKED, 0, None, (16, 8, 26, 42), (10, 0))
    assert round_.scores == (10, 0)
    # Played individually, the same deal is won by seat 1: (16 + 26 + 42 + 2) // 5 = 17.
    alone = start(rules, TEAM_BLOCK)
    play(alone, "6-6")
    assert alone.result == RoundResult(BLOCKED, 1, None, (16, 8, 26, 42), (0, 17, 0, 0))


def test_muggins_teams_tie_broken_by_lowest_tile_of_any_member() -> None:
    """Muggins teams: combined counts tied, the team holding the lowest single tile wins."""
    rules = variant("muggins", draw_limit=0)
    round_ = start(rules, TEAM_TIE, teams=True)
    play(round_, "6-6")
    assert round_.result == RoundResult(BLOCKED, 1, None, (14, 20, 34, 28), (0, 10))


def test_muggins_team_of_the_player_who_goes_out_wins() -> None:
    """Muggins teams: the team of the player who goes out wins, whatever its partner holds
    (15 pips, against 2 + 1 for the other team), and scores (3 + 2) // 5 = 1.

    Custom rule set: 4 players with 2 tiles each, no drawing."""
    rules = variant("muggins", players=[4], hand_size=2, draw_limit=0)
    hands = ["6-6 2-0", "6-5 5-2", "0-0 1-0", "4-4 4-3"]
    round_ = start(rules, hands, teams=True)
    play(round_, "6-6", "6-5R", "5-2R")
    # Counts: 12, then 12 + 5 = 17, then 12 + 2 = 14: no fives.
    assert round_.events == [
        plays(0, "6-6"),
        plays(1, "6-5R"),
        Pass(2),
        Pass(3),
        Pass(0),
        plays(1, "5-2R"),
    ]
    assert round_.result == RoundResult(DOMINO, 1, 1, (2, 0, 1, 15), (0, 1))
    # Individually, seat 1 scores everyone else's pips: (2 + 1 + 15 + 2) // 5 = 4.
    alone = start(rules, hands)
    play(alone, "6-6", "6-5R", "5-2R")
    assert alone.result == RoundResult(DOMINO, 1, 1, (2, 0, 1, 15), (0, 4, 0, 0))


def test_muggins_team_game() -> None:
    """Muggins teams in a Game: scores per team, both partners win."""
    rules = find_rules("muggins", target=10)
    deal = deal_of(rules, TEAM_BLOCK)
    game = Game(rules, 4, teams=True, seed=3, deals=[deal])
    assert game.scores == (0, 0) and game.sides == (0, 1, 0, 1)
    while not game.is_terminal():
        game.apply(game.legal_moves()[0])
    outcome = game.outcome()
    assert outcome is not None and len(outcome.scores) == 2
    winning_team = outcome.winners[0] % 2
    assert outcome.winners == (winning_team, winning_team + 2)
    assert outcome.scores[winning_team] >= 10 > outcome.scores[1 - winning_team]


# --- drawing ----------------------------------------------------------------------------


def test_draw_two_players_keep_two_tiles_in_the_boneyard() -> None:
    """Draw (seed 001): with 2 players the last 2 tiles of the boneyard may not be drawn,
    even when they would play."""
    rules = find_rules("draw")
    seat1 = "0-0 1-0 1-1 2-0 2-1 2-2 3-0"
    top = "3-1 3-2 3-3 4-0 4-1 4-2 4-3 4-4 5-0 5-1 5-2 5-3"  # 12 tiles, no 6
    round_ = start(rules, ["6-6 6-5 6-4 6-3 6-2 5-4 5-5", seat1], top)
    assert len(round_.boneyard) == 14 and round_.drawable == 12
    play(round_, "6-6")
    assert round_.events == [plays(0, "6-6"), *draws(1, top), Pass(1)]
    assert round_.boneyard == (Tile.parse("6-0"), Tile.parse("6-1"))
    assert round_.drawable == 0 and round_.seat == 0
    assert round_.observation(0).boneyard_size == 2 and round_.observation(0).drawable == 0


@pytest.mark.parametrize("players", [3, 4])
def test_draw_three_or_four_players_keep_one_tile(players: int) -> None:
    """Draw (seed 001): with 3 or 4 players the very last tile may not be drawn."""
    rules = find_rules("draw")
    hands = ["6-6 6-5 6-4 6-3 6-2", "0-0 1-0 1-1 2-0 2-1", "6-1 2-2 3-0 3-1 3-2"]
    hands += ["3-3 4-0 4-1 4-2 4-3"][: players - 3]
    round_ = start(rules, hands)
    # The boneyard holds the other tiles without a 6, then 6-0 (the rest in id order).
    *no_six, last = round_.boneyard
    assert last == Tile.parse("6-0") and not any(t.matches(6) for t in no_six)
    assert round_.drawable == len(no_six) == {3: 12, 4: 7}[players]
    play(round_, "6-6")
    assert round_.events == [plays(0, "6-6"), *draws(1, " ".join(map(str, no_six))), Pass(1)]
    assert round_.boneyard == (Tile.parse("6-0"),)
    assert round_.drawable == 0 and round_.seat == 2 and legal(round_) == ["6-1L", "6-1R"]


def test_block_and_draw_three_draws_then_pass() -> None:
    """Block-and-draw (seed 002): a player who cannot play draws up to 3 tiles; if the third
    cannot be played the turn passes."""
    rules = find_rules("block-and-draw")
    round_ = start(rules, ["6-6 6-5 6-4 6-3 6-2 6-1 6-0", "0-0 1-0 1-1 2-0 2-1 2-2 3-0"])
    play(round_, "6-6")
    assert round_.events == [plays(0, "6-6"), *draws(1, "3-1 3-2 3-3"), Pass(1)]
    assert round_.seat == 0 and round_.drawable == 11
    play(round_, "6-5R")
    # Seat 1 draws again: 4-0, 4-1, 4-2 do not match 6 or 5.
    assert round_.events[5:] == [plays(0, "6-5R"), *draws(1, "4-0 4-1 4-2"), Pass(1)]


def test_block_and_draw_third_drawn_tile_plays() -> None:
    """Block-and-draw: if a drawn tile plays it must be played, the third one too; the
    choice is then among the moves of the new hand."""
    rules = find_rules("block-and-draw")
    round_ = start(
        rules, ["6-6 6-5 6-4 6-3 6-2 5-5 5-4", "0-0 1-0 1-1 2-0 2-1 2-2 3-0"], "3-1 3-2 6-1"
    )
    play(round_, "6-6")
    assert round_.events == [plays(0, "6-6"), *draws(1, "3-1 3-2 6-1")]
    assert round_.seat == 1 and legal(round_) == ["6-1L", "6-1R"]
    play(round_, "6-1L")
    assert round_.ends == (1, 6)


def test_block_and_draw_unlimited_variation() -> None:
    """Block-and-draw with draw_limit None (seed 002's variation): draw until playable."""
    rules = find_rules("block-and-draw", draw_limit=None)
    round_ = start(
        rules,
        ["6-6 6-5 6-4 6-3 6-2 5-5 5-4", "0-0 1-0 1-1 2-0 2-1 2-2 3-0"],
        "3-1 3-2 3-3 4-0 4-1 6-1",
    )
    play(round_, "6-6")
    assert round_.events == [plays(0, "6-6"), *draws(1, "3-1 3-2 3-3 4-0 4-1 6-1")]
    assert legal(round_) == ["6-1L", "6-1R"]


def test_three_minute_draws_until_the_boneyard_is_empty_then_passes() -> None:
    """Three-minute (seed 004): no play, draw until playable or the boneyard is empty, then
    pass; the next seat, with nothing left to draw, passes at once."""
    rules = find_rules("three-minute")
    hands = [
        "6-6 6-5 6-4 6-3 6-2 6-1 6-0",
        "0-0 1-0 1-1 2-0 2-1 2-2 3-0",
        "3-1 3-2 3-3 4-0 4-1 4-2 4-3",
    ]
    round_ = start(rules, hands)
    play(round_, "6-6")
    bone = "4-4 5-0 5-1 5-2 5-3 5-4 5-5"
    assert round_.events == [plays(0, "6-6"), *draws(1, bone), Pass(1), Pass(2)]
    assert round_.boneyard == () and round_.seat == 0


def test_giant_draws_until_the_boneyard_is_empty_then_passes() -> None:
    """Giant (seed 000): draw one at a time until a tile plays or the boneyard is empty."""
    rules = find_rules("giant")
    hands = ["6-6 6-5 6-4 6-3 6-2", "0-0 1-0 1-1 2-0 2-1", "6-1 6-0 2-2 3-0 3-1"]
    round_ = start(rules, hands)
    play(round_, "6-6")
    bone = "3-2 3-3 4-0 4-1 4-2 4-3 4-4 5-0 5-1 5-2 5-3 5-4 5-5"
    assert round_.events == [plays(0, "6-6"), *draws(1, bone), Pass(1)]
    assert round_.boneyard == () and round_.seat == 2


def test_wooden_draws_until_the_boneyard_is_empty_then_passes() -> None:
    """Wooden (seed 003): draw until playable or the boneyard is empty."""
    rules = find_rules("wooden")
    hands = ["0-0 1-0 2-0 3-0 4-0 5-0 6-0", "1-1 2-1 2-2 3-1 3-2 3-3 4-1"]
    round_ = start(rules, hands, lead_draw="6-6 5-5")
    assert round_.leader == 0
    play(round_, "0-0")
    bone = "4-2 4-3 4-4 5-1 5-2 5-3 5-4 5-5 6-1 6-2 6-3 6-4 6-5 6-6"
    assert round_.events == [plays(0, "0-0"), *draws(1, bone), Pass(1)]
    assert round_.boneyard == () and legal(round_)[:2] == ["1-0L", "1-0R"]


def test_three_minute_four_players_leave_an_empty_boneyard() -> None:
    """Three-minute: 7 tiles each for 4 players deals all 28 tiles."""
    rules = find_rules("three-minute")
    for seed in range(5):
        deal, redeals = deal_round(rules, 4, random.Random(seed))
        assert deal.boneyard == () and not redeals
        round_ = Round(rules, deal)
        assert round_.drawable == 0 and round_.observation(0).boneyard_size == 0


# --- blocked rounds ----------------------------------------------------------------------


#: Block, 2 players: 6-6 leads and every other 6 is in the boneyard.
BLOCKED_AT_LEAD = ["6-6 0-0 1-0 1-1 2-0 2-1 2-2", "3-0 3-1 3-2 3-3 4-0 4-1 4-2"]


def test_blocked_round_ends_at_once() -> None:
    """RULES.md: the moment no seat can play and none may draw, the round ends; no pass is
    played out or recorded."""
    rules = find_rules("block")
    round_ = start(rules, BLOCKED_AT_LEAD)
    play(round_, "6-6")
    assert round_.events == [plays(0, "6-6")]
    # 12 pips against 33: seat 0 wins 33 - 12 = 21.
    assert round_.result == RoundResult(BLOCKED, 0, None, (12, 33), (21, 0))


def test_blocked_right_after_a_draw_empties_the_boneyard() -> None:
    """A draw that empties the boneyard and does not play blocks the round: no pass follows.
    Seat 1 goes on holding only 0-0 (0 pips) and wins; giant scores max(0, 3 - 0) = 3.

    Custom rule set: giant on a double-three set, 2 players with 4 tiles each."""
    rules = variant("giant", max_pip=3, players=[2], hand_size=4)
    round_ = start(rules, ["1-0 3-0 3-1 2-0", "0-0 3-2 2-1 2-2"], "3-3 1-1")
    play(round_, "2-2", "2-0R", "3-2L", "3-1L", "2-1L", "3-0R")
    assert round_.events[-2:] == [plays(0, "3-0R"), *draws(1, "3-3")]
    play(round_, "3-3R")
    assert round_.events[-2:] == [plays(1, "3-3R"), *draws(0, "1-1")]
    assert round_.ends == (2, 3) and round_.boneyard == ()
    assert round_.result == RoundResult(BLOCKED, 1, None, (3, 0), (0, 3))


def test_blocked_tie_broken_by_lowest_single_tile() -> None:
    """Seed 001 tie-break: tied at the lowest count, the player holding the single tile with the
    lowest total wins: seat 2's 0-0 beats seat 0, both at 18; it scores (18 + 30) - 18 = 30."""
    rules = find_rules("block")
    hands = ["6-6 2-1 3-1 4-1 5-1", "2-2 4-0 4-2 4-3 5-4", "0-0 2-0 3-0 3-3 5-2"]
    round_ = start(rules, hands)
    play(round_, "6-6")
    assert round_.result == RoundResult(BLOCKED, 2, None, (18, 30, 18), (0, 0, 30))


def test_tie_break_winner_may_score_nothing() -> None:
    """Two players tied at 32: 0-0 wins the tie-break and scores 32 - 32 = 0."""
    rules = find_rules("block")
    hands = ["6-6 2-2 3-2 4-0 4-1 4-4 5-1", "0-0 2-0 3-1 4-2 4-3 5-0 5-3"]
    round_ = start(rules, hands)
    play(round_, "6-6")
    assert round_.result == RoundResult(BLOCKED, 1, None, (32, 32), (0, 0))


def test_drawn_round_scores_nothing() -> None:
    """Tied pips (34) and tied lowest tiles (2-0 and 1-1, 2 pips each): the round is drawn,
    no one scores."""
    rules = find_rules("block")
    hands = ["6-6 2-0 3-2 4-2 4-3 5-0 5-4", "1-1 2-1 2-2 3-3 4-0 4-4 5-2"]
    round_ = start(rules, hands)
    play(round_, "6-6")
    assert round_.result == RoundResult(BLOCKED, None, None, (34, 34), (0, 0))
    assert round_.scores == (0, 0)


def test_going_out_beats_an_opponent_holding_only_double_blank() -> None:
    """RULES.md: a player who goes out always wins the round, even against 0-0 alone.

    Custom rule set: block on a double-two set, 2 tiles each."""
    rules = variant("block", max_pip=2, players=[2], hand_size=2)
    round_ = start(rules, ["2-2 2-1", "0-0 2-0"])
    play(round_, "2-2", "2-0R", "2-1L")
    assert round_.hand(1) == (Tile.parse("0-0"),)
    assert round_.result == RoundResult(DOMINO, 0, 0, (0, 0), (0, 0))


# --- the lead ---------------------------------------------------------------------------


def test_highest_double_leads_and_must_be_played() -> None:
    """RULES.md: the holder of the highest double in any hand leads that double."""
    rules = find_rules("block")
    round_ = start(rules, ["5-5 0-0 1-0 1-1 2-0", "2-1 2-2 3-0 3-1 3-2", "6-6 3-3 4-0 4-1 4-2"])
    assert round_.leader == 2 == round_.seat
    assert legal(round_) == ["6-6"]
    for wrong in ("5-5", "3-3", "4-0", "6-6L"):
        with pytest.raises(IllegalMoveError, match=f"illegal move {wrong} .*this is the lead"):
            play(round_, wrong)
    play(round_, "6-6")
    assert round_.events == [plays(2, "6-6")]


def test_apply_refuses_what_is_not_a_move() -> None:
    """apply() takes a Move; anything else is an illegal move, not a crash."""
    round_ = start(find_rules("block"), BLOCKED_AT_LEAD)
    for wrong in ("6-6", None, 42):
        with pytest.raises(IllegalMoveError, match=f"illegal move {wrong} for seat 0"):
            round_.apply(wrong)  # type: ignore[arg-type]
    assert not round_.events and list(round_.legal_moves()) == [Move.parse("6-6")]


def test_highest_double_in_hand_leads_when_higher_ones_are_in_the_boneyard() -> None:
    """The highest double *in any hand* leads: 6-6 and 5-5 in the boneyard, 4-4 leads."""
    rules = find_rules("draw")
    round_ = start(rules, ["0-0 1-0 1-1 2-0 2-1 2-2 3-0", "4-4 3-1 3-2 3-3 4-0 4-1 4-2"], "6-6 5-5")
    assert round_.leader == 1 and legal(round_) == ["4-4"]


def test_no_double_in_any_hand_means_a_redeal() -> None:
    """RULES.md: if no hand holds a double, all tiles are reshuffled and redealt (every round).

    Custom rule set: 2 tiles each, so that about 3 deals in 10 hold no double."""
    rules = variant("block", players=[2], hand_size=2)
    seen = 0
    for seed in range(40):
        game = Game(rules, 2, seed=seed)
        deal, redeals = deal_round(rules, 2, random.Random(seed))
        assert list(game.redeals[0]) == redeals and game.round.deal == deal
        assert any(t.is_double for hand in deal.hands for t in hand)
        for thrown in redeals:
            assert not any(t.is_double for hand in thrown.hands for t in hand)
            with pytest.raises(
                DealError, match="no hand holds a double: this deal must be redealt"
            ):
                Round(rules, thrown)
        seen += len(redeals)
    assert seen >= 5


def test_no_double_is_fine_under_draw_for_lead() -> None:
    """Wooden draws for the lead, so a deal without doubles stands."""
    rules = find_rules("wooden")
    hands = ["1-0 2-0 3-0 4-0 5-0 6-0 2-1", "3-1 4-1 5-1 6-1 3-2 4-2 5-2"]
    round_ = start(rules, hands, lead_draw="0-0 6-5")
    assert round_.leader == 1
    for seed in range(30):
        assert not deal_round(rules, 2, random.Random(seed))[1]


@pytest.mark.parametrize(
    ("lead_draw", "leader"),
    [
        ("6-6 5-5", 0),
        ("0-0 1-0 6-6", 2),
        ("6-0 4-3", 1),  # 7 pips beat 6
        ("5-4 6-3", 1),  # 9 each: the larger half (6) wins
        ("4-4 5-3 6-2", 2),  # 8 each: 6 is the largest half
    ],
)
def test_wooden_draw_for_lead(lead_draw: str, leader: int) -> None:
    """Wooden (seed 003): the highest drawn tile leads: the greatest pip total, ties by the
    larger half."""
    tiles = [Tile.parse(t) for t in lead_draw.split()]
    assert lead_draw_winner(tiles) == leader
    rules = find_rules("wooden")
    players = len(tiles)
    size = rules.hand_size(players)
    hands = [tile_set(6)[seat * size : (seat + 1) * size] for seat in range(players)]
    round_ = Round(rules, Deal.complete(rules, hands, lead_draw=tiles))
    assert round_.leader == leader == round_.seat


def test_wooden_leader_may_lead_any_tile() -> None:
    """Wooden: the leader places any tile of its hand (a real decision)."""
    rules = find_rules("wooden")
    round_ = start(
        rules, ["6-6 6-5 1-0 2-0 3-0 4-0 5-0", "1-1 2-1 2-2 3-1 3-2 3-3 4-1"], lead_draw="0-0 1-0"
    )
    assert round_.leader == 1
    assert legal(round_) == ["1-1", "2-1", "2-2", "3-1", "3-2", "3-3", "4-1"]
    play(round_, "3-1")
    assert round_.ends == (3, 1)


# --- games ----------------------------------------------------------------------------

# Custom wooden: double-four set, 2 tiles each, no drawing, so each round is a short script.
WOODEN_MINI: dict[str, Any] = {"max_pip": 4, "players": [2], "hand_size": 2, "draw_limit": 0}


def test_wooden_best_of_three() -> None:
    """Wooden: the first to win 2 rounds wins; a drawn round counts for no one, so the game
    goes on (here: seat 0 wins, draw, seat 0 wins: 3 rounds, 2-0)."""
    rules = variant("wooden", **WOODEN_MINI)
    deals = [
        # Seat 0 leads 4-4, seat 1 cannot play, seat 0 goes out with 4-3.
        deal_of(rules, ["4-4 4-3", "1-0 1-1"], lead_draw="4-4 0-0"),
        # 4-4, 4-3: nobody can play; 1-1 against 2-0, tied on both counts: drawn.
        deal_of(rules, ["4-4 1-1", "4-3 2-0"], lead_draw="4-4 0-0"),
        # Seat 1 leads 4-4 and is blocked at once with 3-3 (6) against 1-0 + 2-2 (5).
        deal_of(rules, ["1-0 2-2", "4-4 3-3"], lead_draw="0-0 4-4"),
    ]
    game = Game(rules, 2, seed=5, deals=deals)
    play(game, "4-4", "4-3R")
    assert game.rounds[0].result == RoundResult(DOMINO, 0, 0, (0, 3), (1, 0))
    assert game.scores == (1, 0) and not game.is_terminal()
    play(game, "4-4", "4-3R")
    assert game.rounds[1].result == RoundResult(BLOCKED, None, None, (2, 2), (0, 0))
    assert game.scores == (1, 0) and not game.is_terminal()
    assert game.round.leader == 1
    play(game, "4-4")
    assert game.rounds[2].result == RoundResult(BLOCKED, 0, None, (5, 6), (1, 0))
    outcome = game.outcome()
    assert outcome is not None
    assert (outcome.termination, outcome.winners, outcome.scores) == (TARGET, (0,), (2, 0))
    assert len(game.rounds) == 3 and game.explicit == [True, True, True]


def test_points_game_ends_after_the_round_that_reaches_the_target() -> None:
    """Block: the game ends as soon as a player reaches the target, checked after the round."""
    rules = find_rules("block", target=21)
    deal = deal_of(rules, BLOCKED_AT_LEAD)
    game = Game(rules, 2, seed=1, deals=[deal, deal])
    play(game, "6-6")  # blocked: 33 - 12 = 21 points
    outcome = game.outcome()
    assert outcome is not None and outcome.scores == (21, 0) and outcome.winners == (0,)
    assert len(game.rounds) == 1
    short = Game(find_rules("block", target=22), 2, seed=1, deals=[deal, deal])
    play(short, "6-6")
    assert not short.is_terminal() and short.scores == (21, 0) and len(short.rounds) == 2
    assert short.round.number == 2 and short.explicit == [True, True]


def test_later_rounds_are_dealt_from_the_seed() -> None:
    """Explicit deals are used first; later rounds come from the seed, same seed same deals."""
    rules = find_rules("block", target=22)
    deal = deal_of(rules, BLOCKED_AT_LEAD)
    first = Game(rules, 2, seed=99, deals=[deal])
    second = Game(rules, 2, seed=99, deals=[deal])
    for game in (first, second):
        play(game, "6-6")
    assert first.explicit == [True, False]
    assert first.round.deal == second.round.deal
    assert first.round.deal == deal_round(rules, 2, random.Random(99))[0]


# --- deals ------------------------------------------------------------------------------


def test_explicit_deals_are_checked() -> None:
    """An explicit deal must fit the rules: player count, hand sizes, the whole set once."""
    rules = find_rules("block")
    good = [hand.split() for hand in BLOCKED_AT_LEAD]
    cases: list[tuple[Deal, str]] = [
        (Deal.complete(rules, [good[0][:6], good[1]]), "seat 0 was dealt 6 tiles, block deals 7"),
        (Deal.of(good, ["6-6"]), "tile 6-6 is dealt twice"),
        (Deal.of(good), "tiles missing from the deal: 4-3"),
        (Deal.complete(rules, [good[0], good[1]], ["9-9"]), "9-9 is not in the double-6 set"),
        (Deal.complete(rules, [good[0]]), "deal for 1 players"),
        (Deal.complete(rules, good, lead_draw=["1-0", "2-0"]), "block has no draw for the lead"),
    ]
    for deal, message in cases:
        with pytest.raises(DealError, match=message):
            deal.check(rules)
    with pytest.raises(RulesError, match="block is for 2, 3, 4 players, not 1"):
        Round(rules, Deal.complete(rules, [good[0]]))
    wooden = find_rules("wooden")
    with pytest.raises(DealError, match="wooden needs one lead-draw tile per seat"):
        Round(wooden, Deal.complete(wooden, good))
    with pytest.raises(DealError, match="not distinct tiles of the set"):
        Round(wooden, Deal.complete(wooden, good, lead_draw=["1-0", "1-0"]))


def test_round_wins_in_a_points_game_scores_in_play_points_only() -> None:
    """docs/rules.md: round-wins gives no points at the round's end; with fives in play a
    points game is won by the in-play points alone (the reported bug: the round's winner
    got 1 point on top of them)."""
    rules = Rules.from_params(
        "fives-only",
        find_rules("draw").params() | {"scoring": "round-wins", "in_play": "fives", "target": 30},
    )
    game = Game(rules, 2, seed=7)
    rng = random.Random(7)
    while not game.is_terminal():
        game.apply(rng.choice(game.legal_moves()))
    for round_ in game.rounds:
        result = round_.result
        assert result is not None
        in_play = [0, 0]
        for event in round_.events:
            if isinstance(event, Play):
                in_play[event.seat] += event.points
        assert list(result.points) == in_play
