"""The replay viewer's pieces: which state to show, what to say about it, and the game-wide
pictures (the timeline with its marks, the score across rounds).

Every state is the engine's own (:mod:`arena.engine.replay`); the board is drawn by
:mod:`web.board`. A state is addressed by ``round``, ``step`` and ``seat`` (the view: a
seat's number, or None for every hand face up); the page and its fragment both render
it, so a deep link works without JavaScript, and the script only fetches other states.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from markupsafe import Markup, escape

from arena.engine.replay import Frame, Replay
from arena.engine.tiles import Move, Tile
from web.board import hand_svg, line_svg

__all__ = [
    "Position",
    "PositionError",
    "SeatView",
    "board",
    "describe",
    "divergence",
    "frames_per_round",
    "marks",
    "navigation",
    "parse_position",
    "score_svg",
    "seat_views",
    "table",
    "timeline_svg",
]

#: Width of the timeline's picture, in its own units.
TIMELINE_WIDTH = 1000
#: Colours of each side's line in the score chart (CSS classes side0..side4).
SIDES = 5


class PositionError(ValueError):
    """A query parameter that does not address a state."""


@dataclass(frozen=True, slots=True)
class Position:
    """A state of a game and the view of it: ``seat`` None shows every hand."""

    round: int
    step: int
    seat: int | None

    def query(self, **changes: int | None) -> dict[str, int]:
        """The query string's parameters of this position with ``changes``."""
        values = {"round": self.round, "step": self.step, "seat": self.seat, **changes}
        return {key: value for key, value in values.items() if value is not None}


def _whole(args: Mapping[str, str], name: str, limit: int, low: int = 0) -> int | None:
    text = args.get(name, "").strip()
    if not text:
        return None
    if not text.isdigit() or not low <= int(text) <= limit:
        raise PositionError(f"{name} must be a whole number from {low} to {limit}, not {text!r}")
    return int(text)


def parse_position(
    args: Mapping[str, str],
    frames: Sequence[int],
    players: int,
    opening: tuple[int, int] | None = None,
) -> Position:
    """The position the query asks for: ``round`` (from 1), ``step`` (from 0) and ``seat``
    (a seat's number, or absent/``all`` for every hand), in a game whose rounds have
    ``frames[r]`` states. Without a round the view opens at ``opening`` (a forfeit, a
    divergence) or the first state; a step past its round's end means its last state.

    Raises:
        PositionError: a parameter out of range, or not a number.
    """
    seat_text = args.get("seat", "").strip()
    seat = None if seat_text in ("", "all") else _whole(args, "seat", players - 1)
    number = _whole(args, "round", len(frames), 1)
    if number is None and opening is not None and "step" not in args:
        return Position(opening[0], opening[1], seat)
    number = number or 1
    step = _whole(args, "step", 100_000)
    return Position(number, min(step or 0, frames[number - 1] - 1), seat)


def navigation(frames: Sequence[int], position: Position) -> dict[str, Any]:
    """The links to the first, previous, next and last states (None where there is none),
    the state's index in the whole game and the number of states."""
    total = sum(frames)
    index = sum(frames[: position.round - 1]) + position.step

    def href(at: int) -> str:
        number, step = 1, at
        while step >= frames[number - 1]:
            step -= frames[number - 1]
            number += 1
        return "?" + urlencode(position.query(round=number, step=step))

    return {
        "index": index,
        "total": total,
        "nav": {
            "first": href(0),
            "prev": href(index - 1) if index else None,
            "next": href(index + 1) if index + 1 < total else None,
            "last": href(total - 1),
        },
    }


def table(replay: Replay, position: Position, prefix: str = "") -> dict[str, Any]:
    """One game's state at ``position`` (clamped to the game): the frame, its board, each
    seat's row, whether it is its round's last state. ``prefix`` keeps the ids of the
    pictures' shared pips apart from another table's on the same page."""
    frame = replay.frame(position.round, position.step)
    round_ = replay.rounds[frame.round - 1]
    return {
        "replay": replay,
        "frame": frame,
        "round": round_,
        "last_step": frame.step == len(round_.frames) - 1,
        "board": board(frame, prefix),
        "hands": seat_views(replay, frame, position.seat, prefix),
    }


