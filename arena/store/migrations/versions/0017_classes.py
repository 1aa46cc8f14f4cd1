"""Classes and graded assignments (arena.service.classes, arena.service.assignments): a
class with its teachers, students and join code; an assignment, its submissions and each
submission's gauntlet (one test a reference); accounts that must change a first-time
password, and a role a user asked for.

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-25 23:45:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0017"
down_revision: str | None = "0016"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.create_table(
        "classes",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("description", sa.Text(), nullable=True),
        sa.Column("created_by", sa.Integer(), nullable=True),
        sa.Column("rule_sets", sa.JSON(), nullable=False),
        sa.Column("join_code", sa.String(length=32), nullable=True),
        sa.Column("join_expires", sa.DateTime(timezone=True), nullable=True),
        sa.Column("settings", sa.JSON(), nullable=False),
        sa.Column("created", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["created_by"], ["users.id"], name=op.f("fk_classes_created_by_users")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_classes")),
        sa.UniqueConstraint("join_code", name=op.f("uq_classes_join_code")),
        sa.UniqueConstraint("name", name=op.f("uq_classes_name")),
    )
    op.create_table(
        "assignments",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("class_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("description", sa.Text(), nullable=True),
        sa.Column("created_by", sa.Integer(), nullable=True),
        sa.Column("rule_set_id", sa.Integer(), nullable=False),
        sa.Column("players", sa.Integer(), nullable=False),
        sa.Column("teams", sa.Boolean(), nullable=False),
        sa.Column("settings", sa.JSON(), nullable=False),
        sa.Column("references", sa.JSON(), nullable=False),
        sa.Column("grades", sa.JSON(), nullable=False),
        sa.Column("opens", sa.DateTime(timezone=True), nullable=False),
        sa.Column("deadline", sa.DateTime(timezone=True), nullable=False),
        sa.Column("time_zone", sa.String(length=64), nullable=False),
        sa.Column("seed", sa.BigInteger(), nullable=False),
        sa.Column("created", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["class_id"], ["classes.id"], name=op.f("fk_assignments_class_id_classes")
        ),
        sa.ForeignKeyConstraint(
            ["created_by"], ["users.id"], name=op.f("fk_assignments_created_by_users")
        ),
        sa.ForeignKeyConstraint(
            ["rule_set_id"], ["rule_sets.id"], name=op.f("fk_assignments_rule_set_id_rule_sets")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_assignments")),
        sa.UniqueConstraint("class_id", "name", name=op.f("uq_assignments_class_id_name")),
    )
    op.create_table(
        "class_members",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("class_id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("real_name", sa.String(length=200), nullable=True),
        sa.Column("via", sa.String(length=10), nullable=False),
        sa.Column("joined", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["class_id"], ["classes.id"], name=op.f("fk_class_members_class_id_classes")
        ),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_class_members_user_id_users")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_class_members")),
        sa.UniqueConstraint("class_id", "user_id", name=op.f("uq_class_members_class_id_user_id")),
    )
    with op.batch_alter_table("class_members", schema=None) as batch_op:
        batch_op.create_index("ix_class_members_user", ["user_id"], unique=False)

    op.create_table(
        "class_teachers",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("class_id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("added", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["class_id"], ["classes.id"], name=op.f("fk_class_teachers_class_id_classes")
        ),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_class_teachers_user_id_users")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_class_teachers")),
        sa.UniqueConstraint("class_id", "user_id", name=op.f("uq_class_teachers_class_id_user_id")),
    )
    with op.batch_alter_table("class_teachers", schema=None) as batch_op:
        batch_op.create_index("ix_class_teachers_user", ["user_id"], unique=False)

    op.create_table(
        "assignment_submissions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("assignment_id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("upload_id", sa.Integer(), nullable=True),
        sa.Column("bot_version_id", sa.Integer(), nullable=True),
        sa.Column("status", sa.String(length=20), nullable=False),
        sa.Column("late", sa.Boolean(), server_default=sa.false(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("grade", sa.String(length=20), nullable=True),
        sa.Column("created", sa.DateTime(timezone=True), nullable=False),
        sa.Column("accepted", sa.DateTime(timezone=True), nullable=True),
        sa.Column("graded", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["assignment_id"],
            ["assignments.id"],
            name=op.f("fk_assignment_submissions_assignment_id_assignments"),
        ),
        sa.ForeignKeyConstraint(
            ["bot_version_id"],
            ["bot_versions.id"],
            name=op.f("fk_assignment_submissions_bot_version_id_bot_versions"),
        ),
        sa.ForeignKeyConstraint(
            ["upload_id"], ["uploads.id"], name=op.f("fk_assignment_submissions_upload_id_uploads")
        ),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_assignment_submissions_user_id_users")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_assignment_submissions")),
    )
    with op.batch_alter_table("assignment_submissions", schema=None) as batch_op:
        batch_op.create_index("ix_assignment_submissions_status", ["status"], unique=False)
        batch_op.create_index("ix_assignment_submissions_upload", ["upload_id"], unique=False)
        batch_op.create_index(
            "ix_assignment_submissions_user", ["assignment_id", "user_id", "created"], unique=False
        )

    op.create_table(
        "submission_tests",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("submission_id", sa.Integer(), nullable=False),
        sa.Column("reference", sa.String(length=100), nullable=False),
        sa.Column("tournament_id", sa.Integer(), nullable=False),
        sa.Column("verdict", sa.String(length=20), nullable=True),
        sa.Column("summary", sa.JSON(), nullable=True),
        sa.ForeignKeyConstraint(
            ["submission_id"],
            ["assignment_submissions.id"],
            name=op.f("fk_submission_tests_submission_id_assignment_submissions"),
        ),
        sa.ForeignKeyConstraint(
            ["tournament_id"],
            ["tournaments.id"],
            name=op.f("fk_submission_tests_tournament_id_tournaments"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_submission_tests")),
        sa.UniqueConstraint(
            "submission_id", "reference", name=op.f("uq_submission_tests_submission_id_reference")
        ),
        sa.UniqueConstraint("tournament_id", name=op.f("uq_submission_tests_tournament_id")),
    )
    # Added with op.add_column, no batch: SQLite's batch mode copies the users table, and
    # dropping it breaks the foreign keys of bots, uploads... (as migration 0014 says).
    op.add_column(
        "users",
        sa.Column("must_change_password", sa.Boolean(), server_default=sa.false(), nullable=False),
    )
    op.add_column("users", sa.Column("requested_role", sa.String(length=20), nullable=True))
    op.add_column("users", sa.Column("requested_at", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("users", schema=None) as batch_op:
        batch_op.drop_column("requested_at")
        batch_op.drop_column("requested_role")
        batch_op.drop_column("must_change_password")

    op.drop_table("submission_tests")
    with op.batch_alter_table("assignment_submissions", schema=None) as batch_op:
        batch_op.drop_index("ix_assignment_submissions_user")
        batch_op.drop_index("ix_assignment_submissions_upload")
        batch_op.drop_index("ix_assignment_submissions_status")

    op.drop_table("assignment_submissions")
    with op.batch_alter_table("class_teachers", schema=None) as batch_op:
        batch_op.drop_index("ix_class_teachers_user")

    op.drop_table("class_teachers")
    with op.batch_alter_table("class_members", schema=None) as batch_op:
        batch_op.drop_index("ix_class_members_user")

    op.drop_table("class_members")
    op.drop_table("assignments")
    op.drop_table("classes")
