"""Joining a class, asking for the teacher role, and the first-time password (issue 22,
docs/web.md "Classes on the web").

- ``/join/CODE``: a visitor picks a pseudonym and a password (no e-mail; a real name if
  they wish, which only the class's teachers see) and is a logged-in member at once; a
  logged-in user joins with one click. Its posts are limited per class (its code: classes
  behind one school address join in the same minute), its views per address
  (``ARENA_JOIN_PAGE_LIMIT``: a school's classes, not an endless walk through codes).
- A user asks to be a teacher (``ARENA_TEACHER_REQUESTS``: admins decide, or granted at
  once, or no requests); admins grant or refuse on ``/admin/users``, and every page's nav
  shows an admin how many wait ("2 teacher requests").
- A user whose password is a first-time one (a roster import's, a teacher's reset) is sent
  to the password page at login, and from every other page until it is changed.
"""

from __future__ import annotations

import logging

from flask import (
    Blueprint,
    Flask,
    current_app,
    flash,
    redirect,
    render_template,
    request,
    session,
    url_for,
)
from werkzeug.wrappers import Response as BaseResponse

from arena.errors import ArenaError, NotFound, PermissionDenied
from arena.service import classes as service
from arena.service.accounts import MAX_PASSWORD, MIN_PASSWORD
from arena.service.classes import class_by_code
from arena.service.permissions import allowed
from arena.service.role_requests import decide_role_request, request_role, role_requests
from web.auth import current_account, guarded, log_in
from web.extensions import get_store
from web.forms import sentence
from web.limits import (
    BUSY_FORMS,
    JOIN_LIMIT,
    JOIN_REFUSAL,
    SIGNUP_LIMIT,
    SIGNUP_REFUSAL,
    address_key,
    form_limit,
    hashed,
    hashing,
    join_code_key,
    join_page_limit,
    password_forms,
)

__all__ = ["FIRST_TIME", "MUST_CHANGE_FREE", "init_joins", "joins"]

logger = logging.getLogger(__name__)

joins = Blueprint("joins", __name__)

#: What a request for the teacher role did, as the flash says it.
ASKED = {
    "requested": "Asked: an admin will grant or refuse it.",
    "granted": "You are a teacher now: create your class.",
    "held": "You are a teacher already.",
}

#: What the password page says to a user sent there to choose their own password.
FIRST_TIME = "Choose your own password first: yours is a first-time one."

#: The endpoints a user with a first-time password may still reach: the password page
#: itself, logging out, the static files, the health check.
MUST_CHANGE_FREE = frozenset(
    {"accounts.password", "accounts.logout", "accounts.login", "static", "healthz"}
)


def init_joins(app: Flask) -> None:
    """Add the join, role-request pages and the first-time password's redirect to
    ``app`` (after :func:`web.auth.init_auth`: the account is loaded by then)."""
    app.register_blueprint(joins)
    app.before_request(_must_change_password)
    app.context_processor(_requests_waiting)
    app.extensions[BUSY_FORMS]["joins.join"] = lambda: _join_form(
        request.view_args.get("code", "") if request.view_args else "",
        status=503,
        pseudonym=request.form.get("pseudonym", "").strip(),
        real_name=request.form.get("real_name", "").strip(),
    )[0]


def _requests_waiting() -> dict[str, int]:
    """For an admin, on every page (the nav's badge): the teacher requests waiting for a
    decision, which the admins' users page lists."""
    account = current_account()
    if account is None or not allowed(account, "manage-users"):
        return {"requests_waiting": 0}
    return {"requests_waiting": len(role_requests(get_store(), account))}


def _must_change_password() -> BaseResponse | None:
    """Off to the password page, for a user whose password is a first-time one (the API
    answers such a user itself)."""
    account = current_account()
    if account is None or not account.must_change_password:
        return None
    if request.path.startswith("/api/") or request.endpoint in MUST_CHANGE_FREE:
        return None
    said = any(message == FIRST_TIME for _, message in session.get("_flashes", []))
    if request.method == "GET" and not said:
        flash(FIRST_TIME)
    return redirect(url_for("accounts.password"))


# --- joining --------------------------------------------------------------------------------


