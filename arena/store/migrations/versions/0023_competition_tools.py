"""The organiser's tools (issue 31, item 6): a competition's announcements and action log,
its ladder's pause, its minimum account age; an entry may be ``withdrawn`` (a status: no
column).

Revision ID: 0023
Revises: 0022
Create Date: 2026-11-28 23:50:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0023"
down_revision: str | None = "0022"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.add_column(
        "competitions", sa.Column("ladder_paused", sa.DateTime(timezone=True), nullable=True)
    )
    op.add_column(
        "competitions",
        sa.Column("min_account_days", sa.Integer(), server_default="0", nullable=False),
    )
    op.create_table(
        "competition_announcements",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("competition_id", sa.Integer(), nullable=False),
        sa.Column("author_id", sa.Integer(), nullable=True),
        sa.Column("author", sa.String(length=100), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("created", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["competition_id"], ["competitions.id"],
            name="fk_competition_announcements_competition_id_competitions",
        ),
        sa.ForeignKeyConstraint(
            ["author_id"], ["users.id"], name="fk_competition_announcements_author_id_users"
        ),
        sa.PrimaryKeyConstraint("id", name="pk_competition_announcements"),
    )  # fmt: skip
    op.create_index(
        "ix_competition_announcements_key",
        "competition_announcements",
        ["competition_id", "created"],
    )
    op.create_table(
        "competition_actions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("competition_id", sa.Integer(), nullable=False),
        sa.Column("actor_id", sa.Integer(), nullable=True),
        sa.Column("actor", sa.String(length=100), nullable=False),
        sa.Column("action", sa.String(length=40), nullable=False),
        sa.Column("changes", sa.JSON(), nullable=False),
        sa.Column("created", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["competition_id"], ["competitions.id"],
            name="fk_competition_actions_competition_id_competitions",
        ),
        sa.ForeignKeyConstraint(
            ["actor_id"], ["users.id"], name="fk_competition_actions_actor_id_users"
        ),
        sa.PrimaryKeyConstraint("id", name="pk_competition_actions"),
    )  # fmt: skip
    op.create_index(
        "ix_competition_actions_key", "competition_actions", ["competition_id", "created"]
    )


def downgrade() -> None:
    op.drop_index("ix_competition_actions_key", table_name="competition_actions")
    op.drop_table("competition_actions")
    op.drop_index("ix_competition_announcements_key", table_name="competition_announcements")
    op.drop_table("competition_announcements")
    with op.batch_alter_table("competitions") as batch_op:
        batch_op.drop_column("min_account_days")
        batch_op.drop_column("ladder_paused")
