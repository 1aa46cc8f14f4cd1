"""One game as a self-contained HTML file that opens offline: stepped through like the
replay viewer, with no server and no network.

Everything is drawn here, in Python, by :mod:`web.board`; the file's script only shows and
hides the pieces and swaps pre-rendered text, as :mod:`web.viewer`'s script swaps states
the server renders. To stay small (a game of 20 rounds has hundreds of states, up to a
thousand), nothing is drawn twice:

- each tile face (standing and lying, as the game uses them) and a tile's back are drawn
  once in a ``<defs>`` (:func:`web.board.tile_defs`) and placed with ``<use>``;
- each round's line is drawn once, as its last state has it, every tile where
  :func:`web.board.layout_line` places it. A state's line is a run of those tiles (tiles
  are only ever added at the ends) and a tile's place depends only on the tiles between
  it and the lead, so a state shows the run and sets the picture's ``viewBox`` to its own
  height and top (the picture only moves down when the left arm opens a row above);
- each seat's hand is drawn once a round: every tile it held in that round, in the order
  hands are shown; a state shows the ones it holds (the rest collapse). The backs a
  seat's view shows for another seat are drawn once, as many as it ever held;
- each round's events are listed once; a state's caption is its event's line.

A state is then a few numbers and strings in one JSON array: its round and step, the run
of the line it shows, the ``viewBox``, the tile just played, the seat to move, each
seat's score, the boneyard's line, which tiles each hand holds, the legal tiles and moves.

Every text from the record (bot names, the verdict's message and stderr) is escaped: the
markup by Jinja's autoescape (``templates/export.html``) and :meth:`markupsafe.Markup.format`,
the JSON by ``tojson`` (which escapes ``<``, ``>``, ``&`` and ``'``); the script sets only
``textContent``. The source address is a link only if it is http or https.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined
from markupsafe import Markup

from arena.engine.replay import Frame, Replay, RoundReplay
from arena.engine.tiles import Tile
from web.board import (
    HALF,
    WIDTH,
    Placement,
    layout_line,
    line_viewbox,
    tile_defs,
    tile_frame,
    tile_use,
)
from web.viewer import SIDES, describe, score_svg

__all__ = ["game_html"]

_ENV = Environment(
    loader=FileSystemLoader(Path(__file__).resolve().parent / "templates"),
    autoescape=True,
    undefined=StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)
_ENV.policies["json.dumps_kwargs"] = {"separators": (",", ":"), "ensure_ascii": False}

#: A hand tile's picture: the tile with room around it for the legal frame.
_PAD = 2.5
_HAND_BOX = f'viewBox="-{_PAD} -{_PAD} {HALF + 2 * _PAD:g} {2 * HALF + 2 * _PAD:g}"'
#: Between scores, as the viewer writes them (an en dash).
_DASH = " \u2013 "
#: The frames drawn once and placed on many tiles: (kind, upright) -> id.
_FRAME_IDS = {("placed", True): "fpu", ("placed", False): "fpl", ("legal", True): "flu"}


def _frame_defs() -> str:
    """The frames of :data:`_FRAME_IDS`, at (0, 0), for ``<use>``."""
    return "".join(
        f'<g id="{ident}">{tile_frame(0, 0, *((HALF, 2 * HALF) if up else (2 * HALF, HALF)), kind)}'
        "</g>"
        for (kind, up), ident in _FRAME_IDS.items()
    )


@dataclass(frozen=True, slots=True)
class _RoundView:
    """One round's pieces, drawn once: its line, each seat's tiles, its events."""

    number: int
    line: Markup
    faces: tuple[Markup, ...]
    events: tuple[tuple[str, str], ...]
    result: str | None


def _pair(tile: Tile) -> tuple[int, int]:
    return (tile.high, tile.low)


def _name(tile: tuple[int, int]) -> str:
    return f"{tile[0]}-{tile[1]}"


def _line_svg(number: int, line: Sequence[tuple[int, int]], lead: int) -> Markup:
    """Every tile of a round's last line where the line's layout puts it (the lead framed;
    each tile with a hidden frame the state that played it shows)."""
    placements = layout_line(line, lead)
    _, height = line_viewbox(placements)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="board-line off" data-round="{number}" '
        f'viewBox="0 0 {WIDTH:g} {height:g}" role="img" aria-label="The line">'
    ]
    for p in placements:
        name = _name(line[p.index])
        lead_frame = tile_frame(p.x, p.y, p.w, p.h, "lead") if p.index == lead else ""
        frame = f"#{_FRAME_IDS[('placed', p.vertical)]}"
        parts.append(
            f'<g class="lt" data-tile="{name}"><title>{name}'
            f"{', the lead' if p.index == lead else ''}</title>{lead_frame}"
            f'<use class="frame placed" href="{frame}" x="{_num(p.x)}" y="{_num(p.y)}"/>'
            f"{tile_use(p.first, p.second, p.x, p.y, vertical=p.vertical)}</g>"
        )
    parts.append("</svg>")
    return Markup("".join(parts))


def _hand_tile(tile: tuple[int, int] | None) -> str:
    """One tile of a hand, standing (None: a back)."""
    if tile is None:
        return f'<svg class="ht back" {_HAND_BOX} aria-hidden="true"><use href="#tback"/></svg>'
    a, b = tile
    frame = f'<use class="frame legal" href="#{_FRAME_IDS[("legal", True)]}"/>'
    return (
        f'<svg class="ht" {_HAND_BOX} data-tile="{a}-{b}"><title>{a}-{b}</title>{frame}'
        f"{tile_use(a, b, 0, 0, vertical=True)}</svg>"
    )


def _round_result(replay: Replay, round_: RoundReplay) -> str | None:
    result = round_.result
    if result is None:
        return None
    winner = result.get("winner")
    if winner is None:
        won = "drawn"
    elif replay.teams:
        won = f"won by team {'AB'[winner]}"
    else:
        won = f"won by seat {winner}"
    points = _DASH.join(str(p) for p in result.get("points", ()))
    scores = _DASH.join(str(s) for s in round_.scores)
    return (
        f"Round {round_.number} ended: {result.get('termination')}, {won} · points {points} · "
        f"scores {scores}."
    )


def _boneyard(frame: Frame) -> str:
    text = f"Boneyard: {frame.boneyard} tile{'' if frame.boneyard == 1 else 's'}"
    if frame.drawable != frame.boneyard and frame.drawable:
        text += f" ({frame.drawable} may be drawn)"
    if frame.ends:
        text += f" · open ends {frame.ends[0]} and {frame.ends[1]}"
    return text


def _round(
    replay: Replay, round_: RoundReplay, states: list[dict[str, Any]]
) -> tuple[_RoundView, list[int]]:
    """A round's pieces, its states appended to ``states``; the most tiles each seat held."""
    last = round_.frames[-1]
    final, lead = last.line, last.lead
    places = layout_line(final, lead)
    held = [
        sorted({tile for frame in round_.frames for tile in frame.hands[seat]}, key=_tile_id)
        for seat in range(replay.players)
    ]
    most = [max(len(frame.hands[seat]) for frame in round_.frames) for seat in range(len(held))]
    sides = [seat % 2 if replay.teams else seat for seat in range(replay.players)]
    for frame in round_.frames:
        states.append(_state(frame, final, lead, places, held, sides))
    events = tuple(
        (
            describe(frame.event, replay.seats),
            ""
            if frame.event is None
            else f"{frame.event['type']}{' score' if frame.event.get('points') else ''}",
        )
        for frame in round_.frames
    )
    view = _RoundView(
        number=round_.number,
        line=_line_svg(round_.number, final, lead),
        faces=tuple(Markup("".join(_hand_tile(_pair(t)) for t in tiles)) for tiles in held),
        events=events,
        result=_round_result(replay, round_),
    )
    return view, most


