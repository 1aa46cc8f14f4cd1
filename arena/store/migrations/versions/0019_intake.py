"""One intake (arena.service.intake): each upload records what it is for (``purpose``:
``placement``, ``competition``, ``assignment``; and which competition or assignment), the
keys that make a repeated upload one upload (``client_key``: the client's idempotency key;
``repeat_key``: purpose, target and source, held for a short window), and a placement
tournament points at its upload (``tournaments.upload_id``) instead of being found by name.

Existing rows are backfilled from what the workers probed until now: an upload with a
competition entry is for that competition, one with an assignment submission for that
assignment, every other one for a placement; an accepted placement upload's tournament is
the one its naming rule gives (``placement-OWNER-BOT-vN``, arena.compete.names.fit_name).

Revision ID: 0019
Revises: 0018
Create Date: 2026-11-28 18:10:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from arena.compete.names import fit_name

revision: str = "0019"
down_revision: str | None = "0018"
branch_labels: str | None = None
depends_on: str | None = None

#: The foreign keys added: (table, column, referred table).
FOREIGN_KEYS = (
    ("uploads", "competition_id", "competitions"),
    ("uploads", "assignment_id", "assignments"),
    ("tournaments", "upload_id", "uploads"),
)


def _add_reference(table: str, column: str, referred: str) -> None:
    """A nullable integer column referring to ``referred.id``. No batch on SQLite: it copies
    the table, and dropping uploads or tournaments would break the foreign keys that point
    at them (as migrations 0017 and 0018 say); SQLite adds a column with an inline, named
    REFERENCES clause instead, which is what PostgreSQL's ALTER gives."""
    name = f"fk_{table}_{column}_{referred}"
    if op.get_bind().dialect.name == "sqlite":
        op.execute(
            f"ALTER TABLE {table} ADD COLUMN {column} INTEGER "
            f"CONSTRAINT {name} REFERENCES {referred} (id)"
        )
        return
    op.add_column(table, sa.Column(column, sa.Integer(), nullable=True))
    op.create_foreign_key(name, table, referred, [column], ["id"])


def upgrade() -> None:
    op.add_column(
        "uploads",
        sa.Column("purpose", sa.String(length=20), server_default="placement", nullable=False),
    )
    for table, column, referred in FOREIGN_KEYS:
        _add_reference(table, column, referred)
    op.add_column("uploads", sa.Column("client_key", sa.String(length=100), nullable=True))
    op.add_column("uploads", sa.Column("repeat_key", sa.String(length=200), nullable=True))
    op.create_index(
        "uq_uploads_owner_client_key", "uploads", ["owner_id", "client_key"], unique=True
    )
    op.create_index(
        "uq_uploads_owner_repeat_key", "uploads", ["owner_id", "repeat_key"], unique=True
    )
    op.create_index("uq_tournaments_upload", "tournaments", ["upload_id"], unique=True)
    _backfill()


def _backfill() -> None:
    op.execute(
        "UPDATE uploads SET purpose = 'competition', competition_id = ("
        "SELECT MIN(e.competition_id) FROM competition_entries e WHERE e.upload_id = uploads.id"
        ") WHERE id IN (SELECT upload_id FROM competition_entries WHERE upload_id IS NOT NULL)"
    )
    op.execute(
        "UPDATE uploads SET purpose = 'assignment', assignment_id = ("
        "SELECT MIN(s.assignment_id) FROM assignment_submissions s "
        "WHERE s.upload_id = uploads.id"
        ") WHERE purpose = 'placement' AND id IN ("
        "SELECT upload_id FROM assignment_submissions WHERE upload_id IS NOT NULL)"
    )
    bind = op.get_bind()
    accepted = bind.execute(
        sa.text(
            "SELECT uploads.id, users.name, uploads.bot_name, bot_versions.version "
            "FROM uploads JOIN users ON users.id = uploads.owner_id "
            "JOIN bot_versions ON bot_versions.id = uploads.bot_version_id "
            "WHERE uploads.purpose = 'placement' AND uploads.status = 'accepted' "
            "ORDER BY uploads.id"
        )
    ).all()
    for upload_id, owner, bot, version in accepted:
        bind.execute(
            sa.text("UPDATE tournaments SET upload_id = :u WHERE name = :n AND upload_id IS NULL"),
            {"u": upload_id, "n": fit_name(f"placement-{owner}-{bot}-v{version}")},
        )


def downgrade() -> None:
    op.drop_index("uq_tournaments_upload", table_name="tournaments")
    op.drop_index("uq_uploads_owner_repeat_key", table_name="uploads")
    op.drop_index("uq_uploads_owner_client_key", table_name="uploads")
    with op.batch_alter_table("tournaments", schema=None) as batch_op:
        batch_op.drop_column("upload_id")
    with op.batch_alter_table("uploads", schema=None) as batch_op:
        for column in ("repeat_key", "client_key", "assignment_id", "competition_id", "purpose"):
            batch_op.drop_column(column)
