"""Deal groups read from game records (arena.compete.margins): scores, margins, luck."""

from __future__ import annotations

import itertools
import math
import random
import statistics
from typing import Any

import pytest

from arena.compete.localrun import finishing_places
from arena.compete.margins import (
    LUCK_TERMS,
    VALUE_SWAPS,
    GroupMargin,
    draw_luck,
    game_lucks,
    game_margin,
    game_score,
    game_seat_lucks,
    group_margin,
    kept_lucks,
    seat_lucks,
)
from arena.engine.deal import Deal
from arena.engine.events import Draw, Outcome, Play, Termination
from arena.engine.game import Game
from arena.engine.observation import event_to_dict
from arena.engine.records import game_record
from arena.engine.round import Round
from arena.engine.rules import PRESETS, Rules, find_rules
from arena.engine.tiles import Move, Tile
from arena.match.play import entrant_rng, game_seeds, play_game
from arena.match.strategies import heaviest, make_strategy
from tests.conftest import soak
from tests.engine.test_conformance import CONFIGS, config_id

T, F = Termination.TARGET, Termination.CRASH


def duplicate_group(
    rules_name: str, names: dict[str, str], seed: int, teams: bool = False
) -> tuple[list[dict[str, Any]], list[list[str]]]:
    """One deal played in every seat rotation by built-in strategies, as ``arena compare``
    seats them: the records and each record's seat labels."""
    rules = find_rules(rules_name)
    labels = list(names)
    records, seatings = [], []
    for rotation in range(len(labels)):
        order = labels[rotation:] + labels[:rotation]
        seats = order + order if teams else order
        strategies = [make_strategy(names[label], entrant_rng(seed, label)) for label in seats]
        game = play_game(rules, strategies, teams=teams, seed=seed)
        records.append(game_record(game, seats))
        seatings.append(seats)
    return records, seatings


def test_the_games_of_a_duplicate_group_deal_the_same_rounds() -> None:
    # The game's seed deals every round in order, whatever was played before: round r of
    # every rotation is the same deal (seats rotated), as long as both games reached it.
    for rules_name, names in [
        ("draw", {"new": "greedy", "old1": "random"}),
        ("muggins", {"new": "greedy", "old1": "random", "old2": "random"}),
        ("wooden", {"new": "random", "old1": "greedy"}),
    ]:
        for seed in game_seeds(11, 5):
            records, _ = duplicate_group(rules_name, names, seed)
            reached = min(len(record["rounds"]) for record in records)
            assert reached >= 1
            for number in range(reached):
                deals = [record["rounds"][number]["deal"] for record in records]
                assert all(deal == deals[0] for deal in deals)


def record_of(
    outcome: Outcome, sides: tuple[int, ...], forfeit: int | None = None
) -> dict[str, Any]:
    players = len(sides)
    result: dict[str, Any] = {
        "termination": outcome.termination.value,
        "winners": list(outcome.winners),
        "scores": list(outcome.scores),
    }
    if forfeit is not None:
        result["verdict"] = {"seat": forfeit, "termination": "crash", "message": "", "stderr": ""}
    return {"players": players, "teams": sides != tuple(range(players)), "result": result}


@pytest.mark.parametrize(
    ("outcome", "sides", "forfeit"),
    [
        (Outcome(T, (1,), (40, 100)), (0, 1), None),
        (Outcome(F, (1,), (80, 20)), (0, 1), 0),
        (Outcome(T, (2,), (10, 30, 100, 30)), (0, 1, 2, 3), None),
        (Outcome(F, (0, 2, 3), (50, 0, 20, 60)), (0, 1, 2, 3), 1),
        (Outcome(T, (1, 3), (70, 150)), (0, 1, 0, 1), None),
        (Outcome(F, (0, 2), (10, 90)), (0, 1, 0, 1), 3),
        (Outcome(T, (0,), (61, 5, 5, 5, 9)), (0, 1, 2, 3, 4), None),
    ],
)
def test_game_score_ranks_as_the_tournament_does(
    outcome: Outcome, sides: tuple[int, ...], forfeit: int | None
) -> None:
    places = finishing_places(outcome, sides, forfeit)
    record = record_of(outcome, sides, forfeit)
    for seat, side in enumerate(sides):
        others = [places[s] for s in range(len(sides)) if sides[s] != side]
        share = sum(1 if places[seat] < p else 0.5 if places[seat] == p else 0 for p in others)
        assert game_score(record, seat) == pytest.approx(share / len(others))


