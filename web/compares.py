"""Regression tests on the web: a bot's owner asks "is this version stronger than that
one?" and watches the sequential test decide (docs/web.md, "Compares").

A compare started here is the same stored tournament as ``arena compare --remote``
(:mod:`arena.service.compares`): every batch is sent to the workers at once, and the
worker that finishes a match voids what is left once the test has decided. Its page shows
the LLR between its bounds, NEW's Elo advantage with its 95% interval, LOS and the games,
and polls while it runs.
"""

from __future__ import annotations

import random
from typing import Annotated, Any

from flask import Blueprint, abort, flash, redirect, render_template, request, url_for
from pydantic import BaseModel, Field
from werkzeug.wrappers import Response as BaseResponse

from arena.compete.names import parse_reference
from arena.compete.sprt import STATISTICS, Statistic, make_test
from arena.engine.rules import PRESETS
from arena.errors import ArenaError
from arena.service.accounts import Account
from arena.service.compares import CompareView, compare_view, create_compare, group_size
from arena.service.matches import MatchSettings, send_pending
from arena.service.views import bot_list, bot_view
from web.app import get_celery, get_store
from web.auth import allowed, current_account, login_required
from web.render import llr_svg
from web.tournaments import form_int

__all__ = ["MAX_COMPARE_GAMES", "CompareRequest", "compares", "start_compare"]

compares = Blueprint("compares", __name__)

#: Games a compare started from the web may play, at most.
MAX_COMPARE_GAMES = 20_000
#: How often a running compare's page refreshes (seconds).
LIVE_SECONDS = 3


class CompareRequest(BaseModel):
    """A compare as the form or the API asks for it (the API's request body; the ranges
    are checked by :func:`start_compare`, each with its own message)."""

    new: str = Field(description="your bot, OWNER/NAME[@VERSION]")
    old: str = Field(description="OWNER/NAME[@VERSION]")
    rules: str = Field(description="a preset rule set", examples=["draw"])
    players: Annotated[int, Field(description="seats; 4 with teams")] = 2
    teams: Annotated[
        bool, Field(description="2v2 (muggins, 4 players): NEW and OLD each partner a copy")
    ] = False
    statistic: Annotated[
        Statistic,
        Field(
            description="what the test counts per deal group: margin (point margins less "
            "the luck of the draw, with a fast pass) or game (game results, fishtest's "
            "pentanomial SPRT)"
        ),
    ] = "margin"
    elo0: Annotated[float, Field(description="H0: NEW is at most this much stronger")] = 0.0
    elo1: Annotated[float, Field(description="H1: NEW is at least this much stronger")] = 10.0
    alpha: float = 0.05
    beta: float = 0.05
    max_games: Annotated[int, Field(description=f"at most {MAX_COMPARE_GAMES:,}")] = 2000
    batch: Annotated[int, Field(description="deal groups between two looks at the test")] = 8
    move_ms: Annotated[int, Field(description="time a move, in milliseconds")] = 1000


