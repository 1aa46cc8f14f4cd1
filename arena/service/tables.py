"""Tables: a person plays a whole game against bots in the browser (docs/tables.md).

The web process only checks and relays. :func:`open_table` stores a table under its bounds
(:data:`MAX_PER_ACCOUNT`, :data:`MAX_PER_ADDRESS`, ``ARENA_TABLES_MAX`` in all) with the
chosen bot and reference bots at the other seats, and sends it to the workers; an invited
second person sits down with :func:`join_table` (the table waits for them). A worker then
referees it (:func:`run_table`): the bots from their stored sources in the sandbox, under
the tables' time control, and each person as an :class:`arena.match.human.HumanPlayer`
whose moves come through the table's channel (:mod:`arena.service.table_channel`), all
through the same referee as any match. The web's :func:`send_move` checks a move against
the view the worker published for that seat (its legal moves, its decision's number)
before it relays it; :func:`table_view` reads or awaits the newest view.

Anyone with a table's watch link (:func:`watch_code`, shown to the people seated there) may
follow its game as a spectator (:func:`watch_table`: the spectators' view the worker
publishes, no hand shown until its round is over), unless one of its bots is hidden from
them (a private class's, :mod:`arena.service.privacy`).

A person who does not move within the table's stated move time (:data:`MOVE_SECONDS`)
forfeits, which ends the game and releases the bots. The record names each person's seat
by the person's name (never a bot's ``owner/name@vN``) and lists the people's seats
(``humans``); it verifies and replays like any game's. A table's game is no match: no
rating counts it; each bot's page shows its record against people
(:func:`record_against_people`).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import secrets
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from arena.engine.game import new_seed
from arena.engine.records import game_record
from arena.engine.rules import Rules, rules_from_record
from arena.errors import ArenaError, NotFound
from arena.match.human import HumanPlayer
from arena.match.lineup import make_players
from arena.match.players import Player
from arena.match.referee import play_match
from arena.match.sandbox import Limits
from arena.service.accounts import Account
from arena.service.board_views import REFERENCE_OWNER
from arena.service.dispatch import dispatch_table
from arena.service.intake import MAX_CLIENT_KEY
from arena.service.livefeed import redis_errors
from arena.service.matches import Config, MatchSettings, bot_files, keep_alive
from arena.service.permissions import Actor, allowed, require
from arena.service.privacy import hidden_from
from arena.service.rule_sets import find_rules
from arena.service.table_channel import (
    SPECTATORS,
    RedisFeed,
    TableError,
    channel,
    latest_view,
    next_view,
    push_move,
)
from arena.store.bots import version_id
from arena.store.branches import seatable_versions, versions_by_id
from arena.store.db import Store
from arena.store.ratings import find_rule_set
from arena.store.tables import (
    SeatRow,
    TableRow,
    add_table,
    claim_table,
    close_idle_tables,
    finish_table,
    open_tables_of,
    renew_table,
    seat_invited,
    table_row,
    tables_against_people,
)

__all__ = [
    "IDLE_SECONDS",
    "MAX_PER_ACCOUNT",
    "MAX_PER_ADDRESS",
    "MOVE_SECONDS",
    "TABLES_MAX_ENV",
    "OpenedTable",
    "PeopleRecord",
    "TableError",
    "WatchedTable",
    "close_idle",
    "invited_table",
    "join_table",
    "max_tables",
    "open_table",
    "open_tables",
    "playable_version",
    "record_against_people",
    "run_table",
    "seat_of",
    "send_move",
    "status_words",
    "table_for",
    "table_view",
    "watch_code",
    "watch_table",
]

#: A person's time for one move, stated on the page; one who takes longer forfeits.
MOVE_SECONDS = 120.0
#: Open tables (waiting, pending or playing) of one account at once.
MAX_PER_ACCOUNT = 2
#: Open tables opened from one address at once (a classroom behind one address).
MAX_PER_ADDRESS = 40
#: Open tables in all at once: ``ARENA_TABLES_MAX``, by default this many (each holds a
#: worker's process while it plays: run workers with room for them, docs/tables.md).
DEFAULT_MAX_TABLES = 30
TABLES_MAX_ENV = "ARENA_TABLES_MAX"
#: A table nobody sits down at (an invitation never taken) or no worker takes within this
#: is closed by the sweep.
IDLE_SECONDS = 600.0
#: The bots' time control and memory at a table (a tournament's defaults).
TABLE_SETTINGS = MatchSettings()
#: A table's task may run this long (every move of a long game at the person's limit).
TABLE_TIME_LIMIT = 4 * 3600
#: The reference bot that fills the seats nobody chose, when it is stored.
FILLER = "greedy"
#: The longest wait of a page for the table's next view.
WAIT_SECONDS = 15.0
_BOUND_SENTENCES = {
    "account": "You have {count} tables open (at most {limit}): finish or leave one first.",
    "address": "{count} tables are open from your address (at most {limit}): try again "
    "when one is over.",
    "total": "All {count} tables are taken (at most {limit} at once): try again in a few minutes.",
}


def max_tables(environ: Mapping[str, str] | None = None) -> int:
    """Open tables in all at once (``ARENA_TABLES_MAX``, default :data:`DEFAULT_MAX_TABLES`).

    Raises:
        ValueError: the variable is not a whole number above 0.
    """
    raw = (os.environ if environ is None else environ).get(TABLES_MAX_ENV, "")
    if not raw:
        return DEFAULT_MAX_TABLES
    if not raw.isdigit() or int(raw) < 1:
        raise ValueError(f"{TABLES_MAX_ENV} must be a whole number above 0, not {raw!r}")
    return int(raw)


@dataclass(frozen=True, slots=True)
class OpenedTable:
    """A table just opened: its id, and its invitation's code (None: nobody invited);
    ``repeated``: its client key was sent before, and this is the table it opened then."""

    id: int
    invite: str | None
    repeated: bool = False


def _account(actor: Actor, what: str) -> Account:
    require(actor, "play-table", message=f"log in to {what}")
    if not isinstance(actor, Account):
        raise TableError("a table seats people with accounts: the operator has none")
    return actor


def _fillers(store: Store, account: Account) -> list[int]:
    """The newest version of each reference bot, :data:`FILLER` first."""
    rows = seatable_versions(store, account_id=account.id, reference_owner=REFERENCE_OWNER)
    newest: dict[str, tuple[int, int]] = {}
    for row in rows:
        if row.owner == REFERENCE_OWNER and row.version > newest.get(row.name, (0, -1))[1]:
            newest[row.name] = (row.version_id, row.version)
    names = sorted(newest, key=lambda n: (n != FILLER, n))
    return [newest[n][0] for n in names]


def open_table(
    store: Store,
    actor: Actor,
    *,
    address: str,
    rules: str,
    players: int,
    teams: bool,
    seat: int,
    bot: int | None,
    invite: bool = False,
    seed: int | None = None,
    key: str | None = None,
) -> OpenedTable:
    """Open a table under ``rules`` (a preset or a stored rule set's NAME[@VERSION]) with
    ``players`` seats (``teams``: 2v2), ``actor`` at ``seat``, the bot version ``bot`` at
    the next seat (None: a reference bot) and reference bots at the others; with
    ``invite``, one more seat is a second person's, taken by the invitation's link (the
    seat across the table in 2v2, so the two are partners; else the seat after the bot's).
    Send it to the workers at once when nobody is invited. ``key``: the client's key (the
    form's one-time token, the API's ``Idempotency-Key``): sent again, it opens nothing and
    answers with the table it opened first (``repeated``), as an upload's does
    (:mod:`arena.service.intake`): "Sit down" pressed twice opens one table.

    Raises:
        PermissionDenied: anonymous (log in to play).
        NotFound: no such rule set, or the bot is not stored or not visible to ``actor``.
        TableError: one sentence on what is wrong: the seats or teams out of the rule set's
            range; no reference bot stored; a bound full; tables off (no Redis); a key
            that is no key, or one sent before to open another table.
    """
    account = _account(actor, "play at a table")
    client_key = _client_key(key)
    found = find_rules(store, rules)
    try:
        found.check_players(players, teams)
    except ArenaError as exc:
        raise TableError(f"{exc}") from None
    if not 0 <= seat < players:
        raise TableError(f"your seat must be 0 to {players - 1}, not {seat}")
    if invite and players < 3 and not teams:
        raise TableError("a second person needs a table of 3 or more seats (or 2v2)")
    channel()  # tables are off without Redis: say so now, not at the first move
    opponent = (seat + 1) % players
    friend = None
    if invite:
        friend = (seat + 2) % players if teams else (opponent + 1) % players
    names: dict[int, str] = {}
    versions: dict[int, int] = {}
    fillers = _fillers(store, account)
    if bot is not None:
        chosen = versions_by_id(store, [bot]).get(bot)
        if chosen is None or hidden_from(store, account).owner(chosen.owner_id):
            raise NotFound(f"no bot version {bot} is stored")
        versions[opponent] = bot
    if not fillers and len(versions) + 1 + (friend is not None) < players:
        raise TableError("no reference bot is stored to fill the other seats")
    free = iter(fillers * players)
    for other in range(players):
        if other not in (seat, friend) and other not in versions:
            versions[other] = next(free)
    labels = {v: o.label for v, o in versions_by_id(store, list(versions.values())).items()}
    seats: list[SeatRow] = []
    for other in range(players):
        if other == seat:
            seats.append(SeatRow(other, True, account.id, None, account.name))
        elif other == friend:
            seats.append(SeatRow(other, True, None, None, None))
        else:
            version = versions[other]
            seats.append(SeatRow(other, False, None, version, labels.get(version)))
            names[other] = labels.get(version, "")
    code = secrets.token_urlsafe(16) if friend is not None else None
    limit = max_tables()
    added = add_table(
        store,
        owner_id=account.id,
        address=address[:64],
        rule_set_id=_rule_set_id(store, found),
        players=players,
        teams=teams,
        seed=new_seed() if seed is None else seed,
        move_seconds=MOVE_SECONDS,
        seats=seats,
        channel=secrets.token_hex(16),
        invite=code,
        bounds=(MAX_PER_ACCOUNT, MAX_PER_ADDRESS, limit),
        client_key=client_key,
    )
    if added.table_id is not None and not added.repeated and code is None:
        dispatch_table(store, added.table_id)
    if added.repeated:
        assert added.table_id is not None
        return _repeated(store, added.table_id, found.version, teams, seats)
    if added.table_id is None:
        assert added.full is not None
        bound = {"account": MAX_PER_ACCOUNT, "address": MAX_PER_ADDRESS, "total": limit}
        raise TableError(
            _BOUND_SENTENCES[added.full].format(count=added.count, limit=bound[added.full])
        )
    return OpenedTable(added.table_id, code)


def _rule_set_id(store: Store, rules: Rules) -> int:
    """The stored rule set's id, read (no write lock: on SQLite every write waits for the
    one writer, and a burst of tables must not queue a write each for a rule set stored
    long ago); stored first if no table or tournament used it yet."""
    try:
        return find_rule_set(store, rules).id
    except LookupError:
        return store.ensure_rule_set(rules).id


def _client_key(key: str | None) -> str | None:
    """The client's key, checked as an upload's: 1 to :data:`MAX_CLIENT_KEY` printable
    ASCII characters.

    Raises:
        TableError: it is not.
    """
    if key is None or (0 < len(key) <= MAX_CLIENT_KEY and key.isascii() and key.isprintable()):
        return key
    raise TableError(
        f"an idempotency key is 1 to {MAX_CLIENT_KEY} printable ASCII characters (a UUID, "
        f"say): not {key[: MAX_CLIENT_KEY + 1]!r}"
    )


def _repeated(
    store: Store, table_id: int, version: str, teams: bool, seats: list[SeatRow]
) -> OpenedTable:
    """The table a client key opened first, if it was opened by the same request (its rule
    set, its teams, and each seat a person's or the same bot version's).

    Raises:
        TableError: the key opened another table.
    """
    row = table_row(store, table_id)
    assert row is not None  # (tables are never deleted)
    asked = [(s.seat, s.human, s.version_id) for s in seats]
    if (
        rules_from_record(row.rules_name, row.rules_params).version != version
        or [(s.seat, s.human, s.version_id) for s in row.seats] != asked
        or row.teams != teams
    ):
        raise TableError(
            f"this idempotency key (or form) opened another table (table {table_id}): send "
            "each new table with a new key (reload the form)"
        )
    return OpenedTable(row.id, row.invite, repeated=True)


def playable_version(store: Store, owner: str, name: str, version: int) -> int | None:
    """The id of bot ``owner/name``'s version ``version`` (a bot page's "Play against this
    bot"), or None."""
    return version_id(store, owner, name, version)


