"""Conformance: every preset, every legal player count, many seeded random games.

:class:`Referee` restates RULES.md independently of the engine (sets and lists, no
bitmasks): from a round's deal and the moves chosen it predicts every event (plays,
draws, passes), the end of the round and its points. Random games are played through
:class:`arena.engine.game.Game` and checked against it at every step, together with the
invariants of STYLE.md's conformance suite: tiles conserved, legal moves sorted and
applicable, illegal moves refused, observations that leak nothing, games that end,
same seed same game, scores that add up.
"""

from __future__ import annotations

import itertools
import json
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest

from arena.engine.deal import Deal, deal_round
from arena.engine.events import Draw, Event, Pass, Play, RoundResult, Termination
from arena.engine.game import Game
from arena.engine.round import Round
from arena.engine.rules import PRESETS, GameEnd, InPlay, Lead, Rules, Scoring
from arena.engine.tiles import TILES, End, Move, Tile, tile_set
from arena.errors import IllegalMoveError
from tests.conftest import soak

#: Every preset with every player count it allows, and muggins' 4 players as two teams.
CONFIGS: list[tuple[str, int, bool]] = [
    (name, players, False) for name, rules in PRESETS.items() for players in rules.players
] + [("muggins", 4, True)]

#: No round has more plays than tiles; no game played here needs more rounds than this.
MAX_ROUNDS = 400

#: A JSON string that is a tile or a move (a quote inside a string is escaped: \").
_TILE_STRING = re.compile(r'(?<!\\)"(\d{1,2}-\d{1,2}[LR]?)"')
_ALL_MOVES = [Move.of(tile, end) for tile in TILES for end in (None, End.LEFT, End.RIGHT)]


def config_id(config: tuple[str, int, bool]) -> str:
    """Test id of a configuration: ``muggins-4p-teams``."""
    name, players, teams = config
    return f"{name}-{players}p" + ("-teams" if teams else "")


# --- the reference model ------------------------------------------------------------


