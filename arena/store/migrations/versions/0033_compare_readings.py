"""Where each compare's test stands, as a worker read it after the compare's last done match
(issue 33): ``compare_readings``, the reading as JSON text with the count of done matches it
is over and the test's status (a worker playing a match of a compare that has decided stops
it). ``arena compare --remote`` shows it instead of reading the test itself, which
loads scipy (a third of a second of the command's start, beside the workers' play).

Revision ID: 0033
Revises: 0032
Create Date: 2026-11-29 19:50:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0033"
down_revision: str | None = "0032"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.create_table(
        "compare_readings",
        sa.Column("tournament_id", sa.Integer(), sa.ForeignKey("tournaments.id"), primary_key=True),
        sa.Column("done", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(length=32), nullable=False),
        sa.Column("reading", sa.Text(), nullable=False),
        sa.Column("computed", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_table(
        "compare_followers",
        sa.Column("tournament_id", sa.Integer(), sa.ForeignKey("tournaments.id"), primary_key=True),
        sa.Column("until", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_compare_followers_until", "compare_followers", ["until"])


def downgrade() -> None:
    op.drop_index("ix_compare_followers_until", table_name="compare_followers")
    op.drop_table("compare_followers")
    op.drop_table("compare_readings")
