"""A covering index on matches by tournament and status (with games and finished): a
tournament page counts its matches by status, adds up their games and finds the last one
finished; without it each of those reads every match row of the tournament, results and
all (56 ms of an 85 ms page over a million stored games, measured by benchmarks/web.py).

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-24 09:10:00
"""

from __future__ import annotations

from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.create_index(
        "ix_matches_tournament_status",
        "matches",
        ["tournament_id", "status", "games", "finished"],
    )


def downgrade() -> None:
    op.drop_index("ix_matches_tournament_status", table_name="matches")