@dataclass
class Referee:
    """RULES.md restated: predicts a round's events and result from its deal and the moves.

    Args:
        rules: the rule set.
        deal: the round's deal.
        teams: seats 0+2 against 1+3.
        scores: each side's game score before the round.
    """

    rules: Rules
    deal: Deal
    teams: bool
    scores: list[int]
    hands: list[set[Tile]] = field(init=False)
    line: list[tuple[int, int]] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    result: RoundResult | None = None
    seat: int = field(init=False)
    drawn: int = 0
    own_draws: list[set[Tile]] = field(init=False)
    in_play: list[int] = field(init=False)
    _end_tiles: list[Tile] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.scores = list(self.scores)
        self.hands = [set(hand) for hand in self.deal.hands]
        self.own_draws = [set() for _ in self.deal.hands]
        self.in_play = [0] * len(self.scores)
        self.seat = self.leader()

    @property
    def players(self) -> int:
        """The number of seats."""
        return len(self.hands)

    def side(self, seat: int) -> int:
        """A seat's side: its team (seat % 2) in team play, else the seat."""
        return seat % 2 if self.teams else seat

    def leader(self) -> int:
        """RULES.md: the holder of the highest double leads; wooden: the highest lead-draw tile
        (most pips, ties by the larger half)."""
        if self.rules.lead is Lead.DRAW_FOR_LEAD:
            drawn = self.deal.lead_draw
            assert drawn is not None
            return max(range(self.players), key=lambda seat: (drawn[seat].pips, drawn[seat].high))
        doubles = [
            (t.high, seat) for seat, hand in enumerate(self.hands) for t in hand if t.is_double
        ]
        return max(doubles)[1]

    @property
    def ends(self) -> tuple[int, int] | None:
        """The open ends, None before the lead."""
        return (self.line[0][0], self.line[-1][1]) if self.line else None

    @property
    def drawable(self) -> int:
        """Tiles that may still be drawn: none in block, never the reserve."""
        if self.rules.draw_limit == 0:
            return 0
        total = len(self.deal.boneyard) - self.rules.reserve(self.players)
        return max(0, total - self.drawn)

    @property
    def boneyard(self) -> list[Tile]:
        """The tiles still in the boneyard, next to be drawn first."""
        return list(self.deal.boneyard[self.drawn :])

    def plays(self, tile: Tile) -> bool:
        """Whether ``tile`` matches an open end."""
        ends = self.ends
        assert ends is not None
        return tile.matches(ends[0]) or tile.matches(ends[1])

    def can_play(self, seat: int) -> bool:
        """Whether ``seat`` holds a playable tile (then it must play: seed 001)."""
        return any(self.plays(tile) for tile in self.hands[seat])

    def legal_moves(self) -> list[Move]:
        """The moves of the seat to move, sorted by tile, then lead, left, right."""
        if self.result is not None:
            return []
        hand = sorted(self.hands[self.seat])
        if self.ends is None:
            if self.rules.lead is Lead.DRAW_FOR_LEAD:
                return [Move.of(tile) for tile in hand]  # wooden: any tile leads
            return [Move.of(max((t for t in hand if t.is_double), key=lambda t: t.high))]
        left, right = self.ends
        moves = []
        for tile in hand:
            if tile.matches(left):
                moves.append(Move.of(tile, End.LEFT))
            if tile.matches(right):
                moves.append(Move.of(tile, End.RIGHT))
        return moves

    def count(self) -> int:
        """Muggins count: both open ends, a double on an end counting both halves; a lone
        tile counts its pips (lead 5-5 counts 10)."""
        if len(self.line) == 1:
            return sum(self.line[0])
        left, right = self.line[0][0], self.line[-1][1]
        left_tile, right_tile = self._end_tiles
        return left * (1 + left_tile.is_double) + right * (1 + right_tile.is_double)

    def play(self, move: Move) -> None:
        """Play ``move``, then everything forced: draws, passes, the end of the round."""
        assert move in self.legal_moves()
        seat, tile = self.seat, move.tile
        self.hands[seat].remove(tile)
        if move.end is None:
            self.line = [(tile.high, tile.low)]
            self._end_tiles = [tile, tile]
        elif move.end is End.LEFT:
            end = self.line[0][0]
            self.line.insert(0, (tile.other(end), end))
            self._end_tiles[0] = tile
        else:
            end = self.line[-1][1]
            self.line.append((end, tile.other(end)))
            self._end_tiles[1] = tile
        count = self.count()
        fives = self.rules.in_play is InPlay.FIVES and count > 0 and count % 5 == 0
        points = count // 5 if fives else 0
        self.events.append(Play(seat, move, points))
        side = self.side(seat)
        self.scores[side] += points
        self.in_play[side] += points
        # Muggins: the play that reaches the target ends the game at once.
        if (
            points
            and self.rules.end is GameEnd.POINTS
            and self.scores[side] >= self.rules.wins_needed
        ):
            self._finish(Termination.TARGET, side, seat, [0] * len(self.scores))
        elif not self.hands[seat]:
            self._finish_domino(seat)
        else:
            self._next_turn((seat + 1) % self.players)

    def _next_turn(self, seat: int) -> None:
        limit = self.rules.draw_limit
        while True:
            self.seat = seat
            if self.can_play(seat):
                return
            drawn_now = 0
            while self.drawable and (limit is None or drawn_now < limit):
                tile = self.deal.boneyard[self.drawn]
                self.drawn += 1
                drawn_now += 1
                self.hands[seat].add(tile)
                self.own_draws[seat].add(tile)
                self.events.append(Draw(seat, tile))
                if self.plays(tile):
                    return
            # Blocked: no seat can play and no seat may draw; ends at once, no pass.
            if not self.drawable and not any(map(self.can_play, range(self.players))):
                self._finish_blocked()
                return
            self.events.append(Pass(seat))
            seat = (seat + 1) % self.players

    def side_pips(self) -> list[int]:
        """Each side's pips in hand (a team's is the sum of its members')."""
        pips = [0] * len(self.scores)
        for seat, hand in enumerate(self.hands):
            pips[self.side(seat)] += sum(t.pips for t in hand)
        return pips

    def _finish_domino(self, seat: int) -> None:
        side = self.side(seat)
        points = [0] * len(self.scores)
        # RULES.md: the player who goes out scores the opponents' pips, whatever
        # its partner holds (docs/rules.md: own is 0 after a domino, teams too).
        pips = self.side_pips()
        pips[side] = 0
        points[side] = score(self.rules, side, pips)
        self._finish(Termination.DOMINO, side, seat, points)

    def _finish_blocked(self) -> None:
        pips = self.side_pips()
        tied = [side for side, total in enumerate(pips) if total == min(pips)]
        if len(tied) > 1:
            # Tie-break: the lowest single tile held (by any member of a team).
            lowest = {
                side: min(
                    t.pips for s, h in enumerate(self.hands) if self.side(s) == side for t in h
                )
                for side in tied
            }
            tied = [side for side in tied if lowest[side] == min(lowest.values())]
        winner = tied[0] if len(tied) == 1 else None
        points = [0] * len(self.scores)
        if winner is not None:
            points[winner] = score(self.rules, winner, pips)
        self._finish(Termination.BLOCKED, winner, None, points)

    def _finish(
        self, termination: Termination, winner: int | None, seat: int | None, points: list[int]
    ) -> None:
        for side, gained in enumerate(points):
            self.scores[side] += gained
        total = [end + fives for end, fives in zip(points, self.in_play, strict=True)]
        pips = tuple(sum(t.pips for t in hand) for hand in self.hands)
        self.result = RoundResult(termination, winner, seat, pips, tuple(total))


