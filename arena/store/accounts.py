"""Reads of the accounts table that the command line shows.

Queries live in the store (docs/architecture.md): callers get plain values, never a
session.
"""

from __future__ import annotations

from sqlalchemy import select

from arena.store.db import Store
from arena.store.models import User

__all__ = ["user_rows"]


def user_rows(store: Store) -> list[tuple[str, str, bool]]:
    """Every user as (name, role, whether it can log in: has a password), by name."""
    with store.read() as session:
        rows = session.execute(
            select(User.name, User.role, User.password_hash.is_not(None)).order_by(User.name)
        ).all()
    return [(str(name), str(role), bool(can_log_in)) for name, role, can_log_in in rows]
