"""A class member's school id and section (arena.service.classes.import_roster): the id a
school's system gives the student (an SIS id, a student number or an e-mail), unique within
its class, which makes a roster imported again update its students instead of making them
twice; the section (a group, a period) the school's file puts the student in.

Revision ID: 0020
Revises: 0019
Create Date: 2026-11-28 21:10:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0020"
down_revision: str | None = "0019"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.add_column("class_members", sa.Column("school_id", sa.String(length=200), nullable=True))
    op.add_column("class_members", sa.Column("section", sa.String(length=200), nullable=True))
    op.create_index(
        "uq_class_members_school_id", "class_members", ["class_id", "school_id"], unique=True
    )


def downgrade() -> None:
    op.drop_index("uq_class_members_school_id", table_name="class_members")
    with op.batch_alter_table("class_members") as batch_op:
        batch_op.drop_column("section")
        batch_op.drop_column("school_id")
