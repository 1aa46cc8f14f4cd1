"""Tables: a person plays bots through the service, refereed here as a worker would (the
reference bots unsandboxed: they are trusted), the moves and views through a real Redis."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from sqlalchemy import event, func, select
from sqlalchemy.engine import Connection

from arena.engine.records import verify_record
from arena.engine.replay import replay_record
from arena.engine.rules import PRESETS
from arena.errors import NotFound, PermissionDenied
from arena.service import tables
from arena.service.accounts import Account, create_account, password_hasher
from arena.service.broker import install
from arena.service.broker import make_app as make_celery
from arena.service.classes import NewClass, create_class, join_class, set_private
from arena.service.matches import Config
from arena.service.tables import (
    TableError,
    close_idle,
    join_table,
    open_table,
    record_against_people,
    run_table,
    send_move,
    table_view,
    watch_code,
    watch_table,
)
from arena.store.db import Store
from arena.store.models import GameTable, Match
from arena.store.tables import table_row
from tests.paths import REFERENCE_BOTS


@pytest.fixture
def seated(
    store: Store, tables_channel: str, tmp_path: Path
) -> Iterator[tuple[Account, Account, int]]:
    """Two people (carol, dave), the reference bots; the channel on the session's Redis,
    the broker a directory nobody reads (the test referees the tables itself)."""
    for name in ("greedy", "random"):
        store.add_bot_version("reference", name, (REFERENCE_BOTS / f"{name}.py").read_text(), {})
    carol, dave = (Account(store.add_user(name).id, name, "user", 0) for name in ("carol", "dave"))
    bot, _ = store.add_bot_version("erin", "greedy", (REFERENCE_BOTS / "greedy.py").read_text(), {})
    previous = install(make_celery(f"filesystem://{tmp_path / 'broker'}", None, None))
    yield carol, dave, bot.bot_id
    install(previous)


def _referee(store: Store, table_id: int, tmp_path: Path) -> threading.Thread:
    config = Config(bot_cache=tmp_path / "bots")
    thread = threading.Thread(
        target=run_table, args=(store, table_id), kwargs={"config": config, "sandboxed": False}
    )
    thread.start()
    return thread


def _play_out(store: Store, person: Account, table_id: int) -> int:
    """Play the first legal move at every turn of ``person`` until the game is over;
    return the moves made."""
    after, moves = "0", 0
    for _ in range(500):
        _, view_id, view = table_view(store, person, table_id, after=after, wait_seconds=5)
        if view is None or view_id is None:
            continue
        after = view_id
        if view["status"] == "done":
            return moves
        if view["round"]["to_move"] == view["seat"]:
            send_move(store, person, table_id, view["turn"], view["round"]["legal_moves"][0])
            moves += 1
    raise AssertionError("the game did not end")


def test_a_person_plays_a_whole_game_against_a_bot(
    store: Store, seated: tuple[Account, Account, int], tmp_path: Path
) -> None:
    carol, _, bot_id = seated
    opened = open_table(
        store, carol, address="10.0.0.1", rules="draw", players=2, teams=False, seat=1, bot=None
    )
    referee = _referee(store, opened.id, tmp_path)
    moves = _play_out(store, carol, opened.id)
    referee.join(30)
    row = table_row(store, opened.id)
    assert row is not None and row.status == "done" and row.record is not None
    assert moves > 0
    assert verify_record(row.record) == []
    assert row.record["seats"][1] == "carol" and row.record["humans"] == [1]
    assert row.record["seats"][0].startswith("reference/greedy@v")
    with store.read() as session:  # no match: no rating counts it
        assert session.scalar(select(func.count()).select_from(Match)) == 0
    greedy, _ = store.add_bot_version(
        "reference", "greedy", (REFERENCE_BOTS / "greedy.py").read_text(), {}
    )
    assert record_against_people(store, greedy.bot_id).games == 1
    assert record_against_people(store, bot_id).games == 0


def test_a_person_who_leaves_forfeits_and_releases_the_bots(
    store: Store,
    seated: tuple[Account, Account, int],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    carol, _, _ = seated
    monkeypatch.setattr(tables, "MOVE_SECONDS", 0.2)
    opened = open_table(
        store, carol, address="10.0.0.1", rules="draw", players=2, teams=False, seat=0, bot=None
    )
    _referee(store, opened.id, tmp_path).join(30)
    row = table_row(store, opened.id)
    assert row is not None and row.status == "done" and row.record is not None
    verdict = row.record["result"]["verdict"]
    assert verdict["seat"] == 0 and verdict["termination"] == "timeout"
    assert "carol made no move in 0.2 s" in verdict["message"]
    assert row.winners == (1,)
    assert verify_record(row.record) == []


def test_moves_are_checked_against_the_published_view(
    store: Store, seated: tuple[Account, Account, int], tmp_path: Path
) -> None:
    carol, dave, _ = seated
    opened = open_table(
        store, carol, address="10.0.0.1", rules="draw", players=2, teams=False, seat=0, bot=None
    )
    with pytest.raises(TableError, match="waiting for a worker: no move is taken"):
        send_move(store, carol, opened.id, 0, "6-6")
    referee = _referee(store, opened.id, tmp_path)
    _, _, view = table_view(store, carol, opened.id, wait_seconds=10)
    while view is not None and view["round"]["to_move"] != 0:
        _, _, view = table_view(store, carol, opened.id, wait_seconds=10)
    assert view is not None
    turn, legal = view["turn"], view["round"]["legal_moves"]
    with pytest.raises(TableError, match="is not a legal move here: play one of"):
        send_move(store, carol, opened.id, turn, "9-9L")
    with pytest.raises(TableError, match="answers an earlier turn"):
        send_move(store, carol, opened.id, turn + 5, legal[0])
    with pytest.raises(NotFound):
        send_move(store, dave, opened.id, turn, legal[0])
    with pytest.raises(PermissionDenied):
        send_move(store, None, opened.id, turn, legal[0])
    _play_out(store, carol, opened.id)
    referee.join(30)


def test_tables_are_bounded_with_a_sentence(
    store: Store, seated: tuple[Account, Account, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    carol, dave, _ = seated

    def open_one(who: Account, address: str = "10.0.0.1") -> int:
        return open_table(
            store, who, address=address, rules="draw", players=2, teams=False, seat=0, bot=None
        ).id

    open_one(carol)
    open_one(carol)
    with pytest.raises(TableError, match="You have 2 tables open \\(at most 2\\)"):
        open_one(carol)
    monkeypatch.setattr(tables, "MAX_PER_ADDRESS", 3)
    open_one(dave)
    with pytest.raises(TableError, match="3 tables are open from your address"):
        open_one(dave)
    monkeypatch.setenv(tables.TABLES_MAX_ENV, "3")
    with pytest.raises(TableError, match="All 3 tables are taken"):
        open_one(dave, "10.0.0.2")
    with pytest.raises(TableError, match="your seat must be 0 to 1, not 2"):
        open_table(store, dave, address="x", rules="draw", players=2, teams=False, seat=2, bot=None)
    with pytest.raises(NotFound, match="no rule set called 'nope'"):
        open_table(store, dave, address="x", rules="nope", players=2, teams=False, seat=0, bot=None)
    with pytest.raises(NotFound, match="no bot version 999 is stored"):
        open_table(store, dave, address="y", rules="draw", players=2, teams=False, seat=0, bot=999)


def test_an_invited_person_takes_the_partners_seat(
    store: Store, seated: tuple[Account, Account, int]
) -> None:
    carol, dave, _ = seated
    opened = open_table(
        store,
        carol,
        address="10.0.0.1",
        rules="muggins",
        players=4,
        teams=True,
        seat=0,
        bot=None,
        invite=True,
    )
    assert opened.invite is not None
    row = table_row(store, opened.id)
    assert row is not None and row.status == "waiting"
    assert [s.human for s in row.seats] == [True, False, True, False]
    with pytest.raises(NotFound, match="has this invitation"):
        join_table(store, dave, opened.id, "wrong")
    assert join_table(store, dave, opened.id, opened.invite) == 2
    assert join_table(store, dave, opened.id, opened.invite) == 2  # twice: the same seat
    row = table_row(store, opened.id)
    assert row is not None and row.status == "pending" and row.seats[2].name == "dave"
    assert close_idle(store, now=row.created) == []


def test_a_client_key_sent_twice_opens_one_table(
    store: Store, seated: tuple[Account, Account, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A double click on "Sit down" (the form's one-time token, the API's Idempotency-Key):
    one table stored and sent, the second answer the first's; the key is the owner's."""
    carol, dave, _ = seated

    def sit(who: Account, key: str | None, rules: str = "draw") -> tables.OpenedTable:
        return open_table(
            store, who, address="10.0.0.1", rules=rules, players=3, teams=False, seat=0,
            bot=None, invite=True, key=key,
        )  # fmt: skip

    first = sit(carol, "form-1")
    again = sit(carol, "form-1")
    assert not first.repeated and again.repeated
    assert (again.id, again.invite) == (first.id, first.invite)
    with store.read() as session:
        assert session.scalar(select(func.count()).select_from(GameTable)) == 1
    with pytest.raises(TableError, match=f"opened another table \\(table {first.id}\\)"):
        sit(carol, "form-1", rules="block")
    other = sit(dave, "form-1")  # another person's key is theirs
    assert other.id != first.id and not other.repeated
    sit(carol, "form-2")  # carol's second table: her bound (2) is full now
    assert sit(carol, "form-2").repeated  # a repeat is no new table: no bound refuses it
    with pytest.raises(TableError, match="You have 2 tables open"):
        sit(carol, "form-3")
    for bad in ("", "x" * 101, "caf\u00e9", "a\nb"):
        with pytest.raises(TableError, match="an idempotency key is 1 to 100 printable ASCII"):
            sit(dave, bad)
    sent: list[int] = []  # each table with nobody invited is sent once
    monkeypatch.setattr(tables, "dispatch_table", lambda _, table_id: sent.append(table_id))
    alone = [
        open_table(
            store, dave, address="10.0.0.1", rules="draw", players=2, teams=False, seat=0,
            bot=None, key="k",
        ).id
        for _ in range(2)
    ]  # fmt: skip
    assert alone[0] == alone[1] and sent == alone[:1]


