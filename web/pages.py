"""The dashboard's pages: home, leaderboards, tournaments (docs/web.md).

Every page is rendered on the server from :mod:`arena.service.board_views` and works without
JavaScript; a running tournament's page and a leaderboard refresh their live parts by
polling an HTML fragment (htmx, only while the tab is visible: ``static/js/arena.js``).
"""

from __future__ import annotations

import csv
import io
import threading
from collections import OrderedDict
from datetime import UTC, datetime
from typing import Any

from flask import Blueprint, Response, abort, redirect, render_template, request, url_for
from markupsafe import Markup
from werkzeug.wrappers import Response as BaseResponse

from arena.service.assignment_views import check_grading_visible
from arena.service.board_views import (
    PROVISIONAL_WIDTH,
    Leaderboard,
    TournamentView,
    leaderboard,
    rule_set_names,
    tournament_list,
    tournament_view,
)
from arena.service.permissions import Target, allowed
from arena.service.watching import LiveGame, tournament_live_games
from web.auth import current_account, public
from web.downloads import disposition
from web.extensions import get_store
from web.limits import heavy, reads
from web.render import Axis, axis_svg, interval_svg, progress_svg

__all__ = ["BOARD_LIVE_SECONDS", "LIVE_SECONDS", "pages", "stat_block"]

pages = Blueprint("pages", __name__)

#: How often a running tournament's page refreshes its live part (seconds).
LIVE_SECONDS = 3
#: How often a leaderboard refreshes its table (seconds): about half the live ratings' lag.
BOARD_LIVE_SECONDS = 5


@pages.get("/")
@public
def home() -> str:
    """Rule sets with their leaderboards, and the tournaments, newest first."""
    store = get_store()
    return render_template(
        "home.html",
        rule_sets=rule_set_names(store),
        tournaments=tournament_list(store, current_account())[:20],
    )


@pages.get("/leaderboards")
@public
def leaderboards() -> BaseResponse | str:
    """The first rule set's leaderboard, or a page saying there is none yet (which asks
    again every ``BOARD_LIVE_SECONDS``: htmx is told to open the leaderboard once there is
    one, with ``HX-Redirect``; until then it gets 204, no change)."""
    names = rule_set_names(get_store())
    polled = request.headers.get("HX-Request") == "true"
    if names:
        target = url_for("pages.leaderboard_page", rules=names[0])
        if polled:
            return Response("", headers={"HX-Redirect": target})
        return redirect(target)
    if polled:
        return Response("", status=204)
    return render_template(
        "leaderboard.html", board=None, rule_sets=names, live_seconds=BOARD_LIVE_SECONDS
    )


def _board(rules: str) -> Leaderboard:
    all_versions = request.args.get("versions") == "all"
    hide_reference = request.args.get("reference") == "hide"
    try:
        return leaderboard(
            get_store(), rules, all_versions=all_versions, hide_reference=hide_reference,
            viewer=current_account(),
        )  # fmt: skip
    except LookupError:
        abort(404, f"No rule set called {rules!r} has been played here.")


def _board_context(rules: str) -> dict[str, Any]:
    board = _board(rules)
    age = None
    if board.computed is not None:
        age = max(0.0, (datetime.now(UTC) - board.computed).total_seconds())
    hide_reference = request.args.get("reference") == "hide"
    return {
        "board": board,
        "table": _board_table(board, hide_reference),
        "provisional_width": PROVISIONAL_WIDTH,
        "all_versions": request.args.get("versions") == "all",
        "hide_reference": hide_reference,
        "query": request.query_string.decode(),
        "age_seconds": age,
        "live_seconds": BOARD_LIVE_SECONDS,
    }


#: Leaderboards' tables a process keeps rendered (the least recently used go first).
TABLES_KEPT = 64
_tables_kept: OrderedDict[tuple[str, str, int], tuple[Leaderboard, Markup]] = OrderedDict()
_tables_lock = threading.Lock()


