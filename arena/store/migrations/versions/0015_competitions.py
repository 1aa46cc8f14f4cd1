"""Competitions (arena.service.competitions): the competition, its entries (one bot version
a user entered, or the upload being checked to become one) and its ladder's rating history.

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-25 20:45:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0015"
down_revision: str | None = "0014"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.create_table(
        "competitions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("description", sa.Text(), nullable=True),
        sa.Column("owner_id", sa.Integer(), nullable=True),
        sa.Column("rule_set_id", sa.Integer(), nullable=False),
        sa.Column("players", sa.Integer(), nullable=False),
        sa.Column("teams", sa.Boolean(), nullable=False),
        sa.Column("settings", sa.JSON(), nullable=False),
        sa.Column("opens", sa.DateTime(timezone=True), nullable=False),
        sa.Column("deadline", sa.DateTime(timezone=True), nullable=False),
        sa.Column("time_zone", sa.String(length=64), nullable=False),
        sa.Column("daily_submissions", sa.Integer(), nullable=False),
        sa.Column("sources_public", sa.Boolean(), server_default=sa.false(), nullable=False),
        sa.Column("final_top", sa.Integer(), nullable=False),
        sa.Column("final_confidence", sa.Float(), nullable=False),
        sa.Column("final_max_games", sa.Integer(), nullable=False),
        sa.Column("seed", sa.BigInteger(), nullable=False),
        sa.Column("status", sa.String(length=20), nullable=False),
        sa.Column("ladder_id", sa.Integer(), nullable=False),
        sa.Column("final_id", sa.Integer(), nullable=True),
        sa.Column("standings", sa.JSON(), nullable=True),
        sa.Column("standings_computed", sa.DateTime(timezone=True), nullable=True),
        sa.Column("final_table", sa.JSON(), nullable=True),
        sa.Column("created", sa.DateTime(timezone=True), nullable=False),
        sa.Column("closed", sa.DateTime(timezone=True), nullable=True),
        sa.Column("finished", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["final_id"], ["tournaments.id"], name=op.f("fk_competitions_final_id_tournaments")
        ),
        sa.ForeignKeyConstraint(
            ["ladder_id"], ["tournaments.id"], name=op.f("fk_competitions_ladder_id_tournaments")
        ),
        sa.ForeignKeyConstraint(
            ["owner_id"], ["users.id"], name=op.f("fk_competitions_owner_id_users")
        ),
        sa.ForeignKeyConstraint(
            ["rule_set_id"], ["rule_sets.id"], name=op.f("fk_competitions_rule_set_id_rule_sets")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_competitions")),
        sa.UniqueConstraint("name", name=op.f("uq_competitions_name")),
    )
    with op.batch_alter_table("competitions", schema=None) as batch_op:
        batch_op.create_index("ix_competitions_status", ["status"], unique=False)

    op.create_table(
        "competition_ratings",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("competition_id", sa.Integer(), nullable=False),
        sa.Column("bot_version_id", sa.Integer(), nullable=False),
        sa.Column("rating", sa.Float(), nullable=False),
        sa.Column("low", sa.Float(), nullable=False),
        sa.Column("high", sa.Float(), nullable=False),
        sa.Column("games", sa.Integer(), nullable=False),
        sa.Column("rank", sa.Integer(), nullable=False),
        sa.Column("time", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["bot_version_id"],
            ["bot_versions.id"],
            name=op.f("fk_competition_ratings_bot_version_id_bot_versions"),
        ),
        sa.ForeignKeyConstraint(
            ["competition_id"],
            ["competitions.id"],
            name=op.f("fk_competition_ratings_competition_id_competitions"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_competition_ratings")),
    )
    with op.batch_alter_table("competition_ratings", schema=None) as batch_op:
        batch_op.create_index(
            "ix_competition_ratings_key", ["competition_id", "bot_version_id", "time"], unique=False
        )

    op.create_table(
        "competition_entries",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("competition_id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("upload_id", sa.Integer(), nullable=True),
        sa.Column("bot_version_id", sa.Integer(), nullable=True),
        sa.Column("status", sa.String(length=20), nullable=False),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("created", sa.DateTime(timezone=True), nullable=False),
        sa.Column("accepted", sa.DateTime(timezone=True), nullable=True),
        sa.Column("first_rated", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["bot_version_id"],
            ["bot_versions.id"],
            name=op.f("fk_competition_entries_bot_version_id_bot_versions"),
        ),
        sa.ForeignKeyConstraint(
            ["competition_id"],
            ["competitions.id"],
            name=op.f("fk_competition_entries_competition_id_competitions"),
        ),
        sa.ForeignKeyConstraint(
            ["upload_id"], ["uploads.id"], name=op.f("fk_competition_entries_upload_id_uploads")
        ),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_competition_entries_user_id_users")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_competition_entries")),
    )
    with op.batch_alter_table("competition_entries", schema=None) as batch_op:
        batch_op.create_index(
            "ix_competition_entries_status", ["competition_id", "status"], unique=False
        )
        batch_op.create_index("ix_competition_entries_upload", ["upload_id"], unique=False)
        batch_op.create_index(
            "ix_competition_entries_user", ["competition_id", "user_id", "created"], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table("competition_entries", schema=None) as batch_op:
        batch_op.drop_index("ix_competition_entries_user")
        batch_op.drop_index("ix_competition_entries_upload")
        batch_op.drop_index("ix_competition_entries_status")

    op.drop_table("competition_entries")
    with op.batch_alter_table("competition_ratings", schema=None) as batch_op:
        batch_op.drop_index("ix_competition_ratings_key")

    op.drop_table("competition_ratings")
    with op.batch_alter_table("competitions", schema=None) as batch_op:
        batch_op.drop_index("ix_competitions_status")

    op.drop_table("competitions")