def join_table(store: Store, actor: Actor, table_id: int, code: str) -> int:
    """Seat ``actor`` at the table its invitation ``code`` opens; return the seat. The
    table is sent to the workers once every seat is taken. Someone already seated there
    is given their seat.

    Raises:
        PermissionDenied: anonymous.
        NotFound: no such table, or a wrong code.
        TableError: the table no longer waits (its seats are taken, or it is over).
    """
    account = _account(actor, "sit at a table")
    row = invited_table(store, table_id, code)
    mine = seat_of(row, account)
    if mine is not None:
        return mine
    seat = seat_invited(store, table_id, code, account.id, account.name)
    if seat is None:
        raise TableError("this table's seats are all taken, or its game is over")
    after = table_row(store, table_id)
    if after is not None and after.status == "pending":
        dispatch_table(store, table_id)
    return seat


def invited_table(store: Store, table_id: int, code: str) -> TableRow:
    """The table its invitation ``code`` opens.

    Raises:
        NotFound: no such table, or a wrong code.
    """
    row = table_row(store, table_id)
    if row is None or row.invite is None or not secrets.compare_digest(row.invite, code):
        raise NotFound(f"no table {table_id} has this invitation")
    return row


def seat_of(row: TableRow, account: Account | None) -> int | None:
    """The seat of ``account`` at the table, or None."""
    if account is None:
        return None
    return next((s.seat for s in row.seats if s.human and s.user_id == account.id), None)