def _join_form(code: str, status: int = 200, **values: str) -> tuple[str, int]:
    """The join page of ``code``: the class it opens (or why it opens none)."""
    found, problem = None, ""
    try:
        found = class_by_code(get_store(), code)
    except ArenaError as exc:
        problem = sentence(str(exc))
    page = render_template(
        "join.html",
        code=code,
        c=found,
        problem=problem,
        pseudonym=values.get("pseudonym", ""),
        real_name=values.get("real_name", ""),
        min_password=MIN_PASSWORD,
        max_password=MAX_PASSWORD,
    )
    return page, status if found is not None or status != 200 else 404


#: Where :func:`_unknown_code` keeps its answer, in the request's environ.
_UNKNOWN_CODE = "arena.unknown_join_code"


def _code_refused(code: str) -> bool:
    try:
        class_by_code(get_store(), code)
    except ArenaError:
        return True
    return False


def _unknown_code() -> bool:
    """Whether the request's join code names no class (an address's guesses count as its
    sign-ups, not as any class's joins); looked up once a request, for both limits."""
    if _UNKNOWN_CODE not in request.environ:
        code = request.view_args.get("code") if request.view_args else None
        request.environ[_UNKNOWN_CODE] = not isinstance(code, str) or _code_refused(code)
    unknown: bool = request.environ[_UNKNOWN_CODE]
    return unknown


def _known_code() -> bool:
    return not _unknown_code()


@joins.route("/join/<code>", methods=["GET", "POST"])
@guarded("sign-up")
@password_forms
@form_limit("ARENA_JOIN_LIMIT", JOIN_LIMIT, join_code_key, JOIN_REFUSAL, _unknown_code)
@form_limit("ARENA_SIGNUP_LIMIT", SIGNUP_LIMIT, address_key, SIGNUP_REFUSAL, _known_code)
@join_page_limit
@hashing(join_code_key)
def join(code: str) -> BaseResponse | tuple[str, int]:
    """Join a class with its code: a visitor makes an account (pseudonym, password,
    optional real name) and is logged in; a logged-in user joins with one click."""
    if request.method == "GET":
        return _join_form(code)
    account = current_account()
    real_name = request.form.get("real_name", "").strip()
    try:
        if account is not None:
            joined_as = service.join_as(get_store(), account, code, real_name)
            name = joined_as.row.name
            flash(
                f"You joined the class {name}." if joined_as.new else f"You are in {name} already."
            )
            return redirect(url_for("classes.class_page", name=name))
        pseudonym = request.form.get("pseudonym", "").strip()
        password = request.form.get("password", "")
        if password != request.form.get("confirm", ""):
            flash("The two passwords differ.")
            return _join_form(code, 400, pseudonym=pseudonym, real_name=real_name)
        hasher = current_app.config["ARENA_PASSWORD_HASHER"]
        joined = service.join_class(get_store(), hasher, code, pseudonym, password, real_name)
    except (PermissionDenied, NotFound):
        raise
    except ArenaError as exc:
        if not _code_refused(code):  # else the page says it once, in place of the form
            flash(sentence(str(exc)))
        return _join_form(
            code,
            400,
            pseudonym=request.form.get("pseudonym", "").strip(),
            real_name=real_name,
        )
    hashed(True)
    log_in(joined)
    row = class_by_code(get_store(), code)
    flash(f"Welcome, {joined.name}: you are in the class {row.name}.")
    return redirect(url_for("classes.class_page", name=row.name))


# --- the teacher role -------------------------------------------------------------------------


@joins.post("/account/teacher-request")
@guarded("change-password")
def ask_teacher() -> BaseResponse:
    """Ask to be a teacher: admins decide (or it is granted at once, as the deployment
    says)."""
    try:
        outcome = request_role(get_store(), current_account(), "teacher")
    except PermissionDenied:
        raise
    except ArenaError as exc:
        flash(sentence(str(exc)))
    else:
        flash(ASKED[outcome])
    return redirect(url_for("classes.class_index"))


@joins.post("/admin/users/<name>/request")
@guarded("manage-users")
def decide(name: str) -> BaseResponse:
    """Grant or refuse the role a user asked for (admins)."""
    grant = request.form.get("decision") == "grant"
    try:
        decide_role_request(get_store(), current_account(), name, grant)
    except PermissionDenied:
        raise
    except (ArenaError, NotFound) as exc:
        flash(sentence(str(exc)))
    else:
        flash(f"{name} is a teacher now." if grant else f"{name}'s request is refused.")
    return redirect(url_for("accounts.admin_users"))
