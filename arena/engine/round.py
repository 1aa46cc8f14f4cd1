"""The round: one deal played from the lead to a domino or a block.

The state machine of RULES.md. A :class:`Round` always waits for the seat to
move to choose one of :meth:`Round.legal_moves`; everything that is not a
choice (drawing, passing, detecting a block, scoring) happens inside
:meth:`Round.apply`, so after every call the round is either over or waiting
for a decision.

Inside, hands are bitmasks over tile ids and the line is its two ends: the
hot path allocates nothing but the event it records.
"""

from __future__ import annotations

import json
import random
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import fields
from functools import partial
from operator import attrgetter
from typing import Any, NamedTuple

from arena.engine.deal import Deal, deal_from_ids, lead_draw_winner, shuffle_ids
from arena.engine.events import Draw, Event, Pass, Play, RoundResult, Termination
from arena.engine.observation import Observation
from arena.engine.rules import MAX_PLAYERS, GameEnd, InPlay, Rules, Scoring
from arena.engine.tiles import (
    MAX_PIP_LIMIT,
    MOVE_TEXT,
    TILE_TEXT,
    TILES,
    End,
    Move,
    Tile,
    set_size,
)
from arena.errors import DealError, IllegalMoveError

__all__ = ["DrawRollouts", "Round", "round_points", "sides_of"]

_HIGH = [t.high for t in TILES]
_LOW = [t.low for t in TILES]
_PIPS = [t.pips for t in TILES]
#: _SUIT[v]: bitmask of the tiles with a half showing v.
#: _SUIT[-1] (no line yet) matches nothing.
_SUIT = [sum(1 << t.id for t in TILES if t.matches(v)) for v in range(MAX_PIP_LIMIT + 1)] + [0]
#: _MOVES[id]: the interned (lead, left, right) moves of a tile.
_MOVES = [(Move.of(t), Move.of(t, End.LEFT), Move.of(t, End.RIGHT)) for t in TILES]
_BIT = [1 << t.id for t in TILES]
_DOUBLES = sum(1 << t.id for t in TILES if t.is_double)
_ID = attrgetter("id")
_LEFT, _RIGHT = End.LEFT, End.RIGHT
_UNLIMITED = 1 << 30
#: The rules' enum members the engine's hot paths compare with, as module names: a member
#: read from its class costs ten times a global (Python 3.11), at every rollout's end.
_OPPONENTS_MINUS_OWN, _POSITIVE_DIFFERENCES = (
    Scoring.OPPONENTS_MINUS_OWN,
    Scoring.POSITIVE_DIFFERENCES,
)
_DIFFERENCES, _ROUNDED_FIVES, _ROUND_WINS = (
    Scoring.DIFFERENCES,
    Scoring.ROUNDED_FIVES,
    Scoring.ROUND_WINS,
)
_POINTS, _ROUNDS = GameEnd.POINTS, GameEnd.ROUNDS
_DOMINO, _BLOCKED, _TARGET = Termination.DOMINO, Termination.BLOCKED, Termination.TARGET


_Setup = tuple[tuple[int, ...], tuple[int, ...], int, int, bool]
_SETUPS: dict[tuple[int, int, bool], tuple[Rules, _Setup]] = {}


def _setup_of(rules: Rules, players: int, teams: bool) -> _Setup:
    """(sides, next seat, boneyard reserve, draw limit, fives) for a setup, cached by
    identity (the cache holds the rules, so their id is not reused meanwhile)."""
    key = (id(rules), players, teams)
    cached = _SETUPS.get(key)
    if cached is not None and cached[0] is rules:
        return cached[1]
    setup = (
        sides_of(players, teams),
        (*range(1, players), 0),
        rules.reserve(players) if rules.draws else set_size(rules.max_pip),
        _UNLIMITED if rules.draw_limit is None else rules.draw_limit,
        rules.in_play is InPlay.FIVES,
    )
    if len(_SETUPS) >= 256:
        _SETUPS.clear()
    _SETUPS[key] = (rules, setup)
    return setup


def sides_of(players: int, teams: bool) -> tuple[int, ...]:
    """Return each seat's side: the seat itself, or its team (seats 0+2 v 1+3)."""
    return tuple(seat % 2 for seat in range(players)) if teams else tuple(range(players))


def round_points(scoring: Scoring, winner: int, side_pips: Sequence[int]) -> int:
    """Return what side ``winner`` scores from each side's pips left in hand.

    The one formula for dominoes and blocked rounds alike: after a domino the
    winner's own count is 0 (its partner's tiles do not count against it).
    """
    own = side_pips[winner]
    opponents = sum(side_pips) - own  # their pips together
    if scoring is _OPPONENTS_MINUS_OWN:
        return opponents - own
    if scoring is _POSITIVE_DIFFERENCES:  # (the winner's own term is 0)
        if not own:  # (a domino's: every difference is positive)
            return opponents
        return sum(max(0, pips - own) for pips in side_pips)
    if scoring is _DIFFERENCES:
        return opponents - own * (len(side_pips) - 1)
    if scoring is _ROUNDED_FIVES:
        return (opponents + 2) // 5
    return 1  # ROUND_WINS: one round won


class DrawRollouts(NamedTuple):
    """A tile drawn from the boneyard, with the greedy rollouts of its round around it
    (:meth:`Round.draw_rollouts`: the luck of the draw's ``value``).

    Attributes:
        seat: the seat that drew it.
        tile: its tile id.
        left: the left end's value when it was drawn.
        right: the right end's value.
        undrawn: the tiles in the boneyard then, this one included.
        points: :meth:`Round.greedy_points` of the play it was drawn after, from just
            before that play: with the boneyard as it was dealt, then with this tile
            swapped with the tile at each of its partners' places.
    """

    seat: int
    tile: int
    left: int
    right: int
    undrawn: int
    points: tuple[tuple[int, ...], ...]


#: A :class:`DrawRollouts` from a tuple of its fields, made in C: the class's own
#: ``__new__`` is Python code, and :meth:`Round.draw_rollouts` makes one a draw.
_draw_rollouts = partial(tuple.__new__, DrawRollouts)


def fives_points(count: int) -> int:
    """Return the in-play points of a ``muggins`` count: count/5 for a positive multiple of 5."""
    return count // 5 if count > 0 and count % 5 == 0 else 0


class _Views:
    """What a round's readers derive from its log, kept up to date from the log's new
    entries only (a bot is asked at every move): the events, the line, and each seat's
    view of the events in the three forms the observation and the protocols need.

    A round makes its views at the first request, not when it is dealt: most rounds are
    played by the engine alone (rollouts, built-in strategies that choose from the legal
    moves, ``benchmarks/engine.py``) and never ask. Each seat's lists are made when that
    form is first asked for.
    """

    __slots__ = ("events", "line", "line_ends", "line_seen", "seen", "seen_json", "wire")

    def __init__(self) -> None:
        self.events: list[Event] = []
        #: The played tiles as (left half, right half), the line's ends, and the log
        #: entries read into them.
        self.line: deque[tuple[int, int]] = deque()
        self.line_ends = [-1, -1]
        self.line_seen = 0
        #: Per seat: the events as that seat sees them (:meth:`Round.observation`).
        self.seen: list[list[Event]] = []
        #: Per seat: the JSON form of each event as that seat sees it (:meth:`Round.delta`).
        self.seen_json: list[list[dict[str, Any]]] = []
        #: Per seat: each event's notation as that seat sees it, as a JSON string
        #: (:meth:`Round.wire`, :meth:`Round.wire_json`).
        self.wire: list[list[str]] = []


