"""A competition from its creation to its published final on real workers (issue 21's "Done
when"): created and entered through the competitions' service (three stored versions, and
one upload checked in the sandbox by the worker), then nobody presses anything -- the
workers' sweeps and finished matches tick it (arena.service.clock): the ladder plays
sandboxed reference bots under its bound, the deadline passes, the final starts by itself,
plays its rounds and is published.

The deadline is set :data:`WINDOW` seconds ahead, a bound; once every entrant is placed and
rated the test brings it to now (as a store write: the organiser may only extend it), so
that the ladder plays as long as it needs and no longer."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import func, select

from arena.service.accounts import create_account, password_hasher
from arena.service.competitions import (
    NewCompetition,
    create_competition,
    enter_with_version,
)
from arena.service.permissions import OPERATOR
from arena.store.competitions import set_deadline
from arena.store.db import as_utc
from arena.store.models import Competition, CompetitionEntry, Match
from tests.paths import REFERENCE_BOTS
from tests.servers import wait_for
from tests.uploads import enter_upload
from tests.workers.test_tasks import Service, service  # noqa: F401

#: The ladder's longest window: long enough for the upload's check and every entrant's
#: placement on a loaded machine (the test closes it once they are done).
WINDOW = 120.0
#: Entrants by stored version (owner: reference bot); "eve" enters by upload.
STORED = {"ann": "counter", "bob": "greedy", "dan": "random"}


def _state(running: Service, cid: int) -> tuple[Competition, int]:
    """The competition's row and its ladder's matches in flight."""
    with running.reader().read() as session:
        row = session.get(Competition, cid)
        assert row is not None
        flight = session.scalar(
            select(func.count())
            .select_from(Match)
            .where(
                Match.tournament_id == row.ladder_id,
                Match.status.in_(("pending", "running")),
            )
        )
    return row, int(flight or 0)


def _entries(running: Service, cid: int) -> list[CompetitionEntry]:
    with running.reader().read() as session:
        return list(
            session.scalars(select(CompetitionEntry).where(CompetitionEntry.competition_id == cid))
        )


def _placed(running: Service, cid: int) -> bool:
    """Every entrant active, placed (its 4 placement games, marked by the clock: one not
    placed by the deadline would be placed after it) and rated over 4 games or more in the
    standings (what the test checks once the deadline has passed)."""
    entries = _entries(running, cid)
    if len(entries) != 4 or any(
        e.status != "active" or e.first_rated is None or e.placed is None for e in entries
    ):
        return False
    rated = [r for r in _state(running, cid)[0].standings or [] if r.get("rating") is not None]
    return len(rated) == 4 and all(r["games"] >= 4 for r in rated)


@pytest.mark.parametrize("service", ["sqlite+filesystem"], indirect=True)
def test_a_competition_runs_from_creation_to_a_published_final_by_itself(
    service: Service,  # noqa: F811
) -> None:
    service.worker("--concurrency", "2")
    store = service.store()
    try:
        deadline = datetime.now(UTC) + timedelta(seconds=WINDOW)
        new = NewCompetition(
            name="spring", deadline=deadline, games_per_deal=2, final_top=3, final_max_games=48
        )
        cid = create_competition(store, OPERATOR, new)
        with store.write() as session:  # placed after 4 games, not 8: a shorter ladder
            row = session.get(Competition, cid)
            assert row is not None
            row.settings = {**row.settings, "placement_games": 4}
        versions = {}
        for owner, bot in STORED.items():
            source = (REFERENCE_BOTS / f"{bot}.py").read_text()
            versions[owner] = store.add_bot_version(owner, bot, source, {"checked": "test"})[0].id
            enter_with_version(store, OPERATOR, "spring", versions[owner], owner=owner)
        eve = create_account(store, "eve", "correct horse", hasher=password_hasher(cheap=True))
        data = (REFERENCE_BOTS / "fives.py").read_bytes()
        with service.sending():
            enter_upload(store, eve, "spring", "fives.py", data)
    finally:
        store.close()
    most = 0
    while datetime.now(UTC) < deadline:
        row, flight = _state(service, cid)
        most = max(most, flight)
        if _placed(service, cid):  # the deadline comes now
            deadline = datetime.now(UTC)
            store = service.store()
            try:
                set_deadline(store, cid, deadline)
            finally:
                store.close()
            break
        time.sleep(0.2)
    entries = _entries(service, cid)
    assert sorted(e.status for e in entries) == ["active"] * 4, service.logs()
    assert all(e.first_rated is not None for e in entries)  # every entrant placed and rated
    row, _ = _state(service, cid)
    rated = [r for r in row.standings or [] if r.get("rating") is not None]
    assert len(rated) == 4 and all(r["games"] >= 4 for r in rated), row.standings
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
    assert {v for m in final for v in m.seats} == {r["version_id"] for r in table}
    assert late == 0  # no ladder match sent after the deadline