def _board_table(board: Leaderboard, hide_reference: bool) -> Markup:
    """The board's table (its rows with their intervals on one axis and their links),
    rendered once a board: the service gives every request the same board until the rule
    set's ratings change (arena.service.board_views.leaderboard), so 200 rows are rendered
    again after a refit, not at each request."""
    key = (request.script_root, str(hide_reference), id(board))
    with _tables_lock:
        kept = _tables_kept.get(key)
        if kept is not None and kept[0] is board:  # the board itself: its id is not reused
            _tables_kept.move_to_end(key)
            return kept[1]
    axis = Axis.spanning((row.low, row.high) for row in board.rows)
    rendered = Markup(
        render_template(
            "_leaderboard_table.html",
            board=board,
            axis=axis_svg(axis),
            bars=[
                interval_svg(axis, r.rating, r.low, r.high, provisional=r.provisional)
                for r in board.rows
            ],
            provisional_width=PROVISIONAL_WIDTH,
            hide_reference=hide_reference,
        )
    )
    with _tables_lock:
        _tables_kept[key] = (board, rendered)  # kept, the board cannot be freed and its id reused
        _tables_kept.move_to_end(key)
        while len(_tables_kept) > TABLES_KEPT:
            _tables_kept.popitem(last=False)
    return rendered


@pages.get("/leaderboards/<rules>")
@public
@reads
@heavy
def leaderboard_page(rules: str) -> str:
    """A rule set's leaderboard: rank ranges, ratings with 95% intervals on a shared axis;
    its table refreshes itself while the page is open (:func:`leaderboard_live`)."""
    return render_template(
        "leaderboard.html", rule_sets=rule_set_names(get_store()), **_board_context(rules)
    )


@pages.get("/leaderboards/<rules>/live")
@public
@heavy
def leaderboard_live(rules: str) -> str:
    """The leaderboard's table and its age (polled by htmx every ``BOARD_LIVE_SECONDS``:
    live ratings refit a rule set within seconds of each result, docs/ratings.md)."""
    return render_template("_leaderboard_live.html", **_board_context(rules))


EXPORT_FIELDS = (
    "rank_best",
    "rank_worst",
    "owner",
    "bot",
    "version",
    "rating",
    "low",
    "high",
    "games",
    "provisional",
    "reference",
    "wins",
    "draws",
    "losses",
    "last_game",
)


def _export_rows(board: Leaderboard) -> list[dict[str, Any]]:
    return [
        {
            **{field: getattr(row, field) for field in EXPORT_FIELDS},
            "rating": round(row.rating, 1),
            "low": round(row.low, 1),
            "high": round(row.high, 1),
            "last_game": None if row.last_game is None else row.last_game.isoformat(),
        }
        for row in board.rows
    ]


@pages.get("/leaderboards/<rules>/export.csv")
@public
@reads
@heavy
def leaderboard_csv(rules: str) -> Response:
    """The leaderboard as CSV (the same toggles as the page)."""
    board = _board(rules)
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=EXPORT_FIELDS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(_export_rows(board))
    response = Response(out.getvalue(), mimetype="text/csv")
    response.headers["Content-Disposition"] = disposition(f"leaderboard-{rules}.csv")
    return response


@pages.get("/leaderboards/<rules>/export.json")
@public
@reads
@heavy
def leaderboard_json(rules: str) -> dict[str, Any]:
    """The leaderboard as JSON (the same toggles as the page), each row with its version's
    display name (``display``)."""
    board = _board(rules)
    computed = None if board.computed is None else board.computed.isoformat()
    rows = [  # each version's display name too, as the pages show it
        {**fields, "display": row.name.display}
        for fields, row in zip(_export_rows(board), board.rows, strict=True)
    ]
    return {"rules": board.rules, "computed": computed, "rows": rows}


@pages.get("/tournaments")
@public
def tournaments() -> str:
    """Every tournament, newest first."""
    return render_template(
        "tournaments.html",
        tournaments=tournament_list(get_store(), current_account()),
        can_create=allowed(current_account(), "create-tournament"),
    )


def _tournament_context(name: str) -> dict[str, Any]:
    """A tournament page's values, its live part rendered (:func:`_live_part`)."""
    check_grading_visible(get_store(), current_account(), name=name)
    try:
        view = tournament_view(get_store(), name, viewer=current_account())
    except LookupError:
        abort(404, f"No tournament called {name!r}.")
    can_cancel = allowed(current_account(), "cancel-tournament", Target(view.owner_id))
    playing = () if view.done else tournament_live_games(get_store(), current_account(), name)
    return {"t": view, "live": _live_part(view, can_cancel, tuple(playing))}


