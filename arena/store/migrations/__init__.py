"""Alembic migrations of the arena database (run by :func:`arena.store.upgrade`)."""
