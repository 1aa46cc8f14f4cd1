"""Each runtime end to end on real workers (issue 23, deliver 4): a python, a python-numpy
and a javascript bot uploaded as users upload them (arena.service.intake.take_upload),
checked in the sandbox by a worker under their runtimes, stored with them, then played by
the workers in their placements against the reference bots, the stored runtime reaching
each seat's process (the worker's bot file ``<digest>.numpy.py``, ``.js``)."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from arena.match.runtimes import RUNTIMES, runtime_missing
from arena.service.accounts import create_account, password_hasher
from arena.service.intake import take_upload
from arena.service.matches import Config
from arena.service.uploads import upload_view
from arena.store.models import BotVersion, Match, Tournament
from arena.store.uploads import upload_with_version
from tests.paths import REFERENCE_BOTS
from tests.servers import wait_for
from tests.workers.test_tasks import Service, placing  # noqa: F401  (the fixture)

JS_BOT = """const NAME = "js-heavy";
function play(observation) {
  const pips = (m) => m.split(/[-LR]/).slice(0, 2).reduce((a, b) => a + Number(b), 0);
  return observation.legal_moves.reduce((best, m) => (pips(m) > pips(best) ? m : best));
}
"""

#: (file name, source, runtime asked for: None, by the suffix).
UPLOADS: list[tuple[str, bytes, str | None]] = [
    ("plain.py", (REFERENCE_BOTS / "greedy.py").read_bytes(), None),
    ("numpy_greedy.py", (REFERENCE_BOTS / "numpy_greedy.py").read_bytes(), "python-numpy"),
    ("heavy.js", JS_BOT.encode(), None),
]


def _placements_done(running: Service, names: list[str]) -> bool:
    with running.reader().read() as session:
        query = select(Tournament.status).where(Tournament.name.in_(names))
        statuses = session.scalars(query).all()
    return len(statuses) == len(names) and all(s == "done" for s in statuses)


def test_each_runtime_is_uploaded_checked_and_played_on_the_workers(
    placing: Service,  # noqa: F811
) -> None:
    missing = [f"{r.name}: {p}" for r in RUNTIMES.values() if (p := runtime_missing(r))]
    if missing:
        pytest.fail("runtimes unavailable: " + "; ".join(missing), pytrace=False)
    placing.worker("--concurrency", "2", steady=True)
    store = placing.store()
    try:
        eve = create_account(store, "eve", "correct horse", hasher=password_hasher(cheap=True))
        with placing.sending():
            ids = [
                take_upload(store, eve, name, data, runtime=runtime).upload.id
                for name, data, runtime in UPLOADS
            ]

        def checked() -> bool:
            views = [upload_view(store, i) for i in ids]
            return all(v is not None and not v.pending for v in views)

        wait_for(checked, 120, "the three uploads' checks")
        views = [upload_view(store, i) for i in ids]
        assert [(v.status, v.runtime) for v in views if v is not None] == [
            ("accepted", "python"), ("accepted", "python-numpy"), ("accepted", "javascript")
        ], [(v.status, v.message) for v in views if v is not None]  # fmt: skip
        versions = [upload_with_version(store, i) for i in ids]
        version_ids = [found[0].bot_version_id for found in versions if found is not None]
        with store.read() as session:
            stored = session.execute(
                select(BotVersion.id, BotVersion.runtime).where(BotVersion.id.in_(version_ids))
            ).all()
        assert sorted(runtime for _, runtime in stored) == ["javascript", "python", "python-numpy"]
        placements = [v.placement or f"placement-eve-{v.bot}-v1" for v in views if v is not None]
    finally:
        store.close()
    wait_for(lambda: _placements_done(placing, placements), 240, "the placements to be played")
    store = placing.store()
    try:
        with store.read() as session:
            matches = session.scalars(
                select(Match)
                .join(Tournament, Tournament.id == Match.tournament_id)
                .where(Tournament.name.in_(placements))
            ).all()
    finally:
        store.close()
    assert matches and all(m.status == "done" for m in matches)
    games = [game for m in matches for game in (m.result or {}).get("games", [])]
    assert len(games) == sum(m.games for m in matches)
    faults = [game["verdict"] for game in games if game.get("verdict")]
    assert not faults, faults[:3]
    cache = Config().bot_cache  # the workers' bot files: the runtime in each name
    digests = [view.sha256 for view in views if view is not None]
    for digest, suffix in zip(digests, (".py", ".numpy.py", ".js"), strict=True):
        assert (cache / f"{digest}{suffix}").is_file(), sorted(p.name for p in cache.iterdir())
