"""A compare's start handed to the workers (arena/service/compare_start.py and
``open_compare``/``start_requested_compare`` in arena/service/compares.py), on both
databases: whichever of the worker and the command opens the request second finds the
first's compare; a name stored for another request, an old start, a refused one and a
worker of other code are each refused or dropped, storing nothing."""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
import os
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import click
import pytest
from sqlalchemy import func, select, update

from arena.cli.compare import compare_command
from arena.compete.sprt import make_test
from arena.engine.rules import PRESETS
from arena.service import compare_start, compares
from arena.service.broker import (
    REPLY_EXPIRES_SECONDS,
    expire_replies,
    make_sender,
    read_replies,
    reply_queue,
    send_reply,
)
from arena.service.compare_start import (
    BOUNDS,
    READING_NUMBERS,
    REPLIES_SENT_SECONDS,
    START_MAX_AGE_SECONDS,
    CompareRequest,
    Reply,
    compare_name,
    follow_replies,
)
from arena.service.compare_views import compare_view
from arena.service.compares import COMPARE_AHEAD, open_compare, start_requested_compare
from arena.store.compares import follow_until, keep_reading, kept_reading, void_reason
from arena.store.db import Store, connect
from arena.store.matches import tournament_named
from arena.store.models import Match, Tournament
from arena.store.queue import tournament_progress
from arena.store.tournaments import get_tournament
from tests.paths import REFERENCE_BOTS, ZOO
from tests.service.conftest import Recorder, play_compare

RULES = PRESETS["draw"]
#: On both databases: who stores a compare first is serialized by each (a write lock, an
#: advisory lock), and the kept reading's upsert is each one's.
pytestmark = pytest.mark.backends("sqlite", "postgresql")


@pytest.fixture
def bots(store: Store) -> Store:
    store.add_bot_version("ada", "greedy", (REFERENCE_BOTS / "greedy.py").read_text(), {})
    store.add_bot_version("bob", "first", (ZOO / "first.py").read_text(), {})
    return store


def _request(**changes: Any) -> CompareRequest:
    fields: dict[str, Any] = dict(
        new="ada/greedy", old="bob/first", rules="draw", rules_version=RULES.version,
        players=2, teams=False, statistic="margin", elo0=0.0, elo1=10.0, alpha=0.05,
        beta=0.05, max_games=2000, batch=4, seed=1, move_seconds=1.0, memory_mb=512,
        allow_same_source=False,
    )  # fmt: skip
    return CompareRequest.make(**(fields | changes))


def _tournaments(store: Store) -> int:
    with store.read() as session:
        return session.scalar(select(func.count(Tournament.id))) or 0


def test_a_start_stores_the_compare_and_sends_its_first_batches(
    bots: Store, recorder: Recorder
) -> None:
    """The worker first (the usual order: the command is still loading its store): the
    compare is stored under the request's name with its token, and its first batches are
    sent; the command's open finds it, and its loop's first send adds nothing."""
    request = _request()
    said = start_requested_compare(bots, request.payload(), now=time.time())
    assert said == f"compare {request.name!r}: stored"
    tournament = tournament_named(bots, request.name)
    assert tournament is not None and tournament.format == "compare"
    assert tournament.settings is not None and tournament.settings["request"] == request.token
    batches = compares._batches(bots, tournament.id)
    sent = [*itertools.chain(*recorder.sent)]
    assert sent == [i for ids in batches[:COMPARE_AHEAD] for i in ids]
    assert open_compare(bots, request) == (tournament.id, False)
    assert compares._send_due(bots, tournament.id, batches, COMPARE_AHEAD)
    assert [*itertools.chain(*recorder.sent)] == sent  # nothing sent twice
    assert _tournaments(bots) == 1


def test_the_command_first_then_its_start_finds_it_and_sends_nothing(
    bots: Store, recorder: Recorder
) -> None:
    """No worker took the start in time (none alive, all busy): the command stores the
    compare itself; the start, taken later, finds it and leaves it to the command."""
    request = _request()
    tournament_id, created = open_compare(bots, request)
    assert created
    said = start_requested_compare(bots, request.payload(), now=time.time())
    assert said == f"compare {request.name!r}: stored already, left to its command"
    assert recorder.sent == []
    assert open_compare(bots, request) == (tournament_id, False)
    assert _tournaments(bots) == 1


