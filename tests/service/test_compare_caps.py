"""An account's compares are capped where every compare is created (create_compare, used by
the web, the API and the command line): compares unfinished at once, and their matches
waiting; each refusal is a sentence. The operator's compares (no owner) are not counted.
Nothing is played: cheap, on SQLite."""

from __future__ import annotations

import pytest

from arena.compete.sprt import SPRT
from arena.engine.rules import PRESETS
from arena.service import compares
from arena.service.accounts import create_account, password_hasher
from arena.service.compare_views import CompareRequest, start_compare
from arena.service.compares import create_compare
from arena.service.tournaments import cancel_tournament
from arena.store.compares import CompareLoad, compare_load
from arena.store.db import Store
from tests.paths import REFERENCE_BOTS, ZOO
from tests.service.conftest import Recorder

HASHER = password_hasher(cheap=True)
PASSWORD = "correct horse battery staple"


def test_an_account_is_capped_in_compares_at_once_and_in_queued_matches(
    store: Store, recorder: Recorder, monkeypatch: pytest.MonkeyPatch
) -> None:
    ada = create_account(store, "ada", PASSWORD, hasher=HASHER)
    store.add_bot_version("ada", "greedy", (REFERENCE_BOTS / "greedy.py").read_text(), {})
    store.add_bot_version("bob", "first", (ZOO / "first.py").read_text(), {})
    monkeypatch.setattr(compares, "MAX_COMPARES_AT_ONCE", 2)
    monkeypatch.setattr(compares, "MAX_QUEUED_COMPARE_MATCHES", 40)
    # 32 games in batches of 2 deal groups: 16 matches each (one a seating of a batch)
    wanted = CompareRequest(new="ada/greedy", old="bob/first", rules="draw", max_games=32, batch=2)
    first = start_compare(store, ada, wanted)
    start_compare(store, ada, wanted)
    with pytest.raises(ValueError, match="you have 2 compares running, the most an account"):
        start_compare(store, ada, wanted)
    # the operator's (arena compare --remote) are not the account's
    create_compare(
        store, new="ada/greedy", old="bob/first", rules=PRESETS["draw"], players=2,
        test=SPRT(0.0, 10.0), max_games=32, batch=2, seed=1,
    )  # fmt: skip
    cancel_tournament(store, ada, first.name)  # a place again; its matches are void
    big = CompareRequest(new="ada/greedy", old="bob/first", rules="draw", max_games=66, batch=1)
    with pytest.raises(ValueError, match=r"this compare's 66 matches and the 16 of your") as exc:
        start_compare(store, ada, big)
    assert "would pass the 40 an account may have queued" in str(exc.value)
    start_compare(store, ada, wanted)  # 16 + 16 of 40


def test_compares_started_at_the_same_moment_are_counted_again_once_stored(
    store: Store, recorder: Recorder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two requests at once each pass the check before either is stored: the one that finds
    the account past a cap once stored is cancelled, and nothing of it is sent."""
    ada = create_account(store, "ada", PASSWORD, hasher=HASHER)
    store.add_bot_version("ada", "greedy", (REFERENCE_BOTS / "greedy.py").read_text(), {})
    store.add_bot_version("bob", "first", (ZOO / "first.py").read_text(), {})
    monkeypatch.setattr(compares, "MAX_COMPARES_AT_ONCE", 1)
    wanted = CompareRequest(new="ada/greedy", old="bob/first", rules="draw", max_games=32, batch=2)
    start_compare(store, ada, wanted)
    sent = len(recorder.sent)
    monkeypatch.setattr(compares, "_check_caps", lambda *args: None)  # checked "before"
    with pytest.raises(ValueError, match="started at the same moment took you past") as exc:
        start_compare(store, ada, wanted)
    assert "this one is cancelled" in str(exc.value) and len(recorder.sent) == sent
    assert compare_load(store, ada.id, compares.COMPARE_FORMAT) == CompareLoad(1, 16)
