"""What-if branches played by a real Celery worker (``arena worker``, bots in the real
sandbox): a game played by the workers, then a branch of it sent as the web sends one, and
one whose task never left (the broker was down), which the sweep sends; both played, their
records verify.

On a deployment's parts (PostgreSQL + Redis) only: creating a branch locks its requester's
row on PostgreSQL alone (arena.store.branches.add_branch), and tests/service/test_branches.py
runs on SQLite; the embedded default's sweep of a task that never left is
tests/workers/test_tasks.py's upload test."""

from __future__ import annotations

import time

from sqlalchemy import select

from arena.engine.records import verify_record
from arena.service.accounts import Account
from arena.store.models import Bot, BotVersion
from tests.workers.test_tasks import (  # noqa: F401  (the fixture)
    Service,
    _create,
    on_deployment,
    service,
)


def _waiting(running: Service, branch_id: int) -> bool:
    from arena.service.branches import branch_view

    view = branch_view(running.reader(), branch_id)
    return view is not None and view.waiting


@on_deployment
def test_a_branch_is_played_on_a_worker(service: Service) -> None:  # noqa: F811
    from arena.service.branches import branch_view, create_branch, mark_branches_sent
    from arena.service.broker import make_app, send_branches

    _create(service, "spring", "random,greedy", games=1)
    service.worker("--concurrency", "2", steady=True)
    service.play("spring")
    store = service.store()
    try:
        root = Account(store.add_user("root").id, "root", "admin", 0)  # the bots are arena's
        with store.read() as session:
            rows = session.execute(select(Bot.name, BotVersion.id).join(Bot)).all()
        versions = {str(name): int(vid) for name, vid in rows}
        seats = [versions["counter"], versions["random"]]
        sent = create_branch(store, root, 1, 0, 1, 2, seats, 3)
        lost = create_branch(store, root, 1, 0, 1, 0, seats, 1)
        send_branches(make_app(service.reachable_broker, None, service.database), [sent])
        mark_branches_sent(store, [sent])  # "lost" is never sent: the sweep must find it
        deadline = time.monotonic() + 120
        while _waiting(service, sent) or _waiting(service, lost):
            assert time.monotonic() < deadline, service.logs()
            time.sleep(0.5)
        played, swept = branch_view(store, sent), branch_view(store, lost)
        assert played is not None and played.status == "done", (played, service.logs())
        assert swept is not None and swept.status == "done", (swept, service.logs())
        assert len(played.records) == 3 and len(swept.records) == 1
        for record in (*played.records, *swept.records):
            assert verify_record(record) == []
            assert record["seats"] == ["arena/counter@v1", "arena/random@v1"]
        assert len(played.repetitions) == 3 and len(played.summary) == 2
    finally:
        store.close()