def table_for(store: Store, actor: Actor, table_id: int) -> TableRow:
    """The table, for a person seated at it (or an admin).

    Raises:
        NotFound: no such table, or ``actor`` is not seated at it.
    """
    row = table_row(store, table_id)
    account = actor if isinstance(actor, Account) else None
    if row is None or (seat_of(row, account) is None and not allowed(actor, "read-tables")):
        raise NotFound(f"no table {table_id} of yours")
    return row


def open_tables(store: Store, actor: Actor) -> list[TableRow]:
    """``actor``'s open tables (waiting, pending or playing; opened, or joined by
    invitation), newest first: a table left in another tab is found again.

    Raises:
        PermissionDenied: anonymous.
        TableError: the operator (no account, no tables).
    """
    return open_tables_of(store, _account(actor, "see your tables").id)


def status_words(status: str) -> str:
    """A table's status for people: ``waiting for the invited person``, ``over``..."""
    return {
        "waiting": "waiting for the invited person",
        "pending": "waiting for a worker",
        "running": "being played",
        "done": "over",
        "closed": "closed",
        "failed": "stopped by a failure",
    }.get(status, status)


def table_view(
    store: Store,
    actor: Actor,
    table_id: int,
    *,
    after: str = "0",
    wait_seconds: float = 0.0,
    row: TableRow | None = None,
    until_mine: bool = False,
) -> tuple[TableRow, str | None, dict[str, Any] | None]:
    """The table (``row`` when the caller has it), and the newest view of ``actor``'s
    seat with its id: the one after ``after``, waiting up to ``wait_seconds`` (at most
    :data:`WAIT_SECONDS`) for one (with ``until_mine``, for one where the seat is to move
    or the game is over, the newest seen meanwhile otherwise); (row, None, None) before the
    worker's first, or for an admin not seated (the spectators' view is the live feed's).

    Raises:
        NotFound: as :func:`table_for`.
    """
    row = row or table_for(store, actor, table_id)
    seat = seat_of(row, actor if isinstance(actor, Account) else None)
    if seat is None:
        return row, None, None
    with _answering():
        return _newest(row, seat, after, wait_seconds, until_mine)


