"""A competition's earlier finals (``competitions.earlier_finals``: the finals a rerun
replaced, each with its table, the organiser's reason, who and when), and competition,
class and bot names compared without regard to case, as user names are
(migration 0014): each gets a ``name_key`` (stripped, NFKC, case-folded) that is unique, so
``D9CUP`` or ``d9Cup`` beside ``d9cup`` is refused (a bot's key is unique among its owner's
bots). A key in Python, not ``lower(name)`` in SQL: names are in any script, and SQLite's
``lower`` folds ASCII only.

Rows whose names already share a key keep working under their exact names: the oldest (the
lowest id) gets the plain key, each other one the key followed by ``#`` and its id (``#`` is
in no name, so no new name can take it).

Revision ID: 0022
Revises: 0021
Create Date: 2026-11-29 00:10:00
"""

from __future__ import annotations

import unicodedata

import sqlalchemy as sa
from alembic import op

revision: str = "0022"
down_revision: str | None = "0021"
branch_labels: str | None = None
depends_on: str | None = None

#: The tables given a key, and the column the key is unique within (None: the whole table).
TABLES = (("competitions", None), ("classes", None), ("bots", "owner_id"))


def _key(name: str) -> str:
    """arena.compete.names.name_key as of this migration (kept here: a migration must not
    change when the code does)."""
    folded = unicodedata.normalize("NFKC", name.strip()).casefold()
    return unicodedata.normalize("NFKC", folded)


def _fill_keys(name: str, within: str | None) -> None:
    columns: list[sa.ColumnClause[object]] = [
        sa.column("id", sa.Integer()),
        sa.column("name", sa.String()),
        sa.column("name_key", sa.String()),
    ]
    if within is not None:
        columns.append(sa.column(within, sa.Integer()))
    table = sa.table(name, *columns)
    scope = table.c[within] if within is not None else sa.literal(0)
    bind = op.get_bind()
    rows = bind.execute(sa.select(table.c.id, table.c.name, scope).order_by(table.c.id)).all()
    seen: set[tuple[object, str]] = set()
    for row_id, row_name, group in rows:
        key = _key(row_name)
        if (group, key) in seen:
            key = f"{key}#{row_id}"
        seen.add((group, key))
        bind.execute(table.update().where(table.c.id == row_id).values(name_key=key))


def upgrade() -> None:
    # Added NOT NULL with a default and made unique by an index: no copy of the table
    # (SQLite's batch mode would drop a table other tables' foreign keys name).
    for name, within in TABLES:
        op.add_column(
            name, sa.Column("name_key", sa.String(length=200), nullable=False, server_default="")
        )
        _fill_keys(name, within)
    op.create_index(op.f("ix_competitions_name_key"), "competitions", ["name_key"], unique=True)
    op.create_index(op.f("ix_classes_name_key"), "classes", ["name_key"], unique=True)
    op.create_index("uq_bots_owner_name_key", "bots", ["owner_id", "name_key"], unique=True)
    op.add_column("competitions", sa.Column("earlier_finals", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("competitions") as batch:
        batch.drop_column("earlier_finals")
    op.drop_index("uq_bots_owner_name_key", table_name="bots")
    op.drop_index(op.f("ix_classes_name_key"), table_name="classes")
    op.drop_index(op.f("ix_competitions_name_key"), table_name="competitions")
    for name, _ in reversed(TABLES):
        with op.batch_alter_table(name) as batch:
            batch.drop_column("name_key")
