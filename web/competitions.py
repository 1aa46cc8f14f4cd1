"""Competitions on the web (issue 21, docs/web.md): the list, the organiser's creation form,
a competition's page (rules, dates with a countdown, the live ladder, recent games, the
final, the entrant's notices, the entry form, the organiser's controls) and an entrant's
page (its rating history and its games).

Every read and write goes through :mod:`arena.service.competitions`, which checks its own
action (``create-competition``, ``enter-competition``, ``manage-competition``); a refused
input comes back as the service's sentence on the form it came from. Dates are stored in
UTC and shown in the competition's time zone (the organiser's, an IANA name); the creation
form reads its ``datetime-local`` fields in the zone chosen beside them.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import logging
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

from flask import Blueprint, Response, abort, flash, redirect, render_template, request, url_for
from werkzeug.wrappers import Response as BaseResponse

from arena.engine.rules import PRESETS
from arena.errors import ArenaError, NotFound, PermissionDenied
from arena.service import competitions as service
from arena.service import entries
from arena.service.bot_views import RatingChart
from arena.service.branches import bot_choices
from arena.service.competitions import CompetitionError, FinalRow, LadderRow, NewCompetition
from arena.service.games import GameFilter, GameRow, game_list
from arena.service.intake import Purpose, take_upload
from arena.service.kits import competition_kit, competition_rules, kit_zip
from arena.service.permissions import allowed
from arena.service.uploads import form_runtime
from arena.service.watching import competition_live_games
from web.auth import current_account, guarded, public
from web.downloads import disposition
from web.extensions import get_store
from web.forms import form_float, form_int, read_file, sentence, upload_key
from web.limits import heavy, reads
from web.render import Axis, axis_svg, interval_svg
from web.tournaments import MAX_RULE_FILE_BYTES, rule_file

__all__ = [
    "LIVE_SECONDS",
    "competitions",
    "countdown",
    "local_input",
    "parse_local",
    "zoned",
]

logger = logging.getLogger(__name__)

competitions = Blueprint("competitions", __name__)

#: How often an open competition's (or a playing final's) ladder refreshes (seconds).
LIVE_SECONDS = 5
#: The entrant page's games.
ENTRANT_GAMES = 30
#: The player counts the form offers (``2v2``: four players in two teams).
PLAYER_CHOICES = ("2", "3", "4", "5", "2v2")
#: Every IANA zone name this machine knows, sorted (the form's time zone select).
ZONES = tuple(sorted(available_timezones()))
#: The competition statuses during which the ladder region polls.
LIVE_STATUSES = ("open", "final")


# --- dates ----------------------------------------------------------------------------------


def zoned(value: datetime | None, zone: str = "UTC") -> str:
    """``value`` in the IANA zone ``zone`` as pages show it: ``2026-12-01 18:00 CET``
    (UTC where the zone is unknown)."""
    if value is None:
        return ""
    try:
        tz: ZoneInfo = ZoneInfo(zone)
    except (ZoneInfoNotFoundError, ValueError):
        tz = ZoneInfo("UTC")
    return value.astimezone(tz).strftime("%Y-%m-%d %H:%M %Z")


def local_input(value: datetime, zone: str) -> str:
    """``value`` in the IANA zone ``zone`` as a ``datetime-local`` field holds it:
    ``2026-12-01T18:00`` (UTC where the zone is unknown)."""
    try:
        tz: ZoneInfo = ZoneInfo(zone)
    except (ZoneInfoNotFoundError, ValueError):
        tz = ZoneInfo("UTC")
    return value.astimezone(tz).strftime("%Y-%m-%dT%H:%M")


def countdown(value: datetime | None, now: datetime | None = None, suffix: str = "") -> str:
    """The time left until ``value`` as the page shows it before its script ticks:
    ``2 d 03:04:05``, ``03:04:05`` (followed by ``suffix``, e.g. `` left``); ``passed``
    once it has (no suffix: never "passed left")."""
    if value is None:
        return ""
    left = int((value - (now or datetime.now(UTC))).total_seconds())
    if left <= 0:
        return "passed"
    days, rest = divmod(left, 86400)
    clock = f"{rest // 3600:02d}:{rest % 3600 // 60:02d}:{rest % 60:02d}"
    return (f"{days} d {clock}" if days else clock) + suffix


def parse_local(text: str, zone: str, field: str) -> datetime:
    """A form's ``datetime-local`` value (``2026-12-01T18:00``) read in the IANA zone
    ``zone``, as an aware UTC moment.

    Raises:
        CompetitionError: not such a date and time, or an unknown zone (names ``field``).
    """
    try:
        tz = ZoneInfo(zone)
    except (ZoneInfoNotFoundError, ValueError):
        raise CompetitionError(f"{zone!r} is no time zone: choose one from the list") from None
    try:
        local = datetime.fromisoformat(text.strip())
    except ValueError:
        raise CompetitionError(
            f"the {field} must be a date and time like 2026-12-01T18:00, not {text!r}"
        ) from None
    return local.replace(tzinfo=tz).astimezone(UTC)


# --- the list and the creation form ---------------------------------------------------------


@competitions.get("/competitions")
@public
def competition_index() -> str:
    """Every competition: status, rules, players, deadline with a countdown, entrants."""
    return render_template(
        "competitions.html",
        competitions=service.competition_list(get_store()),
        can_create=allowed(current_account(), "create-competition"),
        now=datetime.now(UTC),
    )


def _form_context(values: dict[str, Any]) -> dict[str, Any]:
    return {
        "presets": list(PRESETS),
        "player_choices": PLAYER_CHOICES,
        "runtimes": list(service.RUNTIMES),
        "zones": ZONES,
        "max_rule_bytes": MAX_RULE_FILE_BYTES,
        "bounds": service.BOUNDS,
        "values": values,
    }


#: The creation form's defaults (the service's, as a person types them).
FORM_DEFAULTS: dict[str, Any] = {
    "rules": "draw",
    "players": "2",
    "move_ms": "1000",
    "memory_mb": "256",
    "runtimes": ["python"],
    "time_zone": "",
    "daily_submissions": "5",
    "games_per_deal": "2",
    "final_top": "8",
    "final_confidence": "0.95",
    "final_max_games": "14000",
    "final_versions": "2",
    "min_account_days": "0",
}


@competitions.route("/competitions/new", methods=["GET", "POST"])
@guarded("create-competition")
def new_competition() -> BaseResponse | tuple[str, int] | str:
    """Create a competition: entries open at ``opens`` (now if left empty), close at the
    deadline; the ladder plays by itself meanwhile, the final after."""
    if request.method == "GET":
        return render_template("competition_new.html", **_form_context(dict(FORM_DEFAULTS)))
    values: dict[str, Any] = {key: request.form.get(key, "") for key in FORM_DEFAULTS}
    values.update(
        name=request.form.get("name", "").strip(),
        opens=request.form.get("opens", ""),
        deadline=request.form.get("deadline", ""),
        description=request.form.get("description", ""),
        runtimes=request.form.getlist("runtimes"),
        sources_public=bool(request.form.get("sources_public")),
    )
    try:
        new = _new_competition(values)
        competition_id = service.create_competition(get_store(), current_account(), new)
    except (PermissionDenied, NotFound):
        raise
    except (ArenaError, ValueError, LookupError) as exc:
        flash(_sentence(exc))
        return render_template("competition_new.html", **_form_context(values)), 400
    name = service.competition_name(get_store(), competition_id)  # as stored: normalised
    flash(f"Competition {name} created.")
    return redirect(url_for("competitions.competition_page", name=name))


def _new_competition(values: dict[str, Any]) -> NewCompetition:
    """The form's competition (the service validates the rest).

    Raises:
        ArenaError: a number, a date or the rule file cannot be read (the message says).
    """
    zone = str(values["time_zone"]) or "UTC"
    players = str(values["players"])
    opens = str(values["opens"]).strip()
    if not str(values["deadline"]).strip():
        raise CompetitionError("choose a deadline")
    custom = rule_file()
    return NewCompetition(
        name=str(values["name"]),
        rules=str(values["rules"]),
        custom_rules=custom,
        players=4 if players == "2v2" else form_int("players", 2),
        teams=players == "2v2",
        move_seconds=service.seconds_of_ms(form_int("move_ms", 1000)),
        memory_mb=form_int("memory_mb", 256),
        runtimes=tuple(values["runtimes"]),
        opens=parse_local(opens, zone, "opening time") if opens else None,
        deadline=parse_local(str(values["deadline"]), zone, "deadline"),
        time_zone=zone,
        daily_submissions=form_int("daily_submissions", 5),
        sources_public=bool(values["sources_public"]),
        games_per_deal=form_int("games_per_deal", 2),
        final_top=form_int("final_top", 8),
        final_confidence=form_float("final_confidence", 0.95),
        final_max_games=form_int("final_max_games", 14000),
        final_versions=form_int("final_versions", 2),
        description=str(values["description"]).strip(),
        min_account_days=form_int("min_account_days", 0),
    )


# --- a competition's page -------------------------------------------------------------------


def _page_context(name: str, *, whole: bool = True) -> dict[str, Any]:
    """What the page shows (``whole``: with the entry form's versions; the live part,
    polled, needs none)."""
    store, account = get_store(), current_account()
    view = service.competition_view(store, account, name)
    ladder = [_rated(r.rating, r.low, r.high) for r in view.standings]
    axis = Axis.spanning((low, high) for _, low, high in filter(None, ladder))
    final = view.final
    replaced = final.replaced.rows if final is not None and final.replaced is not None else None
    entering = whole and account is not None and view.can_enter
    own = bot_choices(store, account) if entering and account is not None else []
    return {
        "c": view,
        "s": view.summary,
        "now": datetime.now(UTC),
        "live": view.summary.status in LIVE_STATUSES,
        "live_seconds": LIVE_SECONDS,
        "axis": axis_svg(axis),
        "bars": [
            None if r is None else interval_svg(axis, *r, provisional=row.provisional)
            for r, row in zip(ladder, view.standings, strict=True)
        ],
        "final_table": _final_table(final.rows if final is not None else ()),
        "confidence_note": service.final_promise(view.final_confidence, view.final_max_games),
        "replaced_table": None if replaced is None else _final_table(replaced),
        "own_versions": [choice for choice in own if choice.kind == "yours"],
        "live_games": competition_live_games(store, account, name),
        "manage_choices": [r for r in view.standings if r.status == "active"],
        **_entrant_context(name, whole),
    }


def _entrant_context(name: str, whole: bool) -> dict[str, Any]:
    """The entrant's part of the page: how long placement takes now (with the deadline's
    warning) and its versions for the final (arena.service.entries)."""
    if not whole:
        return {}
    store, account = get_store(), current_account()
    choice = None
    if account is not None and allowed(account, "enter-competition"):
        choice = entries.final_choice(store, account, name)
    return {
        "outlook": entries.placement_outlook(store, name),
        "final_choice": choice if choice is not None and choice.versions else None,
    }


def _final_table(rows: Sequence[FinalRow]) -> dict[str, Any]:
    """A final table's pictures: its axis, a bar a row (None: not rated), and the places
    two finalists share (a tie: their ratings were not separated)."""
    rated = [_rated(r.rating, r.low, r.high) for r in rows]
    axis = Axis.spanning((low, high) for _, low, high in filter(None, rated))
    places = [r.place for r in rows if r.place is not None]
    return {
        "rows": list(rows),
        "axis": axis_svg(axis),
        "bars": [None if r is None else interval_svg(axis, *r) for r in rated],
        "tied": {place for place in places if places.count(place) > 1},
    }


def _rated(
    rating: float | None, low: float | None, high: float | None
) -> tuple[float, float, float] | None:
    """(rating, low, high) when all three are known, else None (not rated yet)."""
    if rating is None or low is None or high is None:
        return None
    return rating, low, high


@competitions.get("/competitions/<name>")
@public
def competition_page(name: str) -> str:
    """A competition: rules, dates, the live ladder, recent games, the final when it comes,
    the entrant's notices and entry form, the organiser's controls."""
    return render_template("competition.html", **_page_context(name), **_rules_context(name))


def _rules_context(name: str) -> dict[str, Any]:
    """The rule set the competition plays, for its page (its parameters, its page's link)."""
    return {"rule_set": competition_rules(get_store(), name)}


@competitions.get("/competitions/<name>/kit.zip")
@public
def kit_download(name: str) -> Response:
    """The competition's kit: its rules file, a starter bot for its runtime and a README
    with the commands to play and compare locally under exactly its rules (a zip)."""
    kit = competition_kit(get_store(), name, server=request.host_url)
    response = Response(kit_zip(kit), mimetype="application/zip")
    response.headers["Content-Disposition"] = disposition(f"{kit.folder}.zip")
    return response


@competitions.get("/competitions/<name>/live")
@public
def competition_live(name: str) -> str:
    """The live part of a competition's page (polled while it is open or its final plays)."""
    return render_template("_competition_live.html", **_page_context(name, whole=False))


def _again(name: str, exc: Exception) -> tuple[str, int]:
    """The competition's page again with the service's sentence (a refused form)."""
    flash(_sentence(exc))
    return render_template("competition.html", **_page_context(name), **_rules_context(name)), 400


def _sentence(exc: Exception) -> str:
    """A refusal as one sentence (a KeyError's message without the quotes its str adds)."""
    if isinstance(exc, KeyError) and exc.args:
        return sentence(str(exc.args[0]))
    return sentence(str(exc))


def _id(digits: str) -> int:
    """A form's id (digits): 0, which names nothing, when longer than any id (Python
    reads at most 4300 digits; the service refuses ids past the database's)."""
    return int(digits) if len(digits) <= 20 else 0


@competitions.post("/competitions/<name>/enter")
@guarded("enter-competition")
def enter(name: str) -> BaseResponse | tuple[str, int]:
    """Enter a bot: a ``.py`` file (checked in the sandbox first) or one of your accepted
    versions. Your latest accepted entry plays; earlier ones keep their history."""
    chosen = request.form.get("version", "").strip()
    file = request.files.get("source")
    try:
        if chosen:
            if not chosen.isdigit():
                raise CompetitionError(f"choose one of your versions, not {chosen!r}")
            entry = service.enter_with_version(get_store(), current_account(), name, _id(chosen))
            flash(
                "Entered: your version plays its placement games now; your placed version "
                "plays on until it is placed."
                if entry.status == "placing"
                else "Entered: your version plays on the ladder now."
            )
        elif file is not None and file.filename:
            filename, data = read_file(file)
            received = take_upload(
                get_store(),
                current_account(),
                filename,
                data,
                purpose=Purpose.entry(name),
                name=request.form.get("bot_name", "").strip(),
                runtime=form_runtime(filename, request.form.get("runtime", "")),
                key=upload_key(),
            )
            assert received.entry is not None
            flash(
                sentence(received.notice)
                if received.notice is not None
                else f"Received {filename}: it is checked in the sandbox, then plays on the "
                f"ladder (entry {received.entry.id})."
            )
        else:
            raise CompetitionError(
                "choose a bot file to upload (.py, or .js for JavaScript), or one of your versions"
            )
    except (PermissionDenied, NotFound):
        raise
    except (ArenaError, ValueError) as exc:
        return _again(name, exc)
    return redirect(url_for("competitions.competition_page", name=name))


@competitions.post("/competitions/<name>/final-choice")
@guarded("enter-competition")
def final_choice(name: str) -> BaseResponse | tuple[str, int]:
    """Choose which of your versions go to the final (none ticked: the default, your
    best-rated placed version and your latest placed one)."""
    try:
        chosen = request.form.getlist("version")
        if not all(v.strip().isdigit() for v in chosen):
            raise CompetitionError("choose your versions from the list")
        ids = [_id(v.strip()) for v in chosen]
        made = entries.choose_final(get_store(), current_account(), name, ids)
    except (PermissionDenied, NotFound):
        raise
    except ArenaError as exc:
        return _again(name, exc)
    goes = ", ".join(v.name for v in made.versions if v.goes) or "none placed yet"
    said = "your choice" if made.chosen else "the default (your best and your latest placed)"
    flash(f"Saved: {said} goes to the final; as things stand: {goes}.")
    return redirect(url_for("competitions.competition_page", name=name))


@competitions.post("/competitions/<name>/deadline")
@guarded("manage-competition", early=False)
def extend(name: str) -> BaseResponse | tuple[str, int]:
    """Move the deadline later (the organiser, or an admin): read in the competition's
    time zone."""
    try:
        view = service.competition_view(get_store(), current_account(), name)
        if not view.can_manage:  # refused before its form is read
            raise PermissionDenied(
                "only its organiser or an admin may change this competition",
                action="manage-competition",
                anonymous=current_account() is None,
            )
        zone = view.summary.time_zone
        deadline = parse_local(request.form.get("deadline", ""), zone, "deadline")
        service.extend_deadline(get_store(), current_account(), name, deadline)
    except (PermissionDenied, NotFound):
        raise
    except ArenaError as exc:
        return _again(name, exc)
    flash(f"The deadline is now {zoned(deadline, zone)}.")
    return redirect(url_for("competitions.competition_page", name=name))


@competitions.post("/competitions/<name>/disqualify")
@guarded("manage-competition", early=False)
def disqualify(name: str) -> BaseResponse | tuple[str, int]:
    """Disqualify an entrant's version, with the reason shown on its row."""
    chosen = request.form.get("version", "").strip()
    try:
        if not chosen.isdigit():
            raise CompetitionError("choose the version to disqualify")
        reason = request.form.get("reason", "").strip()
        service.disqualify(get_store(), current_account(), name, _id(chosen), reason)
    except (PermissionDenied, NotFound):
        raise
    except ArenaError as exc:
        return _again(name, exc)
    flash("Disqualified: it plays no more, and its row says why.")
    return redirect(url_for("competitions.competition_page", name=name))


@competitions.post("/competitions/<name>/close")
@guarded("manage-competition", early=False)
def close(name: str) -> BaseResponse | tuple[str, int]:
    """Close the entries now (the deadline becomes now): the final follows."""
    try:
        service.close_now(get_store(), current_account(), name)
    except (PermissionDenied, NotFound):
        raise
    except ArenaError as exc:
        return _again(name, exc)
    flash("Entries are closed: the ladder stops and the final starts.")
    return redirect(url_for("competitions.competition_page", name=name))


@competitions.post("/competitions/<name>/rerun")
@guarded("manage-competition", early=False)
def rerun(name: str) -> BaseResponse | tuple[str, int]:
    """Play the final again, with the organiser's reason (its games are kept, not
    counted; its table stays, marked replaced, until the new one is published)."""
    try:
        reason = request.form.get("reason", "")
        service.rerun_final(get_store(), current_account(), name, reason)
    except (PermissionDenied, NotFound):
        raise
    except ArenaError as exc:
        return _again(name, exc)
    flash("The final will be played again: its table stays, marked replaced, until then.")
    return redirect(url_for("competitions.competition_page", name=name))


# --- exports (the API's, without a token: the page's links work in a browser) -------------


#: The exports' columns: the rows' fields, as the API's exports have them.
EXPORT_COLUMNS = {
    "ladder": [field.name for field in dataclasses.fields(LadderRow)],
    "final": [field.name for field in dataclasses.fields(FinalRow)],
}


def _export_rows(name: str, table: str) -> list[dict[str, Any]]:
    store, account = get_store(), current_account()
    if table == "ladder":
        return service.ladder_rows(store, account, name)
    return service.final_rows(store, account, name)


@competitions.get("/competitions/<name>/<any(ladder, final):table>.csv")
@public
@reads
@heavy
def export_csv(name: str, table: str) -> Response:
    """The ladder (best first) or the published final table (first place first; only the
    header before) as CSV."""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=EXPORT_COLUMNS[table], lineterminator="\n")
    writer.writeheader()
    writer.writerows(_export_rows(name, table))
    response = Response(out.getvalue(), mimetype="text/csv")
    response.headers["Content-Disposition"] = disposition(f"{name}-{table}.csv")
    return response


