"""Stored games on the web: a list with filters (a bot's recent games, a crosstable cell's
pairing, a tournament's faults), one game's page and its record as JSON.

Everyone may see which games were played and how they ended (including which seat
forfeited, and why in one word); the forfeiting bot's message and stderr are its owner's
and the admins' only (``read-faults`` in :mod:`arena.service.permissions`), so a record
is redacted for everyone else. The replay viewer will take over the game's page (issue 11).
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from dataclasses import replace
from typing import Any
from urllib.parse import urlencode

from flask import (
    Blueprint,
    Response,
    abort,
    current_app,
    redirect,
    render_template,
    request,
    url_for,
)
from markupsafe import Markup
from werkzeug.wrappers import Response as WerkzeugResponse

from arena.engine.events import Play, Termination
from arena.engine.records import round_times, slowest_decisions
from arena.engine.replay import Replay
from arena.errors import ArenaError, RecordPruned
from arena.service.accounts import Account
from arena.service.assignment_views import check_grading_visible
from arena.service.board_views import rule_set_names
from arena.service.classes import bot_target
from arena.service.display import entrant_names, seat_name, seat_names
from arena.service.games import (
    GAME_RESULTS,
    GameFilter,
    GamePage,
    GameRow,
    ReplayCache,
    duplicate_games,
    game_list,
    game_record,
    record_verdict,
    redact_record,
    replayed_game,
)
from arena.service.permissions import allowed
from web.auth import current_account, public
from web.export import game_html
from web.extensions import get_store
from web.limits import heavy, reads, steps
from web.viewer import (
    Position,
    PositionError,
    describe,
    divergence,
    frames_per_round,
    marks,
    navigation,
    parse_position,
    score_svg,
    table,
    timeline_svg,
)

__all__ = [
    "FAULT_CHOICES",
    "PAGE_SIZE",
    "cursor_text",
    "games",
    "parse_cursor",
    "parse_filter",
    "record_for_reader",
    "viewer_state",
]

games = Blueprint("games", __name__)
# Every page naming a game's seats shows them by display name (templates/_names.html).
games.add_app_template_global(seat_name, "seat_name")
games.add_app_template_global(seat_names, "seat_names")


#: Game rows a process keeps rendered (the least recently shown go first): about 20 pages
#: of 50 games.
ROWS_KEPT = 1000
_rows_kept: OrderedDict[tuple[Any, ...], Markup] = OrderedDict()
_rows_lock = threading.Lock()


@games.app_template_global("game_row")
def game_row(row: GameRow, show_outcome: bool) -> Markup:
    """A game list's row (``_game_row.html``), rendered once for every page that lists the
    game: a stored game's row changes only with what its value holds (its record pruned,
    say), which is the cache's key; privacy filtered it in or out before."""
    key = (request.script_root, bool(show_outcome), row)
    with _rows_lock:
        kept = _rows_kept.get(key)
        if kept is not None:
            _rows_kept.move_to_end(key)
            return kept
    template = current_app.jinja_env.get_template("_game_row.html")
    rendered = Markup(template.render(g=row, show_outcome=show_outcome))
    with _rows_lock:
        _rows_kept[key] = rendered
        while len(_rows_kept) > ROWS_KEPT:
            _rows_kept.popitem(last=False)
    return rendered


#: Games a page lists.
PAGE_SIZE = 50
#: The key of the app's :class:`ReplayCache` in ``app.extensions`` (a viewer's every step
#: reads the game it replayed once).
REPLAYS_KEY = "arena_replays"
#: The fault filter's choices: any fault, none, the bot's own, or one kind.
FAULT_CHOICES = ("any", "none", "mine", *(t.value for t in Termination if t.is_fault))


class FilterError(ValueError):
    """A query parameter that does not make a filter."""


def _bot_ref(field: str, value: str) -> tuple[str, str] | None:
    value = value.strip()
    if not value:
        return None
    owner, slash, name = value.partition("/")
    if not slash or not owner or not name or "/" in name:
        raise FilterError(f"{field} must be OWNER/NAME, not {value!r}")
    return owner, name


