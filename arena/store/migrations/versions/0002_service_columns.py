"""The service's columns: seat labels and dispatch time on matches, tournament settings,
unique tournament names.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22 07:10:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    with op.batch_alter_table("matches") as batch:
        batch.add_column(sa.Column("labels", sa.JSON(), nullable=True))
        batch.add_column(sa.Column("queued", sa.DateTime(timezone=True), nullable=True))
    with op.batch_alter_table("tournaments") as batch:
        batch.add_column(sa.Column("settings", sa.JSON(), nullable=True))
        batch.create_unique_constraint(op.f("uq_tournaments_name"), ["name"])


def downgrade() -> None:
    with op.batch_alter_table("tournaments") as batch:
        batch.drop_constraint(op.f("uq_tournaments_name"), type_="unique")
        batch.drop_column("settings")
    with op.batch_alter_table("matches") as batch:
        batch.drop_column("queued")
        batch.drop_column("labels")