@competitions.get("/competitions/<name>/<any(ladder, final):table>.json")
@public
@reads
@heavy
def export_json(name: str, table: str) -> dict[str, Any]:
    """The ladder or the published final table as JSON, ``{"rows": [...]}``."""
    return {"competition": name, "table": table, "rows": _export_rows(name, table)}


# --- an entrant's page ----------------------------------------------------------------------


@competitions.get("/competitions/<name>/entrants/<entrant>")
@public
def entrant_page(name: str, entrant: str) -> str:
    """An entrant (by ladder label or version id): its rating history and its games."""
    store, account = get_store(), current_account()
    view = service.competition_view(store, account, name)
    row = next(
        (r for r in view.standings if r.label == entrant or str(r.version_id) == entrant),
        None,
    )
    if row is None:
        abort(404, f"No entrant {entrant!r} in the competition {name}.")
    points = service.rating_history(store, account, name, row.version_id)
    chart = RatingChart(
        rules=f"{view.summary.name} ladder ({view.summary.rules})",
        times=[p.time.timestamp() for p in points],
        ratings=[p.rating for p in points],
        lows=[p.low for p in points],
        highs=[p.high for p in points],
        versions=[],
    )
    games: list[GameRow] = []
    for tournament in (view.ladder, view.final_tournament):
        if tournament and row.label:
            wanted = GameFilter(tournament=tournament, labels=(row.label,))
            games += game_list(store, wanted, limit=ENTRANT_GAMES, viewer=current_account()).rows
    games.sort(key=lambda g: g.finished or datetime.min.replace(tzinfo=UTC), reverse=True)
    return render_template(
        "competition_entrant.html",
        c=view,
        s=view.summary,
        row=row,
        points=points,
        chart=chart if points else None,
        games=games[:ENTRANT_GAMES],
    )


competitions.add_app_template_filter(zoned)
competitions.add_app_template_filter(countdown)
competitions.add_app_template_filter(local_input)
competitions.add_app_template_filter(service.rank_label, "rank_label")
