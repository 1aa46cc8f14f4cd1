"""Rows written in raw SQL, for databases built at an old revision whose schema the models
no longer describe (the migrations' tests, benchmarks/storage.py)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import text
from sqlalchemy.orm import Session


def insert_row(session: Session, table: str, **values: Any) -> int:
    """A row of ``table`` with ``values``; its id."""
    columns = ", ".join(f'"{name}"' for name in values)  # (``references`` is a keyword)
    marks = ", ".join(f":{name}" for name in values)
    sql = f"INSERT INTO {table} ({columns}) VALUES ({marks}) RETURNING id"
    return int(session.execute(text(sql), values).scalar_one())
