"""Bots on the web: upload a file (checked on a worker, never here), follow its check, and
each bot's page with its versions, check reports, ratings and (when allowed) its source."""

from __future__ import annotations

import functools
import logging
import threading
from collections import OrderedDict
from pathlib import PurePath
from typing import Any
from urllib.parse import quote_plus

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
from markupsafe import Markup, escape
from werkzeug.wrappers import Response as BaseResponse

from arena.errors import ArenaError, NotFound, PermissionDenied
from arena.match.runtimes import DEFAULT_RUNTIME, RUNTIMES, file_kinds
from arena.service.bot_views import bot_list, bot_view
from arena.service.bots import read_source, set_visibility
from arena.service.classes import bot_target, class_bots, upload_target
from arena.service.display import seat_name
from arena.service.games import GameFilter, OpponentRow, game_list, opponent_table
from arena.service.intake import take_upload
from arena.service.permissions import allowed, require
from arena.service.tables import record_against_people
from arena.service.uploads import (
    MAX_SOURCE_BYTES,
    UploadError,
    UploadView,
    form_runtime,
    upload_view,
)
from web.auth import current_account, guarded, public, to_login
from web.downloads import disposition
from web.extensions import get_store
from web.forms import read_file, sentence, upload_key
from web.limits import heavy

__all__ = ["UPLOAD_LIVE_SECONDS", "bots"]

logger = logging.getLogger(__name__)

bots = Blueprint("bots", __name__)

#: Games (and faults) a bot's page lists; the games page has the rest, with filters.
RECENT_GAMES = 10
#: How often a pending upload's page asks whether its check is done (seconds).
UPLOAD_LIVE_SECONDS = 2


#: Bot pages' URLs a process keeps (the least recently used go first).
BOT_URLS_KEPT = 4096
_bot_urls: OrderedDict[tuple[str, str, str], str] = OrderedDict()
_bot_urls_lock = threading.Lock()


@bots.app_template_global("bot_url")
def bot_url(owner: str, name: str) -> str:
    """The URL of bot ``owner/name``'s page, built once a process (``url_for`` took most of
    a page naming 200 bots: a tournament's entrants, a bot's opponents, a game list's
    seats)."""
    key = (request.script_root, owner, name)
    with _bot_urls_lock:
        kept = _bot_urls.get(key)
        if kept is not None:
            _bot_urls.move_to_end(key)
            return kept
    url = url_for("bots.bot_page", owner=owner, name=name)
    with _bot_urls_lock:
        _bot_urls[key] = url
        while len(_bot_urls) > BOT_URLS_KEPT:
            _bot_urls.popitem(last=False)
    return url


#: The characters werkzeug leaves unquoted in a URL's query (werkzeug.urls, after the URL
#: standard's percent-encoded bytes): links built here read as ``url_for`` builds them.
URL_SAFE = "!$'()*,/:;?@"


@functools.lru_cache(maxsize=4096)
def _quoted(value: str) -> str:
    """``value`` as a query's value, quoted as ``url_for`` quotes it."""
    return quote_plus(value, safe=URL_SAFE)


@bots.app_template_global("opponent_rows")
def opponent_rows(ref: str, opponents: list[OpponentRow]) -> Markup:
    """The rows of bot ``ref``'s (``owner/name``) table against each opponent
    (``bot.html``), built as strings with each opponent's link and name made once a
    process: a bot's page shows 100-400 of them (every rule set), and a Jinja row with its
    ``url_for`` and its name's macro took most of the page's time (a url_for of the game
    list a row; this builds each row's from one). Privacy filtered the rows before."""
    root, games = request.script_root, f"{url_for('games.game_index')}?bot={_quoted(ref)}&opponent="
    return Markup(
        "".join(
            f"\n<tr><td>{escape(o.rules)}</td><td>{_opponent_cell(root, o.opponent)}</td>"
            f'<td class="num">'
            f'<a href="{escape(f"{games}{_quoted(o.opponent)}&rules={_quoted(o.rules)}")}" '
            f'title="The games against {escape(o.opponent)}">{o.games}</a></td>'
            f'<td class="num">{o.wins}-{o.draws}-{o.losses}</td>'
            f'<td class="num">{100 * o.score:.1f}%</td></tr>\n'
            for o in opponents
        )
    )


@functools.lru_cache(maxsize=4096)
def _opponent_cell(script_root: str, opponent: str) -> str:
    """An opponent (``owner/bot``) as its table shows it under ``script_root``: linked to
    its bot's page, as ``_names.html``'s ``bot_link`` shows a bot (its text where it names
    no stored bot); HTML."""
    name = seat_name(opponent)
    if name is None:
        return escape(opponent)
    url = bot_url(name.owner, name.bot)
    return f'<a class="bot-name" href="{escape(url)}">{escape(name.display)}</a>'