def test_a_name_stored_for_another_request_is_refused(bots: Store, recorder: Recorder) -> None:
    """Two commands asking for the same compare in the same second: one name, two tokens;
    the second is refused as a tournament of that name existing (as before the start was
    handed over), and its start stores nothing either."""
    first = _request()
    second = CompareRequest.from_payload(first.payload() | {"token": "b" * 32})
    open_compare(bots, first)
    with pytest.raises(ValueError, match="exists already"):
        open_compare(bots, second)
    said = start_requested_compare(bots, second.payload(), now=time.time())
    assert said.startswith(f"compare {first.name!r} refused: ") and "exists already" in said
    assert _tournaments(bots) == 1 and recorder.sent == []
    # (its command, told so at once, opens it itself: refused with the same sentence)
    assert recorder.replies == [(reply_queue(second.token), {"kind": "refused"})]


def test_an_old_start_is_dropped(bots: Store, recorder: Recorder) -> None:
    """A start that waited past the bound for a worker stores nothing: its command has
    stored the compare, or gave up (nobody would follow one stored now)."""
    request = _request()
    later = request.asked + START_MAX_AGE_SECONDS + 1
    said = start_requested_compare(bots, request.payload(), now=later)
    assert said == f"compare {request.name!r}: its start is too old, dropped"
    assert _tournaments(bots) == 0 and recorder.sent == []


@pytest.mark.parametrize(
    ("changes", "sentence"),
    [
        ({"new": "ada/nosuch"}, "no bot 'nosuch' of 'ada' is stored"),
        ({"rules_version": "0" * 16}, "rule set 'draw' is version "),
        ({"statistic": "median"}, "unknown statistic 'median'"),
        ({"elo0": 20.0}, "elo"),
    ],
)
def test_a_refused_start_says_why_and_stores_nothing(
    bots: Store, recorder: Recorder, changes: dict[str, Any], sentence: str
) -> None:
    """The worker only says it (its log); the command, opening the same request, is refused
    with the same sentence."""
    request = _request(**changes)
    said = start_requested_compare(bots, request.payload(), now=time.time())
    assert said.startswith(f"compare {request.name!r} refused: ") and sentence in said
    with pytest.raises((LookupError, ValueError)) as refused:
        open_compare(bots, request)
    assert said.endswith(str(refused.value))
    assert _tournaments(bots) == 0 and recorder.sent == []


@pytest.mark.parametrize(
    "payload",
    [
        {"surprise": 1},
        {"players": True},
        {"players": 2.5},
        {"teams": 1},
        {"elo1": "10"},
        {"elo1": float("nan")},
        {"alpha": float("inf")},
        {"new": None},
        {"new": ""},
        {"memory_mb": 10**9},
        {"memory_mb": 8},
        {"move_seconds": -1.0},
        {"move_seconds": 0.0},
        {"move_seconds": 1e9},
        {"seed": -5},
        {"max_games": 200_000_000},
        {"batch": 0},
        {"players": 9},
        {"asked": time.time() + 3600},  # (never old enough to be dropped)
    ],
)
def test_a_start_the_command_would_not_send_is_refused(
    bots: Store, recorder: Recorder, payload: dict[str, Any]
) -> None:
    """A broker message is not trusted to hold what the command accepts: the worker checks
    each field's type and the command's bounds (the memory a bot may take, its time, the
    games), and refuses the rest, storing nothing."""
    bad = _request().payload() | payload
    with pytest.raises(ValueError, match="compare's start"):
        CompareRequest.from_payload(bad)
    assert start_requested_compare(bots, bad, now=time.time()).startswith("refused: ")
    assert _tournaments(bots) == 0 and recorder.sent == []


def test_a_start_missing_a_field_is_refused() -> None:
    payload = _request().payload()
    del payload["seed"]
    with pytest.raises(ValueError, match=r"compare's start: not one \(seed\)"):
        CompareRequest.from_payload(payload)
    assert CompareRequest.from_payload(_request().payload() | {"elo1": 10}).elo1 == 10.0


def test_a_starts_bounds_are_the_commands() -> None:
    """What a worker accepts is what ``arena compare`` accepts (its options' ranges)."""
    params = {param.name: param for param in compare_command.params}
    names = {"max_games": "max_games", "batch": "batch", "seed": "seed",
             "move_seconds": "move_time", "memory_mb": "memory"}  # fmt: skip
    for field, option in names.items():
        kind = params[option].type
        assert isinstance(kind, click.IntRange | click.FloatRange), option
        assert (kind.min, kind.max) == BOUNDS[field], option


