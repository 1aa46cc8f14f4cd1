"""Tables (issue 35): ``game_tables``, a game people play in the browser against bots, and
``table_seats``, its seats (a person or a bot version). Kept apart from matches: no rating
counts a table's game.

Revision ID: 0030
Revises: 0029
Create Date: 2026-11-29 05:30:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0030"
down_revision: str | None = "0029"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.create_table(
        "game_tables",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("owner_id", sa.Integer(), sa.ForeignKey("users.id"), nullable=False),
        sa.Column("address", sa.String(64), nullable=False),
        sa.Column("rule_set_id", sa.Integer(), sa.ForeignKey("rule_sets.id"), nullable=False),
        sa.Column("players", sa.Integer(), nullable=False),
        sa.Column("teams", sa.Boolean(), nullable=False),
        sa.Column("seed", sa.BigInteger(), nullable=False),
        sa.Column("move_seconds", sa.Float(), nullable=False),
        sa.Column("channel", sa.String(64), nullable=False),
        sa.Column("invite", sa.String(64), nullable=True),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("message", sa.Text(), nullable=True),
        sa.Column("record", sa.JSON(none_as_null=True), nullable=True),
        sa.Column("winners", sa.JSON(), nullable=True),
        sa.Column("created", sa.DateTime(timezone=True), nullable=False),
        sa.Column("sent", sa.DateTime(timezone=True), nullable=True),
        sa.Column("started", sa.DateTime(timezone=True), nullable=True),
        sa.Column("finished", sa.DateTime(timezone=True), nullable=True),
        sa.Column("lease_expires", sa.DateTime(timezone=True), nullable=True),
        sa.UniqueConstraint("invite", name="uq_game_tables_invite"),
    )
    op.create_index("ix_game_tables_status", "game_tables", ["status"])
    op.create_index("ix_game_tables_owner", "game_tables", ["owner_id", "status"])
    op.create_index("ix_game_tables_address", "game_tables", ["address", "status"])
    op.create_table(
        "table_seats",
        sa.Column("table_id", sa.Integer(), sa.ForeignKey("game_tables.id"), primary_key=True),
        sa.Column("seat", sa.Integer(), primary_key=True),
        sa.Column("human", sa.Boolean(), nullable=False),
        sa.Column("user_id", sa.Integer(), sa.ForeignKey("users.id"), nullable=True),
        sa.Column("bot_version_id", sa.Integer(), sa.ForeignKey("bot_versions.id"), nullable=True),
        sa.Column("name", sa.String(200), nullable=True),
    )
    op.create_index("ix_table_seats_version", "table_seats", ["bot_version_id"])


def downgrade() -> None:
    op.drop_index("ix_table_seats_version", table_name="table_seats")
    op.drop_table("table_seats")
    op.drop_index("ix_game_tables_address", table_name="game_tables")
    op.drop_index("ix_game_tables_owner", table_name="game_tables")
    op.drop_index("ix_game_tables_status", table_name="game_tables")
    op.drop_table("game_tables")
