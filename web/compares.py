"""Regression tests on the web: a bot's owner asks "is this version stronger than that
one?" and watches the sequential test decide (docs/web.md, "Compares").

A compare started here is the same stored tournament as ``arena compare --remote``
(:mod:`arena.service.compares`): every batch is sent to the workers at once, and the
worker that finishes a match voids what is left once the test has decided. Its page shows
the LLR between its bounds, NEW's Elo advantage with its 95% interval, LOS and the games,
and polls while it runs.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, abort, flash, redirect, render_template, request, url_for
from werkzeug.wrappers import Response as BaseResponse

from arena.compete.sprt import STATISTICS
from arena.errors import ArenaError, PermissionDenied
from arena.service.accounts import Account
from arena.service.assignment_views import check_grading_visible
from arena.service.bot_views import bot_list
from arena.service.compare_views import (
    MAX_COMPARE_GAMES,
    CompareRequest,
    CompareView,
    compare_view,
    start_compare,
)
from arena.service.display import entrant_names
from arena.service.permissions import allowed
from arena.service.rule_sets import rule_set_list
from web.auth import current_account, guarded, public
from web.extensions import get_store
from web.forms import form_float, form_int, sentence
from web.render import llr_svg

__all__ = ["MAX_COMPARE_GAMES", "compares"]

compares = Blueprint("compares", __name__)

#: How often a running compare's page refreshes (seconds).
LIVE_SECONDS = 3


def _choices(account: Account, values: dict[str, str]) -> dict[str, Any]:
    """The form's choices: NEW among the account's bots (any, for an admin), OLD among every
    bot's versions, by default the version before NEW's latest (none if NEW has one)."""
    bots = bot_list(get_store(), account)
    anyone = allowed(account, "start-compare")  # an admin tests any bot
    own = [b for b in bots if b.owner == account.name or anyone]
    new = values.get("new") or (f"{own[0].owner}/{own[0].name}" if own else "")
    latest = {f"{b.owner}/{b.name}": b.versions for b in bots}
    old = values.get("old", "")
    if not old and latest.get(new, 0) > 1:
        old = f"{new}@{latest[new] - 1}"
    elif old in latest:  # OWNER/NAME: its latest version
        old = f"{old}@{latest[old]}"
    return {
        "own": own,
        "bots": bots,
        "new": new,
        "old": old,
        "rule_sets": rule_set_list(get_store()),
        "max_games": MAX_COMPARE_GAMES,
        "statistics": STATISTICS,
    }


@compares.route("/compares/new", methods=["GET", "POST"])
@guarded("start-compare")
def new_compare() -> BaseResponse | tuple[str, int] | str:
    """Start a regression test of one of the account's bots against another bot."""
    account = current_account()
    assert account is not None
    if request.method == "GET":
        values = {key: request.args.get(key, "") for key in ("new", "old", "rules")}
        return render_template("compare_new.html", values=values, **_choices(account, values))
    values = {key: request.form.get(key, "") for key in request.form}
    try:
        statistic = request.form.get("statistic", "margin")
        if statistic not in STATISTICS:
            raise ArenaError(f"the statistic is one of {', '.join(STATISTICS)}, not {statistic!r}")
        teams = request.form.get("teams") == "on"
        wanted = CompareRequest(
            new=request.form.get("new", "").strip(),
            old=request.form.get("old", "").strip(),
            rules=request.form.get("rules", ""),
            players=4 if teams else form_int("players", 2),
            teams=teams,
            statistic=statistic,
            elo0=form_float("elo0", 0.0),
            elo1=form_float("elo1", 10.0),
            max_games=form_int("max_games", 2000),
            move_ms=form_int("move_ms", 1000),
            allow_same_source=request.form.get("allow_same_source") == "on",
        )
        if not wanted.new or not wanted.old:
            raise ArenaError("choose NEW (your bot) and OLD")
        started = start_compare(get_store(), account, wanted)
    except PermissionDenied as exc:
        abort(403, str(exc))
    except (ArenaError, ValueError, LookupError) as exc:
        flash(sentence(str(exc.args[0] if exc.args else exc)))
        page = render_template("compare_new.html", values=values, **_choices(account, values))
        return page, 400
    if not started.sent:  # the broker is down: the matches wait, pending (shown on the page)
        flash("The task queue cannot be reached: the games start when it can.")
    flash("The compare has started: the workers play its games now.")
    return redirect(url_for("compares.compare_page", name=started.name))


def _view(name: str) -> CompareView:
    try:
        return compare_view(get_store(), name)
    except LookupError:
        abort(404, f"No compare called {name!r}.")


def _context(name: str) -> dict[str, Any]:
    check_grading_visible(get_store(), current_account(), name=name)
    view = _view(name)
    done = view.progress["pending"] + view.progress["running"] == 0
    picture = fast_picture = None
    if view.llr is not None and view.lower is not None and view.upper is not None:
        picture = llr_svg(view.llr, view.lower, view.upper)
    if view.fast_llr is not None and view.fast_upper is not None:
        fast_picture = llr_svg(
            view.fast_llr, -view.fast_upper, view.fast_upper, below="", above="pass"
        )
    return {
        "c": view,
        "done": done,
        "llr_picture": picture,
        "fast_picture": fast_picture,
        "live_seconds": LIVE_SECONDS,
    }


@compares.get("/compares/<name>")
@public
def compare_page(name: str) -> str:
    """A compare: its test's verdict, LLR, Elo difference, LOS and games; live while it runs."""
    context = _context(name)  # NEW and OLD by their versions' display names
    return render_template("compare.html", entrants=entrant_names(get_store(), name), **context)


@compares.get("/compares/<name>/live")
@public
def compare_live(name: str) -> str:
    """The live part of a compare's page (polled while it runs)."""
    return render_template("_compare_live.html", **_context(name))