def test_ten_people_open_tables_at_once_on_sqlite(
    store: Store, seated: tuple[Account, Account, int]
) -> None:
    """Thirty tables opened at once on SQLite (benchmarks/tables.py) answered "database is
    locked": no write was held long, but every request polled for SQLite's one write lock
    on a connection of its own (sleeping up to 100 ms between tries while others took
    it), three times an open (its rule set stored again, the table, its sending), and some
    waited past the 5 s busy timeout. Ten at once: each opens, taking the lock twice (the
    rule set only read once stored), and never while another of them holds it (they take
    turns in the process instead of polling)."""
    assert store.dialect == "sqlite"
    people = [Account(store.add_user(f"p{k}").id, f"p{k}", "user", 0) for k in range(10)]
    store.ensure_rule_set(PRESETS["draw"])  # stored by an earlier table
    writes: list[str] = []
    holding: set[Connection] = set()  # the connections in a write transaction
    polled: list[str] = []  # the writes begun while another was held: SQLite's busy wait

    def beginning(connection: Connection, cursor: object, statement: str, *_: object) -> None:
        if statement == "BEGIN IMMEDIATE":
            writes.append(threading.current_thread().name)
            if holding:
                polled.append(threading.current_thread().name)

    def begun(connection: Connection, cursor: object, statement: str, *_: object) -> None:
        if statement == "BEGIN IMMEDIATE":
            holding.add(connection)

    def ended(connection: Connection) -> None:
        holding.discard(connection)

    start = threading.Barrier(len(people))
    opened: list[int] = []
    failed: list[BaseException] = []

    def sit(person: Account) -> None:
        start.wait()
        try:
            opened.append(
                open_table(
                    store, person, address="10.0.0.9", rules="draw", players=2, teams=False,
                    seat=0, bot=None,
                ).id
            )  # fmt: skip
        except BaseException as exc:  # every failure reported
            failed.append(exc)

    listeners: list[tuple[str, Callable[..., None]]] = [
        ("before_cursor_execute", beginning),
        ("after_cursor_execute", begun),
        ("commit", ended),
        ("rollback", ended),
    ]
    for name, listener in listeners:
        event.listen(store.engine, name, listener)
    try:
        threads = [threading.Thread(target=sit, args=(p,), name=p.name) for p in people]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
    finally:
        for name, listener in listeners:
            event.remove(store.engine, name, listener)
    assert failed == [] and len(set(opened)) == len(people)
    assert sorted(writes) == sorted(p.name for p in people for _ in range(2))
    assert polled == []


