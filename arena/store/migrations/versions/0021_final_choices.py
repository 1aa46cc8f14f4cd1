"""Placement before displacement and the final's choice (issue 31): an entry's ``placed``
time (when it had played its placement games: a later version displaces the active one
only then), and the versions each entrant chose for a competition's final.

Revision ID: 0021
Revises: 0020
Create Date: 2026-11-29 00:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0021"
down_revision: str | None = "0020"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.add_column(
        "competition_entries", sa.Column("placed", sa.DateTime(timezone=True), nullable=True)
    )
    op.create_table(
        "competition_final_choices",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("competition_id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("bot_version_id", sa.Integer(), nullable=False),
        sa.Column("created", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["bot_version_id"],
            ["bot_versions.id"],
            name=op.f("fk_competition_final_choices_bot_version_id_bot_versions"),
        ),
        sa.ForeignKeyConstraint(
            ["competition_id"],
            ["competitions.id"],
            name=op.f("fk_competition_final_choices_competition_id_competitions"),
        ),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_competition_final_choices_user_id_users")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_competition_final_choices")),
        sa.UniqueConstraint(
            "competition_id",
            "bot_version_id",
            name=op.f("uq_competition_final_choices_competition_id_bot_version_id"),
        ),
    )
    op.create_index(
        "ix_final_choices_user", "competition_final_choices", ["competition_id", "user_id"]
    )


def downgrade() -> None:
    op.drop_index("ix_final_choices_user", table_name="competition_final_choices")
    op.drop_table("competition_final_choices")
    with op.batch_alter_table("competition_entries") as batch_op:
        batch_op.drop_column("placed")
