"""Compact game records (issue 32, item 1): ``game_records.data`` holds a record as the
compact bytes of :mod:`arena.engine.codec` (its first byte names the encoding), and
``record`` (the JSON) becomes nullable: every row written from now on holds ``data`` only.

The rows stored before keep their JSON until :func:`arena.store.records.convert_records`
converts them, batch by batch, which ``arena db upgrade`` runs right after this revision
(readers take either form meanwhile).

Revision ID: 0024
Revises: 0023
Create Date: 2026-11-29 02:40:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0024"
down_revision: str | None = "0023"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    with op.batch_alter_table("game_records") as batch:
        batch.add_column(sa.Column("data", sa.LargeBinary(), nullable=True))
        batch.alter_column("record", existing_type=sa.JSON(), nullable=True)


def downgrade() -> None:
    compact = op.get_bind().scalar(
        sa.text("SELECT count(*) FROM game_records WHERE record IS NULL")
    )
    if compact:
        raise RuntimeError(
            f"{compact} game records are stored compactly only: revision 0023 cannot hold "
            "them (export them first with `arena tournament export`)"
        )
    with op.batch_alter_table("game_records") as batch:
        batch.alter_column("record", existing_type=sa.JSON(), nullable=False)
        batch.drop_column("data")
