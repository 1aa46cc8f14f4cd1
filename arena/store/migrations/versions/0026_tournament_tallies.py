"""A tournament's stored tally (issue 32, item 4): ``tournament_tallies``, its done games
grouped as its page counts them (labels, places, forfeiting seat, ending) with each group's
count and points summed, which :func:`arena.store.queue.complete_match` keeps up to date.

The revision fills the tallies of the matches already done (:func:`arena.store.tallies.fill`,
2,000 matches a statement, the database grouping their games' JSON): a few seconds for
200,000 games (docs/storage.md). It fills in the migration rather than on a page's first
read so that no page read ever races a worker adding to the same tally, and a tally is
never half there.

Revision ID: 0026
Revises: 0025
Create Date: 2026-11-29 04:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from arena.store import tallies

revision: str = "0026"
down_revision: str | None = "0025"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.create_table(
        "tournament_tallies",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("tournament_id", sa.Integer(), sa.ForeignKey("tournaments.id"), nullable=False),
        sa.Column("labels", sa.Text(), nullable=False),
        sa.Column("places", sa.Text(), nullable=False),
        sa.Column("fault_seat", sa.Integer(), nullable=False),
        sa.Column("termination", sa.Text(), nullable=False),
        sa.Column("count", sa.BigInteger(), nullable=False),
        *(sa.Column(f"points{seat}", sa.BigInteger(), nullable=False) for seat in range(9)),
    )
    op.create_index(
        "uq_tournament_tallies_group",
        "tournament_tallies",
        ["tournament_id", "labels", "places", "fault_seat", "termination"],
        unique=True,
    )
    bind = op.get_bind()
    tallies.fill(bind, bind.dialect.name)


def downgrade() -> None:
    op.drop_index("uq_tournament_tallies_group", table_name="tournament_tallies")
    op.drop_table("tournament_tallies")