def test_its_name_says_when_it_was_asked() -> None:
    """The tournament's name is not a field of its own: it is made from the bots, the rule
    set, the seed and the time it was asked for (a start cannot name any tournament)."""
    request = _request()
    assert "name" not in request.payload()
    assert request.name == compare_name(
        "ada/greedy", "bob/first", "draw", 1, datetime.fromtimestamp(request.asked, UTC)
    )


def test_two_opening_one_request_at_once_store_one_compare(url: str, bots: Store) -> None:
    """The worker and the command opening the same request at the same moment, each on a
    connection of its own: one stores it, the other finds it."""
    request = _request()
    stores = [connect(url), connect(url)]
    barrier = threading.Barrier(2)
    results: list[tuple[int, bool]] = []

    def open_it(store: Store) -> None:
        barrier.wait()
        results.append(open_compare(store, request))

    threads = [threading.Thread(target=open_it, args=(store,)) for store in stores]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
    finally:
        for store in stores:
            store.close()
    assert sorted(created for _, created in results) == [False, True]
    assert len({tournament_id for tournament_id, _ in results}) == 1
    assert _tournaments(bots) == 1


def test_a_compare_whose_follower_is_gone_is_stopped_by_the_sweep(
    bots: Store, recorder: Recorder
) -> None:
    """A worker stored a start's compare and sent its first batches, and its command never
    came (killed while it loaded) or stopped following (killed later): once the hold runs
    out the workers' sweep voids what is not started, saying why (its matches not sent
    would stay pending for ever). A compare whose follower holds it, and a web compare
    (every batch sent at once, no follower), are left alone."""
    request = _request()
    start_requested_compare(bots, request.payload(), now=time.time())
    gone = tournament_named(bots, request.name)
    assert gone is not None
    web, _ = compares.create_compare(
        bots, new="ada/greedy", old="bob/first", rules=RULES, players=2,
        test=make_test("margin", 0.0, 10.0), max_games=64, batch=4, seed=9,
    )  # fmt: skip
    compares.advance_compare(bots, web)
    followed = _request(seed=2)
    followed_id, _ = open_compare(bots, followed)
    soon = datetime.now(UTC) + timedelta(seconds=5)
    assert compares.stop_unfollowed(bots, soon) == []  # held
    later = datetime.now(UTC) + timedelta(seconds=compares.FOLLOW_LEASE_SECONDS + 5)
    compares._hold(bots, followed_id, compares.FOLLOW_LEASE_SECONDS + 60)  # its loop renews
    assert compares.stop_unfollowed(bots, later) == [gone.id]
    progress = tournament_progress(bots, gone.id)
    assert progress["pending"] == 0 and progress["void"] > 0
    assert void_reason(bots, gone.id) == "its follower (arena compare --remote) is gone"
    assert tournament_progress(bots, followed_id)["void"] == 0
    assert tournament_progress(bots, web)["void"] == 0
    assert compares.stop_unfollowed(bots, later) == []  # once


# --- the workers' replies -------------------------------------------------------------------


def _reading(done: int, status: str = "continue", **figures: Any) -> dict[str, Any]:
    reading = dict(
        statistic="margin", groups=done, status=status if status != compares.LIMIT else
        "continue", llr=1.0, lower=-2.9, upper=2.9, fast_llr=None, fast_upper=None,
        elo=None, low=None, high=None, los=None,
    ) | figures  # fmt: skip
    state = {"played": 2 * done, "finished_batches": done, "reading": reading}
    return {"kind": "reading", "done": done, "status": status, "state": state}


