"""What if other bots had played on? From any state of a stored game in the viewer, a
logged-in user picks a bot for each seat and a number of repetitions; a worker plays the
rest of the round from exactly that state (same deal, same boneyard order) in the sandbox
(:mod:`arena.service.branches`), and the results open in the viewer beside the original.

A branch is its requester's (and the admins'): its pages answer 404 to anyone else, as an
upload's do. The original beside it is shown as the game page shows it to the reader (a
fault's message and stderr for that bot's owner only).
"""

from __future__ import annotations

import json
import logging
from typing import Any
from urllib.parse import urlencode

from flask import Blueprint, Response, abort, flash, redirect, render_template, request, url_for
from werkzeug.wrappers import Response as BaseResponse

from arena.engine.replay import Replay, replay_record
from arena.errors import ArenaError
from arena.service.accounts import Account
from arena.service.assignment_views import check_grading_visible
from arena.service.branches import (
    MAX_TIMES,
    MAX_WAITING,
    BotChoice,
    BranchError,
    BranchView,
    bot_choices,
    branch_point,
    branch_view,
    check_point,
    start_branch,
    start_step,
)
from arena.service.games import GameRow, game_record
from arena.service.permissions import Target, require
from web.auth import current_account, guarded
from web.extensions import get_store
from web.games import record_for_reader
from web.viewer import (
    Position,
    PositionError,
    describe,
    frames_per_round,
    navigation,
    parse_position,
    table,
    timeline_svg,
)

__all__ = ["LIVE_SECONDS", "branches"]

logger = logging.getLogger(__name__)

branches = Blueprint("branches", __name__)

#: How often a waiting branch's page asks whether it is done (seconds).
LIVE_SECONDS = 2


def _sentence(exc: BaseException) -> str:
    message = str(exc.args[0] if exc.args else exc)
    return message[:1].upper() + message[1:] + ("" if message.endswith(".") else ".")


def _game(match_id: int, index: int) -> tuple[GameRow, dict[str, Any], Replay]:
    """The stored game as the reader may see it, and its replay."""
    found = game_record(get_store(), match_id, index, current_account())
    if found is None:
        abort(404, f"No stored game {index} of match {match_id}.")
    record = record_for_reader(current_account(), found.row, found.record)
    try:
        return found.row, record, replay_record(record)
    except ArenaError as exc:
        abort(500, f"Game {index} of match {match_id} cannot be replayed: {exc}")


def _defaults(row: GameRow, choices: list[BotChoice]) -> list[int]:
    """Each seat's preselected bot: the game's own where the account may choose it, else
    the first choice."""
    by_label = {choice.label: choice.version_id for choice in choices}
    first = choices[0].version_id if choices else 0
    return [by_label.get(seat, first) for seat in row.seats]


def _form_context(
    account: Account,
    row: GameRow,
    replay: Replay,
    round_number: int,
    turn: int,
    chosen: list[int] | None = None,
    times: int = 1,
    asked: int | None = None,
) -> dict[str, Any]:
    record = replay.record
    start = start_step(record, round_number, turn)
    shown = table(replay, Position(round_number, start, None), "b")
    choices = bot_choices(get_store(), account)
    groups: dict[str, list[BotChoice]] = {}
    for choice in choices:
        groups.setdefault(choice.kind, []).append(choice)
    return {
        **shown,
        "g": row,
        "round_number": round_number,
        "turn": turn,
        "start": start,
        "moved": asked is not None and asked != start,
        "caption": describe(shown["frame"].event, replay.seats),
        "groups": groups,
        "chosen": chosen or _defaults(row, choices),
        "times": times,
        "max_times": MAX_TIMES,
        "max_waiting": MAX_WAITING,
        "game_url": url_for("games.game_page", match_id=row.match_id, index=row.index)
        + "?"
        + urlencode({"round": round_number, "step": start}),
    }