def parse_filter(args: Any) -> GameFilter:
    """A :class:`GameFilter` from query parameters (``tournament``, ``bot``, ``opponent``,
    ``rules``, ``result``, ``fault``, ``a``/``b``: entrant labels of a pairing, ``by``:
    the entrant label that forfeited).

    Raises:
        FilterError: a parameter out of its choices, or a result without a bot.
    """
    bot = _bot_ref("bot", args.get("bot", ""))
    result = args.get("result", "").strip() or None
    if result is not None and result not in GAME_RESULTS:
        raise FilterError(f"result must be one of {', '.join(GAME_RESULTS)}, not {result!r}")
    if result is not None and bot is None:
        raise FilterError("a result filter needs a bot (bot=OWNER/NAME)")
    fault = args.get("fault", "").strip() or None
    if fault is not None and fault not in FAULT_CHOICES:
        raise FilterError(f"fault must be one of {', '.join(FAULT_CHOICES)}, not {fault!r}")
    if fault == "mine" and bot is None:
        raise FilterError("the fault filter 'mine' needs a bot (bot=OWNER/NAME)")
    labels = tuple(label for label in (args.get("a", ""), args.get("b", "")) if label)
    tournament = args.get("tournament", "").strip() or None
    faulted = args.get("by", "").strip() or None
    if (labels or faulted) and tournament is None:
        raise FilterError("an entrant (a, b, by) needs a tournament")
    return GameFilter(
        tournament=tournament,
        bot=bot,
        opponent=_bot_ref("opponent", args.get("opponent", "")),
        rules=args.get("rules", "").strip() or None,
        result=result,
        fault=fault,
        labels=labels,
        faulted=faulted,
    )


def parse_cursor(text: str | None) -> tuple[int, int] | None:
    """The ``before`` parameter of a game list (``MATCH-INDEX``, the last game of the page
    before) as (match id, game index), or None when absent.

    Raises:
        FilterError: anything else.
    """
    if text is None or not text.strip():
        return None
    match, dash, index = text.strip().partition("-")
    if not dash or not match.isdigit() or not index.isdigit() or int(match) >= 2**31:
        raise FilterError(f"before must be a game as MATCH-INDEX (e.g. 12-3), not {text!r}")
    return int(match), int(index)


def cursor_text(key: tuple[int, int] | None) -> str | None:
    """A page's :attr:`GamePage.next` as the ``before`` parameter reads it, or None."""
    return None if key is None else f"{key[0]}-{key[1]}"


@games.get("/games")
@public
@reads
@heavy
def game_index() -> tuple[str, int] | str | WerkzeugResponse:
    """Stored games, newest first, with filters; works without JavaScript. A page goes on
    from ``before`` (the last game of the page before); an old ``offset`` link starts over
    at the first page."""
    if "offset" in request.args:
        args = {k: v for k, v in request.args.items() if k not in ("offset", "before")}
        return redirect(_list_url(args))
    try:
        wanted = parse_filter(request.args)
        before = parse_cursor(request.args.get("before"))
        page = game_list(
            get_store(), wanted, limit=PAGE_SIZE, before=before, viewer=current_account()
        )
    except (FilterError, ValueError, LookupError) as exc:
        message = str(exc.args[0] if exc.args else exc)
        return render_template(
            "games.html", error=message[:1].upper() + message[1:] + ".", **_context(None)
        ), 400  # fmt: skip
    return render_template("games.html", error=None, **_context(page))


def _list_url(args: dict[str, str]) -> str:
    return url_for("games.game_index") + ("?" + urlencode(args) if args else "")


def _context(page: GamePage | None) -> dict[str, Any]:
    args = {k: v for k, v in request.args.items() if k != "before" and v}
    older = None if page is None else cursor_text(page.next)
    first = _list_url(args)
    tournament = args.get("tournament")
    named = tournament is not None and any(k in args for k in ("a", "b", "by"))
    return {
        "page": page,
        "args": args,
        # the entrants a pairing or a fault filter names, shown by display name
        "entrants": entrant_names(get_store(), tournament) if named and tournament else {},
        "rule_sets": rule_set_names(get_store()),
        "results": GAME_RESULTS,
        "faults": FAULT_CHOICES,
        "newest": first if request.args.get("before") else None,
        "older": None if older is None else _list_url({**args, "before": older}),
    }


