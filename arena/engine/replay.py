"""A game record stepped through: every state of every round, as the engine had it.

:func:`replay_record` verifies a record and steps through it in one simulation by the
engine (the verification's, watched: :class:`~arena.engine.records.PlayWatcher`), and
returns a :class:`Replay`: for each round, one :class:`Frame` per step (step 0 is the deal,
step ``k`` the state after the round's ``k``-th event). A frame holds the line, every
hand, the boneyard count, the scores, the seat to move and, where a play is due,
the legal moves the engine offered. :meth:`Frame.observation` is a seat's view of
that state, the same :class:`~arena.engine.observation.Observation` the bot at that
seat received when it was asked to move. The replay viewer (web) and ``arena replay
show`` (CLI) draw frames; nothing here draws.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from arena.engine.events import Draw, Event, Pass, Play, Termination
from arena.engine.observation import Observation
from arena.engine.records import verified_game
from arena.engine.round import Round
from arena.engine.rules import Rules, rules_from_record
from arena.engine.tiles import End, Move, Tile

__all__ = ["Frame", "Replay", "RoundReplay", "frames_of", "replay_record"]


@dataclass(frozen=True, slots=True)
class Frame:
    """One state of a round.

    Attributes:
        round: the round's number, from 1.
        step: 0 for the deal, ``k`` after the round's ``k``-th event.
        event: the record's event that led here (None at step 0).
        line: the played tiles from the left end to the right, as (left half, right half).
        lead: the index in ``line`` of the round's first tile (-1 before the lead).
        placed: the index in ``line`` of the tile this step played, or None.
        hands: every seat's tiles, in id order.
        boneyard: how many tiles are in the boneyard.
        drawable: how many of them may still be drawn.
        scores: each side's score.
        to_move: the seat whose turn it is; None once the round is over.
        legal_moves: when a play is due, the moves the engine offered the seat to move.
        history: the round's events so far.
    """

    round: int
    step: int
    event: Mapping[str, Any] | None
    line: tuple[tuple[int, int], ...]
    lead: int
    placed: int | None
    hands: tuple[tuple[Tile, ...], ...]
    boneyard: int
    drawable: int
    scores: tuple[int, ...]
    to_move: int | None
    legal_moves: tuple[Move, ...]
    history: tuple[Event, ...]
    leader: int
    rules: Rules
    teams: bool

    @property
    def ends(self) -> tuple[int, int] | None:
        """The open ends (left, right), or None before the lead."""
        return (self.line[0][0], self.line[-1][1]) if self.line else None

    def observation(self, seat: int) -> Observation:
        """What ``seat`` knew in this state: its own hand, counts of the others', the
        public history (others' draws without the tile), and its legal moves when the
        play was its own."""
        history = tuple(
            Draw(e.seat, None) if type(e) is Draw and e.seat != seat else e for e in self.history
        )
        return Observation(
            seat=seat,
            players=len(self.hands),
            teams=self.teams,
            rules=self.rules,
            round=self.round,
            leader=self.leader,
            to_move=self.to_move,
            hand=self.hands[seat],
            line=self.line,
            ends=self.ends,
            hand_sizes=tuple(len(hand) for hand in self.hands),
            boneyard_size=self.boneyard,
            drawable=self.drawable,
            scores=self.scores,
            history=history,
            legal_moves=self.legal_moves if self.to_move == seat else (),
        )


@dataclass(frozen=True, slots=True)
class RoundReplay:
    """One round's frames, its result (None when the game stopped inside it) and the
    scores after it."""

    number: int
    leader: int
    frames: tuple[Frame, ...]
    result: Mapping[str, Any] | None
    scores: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Replay:
    """A verified game record, stepped through.

    Attributes:
        record: the record itself.
        rules: its rule set.
        players, teams, seats: the seat count, team play, each seat's name.
        rounds: every round's frames.
        result: the record's result (with ``verdict`` when a bot forfeited).
    """

    record: Mapping[str, Any]
    rules: Rules
    players: int
    teams: bool
    seats: tuple[str, ...]
    rounds: tuple[RoundReplay, ...]
    result: Mapping[str, Any] | None

    @property
    def verdict(self) -> Mapping[str, Any] | None:
        """The forfeit's verdict (seat, termination, message, maybe stderr), or None."""
        verdict = (self.result or {}).get("verdict")
        return verdict if isinstance(verdict, Mapping) else None

    @property
    def fault(self) -> tuple[int, int] | None:
        """(round, step) of the state in which a bot forfeited, or None."""
        termination = (self.result or {}).get("termination")
        if termination is None or not Termination(termination).is_fault:
            return None
        last = self.rounds[-1]
        return last.number, len(last.frames) - 1

    @property
    def steps(self) -> int:
        """The number of frames in the whole game."""
        return sum(len(r.frames) for r in self.rounds)

    def frame(self, round_number: int, step: int) -> Frame:
        """The frame at ``step`` of round ``round_number``, both clamped to the game."""
        round_ = self.rounds[min(max(round_number, 1), len(self.rounds)) - 1]
        return round_.frames[min(max(step, 0), len(round_.frames) - 1)]

    def score_timeline(self) -> list[tuple[int, ...]]:
        """Each side's score at the start and after every round (in-play points included)."""
        start = tuple(0 for _ in self.rounds[0].scores)
        return [start, *(r.scores for r in self.rounds)]


@dataclass(slots=True)
class _RoundStart:
    """What the verification saw of one round: its state when dealt, and at each play the
    moves offered before it and the line after it."""

    scores: tuple[int, ...]
    drawable: int
    legal: dict[int, tuple[Move, ...]] = field(default_factory=dict)
    lines: dict[int, tuple[tuple[int, int], ...]] = field(default_factory=dict)


@dataclass(slots=True)
class _Watcher:
    """A :class:`~arena.engine.records.PlayWatcher` keeping each round's :class:`_RoundStart`."""

    rounds: list[_RoundStart] = field(default_factory=list)

    def round_started(self, round_: Round) -> None:
        self.rounds.append(_RoundStart(round_.scores, round_.drawable))

    def played(self, round_: Round, position: int, legal: tuple[Move, ...]) -> None:
        current = self.rounds[-1]
        current.legal[position] = legal
        current.lines[position] = round_.line


def replay_record(record: Mapping[str, Any]) -> Replay:
    """Verify ``record`` and step through it (one simulation of the game).

    Raises:
        ParseError: the record does not verify (the message says where).
    """
    watcher = _Watcher()
    game = verified_game(record, watcher)
    rules_data = record["rules"]
    rules = rules_from_record(rules_data["name"], rules_data["params"])
    rounds_data: list[Mapping[str, Any]] = record["rounds"]
    rounds = tuple(
        _replay_round(game.rounds[index], rules, game.teams, game.sides, data, start)
        for index, (data, start) in enumerate(zip(rounds_data, watcher.rounds, strict=True))
    )
    return Replay(
        record=record,
        rules=rules,
        players=record["players"],
        teams=record["teams"],
        seats=tuple(record["seats"]),
        rounds=rounds,
        result=record.get("result"),
    )


def _replay_round(
    round_: Round,
    rules: Rules,
    teams: bool,
    sides: Sequence[int],
    data: Mapping[str, Any],
    start: _RoundStart,
) -> RoundReplay:
    number = round_.number
    hands = [set(hand) for hand in round_.deal.hands]
    boneyard, drawable = len(round_.deal.boneyard), start.drawable
    scores = list(start.scores)
    line: tuple[tuple[int, int], ...] = ()
    lead = -1
    recorded: list[Mapping[str, Any]] = data["events"]
    legal, lines = start.legal, start.lines
    events = round_.events
    final_moves = () if round_.is_terminal() else round_.legal_moves()

    def frame(step: int, event: Mapping[str, Any] | None, placed: int | None) -> Frame:
        to_move = recorded[step]["seat"] if step < len(recorded) else None
        if step == len(recorded) and not round_.is_terminal():
            to_move = round_.seat
        moves = legal.get(step, final_moves if step == len(recorded) else ())
        return Frame(
            round=number,
            step=step,
            event=event,
            line=line,
            lead=lead,
            placed=placed,
            hands=tuple(tuple(sorted(hand, key=_tile_id)) for hand in hands),
            boneyard=boneyard,
            drawable=drawable,
            scores=tuple(scores),
            to_move=to_move,
            legal_moves=moves,
            history=tuple(events[:step]),
            leader=round_.leader,
            rules=rules,
            teams=teams,
        )

    frames = [frame(0, None, None)]
    for position, event in enumerate(events):
        placed = None
        if type(event) is Play:
            hands[event.seat].discard(event.move.tile)
            line = lines[position]
            if event.move.end is End.LEFT:
                lead += 1
                placed = 0
            elif event.move.end is None:
                lead = placed = 0
            else:
                placed = len(line) - 1
            scores[sides[event.seat]] += event.points
        elif type(event) is Draw:
            assert event.tile is not None
            hands[event.seat].add(event.tile)
            boneyard -= 1
            drawable = max(0, drawable - 1)
        else:
            assert type(event) is Pass
        frames.append(frame(position + 1, recorded[position], placed))
    result = data.get("result")
    if result is not None:
        frames[-1] = replace(frames[-1], scores=tuple(data["scores"]))
    return RoundReplay(
        number=number,
        leader=round_.leader,
        frames=tuple(frames),
        result=result,
        scores=tuple(data["scores"]) if result is not None else tuple(scores),
    )


def _tile_id(tile: Tile) -> int:
    return tile.id


def frames_of(replay: Replay) -> Sequence[Frame]:
    """Every frame of the game, in order."""
    return [frame for round_ in replay.rounds for frame in round_.frames]
