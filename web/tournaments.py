"""Tournaments from the web: organisers create them (played by the workers at once) and
cancel them (the matches not started are void; finished results are kept)."""

from __future__ import annotations

import logging
import random
from typing import Any

from flask import Blueprint, abort, flash, redirect, render_template, request, url_for
from werkzeug.wrappers import Response as BaseResponse

from arena.compete.tournaments import FORMATS
from arena.engine.rules import PRESETS
from arena.errors import ArenaError
from arena.service.matches import MatchSettings, create_stored_tournament, send_pending
from arena.service.views import bot_list, tournament_owner
from arena.store.queue import cancel_tournament
from web.app import get_celery, get_store
from web.auth import login_required, require

__all__ = ["MAX_GAMES", "tournaments"]

logger = logging.getLogger(__name__)

tournaments = Blueprint("tournaments", __name__)

#: Games a pair plays, at most, in a tournament created from the web.
MAX_GAMES = 1000
#: The formats offered (a gauntlet needs a pool: the command line's).
WEB_FORMATS = tuple(f for f in FORMATS if f != "gauntlet")


def _form_context(**values: Any) -> dict[str, Any]:
    return {
        "presets": list(PRESETS),
        "formats": WEB_FORMATS,
        "bots": bot_list(get_store()),
        "max_games": MAX_GAMES,
        "values": values,
    }


def _entrant_specs(chosen: list[str]) -> list[str]:
    """``owner/name`` choices as entrant specs: labelled by the bot's name, or by
    ``owner.name`` where two owners' bots share a name."""
    names = [choice.partition("/")[2] for choice in chosen]
    specs = []
    for choice, name in zip(chosen, names, strict=True):
        owner = choice.partition("/")[0]
        specs.append(choice if names.count(name) == 1 else f"{owner}.{name}={choice}")
    return specs


def _number(field: str, low: int, high: int, default: int) -> int:
    text = request.form.get(field, "").strip()
    if not text:
        return default
    try:
        value = int(text)
    except ValueError:
        raise ArenaError(
            f"{field.replace('_', ' ')} must be a whole number, not {text!r}"
        ) from None
    if not low <= value <= high:
        raise ArenaError(f"{field.replace('_', ' ')} must be {low} to {high}, not {value}")
    return value


@tournaments.route("/tournaments/new", methods=["GET", "POST"])
@login_required
def new_tournament() -> BaseResponse | tuple[str, int] | str:
    """Create a tournament between stored bots; the workers start playing it at once."""
    account = require("create-tournament")
    assert account is not None
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
        rules = PRESETS.get(str(values["rules"]))
        if rules is None:
            raise ArenaError(f"choose a rule set ({', '.join(PRESETS)})")
        if values["format"] not in WEB_FORMATS:
            raise ArenaError(f"choose a format ({', '.join(WEB_FORMATS)})")
        if len(chosen) < 2:
            raise ArenaError("choose at least two bots")
        games = _number("games", 1, MAX_GAMES, 20)
        players = _number("players", 2, max(rules.players), 2)
        move_ms = _number("move_seconds", 10, 10_000, 1000)
        tournament_id, _ = create_stored_tournament(
            get_store(),
            name=str(values["name"]),
            rules=rules,
            format=values["format"],
            entrants=_entrant_specs(chosen),
            players=players,
            games_per_match=games,
            seed=random.SystemRandom().getrandbits(62),
            settings=MatchSettings(move_seconds=move_ms / 1000),
            owner_id=account.id,
        )
    except (ArenaError, ValueError, LookupError) as exc:
        message = str(exc).strip("'\"")
        flash(message[:1].upper() + message[1:] + ("" if message.endswith(".") else "."))
        return render_template("tournament_new.html", **_form_context(**values)), 400
    _send(tournament_id)
    flash(f"Tournament {values['name']} created: the workers start on it now.")
    return redirect(url_for("pages.tournament_page", name=values["name"]))


def _send(tournament_id: int) -> None:
    """Send the tournament's matches to the workers; with the broker down, the workers'
    sweep cannot help (a created tournament is never swept): say so in the log, and the
    page shows the matches pending; ``arena tournament run NAME`` sends them."""
    from arena.service.broker import send_matches

    try:
        send_pending(
            get_store(), lambda ids: send_matches(get_celery(), ids), tournament_id=tournament_id
        )
    except Exception as exc:
        logger.warning("tournament %s: cannot reach the broker (%s)", tournament_id, exc)
        flash(
            "The task queue cannot be reached: the matches wait until it can "
            "(`arena tournament run NAME` sends them)."
        )


@tournaments.post("/tournaments/<name>/cancel")
def cancel(name: str) -> BaseResponse:
    """Cancel a tournament: its pending matches are void, running ones finish, finished
    results are kept. Its creator, or an admin."""
    found = tournament_owner(get_store(), name)
    if found is None:
        abort(404, f"No tournament called {name!r}.")
    tournament_id, owner_id = found
    account = require("cancel-tournament", owner=owner_id)
    assert account is not None
    voided = cancel_tournament(get_store(), tournament_id, by=account.name)
    matches = "1 match" if voided == 1 else f"{voided} matches"
    flash(f"Tournament {name} cancelled: {matches} will not be played.")
    return redirect(url_for("pages.tournament_page", name=name))
