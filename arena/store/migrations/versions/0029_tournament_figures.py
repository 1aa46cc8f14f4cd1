"""A tournament's fitted figures shared by every web process (issue 32, item 4):
``tournament_figures``, its page's standings with each entrant's rating, crosstable, void
matches and faults as JSON, with the version of the stored tally they were fitted at (its
done and void matches) and a claim, so that a stale fit is redone once, by one process
(:mod:`arena.service.board_views`). And ``ix_game_records_unconverted``, a partial index of
the game records still stored as JSON, which ``arena serve`` counts at every start.

Revision ID: 0029
Revises: 0026
Create Date: 2026-11-29 05:30:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0029"
down_revision: str | None = "0026"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.create_table(
        "tournament_figures",
        sa.Column("tournament_id", sa.Integer(), sa.ForeignKey("tournaments.id"), primary_key=True),
        sa.Column("done", sa.Integer(), nullable=False),
        sa.Column("void", sa.Integer(), nullable=False),
        sa.Column("figures", sa.Text(), nullable=True),
        sa.Column("claimed_until", sa.DateTime(timezone=True), nullable=True),
        sa.Column("computed", sa.DateTime(timezone=True), nullable=True),
    )
    op.create_index(
        "ix_game_records_unconverted",
        "game_records",
        ["id"],
        sqlite_where=sa.text("data IS NULL"),
        postgresql_where=sa.text("data IS NULL"),
    )


def downgrade() -> None:
    op.drop_index("ix_game_records_unconverted", table_name="game_records")
    op.drop_table("tournament_figures")