class Round:
    """One round under ``rules`` from ``deal``.

    Args:
        rules: the rule set.
        deal: the hands and boneyard (see :class:`arena.engine.deal.Deal`).
        teams: 4 players as two teams (seats 0+2 v 1+3), where the rules allow it.
        scores: each side's score before the round (in-play points may end the
            game mid-round when a side reaches the target).
        number: the round's number in its game, from 1.
        check: validate the deal against the rules (skip only for deals the
            engine dealt itself).

    Raises:
        DealError: the deal does not fit the rules.
        RulesError: the player count or teams are not allowed.
    """

    # Inside, a hand is a bitmask over tile ids, the line is its two end values
    # and end tiles, and the history is a log of plain tuples: (seat, move, points)
    # for a play, (seat, tile id) for a draw, (seat,) for a pass. The public
    # ``events``, ``line`` and each seat's history are derived from the log when asked
    # for, in a :class:`_Views` made at the first request.
    __slots__ = (
        "_boneyard",
        "_deal",
        "_dealt",
        "_draw_end",
        "_draw_limit",
        "_fives",
        "_hands",
        "_left",
        "_left_tile",
        "_legal",
        "_log",
        "_next_draw",
        "_next_seat",
        "_players",
        "_result",
        "_right",
        "_right_tile",
        "_scores",
        "_seat",
        "_sides",
        "_start_hands",
        "_start_scores",
        "_views",
        "leader",
        "number",
        "rules",
        "teams",
    )

    def __init__(
        self,
        rules: Rules,
        deal: Deal,
        *,
        teams: bool = False,
        scores: Sequence[int] | None = None,
        number: int = 1,
        check: bool = True,
    ) -> None:
        if check:
            rules.check_players(len(deal.hands), teams)
            deal.check(rules)
        self._deal: Deal | None = deal
        self._dealt: tuple[list[int], int, list[int] | None, list[list[int]]] | None = None
        hands = [sum(map(_BIT.__getitem__, map(_ID, hand))) for hand in deal.hands]
        lead_draw = None if deal.lead_draw is None else [t.id for t in deal.lead_draw]
        self._setup(rules, teams, scores, number, hands, list(map(_ID, deal.boneyard)), lead_draw)

    @classmethod
    def dealt(
        cls,
        rules: Rules,
        players: int,
        rng: random.Random,
        *,
        teams: bool = False,
        scores: Sequence[int] | None = None,
        number: int = 1,
    ) -> Round:
        """Shuffle with ``rng``, deal, and start a round: the same deal as
        :func:`arena.engine.deal.deal_round` from the same rng state, made faster.

        Raises:
            RulesError: the player count or teams are not allowed.
        """
        rules.check_players(players, teams)
        lead_draw, ids, thrown_in = shuffle_ids(rules, players, rng)
        size = rules.hand_size(players)
        dealt = players * size
        bit = _BIT.__getitem__
        hands = []  # (a loop: a list comprehension costs a function call more)
        for start in range(0, dealt, size):
            hands.append(sum(map(bit, ids[start : start + size])))
        round_ = cls.__new__(cls)
        round_._deal = None
        round_._dealt = (ids, size, lead_draw, thrown_in)
        round_._setup(rules, teams, scores, number, hands, ids[dealt:], lead_draw)
        return round_

    def _setup(
        self,
        rules: Rules,
        teams: bool,
        scores: Sequence[int] | None,
        number: int,
        hands: list[int],
        boneyard: list[int],
        lead_draw: list[int] | None,
    ) -> None:
        players = len(hands)
        setup = _setup_of(rules, players, teams)
        self.rules = rules
        self.teams = teams
        self.number = number
        self._players = players
        self._sides, self._next_seat, reserve, self._draw_limit, self._fives = setup
        self._scores = list(scores) if scores is not None else [0] * (2 if teams else players)
        self._hands = hands
        self._boneyard = boneyard
        self._next_draw = 0
        self._draw_end = max(0, len(boneyard) - reserve)
        self._left = self._right = self._left_tile = self._right_tile = -1
        self._log: list[tuple[Any, ...]] = []
        self._views: _Views | None = None  # (made at the first request: see _Views)
        self._start_hands = tuple(hands)
        self._start_scores = tuple(self._scores)
        self._result: RoundResult | None = None
        self.leader, self._legal = self._lead(lead_draw)
        self._seat = self.leader

    def _lead(self, lead_draw: list[int] | None) -> tuple[int, tuple[Move, ...]]:
        if lead_draw is not None:
            seat = lead_draw_winner([TILES[t] for t in lead_draw])
            return seat, tuple(_MOVES[t][0] for t in _ids_of(self._hands[seat]))
        # The highest double in any hand leads. The hands hold different tiles, so the
        # hand whose doubles make the largest mask holds the highest double (its top bit).
        best = leader = 0
        for seat, hand in enumerate(self._hands):
            if hand & _DOUBLES > best:
                best, leader = hand & _DOUBLES, seat
        if not best:
            raise DealError("no hand holds a double: this deal must be redealt")
        return leader, (_MOVES[best.bit_length() - 1][0],)

    @property
    def deal(self) -> Deal:
        """The round's deal: every hand, the boneyard order, the lead draw."""
        if self._deal is None:
            assert self._dealt is not None
            ids, size, lead_draw, _ = self._dealt
            self._deal = deal_from_ids(ids, self._players, size, lead_draw)
        return self._deal

    @property
    def redeals(self) -> tuple[Deal, ...]:
        """The deals thrown in before this one (no double in any hand), in order."""
        if self._dealt is None:
            return ()
        _, size, lead_draw, thrown_in = self._dealt
        return tuple(deal_from_ids(ids, self._players, size, lead_draw) for ids in thrown_in)

    # --- queries ----------------------------------------------------------------

    @property
    def players(self) -> int:
        """The number of seats."""
        return self._players

    @property
    def seat(self) -> int | None:
        """The seat to move, or None when the round is over."""
        return None if self._result is not None else self._seat

    @property
    def sides(self) -> tuple[int, ...]:
        """Each seat's side (its team in team play, else the seat)."""
        return self._sides

    @property
    def scores(self) -> tuple[int, ...]:
        """Each side's game score, including points scored so far this round."""
        return tuple(self._scores)

    @property
    def result(self) -> RoundResult | None:
        """How the round ended, or None while it goes on."""
        return self._result

    def is_terminal(self) -> bool:
        """Whether the round is over."""
        return self._result is not None

    def legal_moves(self) -> tuple[Move, ...]:
        """Return the moves of the seat to move, sorted by tile then end; () when over."""
        return self._legal

    def hand(self, seat: int) -> tuple[Tile, ...]:
        """Return the tiles ``seat`` holds, in id order."""
        return tuple(TILES[t] for t in _ids_of(self._hands[seat]))

    def pips(self, seat: int) -> int:
        """Return the pips left in ``seat``'s hand."""
        return _pips_of(self._hands[seat])

    @property
    def events(self) -> list[Event]:
        """Everything that happened so far, in order: plays, draws (with the tile), passes."""
        return self._logged()[:]

    def _view(self) -> _Views:
        """The round's :class:`_Views`, made at the first request."""
        views = self._views
        if views is None:
            views = self._views = _Views()
        return views

    def _logged(self) -> list[Event]:
        """The events so far, kept up to date from the log's new entries (not a copy)."""
        events, log = self._view().events, self._log
        for entry in log[len(events) :]:
            if len(entry) == 3:
                events.append(Play(*entry))
            elif len(entry) == 2:
                events.append(Draw(entry[0], TILES[entry[1]]))
            else:
                events.append(Pass(entry[0]))
        return events

    def _history(self, seat: int) -> tuple[Event, ...]:
        """The events as ``seat`` sees them (others' draws without the tile), kept up to
        date from the new events only: an observation is asked for at every move."""
        events = self._logged()
        views = self._view()
        if not views.seen:
            views.seen = [[] for _ in range(self._players)]
        seen = views.seen[seat]
        for event in events[len(seen) :]:
            seen.append(
                Draw(event.seat, None) if type(event) is Draw and event.seat != seat else event
            )
        return tuple(seen)

    @property
    def line(self) -> tuple[tuple[int, int], ...]:
        """The played tiles from the left end to the right, each as (left half, right half).

        Kept up to date from the log's new entries only (a bot is asked at every move)."""
        views, log = self._view(), self._log
        line, ends = views.line, views.line_ends
        for entry in log[views.line_seen :]:
            if len(entry) != 3:
                continue
            tile, end = entry[1].tile, entry[1].end
            if end is None:
                ends[0], ends[1] = tile.high, tile.low
                line.append((tile.high, tile.low))
            elif end is End.LEFT:
                ends[0] = tile.other(ends[0])
                line.appendleft((ends[0], tile.other(ends[0])))
            else:
                ends[1] = tile.other(ends[1])
                line.append((tile.other(ends[1]), ends[1]))
        views.line_seen = len(log)
        return tuple(line)

    @property
    def ends(self) -> tuple[int, int] | None:
        """The open ends (left, right), or None before the lead."""
        return None if self._left < 0 else (self._left, self._right)

    @property
    def boneyard(self) -> tuple[Tile, ...]:
        """The tiles still in the boneyard, next to be drawn first."""
        return tuple(TILES[t] for t in self._boneyard[self._next_draw :])

    @property
    def undrawn(self) -> int:
        """How many tiles are left in the boneyard (``len(boneyard)``, without making it)."""
        return len(self._boneyard) - self._next_draw

    @property
    def drawable(self) -> int:
        """How many boneyard tiles may still be drawn (the reserve may not)."""
        return max(0, self._draw_end - self._next_draw) if self._draw_limit else 0

    def observation(self, seat: int) -> Observation:
        """Return what ``seat`` may know now: see :class:`arena.engine.observation.Observation`."""
        history = self._history(seat)
        to_move = self._seat if self._result is None else None
        return Observation(
            seat=seat,
            players=self._players,
            teams=self.teams,
            rules=self.rules,
            round=self.number,
            leader=self.leader,
            to_move=to_move,
            hand=self.hand(seat),
            line=self.line,
            ends=self.ends,
            hand_sizes=tuple(h.bit_count() for h in self._hands),
            boneyard_size=len(self._boneyard) - self._next_draw,
            drawable=self.drawable,
            scores=self.scores,
            history=history,
            legal_moves=self._legal if to_move == seat else (),
        )

    def delta(self, seat: int, since: int) -> dict[str, Any]:
        """Protocol v2's request for ``seat`` (docs/protocol.md): the JSON form of
        ``observation(seat).to_delta(since)``, built straight from the round's state.

        A bot is asked at every move, so nothing here is rebuilt from the log: each
        event's JSON form is made once, the line is kept up to date, tiles and moves
        have their notation precomputed. Tuples stand for JSON arrays."""
        views = self._view()
        if not views.seen_json:
            views.seen_json = [[] for _ in range(self._players)]
        seen = views.seen_json[seat]
        log = self._log
        if len(seen) < len(log):
            for entry in log[len(seen) :]:
                if len(entry) == 3:
                    play: dict[str, Any] = {
                        "type": "play",
                        "seat": entry[0],
                        "move": MOVE_TEXT[entry[1].index],
                    }
                    if entry[2]:
                        play["points"] = entry[2]
                    seen.append(play)
                elif len(entry) == 2:
                    mine = entry[0] == seat
                    tile = TILE_TEXT[entry[1]] if mine else None
                    seen.append({"type": "draw", "seat": entry[0], "tile": tile})
                else:
                    seen.append({"type": "pass", "seat": entry[0]})
        to_move = self._seat if self._result is None else None
        hands = self._hands
        return {
            "seat": seat,
            "players": self._players,
            "teams": self.teams,
            "round": self.number,
            "leader": self.leader,
            "to_move": to_move,
            "hand": [TILE_TEXT[t] for t in _ids_of(hands[seat])],
            "line": self.line,
            "ends": None if self._left < 0 else (self._left, self._right),
            "hand_sizes": [h.bit_count() for h in hands],
            "boneyard_size": len(self._boneyard) - self._next_draw,
            "drawable": self.drawable,
            "scores": self._scores[:],
            "legal_moves": [MOVE_TEXT[m.index] for m in self._legal] if to_move == seat else [],
            "history_from": since,
            "events": seen[since:],
        }

    def wire(self, seat: int, since: int, start: bool) -> dict[str, Any]:
        """Protocol v3's request for ``seat`` (docs/protocol.md): the round's events from
        ``since`` on in event notation (``"play 0 6-4L"``, ``"draw 1"``, ``"pass 0"``), the
        legal moves, and with ``start`` the round's state when it began (``"round"``), from
        which the bot's kit folds the events into the observation. :meth:`wire_json` is
        the same request as JSON text."""
        request: dict[str, Any] = {
            "events": [text[1:-1] for text in self._seen_wire(seat)[since:]],
            "legal_moves": self._legal_wire(seat)[1],
        }
        if start:
            request["round"] = self._start(seat)
        return request

    def wire_json(self, seat: int, since: int, start: bool) -> tuple[str, int]:
        """:meth:`wire`'s request as the members of a JSON object (its text without the
        braces, for the caller to add the game's id), and the round's events so far (the
        next request's ``since``). Made of strings made once, the events' from the log
        entry that just happened, the legal moves' for each tuple of moves the engine hands
        out: a request is a few joins, not an encoding."""
        seen = self._seen_wire(seat)
        text = f'"events":[{",".join(seen[since:])}],"legal_moves":{self._legal_wire(seat)[0]}'
        if start:
            text += ',"round":' + _encode(self._start(seat))
        return text, len(seen)

    def _seen_wire(self, seat: int) -> list[str]:
        """Each event's notation as ``seat`` sees it, as a JSON string, made once."""
        views = self._view()
        if not views.wire:
            views.wire = [[] for _ in range(self._players)]
        seen = views.wire[seat]
        log = self._log
        if len(seen) < len(log):
            for entry in log[len(seen) :]:
                if len(entry) == 3:
                    text = _PLAY_WIRE[entry[0]][entry[1].index]
                    seen.append(f'{text[:-1]} {entry[2]}"' if entry[2] else text)
                elif len(entry) == 2:
                    who = entry[0]
                    seen.append(_DRAW_WIRE[who][entry[1]] if who == seat else _HIDDEN_WIRE[who])
                else:
                    seen.append(_PASS_WIRE[entry[0]])
        return seen

    def _legal_wire(self, seat: int) -> tuple[str, list[str]]:
        """``seat``'s legal moves (none unless it is to move): their JSON text and their
        notations, made once for each tuple of moves the engine hands out."""
        if self._result is not None or self._seat != seat:
            return _NO_MOVES
        moves = self._legal
        cached = _LEGAL_WIRE.get(id(moves))
        if cached is not None and cached[0] is moves:
            return cached[1]
        notations = [MOVE_TEXT[m.index] for m in moves]
        made = (_encode(notations), notations)
        if len(_LEGAL_WIRE) >= _MOVES_CACHE_SIZE:
            _LEGAL_WIRE.clear()
        _LEGAL_WIRE[id(moves)] = (moves, made)
        return made

    def _start(self, seat: int) -> dict[str, Any]:
        """The round's state as it began, as ``seat`` sees it (v3's ``"round"``)."""
        hands = self._start_hands
        return {
            "number": self.number,
            "leader": self.leader,
            "hand": [TILE_TEXT[t] for t in _ids_of(hands[seat])],
            "hand_sizes": [h.bit_count() for h in hands],
            "boneyard_size": len(self._boneyard),
            "drawable": self._draw_end if self._draw_limit else 0,
            "scores": list(self._start_scores),
        }

    # --- copies -----------------------------------------------------------------

    def copy(self, rest: Sequence[Tile] | None = None) -> Round:
        """A copy of the round as it stands, which plays on independently of it: the same
        state, events and deal. With ``rest``, the boneyard's undrawn tiles come in that
        order instead: the copy is then exactly the round dealt with that boneyard (its
        ``deal`` says so) and played as this one was, since nothing undrawn has been seen
        (what a rollout over another order of the boneyard starts from).

        Raises:
            DealError: ``rest`` is not the undrawn tiles in some order.
        """
        copy = Round.__new__(Round)
        boneyard = self._boneyard
        deal, dealt = self._deal, self._dealt
        if rest is not None:
            drawn = self._next_draw
            ids = list(map(_ID, rest))
            if sorted(ids) != sorted(boneyard[drawn:]):
                raise DealError("a copy's boneyard must be the undrawn tiles in some order")
            boneyard = boneyard[:drawn] + ids
            base = self.deal
            deal = Deal(base.hands, base.boneyard[:drawn] + tuple(rest), base.lead_draw)
            dealt = None
        copy._deal, copy._dealt = deal, dealt
        copy.rules, copy.teams, copy.number, copy.leader = (
            self.rules,
            self.teams,
            self.number,
            self.leader,
        )
        copy._players, copy._sides, copy._next_seat = self._players, self._sides, self._next_seat
        copy._draw_limit, copy._fives = self._draw_limit, self._fives
        copy._draw_end = self._draw_end
        copy._scores, copy._hands = self._scores[:], self._hands[:]
        copy._boneyard, copy._next_draw = boneyard, self._next_draw
        copy._left, copy._right = self._left, self._right
        copy._left_tile, copy._right_tile = self._left_tile, self._right_tile
        copy._log = self._log[:]
        copy._views = None  # (what is derived from the log is made again when asked for)
        copy._start_hands, copy._start_scores = self._start_hands, self._start_scores
        copy._result, copy._legal, copy._seat = self._result, self._legal, self._seat
        return copy

    # --- rollouts ---------------------------------------------------------------

    def greedy_points(
        self,
        move: Move,
        rest: Sequence[Tile] | None = None,
        swap: tuple[int, int] | None = None,
    ) -> tuple[int, ...]:
        """The round's ``result.points`` when the seat to move plays ``move`` and then every
        seat plays greedy (the heaviest of its legal moves, the first of equals:
        :func:`arena.match.strategies.heaviest`) to the round's end; with ``rest``, the
        boneyard's undrawn tiles in that order (as :meth:`copy`); with ``swap`` ``(i, j)``,
        the undrawn tiles' order with its ``i``-th and ``j``-th (0: the next to be drawn)
        swapped (a ``rest`` that needs no check). Exactly ``copy(rest)``, ``apply(move)``,
        then ``apply(heaviest(legal_moves()))`` until the round is over, without copying the
        round or recording its events; the round itself is unchanged. (The luck of the
        draw's rollouts, :mod:`arena.compete.margins`, take them all at once from a round
        played: :meth:`draw_rollouts`.)

        Raises:
            IllegalMoveError: the round is over or ``move`` is not legal now.
            DealError: ``rest`` is not the undrawn tiles in some order, ``swap`` names a
                place beyond them, or both are given.
        """
        if type(move) is not Move or self._result is not None:
            raise IllegalMoveError(self._illegal_message(move))
        seat = self._seat
        tile = move.tile_id
        end = move.end
        left, right = self._left, self._right
        if end is None:
            if move not in self._legal:
                raise IllegalMoveError(self._illegal_message(move))
        elif not self._hands[seat] & _BIT[tile] & _SUIT[left if end is _LEFT else right]:
            raise IllegalMoveError(self._illegal_message(move))
        boneyard = self._boneyard
        next_draw = self._next_draw
        if rest is not None:
            ids = list(map(_ID, rest))
            if sorted(ids) != sorted(boneyard[next_draw:]):
                raise DealError("a copy's boneyard must be the undrawn tiles in some order")
            boneyard = boneyard[:next_draw] + ids
        if swap is not None:
            first, second = swap
            undrawn = len(boneyard) - next_draw
            if rest is not None or not (0 <= first < undrawn and 0 <= second < undrawn):
                raise DealError(
                    f"a swap of the undrawn tiles takes two places of 0 to {undrawn - 1}"
                    f" and no other order, not {swap}"
                )
            boneyard = boneyard[:]
            first += next_draw
            second += next_draw
            boneyard[first], boneyard[second] = boneyard[second], boneyard[first]
        in_play = [0] * len(self._scores)  # this round's in-play points so far
        if self._fives:
            for entry in self._log:
                if len(entry) == 3 and entry[2]:
                    in_play[self._sides[entry[0]]] += entry[2]
        state = (left, right, self._left_tile, self._right_tile)
        code = 0 if end is None else 1 if end is _LEFT else 2
        hands, scores = self._hands, self._scores
        bits = list(map(_BIT.__getitem__, boneyard))
        return self._greedy_rollout(
            hands, seat, tile, code, state, bits, next_draw, scores, in_play
        )

    def draw_rollouts(self, partners: Callable[[int], Sequence[int]]) -> list[DrawRollouts]:
        """Every tile drawn from the boneyard so far, in order, with the greedy rollouts
        of the round from just before the play it was drawn after (see
        :class:`DrawRollouts`): what the luck of the draw's ``value``
        (:mod:`arena.compete.margins`) needs of a round, read from its log in one pass.

        ``partners(undrawn)`` gives, for a draw with ``undrawn`` tiles left in the boneyard
        (the one drawn included), the places further down (1 to ``undrawn - 1`` from it)
        whose tiles are swapped with it, one rollout each. Each rollout is exactly
        :meth:`greedy_points` of the round as it stood before that play (rebuilt from the
        log: no round is replayed, no event made). One rollout as drawn serves every draw
        after one play, and the draws of the plays after it while they are greedy's; it
        also serves a swap of two tiles the same seat drew in one run, neither fitting.

        Raises:
            DealError: ``partners`` gives a place beyond the boneyard.
        """
        if not self._next_draw:
            return []
        hands = list(self._start_hands)
        # The boneyard as the tiles' bits, as the rollouts take it (a swap is made in it
        # and undone).
        boneyard = list(map(_BIT.__getitem__, self._boneyard))
        scores = list(self._start_scores)
        in_play = [0] * len(scores)
        ends = previous = (-1, -1, -1, -1)  # left, right, left tile, right tile
        next_draw = 0
        drawn: list[DrawRollouts] = []
        # The last play (``seat`` played ``tile`` on ``code``'s end, scoring ``points``),
        # and the round as it stood before it (made at the play's first draw).
        seat = tile = code = points = 0
        rollout: Callable[[], tuple[int, ...]] | None = None  # from before it
        # The last rollout as drawn, and whether it still follows the round: every play
        # since was greedy's, so the round is where that rollout went, as it went there
        # (the same boneyard): a play that draws next has that rollout as drawn too.
        as_drawn: tuple[int, ...] = ()
        follows = False
        # The run of draws under way (one seat's draws in a row, the line's ends unchanged)
        # and ``clear``: the place of its first tile that fits the ends, or where the run must
        # stop without one. A swap of two places of the run before ``clear`` leaves the
        # round after the run as it was (the same tiles, all drawn by the same seat, none
        # fitting), so its rollout is the one as drawn: no rollout is made for it.
        run_drawer = -1
        clear = 0
        draw_limit, draw_end = self._draw_limit, self._draw_end
        for entry in self._log:
            if len(entry) == 3:
                seat, move, points = entry
                tile, end = move.tile_id, move.end
                code = 0 if end is None else 1 if end is _LEFT else 2
                rollout = None
                run_drawer = -1
                if follows:
                    follows = _is_greedy(hands[seat], ends, tile, code)
                hands[seat] ^= _BIT[tile]
                previous = ends
                left, right, left_tile, right_tile = ends
                if code == 1:
                    ends = (_PIPS[tile] - left, right, tile, right_tile)
                elif code == 2:
                    ends = (left, _PIPS[tile] - right, left_tile, tile)
                else:
                    ends = (_HIGH[tile], _LOW[tile], tile, tile)
                if points:
                    scores[self._sides[seat]] += points
                    in_play[self._sides[seat]] += points
            elif len(entry) == 2:
                if rollout is None:  # the play's first draw: nothing was drawn since the play
                    played = (seat, tile, code, points)
                    rollout = self._rollout_before(
                        played, hands, previous, boneyard, next_draw, scores, in_play
                    )
                    if not follows:
                        as_drawn = rollout()
                    follows = True
                drawer, drawn_tile = entry
                left, right = ends[0], ends[1]
                if drawer != run_drawer:  # a run's first draw (as _draw_until_playable's)
                    run_drawer = drawer
                    fits = _SUIT[left] | _SUIT[right]
                    stop = next_draw + draw_limit
                    if stop > draw_end:
                        stop = draw_end
                    clear = next_draw
                    while clear < stop and not fits & boneyard[clear]:
                        clear += 1
                hands[drawer] |= _BIT[drawn_tile]
                undrawn = len(boneyard) - next_draw
                outcomes = [as_drawn]
                for offset in partners(undrawn):
                    if not 0 < offset < undrawn:
                        raise DealError(f"a draw with {undrawn} tiles left has no partner {offset}")
                    other = next_draw + offset  # (swapped for the rollout, then back)
                    if other < clear:
                        outcomes.append(as_drawn)
                        continue
                    boneyard[next_draw], boneyard[other] = boneyard[other], boneyard[next_draw]
                    outcomes.append(rollout())
                    boneyard[next_draw], boneyard[other] = boneyard[other], boneyard[next_draw]
                drawn.append(
                    _draw_rollouts((drawer, drawn_tile, left, right, undrawn, tuple(outcomes)))
                )
                next_draw += 1
                if next_draw == self._next_draw:
                    break
            else:  # a pass ends the run
                run_drawer = -1
        return drawn

    def _rollout_before(
        self,
        played: tuple[int, int, int, int],
        hands: list[int],
        ends: tuple[int, ...],
        boneyard: list[int],
        next_draw: int,
        scores: list[int],
        in_play: list[int],
    ) -> Callable[[], tuple[int, ...]]:
        """:meth:`draw_rollouts`' rollout of a play (``played``: the seat, the tile, its end's
        code as :meth:`_greedy_rollout` takes it, its in-play points) from the round before
        it, made from the round just after it, before any draw: the hands, the ``ends`` (as
        they were), ``boneyard`` (its tiles' bits, in whatever order it is at the call),
        ``next_draw``, the scores and the in-play points."""
        seat, tile, code, points = played
        hands = hands[:]
        hands[seat] ^= _BIT[tile]
        scores, in_play = scores[:], in_play[:]
        if points:
            side = self._sides[seat]
            scores[side] -= points
            in_play[side] -= points
        return partial(
            self._greedy_rollout,
            hands,
            seat,
            tile,
            code,
            ends,
            boneyard,
            next_draw,
            scores,
            in_play,
        )

    def _greedy_rollout(
        self,
        hands: list[int],
        seat: int,
        tile: int,
        code: int,
        ends: tuple[int, ...],
        boneyard: list[int],
        next_draw: int,
        scores: list[int],
        in_play: list[int],
    ) -> tuple[int, ...]:
        """:meth:`greedy_points` from a state given (none of it changed): ``hands``, the
        ends and the ends' tiles ``ends`` (left, right, left tile, right tile: -1 before
        the lead), the ``boneyard`` as its tiles' bits (all a draw needs) drawn up to
        ``next_draw``, each side's ``scores`` and this round's ``in_play`` points; ``seat``
        plays ``tile`` (``code``: 0 the lead, 1 on the left end, 2 on the right), then every
        seat plays greedy."""
        hands = hands[:]
        left, right, left_tile, right_tile = ends
        sides, next_seat = self._sides, self._next_seat
        draw_limit, draw_end = self._draw_limit, self._draw_end
        fives = self._fives
        target = _INF
        if fives:  # (the scores and in-play points change only with fives)
            scores, in_play = scores[:], in_play[:]
            if self.rules.end is _POINTS:
                target = self.rules.wins_needed
        choice = _GREEDY_CHOICE
        pips_of, bit_of, suit_of = _PIPS, _BIT, _SUIT  # (locals: the loop is hot)
        if code == 1:
            left = pips_of[tile] - left
            left_tile = tile
        elif code == 2:
            right = pips_of[tile] - right
            right_tile = tile
        else:
            left, right = _HIGH[tile], _LOW[tile]
            left_tile = right_tile = tile
        # Each end's mask of the tiles that match it, kept with the end.
        left_suit, right_suit = suit_of[left], suit_of[right]
        hand = hands[seat] ^ bit_of[tile]
        while True:  # ``seat`` has just played ``tile``, leaving ``hand``
            hands[seat] = hand
            if fives:
                if left_tile == right_tile:
                    count = pips_of[left_tile]
                else:
                    count = left * _END_WEIGHT[left_tile] + right * _END_WEIGHT[right_tile]
                if count > 0 and count % 5 == 0:
                    side = sides[seat]
                    scores[side] += count // 5
                    in_play[side] += count // 5
                    if scores[side] >= target:
                        return tuple(in_play)  # the game is won in play
            if not hand:
                return self._domino_points(hands, seat, in_play)
            seat = next_seat[seat]
            ends_suit = left_suit | right_suit
            hand = hands[seat]
            playable = hand & ends_suit
            while not playable:  # draw, pass or block, as _settle
                if draw_limit and next_draw < draw_end:
                    # (the draw limit as the place to stop: one test a tile drawn)
                    stop = next_draw + draw_limit
                    if stop > draw_end:
                        stop = draw_end
                    while next_draw < stop:
                        drawn_bit = boneyard[next_draw]
                        next_draw += 1
                        hand |= drawn_bit
                        if ends_suit & drawn_bit:
                            playable = drawn_bit
                            break
                    hands[seat] = hand
                    if playable:
                        break
                    blocked = not next_draw < draw_end
                else:
                    blocked = True
                if blocked:
                    for other in hands:  # (a loop: any() of a generator costs more here)
                        if other & ends_suit:
                            break
                    else:
                        return self._rollout_points(hands, None, in_play)
                seat = next_seat[seat]
                hand = hands[seat]
                playable = hand & ends_suit
            tile = choice.get(playable, -1)
            if tile < 0:
                tile = _heaviest_id(playable)
            bit = bit_of[tile]
            if bit & left_suit:  # greedy's first move of a tile: on the left end if it fits
                left = pips_of[tile] - left
                left_tile = tile
                left_suit = suit_of[left]
            else:
                right = pips_of[tile] - right
                right_tile = tile
                right_suit = suit_of[right]
            hand ^= bit

    def _domino_points(self, hands: list[int], seat: int, in_play: list[int]) -> tuple[int, ...]:
        """:meth:`_rollout_points` of a domino by ``seat``, shorter: every end of a domino
        scores from its opponents' pips alone (round_points with the winner's own count 0:
        ``opponents`` for every scoring but ROUNDED_FIVES' and ROUND_WINS'), and the pips
        of hands are those of their union (the hands hold different tiles), read once."""
        others = 0
        for hand in hands:
            others |= hand
        if self.teams:  # (seats 0+2 v 1+3: the partner's tiles do not count)
            others ^= hands[seat ^ 2]
        rules = self.rules
        scoring = rules.scoring
        if scoring is _ROUNDED_FIVES:
            gained = (_pips_of(others) + 2) // 5
        elif scoring is _ROUND_WINS:
            gained = 1 if rules.end is _ROUNDS else 0
        else:
            gained = _pips_of(others)
        points = in_play[:] if self._fives else [0] * len(in_play)
        points[self._sides[seat]] += gained
        return tuple(points)

    def _rollout_points(
        self, hands: list[int], domino: int | None, in_play: list[int]
    ) -> tuple[int, ...]:
        """:meth:`greedy_points`'s end: the side ``domino`` went out (None: the round is
        blocked) with ``hands`` left; what :meth:`_finish_domino` or
        :meth:`_finish_blocked` would report, this round's in-play points added."""
        sides = self._sides
        if domino is not None and self.rules.scoring is _ROUND_WINS:
            side_pips = [0] * len(in_play)  # (a round won reads no pips)
        elif len(in_play) == len(hands):  # a side a seat
            side_pips = list(map(_pips_of, hands))
        else:
            side_pips = [0] * len(in_play)
            for seat, side in enumerate(sides):
                side_pips[side] += _pips_of(hands[seat])
        if domino is not None:
            side_pips[domino] = 0
            winner: int | None = domino
        else:
            winner = _blocked_winner(side_pips, hands, sides)
        points = in_play[:] if self._fives else [0] * len(in_play)
        if winner is not None:
            points[winner] += self._end_points(winner, side_pips)
        return tuple(points)

    # --- the state machine ------------------------------------------------------

    def apply(self, move: Move) -> None:
        """Play ``move`` for the seat to move, then draw, pass, and score as the rules say.

        Raises:
            IllegalMoveError: the round is over or the move is not legal now.
        """
        # Legal = the tile is in hand and matches the end it goes on: before a
        # draw nothing matched, after it only the drawn tile does. Leads are listed.
        if type(move) is not Move or self._result is not None:
            raise IllegalMoveError(self._illegal_message(move))
        seat = self._seat
        tile = move.tile_id
        bit = _BIT[tile]
        hand = self._hands[seat]
        end = move.end
        if end is _RIGHT:
            right = self._right
            if not hand & bit & _SUIT[right]:
                raise IllegalMoveError(self._illegal_message(move))
            self._right = _PIPS[tile] - right  # the half facing out
            self._right_tile = tile
        elif end is _LEFT:
            left = self._left
            if not hand & bit & _SUIT[left]:
                raise IllegalMoveError(self._illegal_message(move))
            self._left = _PIPS[tile] - left
            self._left_tile = tile
        else:
            if move not in self._legal:
                raise IllegalMoveError(self._illegal_message(move))
            self._left, self._right = _HIGH[tile], _LOW[tile]
            self._left_tile = self._right_tile = tile
        hand ^= bit
        self._hands[seat] = hand
        if not self._fives:
            self._log.append((seat, move, 0))
        elif self._score_fives(seat, move):
            return
        if not hand:
            self._finish_domino(seat)
            return
        seat = self._next_seat[seat]
        self._seat = seat
        # Inlined _moves_for: this is the engine's hottest line.
        hand = self._hands[seat]
        key = (hand & _SUIT[self._left]) << _KEY_SHIFT | (hand & _SUIT[self._right])
        if not key:
            self._settle()
            return
        moves = _MOVES_CACHE.get(key)
        self._legal = moves if moves is not None else self._moves_for(hand)

    def _score_fives(self, seat: int, move: Move) -> bool:
        """Log a ``muggins`` play with its in-play points; True when they end the game."""
        points = fives_points(self._count())
        self._log.append((seat, move, points))
        if not points:
            return False
        side = self._sides[seat]
        self._scores[side] += points
        if self.rules.end is _POINTS and self._scores[side] >= self.rules.wins_needed:
            self._finish(_TARGET, side, seat, [0] * len(self._scores))
            return True
        if not self._hands[seat]:
            self._finish_domino(seat)
            return True
        return False

    def _count(self) -> int:
        """The ``muggins`` count: both open ends, a double on an end counting both halves."""
        left_tile, right_tile = self._left_tile, self._right_tile
        if left_tile == right_tile:  # a single tile on the table: its pip total
            return _PIPS[left_tile]
        left = self._left * (2 if _HIGH[left_tile] == _LOW[left_tile] else 1)
        return left + self._right * (2 if _HIGH[right_tile] == _LOW[right_tile] else 1)

    def _moves_for(self, hand: int) -> tuple[Move, ...]:
        """The moves of ``hand`` on the current ends, sorted by tile then end."""
        key = (hand & _SUIT[self._left]) << _KEY_SHIFT | (hand & _SUIT[self._right])
        moves = _MOVES_CACHE.get(key)
        if moves is None:
            moves = _list_moves(key >> _KEY_SHIFT, key & _KEY_MASK)
            if len(_MOVES_CACHE) >= _MOVES_CACHE_SIZE:
                _MOVES_CACHE.clear()
            _MOVES_CACHE[key] = moves
        return moves

    def _settle(self) -> None:
        """The seat to move cannot play: it draws, or passes, or the round is blocked."""
        ends = _SUIT[self._left] | _SUIT[self._right]  # the tiles that match an open end
        while True:
            seat = self._seat
            may_draw = self._draw_limit and self._next_draw < self._draw_end
            if may_draw:
                if self._draw_until_playable(seat, ends):
                    return
                may_draw = self._next_draw < self._draw_end  # (it drew up to the limit)
            if not may_draw:
                # No seat may draw: blocked when no hand plays (RULES.md: it ends at once).
                for hand in self._hands:
                    if hand & ends:
                        break
                else:
                    self._finish_blocked()
                    return
            self._log.append((seat,))
            seat = self._next_seat[seat]
            self._seat = seat
            hand = self._hands[seat]
            if hand & ends:  # the next seat plays: its moves, as apply finds them
                key = (hand & _SUIT[self._left]) << _KEY_SHIFT | (hand & _SUIT[self._right])
                moves = _MOVES_CACHE.get(key)
                self._legal = moves if moves is not None else self._moves_for(hand)
                return

    def _draw_until_playable(self, seat: int, ends: int) -> bool:
        """Draw for ``seat`` under the draw rule; True when a drawn tile plays.

        ``ends`` is the mask of tiles that match an open end.
        """
        drawn = 0
        while drawn < self._draw_limit and self._next_draw < self._draw_end:
            tile = self._boneyard[self._next_draw]
            self._next_draw += 1
            drawn += 1
            self._hands[seat] |= _BIT[tile]
            self._log.append((seat, tile))
            if ends >> tile & 1:
                # Before the draw nothing played, so only the drawn tile can.
                self._legal = self._moves_for(_BIT[tile])
                return True
        return False

    def _side_pips(self) -> tuple[list[int], list[int]]:
        """Each seat's pips left in hand, and each side's (a new list: callers change it)."""
        pips = list(map(_pips_of, self._hands))
        if not self.teams and len(self._scores) == self._players:  # each seat its own side
            return pips, pips[:]
        side_pips = [0] * len(self._scores)
        for seat, side in enumerate(self._sides):
            side_pips[side] += pips[seat]
        return pips, side_pips

    def _finish_domino(self, seat: int) -> None:
        # The player who goes out wins the round, even against 0-0 in hand.
        pips, side_pips = self._side_pips()
        side = self._sides[seat]
        points = [0] * len(self._scores)
        # Whatever a partner holds does not count against the side that went out.
        side_pips[side] = 0
        points[side] = self._end_points(side, side_pips)
        self._finish(_DOMINO, side, seat, points, pips)

    def _finish_blocked(self) -> None:
        pips, side_pips = self._side_pips()
        winner = _blocked_winner(side_pips, self._hands, self._sides)
        points = [0] * len(self._scores)
        if winner is not None:
            points[winner] = self._end_points(winner, side_pips)
        self._finish(_BLOCKED, winner, None, points, pips)

    def _end_points(self, winner: int, side_pips: Sequence[int]) -> int:
        """What side ``winner`` scores at the round's end (docs/rules.md "Scoring")."""
        if self.rules.scoring is _ROUND_WINS:
            # No points: in a game won by rounds the 1 counts the round won; in a points
            # game (in-play fives only) the round's end adds nothing.
            return 1 if self.rules.end is _ROUNDS else 0
        return round_points(self.rules.scoring, winner, side_pips)

    def _finish(
        self,
        termination: Termination,
        winner: int | None,
        seat: int | None,
        points: list[int],
        pips: list[int] | None = None,
    ) -> None:
        if termination is not _TARGET:
            scores = self._scores
            for side, gained in enumerate(points):
                scores[side] += gained
        if pips is None:
            pips = [_pips_of(hand) for hand in self._hands]
        if self._fives:
            # Report this round's in-play points too (already in the scores).
            if termination is _TARGET:
                points = [0] * len(self._scores)
            for entry in self._log:
                if len(entry) == 3 and entry[2]:
                    points[self._sides[entry[0]]] += entry[2]
        self._result = _round_result(termination, winner, seat, tuple(pips), tuple(points))
        self._legal = ()

    def _illegal_message(self, move: object) -> str:
        if self._result is not None:
            return f"illegal move {move}: round {self.number} is over"
        ends = "none (this is the lead)" if self._left < 0 else f"{self._left} and {self._right}"
        legal = ", ".join(map(str, self._legal))
        return (
            f"illegal move {move} for seat {self._seat}: open ends {ends}; "
            f"hand {' '.join(map(str, self.hand(self._seat)))}; legal: {legal}"
        )


