"""Tables: a person plays bots in the browser (docs/tables.md).

``/tables/new`` opens one (the rule set, the seats, the person's seat, the bot, a second
person invited by link); ``/tables`` lists the person's open tables; ``/tables/ID`` is
the table: its state is a fragment drawn here from the view the worker published for the
reader's seat (the line and hands in SVG, by :mod:`web.board`), which
``static/js/table.js`` fetches again while others move (a long poll:
``/tables/ID/state?after=VIEW`` waits up to a few seconds for the next view) and after
each move (``POST /tables/ID/move`` relays it and answers with the state once the bots
have replied). The web never referees: it checks a move against the published view
(:func:`arena.service.tables.send_move`) and relays it. A finished table's game opens in
the replay viewer, and its record downloads as JSON.
"""

from __future__ import annotations

import json
import time
from typing import Any

from flask import Blueprint, Response, abort, flash, redirect, render_template, request, url_for
from markupsafe import Markup
from werkzeug.wrappers import Response as BaseResponse

from arena.engine.replay import Replay, replay_record
from arena.errors import ArenaError, NotFound
from arena.service.accounts import Account
from arena.service.rule_sets import rule_set_list
from arena.service.tables import (
    MAX_PER_ACCOUNT,
    MOVE_SECONDS,
    TableError,
    invited_table,
    join_table,
    open_table,
    open_tables,
    playable_version,
    seat_of,
    send_move,
    status_words,
    table_for,
    table_view,
    watch_code,
)
from arena.store.tables import TableRow
from web.auth import current_account, guarded
from web.board import hand_svg, line_svg
from web.extensions import get_store
from web.forms import upload_key
from web.games import viewer_state
from web.limits import address_key
from web.viewer import marks, timeline_svg

__all__ = ["tables"]

tables = Blueprint("tables", __name__)

#: How long a page's poll waits for the next view (the service caps it too).
POLL_SECONDS = 10.0
#: How long a move's answer waits for the bots' replies before the page polls on.
MOVE_WAIT_SECONDS = 8.0


def _sentence(exc: BaseException) -> str:
    text = str(exc).strip()
    text = text[:1].upper() + text[1:]
    return text if text.endswith((".", "!", "?")) else text + "."


def _account() -> Account:
    account = current_account()
    assert account is not None  # guarded: anonymous visitors go to the login page
    return account


def _whole(field: str, low: int, high: int, default: int) -> int:
    text = request.values.get(field, "").strip()
    if not text:
        return default
    if not text.isdigit() or not low <= int(text) <= high:
        raise TableError(f"{field.replace('_', ' ')} must be a whole number {low} to {high}")
    return int(text)


@tables.route("/tables/new", methods=["GET", "POST"])
@guarded("play-table")
def new_table() -> BaseResponse | tuple[str, int] | str:
    """Open a table: the rule set, the seats (2 to 5; 2v2 where the rules allow), your
    seat, the bot (``bot``: a version id, from a bot's page) and whether a second person
    is invited; the other seats get reference bots. The form carries a one-time token:
    sent twice (a double click), it opens one table, and both answers lead to it."""
    account = _account()
    rule_sets = rule_set_list(get_store())
    form: dict[str, Any] = {
        "rules": request.values.get("rules", "draw").strip()[:200] or "draw",
        "bot": request.values.get("bot", "").strip()[:20],
        "invite": request.values.get("invite") == "1",
        "teams": request.values.get("teams") == "1",
    }
    context: dict[str, Any] = {
        "rule_sets": rule_sets,
        "form": form,
        "move_seconds": MOVE_SECONDS,
        "max_tables": MAX_PER_ACCOUNT,
        "open_count": len(open_tables(get_store(), account)),
    }
    try:
        form["players"] = _whole("players", 2, 5, 4 if form["teams"] else 2)
        form["seat"] = _whole("seat", 0, 4, 0)
        if form["bot"] and not form["bot"].isdigit():
            raise TableError(f"the bot must be a version's number, not {form['bot']!r}")
        if not form["bot"] and request.args.get("owner"):  # a leaderboard's row
            owner, name = request.args.get("owner", "")[:100], request.args.get("name", "")[:100]
            version = _whole("version", 1, 2**31 - 1, 1)
            found = playable_version(get_store(), owner, name, version)
            if found is None:
                raise TableError(f"no bot {owner}/{name} v{version} is stored")
            form["bot"] = str(found)
    except TableError as exc:
        flash(_sentence(exc))
        form.update(players=2, seat=0, bot="")
        return render_template("table_new.html", **context), 400
    if request.method == "GET":
        return render_template("table_new.html", **context)
    try:
        opened = open_table(
            get_store(),
            account,
            address=address_key().removeprefix("address:"),
            rules=form["rules"],
            players=form["players"],
            teams=form["teams"],
            seat=form["seat"],
            bot=int(form["bot"]) if form["bot"] else None,
            invite=form["invite"],
            key=upload_key(),  # the form's one-time token: pressed twice, one table
        )
    except (TableError, NotFound) as exc:
        flash(_sentence(exc))
        return render_template("table_new.html", **context), 400
    return redirect(url_for("tables.table_page", table_id=opened.id))


