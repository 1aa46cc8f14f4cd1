"""What the service's tests share: a broker that keeps what the service sends, and a
compare's matches played in order as workers would."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import pytest
from celery import Celery
from sqlalchemy import select

from arena.service import broker
from arena.service.compares import stop_if_decided
from arena.service.matches import Config, run_match
from arena.store.db import Store
from arena.store.models import Match


@dataclass
class Recorder:
    """A broker client that keeps the matches it was asked to send: a list a connection."""

    sent: list[list[int]] = field(default_factory=list)
    #: The replies to compare starts (:func:`arena.service.broker.send_reply`): their queue
    #: and what they say.
    replies: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    @contextlib.contextmanager
    def producer_or_acquire(self) -> Iterator[Recorder]:
        self.sent.append([])
        yield self

    def send_task(self, name: str, args: tuple[int], queue: str, producer: Any = None) -> None:
        assert name == broker.PLAY_MATCH
        self.sent[-1].append(args[0])

    def publish(self, body: dict[str, Any], *, exchange: str, routing_key: str, **_: Any) -> None:
        assert exchange == ""
        if self.sent and not self.sent[-1]:  # (a reply's connection sent no match)
            self.sent.pop()
        self.replies.append((routing_key, body))


@pytest.fixture
def recorder() -> Iterator[Recorder]:
    """The service's broker while the test runs: it keeps what was sent."""
    kept = Recorder()
    with broker.using(cast(Celery, kept)):
        yield kept


def play_as_worker(store: Store, match_id: int, config: Config) -> str | None:
    """Play a compare's match as a worker's task does: the match, then its stop check (which
    keeps the test's reading for ``arena compare --remote``'s loop); return what the check
    said."""
    assert run_match(store, match_id, config=config, sandboxed=False) == "done"
    return stop_if_decided(store, match_id)


def play_compare(
    store: Store, tournament_id: int, cache: Path, matches: int | None = None
) -> list[str]:
    """Play the compare's pending matches in order (at most ``matches``) as workers would,
    each followed by the stop check; return what each stop check said."""
    said: list[str] = []
    config = Config(bot_cache=cache)
    while matches is None or matches > 0:
        with store.read() as session:
            pending = session.scalar(
                select(Match.id)
                .where(Match.tournament_id == tournament_id, Match.status == "pending")
                .order_by(Match.id)
                .limit(1)
            )
        if pending is None:
            break
        assert run_match(store, pending, config=config, sandboxed=False) == "done"
        decided = stop_if_decided(store, pending)
        if decided is not None:
            said.append(decided)
        matches = None if matches is None else matches - 1
    return said
