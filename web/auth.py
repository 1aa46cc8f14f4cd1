"""Accounts on the web: sign up, log in, log out, change password; who may do what.

Sessions are Flask's signed cookie (HttpOnly, SameSite=Lax, Secure when ``ARENA_HTTPS`` is
set): it holds the account id and the account's ``session_epoch`` when it logged in, so a
password change ends every other session. Logging in clears whatever the session held
before. Every form (and every htmx request, through ``hx-headers``) carries a CSRF token
(Flask-WTF). Login attempts are rate-limited per account and address (Flask-Limiter).

**Authorization lives here alone**: :data:`PERMISSIONS` says which role each action needs,
and :func:`allowed` answers for an account and, where it matters, the resource's owner;
views call :func:`require`. A classroom membership with a role of its own comes in as one
more rule of :func:`allowed`, not as a change to every view.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
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
    redirect,
    render_template,
    request,
    session,
    url_for,
)
from flask_limiter import Limiter
from flask_limiter.util import get_remote_address
from flask_wtf.csrf import CSRFProtect
from werkzeug.wrappers import Response as BaseResponse

from arena.errors import ArenaError
from arena.service.accounts import (
    MAX_PASSWORD,
    MIN_PASSWORD,
    Account,
    authenticate,
    change_password,
    create_account,
    find_account,
    password_hasher,
)

__all__ = [
    "LOGIN_LIMIT",
    "PERMISSIONS",
    "accounts",
    "allowed",
    "current_account",
    "init_auth",
    "login_required",
    "require",
]

accounts = Blueprint("accounts", __name__)
csrf = CSRFProtect()
limiter = Limiter(key_func=get_remote_address, default_limits=[])

#: Login attempts allowed per account name and address.
LOGIN_LIMIT = "10 per minute"

#: action -> the weakest role that may do it to anyone's resource; an owner may always act
#: on its own resource where ``"owner"`` is listed.
PERMISSIONS: dict[str, tuple[str, bool]] = {
    "read-public": ("anonymous", False),
    "read-source": ("admin", True),  # public sources: see allowed()
    "read-faults": ("admin", True),
    "upload": ("user", True),
    "create-tournament": ("organiser", False),
    "cancel-tournament": ("admin", True),
    "start-compare": ("admin", True),  # of one's own bot (NEW) against any other
    "start-branch": ("user", True),  # which bots it seats: arena.service.branches
    "read-branch": ("admin", True),
    "manage-users": ("admin", False),
}
_RANK = {"anonymous": 0, "user": 1, "organiser": 2, "admin": 3}

F = TypeVar("F", bound=Callable[..., Any])


def init_auth(app: Flask) -> None:
    """Configure sessions, CSRF and rate limits on ``app`` and add the account pages."""
    app.config["SECRET_KEY"] = app.config.get("SECRET_KEY") or _secret_key(app)
    app.config["SESSION_COOKIE_HTTPONLY"] = True
    app.config["SESSION_COOKIE_SAMESITE"] = "Lax"
    app.config["SESSION_COOKIE_SECURE"] = bool(os.environ.get("ARENA_HTTPS"))
    app.config["WTF_CSRF_TIME_LIMIT"] = None  # valid for the session's life
    app.config.setdefault("RATELIMIT_STORAGE_URI", os.environ.get("ARENA_LIMITER_URL", "memory://"))
    app.config.setdefault("ARENA_PASSWORD_HASHER", password_hasher())
    app.config.setdefault("RATELIMIT_HEADERS_ENABLED", True)  # Retry-After on every 429
    csrf.init_app(app)
    limiter.init_app(app)
    app.before_request(_load_account)
    app.context_processor(lambda: {"account": current_account()})
    app.register_blueprint(accounts)


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


def _store() -> Any:
    from web.app import get_store

    return get_store()


def _load_account() -> None:
    account = None
    user_id = session.get("uid")
    if isinstance(user_id, int):
        account = find_account(_store(), user_id)
        if account is None or account.session_epoch != session.get("epoch"):
            session.clear()  # deleted, or its password changed since: log out
            account = None
    g.account = account


def current_account() -> Account | None:
    """The account logged in to this request, or None."""
    account: Account | None = g.get("account")
    return account


def allowed(account: Account | None, action: str, *, owner: int | None = None) -> bool:
    """Whether ``account`` (None: anonymous) may do ``action`` to a resource owned by the
    account id ``owner`` (None: no owner)."""
    role, owners_may = PERMISSIONS[action]
    rank = 0 if account is None else _RANK[account.role]
    if rank >= _RANK[role]:
        return True
    return owners_may and account is not None and owner is not None and account.id == owner


def require(action: str, *, owner: int | None = None, hide: bool = False) -> Account | None:
    """Stop the request unless :func:`allowed`: anonymous users go to the login page,
    others get 403 (404 with ``hide``: a private resource is not acknowledged)."""
    account = current_account()
    if allowed(account, action, owner=owner):
        return account
    if hide:
        abort(404)
    if account is None:
        abort(_to_login())
    abort(403)


def _to_login() -> BaseResponse:
    return redirect(url_for("accounts.login", next=request.full_path.rstrip("?")))


def login_required(view: F) -> F:
    """A view for logged-in accounts only (others go to the login page)."""

    @functools.wraps(view)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        if current_account() is None:
            return _to_login()
        return view(*args, **kwargs)

    return wrapped  # type: ignore[return-value]


def _safe_next(target: str | None) -> str:
    """Where to go after logging in: a path on this site, never another site."""
    if target and target.startswith("/") and not target.startswith("//") and "\\" not in target:
        parts = urlsplit(target)
        if not parts.scheme and not parts.netloc:
            return target
    return url_for("pages.home")


def _log_in(account: Account) -> None:
    session.clear()  # nothing from before the login survives it
    session["uid"] = account.id
    session["epoch"] = account.session_epoch
    session.permanent = True


def _login_key() -> str:
    return f"{get_remote_address()}|{request.form.get('name', '')[:100]}"


@accounts.route("/login", methods=["GET", "POST"])
@limiter.limit(LOGIN_LIMIT, key_func=_login_key, methods=["POST"])
def login() -> BaseResponse | tuple[str, int] | str:
    """Log in with a name and a password."""
    if request.method == "POST":
        name = request.form.get("name", "").strip()
        password = request.form.get("password", "")
        account = authenticate(_store(), name, password, hasher=_hasher())
        if account is not None:
            _log_in(account)
            return redirect(_safe_next(request.form.get("next")))
        flash("Wrong name or password.")
        return render_template("login.html", name=name, next=request.form.get("next")), 401
    return render_template("login.html", name="", next=request.args.get("next"))


@accounts.route("/signup", methods=["GET", "POST"])
def signup() -> BaseResponse | tuple[str, int] | str:
    """Create an account (role ``user``) and log in."""
    limits = {"min_password": MIN_PASSWORD, "max_password": MAX_PASSWORD}
    if request.method == "POST":
        name = request.form.get("name", "").strip()
        password = request.form.get("password", "")
        if password != request.form.get("confirm", ""):
            flash("The two passwords differ.")
            return render_template("signup.html", name=name, **limits), 400
        try:
            account = create_account(_store(), name, password, hasher=_hasher())
        except ArenaError as exc:
            flash(_sentence(str(exc)))
            return render_template("signup.html", name=name, **limits), 400
        _log_in(account)
        flash(f"Welcome, {account.name}.")
        return redirect(url_for("pages.home"))
    return render_template("signup.html", name="", **limits)


@accounts.post("/logout")
def logout() -> BaseResponse:
    """Log out (a POST with the CSRF token: no one can log you out with a link)."""
    session.clear()
    return redirect(url_for("pages.home"))


@accounts.route("/account/password", methods=["GET", "POST"])
@login_required
def password() -> BaseResponse | tuple[str, int] | str:
    """Change the password; every other session of the account ends."""
    account = current_account()
    assert account is not None
    limits = {"min_password": MIN_PASSWORD, "max_password": MAX_PASSWORD}
    if request.method == "POST":
        new = request.form.get("new", "")
        if new != request.form.get("confirm", ""):
            flash("The two new passwords differ.")
            return render_template("password.html", **limits), 400
        try:
            changed = change_password(
                _store(), account.id, request.form.get("current", ""), new, hasher=_hasher()
            )
        except ArenaError as exc:
            flash(_sentence(str(exc)))
            return render_template("password.html", **limits), 400
        _log_in(changed)  # this session goes on; the others end
        flash("Password changed. Every other session has ended.")
        return redirect(url_for("pages.home"))
    return render_template("password.html", **limits)


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:] + ("" if text.endswith(".") else ".")


@accounts.route("/account/tokens", methods=["GET", "POST"])
@login_required
def tokens() -> tuple[str, int] | str:
    """Your API tokens: create one (shown once), see when each was last used, revoke."""
    from arena.service.accounts import SCOPES, create_token, tokens_of

    account = current_account()
    assert account is not None
    created = None
    status = 200
    if request.method == "POST":
        try:
            created = create_token(
                _store(), account.id, request.form.get("name", ""), request.form.getlist("scopes")
            )
        except ArenaError as exc:
            flash(_sentence(str(exc)))
            status = 400
    page = render_template(
        "tokens.html", tokens=tokens_of(_store(), account.id), scopes=SCOPES, created=created
    )
    return (page, status) if status != 200 else page


@accounts.post("/account/tokens/<int:token_id>/revoke")
@login_required
def revoke(token_id: int) -> BaseResponse:
    """Revoke one of your tokens: it stops working at once."""
    from arena.service.accounts import revoke_token

    account = current_account()
    assert account is not None
    if not revoke_token(_store(), account.id, token_id):
        abort(404)
    flash("Token revoked.")
    return redirect(url_for("accounts.tokens"))