def score(rules: Rules, winner: int, side_pips: Sequence[int]) -> int:
    """docs/rules.md "Scoring": what the round's winner scores from each side's pips left
    in hand (``round-wins``: no points; in a game won by rounds, the 1 counts a round won)."""
    scoring = rules.scoring
    own = side_pips[winner]
    others = [pips for side, pips in enumerate(side_pips) if side != winner]
    if scoring is Scoring.OPPONENTS_MINUS_OWN:
        return sum(others) - own
    if scoring is Scoring.POSITIVE_DIFFERENCES:
        return sum(max(0, pips - own) for pips in others)
    if scoring is Scoring.DIFFERENCES:
        return sum(pips - own for pips in others)
    if scoring is Scoring.ROUNDED_FIVES:
        return (sum(others) + 2) // 5
    return 1 if rules.end is GameEnd.ROUNDS else 0


# --- checks ---------------------------------------------------------------------------


def check_tiles_conserved(round_: Round) -> None:
    """Hands + line + boneyard hold the whole set, each tile once; the line connects."""
    line = round_.line
    for (_, right), (left, _) in itertools.pairwise(line):
        assert right == left, f"line does not connect: {line}"
    if line:
        assert round_.ends == (line[0][0], line[-1][1])
    tiles = [t for seat in range(round_.players) for t in round_.hand(seat)]
    tiles += [Tile.of(a, b) for a, b in line] + list(round_.boneyard)
    # By id (the tiles' order, without the dataclass's comparisons): each tile of the set once.
    assert sorted(t.id for t in tiles) == [t.id for t in tile_set(round_.rules.max_pip)]


def tiles_named(text: str) -> set[Tile]:
    """Every tile written anywhere in a JSON document's text: each string (a value or a
    key) that is a tile ("6-4") or a move ("6-4L")."""
    return {Move.parse(name).tile for name in _TILE_STRING.findall(text)}


