"""The workers' lanes and a tournament's place in the queue (docs/workers.md, "Lanes").

Work of different kinds waits in different lanes, each with workers that other lanes'
work cannot take: upload checks, interactive work (a compare's matches, a branch) and
tournaments' matches. Within the matches lane, tournaments are played in the order they
were first sent to the workers (``tournaments.queued``): a worker's task is a token, and
:func:`arena.store.queue.claim_match` picks the oldest-sent tournament's next match, so the
order depends neither on the broker's order nor on tasks sent again. A competition's ladder
goes first (:data:`FIRST_FORMATS`): it never has more than its bound in flight, a share of
the workers (arena.service.clock), so it cannot take every slot from a tournament, and no
tournament sent before it can starve it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import and_, func, or_, select

from arena.store.db import Store
from arena.store.models import Match, Tournament

__all__ = [
    "FIRST_FORMATS",
    "INTERACTIVE_FORMATS",
    "LANES",
    "QueuePlace",
    "claim_order",
    "in_lane",
    "lane_of",
    "match_lanes",
    "queue_place",
]

#: The lanes of matches: a tournament's are played in ``matches``, a compare's (a
#: regression test someone waits for) in ``interactive``.
LANES = ("matches", "interactive")
#: The tournament formats whose matches are interactive work.
INTERACTIVE_FORMATS = ("compare",)
#: The formats whose matches are claimed before any other tournament's in their lane: a
#: competition's ladder, which bounds its own matches in flight (arena.service.clock).
FIRST_FORMATS = ("ladder",)


def claim_order() -> tuple[Any, ...]:
    """The order a lane's claimable matches are taken in: the formats that go first
    (:data:`FIRST_FORMATS`), then the oldest-sent tournament's (``queued``, its id; never
    sent last), each tournament's matches by id."""
    return (
        ~Tournament.format.in_(FIRST_FORMATS),
        Tournament.queued.is_(None),
        Tournament.queued,
        Tournament.id,
        Match.id,
    )


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
        ahead: tournaments sent before it (in its lane) with matches not yet taken: a
            worker takes theirs before its own.
    """

    lane: str
    sent: bool
    waiting: int
    running: int
    ahead: int


def queue_place(store: Store, tournament_id: int) -> QueuePlace | None:
    """The tournament's place in its lane's queue; None if it is finished, cancelled, or
    not stored."""
    with store.read() as session:
        row = session.execute(
            select(Tournament.format, Tournament.status, Tournament.queued).where(
                Tournament.id == tournament_id
            )
        ).first()
        if row is None or row[1] in ("done", "cancelled"):
            return None
        format, _, queued = row
        counts = dict(
            session.execute(
                select(Match.status, func.count())
                .where(Match.tournament_id == tournament_id)
                .group_by(Match.status)
            ).all()
        )
        ahead = 0
        if queued is not None:
            earlier = or_(
                Tournament.queued < queued,
                and_(Tournament.queued == queued, Tournament.id < tournament_id),
            )
            if format in FIRST_FORMATS:
                earlier = and_(earlier, Tournament.format.in_(FIRST_FORMATS))
            else:
                earlier = or_(earlier, Tournament.format.in_(FIRST_FORMATS))
            ahead = int(
                session.scalar(
                    select(func.count(func.distinct(Match.tournament_id)))
                    .join(Tournament, Tournament.id == Match.tournament_id)
                    .where(
                        Match.status == "pending",
                        Tournament.status.in_(("pending", "running")),
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
