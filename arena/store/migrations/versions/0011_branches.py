"""Branches: "what if" asked from the web. A stored game taken up at a round and turn by
other bot versions, a number of times, on a worker; its status, and the branch records it
played (docs/records.md, "Branches").

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-24 19:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.create_table(
        "branches",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("match_id", sa.Integer(), nullable=False),
        sa.Column("game_index", sa.Integer(), nullable=False),
        sa.Column("round_number", sa.Integer(), nullable=False),
        sa.Column("turn", sa.Integer(), nullable=False),
        sa.Column("seats", sa.JSON(), nullable=False),
        sa.Column("times", sa.Integer(), nullable=False),
        sa.Column("seed", sa.BigInteger(), nullable=False),
        sa.Column("requested_by", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(length=20), nullable=False),
        sa.Column("message", sa.Text(), nullable=True),
        sa.Column("records", sa.JSON(), nullable=True),
        sa.Column("created", sa.DateTime(timezone=True), nullable=False),
        sa.Column("sent", sa.DateTime(timezone=True), nullable=True),
        sa.Column("started", sa.DateTime(timezone=True), nullable=True),
        sa.Column("finished", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["match_id"], ["matches.id"], name=op.f("fk_branches_match_id_matches")
        ),
        sa.ForeignKeyConstraint(
            ["requested_by"], ["users.id"], name=op.f("fk_branches_requested_by_users")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_branches")),
    )
    op.create_index("ix_branches_status", "branches", ["status"])
    op.create_index("ix_branches_requester", "branches", ["requested_by", "status"])


def downgrade() -> None:
    op.drop_index("ix_branches_requester", table_name="branches")
    op.drop_index("ix_branches_status", table_name="branches")
    op.drop_table("branches")