def record_for_reader(
    account: Account | None, row: GameRow, record: dict[str, Any]
) -> dict[str, Any]:
    """The record as ``account`` may see it (the pages' reader, or the API's token): the
    forfeiting bot's message and stderr only for its owner and the admins (a teacher reads
    a submission's faults on its assignment's pages)."""
    if row.fault_seat is None:
        return record
    owner = row.owners[row.fault_seat] if row.fault_seat < len(row.owners) else None
    if allowed(account, "read-faults", bot_target(get_store(), owner)):
        return record
    return redact_record(record)


def _stored(match_id: int, index: int) -> tuple[GameRow, dict[str, Any]]:
    check_grading_visible(get_store(), current_account(), match_id=match_id)
    found = game_record(get_store(), match_id, index, current_account())
    if found is None:
        abort(404, f"No stored game {index} of match {match_id}.")
    return found.row, record_for_reader(current_account(), found.row, found.record)


def _replays() -> ReplayCache:
    cache: ReplayCache | None = current_app.extensions.get(REPLAYS_KEY)
    if cache is None:  # one per app; a race only builds a second empty one
        cache = current_app.extensions.setdefault(REPLAYS_KEY, ReplayCache())
    return cache


def _replay(match_id: int, index: int) -> tuple[GameRow, dict[str, Any], Replay]:
    """The game's row, its record as the reader may see it, and its replay (of that
    record): from the app's cache after the first request for the game."""
    check_grading_visible(get_store(), current_account(), match_id=match_id)
    try:
        found = replayed_game(get_store(), match_id, index, _replays(), current_account())
    except RecordPruned:  # 410, said by the app's error handler
        raise
    except ArenaError as exc:
        abort(500, f"Game {index} of match {match_id} cannot be replayed: {exc}")
    if found is None:
        abort(404, f"No stored game {index} of match {match_id}.")
    record = record_for_reader(current_account(), found.row, found.record)
    # the seats by display name (the record's labels stay in the record)
    replay = replace(found.replay, seats=seat_names(found.row.seats, found.row.labels))
    if record is not found.record:  # redacted: the replay shows the reader's record only
        replay = replace(replay, record=record, result=record.get("result"))
    return found.row, record, replay


def _position(frames: list[int], players: int, opening: tuple[int, int] | None = None) -> Position:
    try:
        return parse_position(request.args, frames, players, opening)
    except PositionError as exc:
        abort(400, str(exc)[:1].upper() + str(exc)[1:] + ".")


def _state(replay: Replay, position: Position, verdict: dict[str, Any] | None) -> dict[str, Any]:
    """What the state's fragment shows: the board, each seat's hand, the event, the round's
    events, the fault when this is the faulting turn."""
    frames = [len(r.frames) for r in replay.rounds]
    shown = table(replay, position)
    frame = shown["frame"]

    def href(round_number: int, step: int) -> str:
        return "?" + urlencode(position.query(round=round_number, step=step))

    times = round_times(replay.record["rounds"][frame.round - 1])
    return {
        **shown,
        **navigation(frames, position),
        "position": position,
        "href": href,
        "caption": describe(frame.event, replay.seats),
        "thought": times[frame.step - 1] if frame.step else None,
        "events": [
            (f.step, describe(f.event, replay.seats), f.event, times[f.step - 1])
            for f in shown["round"].frames[1:]
        ],
        "at_fault": replay.fault == (frame.round, frame.step),
        "turn": sum(1 for event in frame.history if type(event) is Play),
        "verdict": verdict,
        "views": [None, *range(replay.players)],
        "rounds": len(frames),
    }


def viewer_state(
    replay: Replay, frames: list[int], opening: tuple[int, int] | None
) -> dict[str, Any]:
    """The viewer's state of ``replay`` at the position the query names (``opening`` by
    default): what ``_game_state.html`` shows (a table's finished game uses it too)."""
    position = _position(frames, replay.players, opening)
    return _state(replay, position, record_verdict(dict(replay.record)))


@games.get("/games/<int:match_id>/<int:index>")
@public
@reads
@heavy
def game_page(match_id: int, index: int) -> str:
    """One game in the replay viewer, at the state the query names (``round``, ``step``,
    ``seat``): a forfeited game opens at the fault."""
    row, record, replay = _replay(match_id, index)
    frames = [len(r.frames) for r in replay.rounds]
    position = _position(frames, replay.players, replay.fault)
    return render_template(
        "game.html",
        g=row,
        record=record,
        frames=frames,
        timeline=timeline_svg(frames, position, marks(replay)),
        scores=score_svg(replay),
        group=duplicate_games(get_store(), match_id, index),
        slowest=sorted(slowest_decisions(record).values(), key=lambda d: d.seat),
        **_state(replay, position, record_verdict(record)),
    )


