"""Runtimes (arena.match.runtimes): each bot version and each upload names the runtime its
file runs under (``python``, ``python-numpy``, ``javascript``); everything stored before
ran under ``python``.

Revision ID: 0018
Revises: 0017
Create Date: 2026-11-26 03:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0018"
down_revision: str | None = "0017"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    # Added with op.add_column, no batch: SQLite's batch mode copies the table, and
    # dropping bot_versions would break the foreign keys of uploads, tournament entrants...
    # (as migrations 0014 and 0017 say).
    op.add_column(
        "bot_versions",
        sa.Column("runtime", sa.String(length=20), server_default="python", nullable=False),
    )
    op.add_column(
        "uploads",
        sa.Column("runtime", sa.String(length=20), server_default="python", nullable=False),
    )


def downgrade() -> None:
    with op.batch_alter_table("uploads", schema=None) as batch_op:
        batch_op.drop_column("runtime")
    with op.batch_alter_table("bot_versions", schema=None) as batch_op:
        batch_op.drop_column("runtime")
