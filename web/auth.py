"""Accounts on the web: sign up, log in, log out, change password, API tokens; and how a
route declares what it does.

Sessions are server-side (arena.service.accounts): Flask's signed cookie (HttpOnly,
SameSite=Lax, Secure when ``ARENA_HTTPS`` is set) holds a random session token, the database
its SHA-256; every request looks it up, so logging out (which deletes it) ends the session
everywhere the cookie was copied, and a password change ends every other session. Logging
in clears whatever the cookie held before and issues a new token. Every form (and every
htmx request, through ``hx-headers``) carries a CSRF token (Flask-WTF). Logins, sign-ups
and password changes are rate-limited, login attempts per address and per name (its key,
arena.compete.names.name_key: ``" bob"`` and ``"BOB"`` count as ``bob``), and password
hashing is bounded (:mod:`web.limits`). Admins list the accounts and give roles at
``/admin/users``.

**Authorization is not decided here**: :mod:`arena.service.permissions` is the one table,
and the service function behind every write checks its action itself. Each route declares
its action: :func:`public` (``read-public``) or :func:`guarded` (a named action, checked
before the view where no object is needed: anonymous visitors go to the login page, others
get 403). A test lists the routes and checks every one is declared, every write guarded.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from datetime import timedelta
from typing import Any, TypeVar
from urllib.parse import urlsplit

from argon2 import PasswordHasher
from flask import (
    Blueprint,
    Flask,
    abort,
    current_app,
    flash,
    g,
    make_response,
    redirect,
    render_template,
    request,
    session,
    url_for,
)
from werkzeug import exceptions as http_exceptions
from werkzeug.exceptions import HTTPException
from werkzeug.wrappers import Response as BaseResponse

from arena.errors import ArenaError, NotFound, PermissionDenied
from arena.service.accounts import (
    MAX_PASSWORD,
    MIN_PASSWORD,
    ROLES,
    SCOPES,
    SESSION_DAYS,
    Account,
    authenticate,
    change_own_password,
    close_session,
    give_role,
    list_accounts,
    new_token,
    open_session,
    password_hasher,
    revoke_own_token,
    session_account,
    sign_up,
    tokens_of,
)
from arena.service.permissions import ACTIONS, PERMISSIONS, allowed
from arena.service.role_requests import role_requests
from web.extensions import csrf, get_store
from web.forms import sentence
from web.limits import (
    BUSY_FORMS,
    LOGIN_ADDRESS_LIMIT,
    LOGIN_LIMIT,
    LOGIN_REFUSAL,
    PASSWORD_CHANGE_LIMIT,
    PASSWORD_REFUSAL,
    SIGNUP_LIMIT,
    SIGNUP_REFUSAL,
    account_key,
    address_key,
    form_limit,
    hashed,
    hashing,
    init_limits,
    login_name_key,
    password_forms,
)

__all__ = [
    "ACTION_ATTRIBUTE",
    "LOGIN_LIMIT",
    "accounts",
    "current_account",
    "guarded",
    "init_auth",
    "log_in",
    "public",
    "refusal",
    "to_login",
]

accounts = Blueprint("accounts", __name__)

#: The attribute where :func:`public` and :func:`guarded` record a view's action.
ACTION_ATTRIBUTE = "arena_action"

F = TypeVar("F", bound=Callable[..., Any])


def init_auth(app: Flask) -> None:
    """Configure sessions, CSRF and rate limits on ``app`` and add the account pages."""
    app.config["SECRET_KEY"] = app.config.get("SECRET_KEY") or _secret_key(app)
    app.config["SESSION_COOKIE_HTTPONLY"] = True
    app.config["SESSION_COOKIE_SAMESITE"] = "Lax"
    app.config["SESSION_COOKIE_SECURE"] = bool(os.environ.get("ARENA_HTTPS"))
    if app.config["SESSION_COOKIE_SECURE"]:  # the prefix needs Secure (OWASP ASVS 3.4.4)
        app.config["SESSION_COOKIE_NAME"] = "__Host-session"
    app.config["WTF_CSRF_TIME_LIMIT"] = None  # valid for the session's life
    app.config["PERMANENT_SESSION_LIFETIME"] = timedelta(days=SESSION_DAYS)
    # The cookie is written when the session changes (logging in, a CSRF token's first
    # use), not re-signed on every page: a session lasts SESSION_DAYS from its login
    # whatever the cookie says (arena.service.accounts), so a refreshed expiry bought nothing
    # and each logged-in request paid for the signing.
    app.config["SESSION_REFRESH_EACH_REQUEST"] = False
    app.config.setdefault("ARENA_PASSWORD_HASHER", password_hasher())
    csrf.init_app(app)
    init_limits(app)  # rate limits, and the bound on concurrent password hashes
    app.extensions[BUSY_FORMS] = {  # refused for busy: the form again, as it was typed
        "accounts.login": lambda: render_template(
            "login.html", name=request.form.get("name", ""), next=request.form.get("next")
        ),
        "accounts.signup": lambda: render_template(
            "signup.html", name=request.form.get("name", "").strip(), **_password_limits()
        ),
        "accounts.password": lambda: render_template("password.html", **_password_limits()),
    }
    app.before_request(_load_account)
    app.context_processor(lambda: {"account": current_account()})
    app.register_blueprint(accounts)


def _password_limits() -> dict[str, int]:
    """What the password forms say of a password's length."""
    return {"min_password": MIN_PASSWORD, "max_password": MAX_PASSWORD}