def _tile(tile: Tile) -> tuple[int, int]:
    return (tile.high, tile.low)


def describe(event: Mapping[str, Any] | None, seats: Sequence[str]) -> str:
    """One line about an event: ``seat 1 (greedy) played 6-4 on the right``."""
    if event is None:
        return "The deal."
    seat = event["seat"]
    who = f"Seat {seat} ({seats[seat]})"
    if event["type"] == "play":
        move = Move.parse(event["move"])
        where = {None: "to lead", "L": "on the left", "R": "on the right"}[
            None if move.end is None else move.end.value
        ]
        points = f", scoring {event['points']}" if event.get("points") else ""
        return f"{who} played {move.tile} {where}{points}."
    if event["type"] == "draw":
        tile = event.get("tile")
        return f"{who} drew {tile}." if tile else f"{who} drew a tile."
    return f"{who} passed."


@dataclass(frozen=True, slots=True)
class SeatView:
    """One seat's row beside the board, as the view shows it."""

    seat: int
    name: str
    team: int | None
    count: int
    score: int
    to_move: bool
    hand: Markup
    legal: tuple[str, ...]


def seat_views(replay: Replay, frame: Frame, view: int | None, prefix: str = "") -> list[SeatView]:
    """Each seat's row. With every hand shown (``view`` None), the state's hands and the
    seat to move's legal moves. In a seat's view, exactly what that seat's bot was given:
    the rows come from its :class:`~arena.engine.observation.Observation` (its own hand and
    legal moves, the others' hand sizes only)."""
    seen = None if view is None else frame.observation(view)
    rows = []
    for seat in range(len(frame.hands)):
        to_move = frame.to_move == seat
        hidden = seen is not None and seat != view
        if seen is None:
            tiles: tuple[Tile, ...] | None = frame.hands[seat]
            legal = frame.legal_moves if to_move else ()
            count = len(frame.hands[seat])
        else:
            tiles = None if hidden else seen.hand
            legal = () if hidden else seen.legal_moves
            count = seen.hand_sizes[seat]
        hand = hand_svg(
            count if tiles is None else [_tile(t) for t in tiles],
            highlight={_tile(move.tile) for move in legal},
            label=f"Seat {seat}'s hand",
            ids=f"{prefix}h{seat}",
        )
        rows.append(
            SeatView(
                seat=seat,
                name=replay.seats[seat],
                team=seat % 2 if replay.teams else None,
                count=count,
                score=frame.scores[seat % 2 if replay.teams else seat],
                to_move=to_move,
                hand=Markup(hand),
                legal=tuple(str(move) for move in legal),
            )
        )
    return rows


def board(frame: Frame, prefix: str = "") -> Markup:
    """The line as the engine had it, the tile this step played highlighted."""
    return Markup(line_svg(frame.line, frame.lead, placed=frame.placed, ids=f"{prefix}l"))


def marks(replay: Replay) -> dict[str, list[tuple[int, int]]]:
    """The states worth a mark on the timeline: after draws, passes and scoring plays;
    the forfeit."""
    found: dict[str, list[tuple[int, int]]] = {"draw": [], "pass": [], "score": [], "forfeit": []}
    for round_ in replay.rounds:
        for frame in round_.frames[1:]:
            event = frame.event or {}
            kind = "score" if event.get("points") else str(event.get("type"))
            if kind in found:
                found[kind].append((frame.round, frame.step))
    if replay.fault is not None:
        found["forfeit"].append(replay.fault)
    return found


