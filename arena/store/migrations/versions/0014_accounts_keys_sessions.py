"""User names compared by a key (stripped, NFKC, case-folded: one user per key) and
server-side web sessions (a row per logged-in session: logging out deletes it).

Users whose names already share a key keep working: the one that can log in (else the
oldest) gets the plain key, each other one the key followed by ``#`` and its id (``#`` is
in no name, so no new name can take it; they still log in by their exact name).

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-25 19:00:00
"""

from __future__ import annotations

import unicodedata

import sqlalchemy as sa
from alembic import op

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | None = None
depends_on: str | None = None


def _key(name: str) -> str:
    """arena.compete.names.name_key as of this migration (kept here: a migration must not
    change when the code does)."""
    folded = unicodedata.normalize("NFKC", name.strip()).casefold()
    return unicodedata.normalize("NFKC", folded)


def _fill_keys() -> None:
    users = sa.table(
        "users",
        sa.column("id", sa.Integer()),
        sa.column("name", sa.String()),
        sa.column("password_hash", sa.String()),
        sa.column("name_key", sa.String()),
    )
    bind = op.get_bind()
    rows = bind.execute(
        sa.select(users.c.id, users.c.name).order_by(users.c.password_hash.is_(None), users.c.id)
    ).all()
    seen: set[str] = set()
    for user_id, name in rows:
        key = _key(name)
        if key in seen:
            key = f"{key}#{user_id}"
        seen.add(key)
        bind.execute(users.update().where(users.c.id == user_id).values(name_key=key))


def upgrade() -> None:
    # Added NOT NULL with a default and made unique by an index: no copy of the users table
    # (SQLite's batch mode would drop the table the foreign keys of bots, uploads... name).
    op.add_column(
        "users",
        sa.Column("name_key", sa.String(length=200), nullable=False, server_default=""),
    )
    _fill_keys()
    op.create_index(op.f("ix_users_name_key"), "users", ["name_key"], unique=True)
    op.create_table(
        "user_sessions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("sha256", sa.String(length=64), nullable=False),
        sa.Column("created", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_user_sessions_user_id_users")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_user_sessions")),
        sa.UniqueConstraint("sha256", name=op.f("uq_user_sessions_sha256")),
    )
    op.create_index(op.f("ix_user_sessions_user_id"), "user_sessions", ["user_id"])


def downgrade() -> None:
    op.drop_index(op.f("ix_user_sessions_user_id"), table_name="user_sessions")
    op.drop_table("user_sessions")
    op.drop_index(op.f("ix_users_name_key"), table_name="users")
    with op.batch_alter_table("users") as batch:
        batch.drop_column("name_key")
