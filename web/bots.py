"""Bots on the web: upload a file (checked on a worker, never here), follow its check, and
each bot's page with its versions, check reports, ratings and (when allowed) its source."""

from __future__ import annotations

import logging
from pathlib import PurePath
from typing import Any

from flask import (
    Blueprint,
    Response,
    abort,
    flash,
    redirect,
    render_template,
    request,
    url_for,
)
from werkzeug.datastructures import FileStorage
from werkzeug.wrappers import Response as BaseResponse

from arena.errors import ArenaError
from arena.service.games import GameFilter, game_list, opponent_table
from arena.service.uploads import (
    MAX_SOURCE_BYTES,
    UploadError,
    UploadView,
    create_upload,
    mark_sent,
    screen_source,
    upload_view,
)
from arena.service.views import bot_list, bot_source, bot_view, set_source_public
from web.app import get_celery, get_store
from web.auth import allowed, current_account, login_required, require

__all__ = ["UPLOAD_LIVE_SECONDS", "bots", "receive_upload", "send_check"]

logger = logging.getLogger(__name__)

bots = Blueprint("bots", __name__)

#: Games (and faults) a bot's page lists; the games page has the rest, with filters.
RECENT_GAMES = 10
#: How often a pending upload's page asks whether its check is done (seconds).
UPLOAD_LIVE_SECONDS = 2


def send_check(upload_id: int) -> None:
    """Send the upload's check to the workers; if the broker is down, the sweep sends it
    later (the upload waits, pending)."""
    from arena.service.broker import send_uploads

    try:
        send_uploads(get_celery(), [upload_id])
    except Exception as exc:  # the broker is unreachable: nothing is lost
        logger.warning(
            "upload %s: cannot reach the broker (%s); the sweep sends it", upload_id, exc
        )
        return
    mark_sent(get_store(), [upload_id])


@bots.route("/upload", methods=["GET", "POST"])
@login_required
def upload() -> BaseResponse | tuple[str, int] | str:
    """Upload a ``.py`` file as a new bot, or as the next version of one of yours."""
    account = require("upload")
    assert account is not None
    context: dict[str, Any] = {"max_bytes": MAX_SOURCE_BYTES, "name": request.form.get("name", "")}
    if request.method == "GET":
        return render_template("upload.html", **context)
    file = request.files.get("source")
    if file is None or not file.filename:
        flash("Choose a .py file to upload.")
        return render_template("upload.html", **context), 400
    context["name"] = request.form.get("name", "").strip() or PurePath(file.filename).stem
    try:
        view = receive_upload(account.id, file, request.form.get("name", ""))
    except (UploadError, ArenaError) as exc:
        message = str(exc)
        flash(message[:1].upper() + message[1:])
        return render_template("upload.html", **context), 400
    return redirect(url_for("bots.upload_page", upload_id=view.id))


def receive_upload(owner_id: int, file: FileStorage, name: str) -> UploadView:
    """Take an uploaded bot file, from the page or the API: read it (at most one byte past
    the limit), screen it, store it as the owner's bot ``name`` (default: the file's stem)
    and send its check to the workers if it needs one; return the upload.

    Raises:
        UploadError, ArenaError: the file or the name is refused (nothing is stored).
    """
    filename = PurePath((file.filename or "").replace("\\", "/")).name
    try:
        data = file.stream.read(MAX_SOURCE_BYTES + 1)
    finally:
        file.close()
    source = screen_source(filename, data)
    bot = name.strip() or PurePath(filename).stem
    upload_id = create_upload(get_store(), owner_id, bot, filename, source)
    view = upload_view(get_store(), upload_id)
    assert view is not None
    if view.pending:
        send_check(upload_id)
    return view


def _upload_or_404(upload_id: int) -> Any:
    view = upload_view(get_store(), upload_id)
    if view is None:
        abort(404)
    require("read-faults", owner=view.owner_id, hide=True)  # its report is the owner's
    return view


@bots.get("/uploads/<int:upload_id>")
def upload_page(upload_id: int) -> str:
    """An upload's check: pending (refreshing), then accepted or rejected with the reason."""
    view = _upload_or_404(upload_id)
    return render_template("upload_status.html", u=view, live_seconds=UPLOAD_LIVE_SECONDS)


@bots.get("/uploads/<int:upload_id>/live")
def upload_live(upload_id: int) -> str:
    """The upload page's live part (polled while the check runs)."""
    view = _upload_or_404(upload_id)
    return render_template("_upload_live.html", u=view, live_seconds=UPLOAD_LIVE_SECONDS)


@bots.get("/bots")
def bot_index() -> str:
    """Every bot, the most recently updated first."""
    return render_template("bots.html", bots=bot_list(get_store()))


@bots.get("/bots/<owner>/<name>")
def bot_page(owner: str, name: str) -> str:
    """A bot: its versions with their check reports and ratings; faults and the source
    for those allowed to see them."""
    view = bot_view(get_store(), owner, name)
    if view is None:
        abort(404, f"No bot {owner}/{name}.")
    account = current_account()
    can_read_faults = allowed(account, "read-faults", owner=view.owner_id)
    store = get_store()
    mine = GameFilter(bot=(owner, name))
    faults = GameFilter(bot=(owner, name), fault="mine")
    return render_template(
        "bot.html",
        bot=view,
        can_read_source=view.source_public or allowed(account, "read-source", owner=view.owner_id),
        can_read_faults=can_read_faults,
        can_publish=account is not None and allowed(account, "read-source", owner=view.owner_id),
        recent=game_list(store, mine, limit=RECENT_GAMES).rows,
        opponents=opponent_table(store, owner, name),
        faults=game_list(store, faults, limit=RECENT_GAMES).rows if can_read_faults else [],
    )


@bots.get("/bots/<owner>/<name>/v<int:version>/source")
def bot_source_page(owner: str, name: str, version: int) -> Response:
    """A version's source as text: for everyone if its owner made it public, else for the
    owner and the admins only (404 to anyone else: a private source is not acknowledged)."""
    view = bot_view(get_store(), owner, name)
    if view is None:
        abort(404)
    if not view.source_public:
        require("read-source", owner=view.owner_id, hide=True)
    source = bot_source(get_store(), owner, name, version)
    if source is None:
        abort(404)
    response = Response(source, mimetype="text/plain")
    response.headers["Content-Disposition"] = f'inline; filename="{name}-v{version}.py"'
    return response


@bots.post("/bots/<owner>/<name>/visibility")
def bot_visibility(owner: str, name: str) -> BaseResponse:
    """Make the bot's source public or private again (its owner or an admin)."""
    view = bot_view(get_store(), owner, name)
    if view is None:
        abort(404)
    require("read-source", owner=view.owner_id, hide=True)
    public = request.form.get("public") == "1"
    set_source_public(get_store(), view.id, public)
    flash("The source is now public." if public else "The source is now private.")
    return redirect(url_for("bots.bot_page", owner=owner, name=name))