_INF = 1 << 30

#: The setters of RoundResult's slots, in its fields' order (checked here: a field added
#: must be set in :func:`_round_result` too).
_SET_TERMINATION, _SET_WINNER, _SET_SEAT, _SET_PIPS, _SET_POINTS = (
    RoundResult.__dict__[field.name].__set__ for field in fields(RoundResult)
)


def _round_result(
    termination: Termination,
    winner: int | None,
    seat: int | None,
    pips: tuple[int, ...],
    points: tuple[int, ...],
) -> RoundResult:
    """``RoundResult(termination, winner, seat, pips, points)``, made in half the time: a
    frozen dataclass's ``__init__`` sets each field through ``object.__setattr__``, and
    every round ends by making one (0.4 us of a round's 35 in ``benchmarks/engine.py``)."""
    result: RoundResult = object.__new__(RoundResult)
    _SET_TERMINATION(result, termination)
    _SET_WINNER(result, winner)
    _SET_SEAT(result, seat)
    _SET_PIPS(result, pips)
    _SET_POINTS(result, points)
    return result


# The moves of a hand depend only on its tiles that match the left end and those
# that match the right end: a bounded cache of the sorted lists, keyed by both.
_KEY_SHIFT = len(TILES)
_KEY_MASK = (1 << _KEY_SHIFT) - 1
_MOVES_CACHE: dict[int, tuple[Move, ...]] = {}
_MOVES_CACHE_SIZE = 1 << 17  # about 20 MB at most; double-six games use under 70,000