def test_a_reply_is_what_a_worker_says_or_nothing() -> None:
    """A reply is parsed from what a worker sends (an open interval's +inf as well: the
    command shows it), and anything else on its queue is no reply."""
    assert Reply.parse({"kind": "stored"}) == Reply("stored")
    assert Reply.parse({"kind": "refused"}) == Reply("refused")
    open_interval = _reading(2, "H1 accepted", elo=777.0, low=388.1, high=math.inf, los=1.0)
    reply = Reply.parse(open_interval)
    assert reply is not None and reply.ended and (reply.done, reply.played) == (2, 4)
    assert reply.reading is not None and reply.reading["high"] == math.inf
    assert Reply.parse(_reading(1)) == Reply(
        "reading", 1, "continue", 2, _reading(1)["state"]["reading"]
    )
    for odd in (
        {}, {"kind": "other"}, {"kind": "reading"}, _reading(1) | {"done": "1"},
        _reading(1) | {"state": []}, _reading(1, elo="high"), _reading(1, llr=None),
        _reading(1, los=math.nan), _reading(1) | {"status": None},
    ):  # fmt: skip
        assert Reply.parse(odd) is None, odd
    # an end without figures (a refused test's) ends the following: the store says why
    refused = {"kind": "reading", "done": 3, "status": compares.REFUSED}
    assert Reply.parse(refused) == Reply("reading", 3, compares.REFUSED)
    assert Reply.parse(_reading(3, "H1 accepted", elo="x")) == Reply("reading", 3, "H1 accepted")


def test_a_readings_numbers_are_the_tests_figures() -> None:
    """The figures a reply's reading is checked for are a reading's (those of
    :class:`arena.compete.sprt.Reading` but what it counts, its groups and its status)."""
    from arena.compete.sprt import Reading

    fields = [field.name for field in dataclasses.fields(Reading)]
    assert fields == ["statistic", "groups", "status", *READING_NUMBERS]
    assert compares.REFUSED == compare_start.REFUSED


def test_the_command_follows_its_compare_by_the_workers_replies(tmp_path: Path) -> None:
    """The replies come over a real broker (the filesystem's): ``stored``, then each reading
    over more done matches than the last (an older one, sent late by a slower worker, is
    not shown), and the one that ends the compare ends the following; others' replies are
    not this command's."""
    broker_url = f"filesystem://{tmp_path}"
    app = make_sender(broker_url)
    request, other = _request(), _request()
    for message in ({"kind": "stored"}, _reading(2), _reading(1), {"kind": "other"}):
        send_reply(app, request.token, message)
    send_reply(app, other.token, _reading(5, "H1 accepted"))
    got = []
    for reply in follow_replies(request, broker_url, None, seconds=60):
        got.append((reply.kind, reply.done, reply.status))
        if len(got) == 2:  # a worker's check that ends it, while the command follows
            send_reply(app, request.token, _reading(3, "H0 accepted"))
    assert got == [("stored", 0, "continue"), ("reading", 2, "continue"),
                   ("reading", 3, "H0 accepted")]  # fmt: skip
    assert [r.kind for r in follow_replies(other, broker_url, None, seconds=60)] == [
        "stored",
        "reading",
    ]  # (a reading says it was stored)


def test_the_command_stops_following_replies_when_none_or_too_few_come(tmp_path: Path) -> None:
    """No worker said it stored the compare within ``started_seconds`` of asking (none alive,
    all busy), or it goes on past ``seconds``, or a worker refused it: the following ends,
    and the command follows the compare in the store."""
    broker_url = f"filesystem://{tmp_path}"
    app = make_sender(broker_url)
    silent = _request()
    started = time.monotonic()
    assert list(follow_replies(silent, broker_url, None, started_seconds=0.3)) == []
    assert 0.2 < time.monotonic() - started < 5
    going_on = _request()
    send_reply(app, going_on.token, {"kind": "stored"})
    send_reply(app, going_on.token, _reading(1))
    kinds = [r.kind for r in follow_replies(going_on, broker_url, None, seconds=0.5)]
    assert kinds == ["stored", "reading"]
    refused = _request()
    send_reply(app, refused.token, {"kind": "refused"})
    assert [r.kind for r in follow_replies(refused, broker_url, None)] == ["refused"]
    assert list(follow_replies(refused, "redis://127.0.0.1:1/0", None)) == []  # (unreachable)


def test_a_start_refuses_a_token_that_is_not_one() -> None:
    """A start's token names its reply queue: one that is not a token (another queue's
    name) is refused."""
    for token in ("arena", "A" * 32, "g" * 32, "a" * 31):
        with pytest.raises(ValueError, match="token"):
            CompareRequest.from_payload(_request().payload() | {"token": token})


