"""``match_seats`` (migration 0010), on both databases: filled for the matches stored before
it, written when a tournament is created, and its forfeit counts kept when a match is done."""

from __future__ import annotations

import pytest
from sqlalchemy import select, text
from sqlalchemy.orm import Session

from arena.compete.entrants import Entrant
from arena.compete.tournaments import Match as ScheduledMatch
from arena.engine.rules import PRESETS
from arena.store.db import Store, connect, upgrade
from arena.store.models import BotVersion, MatchSeat
from arena.store.queue import claim_match, complete_match, create_tournament, seat_faults

# SQL can differ here (the store's SQL and a migration): on SQLite and PostgreSQL.
pytestmark = pytest.mark.backends("sqlite", "postgresql")

RULES = PRESETS["draw"]


def _tournament(store: Store, name: str) -> tuple[int, list[int]]:
    first = store.add_bot_version("ada", "one", "# one\n", {})[0].id
    second = store.add_bot_version("bob", "two", "# two\n", {})[0].id
    one, two = Entrant.stored("one", first), Entrant.stored("two", second)
    matches = [
        ScheduledMatch(f"m{i}", (one, two) if i % 2 else (two, one), 2, seed=i) for i in range(3)
    ]
    tournament_id = create_tournament(
        store, name=name, rules=RULES, format="round-robin", players=2, teams=False,
        games_per_match=2, seed=1, entrants=[one, two], matches=matches,
    )  # fmt: skip
    return tournament_id, [first, second]


def _result(fault_seat: int | None) -> dict[str, object]:
    verdict = None if fault_seat is None else {"seat": fault_seat, "termination": "crash"}
    games = [
        {"index": 0, "seed": 1, "places": [0, 1], "points": [10, 0], "winners": [0],
         "termination": "target", "verdict": None},
        {"index": 1, "seed": 2, "places": [1, 0], "points": [0, 10], "winners": [1],
         "termination": "crash" if verdict else "target", "verdict": verdict},
    ]  # fmt: skip
    return {"games": games, "seconds": 0.1, "worker": "w"}


def test_seats_are_written_and_faults_counted(store: Store) -> None:
    _, versions = _tournament(store, "t")
    with store.read() as session:
        rows = session.execute(
            select(
                MatchSeat.match_id, MatchSeat.seat, MatchSeat.bot_version_id, MatchSeat.faults
            ).order_by(MatchSeat.match_id, MatchSeat.seat)
        ).all()
        bots = dict(session.execute(select(BotVersion.id, BotVersion.bot_id)).all())
    assert len(rows) == 6 and all(faults == 0 for *_, faults in rows)
    assert {version for _, _, version, _ in rows} == set(versions)
    claimed = claim_match(store, "w", lease_seconds=30)
    assert claimed is not None
    assert complete_match(store, claimed.match_id, "w", records=[], result=_result(1))
    with store.read() as session:
        seats = session.execute(
            select(MatchSeat.seat, MatchSeat.bot_id, MatchSeat.faults)
            .where(MatchSeat.match_id == claimed.match_id)
            .order_by(MatchSeat.seat)
        ).all()
    assert [faults for _, _, faults in seats] == [0, 1]
    assert [bot for _, bot, _ in seats] == [bots[v] for v in claimed.seats]


def test_seat_faults() -> None:
    assert seat_faults(_result(None)) == {}
    assert seat_faults(_result(0)) == {0: 1}
    assert seat_faults(None) == {} and seat_faults({"void": "x"}) == {}


def _old_bot_version(session: Session, owner: str) -> int:
    """A user ``owner``, its bot and a version of it, stored in SQL; the version's id."""
    user = session.execute(
        text("INSERT INTO users (name, created) VALUES (:n, CURRENT_TIMESTAMP) RETURNING id"),
        {"n": owner},
    ).scalar_one()
    bot = session.execute(
        text(
            "INSERT INTO bots (name, owner_id, created) VALUES ('b', :u, CURRENT_TIMESTAMP) "
            "RETURNING id"
        ),
        {"u": user},
    ).scalar_one()
    return int(
        session.execute(
            text(
                "INSERT INTO bot_versions (bot_id, version, source, sha256, report, created) "
                "VALUES (:b, 1, '# bot', :h, '{}', CURRENT_TIMESTAMP) RETURNING id"
            ),
            {"b": bot, "h": owner * 8},
        ).scalar_one()
    )


@pytest.mark.empty_database
def test_the_migration_fills_the_matches_stored_before(url: str) -> None:
    upgrade(url, "0009")
    store = connect(url)
    try:
        with store.write() as session:
            # in SQL: today's models have columns the schema of 0009 has not (users.name_key)
            first, second = (_old_bot_version(session, owner) for owner in ("ada", "bob"))
            rule_set = session.execute(
                text(
                    "INSERT INTO rule_sets (name, version, params, is_preset) "
                    "VALUES ('draw', 'v', '{}', true) RETURNING id"
                )
            ).scalar_one()
            tournament = session.execute(
                text(
                    "INSERT INTO tournaments (name, format, rule_set_id, players, teams, "
                    "games_per_match, seed, status, created) VALUES "
                    "('old', 'round-robin', :r, 2, false, 2, 1, 'done', CURRENT_TIMESTAMP) "
                    "RETURNING id"
                ),
                {"r": rule_set},
            ).scalar_one()
            for key, seats, result in (
                ("a", f"[{first}, {second}]", '{"games": [{"places": [0, 1], "verdict": null}]}'),
                ("b", f"[{second}, {first}]", '{"games": [{"verdict": {"seat": 0}}, '
                 '{"verdict": {"seat": 0}}]}'),
                ("c", f"[{first}, {second}]", None),
            ):  # fmt: skip
                session.execute(
                    text(
                        "INSERT INTO matches (tournament_id, key, seats, games, seed, status, "
                        "attempts, result, created) VALUES (:t, :k, :s, 2, 1, 'done', 0, :r, "
                        "CURRENT_TIMESTAMP)"
                    ),
                    {"t": tournament, "k": key, "s": seats, "r": result},
                )
    finally:
        store.close()
    upgrade(url)
    store = connect(url)
    try:
        with store.read() as session:
            rows = session.execute(
                text(
                    "SELECT m.key, s.seat, s.bot_version_id, s.faults FROM match_seats s "
                    "JOIN matches m ON m.id = s.match_id ORDER BY m.key, s.seat"
                )
            ).all()
    finally:
        store.close()
    assert [tuple(row) for row in rows] == [
        ("a", 0, first, 0), ("a", 1, second, 0),
        ("b", 0, second, 2), ("b", 1, first, 0),
        ("c", 0, first, 0), ("c", 1, second, 0),
    ]  # fmt: skip