#: The JSON text and notations of a tuple of legal moves, by the tuple's id (the entry holds
#: the tuple, so its id is not reused while cached): the moves cache hands out the same
#: tuples again and again.
_LEGAL_WIRE: dict[int, tuple[tuple[Move, ...], tuple[str, list[str]]]] = {}
_NO_MOVES: tuple[str, list[str]] = ("[]", [])
_encode = json.JSONEncoder(separators=(",", ":"), check_circular=False).encode


def _list_moves(on_left: int, on_right: int) -> tuple[Move, ...]:
    moves = []
    playable = on_left | on_right
    while playable:
        bit = playable & -playable
        tile_moves = _MOVES[bit.bit_length() - 1]
        if on_left & bit:
            moves.append(tile_moves[1])
        if on_right & bit:
            moves.append(tile_moves[2])
        playable ^= bit
    return tuple(moves)


#: Event notation (protocol v3) as JSON strings, made once: _PLAY_WIRE[seat][move.index] is
#: ``"play SEAT MOVE"``; _DRAW_WIRE[seat][tile id] a draw seen by the drawer,
#: _HIDDEN_WIRE[seat] one seen by the others; _PASS_WIRE[seat] a pass.
_SEATS = range(MAX_PLAYERS)
_PLAY_WIRE = [tuple(f'"play {seat} {text}"' for text in MOVE_TEXT) for seat in _SEATS]
_DRAW_WIRE = [tuple(f'"draw {seat} {text}"' for text in TILE_TEXT) for seat in _SEATS]
_HIDDEN_WIRE = [f'"draw {seat}"' for seat in _SEATS]
_PASS_WIRE = [f'"pass {seat}"' for seat in _SEATS]


