"""A compare's start handed to the workers (arena/service/compare_start.py and
``open_compare``/``start_requested_compare`` in arena/service/compares.py), on both
databases: whichever of the worker and the command opens the request second finds the
first's compare; a name stored for another request, an old start, a refused one and a
worker of other code are each refused or dropped, storing nothing."""

from __future__ import annotations

import itertools
import threading
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import click
import pytest
from sqlalchemy import func, select

from arena.cli.compare import compare_command
from arena.compete.sprt import make_test
from arena.engine.rules import PRESETS
from arena.service import compares
from arena.service.compare_start import (
    BOUNDS,
    START_MAX_AGE_SECONDS,
    CompareRequest,
    compare_name,
)
from arena.service.compares import COMPARE_AHEAD, open_compare, start_requested_compare
from arena.store.compares import void_reason
from arena.store.db import Store, connect
from arena.store.matches import tournament_named
from arena.store.models import Tournament
from arena.store.queue import tournament_progress
from tests.paths import REFERENCE_BOTS, ZOO
from tests.service.conftest import Recorder

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
    second = CompareRequest.from_payload(first.payload() | {"token": "another"})
    open_compare(bots, first)
    with pytest.raises(ValueError, match="exists already"):
        open_compare(bots, second)
    said = start_requested_compare(bots, second.payload(), now=time.time())
    assert said.startswith(f"compare {first.name!r} refused: ") and "exists already" in said
    assert _tournaments(bots) == 1 and recorder.sent == []


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