def start_compare(account: Account, wanted: CompareRequest) -> str:
    """Store the compare and send its matches to the workers; return its name. NEW must be
    the account's own bot (or the account an admin's).

    Raises:
        PermissionError: NEW is someone else's bot.
        ArenaError, ValueError, LookupError: a bad parameter, or a bot not stored (the
            message says which).
    """
    rules = PRESETS.get(wanted.rules)
    if rules is None:
        raise ArenaError(f"choose a rule set ({', '.join(PRESETS)})")
    if not 2 <= wanted.players <= max(rules.players):
        raise ArenaError(f"players must be 2 to {max(rules.players)} under {rules.name}")
    rules.check_players(wanted.players, wanted.teams)
    size = group_size(wanted.players, wanted.teams)
    if not size <= wanted.max_games <= MAX_COMPARE_GAMES:
        raise ArenaError(f"games must be {size} to {MAX_COMPARE_GAMES}")
    if not 10 <= wanted.move_ms <= 10_000:
        raise ArenaError("the time a move must be 10 to 10000 ms")
    if not 1 <= wanted.batch <= 1000:
        raise ArenaError("the batch must be 1 to 1000 deal groups")
    for which, spec in (("NEW", wanted.new), ("OLD", wanted.old)):
        reference = parse_reference(spec)
        if reference.owner is None:
            raise ArenaError(f"{which} must be OWNER/NAME[@VERSION], not {spec!r}")
        view = bot_view(get_store(), reference.owner, reference.name)
        if view is None:
            raise LookupError(f"no bot {reference.owner}/{reference.name}")
        if which == "NEW" and not allowed(account, "start-compare", owner=view.owner_id):
            raise PermissionError(f"only the owner of {spec} may test it against others")
    try:
        test = make_test(wanted.statistic, wanted.elo0, wanted.elo1, wanted.alpha, wanted.beta)
    except ValueError as exc:
        raise ArenaError(f"the test's parameters: {exc}") from None
    store = get_store()
    tournament_id, name = create_compare(
        store,
        new=wanted.new,
        old=wanted.old,
        rules=rules,
        players=wanted.players,
        teams=wanted.teams,
        test=test,
        max_games=wanted.max_games,
        batch=wanted.batch,
        seed=random.SystemRandom().getrandbits(62),
        settings=MatchSettings(move_seconds=wanted.move_ms / 1000),
        owner_id=account.id,
    )
    from arena.service.broker import send_matches

    try:
        send_pending(
            store, lambda ids: send_matches(get_celery(), ids), tournament_id=tournament_id
        )
    except Exception:  # the broker is down: the matches wait, pending (shown on the page)
        flash("The task queue cannot be reached: the games start when it can.")
    return name


def _choices(account: Account) -> dict[str, Any]:
    bots = bot_list(get_store())
    own = [b for b in bots if b.owner == account.name or account.role == "admin"]
    return {
        "own": own,
        "bots": bots,
        "presets": list(PRESETS),
        "max_games": MAX_COMPARE_GAMES,
        "statistics": STATISTICS,
    }


def _float(field: str, default: float) -> float:
    text = request.form.get(field, "").strip()
    try:
        return float(text) if text else default
    except ValueError:
        raise ArenaError(f"{field} must be a number, not {text!r}") from None


@compares.route("/compares/new", methods=["GET", "POST"])
@login_required
def new_compare() -> BaseResponse | tuple[str, int] | str:
    """Start a regression test of one of the account's bots against another bot."""
    account = current_account()
    assert account is not None
    if request.method == "GET":
        values = {"new": request.args.get("new", ""), "rules": request.args.get("rules", "")}
        return render_template("compare_new.html", values=values, **_choices(account))
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
            elo0=_float("elo0", 0.0),
            elo1=_float("elo1", 10.0),
            max_games=form_int("max_games", 2000),
            move_ms=form_int("move_ms", 1000),
        )
        if not wanted.new or not wanted.old:
            raise ArenaError("choose NEW (your bot) and OLD")
        name = start_compare(account, wanted)
    except PermissionError as exc:
        abort(403, str(exc))
    except (ArenaError, ValueError, LookupError) as exc:
        message = str(exc.args[0] if exc.args else exc)
        flash(message[:1].upper() + message[1:] + ("" if message.endswith(".") else "."))
        return render_template("compare_new.html", values=values, **_choices(account)), 400
    flash("The compare has started: the workers play its games now.")
    return redirect(url_for("compares.compare_page", name=name))


def _view(name: str) -> CompareView:
    try:
        return compare_view(get_store(), name)
    except LookupError:
        abort(404, f"No compare called {name!r}.")


def _context(name: str) -> dict[str, Any]:
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
def compare_page(name: str) -> str:
    """A compare: its test's verdict, LLR, Elo difference, LOS and games; live while it runs."""
    return render_template("compare.html", **_context(name))


@compares.get("/compares/<name>/live")
def compare_live(name: str) -> str:
    """The live part of a compare's page (polled while it runs)."""
    return render_template("_compare_live.html", **_context(name))
