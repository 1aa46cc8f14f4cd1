"""Classes on the web (issue 22, docs/web.md "Classes on the web"): the list of one's
classes, the teacher's creation form, a class's page (the teacher's roster view; a student's
class leaderboard; the assignments of both), the join code for a projector (the code, its
link and a QR code; rotate; its expiry), the roster import (printable logins with
first-time passwords, shown once), a student's password reset, another teacher, the class
leaderboard and the one-click class tournament.

Every read and write goes through :mod:`arena.service.classes`, which checks its own action
(``create-class``, ``manage-class``, membership); a refused input comes back as the
service's sentence on the form it came from. The join page, the role requests and the
first-time password's redirect are in :mod:`web.joins`.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import Any

import segno
from flask import (
    Blueprint,
    Response,
    current_app,
    flash,
    redirect,
    render_template,
    request,
    url_for,
)
from markupsafe import Markup
from werkzeug.wrappers import Response as BaseResponse

from arena.engine.rules import PRESETS
from arena.errors import ArenaError, NotFound, PermissionDenied
from arena.service import classes as service
from arena.service.assignment_views import class_assignments
from arena.service.board_views import tournament_name as class_tournament_name
from arena.service.class_roster import ROLES
from arena.service.classes import ClassError, ClassRow, NewClass
from arena.service.exports import spreadsheet_csv
from arena.service.permissions import allowed
from arena.service.role_requests import RoleRequestError, own_role_request, request_mode
from web.auth import current_account, guarded, public, to_login
from web.competitions import zoned
from web.downloads import disposition
from web.extensions import get_store
from web.forms import form_float, form_int, read_file, sentence
from web.render import Axis, axis_svg, interval_svg

__all__ = ["ROSTER_BYTES", "classes", "logins_csv", "qr_svg"]

logger = logging.getLogger(__name__)

classes = Blueprint("classes", __name__)

#: A roster file's size, at most (a Canvas gradebook of 500 students and 100 assignments).
ROSTER_BYTES = 512 * 1024
#: The join code's life the rotate form offers by default (hours).
JOIN_HOURS = 24.0
#: The one-click class tournament's games a pair, by default.
TOURNAMENT_GAMES = 20
#: The headers of an answer that shows passwords (the logins, a reset): kept by no cache
#: (a shared school computer's disk, its back button).
NO_STORE = {"Cache-Control": "no-store"}


def _sentence(exc: Exception) -> str:
    """A refusal as one sentence (a KeyError's message without the quotes its str adds)."""
    if isinstance(exc, KeyError) and exc.args:
        return sentence(str(exc.args[0]))
    return sentence(str(exc))


# --- the list and the creation form ---------------------------------------------------------


@classes.get("/classes")
@public
def class_index() -> BaseResponse | str:
    """The classes you teach and those you joined; "new class" for teachers, "ask to be a
    teacher" for users (anonymous visitors: the login page)."""
    store, account = get_store(), current_account()
    if account is None:
        return to_login()
    taught, joined = service.my_classes(store, account)
    try:
        requests_open = request_mode() != "closed"
    except RoleRequestError:  # a mistyped setting: no button (asking would fail)
        requests_open = False
    return render_template(
        "classes.html",
        taught=taught,
        joined=joined,
        can_create=allowed(account, "create-class"),
        requested=own_role_request(store, account),
        requests_open=requests_open,
    )


#: The creation form's defaults.
FORM_DEFAULTS: dict[str, Any] = {
    "name": "",
    "description": "",
    "rules": "block",
    "more_rules": [],
    "hours": str(int(JOIN_HOURS)),
}


@classes.route("/classes/new", methods=["GET", "POST"])
@guarded("create-class")
def new_class() -> BaseResponse | tuple[str, int] | str:
    """Create a class with its rule set(s); its join code comes with it."""
    context = {"presets": list(PRESETS)}
    if request.method == "GET":
        return render_template("class_new.html", values=dict(FORM_DEFAULTS), **context)
    values: dict[str, Any] = {
        "name": request.form.get("name", "").strip(),
        "description": request.form.get("description", "").strip(),
        "rules": request.form.get("rules", "block"),
        "more_rules": request.form.getlist("more_rules"),
        "hours": request.form.get("hours", ""),
    }
    rule_sets = [values["rules"], *(r for r in values["more_rules"] if r != values["rules"])]
    try:
        new = NewClass(
            name=values["name"],
            description=values["description"],
            rule_sets=tuple(rule_sets),
            join_hours=form_float("hours", JOIN_HOURS),
        )
        row = service.create_class(get_store(), current_account(), new)
    except (PermissionDenied, NotFound):
        raise
    except (ArenaError, ValueError, LookupError) as exc:
        flash(_sentence(exc))
        return render_template("class_new.html", values=values, **context), 400
    flash(f"Class {row.name} created: show its join code to your students.")
    return redirect(url_for("classes.join_code_page", name=row.name))


# --- a class's page -------------------------------------------------------------------------


def _rated(row: Any) -> tuple[float, float, float] | None:
    if row.rating is None or row.low is None or row.high is None:
        return None
    return float(row.rating), float(row.low), float(row.high)


def _bars(rows: list[Any]) -> tuple[Markup, list[Markup | None]]:
    """The rows' interval pictures on one axis, and the axis."""
    rated = [_rated(r) for r in rows]
    axis = Axis.spanning((low, high) for _, low, high in filter(None, rated))
    return axis_svg(axis), [None if r is None else interval_svg(axis, *r) for r in rated]


@classes.get("/classes/<name>")
@public  # its members only: the service checks
def class_page(name: str) -> str:
    """A class: for its teachers the roster (each student's latest version, its check,
    rating, faults and source) and the teacher's controls; for its students the class
    leaderboard and the assignments."""
    store, account = get_store(), current_account()
    row = service.class_for_member(store, account, name)
    listed = {"assignments": class_assignments(store, account, name), "zoned": zoned}
    if service.is_teacher(store, account, row.id):
        roster = service.roster_view(store, account, name)
        axis, bars = _bars(list(roster.students))
        return render_template(
            "class.html",
            c=row,
            roster=roster,
            axis=axis,
            bars=bars,
            presets=row.rule_sets or tuple(PRESETS),
            games=TOURNAMENT_GAMES,
            now=datetime.now(UTC),
            teacher=True,
            **listed,
        )
    board = service.class_leaderboard(store, account, name, show_reference=_show_reference(row))
    axis, bars = _bars(board.rows)
    return render_template(
        "class_student.html", c=row, board=board, axis=axis, bars=bars, now=datetime.now(UTC),
        teacher=False, roster_login=service.login_to_change(store, account, row), **listed,
    )  # fmt: skip


def _show_reference(row: ClassRow) -> bool:
    """Whether the leaderboard shows the reference bots: ``?reference=hide|show``, else
    the class's setting."""
    asked = request.args.get("reference")
    if asked in ("hide", "show"):
        return asked == "show"
    return bool(row.settings.get("show_reference", True))


@classes.get("/classes/<name>/leaderboard")
@public  # its members only: the service checks
def leaderboard(name: str) -> str:
    """The class leaderboard: its students' latest versions (reference bots shown or
    hidden), for its students and teachers."""
    store, account = get_store(), current_account()
    row = service.class_for_member(store, account, name)
    shown = _show_reference(row)
    rules = request.args.get("rules") or None
    board = service.class_leaderboard(store, account, name, show_reference=shown, rules=rules)
    axis, bars = _bars(board.rows)
    return render_template(
        "class_leaderboard.html", c=row, board=board, axis=axis, bars=bars, shown=shown
    )


@classes.post("/classes/<name>/tournament")
@guarded("manage-class", early=False)
def tournament(name: str) -> BaseResponse | tuple[str, int]:
    """One click: a round robin between the students' latest versions (with the reference
    bots if ticked), played by the workers at once."""
    try:
        games = form_int("games", TOURNAMENT_GAMES)
        tournament_id = service.start_class_tournament(
            get_store(),
            current_account(),
            name,
            reference=request.form.get("reference") == "on",
            rules=request.form.get("rules") or None,
            games=games,
        )
    except (PermissionDenied, NotFound):
        raise
    except ArenaError as exc:
        flash(_sentence(exc))
        return redirect(url_for("classes.class_page", name=name), 303)
    tournament_name = class_tournament_name(get_store(), tournament_id)
    flash(f"Tournament {tournament_name} started: the workers play it now.")
    return redirect(url_for("pages.tournament_page", name=tournament_name))


# --- the join code --------------------------------------------------------------------------


def qr_svg(text: str, title: str) -> Markup:
    """``text`` as a QR code, inline SVG (no size: CSS sizes it; no style attribute)."""
    code = segno.make(text, error="m")
    svg = code.svg_inline(
        scale=1, border=4, omitsize=True, svgclass="qr", lineclass=None, title=title, light="#fff"
    )
    return Markup(svg)


@classes.get("/classes/<name>/join-code")
@guarded("manage-class", early=False)
def join_code_page(name: str) -> str:
    """The join code for a projector: the code in big letters, its link and QR code, when
    it expires; a form to rotate it (the old one stops working)."""
    row = service.class_for_teacher(get_store(), current_account(), name)
    link = url_for("joins.join", code=row.join_code, _external=True) if row.join_code else ""
    expired = row.join_expires is not None and row.join_expires <= datetime.now(UTC)
    return render_template(
        "class_join_code.html",
        c=row,
        link=link,
        qr=qr_svg(link, f"QR code of {link}") if link and not expired else None,
        expired=expired,
        hours=int(JOIN_HOURS),
    )


@classes.post("/classes/<name>/join-code")
@guarded("manage-class", early=False)
def rotate(name: str) -> BaseResponse:
    """A new join code valid for the hours chosen (the old code stops working)."""
    try:
        hours = form_float("hours", JOIN_HOURS)
        row = service.rotate_join_code(get_store(), current_account(), name, hours=hours)
    except (PermissionDenied, NotFound):
        raise
    except ArenaError as exc:
        flash(_sentence(exc))
        return redirect(url_for("classes.join_code_page", name=name))
    flash(f"New join code {row.join_code}: the old one no longer works.")
    return redirect(url_for("classes.join_code_page", name=name))


# --- the roster -----------------------------------------------------------------------------


def logins_csv(logins: list[Any]) -> str:
    """The logins as CSV: ``real_name,login,password`` with a header; a real name a
    spreadsheet would run as a formula (``=HYPERLINK(...)``) quoted as the exports do."""
    columns = ("real_name", "login", "password")
    return spreadsheet_csv([{c: getattr(login, c) for c in columns} for login in logins], columns)


def _roster_text() -> str:
    """The roster's text from the form: its uploaded file (decoded as the service reads a
    file's bytes) or the text pasted (or carried from the preview)."""
    file = request.files.get("roster")
    if file is not None and file.filename:
        _, data = read_file(file, ROSTER_BYTES)
        if len(data) > ROSTER_BYTES:
            raise ClassError(f"a roster file is at most {ROSTER_BYTES // 1024} KiB")
        return service.decode_roster(data)
    text = request.form.get("text", "")
    if not text.strip():
        raise ClassError("paste the roster or choose the CSV file your school's system exports")
    return text


def _roster_choices() -> dict[str, Any]:
    """The teacher's choices on the preview: each column's role (``column-N``: the mapping
    is the preview's selects, in order), how logins are made, flagged students."""
    return {
        "mapping": request.form.getlist("column") or None,
        "logins": request.form.get("logins", "pseudonym"),
        "flagged": request.form.get("flagged", "skip"),
    }


@classes.route("/classes/<name>/roster", methods=["GET", "POST"])
@guarded("manage-class", early=False)
def roster(name: str) -> tuple[str, int] | tuple[str, int, dict[str, str]] | str:
    """Import a roster: the file a school's system exports (or a list pasted) is previewed
    first (the format recognised, each column's role to change, what each student becomes:
    made, updated, unchanged, flagged); confirmed (``action`` ``import``), it makes the
    accounts with first-time passwords and answers a printable page of the new logins (and
    their CSV), shown this once."""
    row = service.class_for_teacher(get_store(), current_account(), name)
    if request.method == "GET":
        return render_template("class_roster.html", c=row, text="")
    text = request.form.get("text", "")
    try:
        text = _roster_text()
        choices = _roster_choices()
        if request.form.get("action") != "import":
            preview = service.preview_roster(get_store(), current_account(), name, text, **choices)
            page = render_template(
                "class_roster_preview.html", c=row, p=preview, text=text, roles=ROLES
            )
            return page, 200, NO_STORE
        hasher = current_app.config["ARENA_PASSWORD_HASHER"]
        done = service.import_roster(get_store(), current_account(), name, text, hasher, **choices)
    except (PermissionDenied, NotFound):
        raise
    except ArenaError as exc:
        flash(_sentence(exc))
        return render_template("class_roster.html", c=row, text=text), 400
    page = render_template(
        "class_logins.html",
        c=row,
        logins=done.logins,
        done=done,
        csv_text=logins_csv(done.logins),
        login_url=url_for("accounts.login", _external=True),
    )
    return page, 200, NO_STORE


@classes.post("/classes/<name>/login")
@guarded("change-password")
def change_login(name: str) -> BaseResponse:
    """A student changes the login a roster gave them (a pseudonym) until their first
    upload; back to the class's page with a sentence."""
    service.class_for_member(get_store(), current_account(), name)
    try:
        renamed = service.change_own_login(
            get_store(), current_account(), request.form.get("login", "")
        )
    except (PermissionDenied, NotFound):
        raise
    except ArenaError as exc:
        flash(_sentence(exc))
    else:
        flash(f"Your login is now {renamed.name}: log in with it from now on.")
    return redirect(url_for("classes.class_page", name=name))


@classes.post("/classes/<name>/students/<student>/password")
@guarded("manage-class", early=False)
def reset_password(name: str, student: str) -> BaseResponse | tuple[str, int, dict[str, str]]:
    """A new first-time password for a student of the class, shown this once; the student
    must change it at the next login (their sessions end)."""
    row = service.class_for_teacher(get_store(), current_account(), name)
    hasher = current_app.config["ARENA_PASSWORD_HASHER"]
    try:
        password = service.reset_password(get_store(), current_account(), name, student, hasher)
    except ClassError as exc:  # a student with a role above user: admins only
        flash(_sentence(exc))
        return redirect(url_for("classes.class_page", name=row.name), 303)
    page = render_template(
        "class_password.html",
        c=row,
        student=student,
        password=password,
        login_url=url_for("accounts.login", _external=True),
    )
    return page, 200, NO_STORE


@classes.post("/classes/<name>/teachers")
@guarded("manage-class", early=False)
def add_teacher(name: str) -> BaseResponse:
    """Another teacher for the class (a user with the teacher role or above)."""
    user = request.form.get("user", "").strip()
    service.class_for_teacher(get_store(), current_account(), name)  # else 404 (or 403)
    try:
        service.add_teacher(get_store(), current_account(), name, user)
    except PermissionDenied:
        raise
    except (ArenaError, NotFound) as exc:
        flash(_sentence(exc))
    else:
        flash(f"{user} now teaches {name} too.")
    return redirect(url_for("classes.class_page", name=name))


# --- exports --------------------------------------------------------------------------------


@classes.post("/classes/<name>/logins.csv")
@guarded("manage-class", early=False)
def logins_download(name: str) -> Response:
    """The logins page's CSV, posted back from that page (the passwords are nowhere else:
    the server keeps only their hashes)."""
    service.class_for_teacher(get_store(), current_account(), name)
    response = Response(request.form.get("csv", ""), mimetype="text/csv")
    response.headers["Content-Disposition"] = disposition(f"{name}-logins.csv")
    response.headers.update(NO_STORE)
    return response
