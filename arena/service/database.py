"""The database brought up to date, as ``arena db upgrade`` and ``arena serve`` do it: the
schema's migrations (:func:`arena.store.db.upgrade`), then the game records still stored as
JSON converted to compact bytes, a batch at a time (:func:`arena.store.records.convert_records`:
resumable, and the server may serve meanwhile)."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass

from arena.store.db import connect, upgrade
from arena.store.records import (
    Conversion,
    convert_records,
    sqlite_free_bytes,
    unconverted_records,
)

__all__ = ["Progress", "Upgraded", "upgrade_database"]

#: Given the records to convert, a context yielding what to call after each batch with the
#: records it converted (a progress bar's advance).
Progress = Callable[[int], AbstractContextManager[Callable[[int], None]]]


@dataclass(frozen=True, slots=True)
class Upgraded:
    """What :func:`upgrade_database` did beyond the schema."""

    #: The records converted (None: there were none to convert).
    conversion: Conversion | None
    #: A SQLite file's bytes free inside it after the conversion (None: PostgreSQL, or
    #: nothing converted): given back to the disk only by ``VACUUM``.
    free_bytes: int | None
    #: The records left to convert (not 0 only when not asked to convert).
    unconverted: int = 0


def upgrade_database(
    url: str | None = None, *, progress: Progress | None = None, convert: bool = True
) -> Upgraded:
    """Migrate the database at ``url`` to this code's schema, then convert its JSON game
    records (``progress``: told how many, then each batch); with ``convert`` False, only
    count them (``arena serve`` starts at once on a big old database, and ``arena db
    upgrade`` converts its records while it serves).

    Raises:
        DatabaseError: as :func:`arena.store.db.upgrade`; or a record that would not come
            back identical (nothing of its batch converted).
    """
    upgrade(url)
    store = connect(url)
    try:
        total = unconverted_records(store)
        if not total or not convert:
            return Upgraded(None, None, total)
        with progress(total) if progress is not None else nullcontext(None) as advance:
            done = convert_records(store, progress=advance)
        return Upgraded(done, sqlite_free_bytes(store))
    finally:
        store.close()