def test_game_margin() -> None:
    assert game_margin(record_of(Outcome(T, (1,), (40, 100)), (0, 1)), 0) == -60
    three = record_of(Outcome(T, (2,), (10, 30, 100)), (0, 1, 2))
    assert game_margin(three, 2) == 100 - 20
    assert game_margin(three, 0) == 10 - 65
    teams = record_of(Outcome(T, (1, 3), (70, 150)), (0, 1, 0, 1))
    assert game_margin(teams, 2) == -80 and game_margin(teams, 3) == 80


def test_an_unfinished_game_has_no_score() -> None:
    with pytest.raises(ValueError, match="unfinished"):
        game_score({"players": 2, "teams": False, "result": None}, 0)


def round_with_draws() -> dict[str, Any]:
    """Seat 0 leads 5-3 (ends 5 and 3); seat 1 draws 6-6, 1-0 and 5-2 (which fits)."""
    return {
        "number": 1,
        "dealt": "seed",
        "deal": {"hands": [["5-3"], ["4-4"]], "boneyard": ["6-6", "1-0", "5-2"]},
        "events": [
            {"type": "play", "seat": 0, "move": "5-3"},
            {"type": "draw", "seat": 1, "tile": "6-6"},
            {"type": "draw", "seat": 1, "tile": "1-0"},
            {"type": "draw", "seat": 1, "tile": "5-2"},
            {"type": "play", "seat": 1, "move": "5-2L"},
        ],
    }


def test_luck_of_the_draw_by_hand() -> None:
    # 6-6 drawn from {6-6, 1-0, 5-2}: pips 12 - 20/3, fits 0 - 1/3; then 1-0 from
    # {1-0, 5-2}: pips 1 - 4, fits 0 - 1/2; then 5-2 alone: 0 and 0.
    # (The record names no rule set, so no rollout values it: ``value`` is 0.)
    record = {"players": 2, "teams": False, "rounds": [round_with_draws()]}
    pips, fits, value = draw_luck(record, 1)
    assert pips == pytest.approx(12 - 20 / 3 + 1 - 4)
    assert fits == pytest.approx(-1 / 3 - 1 / 2)
    assert value == 0
    assert draw_luck(record, 0) == pytest.approx((-pips, -fits, 0))
    # Three players: seat 0's luck is its own (none) minus the mean of the others'.
    three = {"players": 3, "teams": False, "rounds": [round_with_draws()]}
    assert draw_luck(three, 0) == pytest.approx((-pips / 2, -fits / 2, 0))
    assert draw_luck(three, 1) == pytest.approx((pips, fits, 0))


def rules_data(name: str) -> dict[str, Any]:
    rules = PRESETS[name]
    return {"name": rules.name, "params": rules.params()}


def round_with_values() -> dict[str, Any]:
    """``three-minute`` (draw until playable, no reserve), both seats greedy: seat 0 leads
    6-6; seat 1 draws 6-1 and plays it; seat 0 draws 3-0, the last tile, and passes;
    seat 1 plays 1-1 and the round is blocked, 8 pips against 2: seat 1 scores 6."""
    return {
        "number": 1,
        "dealt": "seed",
        "deal": {"hands": [["6-6", "5-0"], ["1-1", "2-0"]], "boneyard": ["6-1", "3-0"]},
        "events": [
            {"type": "play", "seat": 0, "move": "6-6"},
            {"type": "draw", "seat": 1, "tile": "6-1"},
            {"type": "play", "seat": 1, "move": "6-1L"},
            {"type": "draw", "seat": 0, "tile": "3-0"},
            {"type": "pass", "seat": 0},
            {"type": "play", "seat": 1, "move": "1-1L"},
        ],
        "scores": [0, 6],
    }