def check_observations(round_: Round, ref: Referee) -> None:
    """Each seat sees its own hand and public information only (RULES.md "What a bot sees")."""
    played = {Tile.of(a, b) for a, b in ref.line}
    for seat in range(ref.players):
        obs = round_.observation(seat)
        assert obs.seat == seat and obs.players == ref.players and obs.teams == ref.teams
        assert obs.hand == tuple(sorted(ref.hands[seat]))
        assert obs.hand_sizes == tuple(len(hand) for hand in ref.hands)
        assert obs.boneyard_size == len(ref.boneyard)
        assert obs.drawable == ref.drawable
        assert obs.line == tuple(ref.line) and obs.ends == ref.ends
        assert obs.scores == tuple(ref.scores)
        assert obs.to_move == (ref.seat if ref.result is None else None)
        mine = seat == obs.to_move
        assert obs.legal_moves == (tuple(ref.legal_moves()) if mine else ())
        # Draws by others are public only as counts.
        hidden = [
            Draw(e.seat, None) if type(e) is Draw and e.seat != seat else e for e in ref.events
        ]
        assert obs.history == tuple(hidden)
        document = obs.to_dict()
        text = json.dumps(document)
        assert "boneyard" not in document
        known = ref.hands[seat] | ref.own_draws[seat] | played
        named = tiles_named(text)
        assert set(obs.hand) <= named, text  # the search finds what the document shows
        leaked = named - known
        assert not leaked, f"seat {seat} sees {sorted(map(str, leaked))}"


def check_illegal_move_refused(round_: Round, rng: random.Random) -> None:
    """Moves outside legal_moves() raise IllegalMoveError naming the move and the open ends,
    and change nothing: a tile of the hand on a wrong end (or as a lead), any other tile."""
    legal = list(round_.legal_moves())
    seat = round_.seat
    assert seat is not None
    own = [Move.of(t, end) for t in round_.hand(seat) for end in (None, End.LEFT, End.RIGHT)]
    anything = _ALL_MOVES[: 3 * round_.rules.tile_count]
    for pool in (own, anything):
        illegal = [move for move in rng.sample(pool, min(len(pool), 6)) if move not in legal]
        if not illegal:
            continue
        events = len(round_.events)
        # (try/except rather than pytest.raises: this runs at every step of every game,
        # ~80,000 times a run, and pytest.raises' context cost a tenth of the file's CPU)
        try:
            round_.apply(illegal[0])
        except IllegalMoveError as refused:
            message = str(refused)
        else:
            pytest.fail(f"{illegal[0]} was applied: legal moves were {legal}")
        assert str(illegal[0]) in message
        ends = round_.ends
        assert (
            "open ends none" if ends is None else f"open ends {ends[0]} and {ends[1]}"
        ) in message
        assert len(round_.events) == events and list(round_.legal_moves()) == legal


def replay(round_: Round, scores: Sequence[int], moves: Sequence[Move]) -> Round:
    """A fresh round from ``round_``'s deal with ``moves`` applied."""
    copy = Round(round_.rules, round_.deal, teams=round_.teams, scores=scores, number=round_.number)
    for move in moves:
        copy.apply(move)
    return copy


def check_every_legal_move_applies(
    round_: Round, ref: Referee, scores: Sequence[int], moves: Sequence[Move]
) -> None:
    """Each legal move applies in a copy of the position, as the referee predicts."""
    for move in ref.legal_moves():
        copy = replay(round_, scores, moves)
        copy.apply(move)
        model = Referee(round_.rules, round_.deal, round_.teams, list(scores))
        for earlier in [*moves, move]:
            model.play(earlier)
        assert copy.events == model.events
        assert copy.result == model.result


@dataclass
class Checks:
    """Which of the slower checks to run at each step."""

    observations: bool = True
    illegal: bool = True
    every_move: bool = False


