"""Tournaments have an owner: the organiser who created one from the web (None for those
created from the command line), who may cancel it.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-24 09:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    with op.batch_alter_table("tournaments") as batch:
        batch.add_column(sa.Column("owner_id", sa.Integer(), nullable=True))
        batch.create_foreign_key(
            op.f("fk_tournaments_owner_id_users"), "users", ["owner_id"], ["id"]
        )


def downgrade() -> None:
    with op.batch_alter_table("tournaments") as batch:
        batch.drop_constraint(op.f("fk_tournaments_owner_id_users"), type_="foreignkey")
        batch.drop_column("owner_id")
