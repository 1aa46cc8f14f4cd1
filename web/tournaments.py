"""Tournaments from the web: organisers create them (played by the workers at once) and
cancel them (every match not finished is void, a running one stopped at its next
heartbeat; finished results are kept)."""

from __future__ import annotations

import logging
import random
from pathlib import PurePath
from typing import Any, NamedTuple

from flask import Blueprint, Response, abort, flash, redirect, render_template, request, url_for
from werkzeug.wrappers import Response as BaseResponse

from arena.engine.rules import PRESETS, Rules, parse_rules
from arena.errors import ArenaError, NotFound, PermissionDenied
from arena.service.assignment_views import check_grading_visible
from arena.service.board_views import REFERENCE_OWNER, tournament_view
from arena.service.bot_views import bot_list
from arena.service.classes import class_submissions
from arena.service.exports import standings_csv
from arena.service.matches import MatchSettings
from arena.service.tournaments import (
    MAX_GAMES,
    OFFERED_FORMATS,
    NewTournament,
    cancel_tournament,
    check_may_create,
    entrant_specs,
    preset,
    start_tournament,
)
from arena.store.db import Store
from web.auth import current_account, guarded, public
from web.downloads import disposition
from web.extensions import get_store
from web.forms import form_int, sentence
from web.limits import heavy, reads

__all__ = ["MAX_GAMES", "form_int", "rule_file", "tournaments"]

logger = logging.getLogger(__name__)

tournaments = Blueprint("tournaments", __name__)

#: A custom rule file's size, at most (the largest example in docs/rules.md is under 2 KiB).
MAX_RULE_FILE_BYTES = 64 * 1024
#: The formats offered (a gauntlet needs a pool: the command line's).
WEB_FORMATS = OFFERED_FORMATS


def _form_context(**values: Any) -> dict[str, Any]:
    store, school_class = get_store(), request.values.get("class", "").strip()
    return {
        "school_class": school_class,  # its students' bots and the reference bots only
        "presets": list(PRESETS),
        "formats": WEB_FORMATS,
        "bots": (
            _class_choices(store, school_class)
            if school_class
            else bot_list(store, current_account())
        ),
        "max_games": MAX_GAMES,
        "max_rule_bytes": MAX_RULE_FILE_BYTES,
        "values": values,
    }


class Choice(NamedTuple):
    """A bot the form offers: ``owner/name`` (``name`` may hold a version: ``bot@v2``)."""

    owner: str
    name: str


def _class_choices(store: Store, school_class: str) -> list[Choice]:
    """A class's tournament's choices: the versions submitted to its assignments (never a
    student's other bots, nor its competition entries) and the reference bots."""
    account = current_account()
    submitted = [
        Choice(v.owner, f"{v.bot}@v{v.version}")
        for v in class_submissions(store, account, school_class)
    ]
    references = [b for b in bot_list(store, account) if b.owner == REFERENCE_OWNER]
    return [*submitted, *(Choice(b.owner, b.name) for b in references)]


@tournaments.route("/tournaments/new", methods=["GET", "POST"])
@guarded("create-tournament", early=False)
def new_tournament() -> BaseResponse | tuple[str, int] | str:
    """Create a tournament between stored bots; the workers start playing it at once (an
    organiser's, or, with ``?class=NAME``, a teacher's of that class between its students'
    and the reference bots)."""
    school_class = request.values.get("class", "").strip() or None
    check_may_create(get_store(), current_account(), school_class)
    if request.method == "GET":
        return render_template("tournament_new.html", **_form_context(games=20, players=2))
    chosen = request.form.getlist("bots")
    values: dict[str, Any] = {
        "name": request.form.get("name", "").strip(),
        "rules": request.form.get("rules", ""),
        "format": request.form.get("format", ""),
        "chosen": chosen,
        "games": request.form.get("games", ""),
        "players": request.form.get("players", ""),
        "move_seconds": request.form.get("move_seconds", ""),
    }
    try:
        custom_rules = rule_file()
        games, players = form_int("games", 20), form_int("players", 2)
        move_ms = form_int("move_seconds", 1000)
        new = NewTournament(
            name=str(values["name"]),
            rules=custom_rules or preset(str(values["rules"])),
            format=str(values["format"]),
            entrants=entrant_specs(chosen),
            players=players,
            games_per_match=games,
            seed=random.SystemRandom().getrandbits(62),
            settings=MatchSettings(move_seconds=move_ms / 1000),
            school_class=school_class,
        )
        _, sent = start_tournament(get_store(), current_account(), new)
    except (PermissionDenied, NotFound):
        raise
    except (ArenaError, ValueError, LookupError) as exc:
        flash(sentence(str(exc).strip("'\"")))
        return render_template("tournament_new.html", **_form_context(**values)), 400
    if not sent:
        flash(
            "The task queue cannot be reached: the matches wait until it can "
            "(`arena tournament run NAME` sends them)."
        )
    flash(f"Tournament {values['name']} created: the workers start on it now.")
    return redirect(url_for("pages.tournament_page", name=values["name"]))


def rule_file() -> Rules | None:
    """The custom rule set uploaded with the form (``rules_file``, .toml or .json), or None.

    Raises:
        ArenaError: too big, not UTF-8, or not a valid rule set (the message says why).
    """
    file = request.files.get("rules_file")
    if file is None or not file.filename:
        return None
    data = file.stream.read(MAX_RULE_FILE_BYTES + 1)
    if len(data) > MAX_RULE_FILE_BYTES:
        raise ArenaError(f"a rule file is at most {MAX_RULE_FILE_BYTES // 1024} KiB")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ArenaError(f"the rule file {file.filename!r} is not UTF-8 text") from None
    name = PurePath(file.filename).name
    return parse_rules(text, name)


@tournaments.post("/tournaments/<name>/cancel")
@guarded("cancel-tournament", early=False)
def cancel(name: str) -> BaseResponse:
    """Cancel a tournament: every match not finished is void (a running one stops at its
    next heartbeat), finished results are kept. Its creator, or an admin (the service
    checks: 404, then the login page or 403)."""
    voided = cancel_tournament(get_store(), current_account(), name)
    matches = "1 match" if voided == 1 else f"{voided} matches"
    flash(f"Tournament {name} cancelled: {matches} will not be played.")
    return redirect(url_for("pages.tournament_page", name=name))


@tournaments.get("/tournaments/<name>/standings.csv")
@public
@reads
@heavy
def standings_export(name: str) -> Response:
    """Any tournament's standings as CSV, best first (arena.service.exports)."""
    check_grading_visible(get_store(), current_account(), name=name)
    try:
        view = tournament_view(get_store(), name, viewer=current_account())
    except LookupError:
        abort(404, f"No tournament called {name!r}.")
    response = Response(standings_csv(view), mimetype="text/csv")
    response.headers["Content-Disposition"] = disposition(f"{name}-standings.csv")
    return response