def _secret_key(app: Flask) -> str:
    """``ARENA_SECRET_KEY``, else a key generated once and kept in the instance folder
    (``secret_key``, mode 0600); else, where that folder cannot be written, one for this
    process's life (sessions then end when it restarts)."""
    key = os.environ.get("ARENA_SECRET_KEY")
    if key:
        return key
    path = os.path.join(app.instance_path, "secret_key")
    try:
        os.makedirs(app.instance_path, mode=0o700, exist_ok=True)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            with open(path, encoding="ascii") as existing:
                return existing.read().strip()
        with os.fdopen(fd, "w", encoding="ascii") as out:
            key = os.urandom(32).hex()
            out.write(key)
            return key
    except OSError:
        app.logger.warning(
            "no ARENA_SECRET_KEY and %s cannot be written: sessions last until a restart",
            app.instance_path,
        )
        return os.urandom(32).hex()


def _hasher() -> PasswordHasher:
    hasher: PasswordHasher = current_app.config["ARENA_PASSWORD_HASHER"]
    return hasher


def _load_account() -> None:
    if request.endpoint == "static":  # a file, the same for everyone: no account to look up
        g.account = None
        return
    account = None
    token = session.get("sid")
    if isinstance(token, str):
        account = session_account(get_store(), token)
    if account is None and session.get("sid", session.get("uid")) is not None:
        session.clear()  # logged out, ended by a password change, expired: anonymous now
    g.account = account


def current_account() -> Account | None:
    """The account logged in to this request, or None."""
    account: Account | None = g.get("account")
    return account


def public(view: F) -> F:
    """Declare a route a public read (``read-public``): anyone may, nothing is written."""
    setattr(view, ACTION_ATTRIBUTE, "read-public")
    return view


def guarded(action: str, *, early: bool = True) -> Callable[[F], F]:
    """Declare that a route does ``action`` (a name of the permission table).

    With ``early``, the route is refused before the view runs to whoever may not do the
    action to anything: an anonymous visitor goes to the login page, others get 403 (where
    the action depends on the object, an owner's, only anonymous visitors are stopped
    here). Without it, the view or the service behind it checks, with the object (the
    API's routes: their actor is a token's, not the session's).

    Raises:
        KeyError: ``action`` is not in the permission table (at import time).
    """
    if action not in ACTIONS:
        raise KeyError(f"no action {action!r} in arena.service.permissions")

    def declare(view: F) -> F:
        if not early:
            setattr(view, ACTION_ATTRIBUTE, action)
            return view

        @functools.wraps(view)
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            account = current_account()
            if not allowed(account, action):
                if account is None:
                    return to_login()
                if not PERMISSIONS[action][1]:  # no object could make it allowed
                    abort(403)
            return view(*args, **kwargs)

        setattr(wrapped, ACTION_ATTRIBUTE, action)
        return wrapped  # type: ignore[return-value]

    return declare


