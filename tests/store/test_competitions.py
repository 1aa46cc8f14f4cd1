"""arena.store.competitions on both backends: a competition and its ladder, entries'
lives, the ladder's entrants, disqualification and a final's rerun."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select

from arena.engine.rules import PRESETS
from arena.store import competitions as c
from arena.store.db import Store
from arena.store.models import Match, Tournament, TournamentEntrant
from arena.store.uploads import NewUpload, insert_upload

# SQL can differ here (the store's SQL): on SQLite and PostgreSQL.
pytestmark = pytest.mark.backends("sqlite", "postgresql")

T0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)


def _competition(store: Store, name: str = "cup", deadline: datetime | None = None) -> int:
    return c.insert_competition(
        store,
        name=name,
        ladder_name=f"{name}-ladder",
        rules=PRESETS["draw"],
        values={
            "description": "", "owner_id": None, "players": 2, "teams": False,
            "settings": {"move_seconds": 1.0, "memory_mb": 256, "runtimes": ["python"]},
            "opens": T0, "deadline": deadline or T0 + timedelta(days=7), "time_zone": "UTC",
            "daily_submissions": 5, "sources_public": False, "final_top": 8,
            "final_confidence": 0.95, "final_max_games": 2000, "seed": 11,
        },
        tournament_settings={"move_seconds": 1.0, "memory_mb": 256},
        games_per_match=2,
    )  # fmt: skip


def _version(store: Store, owner: str, bot: str, n: int = 0) -> tuple[int, int]:
    """(version id, owner's user id)."""
    version, _ = store.add_bot_version(owner, bot, f"print({n})\n", {})
    with store.read() as session:
        from arena.store.models import Bot

        owner_id = session.scalar(select(Bot.owner_id).where(Bot.id == version.bot_id))
    assert owner_id is not None
    return version.id, owner_id


def _status(store: Store, competition_id: int, user: int, version: int, now: datetime) -> str:
    added = c.add_active_entry(store, competition_id, user, version, now)
    assert isinstance(added, tuple)
    return added[1]


def _entered(
    store: Store,
    competition_id: int,
    user_id: int,
    source: str,
    *,
    now: datetime,
    limit: int | None = None,
) -> int | None:
    """An upload of ``source`` stored with its pending entry in one transaction (as the
    intake stores it); its id, or None (nothing stored) over the daily ``limit``."""
    digest = hashlib.sha256(source.encode()).hexdigest()
    taken = insert_upload(
        store,
        NewUpload(
            user_id, "greedy", "g.py", source, digest, purpose="competition",
            competition_id=competition_id, entry_limit=limit, now=now,
        ),
    )  # fmt: skip
    return None if taken is None else taken.upload_id


def test_a_competition_is_stored_with_its_running_ladder(store: Store) -> None:
    competition_id = _competition(store)
    row = c.competition_row(store, "cup")
    assert row is not None and row.id == competition_id
    assert (row.status, row.rules, row.ladder, row.final, row.entrants) == (
        "open",
        "draw",
        "cup-ladder",
        None,
        0,
    )
    assert row.opens == T0 and row.deadline.tzinfo is not None
    with store.read() as session:
        ladder = session.get(Tournament, row.ladder_id)
        assert ladder is not None
        assert (ladder.format, ladder.status, ladder.settings) == (
            "ladder",
            "running",
            {"move_seconds": 1.0, "memory_mb": 256},
        )
    assert [r.name for r in c.competition_rows(store)] == ["cup"]
    with pytest.raises(ValueError, match="exists already"):
        _competition(store)
    assert c.competition_row(store, "nope") is None


def test_entries_become_active_supersede_and_join_the_ladder(store: Store) -> None:
    competition_id = _competition(store)
    v1, alice = _version(store, "alice", "greedy", 1)
    v2, _ = _version(store, "alice", "greedy", 2)
    vb, bob = _version(store, "bob", "greedy", 3)
    now = T0 + timedelta(hours=1)
    assert _status(store, competition_id, alice, v1, now) == "active"
    assert _status(store, competition_id, bob, vb, now) == "active"
    # the same version again: no new entry, the one that holds it is returned
    again = c.add_active_entry(store, competition_id, alice, v1, now)
    assert isinstance(again, c.EnteredAlready) and (again.version, again.status) == (1, "active")
    assert _status(store, competition_id, alice, v2, now) == "active"
    entrants = c.active_entrants(store, competition_id)
    assert [(e.version_id, e.label, e.user_id) for e in entrants] == [
        (vb, "bob-greedy-v1", bob), (v2, "alice-greedy-v2", alice)
    ]  # fmt: skip
    statuses = [(e.version, e.status) for e in c.entries_of(store, competition_id, alice)]
    assert statuses == [(2, "active"), (1, "superseded")]
    assert c.competition_row(store, "cup").entrants == 2  # type: ignore[union-attr]
    # the superseded version keeps its ladder entrant (its games stay)
    assert "alice-greedy-v1" in {e.label for e in c.entry_rows(store, competition_id)}


def test_an_upload_entry_is_settled_once_late_or_rejected(store: Store) -> None:
    competition_id = _competition(store, deadline=T0 + timedelta(days=1))
    v1, alice = _version(store, "alice", "greedy", 1)
    uploads: list[int] = []
    for i in range(3):
        upload = _entered(store, competition_id, alice, f"print({i})", now=T0)
        assert upload is not None
        uploads.append(upload)
    assert c.entry_of_upload(store, uploads[0]) is not None
    rejected = c.accept_entry(store, uploads[0], version_id=None, message="Rejected: crash")
    assert rejected is not None and rejected[1] == "rejected"
    assert c.accept_entry(store, uploads[0], version_id=v1, message=None) is None  # settled
    active = c.accept_entry(
        store, uploads[1], version_id=v1, message=None, now=T0 + timedelta(hours=1)
    )
    assert active is not None and active[1] == "active"
    late = c.accept_entry(
        store, uploads[2], version_id=v1, message=None, now=T0 + timedelta(days=2)
    )
    assert late is not None and late[1] == "late"
    reasons = {
        e.upload_id: (e.status, e.reason) for e in c.entries_of(store, competition_id, alice)
    }
    assert reasons[uploads[0]] == ("rejected", "Rejected: crash")
    times = c.entry_times(store, competition_id, alice, T0 - timedelta(hours=1))
    assert len(times) == 3


def test_disqualify_voids_the_versions_pending_ladder_matches(store: Store) -> None:
    competition_id = _competition(store)
    va, alice = _version(store, "alice", "a", 1)
    vb, bob = _version(store, "bob", "b", 2)
    now = T0 + timedelta(hours=1)
    c.add_active_entry(store, competition_id, alice, va, now)
    c.add_active_entry(store, competition_id, bob, vb, now)
    row = c.competition_row(store, "cup")
    assert row is not None
    with store.write() as session:
        for i, status in enumerate(("pending", "done", "pending")):
            session.add(
                Match(tournament_id=row.ladder_id, key=f"m{i}", seats=[va, vb], labels=["x", "y"],
                      games=2, seed=i, status=status, attempts=0)
            )  # fmt: skip
    assert c.disqualify_version(store, competition_id, va, "copied code") == (1, 2)
    with store.read() as session:
        statuses = sorted(session.scalars(select(Match.status)))
    assert statuses == ["done", "void", "void"]
    assert [e.version_id for e in c.active_entrants(store, competition_id)] == [vb]
    entry = c.entries_of(store, competition_id, alice)[0]
    assert (entry.status, entry.reason) == ("disqualified", "copied code")
    # entering it again is refused: the disqualified entry holds its source
    again = c.add_active_entry(store, competition_id, alice, va, now)
    assert isinstance(again, c.EnteredAlready) and again.status == "disqualified"


def test_reset_final_voids_it_and_goes_back_to_final(store: Store) -> None:
    competition_id = _competition(store)
    va, _ = _version(store, "alice", "a", 1)
    vb, _ = _version(store, "bob", "b", 2)
    with store.write() as session:
        final = Tournament(name="cup-final", format="final", rule_set_id=1, players=2,
                           teams=False, games_per_match=2, seed=1, status="running")  # fmt: skip
        session.add(final)
        session.flush()
        session.add(TournamentEntrant(tournament_id=final.id, label="a", bot_version_id=va))
        session.add(TournamentEntrant(tournament_id=final.id, label="b", bot_version_id=vb))
        session.add(Match(tournament_id=final.id, key="f0", seats=[va, vb], labels=["a", "b"],
                          games=2, seed=1, status="pending", attempts=0))  # fmt: skip
        final_id = final.id
    from arena.store.models import Competition

    with store.write() as session:
        row = session.get(Competition, competition_id)
        assert row is not None
        row.final_id, row.status, row.final_table = final_id, "done", [{"place": 1}]
    assert c.reset_final(store, competition_id, by="operator", reason="a bug") == 1
    after = c.competition_row(store, "cup")
    assert after is not None
    assert (after.status, after.final_id, after.final_table) == ("final", None, None)
    [kept] = after.earlier_finals  # the replaced final, kept with its table and reason
    assert (kept["number"], kept["table"], kept["reason"], kept["by"]) == (
        1, [{"place": 1}], "a bug", "operator"
    )  # fmt: skip


def test_ladder_labels_are_names_and_unique() -> None:
    assert c.ladder_label("alice", "greedy", 3, set()) == "alice-greedy-v3"
    assert c.ladder_label("alice", "greedy", 3, {"alice-greedy-v3"}) == "alice-greedy-v3-2"


def test_the_daily_limit_is_counted_in_the_entrys_own_transaction(store: Store) -> None:
    """Entries that passed the service's first look together still stop at the limit:
    the count and the insert are one transaction (the competition's row locked)."""
    competition_id = _competition(store)
    v1, alice = _version(store, "alice", "a", 1)
    now = T0 + timedelta(hours=1)
    made = [
        _entered(store, competition_id, alice, f"print({i})", now=now, limit=2) for i in range(3)
    ]
    assert made[0] is not None and made[1] is not None and made[2] is None
    refused = c.add_active_entry(store, competition_id, alice, v1, now, daily_limit=2)
    assert refused is None
    assert c.add_active_entry(store, competition_id, alice, v1, now + timedelta(days=1),
                              daily_limit=2) is not None  # fmt: skip
    times = c.entry_times(store, competition_id, alice, now - timedelta(days=1))
    assert len(times) == 3