@tables.get("/tables")
@guarded("play-table")
def my_tables() -> str:
    """The person's open tables (waiting, pending, being played), newest first, each linked:
    a table left in another tab is found again."""
    account = _account()
    rows = [
        {
            "id": row.id,
            "status": row.status,
            "words": status_words(row.status),
            "rules": row.rules_name,
            "teams": row.teams,
            "seats": [s.name or ("an invited person" if s.human else "a bot") for s in row.seats],
            "seat": seat_of(row, account),
            "created": row.created,
        }
        for row in open_tables(get_store(), account)
    ]
    return render_template("tables_mine.html", rows=rows, move_seconds=MOVE_SECONDS)


def _row(table_id: int) -> TableRow:
    try:
        return table_for(get_store(), current_account(), table_id)
    except NotFound as exc:
        abort(404, _sentence(exc))


def _view(
    table_id: int,
    *,
    after: str = "0",
    wait: float = 0.0,
    row: TableRow | None = None,
    until_mine: bool = False,
) -> tuple[TableRow, str | None, dict[str, Any] | None]:
    try:
        return table_view(
            get_store(),
            current_account(),
            table_id,
            after=after,
            wait_seconds=wait,
            row=row,
            until_mine=until_mine,
        )
    except NotFound as exc:
        abort(404, _sentence(exc))
    except TableError as exc:  # the channel is away: the page's next poll tries again
        abort(503, _sentence(exc))


def _tile(text: str) -> tuple[int, int]:
    a, _, b = text.partition("-")
    return int(a), int(b.rstrip("LR"))


def _event_text(event: dict[str, Any], names: list[str], seat: int | None) -> str:
    who = (
        "You"
        if event.get("seat") == seat
        else f"Seat {event.get('seat')} ({_name(names, event.get('seat'))})"
    )
    kind = event.get("type")
    if kind == "play":
        move = str(event.get("move", ""))
        where = {"L": " on the left", "R": " on the right"}.get(move[-1:], " to lead")
        points = f", scoring {event['points']}" if event.get("points") else ""
        return f"{who} played {move.rstrip('LR')}{where}{points}."
    if kind == "draw":
        tile = event.get("tile")
        return f"{who} drew {tile}." if tile else f"{who} drew a tile."
    return f"{who} passed."


def _name(names: list[str], seat: Any) -> str:
    return names[seat] if isinstance(seat, int) and 0 <= seat < len(names) else "?"


def _side_name(side: int | None, view: dict[str, Any], seat: int | None) -> str:
    names = view["names"]
    if side is None:
        return "nobody (a draw)"
    if view["teams"]:
        mine = seat is not None and seat % 2 == side
        return (
            "your team" if mine else "team " + "AB"[side]
        ) + f" ({names[side]} and {names[side + 2]})"
    return "you" if side == seat else f"seat {side} ({names[side]})"


