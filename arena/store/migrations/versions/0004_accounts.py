"""Accounts: a password (argon2 hash), a role and a session epoch per user; a bot's source
may be made public by its owner.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-24 08:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.add_column("users", sa.Column("password_hash", sa.String(length=200), nullable=True))
    op.add_column(
        "users",
        sa.Column("role", sa.String(length=20), nullable=False, server_default="user"),
    )
    op.add_column(
        "users",
        sa.Column("session_epoch", sa.Integer(), nullable=False, server_default="0"),
    )
    op.add_column(
        "bots",
        sa.Column("source_public", sa.Boolean(), nullable=False, server_default=sa.false()),
    )


def downgrade() -> None:
    with op.batch_alter_table("bots") as batch:
        batch.drop_column("source_public")
    with op.batch_alter_table("users") as batch:
        batch.drop_column("session_epoch")
        batch.drop_column("role")
        batch.drop_column("password_hash")