#: A table of every preset: (rules, seats, 2v2, the person's seat); 3 to 5 seats and teams.
EVERY_PRESET = [
    ("block", 3, False, 2),
    ("draw", 4, False, 0),
    ("muggins", 4, True, 1),
    ("giant", 2, False, 1),
    ("block-and-draw", 5, False, 3),
    ("wooden", 3, False, 0),
    ("three-minute", 4, False, 2),
]


def test_every_preset_is_listed() -> None:
    assert {case[0] for case in EVERY_PRESET} == set(PRESETS)


@pytest.mark.parametrize(("rules", "players", "teams", "seat"), EVERY_PRESET)
def test_a_person_plays_a_whole_game_of_every_preset(
    store: Store,
    seated: tuple[Account, Account, int],
    tmp_path: Path,
    rules: str,
    players: int,
    teams: bool,
    seat: int,
) -> None:
    """The first legal move at each of the person's turns, erin's bot beside them and the
    reference bots around; the record verifies and replays, the spectators saw the end."""
    carol, _, bot_id = seated
    version = store.add_bot_version(
        "erin", "greedy", (REFERENCE_BOTS / "greedy.py").read_text(), {}
    )[0]
    opened = open_table(
        store,
        carol,
        address="10.0.0.1",
        rules=rules,
        players=players,
        teams=teams,
        seat=seat,
        bot=version.id,
        seed=7,
    )
    referee = _referee(store, opened.id, tmp_path)
    assert _play_out(store, carol, opened.id) > 0
    referee.join(30)
    row = table_row(store, opened.id)
    assert row is not None and row.status == "done" and row.record is not None, row
    assert verify_record(row.record) == []
    assert row.record["seats"][seat] == "carol" and row.record["humans"] == [seat]
    assert row.record["seats"][(seat + 1) % players].startswith("erin/greedy@v")
    replay = replay_record(row.record)
    assert replay.rounds and all(r.frames for r in replay.rounds)
    watched = watch_table(store, None, opened.id, watch_code(row))
    assert watched.view is not None and watched.view["outcome"] is not None
    assert watched.view["round"]["hands"] is not None  # the game over: its hands shown
    assert record_against_people(store, bot_id).games == 1


