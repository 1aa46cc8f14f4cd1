"""Each stored rating keeps the version's record under the rule set: wins, draws, losses
and the time its last counted game finished (for the leaderboards).

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-24 09:20:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    with op.batch_alter_table("ratings") as batch:
        for column in ("wins", "draws", "losses"):
            batch.add_column(sa.Column(column, sa.Integer(), nullable=False, server_default="0"))
        batch.add_column(sa.Column("last_game", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("ratings") as batch:
        for column in ("last_game", "losses", "draws", "wins"):
            batch.drop_column(column)
