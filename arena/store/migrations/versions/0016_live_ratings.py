"""Live ratings (docs/ratings.md, "Live ratings"): each rule set counts the refits asked for
(one a done match) and the asks its stored ratings cover, and remembers when its ratings
were last refitted, how long that took, when the next refit is due, and the lease of the
refit in flight (one at a time per rule set, whatever the number of workers).

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-25 21:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0016"
down_revision: str | None = "0015"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    with op.batch_alter_table("rule_sets") as batch:
        batch.add_column(sa.Column("refit_asked", sa.Integer(), nullable=False, server_default="0"))
        batch.add_column(
            sa.Column("refit_covered", sa.Integer(), nullable=False, server_default="0")
        )
        batch.add_column(sa.Column("refitted", sa.DateTime(timezone=True), nullable=True))
        batch.add_column(sa.Column("refit_seconds", sa.Float(), nullable=True))
        batch.add_column(sa.Column("refit_due", sa.DateTime(timezone=True), nullable=True))
        batch.add_column(sa.Column("refit_lease", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("rule_sets") as batch:
        batch.drop_column("refit_lease")
        batch.drop_column("refit_due")
        batch.drop_column("refit_seconds")
        batch.drop_column("refitted")
        batch.drop_column("refit_covered")
        batch.drop_column("refit_asked")
