"""Migration 0018 (runtimes): every bot version and upload stored before it runs under
``python``; versions and uploads keep the runtime they are stored with. On SQLite and
PostgreSQL (the ``url`` and ``store`` fixtures)."""

from __future__ import annotations

import pytest
from sqlalchemy import text

from arena.store.db import Store, connect, upgrade
from arena.store.matches import bot_sources
from arena.store.uploads import upload_with_version
from tests.uploads import store_upload

# SQL can differ here (the store's SQL and a migration): on SQLite and PostgreSQL.
pytestmark = pytest.mark.backends("sqlite", "postgresql")


@pytest.mark.empty_database
def test_the_migration_gives_what_was_stored_before_the_python_runtime(url: str) -> None:
    upgrade(url, "0017")
    store = connect(url)
    try:
        with store.write() as session:
            user = session.execute(
                text(
                    "INSERT INTO users (name, name_key, created) "
                    "VALUES ('ada', 'ada', CURRENT_TIMESTAMP) RETURNING id"
                )
            ).scalar_one()
            bot = session.execute(
                text(
                    "INSERT INTO bots (name, owner_id, created) "
                    "VALUES ('b', :u, CURRENT_TIMESTAMP) RETURNING id"
                ),
                {"u": user},
            ).scalar_one()
            version = session.execute(
                text(
                    "INSERT INTO bot_versions (bot_id, version, source, sha256, report, "
                    "created) VALUES (:b, 1, '# bot', :h, '{}', CURRENT_TIMESTAMP) RETURNING id"
                ),
                {"b": bot, "h": "a" * 64},
            ).scalar_one()
            upload = session.execute(
                text(
                    "INSERT INTO uploads (owner_id, bot_name, filename, source, sha256, "
                    "status, created) VALUES (:u, 'b', 'b.py', '# bot', :h, 'pending', "
                    "CURRENT_TIMESTAMP) RETURNING id"
                ),
                {"u": user, "h": "a" * 64},
            ).scalar_one()
    finally:
        store.close()
    upgrade(url)
    store = connect(url)
    try:
        assert bot_sources(store, [version]) == [(version, "a" * 64, "# bot", "python")]
        found = upload_with_version(store, upload)
        assert found is not None and found[0].runtime == "python"
        with store.read() as session:
            head = session.scalar(text("SELECT version_num FROM alembic_version"))
        assert head is not None and head >= "0018"  # 0018, and any migration after it
    finally:
        store.close()


def test_a_version_and_an_upload_keep_their_runtime(store: Store) -> None:
    numpy, _ = store.add_bot_version("ada", "mc", "import numpy\n", {}, runtime="python-numpy")
    js, _ = store.add_bot_version("ada", "first", "function play(o) {}\n", {}, "javascript")
    plain, _ = store.add_bot_version("ada", "plain", "def play(o): ...\n", {})
    runtimes = {
        vid: runtime for vid, _, _, runtime in bot_sources(store, [numpy.id, js.id, plain.id])
    }
    assert runtimes == {numpy.id: "python-numpy", js.id: "javascript", plain.id: "python"}
    again, created = store.add_bot_version("ada", "mc", "import numpy\n", {}, runtime="python")
    assert not created and again.runtime == "python-numpy"  # the same source: the same version
    user = store.add_user("ada").id
    upload = store_upload(store, user, "js", "js.js", "function play(o) {}\n", "javascript")
    found = upload_with_version(store, upload)
    assert found is not None and found[0].runtime == "javascript"