def _ids_of(mask: int) -> list[int]:
    ids = []
    while mask:
        bit = mask & -mask
        ids.append(bit.bit_length() - 1)
        mask ^= bit
    return ids


#: A hand's pips by table, :data:`_PIP_CHUNK` tile ids at a time: ``_PIP_TABLES[k][v]`` is
#: the pips of the tiles ``k * _PIP_CHUNK + i`` for each bit ``i`` of ``v`` (six times
#: faster than a loop over a hand's tiles; a rollout's end reads every hand).
_PIP_CHUNK = 12
_PIP_CHUNK_MASK = (1 << _PIP_CHUNK) - 1


def _pip_table(first: int) -> list[int]:
    table = [0]
    for tile in range(first, min(first + _PIP_CHUNK, len(TILES))):
        table += [pips + _PIPS[tile] for pips in table]
    return table + [0] * ((1 << _PIP_CHUNK) - len(table))


_PIP_TABLES = [_pip_table(first) for first in range(0, len(TILES), _PIP_CHUNK)]


_PIP_TABLE_0, _PIP_TABLE_1, _PIP_TABLE_2 = _PIP_TABLES[:3]
_PIP_SHORT = 1 << 3 * _PIP_CHUNK  # a mask below it: three tables, no loop


def _pips_of(mask: int) -> int:
    if mask < _PIP_SHORT:
        return (
            _PIP_TABLE_0[mask & _PIP_CHUNK_MASK]
            + _PIP_TABLE_1[mask >> _PIP_CHUNK & _PIP_CHUNK_MASK]
            + _PIP_TABLE_2[mask >> 2 * _PIP_CHUNK]
        )
    total = 0
    for table in _PIP_TABLES:
        if not mask:
            break
        total += table[mask & _PIP_CHUNK_MASK]
        mask >>= _PIP_CHUNK
    return total