def refusal(error: PermissionDenied | NotFound) -> BaseResponse | HTTPException:
    """A page's answer to a refused action: the login page for anonymous visitors, else
    403 (the refusal's own message where it has one); 404 for what is not found (the app
    renders the HTTP errors)."""
    if isinstance(error, NotFound):
        message = str(error)
        return http_exceptions.NotFound(sentence(message) if message else None)
    if error.anonymous:
        return to_login()
    return http_exceptions.Forbidden(sentence(str(error)) if error.stated else None)


def to_login() -> BaseResponse:
    """Off to the login page, and back here after. A page's live part (an htmx poll, e.g.
    after logging out in another tab) sends the whole page there, back to that page after,
    rather than pasting the login form into the page."""
    if request.headers.get("HX-Request") == "true":
        current = urlsplit(request.headers.get("HX-Current-URL", ""))
        page = current.path + (f"?{current.query}" if current.query else "")
        answer = make_response("", 200)
        answer.headers["HX-Redirect"] = url_for("accounts.login", next=_safe_next(page))
        return answer
    return redirect(url_for("accounts.login", next=request.full_path.rstrip("?")))


def _safe_next(target: str | None) -> str:
    """Where to go after logging in: a path on this site, never another site."""
    if target and target.startswith("/") and not target.startswith("//") and "\\" not in target:
        parts = urlsplit(target)
        if not parts.scheme and not parts.netloc:
            return target
    return url_for("pages.home")


def log_in(account: Account) -> None:
    """Open a new session for ``account`` (nothing from before the login survives it)."""
    session.clear()  # nothing from before the login survives it
    session["sid"] = open_session(get_store(), account)
    session.permanent = True


@accounts.route("/login", methods=["GET", "POST"])
@guarded("log-in")
@password_forms
@form_limit("ARENA_LOGIN_LIMIT", LOGIN_LIMIT, login_name_key, LOGIN_REFUSAL)
@form_limit("ARENA_LOGIN_ADDRESS_LIMIT", LOGIN_ADDRESS_LIMIT, address_key, LOGIN_REFUSAL)
@hashing()
def login() -> BaseResponse | tuple[str, int] | str:
    """Log in with a name and a password."""
    if request.method == "POST":
        name = request.form.get("name", "").strip()
        password = request.form.get("password", "")
        account = authenticate(get_store(), name, password, hasher=_hasher())
        hashed(account is not None)
        if account is not None:
            log_in(account)
            return redirect(_safe_next(request.form.get("next")))
        flash("Wrong name or password.")
        return render_template("login.html", name=name, next=request.form.get("next")), 401
    return render_template("login.html", name="", next=request.args.get("next"))


@accounts.route("/signup", methods=["GET", "POST"])
@guarded("sign-up")
@password_forms
@form_limit("ARENA_SIGNUP_LIMIT", SIGNUP_LIMIT, address_key, SIGNUP_REFUSAL)
@hashing()
def signup() -> BaseResponse | tuple[str, int] | str:
    """Create an account (role ``user``) and log in."""
    limits = _password_limits()
    if request.method == "POST":
        name = request.form.get("name", "").strip()
        password = request.form.get("password", "")
        if password != request.form.get("confirm", ""):
            flash("The two passwords differ.")
            return render_template("signup.html", name=name, **limits), 400
        try:
            account = sign_up(get_store(), current_account(), name, password, hasher=_hasher())
        except (PermissionDenied, NotFound):
            raise
        except ArenaError as exc:
            flash(sentence(str(exc)))
            return render_template("signup.html", name=name, **limits), 400
        hashed(True)
        log_in(account)
        flash(f"Welcome, {account.name}.")
        return redirect(url_for("pages.home"))
    return render_template("signup.html", name="", **limits)