def _newest(
    row: TableRow, seat: int, after: str, wait_seconds: float, until_mine: bool
) -> tuple[TableRow, str | None, dict[str, Any] | None]:
    client = channel()
    found = None
    if wait_seconds > 0 and row.status in ("waiting", "pending", "running"):
        deadline = time.monotonic() + min(wait_seconds, WAIT_SECONDS)
        while (left := deadline - time.monotonic()) > 0:
            newer = next_view(client, row.channel, seat, after, left)
            if newer is None:
                break
            found, after = newer, newer[0]
            if not until_mine or _settled(newer[1], seat):
                break
    if found is None:
        found = latest_view(client, row.channel, seat)
    if found is None:
        return row, None, None
    return row, found[0], found[1]


@contextlib.contextmanager
def _answering() -> Iterator[None]:
    """The channel's faults as a sentence (a page shows it; the next poll tries again)."""
    try:
        yield
    except redis_errors() as exc:
        raise TableError(f"the table's channel is not answering ({exc}): try again") from None


def _settled(view: Mapping[str, Any], seat: int) -> bool:
    """Whether ``seat`` is to move in ``view``, or the game is over."""
    return view.get("status") != "playing" or view["round"]["to_move"] == seat


def send_move(store: Store, actor: Actor, table_id: int, turn: int, move: str) -> TableRow:
    """Relay ``actor``'s move for decision ``turn`` to the worker, once checked against
    the view the worker published for the seat; return the table (for :func:`table_view`).

    Raises:
        PermissionDenied: anonymous.
        NotFound: no such table, or ``actor`` not seated at it.
        TableError: the game is not being played, it is not the seat's turn (or no longer
            decision ``turn``), or the move is not one of its legal moves (named).
    """
    account = _account(actor, "play at a table")
    row = table_for(store, account, table_id)
    seat = seat_of(row, account)
    if seat is None:
        raise NotFound(f"no table {table_id} of yours")
    if row.status != "running":
        raise TableError(f"the table's game is {status_words(row.status)}: no move is taken")
    with _answering():
        client = channel()
        found = latest_view(client, row.channel, seat)
    view = found[1] if found is not None else None
    if view is None or view.get("status") != "playing" or view["round"]["to_move"] != seat:
        raise TableError("it is not your turn")
    if view["turn"] != turn:
        raise TableError("that move answers an earlier turn: the page has been updated")
    legal = view["round"]["legal_moves"]
    if move not in legal:
        raise TableError(f"{move[:20]!r} is not a legal move here: play one of {', '.join(legal)}")
    with _answering():
        push_move(client, row.channel, seat, turn, move)
    return row


