"""Indexes for the game lists' order: done matches, the latest finished first, in all and
by tournament. Without them every game list (the games page, a bot page's recent games and
faults) read and sorted every done match; in SQLite reading a match's ``finished`` walks
past its ``result`` (every game's summary, ~0.3 MB for a 2,000-game match).

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-25 16:00:00
"""

from __future__ import annotations

from alembic import op

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.create_index("ix_matches_status_finished", "matches", ["status", "finished", "id"])
    op.create_index(
        "ix_matches_tournament_finished",
        "matches",
        ["tournament_id", "status", "finished", "id"],
    )


def downgrade() -> None:
    op.drop_index("ix_matches_tournament_finished", table_name="matches")
    op.drop_index("ix_matches_status_finished", table_name="matches")
