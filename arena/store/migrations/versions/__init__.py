"""One Alembic revision a file, oldest first."""
