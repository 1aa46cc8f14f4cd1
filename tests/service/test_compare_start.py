"""A compare's start handed to the workers (arena/service/compare_start.py and
``open_compare``/``start_requested_compare`` in arena/service/compares.py), on both
databases: whichever of the worker and the command opens the request second finds the
first's compare; a name stored for another request, an old start, a refused one and a
worker of other code are each refused or dropped, storing nothing."""

from __future__ import annotations

import itertools
import time
from typing import Any

import pytest
from sqlalchemy import func, select

from arena.engine.rules import PRESETS
from arena.service import compares
from arena.service.compare_start import START_MAX_AGE_SECONDS, CompareRequest
from arena.service.compares import COMPARE_AHEAD, open_compare, start_requested_compare
from arena.store.db import Store
from arena.store.matches import tournament_named
from arena.store.models import Tournament
from tests.paths import REFERENCE_BOTS, ZOO
from tests.service.conftest import Recorder

RULES = PRESETS["draw"]


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
        {"name": None},
    ],
)
def test_a_start_that_is_not_one_is_refused(
    bots: Store, recorder: Recorder, payload: dict[str, Any]
) -> None:
    bad = _request().payload() | payload
    with pytest.raises(ValueError, match="compare's start"):
        CompareRequest.from_payload(bad)
    assert start_requested_compare(bots, bad, now=time.time()).startswith("refused: ")
    assert _tournaments(bots) == 0


def test_a_start_missing_a_field_is_refused() -> None:
    payload = _request().payload()
    del payload["seed"]
    with pytest.raises(ValueError, match=r"compare's start: .*seed"):
        CompareRequest.from_payload(payload)
    assert CompareRequest.from_payload(_request().payload() | {"elo1": 10}).elo1 == 10.0
