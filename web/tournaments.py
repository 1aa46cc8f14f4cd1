"""Tournaments from the web: organisers create them (played by the workers at once) and
cancel them (the matches not started are void; finished results are kept)."""

from __future__ import annotations

import logging
import random
from pathlib import PurePath
from typing import Any

from flask import Blueprint, abort, flash, redirect, render_template, request, url_for
from werkzeug.wrappers import Response as BaseResponse

from arena.compete.tournaments import FORMATS
from arena.engine.rules import PRESETS, Rules, parse_rules
from arena.errors import ArenaError
from arena.service.accounts import Account
from arena.service.matches import MatchSettings, create_stored_tournament, send_pending
from arena.service.views import bot_list, tournament_owner
from arena.store.queue import cancel_tournament
from web.app import get_celery, get_store
from web.auth import login_required, require

__all__ = ["MAX_GAMES", "create_tournament_for", "form_int", "tournaments"]

logger = logging.getLogger(__name__)

tournaments = Blueprint("tournaments", __name__)

#: Games a pair plays, at most, in a tournament created from the web.
MAX_GAMES = 1000
#: A custom rule file's size, at most (the largest example in docs/rules.md is under 2 KiB).
MAX_RULE_FILE_BYTES = 64 * 1024
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


def form_int(field: str, default: int) -> int:
    """The form's whole number ``field`` (``default`` when left empty).

    Raises:
        ArenaError: not a whole number (the message names the field).
    """
    text = request.form.get(field, "").strip()
    if not text:
        return default
    try:
        return int(text)
    except ValueError:
        raise ArenaError(
            f"{field.replace('_', ' ')} must be a whole number, not {text!r}"
        ) from None


def create_tournament_for(
    account: Account,
    *,
    name: str,
    rules: Rules | str,
    format: str,
    bots: list[str],
    games: int,
    players: int,
    move_ms: int,
) -> tuple[int, bool]:
    """Create a tournament between stored bots (``owner/name`` each) for ``account``, under
    ``rules`` (a custom rule set, or a preset's name), and send its matches to the workers;
    return its id and whether the broker took them (if not, they wait, pending: ``arena
    tournament run NAME`` sends them). The page and the API both create tournaments here.

    Raises:
        ArenaError, ValueError, LookupError: a bad parameter or an unknown bot (the message
            says which); nothing is stored.
    """
    if isinstance(rules, str):
        preset = PRESETS.get(rules)
        if preset is None:
            raise ArenaError(f"choose a rule set ({', '.join(PRESETS)}) or send a rule file")
        rules = preset
    if format not in WEB_FORMATS:
        raise ArenaError(f"choose a format ({', '.join(WEB_FORMATS)})")
    if len(bots) < 2:
        raise ArenaError("choose at least two bots")
    for field, value, low, high in (
        ("games", games, 1, MAX_GAMES),
        ("players", players, 2, max(rules.players)),
        ("move_seconds", move_ms, 10, 10_000),
    ):
        if not low <= value <= high:
            raise ArenaError(f"{field.replace('_', ' ')} must be {low} to {high}, not {value}")
    tournament_id, _ = create_stored_tournament(
        get_store(),
        name=name,
        rules=rules,
        format=format,
        entrants=_entrant_specs(bots),
        players=players,
        games_per_match=games,
        seed=random.SystemRandom().getrandbits(62),
        settings=MatchSettings(move_seconds=move_ms / 1000),
        owner_id=account.id,
    )
    return tournament_id, _send(tournament_id)


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
        _, sent = create_tournament_for(
            account,
            name=str(values["name"]),
            rules=_rule_file() or str(values["rules"]),
            format=str(values["format"]),
            bots=chosen,
            games=form_int("games", 20),
            players=form_int("players", 2),
            move_ms=form_int("move_seconds", 1000),
        )
    except (ArenaError, ValueError, LookupError) as exc:
        message = str(exc).strip("'\"")
        flash(message[:1].upper() + message[1:] + ("" if message.endswith(".") else "."))
        return render_template("tournament_new.html", **_form_context(**values)), 400
    if not sent:
        flash(
            "The task queue cannot be reached: the matches wait until it can "
            "(`arena tournament run NAME` sends them)."
        )
    flash(f"Tournament {values['name']} created: the workers start on it now.")
    return redirect(url_for("pages.tournament_page", name=values["name"]))


def _rule_file() -> Rules | None:
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


def _send(tournament_id: int) -> bool:
    """Send the tournament's matches to the workers; return False if the broker is down
    (the workers' sweep cannot help: a created tournament is never swept; the page shows
    the matches pending, and ``arena tournament run NAME`` sends them)."""
    from arena.service.broker import send_matches

    try:
        send_pending(
            get_store(), lambda ids: send_matches(get_celery(), ids), tournament_id=tournament_id
        )
    except Exception as exc:
        logger.warning("tournament %s: cannot reach the broker (%s)", tournament_id, exc)
        return False
    return True


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