def timeline_svg(
    frames: Sequence[int], position: Position, found: Mapping[str, Sequence[tuple[int, int]]]
) -> Markup:
    """The whole game as a bar: a mark for each round's start (a link to it) and for each
    state in ``found`` by kind (draw, pass, score, forfeit, diverge); the current state's
    marker."""
    total = max(sum(frames) - 1, 1)
    starts = [sum(frames[:r]) for r in range(len(frames))]

    def x(round_number: int, step: int) -> float:
        return round((starts[round_number - 1] + step) * TIMELINE_WIDTH / total, 1)

    parts = [
        f'<svg class="timeline" viewBox="-4 0 {TIMELINE_WIDTH + 8} 28" '
        f'preserveAspectRatio="none" role="img" aria-label="The game\'s timeline">'
        f'<rect class="track" x="0" y="10" width="{TIMELINE_WIDTH}" height="8"/>'
    ]
    heights = {"draw": (12, 4), "pass": (8, 12), "score": (4, 20)}
    for kind, states in found.items():
        if states:
            top, height = heights.get(kind, (0, 28))
            path = "".join(f"M{x(*state)} {top}v{height}" for state in states)
            parts.append(f'<path class="mark {kind}" d="{path}"><title>{kind}</title></path>')
    for number in range(1, len(frames) + 1):
        at = x(number, 0)
        href = "?" + escape(urlencode(position.query(round=number, step=0)))
        parts.append(
            f'<a href="{href}" data-round="{number}" data-step="0"><title>Round {number}</title>'
            f'<rect class="round-start" x="{at - 1}" y="0" width="2" height="28"/></a>'
        )
    at = x(position.round, position.step)
    parts.append(f'<rect class="now" x="{at - 3}" y="6" width="6" height="16"/></svg>')
    return Markup("".join(parts))


def score_svg(replay: Replay) -> Markup:
    """Each side's score after every round, one line per side (or team)."""
    timeline = replay.score_timeline()
    width, height, pad = 480, 160, 28
    top = max(max(scores) for scores in timeline) or 1
    rounds = max(len(timeline) - 1, 1)

    def point(index: int, score: int) -> str:
        px = pad + (width - 2 * pad) * index / rounds
        py = height - pad - (height - 2 * pad) * score / top
        return f"{px:.1f},{py:.1f}"

    sides = len(timeline[0])
    parts = [
        f'<svg class="scores" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="Scores after each round"><title>Scores after each round</title>'
        f'<line class="axis" x1="{pad}" y1="{height - pad}" x2="{width - pad}" '
        f'y2="{height - pad}"/><text x="{pad - 4}" y="{pad + 4}" text-anchor="end">{top}</text>'
        f'<text x="{pad - 4}" y="{height - pad}" text-anchor="end">0</text>'
        f'<text x="{width - pad}" y="{height - 8}" text-anchor="end">round {rounds}</text>'
    ]
    for side in range(sides):
        points = " ".join(point(i, scores[side]) for i, scores in enumerate(timeline))
        label = f"team {'AB'[side]}" if replay.teams else f"seat {side}"
        parts.append(
            f'<polyline class="side side{side % SIDES}" points="{points}">'
            f"<title>{escape(label)}</title></polyline>"
        )
    parts.append("</svg>")
    return Markup("".join(parts))


def frames_per_round(replays: Sequence[Replay]) -> list[int]:
    """The states of each round of games stepped together: the longest game's."""
    rounds = max(len(replay.rounds) for replay in replays)
    return [
        max(len(replay.rounds[r].frames) for replay in replays if r < len(replay.rounds))
        for r in range(rounds)
    ]


def divergence(replays: Sequence[Replay]) -> tuple[int, int] | None:
    """The first state (round, step) at which games of the same deals differ: the state
    after the first event that is not the same in all of them; None if none differs."""
    rounds = max(len(replay.rounds) for replay in replays)
    for r in range(rounds):
        events = [
            replay.record["rounds"][r]["events"] if r < len(replay.rounds) else []
            for replay in replays
        ]
        longest = max(len(e) for e in events)
        for k in range(longest):
            seen = [e[k] if k < len(e) else None for e in events]
            if any(event != seen[0] for event in seen[1:]):
                return r + 1, k + 1
    return None