def test_the_workers_reply_to_the_command_and_keep_its_batches_ahead(
    bots: Store, recorder: Recorder, tmp_path: Path
) -> None:
    """A compare stored for a start: its worker says ``stored``; each stop check that keeps
    a reading sends it to the command (what the store keeps, as it keeps it), the last the
    one that ends the test; and once a batch finishes, a stop check sends the batches up to
    ``COMPARE_AHEAD`` beyond it, with no command's loop to send them."""
    request = _request(max_games=2000, batch=4, elo1=10.0)
    assert start_requested_compare(bots, request.payload(), now=time.time()).endswith("stored")
    tournament = tournament_named(bots, request.name)
    assert tournament is not None
    batches = compares._batches(bots, tournament.id)
    said = play_compare(bots, tournament.id, tmp_path / "cache", matches=2 * COMPARE_AHEAD + 2)
    queue = reply_queue(request.token)
    assert {name for name, _ in recorder.replies} == {queue}
    replies = [Reply.parse(body) for _, body in recorder.replies]
    assert replies[0] == Reply("stored") and all(r is not None for r in replies)
    dones = [r.done for r in replies[1:] if r is not None]
    assert dones == sorted(set(dones)) and dones[-1] == len(dones)  # each check's, in order
    kept = kept_reading(bots, tournament.id)
    last = replies[-1]
    assert kept is not None and last is not None and (last.done, last.status) == kept[:2]
    assert said == [] and kept[1] == "continue"  # (the test goes on: batches are due)
    finished = compares.kept_state(kept[2]).finished_batches
    assert finished == (2 * COMPARE_AHEAD + 2) // len(batches[0])
    sent = [*itertools.chain(*recorder.sent)]
    assert sent == [i for ids in batches[: finished + COMPARE_AHEAD] for i in ids]


def test_keeping_a_reading_says_whether_it_was_kept(bots: Store, recorder: Recorder) -> None:
    """What a stop check sends its command is what the store kept, as it kept it: on both
    databases the upsert says whether it wrote (a reading over fewer done matches, or any
    after one that ended the test, is not kept)."""
    tournament_id, _ = open_compare(bots, _request())
    assert keep_reading(bots, tournament_id, 2, "continue", "{}")
    assert not keep_reading(bots, tournament_id, 2, "continue", "{}")
    assert not keep_reading(bots, tournament_id, 1, "continue", "{}")
    assert keep_reading(bots, tournament_id, 3, "H0 accepted", "{}")
    assert not keep_reading(bots, tournament_id, 4, "continue", "{}")


def test_a_reply_queue_takes_anything_and_gives_only_replies(tmp_path: Path) -> None:
    """Anything someone put on a reply queue (not a kombu message, not JSON, not an object,
    a number past a float's range) is taken and dropped, never raised; a flood is read a
    hundred at a time, so its reader keeps its deadlines; replies come in the order sent."""
    broker_url = f"filesystem://{tmp_path}"
    app = make_sender(broker_url)
    request = _request()
    queue = tmp_path / "queue"
    send_reply(app, request.token, {"kind": "stored"})
    for number, junk in enumerate((b"not json", b"[1, 2]", b'{"body": "x"}', b"")):
        (queue / f"{number:020d}_junk.{reply_queue(request.token)}.msg").write_bytes(junk)
    for done in range(1, 5):
        send_reply(app, request.token, _reading(done))
    send_reply(app, request.token, _reading(5, elo=10**400))
    send_reply(app, request.token, _reading(6, "H1 accepted"))
    got = [r.done for r in follow_replies(request, broker_url, None, seconds=30)]
    assert got == [0, 1, 2, 3, 4, 6]
    for _ in range(150):
        send_reply(app, request.token, {"kind": "other"})
    with app.connection_for_read() as connection:
        assert len(read_replies(connection.default_channel, request.token)) == 100
        assert len(read_replies(connection.default_channel, request.token)) == 50