# --- watching -----------------------------------------------------------------------------


def watch_code(row: TableRow) -> str:
    """The code of the table's watch link (``/tables/ID/watch/CODE``): derived from its
    secret channel key, so only its link's holders (and the people seated) know it."""
    return hashlib.sha256(f"watch:{row.channel}".encode()).hexdigest()[:24]


@dataclass(frozen=True, slots=True)
class WatchedTable:
    """A table as its watching page shows it.

    Attributes:
        table: the stored table.
        players: each seat's name (a person's, or a bot's ``owner/name@vN``).
        view: the newest spectators' view (:func:`arena.engine.spectate.spectator_view`,
            with the seats' ``names``, ``humans``, ``status`` and ``verdict``), or None.
        entry: that view's id, or None.
        feed: ``"live"`` (read), ``"none"`` (tables are off: no Redis), ``"away"`` (the
            channel's Redis did not answer).
    """

    table: TableRow
    players: tuple[str, ...]
    view: dict[str, Any] | None
    entry: str | None
    feed: str

    @property
    def playing(self) -> bool:
        """Whether the table's game is still to be played or being played."""
        return self.table.status in ("waiting", "pending", "running")


def watch_table(store: Store, viewer: Actor, table_id: int, code: str) -> WatchedTable:
    """Table ``table_id`` for a spectator holding its watch link's ``code``: its newest
    spectators' view.

    Raises:
        NotFound: no such table, a wrong code, or a bot of the table hidden from ``viewer``.
    """
    row = table_row(store, table_id)
    if row is None or not secrets.compare_digest(watch_code(row), code):
        raise NotFound(f"no table {table_id} is watched with this link")
    bots = [s.version_id for s in row.seats if s.version_id is not None]
    hidden = hidden_from(store, viewer)
    if hidden.any(v.owner_id for v in versions_by_id(store, bots).values()):
        raise NotFound(f"no table {table_id} is watched with this link")
    players = tuple(_seat_name(s) for s in row.seats)
    try:
        client = channel()
    except TableError:
        return WatchedTable(row, players, None, None, "none")
    try:
        found = latest_view(client, row.channel, SPECTATORS)
    except redis_errors():
        return WatchedTable(row, players, None, None, "away")
    entry, view = (None, None) if found is None else found
    return WatchedTable(row, players, view, entry, "live")


