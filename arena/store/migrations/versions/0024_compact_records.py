"""Compact game records (issue 32, item 1): ``game_records.data`` holds a record as the
compact bytes of :mod:`arena.engine.codec` (its first byte names the encoding), and
``record`` (the JSON) becomes nullable: every row written from now on holds ``data`` only.

The rows stored before keep their JSON until :func:`arena.store.records.convert_records`
converts them, batch by batch, which ``arena db upgrade`` runs right after this revision
(readers take either form meanwhile).

Neither step copies the table, so the revision takes no time on a database of any size:
PostgreSQL drops ``NOT NULL`` in place, and on SQLite, which cannot alter a column, the
table's definition is edited as SQLite documents for removing a ``NOT NULL`` constraint
(https://www.sqlite.org/lang_altertable.html, "Making Other Kinds Of Table Schema
Changes": the stored rows do not change). Alembic's batch mode instead copies the whole
table inside the migration's transaction: 26 s for 20,000 games, the server's writes
locked out meanwhile, and twice the disk.

Revision ID: 0024
Revises: 0023
Create Date: 2026-11-29 02:40:00
"""

from __future__ import annotations

import re

import sqlalchemy as sa
from alembic import op
from sqlalchemy.engine import Connection

revision: str = "0024"
down_revision: str | None = "0023"
branch_labels: str | None = None
depends_on: str | None = None

_NOT_NULL = re.compile(r"\brecord JSON NOT NULL\b")


def upgrade() -> None:
    op.add_column("game_records", sa.Column("data", sa.LargeBinary(), nullable=True))
    bind = op.get_bind()
    if bind.dialect.name != "sqlite":
        op.alter_column("game_records", "record", existing_type=sa.JSON(), nullable=True)
    elif not _sqlite_drop_not_null(bind):
        with op.batch_alter_table("game_records") as batch:  # a definition not written by 0001
            batch.alter_column("record", existing_type=sa.JSON(), nullable=True)


def _sqlite_drop_not_null(bind: Connection) -> bool:
    """Drop ``record``'s ``NOT NULL`` by editing the table's stored definition (SQLite's
    documented procedure, in the migration's transaction); False if the definition is not
    the one expected."""
    sql = bind.exec_driver_sql(
        "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'game_records'"
    ).scalar_one()
    changed, count = _NOT_NULL.subn("record JSON", sql)
    if count != 1:
        return False
    version = bind.exec_driver_sql("PRAGMA schema_version").scalar_one()
    bind.exec_driver_sql("PRAGMA writable_schema = ON")
    bind.execute(
        sa.text(
            "UPDATE sqlite_master SET sql = :sql WHERE type = 'table' AND name = 'game_records'"
        ),
        {"sql": changed},
    )
    bind.exec_driver_sql(f"PRAGMA schema_version = {int(version) + 1}")
    bind.exec_driver_sql("PRAGMA writable_schema = OFF")
    return True


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