def _counting(finished: dict[str, Any], view: dict[str, Any], seat: int | None) -> dict[str, Any]:
    """A finished round for its box: how it ended, who won, each seat's hand and pips."""
    result = finished["result"]
    names = view["names"]
    return {
        "number": finished["number"],
        "how": result["termination"],
        "winner": _side_name(result["winner"], view, seat),
        "points": result["points"],
        "scores": finished["scores"],
        "hands": [
            {
                "seat": s,
                "name": "You" if s == seat else f"Seat {s} ({names[s]})",
                "pips": result["pips"][s],
                "svg": hand_svg([_tile(t) for t in tiles], label=f"seat {s}", ids=f"c{s}"),
            }
            for s, tiles in enumerate(finished["hands"])
        ],
    }


def _state(row: TableRow, view_id: str | None, view: dict[str, Any] | None) -> dict[str, Any]:
    """What the state's fragment shows, from the view the worker published."""
    account = current_account()
    seat = seat_of(row, account)
    bots = [s.version_id for s in row.seats if s.version_id is not None]
    context: dict[str, Any] = {
        "t": row,
        "seat": seat,
        "view_id": view_id or "0",
        "view": view,
        "again_url": url_for("tables.new_table", bot=bots[0] if bots else None),
    }
    if view is None:
        return context
    names: list[str] = view["names"]
    current = view["round"]
    line = [(int(a), int(b)) for a, b in current["line"]]
    events = current["events"]
    placed = None
    if events and events[-1].get("type") == "play" and line:
        move = str(events[-1]["move"])
        placed = (
            0 if move.endswith("L") else len(line) - 1 if move.endswith("R") else current["lead"]
        )
    legal: list[str] = current["legal_moves"]
    hand = [_tile(t) for t in current["hand"]]
    choices = []
    for number, move in enumerate(legal, 1):
        tile = move.rstrip("LR")
        end = {"L": "left", "R": "right"}.get(move[-1:], "lead")
        choices.append({"move": move, "tile": tile, "end": end, "key": number})
    mine = seat is not None and current["to_move"] == seat and view["status"] == "playing"
    others = [
        {
            "seat": s,
            "name": names[s],
            "count": current["hand_sizes"][s],
            "to_move": current["to_move"] == s,
            "team": (s % 2) if view["teams"] else None,
            "human": s in view["humans"],
            "svg": hand_svg(current["hand_sizes"][s], label=f"seat {s}", per_row=14),
        }
        for s in range(view["players"])
        if s != seat
    ]
    finished = current if current["result"] is not None else view["last_round"]
    outcome = view["outcome"]
    won = None
    if outcome is not None and seat is not None:
        won = seat in outcome["winners"]
    return {
        **context,
        "names": names,
        "mine": mine,
        "board": line_svg(line, current["lead"], placed=placed, ids="tl") if line else Markup(""),
        "hand": hand_svg(hand, highlight=[_tile(m) for m in legal], label="your hand", ids="th")
        if seat is not None
        else Markup(""),
        "choices": choices,
        "legal_json": json.dumps(legal),
        "others": others,
        "events": [_event_text(e, names, seat) for e in events][-8:][::-1],
        "counting": _counting(finished, view, seat) if finished is not None else None,
        "scores": [
            {"side": _side_name(side, view, seat), "score": score}
            for side, score in enumerate(current["scores"])
        ],
        "won": won,
        "ends": (line[0][0], line[-1][1]) if line else None,
        "left": max(0, int(view["deadline"] - time.time())),
        "verdict": view.get("verdict"),
    }


@tables.get("/tables/<int:table_id>")
@guarded("play-table")
def table_page(table_id: int) -> str:
    """The table: the line, your hand with its legal moves, the others' tile counts, the
    events as they happen, the scores and each round's counting; its game in the viewer
    once over."""
    row, view_id, view = _view(table_id)
    invite_url = None
    if row.invite is not None and row.status == "waiting":
        invite_url = url_for("tables.join_page", table_id=row.id, code=row.invite, _external=True)
    watch_url = None
    if row.status in ("waiting", "pending", "running"):
        code = watch_code(row)
        watch_url = url_for("watching.table_watch_page", table_id=row.id, code=code, _external=True)
    return render_template(
        "table.html",
        invite_url=invite_url,
        watch_url=watch_url,
        poll_seconds=POLL_SECONDS,
        **_state(row, view_id, view),
    )