@bots.route("/upload", methods=["GET", "POST"])
@guarded("upload")
def upload() -> BaseResponse | tuple[str, int] | str:
    """Upload a ``.py`` file as a new bot, or as the next version of one of yours."""
    context: dict[str, Any] = {
        "max_bytes": MAX_SOURCE_BYTES,
        "name": request.form.get("name", ""),
        "runtimes": list(RUNTIMES.values()),
        "runtime": request.form.get("runtime", DEFAULT_RUNTIME),
    }
    if request.method == "GET":
        return render_template("upload.html", **context)
    file = request.files.get("source")
    if file is None or not file.filename:
        flash(f"Choose a bot file to upload ({file_kinds()}).")
        return render_template("upload.html", **context), 400
    context["name"] = request.form.get("name", "").strip() or PurePath(file.filename).stem
    filename, data = read_file(file)
    try:
        received = take_upload(
            get_store(),
            current_account(),
            filename,
            data,
            name=request.form.get("name", ""),
            runtime=form_runtime(filename, request.form.get("runtime", "")),
            key=upload_key(),
        )
    except (PermissionDenied, NotFound):
        raise
    except (UploadError, ArenaError) as exc:
        flash(sentence(str(exc)))  # a file name first keeps its case: "e.py is empty."
        return render_template("upload.html", **context), 400
    if received.notice is not None:
        flash(sentence(received.notice))
    return redirect(url_for("bots.upload_page", upload_id=received.upload.id))


def _upload_or_404(upload_id: int) -> UploadView:
    if current_account() is None:  # a saved link, after logging out: log in, then back
        abort(to_login())
    view = upload_view(get_store(), upload_id)
    if view is None:
        abort(404)
    # its report is the owner's
    target = upload_target(get_store(), view.owner_id, view.assignment_id)
    require(current_account(), "read-faults", target, hide="")
    return view


@bots.get("/uploads/<int:upload_id>")
@guarded("read-faults", early=False)
def upload_page(upload_id: int) -> str:
    """An upload's check: pending (refreshing), then accepted or rejected with the reason."""
    view = _upload_or_404(upload_id)
    return render_template("upload_status.html", u=view, live_seconds=UPLOAD_LIVE_SECONDS)


@bots.get("/uploads/<int:upload_id>/live")
@guarded("read-faults", early=False)
def upload_live(upload_id: int) -> str:
    """The upload page's live part (polled while the check runs)."""
    view = _upload_or_404(upload_id)
    return render_template("_upload_live.html", u=view, live_seconds=UPLOAD_LIVE_SECONDS)


@bots.get("/bots")
@public
def bot_index() -> str:
    """Every bot, the most recently updated first; ``?class=NAME``: the bots of that
    class's students (its members and teachers only)."""
    school_class = request.args.get("class", "").strip()
    if school_class:
        rows = class_bots(get_store(), current_account(), school_class)
        return render_template("bots.html", bots=rows, school_class=school_class)
    rows = bot_list(get_store(), current_account())
    return render_template("bots.html", bots=rows, school_class=None)


@bots.get("/bots/<owner>/<name>")
@public
@heavy
def bot_page(owner: str, name: str) -> str:
    """A bot: its versions with their check reports and ratings; faults and the source
    for those allowed to see them."""
    account, store = current_account(), get_store()
    view = bot_view(store, owner, name, account)
    if view is None:
        abort(404, f"No bot {owner}/{name}.")
    target = bot_target(store, view.owner_id, bot_id=view.id)
    can_read_faults = allowed(account, "read-faults", target)
    play = view.versions[0].id if view.versions else None  # the newest
    mine = GameFilter(bot=(owner, name))
    faults = GameFilter(bot=(owner, name), fault="mine")
    return render_template(
        "bot.html",
        bot=view,
        can_read_source=view.source_public or allowed(account, "read-source", target),
        can_read_faults=can_read_faults,
        can_publish=account is not None and allowed(account, "change-visibility", target),
        recent=game_list(store, mine, limit=RECENT_GAMES, viewer=account).rows,
        opponents=opponent_table(store, owner, name, account),
        play_url=None if play is None else url_for("tables.new_table", bot=play),
        people=record_against_people(store, view.id),
        faults=(
            game_list(store, faults, limit=RECENT_GAMES, viewer=account).rows
            if can_read_faults
            else []
        ),
    )


@bots.get("/bots/<owner>/<name>/v<int:version>/source")
@guarded("read-source", early=False)
def bot_source_page(owner: str, name: str, version: int) -> Response:
    """A version's source as text: for everyone if its owner made it public, else for the
    owner and the admins only (404 to anyone else: a private source is not acknowledged),
    or for everyone once a competition it entered made its entries' sources public."""
    try:
        source = read_source(get_store(), current_account(), owner, name, version)
    except NotFound:
        abort(404)
    # text/plain, whatever its language, so that a browser shows it
    response = Response(source.text, mimetype="text/plain")
    response.headers["Content-Disposition"] = disposition(source.filename(name, version), "inline")
    return response


@bots.post("/bots/<owner>/<name>/visibility")
@guarded("change-visibility", early=False)
def bot_visibility(owner: str, name: str) -> BaseResponse:
    """Make the bot's source public or private again (its owner or an admin; 404 to anyone
    else)."""
    make_public = request.form.get("public") == "1"
    try:
        set_visibility(get_store(), current_account(), owner, name, make_public)
    except NotFound:
        abort(404)
    flash("The source is now public." if make_public else "The source is now private.")
    return redirect(url_for("bots.bot_page", owner=owner, name=name))
