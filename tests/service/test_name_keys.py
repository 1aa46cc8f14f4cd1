"""Competition, class and bot names unique without regard to case (issue 31; migration
0022's ``name_key``), on SQLite and PostgreSQL: ``D9CUP`` or ``d9Cup`` beside ``d9cup`` is
refused with a sentence naming the one that exists; rows that already collided before the
migration keep working under their exact names."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import select, text
from sqlalchemy.exc import IntegrityError

from arena.errors import NameTaken
from arena.service.classes import ClassError, NewClass, create_class
from arena.service.competitions import CompetitionError, NewCompetition, create_competition
from arena.service.permissions import OPERATOR
from arena.service.uploads import check_bot_name
from arena.store.db import Store, connect, upgrade
from arena.store.models import Bot, Competition, SchoolClass

# The keys are the database's to keep: on both backends.
pytestmark = pytest.mark.backends("sqlite", "postgresql")

DEADLINE = datetime.now(UTC) + timedelta(days=7)


def test_a_competition_name_in_another_case_is_refused(store: Store) -> None:
    create_competition(store, OPERATOR, NewCompetition(name="d9cup", deadline=DEADLINE))
    for other in ("D9CUP", "d9Cup", "\uff24\uff19CUP"):  # full-width letters too (NFKC)
        with pytest.raises(CompetitionError) as refused:
            create_competition(store, OPERATOR, NewCompetition(name=other, deadline=DEADLINE))
        shown = other if other.isascii() else "D9CUP"  # as normalised
        assert str(refused.value) == (
            f"a competition called 'd9cup' exists already ('{shown}' differs from it only "
            "in case): choose another name."
        )
    with pytest.raises(CompetitionError, match=r"^a competition called 'd9cup' exists already:"):
        create_competition(store, OPERATOR, NewCompetition(name="d9cup", deadline=DEADLINE))
    with store.read() as session:
        assert session.scalars(select(Competition.name)).all() == ["d9cup"]


def test_a_class_name_in_another_case_is_refused(store: Store) -> None:
    create_class(store, OPERATOR, NewClass(name="Year9"))
    with pytest.raises(ClassError) as refused:
        create_class(store, OPERATOR, NewClass(name="YEAR9"))
    assert str(refused.value) == (
        "a class called 'Year9' exists already ('YEAR9' differs from it only in case): "
        "choose another name."
    )
    with store.read() as session:
        assert session.scalars(select(SchoolClass.name)).all() == ["Year9"]


def test_a_bot_name_in_another_case_is_refused_for_its_owner_only(store: Store) -> None:
    greedy, _ = store.add_bot_version("ada", "greedy", "# one\n", {})
    with pytest.raises(NameTaken, match="ada's bot called 'greedy' exists already"):
        store.add_bot_version("ada", "Greedy", "# two\n", {})
    again, created = store.add_bot_version("ada", "greedy", "# two\n", {})
    assert (again.bot_id, again.version, created) == (greedy.bot_id, 2, True)
    store.add_bot_version("bob", "Greedy", "# bob's\n", {})  # another owner's: its own name
    with store.read() as session:
        ada = session.scalar(text("SELECT id FROM users WHERE name = 'ada'"))
    with pytest.raises(NameTaken, match="your bot called 'greedy' exists already"):
        check_bot_name(store, int(ada), "GREEDY")  # where an upload arrives: refused first
    check_bot_name(store, int(ada), "greedy")  # its own name: a new version
    with store.write() as session, pytest.raises(IntegrityError):  # the database's own key
        session.add(Bot(name="GREEDY", name_key="greedy", owner_id=int(ada)))
        session.flush()


def _insert(session: Any, table: str, **values: Any) -> int:
    columns = ", ".join(values)
    marks = ", ".join(f":{name}" for name in values)
    sql = f"INSERT INTO {table} ({columns}) VALUES ({marks}) RETURNING id"
    return int(session.execute(text(sql), values).scalar_one())


@pytest.mark.empty_database
def test_names_that_collided_before_the_migration_keep_working(url: str) -> None:
    """Rows of revision 0020 whose names share a key: the oldest keeps the plain key, the
    others the key and ``#id``; each is still found by its exact name, and a new name in
    any of those cases is refused."""
    upgrade(url, "0020")
    store = connect(url)
    t = "2026-11-01 12:00:00"
    try:
        with store.write() as session:
            ada = _insert(session, "users", name="ada", name_key="ada", created=t)
            bots = [_insert(session, "bots", name=n, owner_id=ada, created=t)
                    for n in ("greedy", "Greedy")]  # fmt: skip
            classes = [_insert(session, "classes", name=n, rule_sets='["draw"]', settings="{}",
                               created=t) for n in ("c1", "C1")]  # fmt: skip
    finally:
        store.close()
    upgrade(url)
    store = connect(url)
    try:
        with store.read() as session:
            keys = dict(session.execute(select(Bot.id, Bot.name_key)).all())
            class_keys = dict(session.execute(select(SchoolClass.id, SchoolClass.name_key)).all())
        assert keys == {bots[0]: "greedy", bots[1]: f"greedy#{bots[1]}"}
        assert class_keys == {classes[0]: "c1", classes[1]: f"c1#{classes[1]}"}
        version, _ = store.add_bot_version("ada", "Greedy", "# the second's\n", {})
        assert version.bot_id == bots[1]  # found by its exact name
        with pytest.raises(NameTaken):
            store.add_bot_version("ada", "GREEDY", "# a third\n", {})
        with pytest.raises(ClassError, match="'c1' exists already"):
            create_class(store, OPERATOR, NewClass(name="c1"))
    finally:
        store.close()