@games.get("/games/<int:match_id>/<int:index>/state")
@public
@steps
def game_state(match_id: int, index: int) -> str:
    """The viewer's state alone (the script swaps it in): same query as the page."""
    _, record, replay = _replay(match_id, index)
    frames = [len(r.frames) for r in replay.rounds]
    position = _position(frames, replay.players, replay.fault)
    return render_template("_game_state.html", **_state(replay, position, record_verdict(record)))


def _group(match_id: int, index: int) -> tuple[list[tuple[GameRow, Replay]], list[int]]:
    check_grading_visible(get_store(), current_account(), match_id=match_id)
    keys = duplicate_games(get_store(), match_id, index)
    if not keys:
        _stored(match_id, index)  # its record pruned: 410 says so
        abort(404, f"Game {index} of match {match_id} is not part of a duplicate deal.")
    games_ = []
    for key in keys:
        row, _, replay = _replay(*key)
        games_.append((row, replay))
    return games_, frames_per_round([replay for _, replay in games_])


def _group_state(games_: list[tuple[GameRow, Replay]], frames: list[int]) -> dict[str, Any]:
    replays = [replay for _, replay in games_]
    diverge = divergence(replays)
    position = _position(frames, replays[0].players, diverge)
    columns = []
    for number, (row, replay) in enumerate(games_):
        shown = table(replay, position, f"c{number}")
        frame = shown["frame"]
        columns.append(
            {
                **shown,
                "g": row,
                "caption": describe(frame.event, replay.seats)
                if (frame.round, frame.step) == (position.round, position.step)
                else "This game's round is over.",
            }
        )
    return {
        **navigation(frames, position),
        "position": position,
        "columns": columns,
        "diverge": diverge,
        "at_divergence": diverge == (position.round, position.step),
        "views": [None, *range(replays[0].players)],
        "rounds": len(frames),
        "round_frames": frames[position.round - 1],
    }


@games.get("/games/<int:match_id>/<int:index>/duplicate")
@public
@reads
@heavy
def duplicate_page(match_id: int, index: int) -> str:
    """The games that played this game's deals with the seats rotated, side by side and
    stepping together; opens where they first differ."""
    games_, frames = _group(match_id, index)
    state = _group_state(games_, frames)
    found: dict[str, list[tuple[int, int]]] = {"diverge": []}
    if state["diverge"]:
        found["diverge"].append(state["diverge"])
    return render_template(
        "duplicate.html",
        first=games_[0][0],
        frames=frames,
        timeline=timeline_svg(frames, state["position"], found),
        state_url=url_for("games.duplicate_state", match_id=match_id, index=index),
        **state,
    )


@games.get("/games/<int:match_id>/<int:index>/duplicate/state")
@public
@steps
def duplicate_state(match_id: int, index: int) -> str:
    """The duplicate view's state alone (the script swaps it in)."""
    games_, frames = _group(match_id, index)
    return render_template("_duplicate_state.html", **_group_state(games_, frames))


@games.get("/games/<int:match_id>/<int:index>.html")
@public
@reads
@heavy
def game_html_file(match_id: int, index: int) -> Response:
    """The game as one self-contained HTML file that steps through it offline (a download:
    its script is inline, for a file opened from disk)."""
    _, record, replay = _replay(match_id, index)
    html = game_html(
        replay,
        title=f"Game {index} of match {match_id}",
        verdict=record_verdict(record),
        source_url=url_for("games.game_page", match_id=match_id, index=index, _external=True),
    )
    response = Response(html, mimetype="text/html")
    name = f"game-{match_id}-{index}.html"
    response.headers["Content-Disposition"] = f'attachment; filename="{name}"'
    return response


@games.get("/games/<int:match_id>/<int:index>.json")
@public
@reads
@heavy
def game_json(match_id: int, index: int) -> Response:
    """The game's record (the format ``arena replay verify`` checks)."""
    _, record = _stored(match_id, index)
    response = Response(json.dumps(record), mimetype="application/json")
    name = f"game-{match_id}-{index}.json"
    response.headers["Content-Disposition"] = f'inline; filename="{name}"'
    return response
