"""The scheduler's columns (docs/workers.md): when a tournament's matches were first sent
to the workers (``tournaments.queued``: its place in the queue, oldest first), and a lease on
an upload's check and on a branch (``lease_expires``, renewed by the worker's heartbeat), so
that a check or branch still running is never sent a second time and one whose worker died
is sent again within a lease.

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-25 10:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    with op.batch_alter_table("tournaments") as batch:
        batch.add_column(sa.Column("queued", sa.DateTime(timezone=True), nullable=True))
    with op.batch_alter_table("uploads") as batch:
        batch.add_column(sa.Column("lease_expires", sa.DateTime(timezone=True), nullable=True))
    with op.batch_alter_table("branches") as batch:
        batch.add_column(sa.Column("lease_expires", sa.DateTime(timezone=True), nullable=True))
    # A tournament already sent keeps its place: the first time one of its matches was sent.
    op.execute(
        "UPDATE tournaments SET queued = (SELECT min(matches.queued) FROM matches"
        " WHERE matches.tournament_id = tournaments.id)"
    )
    op.create_index("ix_tournaments_queued", "tournaments", ["queued"])


def downgrade() -> None:
    op.drop_index("ix_tournaments_queued", table_name="tournaments")
    with op.batch_alter_table("branches") as batch:
        batch.drop_column("lease_expires")
    with op.batch_alter_table("uploads") as batch:
        batch.drop_column("lease_expires")
    with op.batch_alter_table("tournaments") as batch:
        batch.drop_column("queued")