def _tile_id(tile: Tile) -> int:
    return tile.id


def _state(
    frame: Frame,
    final: Sequence[tuple[int, int]],
    lead: int,
    places: Sequence[Placement],
    held: Sequence[Sequence[Tile]],
    sides: Sequence[int],
) -> dict[str, Any]:
    """One state (``final``, ``lead`` and ``places``: its round's last line, its lead and
    layout; ``held``: the tiles each seat held in the round).

    Keys: ``r``, ``s`` the round and step; ``lo``..``hi`` the run of the round's last line
    it shows and ``vb`` its ``viewBox``; ``p`` the tile just played; ``m`` the seat to move;
    ``sc`` each seat's score; ``b`` the boneyard's line; ``h`` the tiles each seat holds
    (a digit per tile of ``held``); ``l`` the legal tiles of the seat to move (indices in
    its ``held``) and ``lm`` its legal moves. ``p``, ``m``, ``l`` and ``lm`` only where
    there are some.

    Raises:
        AssertionError: the state's line is not a run of the last one drawn where the
            last one has it (the engine or :func:`web.board.layout_line` changed).
    """
    line = frame.line
    if line:
        lo = lead - frame.lead
        if tuple(final[lo : lo + len(line)]) != line:
            raise AssertionError(f"round {frame.round}, step {frame.step}: not a run of its line")
        own = layout_line(line, frame.lead)
        top = places[lo].y - own[0].y
        if any(
            abs(places[lo + i].x - p.x) + abs(places[lo + i].y - top - p.y) > 1e-6
            for i, p in enumerate(own)
        ):
            raise AssertionError(f"round {frame.round}, step {frame.step}: the line moved")
        _, height = line_viewbox(own)
    else:
        lo, top, (_, height) = 0, 0.0, line_viewbox([])
    hands = [set(hand) for hand in frame.hands]
    state: dict[str, Any] = {
        "r": frame.round,
        "s": frame.step,
        "lo": lo,
        "hi": lo + len(line) - 1,
        "vb": f"0 {_num(top)} {_num(WIDTH)} {_num(height)}",
        "sc": [frame.scores[side] for side in sides],
        "b": _boneyard(frame),
        "h": [
            "".join("1" if tile in hand else "0" for tile in tiles)
            for hand, tiles in zip(hands, held, strict=True)
        ],
    }
    if frame.placed is not None:
        state["p"] = lo + frame.placed
    if frame.to_move is not None:
        state["m"] = frame.to_move
        if frame.legal_moves:
            legal = {move.tile for move in frame.legal_moves}
            state["l"] = [i for i, tile in enumerate(held[frame.to_move]) if tile in legal]
            state["lm"] = [str(move) for move in frame.legal_moves]
    return state