def test_the_sweep_deletes_the_filesystem_brokers_old_replies(tmp_path: Path) -> None:
    """The filesystem broker's queues never expire: a killed command's replies are deleted
    by the workers' sweep once older than Redis would keep them; other queues' messages,
    and newer replies, stay."""
    app = make_sender(f"filesystem://{tmp_path}")
    old, new = _request(), _request()
    send_reply(app, old.token, {"kind": "stored"})
    app.send_task("arena.play_match", args=(1,), queue="arena")
    stale = time.time() - REPLY_EXPIRES_SECONDS - 5
    for path in (tmp_path / "queue").glob("*.msg"):
        os.utime(path, (stale, stale))
    send_reply(app, new.token, {"kind": "stored"})
    assert expire_replies(app) == 1
    names = sorted(path.name.partition(".")[2] for path in (tmp_path / "queue").glob("*.msg"))
    assert names == sorted(["arena.msg", f"{reply_queue(new.token)}.msg"])
    assert expire_replies(make_sender("redis://127.0.0.1:1/0")) == 0  # (Redis's expire)


def test_the_workers_reply_only_while_its_command_may_follow(bots: Store) -> None:
    """A compare's readings are sent for a minute after it was stored for a start (the
    command follows them 10 s at most); never for a compare of no start (the web's)."""
    request = _request()
    tournament_id, _ = open_compare(bots, request)
    tournament = get_tournament(bots, tournament_id)
    assert tournament is not None
    created = tournament.created.replace(tzinfo=UTC)
    assert compares._replying(tournament, created) == request.token
    later = created + timedelta(seconds=REPLIES_SENT_SECONDS + 1)
    assert compares._replying(tournament, later) is None
    web, _ = compares.create_compare(
        bots, new="ada/greedy", old="bob/first", rules=RULES, players=2,
        test=make_test("margin", 0.0, 10.0), max_games=64, batch=4, seed=9,
    )  # fmt: skip
    web_compare = get_tournament(bots, web)
    assert web_compare is not None and compares._replying(web_compare, created) is None


def test_a_compare_whose_command_is_gone_is_not_kept_ahead(
    bots: Store, recorder: Recorder, tmp_path: Path
) -> None:
    """The workers keep a compare's batches ahead only while it is held for its command:
    one whose hold ran out (the command killed) is played no further (the sweep voids it)."""
    request = _request()
    tournament_id, _ = open_compare(bots, request)
    follow_until(bots, tournament_id, datetime.now(UTC) - timedelta(seconds=1))
    batches = compares._batches(bots, tournament_id)
    compares._send_due(bots, tournament_id, batches, 1)  # (its first batch, as a start does)
    play_compare(bots, tournament_id, tmp_path / "cache", matches=len(batches[0]))
    assert [*itertools.chain(*recorder.sent)] == batches[0]


def test_a_compare_whose_batches_are_all_finished_ends_as_its_limit(
    bots: Store, recorder: Recorder, tmp_path: Path
) -> None:
    """A game limit that is no whole number of deal groups (65 games of 2-game groups: 64
    at most) ends when every batch is finished, as the command's loop ends it: the kept
    reading says so, and its command is told."""
    request = _request(max_games=9, batch=2, elo0=-1.0, elo1=1.0)
    assert start_requested_compare(bots, request.payload(), now=time.time()).endswith("stored")
    tournament = tournament_named(bots, request.name)
    assert tournament is not None
    play_compare(bots, tournament.id, tmp_path / "cache")
    kept = kept_reading(bots, tournament.id)
    assert kept is not None and kept[1] == compares.LIMIT
    assert compares.kept_state(kept[2]).played == 8
    last = Reply.parse(recorder.replies[-1][1])
    assert last is not None and last.ended and last.status == compares.LIMIT


def test_a_reading_that_ended_the_test_is_the_verdict_whatever_finished_after(
    bots: Store,
) -> None:
    """A match stored just after the test decided (it finished before it saw the decision)
    does not make the store's loop or the page read the test again: the kept decision is
    the verdict every follower shows, as the replies showed it."""
    request = _request()
    tournament_id, _ = open_compare(bots, request)
    figures = _reading(3, "H1 accepted")["state"]
    assert keep_reading(bots, tournament_id, 3, "H1 accepted", json.dumps(figures))
    with bots.write() as session:  # four matches done: one more than the reading's
        ids = session.scalars(
            select(Match.id).where(Match.tournament_id == tournament_id).limit(4)
        ).all()
        session.execute(update(Match).where(Match.id.in_(ids)).values(status="done"))
    state = compares._await_kept(bots, tournament_id, 0.0, 0.01)
    assert state is not None and state.status == "H1 accepted" and state.played == 6
    view = compare_view(bots, request.name)
    assert (view.verdict, view.games, view.llr) == ("passed", 6, 1.0)