def play_checked(
    rules: Rules,
    players: int,
    teams: bool,
    seed: int,
    checks: Checks | None = None,
    *,
    max_rounds: int | None = None,
) -> Game:
    """Play a random game of ``seed`` through Game, checking every step against a Referee.

    With ``max_rounds``, stop after that many rounds (a custom rule set may legitimately
    need very many); without, the game must end within MAX_ROUNDS rounds.
    """
    checks = checks or Checks()
    game = Game(rules, players, teams=teams, seed=seed)
    rng = random.Random(seed)
    while not game.is_terminal():
        if max_rounds is not None and len(game.rounds) > max_rounds:
            return game
        assert len(game.rounds) <= MAX_ROUNDS, "the game does not end"
        play_round_checked(game, rng, checks)
    check_game_result(game)
    return game


def play_round_checked(game: Game, rng: random.Random, checks: Checks) -> None:
    """Play the current round of ``game`` to its end, checking every step."""
    round_ = game.round
    before = list(round_.scores)
    ref = Referee(game.rules, round_.deal, game.teams, before)
    assert (round_.seat, round_.leader) == (ref.seat, ref.seat)
    moves: list[Move] = []
    while ref.result is None:
        assert len(moves) <= ref.rules.tile_count
        legal = check_decision(round_, ref)
        if checks.observations:
            check_observations(round_, ref)
        if checks.illegal:
            check_illegal_move_refused(round_, rng)
        if checks.every_move:
            check_every_legal_move_applies(round_, ref, before, moves)
        move = rng.choice(legal)
        game.apply(move)
        ref.play(move)
        moves.append(move)
        assert round_.events == ref.events
    assert round_.is_terminal() and round_.seat is None and not round_.legal_moves()
    assert round_.result == ref.result
    assert round_.scores == tuple(ref.scores)
    check_tiles_conserved(round_)
    check_round_end(round_, ref)
    if checks.observations:
        check_observations(round_, ref)
    with pytest.raises(IllegalMoveError, match="is over"):
        round_.apply(moves[-1])


def check_decision(round_: Round, ref: Referee) -> list[Move]:
    """The round waits for the referee's seat to choose among the referee's legal moves:
    a seat that holds a playable tile must play it (seed 001); sorted, deterministic."""
    check_tiles_conserved(round_)
    legal = list(round_.legal_moves())
    assert legal == ref.legal_moves() == sorted(legal) == list(round_.legal_moves())
    assert legal, "a seat is asked to move without a legal move"
    assert round_.seat == ref.seat and not round_.is_terminal()
    assert round_.scores == tuple(ref.scores)
    return legal


def check_round_end(round_: Round, ref: Referee) -> None:
    """A domino empties a hand; a blocked round really is blocked (RULES.md)."""
    result = round_.result
    assert result is not None
    if result.termination is Termination.DOMINO:
        assert result.seat is not None and not round_.hand(result.seat)
        assert result.winner == ref.side(result.seat)
    elif result.termination is Termination.BLOCKED:
        ends = round_.ends
        assert ends is not None and round_.drawable == 0
        assert not any(t.matches(ends[0]) or t.matches(ends[1]) for t in ref_hands(round_))
        assert type(round_.events[-1]) is not Pass, "a blocked round records no further passes"
    else:
        assert result.termination is Termination.TARGET
        assert round_.rules.in_play is InPlay.FIVES
        assert max(round_.scores) >= round_.rules.wins_needed


def ref_hands(round_: Round) -> list[Tile]:
    """Every tile in every hand."""
    return [t for seat in range(round_.players) for t in round_.hand(seat)]


def check_game_result(game: Game) -> None:
    """The game ends when a side reaches the target; scores are the sums of round points."""
    outcome = game.outcome()
    assert outcome is not None and game.seat is None and not game.legal_moves()
    assert outcome.termination is Termination.TARGET
    sides = 2 if game.teams else game.players
    totals = [0] * sides
    for number, round_ in enumerate(game.rounds, start=1):
        result = round_.result
        assert result is not None and round_.number == number
        assert all(total < game.rules.wins_needed for total in totals), "played on past the end"
        totals = [total + gained for total, gained in zip(totals, result.points, strict=True)]
        assert tuple(totals) == round_.scores
        assert result.termination is not Termination.TARGET or round_ is game.round
    assert outcome.scores == tuple(totals) == game.scores
    reached = [side for side, total in enumerate(totals) if total >= game.rules.wins_needed]
    assert len(reached) == 1
    assert outcome.winners == tuple(s for s in range(game.players) if game.sides[s] == reached[0])
    for deal, redeals in zip((r.deal for r in game.rounds), game.redeals, strict=True):
        check_redeals(game.rules, deal, redeals)
    assert game.explicit == [False] * len(game.rounds)


