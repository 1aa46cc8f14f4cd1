"""Retention (issue 32, item 3): ``matches.records_pruned``, when the deployment's
retention deleted a done match's game records (its result stays), and the index the prune
walks (done matches whose records are kept, the oldest first).

Revision ID: 0025
Revises: 0024
Create Date: 2026-11-29 02:30:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0025"
down_revision: str | None = "0024"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.add_column("matches", sa.Column("records_pruned", sa.DateTime(timezone=True), nullable=True))
    op.create_index(
        "ix_matches_unpruned", "matches", ["status", "records_pruned", "finished", "id"]
    )


def downgrade() -> None:
    op.drop_index("ix_matches_unpruned", table_name="matches")
    with op.batch_alter_table("matches") as batch_op:
        batch_op.drop_column("records_pruned")