def test_the_value_of_a_draw_by_hand() -> None:
    # Seat 1's draw of 6-1 from {6-1, 3-0}: played on by greedy, the round scores (0, 6).
    # Had it drawn 3-0 (the boneyard 3-0, 6-1), it would have drawn 6-1 next, played it
    # and 1-1, and the round would have blocked at 5 pips each, seat 1 winning on its
    # lowest tile (2-0 against 5-0) and scoring 5 - 5 = 0: (0, 0). So the value is
    # (0, 6) - the mean of (0, 6) and (0, 0) = (0, 3). Seat 0's draw of 3-0 was the last
    # tile: nothing else could have been drawn, value 0.
    record = {
        "players": 2,
        "teams": False,
        "rules": rules_data("three-minute"),
        "rounds": [round_with_values()],
    }
    assert draw_luck(record, 1)[2] == pytest.approx(3)
    assert draw_luck(record, 0)[2] == pytest.approx(-3)


@pytest.mark.parametrize("bots", [("greedy", "random"), ("random", "random")])
def test_the_value_sums_to_zero_over_every_boneyard_order(bots: tuple[str, str]) -> None:
    # Exactly what makes its mean 0: the boneyard's orders are equally likely, and over
    # all of them (whatever the bots play, here deterministic given what they saw) every
    # draw's value adds up to 0, and so does the round's.
    rules = PRESETS["three-minute"]
    hands = [["6-6", "5-0", "4-1"], ["1-1", "2-0", "5-5"]]
    total = [0.0, 0.0, 0.0]
    for order in itertools.permutations(["6-1", "3-0", "4-2", "2-1"]):
        strategies = [make_strategy(name, random.Random(5)) for name in bots]
        round_ = Round(rules, Deal.of(hands, order), check=False)
        while (seat := round_.seat) is not None:
            round_.apply(strategies[seat](round_.observation(seat)))
        assert round_.result is not None
        data = {
            "number": 1,
            "dealt": "seed",
            "deal": {"hands": hands, "boneyard": list(order)},
            "events": [event_to_dict(event) for event in round_.events],
            "scores": list(round_.scores),
        }
        record = {"players": 2, "teams": False, "rules": rules_data(rules.name), "rounds": [data]}
        luck = draw_luck(record, 0)
        assert luck == pytest.approx(tuple(-v for v in draw_luck(record, 1)))
        total = [t + v for t, v in zip(total, luck, strict=True)]
    assert total == pytest.approx([0, 0, 0], abs=1e-9)


def test_a_luck_of_two_terms_is_padded() -> None:
    assert GroupMargin(0.5, 3.0, (1.0, 2.0)).luck == (1.0, 2.0, 0.0)  # type: ignore[arg-type]
    assert GroupMargin(0.5, 3.0).luck == (0.0,) * len(LUCK_TERMS)


def test_rounds_without_draws_or_seed_carry_no_value() -> None:
    explicit = {
        "players": 2,
        "teams": False,
        "rules": rules_data("three-minute"),
        "rounds": [round_with_values() | {"dealt": "explicit"}],
    }
    assert draw_luck(explicit, 1) == (0.0, 0.0, 0.0)
    unknown = explicit | {"rules": {"name": "no-such-rules", "params": {}}}
    unknown["rounds"] = [round_with_values()]
    assert draw_luck(unknown, 1)[2] == 0
    # block draws nothing: no luck at all, whatever is played.
    records, _ = duplicate_group("block", {"new": "greedy", "old1": "random"}, 7)
    assert all(draw_luck(record, seat) == (0.0, 0.0, 0.0) for record in records for seat in (0, 1))


