"""``arena replay show FILE``: a recorded game in the terminal, round by round (the deal,
every event with the line after it, the round's result), or one state of it.

The states are the engine's own (:mod:`arena.engine.replay`), the ones the web viewer
draws; this module only writes them as text.
"""

from __future__ import annotations

from collections.abc import Sequence

import click
from rich.console import Console
from rich.text import Text

from arena.cli.common import USAGE_ERROR, console, error, game_option
from arena.engine.records import read_records
from arena.engine.replay import Frame, Replay, replay_record
from arena.engine.tiles import Move, Tile
from arena.errors import ArenaError, ParseError

__all__ = ["game_text", "show_command", "state_text"]


def _tile(high: int, low: int) -> str:
    return f"[{high}|{low}]"


def _line(frame: Frame) -> Text:
    text = Text()
    for index, (left, right) in enumerate(frame.line):
        style = "bold reverse" if index == frame.placed else ("bold" if index == frame.lead else "")
        text.append(_tile(left, right), style=style)
    return text if frame.line else Text("(empty)", style="dim")


def _hand(tiles: Sequence[Tile], legal: Sequence[Move]) -> Text:
    playable = {move.tile for move in legal}
    text = Text()
    for tile in tiles:
        text.append(_tile(tile.high, tile.low), style="bold green" if tile in playable else "")
        text.append(" ")
    return text


def _event(event: dict[str, object] | None, seats: Sequence[str]) -> str:
    if event is None:
        return "the deal"
    seat = event["seat"]
    who = f"seat {seat} ({seats[int(str(seat))]})"
    if event["type"] == "play":
        move = Move.parse(str(event["move"]))
        where = "leads" if move.end is None else f"plays {move.tile} {move.end.name.lower()}"
        text = f"{who} {'leads ' + str(move.tile) if move.end is None else where}"
        points = event.get("points")
        return f"{text}, scoring {points}" if points else text
    if event["type"] == "draw":
        return f"{who} draws {event.get('tile') or 'a tile'}"
    return f"{who} passes"


def _side(replay: Replay, side: int | None) -> str:
    if side is None:
        return "nobody"
    if replay.teams:
        return f"team {side} ({replay.seats[side]}+{replay.seats[side + 2]})"
    return f"seat {side} ({replay.seats[side]})"


def state_text(replay: Replay, frame: Frame, seat: int | None = None) -> list[Text]:
    """One state: the event, the line, each hand (only ``seat``'s face up when given, the
    seat to move's legal moves in green), the boneyard and scores."""
    event = _event(dict(frame.event) if frame.event else None, replay.seats)
    lines = [
        Text(f"Round {frame.round}, step {frame.step}: {event}", style="bold"),
        Text("  line  ").append_text(_line(frame)),
    ]
    for s, tiles in enumerate(frame.hands):
        mover = " *" if frame.to_move == s else "  "
        head = Text(f"{mover}seat {s} {replay.seats[s]:<12} ")
        if seat is None or seat == s:
            legal = frame.legal_moves if frame.to_move == s else ()
            lines.append(head.append_text(_hand(tiles, legal)))
        else:
            lines.append(head.append(f"{len(tiles)} tiles", style="dim"))
    scores = " - ".join(map(str, frame.scores))
    lines.append(Text(f"  boneyard {frame.boneyard} · scores {scores}", style="dim"))
    return lines