@accounts.post("/logout")
@guarded("log-out")
def logout() -> BaseResponse:
    """Log out (a POST with the CSRF token: no one can log you out with a link): the
    session ends on the server, so a copy of its cookie opens nothing any more."""
    token = session.get("sid")
    if isinstance(token, str):
        close_session(get_store(), token)
    session.clear()
    return redirect(url_for("pages.home"))


@accounts.route("/account/password", methods=["GET", "POST"])
@guarded("change-password")
@password_forms
@form_limit("ARENA_PASSWORD_CHANGE_LIMIT", PASSWORD_CHANGE_LIMIT, account_key, PASSWORD_REFUSAL)
@hashing(account_key)
def password() -> BaseResponse | tuple[str, int] | str:
    """Change the password; every other session of the account ends, and its API tokens
    are revoked unless the box is unticked."""
    limits = _password_limits()
    if request.method == "POST":
        new = request.form.get("new", "")
        if new != request.form.get("confirm", ""):
            flash("The two new passwords differ.")
            return render_template("password.html", **limits), 400
        revoke_tokens = request.form.get("revoke_tokens") == "on"
        try:
            change_own_password(
                get_store(),
                current_account(),
                request.form.get("current", ""),
                new,
                hasher=_hasher(),
                keep_session=session.get("sid"),
                revoke_tokens=revoke_tokens,
            )
        except (PermissionDenied, NotFound):
            raise
        except ArenaError as exc:
            flash(sentence(str(exc)))
            return render_template("password.html", **limits), 400
        revoked = " Your API tokens are revoked." if revoke_tokens else ""
        flash(f"Password changed. Every other session has ended.{revoked}")
        return redirect(url_for("pages.home"))
    return render_template("password.html", **limits)


@accounts.route("/account/tokens", methods=["GET", "POST"])
@guarded("manage-tokens")
def tokens() -> tuple[str, int] | str:
    """Your API tokens: create one (shown once), see when each was last used, revoke."""
    account = current_account()
    assert account is not None
    created = None
    status = 200
    if request.method == "POST":
        try:
            created = new_token(
                get_store(), account, request.form.get("name", ""), request.form.getlist("scopes")
            )
        except (PermissionDenied, NotFound):
            raise
        except ArenaError as exc:
            flash(sentence(str(exc)))
            status = 400
    page = render_template(
        "tokens.html", tokens=tokens_of(get_store(), account.id), scopes=SCOPES, created=created
    )
    return (page, status) if status != 200 else page


@accounts.post("/account/tokens/<int:token_id>/revoke")
@guarded("manage-tokens")
def revoke(token_id: int) -> BaseResponse:
    """Revoke one of your tokens: it stops working at once."""
    try:
        revoke_own_token(get_store(), current_account(), token_id)
    except NotFound:
        abort(404)
    flash("Token revoked.")
    return redirect(url_for("accounts.tokens"))


@accounts.get("/admin/users")
@guarded("manage-users")
def admin_users() -> str:
    """The pending teacher-role requests, and every account with its role and a form to
    change it (admins)."""
    listing = list_accounts(get_store(), current_account())
    requests = role_requests(get_store(), current_account())
    return render_template("admin_users.html", users=listing, roles=ROLES, requests=requests)


@accounts.post("/admin/users/<name>/role")
@guarded("manage-users")
def admin_role(name: str) -> BaseResponse | HTTPException:
    """Give the user ``name`` the role chosen in the form (admins)."""
    try:
        changed = give_role(get_store(), current_account(), name, request.form.get("role", ""))
    except (PermissionDenied, NotFound) as exc:
        return refusal(exc)
    except ArenaError as exc:
        return http_exceptions.BadRequest(sentence(str(exc)))
    flash(f"{changed.name} is now {changed.role}.")
    return redirect(url_for("accounts.admin_users"))