def test_explicit_deals_and_foreign_boneyards_carry_no_luck() -> None:
    explicit = round_with_draws() | {"dealt": "explicit"}
    rules = rules_data("draw")
    assert draw_luck({"players": 2, "teams": False, "rounds": [explicit]}, 1) == (0.0, 0.0, 0.0)
    foreign = round_with_draws()
    foreign["deal"] = {"hands": [[], []], "boneyard": ["1-0", "6-6", "5-2"]}
    record = {"players": 2, "teams": False, "rules": rules, "rounds": [foreign]}
    assert draw_luck(record, 1) == (0.0, 0.0, 0.0)


@pytest.mark.parametrize(
    ("rules_name", "players", "teams"),
    [("draw", 2, False), ("muggins", 3, False), ("block-and-draw", 4, False), ("muggins", 4, True)],
)
def test_a_group_is_antisymmetric_between_its_bots(
    rules_name: str, players: int, teams: bool
) -> None:
    # What makes the margin test's statistic centred for identical bots: every label's
    # values, computed alike, add up to the same totals whatever was played, so when the
    # bots are exchangeable each label's expectation is the same: score 1/2, margin 0.
    labels = ["new", *(f"old{i}" for i in range(1, 2 if teams else players))]
    names = dict(zip(labels, ["greedy", *["random"] * (len(labels) - 1)], strict=True))
    for seed in game_seeds(5, 4):
        records, seatings = duplicate_group(rules_name, names, seed, teams)
        values = [group_margin(records, [s.index(label) for s in seatings]) for label in labels]
        assert sum(v.score for v in values) == pytest.approx(len(labels) / 2)
        assert sum(v.margin for v in values) == pytest.approx(0, abs=1e-9)
        for term in range(len(LUCK_TERMS)):
            assert sum(v.luck[term] for v in values) == pytest.approx(0, abs=1e-9)
        assert not any(v.forfeit for v in values)
        for record in records:  # one pass for every seat gives each seat's draw_luck
            lucks = seat_lucks(record)
            assert lucks == [draw_luck(record, seat) for seat in range(len(lucks))]


def test_the_luck_has_mean_zero() -> None:
    # Identical bots, many groups: NEW's luck averages 0 (each term within 4 standard errors),
    # and so does every draw's luck from either seat over many games. (``pips`` and ``fits``
    # on records without their rule set, which skips the rollouts of ``value``: faster.)
    names = {"new": "random", "old1": "random"}
    groups = [group_margin(*seated(names, seed, rollouts=False)) for seed in game_seeds(3, 150)]
    for term in range(2):
        values = [group.luck[term] for group in groups]
        assert abs(statistics.fmean(values)) < 4 * statistics.stdev(values) / math.sqrt(150)
    values = [group_margin(*seated(names, seed)).luck[2] for seed in game_seeds(6, 40)]
    assert abs(statistics.fmean(values)) < 4 * statistics.stdev(values) / math.sqrt(40)
    seat_luck = [
        draw_luck(without_rules(record), 0)[0]
        for seed in game_seeds(4, 150)
        for record in duplicate_group("draw", {"a": "greedy", "b": "random"}, seed)[0]
    ]
    spread = statistics.stdev(seat_luck) / math.sqrt(len(seat_luck))
    assert abs(statistics.fmean(seat_luck)) < 4 * spread


def without_rules(record: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in record.items() if key != "rules"}


def seated(
    names: dict[str, str], seed: int, rollouts: bool = True
) -> tuple[list[dict[str, Any]], list[int]]:
    records, seatings = duplicate_group("draw", names, seed)
    if not rollouts:
        records = [without_rules(record) for record in records]
    return records, [seats.index("new") for seats in seatings]