#: Live parts of tournament pages a process keeps rendered (the least recently used go first).
LIVE_KEPT = 32
_live_kept: OrderedDict[tuple[Any, ...], Markup] = OrderedDict()
_live_lock = threading.Lock()


def _live_part(
    view: TournamentView, can_cancel: bool, playing: tuple[LiveGame, ...] = ()
) -> Markup:
    """The tournament's live part, rendered once a state of it (its matches and games
    counted, its pace, its workers, its entrants' names, the matches being played: a link
    each to watch it) for every viewer who cannot cancel it (nothing in it is theirs then):
    a table of 200 entrants is rendered again when a match finishes, not at each request."""
    key = (
        str(get_store().engine.url), request.script_root, view.name, view.status,
        tuple(view.progress.items()),
        view.games_done, view.games_total, view.workers_alive, view.queue,
        None if view.eta_seconds is None else round(view.eta_seconds),
        tuple((label, name.display) for label, name in view.names.items()),
        playing,
    )  # fmt: skip
    if not can_cancel:
        with _live_lock:
            kept = _live_kept.get(key)
            if kept is not None:
                _live_kept.move_to_end(key)
                return kept
    rated = [(row.low, row.high) for row in view.standings if row.low is not None]
    axis = Axis.spanning((low, high) for low, high in rated if high is not None)
    bars = [
        None
        if row.rating is None or row.low is None or row.high is None
        else interval_svg(axis, row.rating, row.low, row.high)
        for row in view.standings
    ]
    rendered = Markup(
        render_template(
            "_tournament_live.html",
            t=view,
            stat_block=stat_block(view),
            can_cancel=can_cancel,
            progress=progress_svg(view.progress),
            axis=axis_svg(axis),
            bars=bars,
            live_seconds=LIVE_SECONDS,
            live_games=playing,
        )
    )
    if not can_cancel:
        with _live_lock:
            _live_kept[key] = rendered
            while len(_live_kept) > LIVE_KEPT:
                _live_kept.popitem(last=False)
    return rendered


def stat_block(view: TournamentView) -> str:
    """The tournament as plain text: what it is, how far it got, its standings."""
    teams = " in teams" if view.teams else ""
    lines = [
        f"{view.name}: {view.rules}, {view.format}, {view.players} players{teams}, "
        f"{view.games_per_match} games a table, seed {view.seed}",
        f"{view.status}: {view.progress['done']} of {view.matches} matches played"
        + (f", {view.progress['void']} void" if view.progress["void"] else "")
        + f", {view.games_done} of {view.games_total} games",
        "",
    ]
    shown = {row.entrant: view.shown(row.entrant) for row in view.standings}
    width = max([len("Entrant"), *(len(name) for name in shown.values())])
    lines.append(
        f"{'#':>3}  {'Entrant':<{width}}  {'Games':>6}  {'Wins':>6}  {'Win%':>5}  "
        f"{'Forfeits':>8}  {'Elo':>5}  95% interval"
    )
    for row in view.standings:
        rated = (
            ""
            if row.rating is None or row.low is None or row.high is None
            else f"{row.rating:5.0f}  {row.low:.0f} to {row.high:.0f}"
        )
        lines.append(
            f"{row.rank:>3}  {shown[row.entrant]:<{width}}  {row.games:>6}  {row.wins:>6}  "
            f"{100 * row.win_rate:5.1f}  {row.forfeits:>8}  {rated}".rstrip()
        )
    if view.faults:
        faults = ", ".join(
            f"{view.shown(f.entrant)} {f.kind.replace('_', ' ')} {f.games}" for f in view.faults
        )
        lines += ["", f"Faults: {faults}"]
    return "\n".join(lines)


@pages.get("/tournaments/<name>")
@public
@heavy
def tournament_page(name: str) -> str:
    """A tournament: progress, standings with intervals, crosstable; live while it runs."""
    return render_template("tournament.html", **_tournament_context(name))


@pages.get("/tournaments/<name>/live")
@public
@heavy
def tournament_live(name: str) -> str:
    """The live part of a tournament's page (polled by htmx while it runs)."""
    live: str = _tournament_context(name)["live"]
    return live
