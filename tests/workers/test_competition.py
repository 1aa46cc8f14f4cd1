"""A competition from its opening to its published final on real workers (issue 21's "Done
when"): ``arena worker`` processes play sandboxed reference bots; nobody presses anything
after the competition is stored -- the workers' sweeps and finished matches tick it
(arena.service.ladder): the ladder plays under its bound, the deadline passes, the final
starts by itself, plays its rounds and is published."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import func, select

from arena.store.db import as_utc
from arena.store.models import Competition, Match
from tests.paths import REFERENCE_BOTS
from tests.servers import wait_for
from tests.service.ladder_fixtures import make_competition
from tests.workers.test_tasks import Service, service  # noqa: F401

#: The ladder's window: long enough for every entrant to be placed and rated.
WINDOW = 45.0
BOTS = {"ann": "counter", "bob": "greedy", "cat": "fives", "dan": "random"}


def _state(running: Service, cid: int) -> tuple[Competition, int]:
    """The competition's row and its ladder's matches in flight."""
    store = running.store()
    try:
        with store.read() as session:
            row = session.get(Competition, cid)
            assert row is not None
            flight = session.scalar(
                select(func.count())
                .select_from(Match)
                .where(
                    Match.tournament_id == row.ladder_id, Match.status.in_(("pending", "running"))
                )
            )
        return row, int(flight or 0)
    finally:
        store.close()


@pytest.mark.parametrize("service", ["sqlite+filesystem"], indirect=True)
def test_a_competition_runs_from_its_ladder_to_a_published_final_by_itself(
    service: Service,  # noqa: F811
) -> None:
    opens = datetime.now(UTC)
    deadline = opens + timedelta(seconds=WINDOW)
    store = service.store()
    try:
        cid, versions = make_competition(
            store, "spring", list(BOTS), opens=opens, deadline=deadline,
            sources={o: (REFERENCE_BOTS / f"{b}.py").read_text() for o, b in BOTS.items()},
            settings={"games_per_deal": 2, "placement_games": 4, "move_seconds": 1.0},
            final_top=3, final_max_games=48,
        )  # fmt: skip
    finally:
        store.close()
    service.worker("--concurrency", "2")
    most = 0
    while datetime.now(UTC) < deadline:
        row, flight = _state(service, cid)
        most = max(most, flight)
        time.sleep(0.2)
    row, _ = _state(service, cid)
    rated = {r["version_id"]: r for r in row.standings or [] if r.get("rating") is not None}
    assert set(rated) == set(versions.values()), service.logs()
    assert all(r["games"] >= 4 for r in rated.values())  # every entrant placed and rated
    # one worker of 2 processes, nothing else waiting: the bound 2, rounded up to whole deals
    assert most <= 3, f"{most} ladder matches in flight, bound 2 (+1 to whole deals)"

    def published() -> bool:
        return _state(service, cid)[0].status == "done"

    wait_for(published, 90, "the final to be published")
    row, flight = _state(service, cid)
    assert row.closed is not None and as_utc(row.closed) >= deadline
    assert flight == 0
    table = row.final_table or []
    assert len(table) == 3 and table[0]["place"] == 1
    assert {r["version_id"] for r in table} <= set(versions.values())
    assert table[0]["version_id"] != versions["dan"]  # random never wins
    store = service.store()
    try:
        with store.read() as session:
            final = session.scalars(select(Match).where(Match.tournament_id == row.final_id)).all()
            late = session.scalar(
                select(func.count())
                .select_from(Match)
                .where(Match.tournament_id == row.ladder_id, Match.queued > row.closed)
            )
    finally:
        store.close()
    assert final and all(m.status == "done" for m in final)
    assert late == 0  # no ladder match sent after the deadline
