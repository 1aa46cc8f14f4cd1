"""Match seats: who holds each seat of a match, by bot and version, and the games that seat
forfeited, indexed by bot (a bot's games, its faults, its record against each opponent),
filled from ``matches.seats`` and ``matches.result`` for the matches stored before; and pair
records: each bot version's record against each other in a rule set, written by the refit
(empty until a rule set is next refitted).

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-24 16:00:00
"""

from __future__ import annotations

import json

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | None = None
depends_on: str | None = None

#: Matches read, and seat rows written, at a time while filling the table.
CHUNK = 5000


def upgrade() -> None:
    op.create_table(
        "match_seats",
        sa.Column("match_id", sa.Integer(), nullable=False),
        sa.Column("seat", sa.Integer(), nullable=False),
        sa.Column("bot_id", sa.Integer(), nullable=False),
        sa.Column("bot_version_id", sa.Integer(), nullable=False),
        sa.Column("faults", sa.Integer(), server_default="0", nullable=False),
        sa.ForeignKeyConstraint(
            ["match_id"], ["matches.id"], name=op.f("fk_match_seats_match_id_matches")
        ),
        sa.ForeignKeyConstraint(["bot_id"], ["bots.id"], name=op.f("fk_match_seats_bot_id_bots")),
        sa.ForeignKeyConstraint(
            ["bot_version_id"],
            ["bot_versions.id"],
            name=op.f("fk_match_seats_bot_version_id_bot_versions"),
        ),
        sa.PrimaryKeyConstraint("match_id", "seat", name=op.f("pk_match_seats")),
    )
    op.create_index("ix_match_seats_bot", "match_seats", ["bot_id", "match_id"])
    op.create_table(
        "pair_records",
        sa.Column("rule_set_id", sa.Integer(), nullable=False),
        sa.Column("bot_version_id", sa.Integer(), nullable=False),
        sa.Column("opponent_version_id", sa.Integer(), nullable=False),
        sa.Column("games", sa.Integer(), nullable=False),
        sa.Column("wins", sa.Integer(), nullable=False),
        sa.Column("draws", sa.Integer(), nullable=False),
        sa.Column("losses", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["rule_set_id"], ["rule_sets.id"], name=op.f("fk_pair_records_rule_set_id_rule_sets")
        ),
        sa.ForeignKeyConstraint(
            ["bot_version_id"],
            ["bot_versions.id"],
            name=op.f("fk_pair_records_bot_version_id_bot_versions"),
        ),
        sa.ForeignKeyConstraint(
            ["opponent_version_id"],
            ["bot_versions.id"],
            name=op.f("fk_pair_records_opponent_version_id_bot_versions"),
        ),
        sa.PrimaryKeyConstraint(
            "rule_set_id", "bot_version_id", "opponent_version_id", name=op.f("pk_pair_records")
        ),
    )
    op.create_index("ix_pair_records_version", "pair_records", ["bot_version_id"])
    connection = op.get_bind()
    bots: dict[int, int] = {
        int(version): int(bot)
        for version, bot in connection.execute(sa.text("SELECT id, bot_id FROM bot_versions"))
    }
    table = sa.table(
        "match_seats",
        sa.column("match_id", sa.Integer),
        sa.column("seat", sa.Integer),
        sa.column("bot_id", sa.Integer),
        sa.column("bot_version_id", sa.Integer),
        sa.column("faults", sa.Integer),
    )
    last = 0
    while True:
        rows = connection.execute(
            sa.text("SELECT id, seats, result FROM matches WHERE id > :last ORDER BY id LIMIT :n"),
            {"last": last, "n": CHUNK},
        ).all()
        if not rows:
            return
        seats = []
        for match_id, stored, result in rows:
            versions = json.loads(stored) if isinstance(stored, str) else stored
            faults = _faults(json.loads(result) if isinstance(result, str) else result)
            for seat, version in enumerate(versions or []):
                if int(version) in bots:
                    seats.append(
                        {"match_id": match_id, "seat": seat, "bot_id": bots[int(version)],
                         "bot_version_id": int(version), "faults": faults.get(seat, 0)}
                    )  # fmt: skip
        if seats:
            connection.execute(sa.insert(table), seats)
        last = rows[-1][0]


def _faults(result: object) -> dict[int, int]:
    """Games forfeited by each seat, from a match's stored result (as of this revision)."""
    faults: dict[int, int] = {}
    games = result.get("games") if isinstance(result, dict) else None
    for game in games if isinstance(games, list) else []:
        verdict = game.get("verdict") if isinstance(game, dict) else None
        seat = verdict.get("seat") if isinstance(verdict, dict) else None
        if isinstance(seat, int):
            faults[seat] = faults.get(seat, 0) + 1
    return faults


def downgrade() -> None:
    op.drop_index("ix_pair_records_version", table_name="pair_records")
    op.drop_table("pair_records")
    op.drop_index("ix_match_seats_bot", table_name="match_seats")
    op.drop_table("match_seats")