def _num(value: float) -> str:
    return f"{round(value, 1):g}"


def _fault(replay: Replay, verdict: Mapping[str, Any] | None) -> Markup | None:
    """What the faulting state says: who forfeited and why, as the reader may see it."""
    if replay.fault is None:
        return None
    termination = str((replay.result or {}).get("termination", "a fault")).replace("_", " ")
    if verdict is None:
        return Markup("<h2>The game was forfeited here: {}</h2>").format(termination)
    seat = verdict.get("seat")
    name = replay.seats[seat] if isinstance(seat, int) and 0 <= seat < replay.players else "?"
    what = str(verdict.get("termination", termination)).replace("_", " ")
    parts = [Markup("<h2>Seat {} ({}) forfeited: {}</h2>").format(seat, name, what)]
    message = verdict.get("message")
    if message is not None:
        parts.append(Markup('<p class="message">{}</p>').format(message))
    else:
        parts.append(
            Markup(
                "<p class=\"note\">The fault's message and the bot's stderr are shown to its "
                "owner only.</p>"
            )
        )
    time = verdict.get("time")
    if isinstance(time, Sequence) and len(time) == 2:
        parts.append(
            Markup("<p>It had used {:.1f} ms of CPU ({:.1f} ms wall) on this move.</p>").format(
                float(time[0]), float(time[1])
            )
        )
    frame = replay.frame(*replay.fault)
    if frame.to_move == seat:
        moves = Markup(", ").join(
            Markup("<code>{}</code>").format(move) for move in frame.legal_moves
        )
        parts.append(Markup("<p>Its legal moves here: {}.</p>").format(moves or "none"))
    stderr = verdict.get("stderr")
    if stderr:
        parts.append(
            Markup('<h3>stderr (its tail)</h3><pre class="stderr">{}</pre>').format(stderr)
        )
    return Markup("").join(parts)