def _whole(field: str, default: int | None = None) -> int:
    text = request.form.get(field, "").strip()
    if not text and default is not None:
        return default
    if not text.isdigit():
        raise BranchError(f"{field} must be a whole number, not {text!r}")
    return int(text)


@branches.route("/games/<int:match_id>/<int:index>/branch", methods=["GET", "POST"])
@guarded("start-branch")
def new_branch(match_id: int, index: int) -> BaseResponse | tuple[str, int] | str:
    """ "What if…": choose a bot for each seat and the repetitions, from the state the query
    names (``round``, ``step``: the viewer's), or, posted, from ``round`` after ``turn``
    plays."""
    account = current_account()
    assert account is not None
    check_grading_visible(get_store(), account, match_id=match_id)
    row, record, replay = _game(match_id, index)
    if request.method == "GET":
        frames = [len(r.frames) for r in replay.rounds]
        try:
            position = parse_position(request.args, frames, replay.players)
            turn, _ = branch_point(record, position.round, position.step)
        except (PositionError, BranchError) as exc:
            abort(400, _sentence(exc))
        context = _form_context(account, row, replay, position.round, turn, asked=position.step)
        try:
            check_point(record, position.round, turn)
        except BranchError as exc:  # the page says why, and offers no form
            return render_template("branch_new.html", problem=_sentence(exc), **context), 400
        return render_template("branch_new.html", problem=None, **context)
    try:
        round_number, turn = _whole("round"), _whole("turn")
        start_step(record, round_number, turn)
    except BranchError as exc:
        abort(400, _sentence(exc))
    chosen: list[int] = []
    times = 1
    try:
        for seat in range(replay.players):
            text = request.form.get(f"seat{seat}", "").strip()
            if not text.isdigit():
                raise BranchError(f"seat {seat}: choose a bot")
            chosen.append(int(text))
        times = _whole("times", 1)
        branch_id = start_branch(
            get_store(), account, match_id, index, round_number, turn, chosen, times
        )
    except BranchError as exc:
        flash(_sentence(exc))
        context = _form_context(account, row, replay, round_number, turn, chosen, times)
        return render_template("branch_new.html", problem=None, **context), 400
    return redirect(url_for("branches.branch_page", branch_id=branch_id))


def _view(branch_id: int) -> BranchView:
    view = branch_view(get_store(), branch_id)
    if view is None:
        abort(404)
    require(current_account(), "read-branch", Target(view.requested_by), hide="")
    return view


def _page_context(view: BranchView) -> dict[str, Any]:
    return {
        "b": view,
        "live_seconds": LIVE_SECONDS,
        "point_url": url_for("games.game_page", match_id=view.match_id, index=view.index)
        + "?"
        + urlencode({"round": view.round, "step": view.start_step}),
    }


@branches.get("/branches/<int:branch_id>")
@guarded("read-branch", early=False)
def branch_page(branch_id: int) -> str:
    """A branch: waiting (refreshing), then each repetition's outcome beside the
    original's, a summary over the repetitions, links to each one in the viewer."""
    return render_template("branch.html", **_page_context(_view(branch_id)))


@branches.get("/branches/<int:branch_id>/live")
@guarded("read-branch", early=False)
def branch_live(branch_id: int) -> str:
    """The branch page's live part (polled while it waits for a worker)."""
    return render_template("_branch_live.html", **_page_context(_view(branch_id)))


@branches.get("/branches/<int:branch_id>.jsonl")
@guarded("read-branch", early=False)
def branch_records(branch_id: int) -> Response:
    """Every repetition's record, one a line (``arena replay verify`` reads the file)."""
    view = _view(branch_id)
    if not view.records:
        abort(404, "The branch has no records yet.")
    lines = "".join(json.dumps(record) + "\n" for record in view.records)
    response = Response(lines, mimetype="application/jsonl")
    response.headers["Content-Disposition"] = f'inline; filename="branch-{branch_id}.jsonl"'
    return response


