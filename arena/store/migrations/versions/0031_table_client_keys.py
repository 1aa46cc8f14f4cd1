"""A table's client key (the table form's one-time token, the API's ``Idempotency-Key``):
``game_tables.client_key``, unique for its owner, so "Sit down" pressed twice (or a request
sent again) opens one table, and the second answers with the first.

Revision ID: 0031
Revises: 0030
Create Date: 2026-11-29 08:30:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0031"
down_revision: str | None = "0030"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.add_column("game_tables", sa.Column("client_key", sa.String(100), nullable=True))
    op.create_index(
        "uq_game_tables_owner_client_key", "game_tables", ["owner_id", "client_key"], unique=True
    )


def downgrade() -> None:
    op.drop_index("uq_game_tables_owner_client_key", table_name="game_tables")
    with op.batch_alter_table("game_tables") as batch:
        batch.drop_column("client_key")