def game_text(replay: Replay, *, only_round: int | None = None) -> list[Text]:
    """The whole game (or one round): each round's deal, its events with the line after
    every play, and its result; the game's result."""
    record = replay.record
    out = [
        Text(
            f"{record['rules']['name']} · {replay.players} players"
            f"{' (teams 0+2 v 1+3)' if replay.teams else ''} · seed {record.get('seed')} · "
            + ", ".join(f"seat {s} {name}" for s, name in enumerate(replay.seats)),
            style="bold",
        )
    ]
    for round_ in replay.rounds:
        if only_round is not None and round_.number != only_round:
            continue
        out.append(Text(""))
        out.extend(state_text(replay, round_.frames[0]))
        for frame in round_.frames[1:]:
            text = Text(f"  {frame.step:>3}. {_event(dict(frame.event or {}), replay.seats)}")
            if frame.placed is not None:
                text.append("   ").append_text(_line(frame))
            out.append(text)
        result = round_.result
        if result is not None:
            scores = " - ".join(map(str, round_.scores))
            points = " - ".join(map(str, result["points"]))
            out.append(
                Text(
                    f"  Round {round_.number}: {result['termination']}, won by "
                    f"{_side(replay, result['winner'])}; points {points}; scores {scores}",
                    style="bold",
                )
            )
    final = replay.result
    verdict = replay.verdict
    if final is None:
        out.append(Text("The game is unfinished.", style="bold"))
    elif verdict is not None:
        out.append(
            Text(
                f"Seat {verdict['seat']} ({replay.seats[verdict['seat']]}) forfeited: "
                f"{verdict['termination']}"
                + (f": {verdict['message']}" if verdict.get("message") else ""),
                style="bold red",
            )
        )
    else:
        winners = ", ".join(f"seat {s} ({replay.seats[s]})" for s in final["winners"])
        scores = " - ".join(map(str, final["scores"]))
        out.append(Text(f"Won by {winners}, {scores}.", style="bold"))
    return out


def load_replay(path: str, game: int) -> Replay:
    """Game ``game`` (from 1) of the JSON-lines file ``path``, stepped through.

    Raises:
        ParseError: no such game, or it is not a valid record.
        OSError: the file cannot be read.
    """
    count = 0
    for line, record in read_records(path):
        count += 1
        if count != game:
            continue
        if isinstance(record, ParseError):
            raise ParseError(f"line {line}: {record}")
        return replay_record(record)
    raise ParseError(f"{path} holds {count} game record{'s' if count != 1 else ''}, not {game}")


@click.command("show", short_help="Print a recorded game in the terminal.")
@click.argument("file", metavar="FILE")
@game_option
@click.option(
    "--round", "round_number", type=click.IntRange(1), default=None, help="Only this round."
)
@click.option(
    "--step",
    type=click.IntRange(0),
    default=None,
    help="Only the state after this many of the round's events (needs --round).",
)
@click.option(
    "--seat",
    type=click.IntRange(0),
    default=None,
    help="With --step: the game as this seat saw it (its hand only).",
)
def show_command(
    file: str, game_number: int, round_number: int | None, step: int | None, seat: int | None
) -> int:
    """Print game N of FILE (JSON lines, as `arena play --out` writes): every round's deal,
    its events with the line after each play, and its result. With --round and --step, one
    state: the line and every hand (--seat: that seat's view)."""
    if step is not None and round_number is None:
        error("--step needs --round")
        return USAGE_ERROR
    if seat is not None and step is None:
        error("--seat needs --round and --step")
        return USAGE_ERROR
    try:
        replay = load_replay(file, game_number)
    except OSError as exc:
        error(f"cannot read {file}: {exc.strerror or exc}")
        return USAGE_ERROR
    except ArenaError as exc:
        error(f"{file}, game {game_number}: {exc}")
        return USAGE_ERROR
    if round_number is not None and round_number > len(replay.rounds):
        error(f"the game has {len(replay.rounds)} rounds, not {round_number}")
        return USAGE_ERROR
    if seat is not None and seat >= replay.players:
        error(f"the game has seats 0 to {replay.players - 1}, not {seat}")
        return USAGE_ERROR
    out: Console = console()
    if step is not None and round_number is not None:
        frames = replay.rounds[round_number - 1].frames
        if step >= len(frames):
            error(f"round {round_number} has steps 0 to {len(frames) - 1}, not {step}")
            return USAGE_ERROR
        lines = state_text(replay, frames[step], seat)
    else:
        lines = game_text(replay, only_round=round_number)
    for text in lines:
        out.print(text, soft_wrap=False, overflow="fold")
    return 0
