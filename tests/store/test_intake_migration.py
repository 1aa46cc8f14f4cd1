"""Migration 0019 (the one intake) on SQLite and PostgreSQL: uploads stored before it get
the purpose the workers probed for until now (a competition entry's upload is for its
competition, an assignment submission's for its assignment, any other for a placement),
and a placement tournament its upload, found once by the naming rule it replaces."""

from __future__ import annotations

import pytest
from sqlalchemy import text
from sqlalchemy.orm import Session

from arena.store.db import connect, upgrade
from arena.store.uploads import placement_of_upload, upload_with_version
from tests.rawsql import insert_row

T = "2026-11-01 12:00:00"


def _tournament(session: Session, name: str, rule_set: int) -> int:
    return insert_row(
        session, "tournaments", name=name, format="gauntlet", rule_set_id=rule_set, players=2,
        teams=False, games_per_match=2, seed=1, status="pending", created=T,
    )  # fmt: skip


def _upload(session: Session, user: int, bot: str, status: str, version: int | None) -> int:
    return insert_row(
        session, "uploads", owner_id=user, bot_name=bot, filename=f"{bot}.py",
        source=f"# {bot}", sha256=f"{bot:0>64}", status=status, bot_version_id=version,
        created=T,
    )  # fmt: skip


def _at_0018(session: Session) -> dict[str, int]:
    """Ada's uploads of 0018: ``plain`` accepted as greedy v1 (its placement tournament
    named by the rule, beside a tournament another rule named alike), ``entry`` for
    competition ``cup``, ``work`` for assignment ``hw1``, ``pending`` not checked."""
    ada = insert_row(session, "users", name="ada", name_key="ada", created=T)
    rules = insert_row(session, "rule_sets", name="draw", version="v", params="{}",
                    is_preset=True)  # fmt: skip
    bot = insert_row(session, "bots", name="greedy", owner_id=ada, created=T)
    v1 = insert_row(session, "bot_versions", bot_id=bot, version=1, source="# greedy",
                 sha256="a" * 64, report="{}", created=T)  # fmt: skip
    made = {
        "plain": _upload(session, ada, "greedy", "accepted", v1),
        "entry": _upload(session, ada, "entered", "pending", None),
        "work": _upload(session, ada, "homework", "pending", None),
        "pending": _upload(session, ada, "waiting", "pending", None),
    }
    made["placement"] = _tournament(session, "placement-ada-greedy-v1", rules)
    _tournament(session, "placement-ada-greedy-v10", rules)  # another version's name
    ladder = _tournament(session, "cup-ladder", rules)
    made["cup"] = insert_row(
        session, "competitions", name="cup", rule_set_id=rules, players=2, teams=False,
        settings="{}", opens=T, deadline=T, time_zone="UTC", daily_submissions=5,
        sources_public=False, final_top=8, final_confidence=0.95, final_max_games=10,
        seed=1, status="open", ladder_id=ladder, created=T,
    )  # fmt: skip
    insert_row(session, "competition_entries", competition_id=made["cup"], user_id=ada,
            upload_id=made["entry"], status="pending", created=T)  # fmt: skip
    school = insert_row(session, "classes", name="c1", rule_sets='["draw"]', settings="{}",
                     created=T)  # fmt: skip
    made["hw1"] = insert_row(
        session, "assignments", class_id=school, name="hw1", rule_set_id=rules, players=2,
        teams=False, settings="{}", references="[]", grades="[]", opens=T, deadline=T,
        time_zone="UTC", seed=1, created=T,
    )  # fmt: skip
    insert_row(session, "assignment_submissions", assignment_id=made["hw1"], user_id=ada,
            upload_id=made["work"], status="pending", late=False, created=T)  # fmt: skip
    return made


@pytest.mark.backends("sqlite", "postgresql")  # the backfill's SQL, the keys added
@pytest.mark.empty_database
def test_the_migration_gives_each_stored_upload_its_purpose_and_placement(url: str) -> None:
    upgrade(url, "0018")
    store = connect(url)
    try:
        with store.write() as session:
            made = _at_0018(session)
    finally:
        store.close()
    upgrade(url)
    store = connect(url)
    try:
        purposes = {}
        for name in ("plain", "entry", "work", "pending"):
            found = upload_with_version(store, made[name])
            assert found is not None
            upload = found[0]
            purposes[name] = (upload.purpose, upload.competition_id, upload.assignment_id)
        assert purposes == {
            "plain": ("placement", None, None),
            "entry": ("competition", made["cup"], None),
            "work": ("assignment", None, made["hw1"]),
            "pending": ("placement", None, None),
        }
        placement = placement_of_upload(store, made["plain"])
        assert placement == (made["placement"], "placement-ada-greedy-v1")
        assert placement_of_upload(store, made["pending"]) is None
        with store.read() as session:
            linked = session.scalar(
                text("SELECT COUNT(*) FROM tournaments WHERE upload_id IS NOT NULL")
            )
        assert linked == 1
    finally:
        store.close()
