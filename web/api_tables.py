"""Tables in the JSON API (docs/api.md, docs/tables.md), on the API's blueprint
(:mod:`web.api`): open a table against bots, read its state (the seat's newest view, or
the next one, waited for), take an invited seat, play a move. Each route calls the function
of arena.service.tables the pages call (``open_table``, ``table_view``, ``join_table``,
``send_move``); a refusal is the API's JSON error with the service's sentence.

Playing acts for the token's account: opening a table, joining one and moving need an
``upload`` token, reading its state a ``read`` one. The bots still play on a worker; a
program seated at a table is a person's seat, with the person's move time.

Imported by web.app before the blueprint is registered (its routes join it then).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypeVar

from flask import url_for
from pydantic import BaseModel, Field
from spectree import Response as Responses

from arena.errors import NotFound, PermissionDenied
from arena.service.shapes import about
from arena.service.tables import (
    TableError,
    join_table,
    open_table,
    open_tables,
    seat_of,
    send_move,
    table_for,
    table_view,
    watch_code,
)
from arena.store.tables import TableRow
from web.api import ERRORS, REPLAYED, ApiError, api, idempotency_key, spec
from web.api import caller as _caller
from web.api import fail as _fail
from web.auth import guarded
from web.extensions import get_store
from web.limits import address_key

__all__ = ["TableOpened", "TableState", "YourTables"]

TAGS = ["tables"]
T = TypeVar("T")
#: The longest a state's read or a move's answer waits for the next view.
WAIT_SECONDS = 10.0


class TableRequest(BaseModel):
    rules: str = Field("draw", max_length=200, description="a preset or NAME[@VERSION]")
    players: int = Field(2, ge=2, le=5, description="the seats")
    teams: bool = Field(False, description="2v2 (4 seats, rules with team play)")
    seat: int = Field(0, ge=0, le=4, description="your seat")
    bot: int | None = Field(None, ge=1, description="the bot version at the seat after yours")
    invite: bool = Field(False, description="a second person's seat, taken by the join link")


class StateQuery(BaseModel):
    after: str = Field("0", max_length=40, pattern=r"^[0-9-]+$", description="a view's id")
    wait: float = Field(0, ge=0, le=WAIT_SECONDS, description="seconds to wait for a newer view")


class JoinRequest(BaseModel):
    code: str = Field(max_length=64, description="the invitation's code (its join link's end)")


class MoveRequest(BaseModel):
    turn: int = Field(ge=0, description="the decision's number (the view's turn)")
    move: str = Field(max_length=20, description="one of the view's legal moves, e.g. 6-6 or 5-2L")


@dataclass(frozen=True, slots=True)
class TableOpened:
    """A table just opened: its id and the links to it."""

    id: int
    state: str = field(metadata=about("this table's state in the API"))
    watch: str = field(metadata=about("the watch link: anyone holding it follows the game"))
    join: str | None = field(metadata=about("the invitation's link (null: nobody invited)"))


@dataclass(frozen=True, slots=True)
class TableState:
    """A table and the newest view of your seat (docs/tables.md): ``view`` holds your hand,
    the line, every seat's tile count, the round's events, your legal moves (when
    ``round.to_move`` is your seat) and ``turn``, the decision a move answers; null before
    the worker deals."""

    id: int
    status: str = field(metadata=about("waiting, pending, running, done, closed or failed"))
    seat: int | None = field(metadata=about("your seat (null: an admin not seated)"))
    view_id: str | None = field(metadata=about("the view's id: ask for the next with after"))
    view: dict[str, Any] | None


@dataclass(frozen=True, slots=True)
class YourTable:
    """One of your open tables."""

    id: int
    status: str = field(metadata=about("waiting, pending or running"))
    rules: str = field(metadata=about("its rule set's name"))
    players: int
    teams: bool
    seat: int | None = field(metadata=about("your seat"))
    seats: list[str | None] = field(metadata=about("each seat's name (null: an invited seat)"))
    created: datetime
    state: str = field(metadata=about("its state in the API"))
    page: str = field(metadata=about("its page"))


@dataclass(frozen=True, slots=True)
class YourTables:
    """Your open tables (waiting, pending or being played), newest first."""

    tables: list[YourTable]


def _refused(act: Callable[[], T]) -> T:
    """``act()``, a TableError (a sentence) answered as 400."""
    try:
        return act()
    except (PermissionDenied, NotFound):
        raise
    except TableError as exc:
        return _fail(400, str(exc))  # type: ignore[no-any-return]


def _state(row: TableRow, view_id: str | None, view: dict[str, Any] | None) -> TableState:
    return TableState(row.id, row.status, seat_of(row, _caller("read")), view_id, view)


@api.post("/tables")
@guarded("play-table", early=False)
@spec.validate(
    json=TableRequest,
    resp=Responses(HTTP_201=TableOpened, HTTP_400=ApiError, HTTP_404=ApiError, **ERRORS),
    tags=TAGS,
)
def api_open_table(json: TableRequest) -> tuple[TableOpened, int, dict[str, str]]:
    """Open a table (an ``upload`` token): the rule set, the seats, your seat, the bot
    beside you (a version's id; null: a reference bot) and reference bots at the others,
    under the same bounds as the page's (docs/tables.md). 201 with its links. An
    ``Idempotency-Key`` header sent again answers the first table's links, with
    ``Idempotent-Replayed: true``, and opens nothing."""
    account = _caller("upload")
    opened = _refused(
        lambda: open_table(
            get_store(),
            account,
            address=address_key().removeprefix("address:"),
            rules=json.rules,
            players=json.players,
            teams=json.teams,
            seat=json.seat,
            bot=json.bot,
            invite=json.invite,
            key=idempotency_key(),
        )
    )
    row = table_for(get_store(), account, opened.id)
    join = None
    if opened.invite is not None:
        join = url_for("tables.join_page", table_id=opened.id, code=opened.invite, _external=True)
    return (
        TableOpened(
            id=opened.id,
            state=url_for("api.api_table_state", table_id=opened.id, _external=True),
            watch=url_for(
                "watching.table_watch_page",
                table_id=opened.id,
                code=watch_code(row),
                _external=True,
            ),
            join=join,
        ),
        201,
        {REPLAYED: "true"} if opened.repeated else {},
    )


@api.get("/tables")
@guarded("play-table", early=False)
@spec.validate(resp=Responses(HTTP_200=YourTables, **ERRORS), tags=TAGS)
def api_my_tables() -> YourTables:
    """Your open tables (a ``read`` token): opened by you or joined by invitation, still
    waiting, pending or being played, newest first, each with its state's and page's
    links: a table a program lost track of is found again."""
    account = _caller("read")
    rows = _refused(lambda: open_tables(get_store(), account))
    return YourTables(
        [
            YourTable(
                id=row.id,
                status=row.status,
                rules=row.rules_name,
                players=row.players,
                teams=row.teams,
                seat=seat_of(row, account),
                seats=[s.name for s in row.seats],
                created=row.created,
                state=url_for("api.api_table_state", table_id=row.id, _external=True),
                page=url_for("tables.table_page", table_id=row.id, _external=True),
            )
            for row in rows
        ]
    )


@api.get("/tables/<int:table_id>")
@guarded("play-table", early=False)
@spec.validate(
    query=StateQuery,
    resp=Responses(HTTP_200=TableState, HTTP_404=ApiError, **ERRORS),
    tags=TAGS,
)
def api_table_state(table_id: int, query: StateQuery) -> TableState:
    """Your table's state (a ``read`` token; its seated people and admins): the newest view
    of your seat, or with ``after`` and ``wait`` the next one, waited for up to ``wait``
    seconds (a long poll, as the page's)."""
    account = _caller("read")
    found = _refused(
        lambda: table_view(
            get_store(), account, table_id, after=query.after, wait_seconds=query.wait
        )
    )
    return _state(*found)


@api.post("/tables/<int:table_id>/join")
@guarded("play-table", early=False)
@spec.validate(
    json=JoinRequest,
    resp=Responses(HTTP_200=TableState, HTTP_400=ApiError, HTTP_404=ApiError, **ERRORS),
    tags=TAGS,
)
def api_join_table(table_id: int, json: JoinRequest) -> TableState:
    """Take the invited person's seat (an ``upload`` token), as the join link's page does:
    ``code`` is the link's last part. The state of the table, with your seat; sent again,
    the same seat. 404 for no such table or a wrong code, 400 with a sentence when its
    seats are taken or its game is over."""
    account = _caller("upload")
    store = get_store()
    _refused(lambda: join_table(store, account, table_id, json.code))
    return _state(*_refused(lambda: table_view(store, account, table_id)))


@api.post("/tables/<int:table_id>/moves")
@guarded("play-table", early=False)
@spec.validate(
    json=MoveRequest,
    resp=Responses(HTTP_200=TableState, HTTP_400=ApiError, HTTP_404=ApiError, **ERRORS),
    tags=TAGS,
)
def api_table_move(table_id: int, json: MoveRequest) -> TableState:
    """Play ``move`` for decision ``turn`` (an ``upload`` token), checked against your
    seat's view; the answer is the state once the bots have replied and it is your turn
    again or the game is over (or after a few seconds: read the state on). 400 with a
    sentence for a move not legal, not your turn, or an earlier decision's."""
    account = _caller("upload")
    store = get_store()
    # the view the move answers (the worker waits for it: no newer one comes meanwhile)
    _, answered, _ = _refused(lambda: table_view(store, account, table_id))
    row = _refused(lambda: send_move(store, account, table_id, json.turn, json.move))
    found = _refused(
        lambda: table_view(
            store, account, table_id, after=answered or "0", wait_seconds=WAIT_SECONDS,
            row=row, until_mine=True,
        )
    )  # fmt: skip
    return _state(*found)
