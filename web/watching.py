"""Watching a game live: a match's page that follows its game in play, polled.

The page and its fragment render the latest spectator view the match's worker published
(:func:`arena.service.watching.watch_match`; the engine decided what it shows, nothing is
hidden here): the line, each seat's tile count (its tiles face up only once the round is
over), the boneyard, the scores, the round's plays, draws and passes, the last round's end
and the games that ended. When a game ends the worker follows the match's next game; when
the match is over the fragment links to its games' replays and stops polling.

**Polling, not server-sent events**: the fragment is asked every :data:`WATCH_SECONDS`
while the tab is visible (``data-live``, web/static/js/arena.js), like the other live
parts. A stream would hold one of a server process's threads (``arena serve`` runs 16)
for as long as someone watches, so 16 spectators would starve every other page, and
gunicorn's sync worker blocks altogether under one (docs of the dashboard, measured); a
poll holds one for a few milliseconds. The worker publishes at most every 0.5 s, so a
poll a second misses nothing a person could follow. Each request is a heavy read (the
process's bound) and counts against :data:`web.limits.watches` per account or address.

A table's game (a person playing bots, docs/tables.md) is watched the same way at
``/tables/ID/watch/CODE``, its watch link (:func:`arena.service.tables.watch_table`): the
spectators' view its worker publishes, drawn by the same fragment.
"""

from __future__ import annotations

import logging
from typing import Any

from flask import Blueprint, current_app, render_template
from markupsafe import Markup

from arena.engine.tiles import Tile
from arena.service.livefeed import LiveFeed, live_feed
from arena.service.tables import WatchedTable, watch_table
from arena.service.watching import WatchedMatch, watch_match
from web.auth import current_account, public
from web.board import hand_svg, line_svg
from web.extensions import get_store
from web.limits import heavy, reads, watches
from web.viewer import SeatView, describe

__all__ = ["WATCH_SECONDS", "live_state", "watching"]

log = logging.getLogger(__name__)

watching = Blueprint("watching", __name__)

#: Seconds between two polls of a live game's fragment.
WATCH_SECONDS = 1
#: The round's latest events the fragment lists (the latest last).
EVENTS_SHOWN = 12


def _feed() -> LiveFeed | None:
    """The deployment's live feed (the app's ``ARENA_LIVE_URL``, else the environment's);
    None with none, or with a setting that names none (logged)."""
    try:
        return live_feed(current_app.config.get("ARENA_LIVE_URL"))
    except ValueError as exc:
        log.warning("no live feed: %s", exc)
        return None


def _pairs(tiles: list[str]) -> list[tuple[int, int]]:
    return [(t.high, t.low) for t in map(Tile.parse, tiles)]


def _placed(round_view: dict[str, Any]) -> int | None:
    """The line's index of the round's latest play, if the latest event is a play."""
    events = round_view["events"]
    if not events or events[-1]["type"] != "play":
        return None
    return 0 if not events[-1]["move"].endswith("R") else len(round_view["line"]) - 1


def _seats(
    watched: WatchedMatch | WatchedTable, round_view: dict[str, Any], teams: bool
) -> list[SeatView]:
    """Each seat's row: its tiles face down while the round is played, face up after."""
    shown = round_view["hands"]
    rows = []
    for seat, count in enumerate(round_view["hand_sizes"]):
        tiles = count if shown is None else _pairs(shown[seat])
        side = seat % 2 if teams else seat
        rows.append(
            SeatView(
                seat=seat,
                name=watched.players[seat] if seat < len(watched.players) else f"seat {seat}",
                team=side if teams else None,
                count=count,
                score=round_view["scores"][side],
                to_move=round_view["to_move"] == seat,
                hand=hand_svg(tiles, label=f"Seat {seat}'s hand", ids=f"lh{seat}"),
                legal=(),
            )
        )
    return rows


def _ends(line: list[list[int]]) -> tuple[int, int] | None:
    return (line[0][0], line[-1][1]) if line else None


def live_state(watched: WatchedMatch | WatchedTable) -> dict[str, Any]:
    """The fragment's values for ``watched`` (its latest view drawn, if any)."""
    view = watched.view
    values: dict[str, Any] = {"w": watched, "view": view, "watch_seconds": WATCH_SECONDS}
    if view is None:
        return values
    current = view["round"]
    teams = bool(view["teams"])
    events = current["events"]
    values.update(
        board=Markup(line_svg(current["line"], current["lead"], placed=_placed(current), ids="ll")),
        frame={**current, "ends": _ends(current["line"])},
        hands=_seats(watched, current, teams),
        replay={"teams": teams},
        round={**current, "scores": current["scores"]},
        last_step=current["result"] is not None,
        events=[describe(e, watched.players) for e in events][-EVENTS_SHOWN:],
        event_count=len(events),
        last_round=view["last_round"],
        last_hands=_last_hands(view["last_round"]),
    )
    return values


def _last_hands(last: dict[str, Any] | None) -> list[Markup]:
    """The hands the round before ended with, face up (it is over)."""
    if last is None or last["hands"] is None:
        return []
    return [
        hand_svg(_pairs(tiles), label=f"Seat {seat}'s hand at the end", ids=f"le{seat}")
        for seat, tiles in enumerate(last["hands"])
    ]


@watching.get("/live/<int:match_id>")
@public
@reads
@heavy
def live_page(match_id: int) -> str:
    """A match's game in play, followed live (its fragment polled while it plays)."""
    watched = watch_match(get_store(), current_account(), match_id, _feed())
    return render_template("live.html", **live_state(watched))


@watching.get("/live/<int:match_id>/state")
@public
@watches
@heavy
def live_fragment(match_id: int) -> str:
    """The live page's state alone (polled every :data:`WATCH_SECONDS`)."""
    watched = watch_match(get_store(), current_account(), match_id, _feed())
    return render_template("_live_state.html", **live_state(watched))


@watching.get("/tables/<int:table_id>/watch/<code>")
@public
@reads
@heavy
def table_watch_page(table_id: int, code: str) -> str:
    """A table's game followed live by a spectator holding its watch link."""
    watched = watch_table(get_store(), current_account(), table_id, code[:64])
    return render_template("table_watch.html", code=code[:64], **live_state(watched))


@watching.get("/tables/<int:table_id>/watch/<code>/state")
@public
@watches
@heavy
def table_watch_fragment(table_id: int, code: str) -> str:
    """The table's watching page's state alone (polled every :data:`WATCH_SECONDS`)."""
    watched = watch_table(get_store(), current_account(), table_id, code[:64])
    return render_template("_table_watch_state.html", code=code[:64], **live_state(watched))