def test_group_margin_means_over_the_games() -> None:
    records, seats = seated({"new": "greedy", "old1": "random"}, 17)
    group = group_margin(records, seats)
    assert group.score == pytest.approx(
        (game_score(records[0], seats[0]) + game_score(records[1], seats[1])) / 2
    )
    assert group.margin == pytest.approx(
        (game_margin(records[0], seats[0]) + game_margin(records[1], seats[1])) / 2
    )
    lucks = [draw_luck(r, s) for r, s in zip(records, seats, strict=True)]
    assert group.luck == pytest.approx(tuple((a + b) / 2 for a, b in zip(*lucks, strict=True)))
    with pytest.raises(ValueError, match="one seat per game"):
        group_margin(records, seats[:1])


def test_a_forfeit_marks_the_group() -> None:
    records, seats = seated({"new": "greedy", "old1": "random"}, 23)
    forfeited = dict(records[1])
    forfeited["result"] = {
        "termination": "timeout",
        "winners": [1 - seats[1]],
        "scores": records[1]["result"]["scores"],
        "verdict": {"seat": seats[1], "termination": "timeout", "message": "", "stderr": ""},
    }
    group = group_margin([records[0], forfeited], seats)
    assert group.forfeit
    assert group == GroupMargin(
        (game_score(records[0], seats[0]) + 0.0) / 2, group.margin, group.luck, True
    )


@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
def test_a_games_luck_read_from_the_game_is_its_records(config: tuple[str, int, bool]) -> None:
    """game_lucks reads a played game's luck without its record: exactly kept_lucks of the
    record, on every preset and player count."""
    name, players, teams = config
    rules = PRESETS[name]
    labels = [f"s{seat}" for seat in range(players)]
    strategies = ["greedy", "random"] * players
    for seed in (3, 11):
        game = play_game(
            rules,
            [
                make_strategy(strategies[seat], random.Random(seed + seat))
                for seat in range(players)
            ],
            teams=teams,
            seed=seed,
        )
        assert game_lucks(game) == kept_lucks(game_record(game, labels))


def played_on(round_: Round, move: Move, rest: list[Tile] | None = None) -> tuple[int, ...]:
    """A rollout the plain way: a copy of the round (its undrawn tiles in the order
    ``rest``), ``move``, then greedy at every seat to the round's end."""
    copy = round_.copy(rest)
    copy.apply(move)
    while (result := copy.result) is None:
        copy.apply(heaviest(copy.legal_moves()))
    return result.points


def reference_lucks(game: Game) -> list[tuple[float, float, float]]:
    """Every seat's luck of the draw as the module's docstring defines it, computed the
    plain way from the engine's public interface: each round dealt from the seed replayed
    on a fresh round from its deal, each draw's ``pips`` and ``fits`` from the tiles left,
    each of its ``value`` rollouts a copy of the round before the play it followed, played
    on with greedy. (Sums are made in the order the luck makes them, so the floats are
    the same to the bit.)"""
    sides = game.sides
    count = max(sides) + 1
    totals = [[0.0, 0.0, 0.0] for _ in range(count)]
    scores = [0] * count
    for round_, explicit in zip(game.rounds, game.explicit, strict=True):
        if not explicit:
            pips_fits, values = reference_round(game.rules, round_, scores, count)
            for side in range(count):
                totals[side][0] += pips_fits[side][0]
                totals[side][1] += pips_fits[side][1]
                totals[side][2] += values[side]
        scores = list(round_.scores)
    lucks = []
    for mine in sides:
        others = [totals[side] for side in range(count) if side != mine]
        pips, fits, value = (
            totals[mine][term] - sum(o[term] for o in others) / len(others) for term in range(3)
        )
        lucks.append((pips, fits, value))
    return lucks