def _lowest_tile_pips(mask: int) -> int:
    lowest = _INF
    while mask:
        bit = mask & -mask
        lowest = min(lowest, _PIPS[bit.bit_length() - 1])
        mask ^= bit
    return lowest


def _blocked_winner(side_pips: list[int], hands: Sequence[int], sides: Sequence[int]) -> int | None:
    """A blocked round's winning side: lowest pips; tied: the lowest single tile held; still
    tied: drawn (None)."""
    lowest = min(side_pips)
    if side_pips.count(lowest) == 1:
        return side_pips.index(lowest)
    tied = [side for side, pips in enumerate(side_pips) if pips == lowest]
    lowest_tile = [_INF] * len(side_pips)
    for seat, side in enumerate(sides):
        lowest_tile[side] = min(lowest_tile[side], _lowest_tile_pips(hands[seat]))
    best = min(lowest_tile[side] for side in tied)
    holders = [side for side in tied if lowest_tile[side] == best]
    return holders[0] if len(holders) == 1 else None


#: A ``muggins`` count's weight of an end's tile: a double counts both halves.
_END_WEIGHT = [2 if t.is_double else 1 for t in TILES]
#: Greedy's tile among a mask of playable tiles (:func:`_heaviest_id`), by the mask.
_GREEDY_CHOICE: dict[int, int] = {}
_GREEDY_CHOICE_SIZE = 1 << 16


