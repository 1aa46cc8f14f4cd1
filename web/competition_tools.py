"""A competition's organiser's tools on the web (issue 31, docs/competitions.md): the
organiser's page (the settings that change after creation, the ladder's pause,
announcements, the action log), the copies across entrants, an entrant's withdrawal, and
the competition's games as one download (JSON lines, streamed).

Every read and write is arena.service.competition_tools', which checks its own permission
(``manage-competition``: the organiser or an admin; ``enter-competition``: the entrant's
own withdrawal); a refused input comes back as the service's sentence. What the
competition's page shows of these (announcements, the pause, the withdrawal's button) comes
from the template global ``competition_extras`` (``_competition_tools.html``).
"""

from __future__ import annotations

from typing import Any

from flask import (
    Blueprint,
    Response,
    flash,
    redirect,
    render_template,
    request,
    stream_with_context,
    url_for,
)
from werkzeug.wrappers import Response as BaseResponse

from arena.errors import ArenaError, NotFound, PermissionDenied
from arena.service import competition_copies as copies
from arena.service import competition_tools as tools
from arena.service import competitions as service
from arena.service.competition_tools import CompetitionExtras, SettingsChange
from web.auth import current_account, guarded, public
from web.competitions import local_input, parse_local
from web.downloads import PRUNED_HEADER, disposition
from web.extensions import get_store
from web.forms import form_float, form_int, sentence
from web.limits import heavy, reads

__all__ = ["competition_tools", "extras"]

competition_tools = Blueprint("competition_tools", __name__)


def extras(name: str) -> CompetitionExtras:
    """What the competition's page shows of the organiser's tools (a template global)."""
    return tools.competition_extras(get_store(), current_account(), name)


def _organiser_context(name: str) -> dict[str, Any]:
    store, account = get_store(), current_account()
    log = tools.action_log(store, account, name)  # the organiser's only: refused first
    view = service.competition_view(store, account, name)
    return {
        "c": view,
        "s": view.summary,
        "log": log,
        "extras": tools.competition_extras(store, account, name),
        "open": view.summary.status in ("upcoming", "open"),
        "bounds": service.BOUNDS,
        "max_announcement": tools.MAX_ANNOUNCEMENT,
    }


@competition_tools.get("/competitions/<name>/organiser")
@guarded("manage-competition", early=False)
def organiser_page(name: str) -> str:
    """The organiser's page: the settings that change after creation, the ladder's pause,
    announcements, the action log (who changed what, when), the copies' report's link."""
    return render_template("competition_organiser.html", **_organiser_context(name))


def _refused(name: str, exc: Exception) -> tuple[str, int]:
    flash(sentence(str(exc)))
    return render_template("competition_organiser.html", **_organiser_context(name)), 400


def _back(name: str) -> BaseResponse:
    return redirect(url_for("competition_tools.organiser_page", name=name))


def _settings_change(name: str) -> SettingsChange:
    """The settings form's changes (a field left as shown is not a change).

    Raises:
        ArenaError: a number or the date cannot be read (the message names the field).
    """
    view = service.competition_view(get_store(), current_account(), name)
    zone = view.summary.time_zone
    posted = request.form.get("deadline", "").strip()
    deadline = None
    if posted and posted != local_input(view.summary.deadline, zone):
        deadline = parse_local(posted, zone, "deadline")
    description = request.form.get("description")

    def number(field: str, current: int) -> int | None:
        return form_int(field, current) if field in request.form else None

    return SettingsChange(
        deadline=deadline,
        description=None if description is None else description.replace("\r\n", "\n"),
        daily_submissions=number("daily_submissions", view.daily_submissions),
        min_account_days=number("min_account_days", 0),
        final_top=number("final_top", view.final_top),
        final_confidence=form_float("final_confidence", view.final_confidence)
        if "final_confidence" in request.form
        else None,
        final_max_games=number("final_max_games", view.final_max_games),
    )