def reference_round(
    rules: Rules, played: Round, scores: list[int], count: int
) -> tuple[list[list[float]], list[float]]:
    """One round's ``[pips, fits]`` and ``value`` per side (:func:`reference_lucks`)."""
    sides = played.sides
    deal = played.deal
    boneyard = list(deal.boneyard)
    replay = Round(rules, deal, teams=played.teams, scores=scores, number=played.number)
    events = played.events
    pips_fits = [[0.0, 0.0] for _ in range(count)]
    values = [0.0] * count
    drawn = 0  # tiles drawn so far
    for index, event in enumerate(events):
        if type(event) is Draw:
            assert event.tile == boneyard[drawn]
            rest = boneyard[drawn:]
            assert replay.ends is not None
            fits = [tile for tile in rest if any(map(tile.matches, replay.ends))]
            luck = pips_fits[sides[event.seat]]
            luck[0] += event.tile.pips - sum(tile.pips for tile in rest) / len(rest)
            luck[1] += (1 if event.tile in fits else 0) - len(fits) / len(rest)
            drawn += 1
        elif type(event) is Play:
            later = itertools.takewhile(lambda e: type(e) is not Play, events[index + 1 :])
            draws = sum(type(e) is Draw for e in later)
            for place in range(drawn, drawn + draws):
                outcomes = [played_on(replay, event.move)]
                left = len(boneyard) - place
                swaps = min(left, VALUE_SWAPS)
                for k in range(1, swaps):
                    order = boneyard[drawn:]  # the undrawn tiles before the play
                    i, j = place - drawn, place - drawn + (k * left) // swaps
                    order[i], order[j] = order[j], order[i]
                    outcomes.append(played_on(replay, event.move, order))
                for side in range(count):
                    total = sum(outcome[side] for outcome in outcomes)
                    values[side] += outcomes[0][side] - total / len(outcomes)
            replay.apply(event.move)
    assert replay.events == events
    return pips_fits, values


@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
def test_a_games_luck_is_the_plain_reference(config: tuple[str, int, bool]) -> None:
    """game_seat_lucks (each round's rollouts from its log, a rollout as drawn shared while
    the plays are greedy's) is the luck computed the plain way, and the record's luck, to
    the bit: on every preset and player count, over seeded games of greedy against random
    bots, of random bots, and of greedy bots alone (whose rollouts as drawn are the most
    shared)."""
    name, players, teams = config
    rules = PRESETS[name]
    labels = [f"s{seat}" for seat in range(players)]
    lineups = [["greedy", "random"], ["random"], ["greedy"]]
    checked = 0
    for seed in range(soak(12, 60)):
        names = lineups[seed % len(lineups)] * players
        strategies = [
            make_strategy(names[(seat + seed) % players], random.Random(seed * 10 + seat))
            for seat in range(players)
        ]
        game = play_game(rules, strategies, teams=teams, seed=seed)
        lucks = game_seat_lucks(game)
        assert lucks == reference_lucks(game)
        assert lucks == seat_lucks(game_record(game, labels))
        assert game_lucks(game) == kept_lucks(game_record(game, labels))
        checked += sum(type(e) is Draw for r in game.rounds for e in r.events)
    # Only where nothing can be drawn (block; three-minute's 4 hands take every tile) are
    # there no draws to check.
    drawable = rules.draws and len(game.rounds[0].deal.boneyard) > rules.reserve(players)
    assert checked > 0 or not drawable


def test_a_game_forfeited_mid_round_has_the_reference_luck() -> None:
    """A game that ended in a forfeit (its last round unfinished, as a bot fault leaves it)
    has its luck read from the draws made so far: the reference's and the record's."""
    cut = 0
    for seed in range(8):
        game = Game(PRESETS["draw"], 2, seed=seed)
        rng = random.Random(seed)
        for _ in range(30 + 9 * seed):
            game.apply(rng.choice(game.legal_moves()))
        assert game.seat is not None  # (no draw game ends so soon)
        cut += game.round.seat is not None and game.round.undrawn < len(game.round.deal.boneyard)
        game.forfeit(game.seat, Termination.TIMEOUT)
        lucks = game_seat_lucks(game)
        assert lucks == reference_lucks(game)
        assert lucks == seat_lucks(game_record(game, ["a", "b"]))
    assert cut > 0  # some games were cut after a draw of their last round