# --- playing (the worker) ------------------------------------------------------------------


def run_table(
    store: Store,
    table_id: int,
    *,
    config: Config | None = None,
    first_slot: int | None = None,
    sandboxed: bool = True,
) -> str:
    """Referee table ``table_id`` (a worker's task): the bots in the sandbox under
    :data:`TABLE_SETTINGS`, the people through the channel; store the record. Return the
    table's status afterwards (``done``, ``failed``, or, with nothing to do, its status or
    ``missing``)."""
    config = config or Config()
    now = datetime.now(UTC)
    if not claim_table(store, table_id, now, config.lease_seconds):
        row = table_row(store, table_id)
        return "missing" if row is None else row.status

    def renew() -> bool:
        return renew_table(store, table_id, lease_seconds=config.lease_seconds)

    row = table_row(store, table_id)
    assert row is not None
    feed = RedisFeed(
        channel(),
        table_id,
        row.channel,
        [s.seat for s in row.seats if s.human],
        [_seat_name(s) for s in row.seats],
        row.move_seconds,
    )
    try:
        with keep_alive(renew, config.heartbeat_seconds, f"table-{table_id}"):
            record = _play(store, row, feed, config, first_slot, sandboxed)
    except Exception as exc:
        finish_table(store, table_id, "failed", message=f"The harness failed: {exc}")
        return "failed"
    except BaseException:
        finish_table(store, table_id, "failed", message="The worker stopped.")
        raise
    result = record.get("result") or {}
    finish_table(store, table_id, "done", record=record, winners=result.get("winners") or [])
    return "done"


def _seat_name(seat: SeatRow) -> str:
    return seat.name or ("a person" if seat.human else "a bot")


def _play(
    store: Store,
    row: TableRow,
    feed: RedisFeed,
    config: Config,
    first_slot: int | None,
    sandboxed: bool,
) -> dict[str, Any]:
    rules = rules_from_record(row.rules_name, row.rules_params)
    bots = [s.version_id for s in row.seats if s.version_id is not None]
    files = bot_files(store, bots, config.bot_cache)
    settings = TABLE_SETTINGS
    bot_players = iter(
        make_players(
            [str(files[v]) for v in bots],
            sandboxed=sandboxed,
            limits=Limits(memory_mb=settings.memory_mb),
            first_slot=first_slot,
        )
    )
    players: list[Player] = [
        HumanPlayer(_seat_name(s), feed, row.move_seconds) if s.human else next(bot_players)
        for s in row.seats
    ]
    names = [_seat_name(s) for s in row.seats]
    outcome = next(
        play_match(
            rules,
            players,
            games=1,
            seed=row.seed,
            teams=row.teams,
            time_control=settings.time_control(),
            watch=feed.step,
        )
    )
    verdict = outcome.verdict.to_dict() if outcome.verdict is not None else None
    record = game_record(outcome.game, names, verdict=verdict, times=outcome.times)
    record["humans"] = [s.seat for s in row.seats if s.human]
    shown = None if verdict is None else {k: verdict[k] for k in ("seat", "termination")}
    feed.publish(outcome.game, status="done", verdict=shown)
    return record


# --- the sweep and the bots' pages ----------------------------------------------------------


def close_idle(store: Store, now: datetime | None = None) -> list[int]:
    """Close the tables nobody played for :data:`IDLE_SECONDS` (an invitation not taken,
    no worker) and those whose worker is gone; return their ids (the sweep's)."""
    now = datetime.now(UTC) if now is None else now
    return close_idle_tables(store, idle_before=now - timedelta(seconds=IDLE_SECONDS), now=now)


@dataclass(frozen=True, slots=True)
class PeopleRecord:
    """A bot's finished games against people (a game always has a winning side): won, lost."""

    wins: int
    losses: int

    @property
    def games(self) -> int:
        """Every game counted."""
        return self.wins + self.losses


def record_against_people(store: Store, bot_id: int) -> PeopleRecord:
    """The bot's record at tables (every version's; its partner's seat wins with it)."""
    played = tables_against_people(store, bot_id)
    wins = sum(1 for seat, winners, _ in played if seat in winners)
    return PeopleRecord(wins, len(played) - wins)