@competition_tools.post("/competitions/<name>/settings")
@guarded("manage-competition", early=False)
def edit_settings(name: str) -> BaseResponse | tuple[str, int]:
    """Change the settings that may change after creation; each change is logged."""
    try:
        tools.action_log(get_store(), current_account(), name)  # refused before the form
        changes = tools.edit_settings(get_store(), current_account(), name, _settings_change(name))
    except (PermissionDenied, NotFound):
        raise
    except (ArenaError, ValueError) as exc:
        return _refused(name, exc)
    flash(
        "Changed: " + "; ".join(f"{c.what} from {c.old} to {c.new}" for c in changes) + "."
        if changes
        else "Nothing changed."
    )
    return _back(name)


@competition_tools.post("/competitions/<name>/<any(pause, resume):act>")
@guarded("manage-competition", early=False)
def pause(name: str, act: str) -> BaseResponse | tuple[str, int]:
    """Pause the ladder (its pending matches void; none added), or let it play again."""
    try:
        if act == "pause":
            tools.pause_ladder(get_store(), current_account(), name)
        else:
            tools.resume_ladder(get_store(), current_account(), name)
    except (PermissionDenied, NotFound):
        raise
    except ArenaError as exc:
        return _refused(name, exc)
    flash("The ladder is paused." if act == "pause" else "The ladder plays again.")
    return _back(name)


@competition_tools.post("/competitions/<name>/announcements")
@guarded("manage-competition", early=False)
def announce(name: str) -> BaseResponse | tuple[str, int]:
    """Post an announcement on the competition's page."""
    try:
        tools.post_announcement(get_store(), current_account(), name, request.form.get("body", ""))
    except (PermissionDenied, NotFound):
        raise
    except ArenaError as exc:
        return _refused(name, exc)
    flash("Announced: it is on the competition's page.")
    return _back(name)


@competition_tools.get("/competitions/<name>/copies")
@guarded("manage-competition", early=False)
def copies_page(name: str) -> tuple[str, int] | str:
    """The copies and near-copies across the entrants (the organiser's): pairs, scores,
    matching lines."""
    store, account = get_store(), current_account()
    threshold = request.args.get("threshold", "").strip()
    try:
        chosen = float(threshold) if threshold else copies.THRESHOLD
        report = copies.copy_report(store, account, name, threshold=chosen)
    except (PermissionDenied, NotFound):
        raise
    except (ArenaError, ValueError) as exc:
        tools.action_log(store, account, name)  # (a stranger gets the refusal, not this)
        message = f"the threshold is a share from 0 to 1, not {threshold!r}"
        flash(sentence(str(exc) if isinstance(exc, ArenaError) else message))
        return render_template("competition_copies.html", name=name, report=None), 400
    return render_template("competition_copies.html", name=name, report=report)


@competition_tools.post("/competitions/<name>/withdraw")
@guarded("enter-competition")
def withdraw(name: str) -> BaseResponse:
    """Withdraw from the competition: your versions leave the ladder and the final."""
    try:
        tools.withdraw(get_store(), current_account(), name)
        flash("You withdrew: your versions play no more, and the ladder says so.")
    except (PermissionDenied, NotFound):
        raise
    except ArenaError as exc:
        flash(sentence(str(exc)))
    return redirect(url_for("competitions.competition_page", name=name))


@competition_tools.get("/competitions/<name>/games.jsonl")
@public
@reads
@heavy
def games_export(name: str) -> Response:
    """Every game record of the competition (ladder, then final), one JSON document a line,
    streamed as it is read."""
    lines = tools.competition_games(get_store(), current_account(), name)  # 404 first
    response = Response(stream_with_context(lines), mimetype="application/x-ndjson")
    response.headers["Content-Disposition"] = disposition(f"{name}-games.jsonl")
    note = tools.competition_games_note(get_store(), name)
    if note is not None:  # retention pruned some: say so beside the lines
        response.headers[PRUNED_HEADER] = note
    return response


competition_tools.add_app_template_global(extras, "competition_extras")