def _result(replay: Replay) -> str:
    """The game's end in a line: how it ended, who won, the final scores."""
    result = replay.result or {}
    termination = str(result.get("termination", "unfinished")).replace("_", " ")
    winners = [w for w in result.get("winners") or [] if 0 <= w < replay.players]
    who = ", ".join(f"seat {w} ({replay.seats[w]})" for w in winners)
    if replay.teams and winners:
        names = ", ".join(replay.seats[w] for w in winners)
        who = f"team {'AB'[winners[0] % 2]} ({names})"
    scores = _DASH.join(str(s) for s in result.get("scores", replay.rounds[-1].scores))
    return f"Ended by {termination}" + (f", won by {who}" if who else "") + f"; scores {scores}."


def game_html(
    replay: Replay,
    *,
    title: str,
    verdict: Mapping[str, Any] | None,
    source_url: str | None = None,
) -> str:
    """The game as one HTML file that steps through every state with no server and no
    network: its script and style inline, every picture drawn here.

    ``title`` heads the page; ``verdict`` is the forfeit's verdict as the reader may see it
    (its message and stderr None when redacted), shown at the faulting state; ``source_url``
    (the game's page) is named as where the file came from (a link if it is http or https).
    The file opens at the fault of a forfeited game, else at the deal;
    ``#round=R&step=S&seat=N`` opens another state.
    """
    states: list[dict[str, Any]] = []
    rounds: list[_RoundView] = []
    most = [0] * replay.players
    for round_ in replay.rounds:
        view, held = _round(replay, round_, states)
        rounds.append(view)
        most = [max(a, b) for a, b in zip(most, held, strict=True)]
    starts = [0]
    for round_ in replay.rounds:
        starts.append(starts[-1] + len(round_.frames))
    fault = -1 if replay.fault is None else starts[replay.fault[0] - 1] + replay.fault[1]
    upright = {(t.high, t.low) for r in replay.rounds for f in r.frames for h in f.hands for t in h}
    placed = [
        (p.first, p.second, p.vertical)
        for r in replay.rounds
        for p in layout_line(r.frames[-1].line, r.frames[-1].lead)
    ]
    defs = tile_defs(
        upright | {(a, b) for a, b, vertical in placed if vertical},
        {(a, b) for a, b, vertical in placed if not vertical},
    )
    result = replay.result or {}
    final = result.get("scores") or list(replay.rounds[-1].scores)
    seats = [
        {
            "seat": seat,
            "name": name,
            "team": "AB"[seat % 2] if replay.teams else None,
            "score": final[seat % 2 if replay.teams else seat] if final else None,
            "won": seat in (result.get("winners") or ()),
        }
        for seat, name in enumerate(replay.seats)
    ]
    data = {"starts": starts, "fault": fault, "states": states}
    return _ENV.get_template("export.html").render(
        title=title,
        replay=replay,
        source_url=source_url,
        source_link=bool(source_url and source_url.startswith(("https://", "http://"))),
        seed=replay.record.get("seed"),
        result=_result(replay),
        defs=Markup(defs.removesuffix("</defs>") + _frame_defs() + "</defs>"),
        rounds=rounds,
        seats=seats,
        backs=[Markup(_hand_tile(None) * count) for count in most],
        fault=_fault(replay, verdict),
        scores=score_svg(replay),
        sides=SIDES,
        total=len(states),
        data=data,
    )
