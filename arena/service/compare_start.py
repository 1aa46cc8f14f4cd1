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
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from arena.compete.names import fit_name
from arena.service.broker import (
    BROKER_ERRORS,
    make_sender,
    read_replies,
    send_compare_start,
)

__all__ = [
    "BOUNDS",
    "CLOCK_SLACK_SECONDS",
    "REFUSED",
    "REPLIES_SECONDS",
    "REPLIES_SENT_SECONDS",
    "STARTED_SECONDS",
    "START_MAX_AGE_SECONDS",
    "CompareRequest",
    "Reply",
    "compare_name",
    "drop_replies",
    "follow_replies",
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
                if name == "token" and not _is_token(value):  # (it names a reply queue)
                    raise ValueError(f"a compare's start: token is {value!r:.80}")
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


def _is_token(text: str) -> bool:
    """Whether ``text`` is a token :meth:`CompareRequest.make` makes (32 hex digits)."""
    return len(text) == 32 and all(c in "0123456789abcdef" for c in text)


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


# --- the workers' replies -------------------------------------------------------------------

#: How long after asking ``arena compare --remote`` waits for a worker to say it stored the
#: compare (a reply ``stored``) before it loads the store and opens the compare itself (no
#: worker is alive, or all are busy: the compare would wait for one anyway).
STARTED_SECONDS = 2.0
#: How long after asking the command follows its compare by the workers' replies alone
#: (:func:`follow_replies`): a clear pair's verdict comes within it, and the command never
#: loads the store, a second of CPU on the cores its matches are played on. After it, the
#: command follows the compare in the store (sweeps, holding it for the workers, a
#: cancellation from the web), as it does when no reply came.
REPLIES_SECONDS = 10.0
#: How long after they stored a start's compare the workers send its readings: longer than
#: the command follows them (:data:`REPLIES_SECONDS`, from its own clock), for a loaded
#: machine's slow start and two machines' clocks.
REPLIES_SENT_SECONDS = 60.0
#: How often the command looks for replies.
REPLY_POLL_SECONDS = 0.02
#: The verdict of a compare whose games cannot give one (:class:`~arena.errors.VerdictError`),
#: and its kept reading's status (:data:`arena.service.compares.REFUSED`): a reply of it
#: carries no figures, and the store says why.
REFUSED = "refused"


@dataclass(frozen=True, slots=True)
class Reply:
    """What a worker said of a compare's start, on the broker
    (:func:`arena.service.broker.send_reply`).

    Attributes:
        kind: ``stored`` (a worker stored the compare and sent its first batches),
            ``refused`` (a worker refused to store it: the command opens it itself, for its
            own sentence), or ``reading`` (a stop check kept a reading of its test).
        done: a reading's done matches.
        status: a reading's status (the kept one: ``continue``, ``H0 accepted``,
            ``H1 accepted``, ``limit``, ``refused``).
        played: a reading's games in complete deal groups.
        reading: a reading's figures (:class:`arena.compete.sprt.Reading`'s fields).
    """

    kind: str
    done: int = 0
    status: str = "continue"
    played: int = 0
    reading: Mapping[str, Any] | None = None

    @property
    def ended(self) -> bool:
        """Whether the reading ends the compare (its test decided or refused, or its game
        limit reached)."""
        return self.kind == "reading" and self.status != "continue"

    @classmethod
    def parse(cls, message: Mapping[str, Any]) -> Reply | None:
        """The reply a message carries, or None (not one). A reading that ends the compare
        but whose figures are missing (a refused test's: the games cannot give a verdict)
        or not figures is a reply with none: the command follows the compare in the store
        for what to say."""
        kind = message.get("kind")
        if kind in ("stored", "refused"):
            return cls(kind)
        done, status = message.get("done"), message.get("status")
        if kind != "reading" or not isinstance(done, int) or not isinstance(status, str):
            return None
        state = message.get("state")
        played = state.get("played") if isinstance(state, Mapping) else None
        reading = state.get("reading") if isinstance(state, Mapping) else None
        if isinstance(played, int) and _is_reading(reading):
            return cls("reading", done, status, played, reading)
        return None if status == "continue" else cls("reading", done, status)


def _is_reading(reading: Any) -> bool:
    """Whether ``reading`` holds a reading's figures (:data:`READING_NUMBERS`)."""
    if not isinstance(reading, Mapping) or not isinstance(reading.get("status"), str):
        return False
    for name in READING_NUMBERS:
        value = reading.get(name)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int | float):
            return False
        try:  # (an interval may be open: +inf, as the line shows it; not NaN, nor an
            if math.isnan(float(value)):  # integer past a float's range)
                return False
        except OverflowError:
            return False
    return all(reading.get(name) is not None for name in ("llr", "lower", "upper"))


#: The figures of a reading (:class:`arena.compete.sprt.Reading`'s fields but its statistic,
#: deal groups and status): numbers, or None where a reading has none yet.
READING_NUMBERS = ("llr", "lower", "upper", "fast_llr", "fast_upper", "elo", "low", "high", "los")


def follow_replies(
    request: CompareRequest,
    url: str | None,
    database: str | None,
    *,
    started_seconds: float | None = None,
    seconds: float | None = None,
    poll_seconds: float = REPLY_POLL_SECONDS,
) -> Iterator[Reply]:
    """The workers' replies to ``request``'s start, as they come (the broker ``url``, else
    the deployment's, else the ``database``'s): ``stored``, then each reading over more
    done matches than the last (and one that ends the compare, whatever its done
    matches: the first kept stays). Ends after a reading that ends the compare or a
    refusal, or once no worker said ``stored`` within ``started_seconds`` of the request,
    or ``seconds`` after it, or when the broker cannot be reached: the caller then follows
    the compare in the store (:func:`arena.service.compares.follow_compare`), unless it
    ended. ``started_seconds``, ``seconds``: :data:`STARTED_SECONDS`,
    :data:`REPLIES_SECONDS` by default."""
    started_seconds = STARTED_SECONDS if started_seconds is None else started_seconds
    seconds = REPLIES_SECONDS if seconds is None else seconds
    app = make_sender(url, database)
    stored, done = False, -1
    try:
        with app.connection_for_read() as connection:
            channel = connection.default_channel
            while True:
                for message in read_replies(channel, request.token):
                    reply = Reply.parse(message)
                    if reply is None:
                        continue
                    if reply.kind in ("stored", "reading") and not stored:
                        stored = True
                        yield Reply("stored")
                    if reply.kind == "refused" or reply.ended:
                        yield reply
                        return
                    if reply.kind == "reading" and reply.done > done:
                        done = reply.done
                        yield reply
                now = time.time()
                if now >= request.asked + seconds:
                    return
                if not stored and now >= request.asked + started_seconds:
                    return
                time.sleep(poll_seconds)
    except BROKER_ERRORS:
        return


def drop_replies(request: CompareRequest, url: str | None, database: str | None) -> None:
    """Take whatever replies to ``request`` are left on the broker (a command that followed
    its compare in the store: the workers' readings it did not read)."""
    try:
        with make_sender(url, database).connection_for_read() as connection:
            read_replies(connection.default_channel, request.token)
    except BROKER_ERRORS:
        pass