def check_redeals(rules: Rules, deal: Deal, redeals: Sequence[Deal]) -> None:
    """RULES.md: if no hand holds a double, all tiles are reshuffled and redealt."""
    if rules.lead is Lead.DRAW_FOR_LEAD:
        assert not redeals
        return
    for thrown in redeals:
        assert not any(t.is_double for hand in thrown.hands for t in hand)
    assert any(t.is_double for hand in deal.hands for t in hand)


# --- the tests ------------------------------------------------------------------------


@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
def test_random_games_follow_the_rules(config: tuple[str, int, bool]) -> None:
    """Seeded random games agree with the referee at every step, under every preset (3
    games each; 6 with ``ARENA_TEST_FULL=1``)."""
    name, players, teams = config
    for seed in range(soak(3, 6)):
        play_checked(PRESETS[name], players, teams, seed)


@pytest.mark.slow
@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
def test_many_random_games_follow_the_rules(config: tuple[str, int, bool]) -> None:
    """As above, over more seeds, with the cheaper checks only (8 games each; 40 with
    ``ARENA_TEST_FULL=1``)."""
    name, players, teams = config
    for seed in range(100, 100 + soak(8, 40)):
        play_checked(PRESETS[name], players, teams, seed, Checks(observations=False))


@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
def test_every_legal_move_applies(config: tuple[str, int, bool]) -> None:
    """At every step of a few rounds, each legal move applies in a replayed copy."""
    name, players, teams = config
    rules = PRESETS[name]
    for seed in range(2):
        game = Game(rules, players, teams=teams, seed=1000 + seed)
        play_round_checked(game, random.Random(seed), Checks(False, False, every_move=True))


@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
def test_same_seed_same_game(config: tuple[str, int, bool]) -> None:
    """The same rules, players, seed and moves give the same deals, events and outcome."""
    name, players, teams = config

    def play(seed: int) -> tuple[Any, ...]:
        game = Game(PRESETS[name], players, teams=teams, seed=seed)
        rng = random.Random(seed)
        while not game.is_terminal():
            game.apply(rng.choice(game.legal_moves()))
        rounds = [(r.deal, tuple(r.events), r.result) for r in game.rounds]
        return (tuple(rounds), tuple(map(tuple, game.redeals)), game.outcome())

    for seed in (7, 2**62 + 3):
        assert play(seed) == play(seed)
    assert play(7) != play(8)


@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
def test_deal_round_is_deterministic_and_complete(config: tuple[str, int, bool]) -> None:
    """deal_round deals the preset's hand size to each seat and the rest to the boneyard."""
    name, players, _ = config
    rules = PRESETS[name]
    for seed in range(20):
        deal, redeals = deal_round(rules, players, random.Random(seed))
        assert (deal, redeals) == deal_round(rules, players, random.Random(seed))
        deal.check(rules)
        assert [len(hand) for hand in deal.hands] == [rules.hand_size(players)] * players
        assert len(deal.boneyard) == rules.tile_count - players * rules.hand_size(players)
        check_redeals(rules, deal, redeals)
        assert (deal.lead_draw is not None) == (rules.lead is Lead.DRAW_FOR_LEAD)


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_bigger_sets_play_by_the_same_rules(name: str) -> None:
    """Presets on double-nine and double-twelve sets (a parameter) follow the referee too."""
    for max_pip, seed in ((9, 1), (12, 2)):
        rules = PRESETS[name].with_overrides(max_pip=max_pip)
        play_checked(rules, 2, False, seed, Checks(observations=False, illegal=False))