def _repetition(branch_id: int, number: int) -> tuple[BranchView, dict[str, Any]]:
    """The branch and its repetition ``number`` (from 1)'s record."""
    view = _view(branch_id)
    if not 1 <= number <= len(view.records):
        abort(404, f"Branch {branch_id} has no repetition {number}.")
    return view, view.records[number - 1]


def _pair(view: BranchView, record: dict[str, Any]) -> tuple[GameRow, Replay, Replay, list[int]]:
    """The original as the reader may see it, the branch's replay, and the states of the
    rounds up to the branch's (the longer of the two in each)."""
    row, _, original = _game(view.match_id, view.index)
    try:
        branch = replay_record(record)
    except ArenaError as exc:
        abort(500, f"Branch {view.id}'s record cannot be replayed: {exc}")
    return row, original, branch, frames_per_round([original, branch])[: view.round]


def _pair_state(
    view: BranchView, number: int, row: GameRow, original: Replay, branch: Replay, frames: list[int]
) -> dict[str, Any]:
    try:
        position = parse_position(
            request.args, frames, original.players, (view.round, view.start_step)
        )
    except PositionError as exc:
        abort(400, _sentence(exc))
    columns = []
    game_url = url_for("games.game_page", match_id=row.match_id, index=row.index)
    for key, replay, title, href in (
        ("c0", original, f"The original: game {row.index} of match {row.match_id}", game_url),
        ("c1", branch, f"Repetition {number} of {view.times}", None),
    ):
        shown = table(replay, position, key)
        frame = shown["frame"]
        here = (frame.round, frame.step) == (position.round, position.step)
        # up to the point, the branch's moves are the original's, made by the original bots
        kept = (frame.round, frame.step) <= (view.round, view.start_step)
        names = original.seats if kept else replay.seats
        columns.append(
            {
                **shown,
                "title": title,
                "href": href,
                "caption": describe(frame.event, names) if here else "Its round is over.",
            }
        )
    return {
        **navigation(frames, position),
        "b": view,
        "number": number,
        "position": position,
        "columns": columns,
        "at_point": (position.round, position.step) == (view.round, view.start_step),
        "views": [None, *range(original.players)],
        "rounds": len(frames),
        "round_frames": frames[position.round - 1],
    }


@branches.get("/branches/<int:branch_id>/<int:number>")
@guarded("read-branch", early=False)
def repetition_page(branch_id: int, number: int) -> str:
    """Repetition ``number`` beside the original game, stepping together; opens where the
    branch takes up."""
    view, record = _repetition(branch_id, number)
    row, original, branch, frames = _pair(view, record)
    state = _pair_state(view, number, row, original, branch, frames)
    point = {"diverge": [(view.round, view.start_step)]}
    return render_template(
        "branch_game.html",
        frames=frames,
        timeline=timeline_svg(frames, state["position"], point),
        outcome=view.repetitions[number - 1],
        state_url=url_for("branches.repetition_state", branch_id=branch_id, number=number),
        **state,
    )


@branches.get("/branches/<int:branch_id>/<int:number>/state")
@guarded("read-branch", early=False)
def repetition_state(branch_id: int, number: int) -> str:
    """The side-by-side view's state alone (the viewer's script swaps it in)."""
    view, record = _repetition(branch_id, number)
    row, original, branch, frames = _pair(view, record)
    return render_template(
        "_branch_state.html", **_pair_state(view, number, row, original, branch, frames)
    )


@branches.get("/branches/<int:branch_id>/<int:number>.json")
@guarded("read-branch", early=False)
def repetition_json(branch_id: int, number: int) -> Response:
    """Repetition ``number``'s record (``arena replay verify`` checks it)."""
    _, record = _repetition(branch_id, number)
    response = Response(json.dumps(record), mimetype="application/json")
    name = f"branch-{branch_id}-{number}.json"
    response.headers["Content-Disposition"] = f'inline; filename="{name}"'
    return response