@tables.get("/tables/<int:table_id>/state")
@guarded("play-table")
def table_state(table_id: int) -> str:
    """The table's state alone, once the worker has published a view after ``after`` (or
    after :data:`POLL_SECONDS`, the newest): the page's script swaps it in."""
    after = request.args.get("after", "0")[:40]
    if not all(c.isdigit() or c == "-" for c in after):
        abort(400, "after must be a view's id, as the page gives it.")
    row, view_id, view = _view(table_id, after=after, wait=POLL_SECONDS)
    return render_template("_table_state.html", **_state(row, view_id, view))


@tables.post("/tables/<int:table_id>/move")
@guarded("play-table")
def table_move(table_id: int) -> tuple[str, int] | str:
    """Play ``move`` for decision ``turn``; answer with the state once the bots have
    replied (or after :data:`MOVE_WAIT_SECONDS`), or 400 with a sentence."""
    turn_text = request.form.get("turn", "")
    move = request.form.get("move", "").strip()[:20]
    after = request.form.get("after", "0")[:40]
    if not turn_text.isdigit() or not all(c.isdigit() or c == "-" for c in after):
        try:  # no such table (or not this person's) is 404 before the form's mistakes
            table_for(get_store(), current_account(), table_id)
        except NotFound as exc:
            abort(404, _sentence(exc))
        return "The move needs its turn's and view's numbers, as the page gives them.", 400
    try:
        row = send_move(get_store(), current_account(), table_id, int(turn_text), move)
    except NotFound as exc:
        abort(404, _sentence(exc))
    except TableError as exc:
        return _sentence(exc), 400
    row, view_id, view = _view(
        table_id, after=after, wait=MOVE_WAIT_SECONDS, row=row, until_mine=True
    )
    return render_template("_table_state.html", **_state(row, view_id, view))


@tables.route("/tables/<int:table_id>/join/<code>", methods=["GET", "POST"])
@guarded("play-table")
def join_page(table_id: int, code: str) -> BaseResponse | tuple[str, int] | str:
    """An invitation: sit down at the table (a button, so a link's preview seats nobody)."""
    if request.method == "GET":
        try:
            invited_table(get_store(), table_id, code[:64])
        except NotFound as exc:
            abort(404, _sentence(exc))
        return render_template("table_join.html", table_id=table_id, code=code[:64])
    try:
        join_table(get_store(), current_account(), table_id, code[:64])
    except NotFound as exc:
        abort(404, _sentence(exc))
    except TableError as exc:
        flash(_sentence(exc))
        return render_template("table_join.html", table_id=table_id, code=code[:64]), 400
    return redirect(url_for("tables.table_page", table_id=table_id))


def _replay(table_id: int) -> tuple[TableRow, Replay]:
    row = _row(table_id)
    if row.record is None:
        abort(404, f"Table {table_id} has no finished game yet.")
    try:
        return row, replay_record(row.record)
    except ArenaError as exc:
        abort(500, f"Table {table_id}'s record cannot be replayed: {exc}")


@tables.get("/tables/<int:table_id>/replay")
@guarded("play-table")
def table_replay(table_id: int) -> str:
    """The finished game in the replay viewer (every seat's view, step by step)."""
    row, replay = _replay(table_id)
    frames = [len(r.frames) for r in replay.rounds]
    state = viewer_state(replay, frames, replay.fault)
    return render_template(
        "table_replay.html",
        t=row,
        frames=frames,
        timeline=timeline_svg(frames, state["position"], marks(replay)),
        state_url=url_for("tables.table_replay_state", table_id=table_id),
        **state,
    )


@tables.get("/tables/<int:table_id>/replay/state")
@guarded("play-table")
def table_replay_state(table_id: int) -> str:
    """The viewer's state alone (the viewer's script swaps it in)."""
    _, replay = _replay(table_id)
    frames = [len(r.frames) for r in replay.rounds]
    return render_template("_game_state.html", **viewer_state(replay, frames, replay.fault))


@tables.get("/tables/<int:table_id>.json")
@guarded("play-table")
def table_json(table_id: int) -> Response:
    """The finished game's record (``arena replay verify`` checks it)."""
    row, _ = _replay(table_id)
    response = Response(json.dumps(row.record), mimetype="application/json")
    response.headers["Content-Disposition"] = f'inline; filename="table-{table_id}.json"'
    return response