def test_anyone_with_the_watch_link_sees_what_a_spectator_may(
    store: Store, seated: tuple[Account, Account, int], tmp_path: Path
) -> None:
    carol, dave, _ = seated
    opened = open_table(
        store, carol, address="10.0.0.1", rules="draw", players=3, teams=False, seat=0, bot=None
    )
    row = table_row(store, opened.id)
    assert row is not None
    code = watch_code(row)
    waiting = watch_table(store, None, opened.id, code)
    assert waiting.view is None and waiting.playing and waiting.feed == "live"
    for wrong in ("nope", code[:-1] + "x", ""):
        with pytest.raises(NotFound, match="is watched with this link"):
            watch_table(store, dave, opened.id, wrong)
    with pytest.raises(NotFound):
        watch_table(store, dave, opened.id + 1, code)
    referee = _referee(store, opened.id, tmp_path)
    _, _, seen = table_view(store, carol, opened.id, wait_seconds=10)
    while seen is not None and seen["round"]["to_move"] != 0:  # (the game waits for her)
        _, _, seen = table_view(store, carol, opened.id, wait_seconds=10)
    assert seen is not None
    watched = watch_table(store, dave, opened.id, code)  # not seated: the link is enough
    assert watched.view is not None and watched.players[0] == "carol"
    spectated = watched.view["round"]
    assert spectated["hands"] is None and "hand" not in spectated  # no hand while played
    assert "legal_moves" not in spectated and "seed" not in watched.view
    assert all(e["tile"] is None for e in spectated["events"] if e["type"] == "draw")
    assert spectated["hand_sizes"] == seen["round"]["hand_sizes"]
    _play_out(store, carol, opened.id)
    referee.join(30)
    over = watch_table(store, None, opened.id, code)
    assert not over.playing and over.view is not None and over.view["status"] == "done"


def test_a_table_with_a_private_classs_bot_is_watched_by_its_members_only(
    store: Store, seated: tuple[Account, Account, int]
) -> None:
    """Carol plays sam's bot before his class turns private: dave, a stranger with the
    link, then sees nothing; sam and his teacher do."""
    carol, dave, _ = seated
    hasher = password_hasher(cheap=True)
    tess = create_account(store, "tess", "correct horse", role="teacher", hasher=hasher)
    maths = create_class(store, tess, NewClass(name="maths"))
    assert maths.join_code is not None
    sam = join_class(store, hasher, maths.join_code, "sam", "correct horse")
    version, _ = store.add_bot_version("sam", "g", (REFERENCE_BOTS / "greedy.py").read_text(), {})
    opened = open_table(
        store, carol, address="x", rules="draw", players=2, teams=False, seat=0, bot=version.id
    )
    row = table_row(store, opened.id)
    assert row is not None
    code = watch_code(row)
    assert watch_table(store, dave, opened.id, code).playing
    set_private(store, tess, "maths", True)
    for stranger in (dave, None):
        with pytest.raises(NotFound, match="is watched with this link"):
            watch_table(store, stranger, opened.id, code)
    for member in (sam, tess):
        assert watch_table(store, member, opened.id, code).players[1] == "sam/g@v1"
