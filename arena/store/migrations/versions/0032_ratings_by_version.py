"""The ratings by bot version (``ix_ratings_version``): a bot's page reads its versions'
ratings in every rule set, which the key (rule set, version) does not find, so each read
went through every rating of every rule set.

Revision ID: 0032
Revises: 0031
Create Date: 2026-11-29 11:45:00
"""

from __future__ import annotations

from alembic import op

revision: str = "0032"
down_revision: str | None = "0031"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.create_index("ix_ratings_version", "ratings", ["bot_version_id"])


def downgrade() -> None:
    op.drop_index("ix_ratings_version", table_name="ratings")
