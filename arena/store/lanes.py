"""The workers' lanes, their fair queues, and a tournament's place (docs/workers.md, "Lanes"
and "Fair shares").

Work of different kinds waits in different lanes, each with workers that other lanes'
work cannot take: upload checks, interactive work (a compare's matches, a branch) and
tournaments' matches. A worker's task is a token: :func:`arena.store.queue.claim_match`
takes the lane's next match by :func:`claim_candidates`, so the order depends neither on
the broker's order nor on tasks sent again.

Within a lane, tournaments wait in queues (:func:`queue_of`): each competition's ladder and
each final is a queue of its own; placements (a new upload's tournament) are one queue and
every other tournament another, each played in the order first sent
(``tournaments.queued``). A claim serves the queue with the fewest matches running, and
among those the one served least recently (its last match finished longest ago, or never):
so queues take turns, one claim each, however few the workers, and none waits for more than
one match of each other queue with work waiting.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import and_, bindparam, exists, func, or_, select
from sqlalchemy.orm import Session

from arena.store.db import Store, as_utc
from arena.store.models import Match, Tournament

__all__ = [
    "INTERACTIVE_FORMATS",
    "LANES",
    "OWN_QUEUE_FORMATS",
    "PLAYING",
    "QueuePlace",
    "claim_candidates",
    "in_lane",
    "lane_of",
    "match_lanes",
    "playable",
    "queue_of",
    "queue_place",
]

#: The lanes of matches: a tournament's are played in ``matches``, a compare's (a
#: regression test someone waits for) in ``interactive``.
LANES = ("matches", "interactive")
#: The tournament formats whose matches are interactive work.
INTERACTIVE_FORMATS = ("compare",)
#: The statuses of a tournament whose matches are played (a done or cancelled one's never).
PLAYING = ("pending", "running")
#: The formats each of whose tournaments is a queue of its own in its lane: a competition's
#: ladder and its final, which bound their own matches in flight (arena.service.clock).
OWN_QUEUE_FORMATS = ("ladder", "final")


def queue_of(format: str, tournament_id: int, upload_id: int | None) -> str:
    """The queue a tournament waits in within its lane: ``ladder-ID`` or ``final-ID`` (its
    own), ``placements`` (an upload's placement), or ``tournaments`` (every other)."""
    if format in OWN_QUEUE_FORMATS:
        return f"{format}-{tournament_id}"
    return "tournaments" if upload_id is None else "placements"


def playable(now: datetime) -> Any:
    """A condition on ``Match`` joined with its ``Tournament``: a claim may take it at
    ``now`` (pending, or running with an expired lease, of a tournament :data:`PLAYING`).
    What a claim takes and what a sweep sends again are this one condition
    (:func:`arena.store.queue.claim_match`, :func:`arena.store.queue.unqueued_matches`): a
    match the sweep counted as lost that no claim could take was sent again every second,
    for ever (a done tournament's pending matches, CI 2026-11-29)."""
    return and_(
        or_(
            Match.status == "pending",
            and_(Match.status == "running", Match.lease_expires < now),
        ),
        Tournament.status.in_(PLAYING),
    )


@dataclass(frozen=True, slots=True)
class _Waiting:
    """A tournament of the lane still playing: its queue, its place in it, its matches
    running (leased), when its last match finished, whether it has one to claim."""

    tournament_id: int
    queue: str
    place: tuple[bool, datetime | None, int]
    running: int
    last: datetime | None
    ready: bool


def claim_candidates(session: Session, lane: str, now: datetime) -> list[int]:
    """The lane's tournaments with a match to claim at ``now``, in the order a claim tries
    them: the queues (:func:`queue_of`) with the fewest matches running first, among those
    the one served least recently (its latest finished match the oldest; never served
    first), then ladders and finals before the rest; within a queue, the order first sent
    (never sent last), then the tournament's id.

    Raises:
        ValueError: no such lane.
    """
    ready = exists().where(Match.tournament_id == Tournament.id, playable(now))
    running = (
        select(func.count())
        .where(
            Match.tournament_id == Tournament.id,
            Match.status == "running",
            Match.lease_expires >= now,
        )
        .scalar_subquery()
    )
    last = (
        select(func.max(Match.finished))
        .where(Match.tournament_id == Tournament.id, Match.status == "done")
        .scalar_subquery()
    )
    rows = session.execute(
        select(
            Tournament.id, Tournament.format, Tournament.upload_id, Tournament.queued,
            running, last, ready,
        ).where(Tournament.status.in_(PLAYING), in_lane(lane))
    ).all()  # fmt: skip
    waiting = [
        _Waiting(
            int(tid), queue_of(format, int(tid), upload), (queued is None, queued, int(tid)),
            int(count or 0), None if done is None else as_utc(done), bool(has),
        )
        for tid, format, upload, queued, count, done, has in rows
    ]  # fmt: skip
    # A shared queue's last service outlives its tournaments: the latest finish of one done.
    shared = _last_finished(session, lane)
    queues: dict[str, list[_Waiting]] = {}
    for w in waiting:
        queues.setdefault(w.queue, []).append(w)
    order = []
    for queue, members in queues.items():
        if not any(w.ready for w in members):
            continue
        finishes = [w.last for w in members if w.last is not None]
        if queue in shared:
            finishes.append(shared[queue])
        served = max(finishes) if finishes else None
        own = queue not in ("tournaments", "placements")
        key = (
            sum(w.running for w in members),
            served is not None,
            served or now,
            not own,
            min(w.place for w in members if w.ready),
        )
        order.append((key, sorted((w.place, w.tournament_id) for w in members if w.ready)))
    order.sort(key=lambda item: item[0])
    return [tid for _, members in order for _, tid in members]


def _last_finished(session: Session, lane: str) -> dict[str, datetime]:
    """When the shared queues' (``tournaments``, ``placements``) last finished tournament
    of the lane finished."""
    is_placement = Tournament.upload_id.is_not(None)
    rows = session.execute(
        select(is_placement, func.max(Tournament.finished))
        .where(
            Tournament.status == "done",
            ~Tournament.format.in_(OWN_QUEUE_FORMATS),
            in_lane(lane),
        )
        .group_by(is_placement)
    ).all()
    return {
        ("placements" if placement else "tournaments"): as_utc(when)
        for placement, when in rows
        if when is not None
    }


def lane_of(format: str) -> str:
    """The lane of a tournament's matches, by its format."""
    return "interactive" if format in INTERACTIVE_FORMATS else "matches"


def in_lane(lane: str) -> Any:
    """A condition on ``Tournament``: its matches are in ``lane``.

    Raises:
        ValueError: no such lane.
    """
    if lane not in LANES:
        raise ValueError(f"no lane {lane!r} (lanes: {', '.join(LANES)})")
    interactive = Tournament.format.in_(INTERACTIVE_FORMATS)
    return interactive if lane == "interactive" else ~interactive


def match_lanes(store: Store, match_ids: Sequence[int]) -> dict[str, list[int]]:
    """The matches by lane (lanes with none left out; a match not stored counts as the
    ``matches`` lane's), each lane's in the order given."""
    with store.read() as session:
        formats = dict(
            session.execute(
                select(Match.id, Tournament.format)
                .join(Tournament, Tournament.id == Match.tournament_id)
                .where(Match.id.in_(set(match_ids)))
            ).all()
        )
    lanes: dict[str, list[int]] = {}
    for match_id in match_ids:
        lanes.setdefault(lane_of(formats.get(match_id, "")), []).append(match_id)
    return lanes


@dataclass(frozen=True, slots=True)
class QueuePlace:
    """Where a tournament stands in its lane's queue.

    Attributes:
        lane: its lane (:data:`LANES`).
        sent: whether its matches were sent to the workers (a tournament created but not
            run is in no queue).
        waiting: its matches not yet taken by a worker.
        running: its matches being played.
        ahead: tournaments sent before it in its queue (:func:`queue_of`) with matches
            not yet taken: a worker takes theirs before its own (a ladder or a final has
            none; the other queues take turns with it, docs/workers.md "Fair shares").
    """

    lane: str
    sent: bool
    waiting: int
    running: int
    ahead: int


# A tournament's queue: its format, status, when it was sent, its upload (built once: a
# tournament's page reads it).
_QUEUED = select(
    Tournament.format, Tournament.status, Tournament.queued, Tournament.upload_id
).where(Tournament.id == bindparam("tournament"))


def queue_place(store: Store, tournament_id: int) -> QueuePlace | None:
    """The tournament's place in its lane's queue; None if it is finished, cancelled, or
    not stored."""
    with store.read() as session:
        row = session.execute(_QUEUED, {"tournament": tournament_id}).first()
        if row is None or row[1] in ("done", "cancelled"):
            return None
        format, _, queued, upload_id = row
        counts = dict(
            session.execute(
                select(Match.status, func.count())
                .where(Match.tournament_id == tournament_id)
                .group_by(Match.status)
            ).all()
        )
        ahead = 0
        if queued is not None and format not in OWN_QUEUE_FORMATS:
            earlier = and_(
                or_(
                    Tournament.queued < queued,
                    and_(Tournament.queued == queued, Tournament.id < tournament_id),
                ),
                ~Tournament.format.in_(OWN_QUEUE_FORMATS),
                Tournament.upload_id.is_(None)
                if upload_id is None
                else Tournament.upload_id.is_not(None),
            )
            ahead = int(
                session.scalar(
                    select(func.count(func.distinct(Match.tournament_id)))
                    .join(Tournament, Tournament.id == Match.tournament_id)
                    .where(
                        Match.status == "pending",
                        Tournament.status.in_(PLAYING),
                        in_lane(lane_of(format)),
                        earlier,
                    )
                )
                or 0
            )
    return QueuePlace(
        lane=lane_of(format),
        sent=queued is not None,
        waiting=int(counts.get("pending", 0)),
        running=int(counts.get("running", 0)),
        ahead=ahead,
    )
