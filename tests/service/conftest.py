"""What the service's tests share: a broker that keeps what the service sends."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import cast

import pytest
from celery import Celery

from arena.service import broker


@dataclass
class Recorder:
    """A broker client that keeps the matches it was asked to send: a list a connection."""

    sent: list[list[int]] = field(default_factory=list)

    @contextlib.contextmanager
    def producer_or_acquire(self) -> Iterator[None]:
        self.sent.append([])
        yield None

    def send_task(self, name: str, args: tuple[int], queue: str, producer: None = None) -> None:
        assert name == broker.PLAY_MATCH
        self.sent[-1].append(args[0])


@pytest.fixture
def recorder() -> Iterator[Recorder]:
    """The service's broker while the test runs: it keeps what was sent."""
    kept = Recorder()
    with broker.using(cast(Celery, kept)):
        yield kept