def _is_greedy(hand: int, ends: tuple[int, ...], tile: int, code: int) -> bool:
    """Whether playing ``tile`` (``code``: 1 on the left end, 2 on the right; 0, the lead,
    is nobody's rollout) from ``hand`` on ``ends`` (left, right, ...) is greedy's move:
    the heaviest tile that plays, on the left end when it fits both."""
    left, right = ends[0], ends[1]
    playable = hand & (_SUIT[left] | _SUIT[right])
    greedy = _GREEDY_CHOICE.get(playable, -1)
    if greedy < 0:
        greedy = _heaviest_id(playable)
    return tile == greedy and code == (1 if _BIT[tile] & _SUIT[left] else 2)


def _heaviest_id(playable: int) -> int:
    """The heaviest tile of the mask, the lowest id of equals (the first of the legal moves,
    which are sorted by tile): greedy's tile. Cached in :data:`_GREEDY_CHOICE`."""
    best, best_pips, mask = -1, -1, playable
    while mask:
        bit = mask & -mask
        tile = bit.bit_length() - 1
        if _PIPS[tile] > best_pips:
            best, best_pips = tile, _PIPS[tile]
        mask ^= bit
    if len(_GREEDY_CHOICE) >= _GREEDY_CHOICE_SIZE:
        _GREEDY_CHOICE.clear()
    _GREEDY_CHOICE[playable] = best
    return best
