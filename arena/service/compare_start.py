"""A compare's start handed to the workers: ``arena compare --remote`` sends what it asks
for (a :class:`CompareRequest`) as an ``arena.start_compare`` task before it loads the
store, and a worker, whose store is loaded and warm, stores the compare and sends its
first batches while the command is still loading
(:func:`arena.service.compares.start_requested_compare`). The command then opens the same
compare (:func:`arena.service.compares.open_compare`): the one the worker stored, found by
its name and the request's token, or, if no worker has stored it yet (none is alive, or
all are busy), its own. Either way one compare is stored and followed.

Light on purpose: this module and what it loads (Celery and kombu, SQLAlchemy's URL
parsing) are all the command loads before it sends; the store, the service and the
statistics load after, while the workers play (a second of a 2-core machine's time,
during which they would otherwise wait).
"""

from __future__ import annotations

import dataclasses
import math
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from arena.compete.names import fit_name
from arena.service.broker import BROKER_ERRORS, make_sender, send_compare_start

__all__ = [
    "BOUNDS",
    "CLOCK_SLACK_SECONDS",
    "START_MAX_AGE_SECONDS",
    "CompareRequest",
    "compare_name",
    "send_start",
]

#: A start that waited this long for a worker is dropped by it: its command has stored the
#: compare itself by then (or gave up), and a start found later must not store one that
#: nobody follows.
START_MAX_AGE_SECONDS = 60.0


def compare_name(new: str, old: str, rules: str, seed: int, now: datetime | None = None) -> str:
    """The name of a compare's tournament: from its bots, rule set and seed, and the time
    (to the second) it was asked for."""
    stamp = (now or datetime.now(UTC)).strftime("%Y%m%dT%H%M%S")
    return fit_name(f"compare-{new}-v-{old}-{rules}-seed{seed}-{stamp}")


#: The bounds of a start's numbers: the command's own options' (arena/cli/common.py, whose
#: test holds them equal), checked again by the worker that takes it (a broker message
#: is not trusted to hold what the command would accept).
BOUNDS: dict[str, tuple[float, float]] = {
    "players": (2, 5),
    "max_games": (1, 1_000_000),
    "batch": (1, 1000),
    "seed": (0, 2**63 - 1),
    "move_seconds": (0, 60),  # (above 0)
    "memory_mb": (64, 65536),
}


@dataclass(frozen=True, slots=True)
class CompareRequest:
    """A compare of two stored bots, as ``arena compare --remote`` asks for it: what
    :func:`arena.service.compares.create_compare` takes, by value (a preset rule set by its
    name and version: a worker whose preset of that name differs refuses it), with a token
    that tells this request's compare from another of the same name.

    Attributes:
        token: random; stored with the compare (its settings' ``request``).
        asked: when it was asked for (seconds since the epoch): its tournament's name says
            so (:attr:`name`), and a start older than :data:`START_MAX_AGE_SECONDS` is
            dropped.
    """

    token: str
    new: str
    old: str
    rules: str
    rules_version: str
    players: int
    teams: bool
    statistic: str
    elo0: float
    elo1: float
    alpha: float
    beta: float
    max_games: int
    batch: int
    seed: int
    move_seconds: float
    memory_mb: int
    allow_same_source: bool
    asked: float

    @property
    def name(self) -> str:
        """The compare's tournament name (:func:`compare_name`, at the time it was asked)."""
        when = datetime.fromtimestamp(self.asked, UTC)
        return compare_name(self.new, self.old, self.rules, self.seed, when)

    @classmethod
    def make(cls, **fields: Any) -> CompareRequest:
        """A request with a new token, asked now."""
        return cls(token=uuid.uuid4().hex, asked=time.time(), **fields)

    def payload(self) -> dict[str, Any]:
        """The request as the task's JSON argument."""
        return dataclasses.asdict(self)

    @classmethod
    def from_payload(cls, payload: Mapping[str, Any], now: float | None = None) -> CompareRequest:
        """The request a task carries, checked as the command checks its options (their
        types and bounds, :data:`BOUNDS`; finite test parameters; asked no later than
        ``now``, give or take a few seconds of clocks).

        Raises:
            ValueError: a field missing, unknown, of the wrong type or out of bounds.
        """
        fields = {field.name: field for field in dataclasses.fields(cls)}
        if not isinstance(payload, Mapping) or set(payload) != set(fields):
            given = set(payload) if isinstance(payload, Mapping) else set()
            odd = sorted(set(fields) - given) + sorted(str(key) for key in given - set(fields))
            raise ValueError(f"a compare's start: not one ({', '.join(odd) or type(payload)})")
        values: dict[str, Any] = {}
        for name, value in payload.items():
            kind = fields[name].type
            whole = isinstance(value, int) and not isinstance(value, bool)
            number = whole or isinstance(value, float)
            if (kind == "bool" and isinstance(value, bool)) or (kind == "int" and whole):
                values[name] = value
            elif kind == "float" and number and math.isfinite(value):
                values[name] = float(value)
            elif kind == "str" and isinstance(value, str) and 0 < len(value) <= 200:
                values[name] = value
            else:
                raise ValueError(f"a compare's start: {name} is {value!r:.80}")
            low, high = BOUNDS.get(name, (-math.inf, math.inf))
            if kind in ("int", "float") and not low <= values[name] <= high:
                raise ValueError(f"a compare's start: {name} {value!r} is not {low}-{high}")
        if values["move_seconds"] <= 0:
            raise ValueError("a compare's start: move_seconds must be above 0")
        if values["asked"] > (time.time() if now is None else now) + CLOCK_SLACK_SECONDS:
            raise ValueError("a compare's start: asked in the future")
        return cls(**values)


#: How far ahead of a worker's clock a start's time of asking may be (two machines' clocks).
CLOCK_SLACK_SECONDS = 5.0


def send_start(request: CompareRequest, url: str | None, database: str | None) -> bool:
    """Send ``request`` to the workers (the broker ``url``, else the deployment's, else the
    ``database``'s serverless one); return whether the broker took it (if not, the command
    stores the compare itself, as it would if no worker took it)."""
    try:
        send_compare_start(make_sender(url, database), request.payload(), START_MAX_AGE_SECONDS)
    except BROKER_ERRORS:
        return False
    except ValueError:  # a broker URL Celery cannot use: the command's own sends will say so
        return False
    return True
