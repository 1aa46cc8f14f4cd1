"""Game records at rest: written as the compact bytes of :mod:`arena.engine.codec` in
``game_records.data``, read back here and nowhere else, and the conversion of the rows
stored as JSON before migration 0024.

Every reader of a record (a game's page and the API, exports, branches, the ratings'
margins and lucks) goes through :func:`load_records` or :func:`load_record`, which decode
what they read: the JSON a reader gets is the record as it was stored, byte for byte after
canonical serialisation (:func:`arena.engine.codec.canonical`). A game with no row has no
record: never stored, or pruned.

A custom rule set (or a preset with an override) is written by its digest when the
``rule_sets`` table holds it under the record's name: :class:`StoredRules` is the codec's
rules table read from that table, one rule set the first time it is needed, kept on the
:class:`~arena.store.db.Store` (a stored rule set never changes: its version is the hash
of its parameters, its name the first one stored).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy import ColumnElement, bindparam, func, null, select, text, update
from sqlalchemy.orm import Session

from arena.engine.codec import FALLBACK, canonical, decode, encode
from arena.engine.rules import PRESETS
from arena.errors import DatabaseError
from arena.store.models import GameRecord, Match, RuleSet

if TYPE_CHECKING:
    from arena.store.db import Store

__all__ = [
    "CONVERT_BATCH",
    "Conversion",
    "StoredRules",
    "convert_records",
    "encode_records",
    "load_record",
    "load_records",
    "sqlite_free_bytes",
    "unconverted_records",
]

#: Rows the conversion reads, encodes and writes back in one short transaction.
CONVERT_BATCH = 200
#: Rows a bulk read fetches from the database at a time.
_YIELD_PER = 500
_PRESET_VERSIONS = frozenset(rules.version for rules in PRESETS.values())


class StoredRules(Mapping[str, Mapping[str, Any]]):
    """The codec's rules table (:data:`arena.engine.codec.RulesTable`) over the
    ``rule_sets`` table: a digest's entry is read once, with ``session`` if given (else
    a read of its own), and kept in ``store.rules_cache``. The presets of this code are
    never looked up: the codec knows them."""

    def __init__(self, store: Store, session: Session | None = None) -> None:
        self._store = store
        self._session = session
        self._missing: set[str] = set()

    def __getitem__(self, version: str) -> Mapping[str, Any]:
        cache = self._store.rules_cache
        entry = cache.get(version)
        if entry is not None:
            return entry
        if version in _PRESET_VERSIONS or version in self._missing:
            raise KeyError(version)
        query = select(RuleSet.name, RuleSet.params).where(RuleSet.version == version)
        if self._session is not None:
            row = self._session.execute(query).first()
        else:
            with self._store.read() as session:
                row = session.execute(query).first()
        if row is None:
            self._missing.add(version)
            raise KeyError(version)
        entry = {"name": row.name, "version": version, "params": row.params}
        cache[version] = entry
        return entry

    def __iter__(self) -> Iterator[str]:
        return iter(self._store.rules_cache)

    def __len__(self) -> int:
        return len(self._store.rules_cache)


def encode_records(store: Store, records: Iterable[Mapping[str, Any]]) -> list[bytes]:
    """Each record as the bytes stored in ``game_records.data``: call it before the write
    transaction (encoding replays each game once, a millisecond or two)."""
    table = StoredRules(store)
    return [encode(record, table) for record in records]


def _record(table: StoredRules, data: bytes | None, record: Any) -> dict[str, Any]:
    """The record a row holds: its compact bytes decoded, else its JSON (not converted yet).

    Raises:
        ParseError: the bytes are corrupt or name a rule set nobody stored.
    """
    if data is not None:
        return decode(data, table)
    if not isinstance(record, dict):
        raise DatabaseError("a game_records row holds neither compact bytes nor a JSON record")
    return record


def load_records(
    store: Store, session: Session, *where: ColumnElement[bool]
) -> Iterator[tuple[int, int, dict[str, Any]]]:
    """(match id, game index, record) of every stored game matching ``where`` (conditions
    on :class:`~arena.store.models.GameRecord`, and on tables it is joined to by
    ``match_id``: :class:`~arena.store.models.Match`), by match id then game index,
    fetched a batch at a time and decoded one by one, in ``session``'s read."""
    query = (
        select(GameRecord.match_id, GameRecord.game_index, GameRecord.data, GameRecord.record)
        .join(Match, Match.id == GameRecord.match_id)
        .where(*where)
        .order_by(GameRecord.match_id, GameRecord.game_index)
        .execution_options(yield_per=_YIELD_PER)
    )
    table = StoredRules(store, session)
    for match_id, index, data, record in session.execute(query):
        yield match_id, index, _record(table, data, record)


def load_record(store: Store, session: Session, match_id: int, index: int) -> dict[str, Any] | None:
    """Game ``index`` of match ``match_id``'s record, or None: no row (never stored, or
    pruned)."""
    row = session.execute(
        select(GameRecord.data, GameRecord.record).where(
            GameRecord.match_id == match_id, GameRecord.game_index == index
        )
    ).first()
    if row is None:
        return None
    return _record(StoredRules(store, session), row.data, row.record)


# --- the conversion of a living database ---------------------------------------------


@dataclass(frozen=True, slots=True)
class Conversion:
    """What :func:`convert_records` did: rows converted, their JSON's bytes and their
    compact bytes, and how long it took."""

    converted: int
    json_bytes: int
    compact_bytes: int
    seconds: float


def unconverted_records(store: Store) -> int:
    """Rows that still hold their record as JSON (stored before migration 0024)."""
    with store.read() as session:
        return int(
            session.scalar(
                select(func.count()).select_from(GameRecord).where(GameRecord.data.is_(None))
            )
            or 0
        )


def convert_records(
    store: Store,
    *,
    batch: int = CONVERT_BATCH,
    progress: Callable[[int], None] | None = None,
) -> Conversion:
    """Convert every row still holding its record as JSON to the compact bytes, ``batch``
    rows a transaction, in the order of their ids; ``progress(n)`` after each batch, ``n``
    the rows it converted.

    Each row is read and encoded outside any write transaction, and written only if its
    bytes decode to the stored record, byte for byte after canonical serialisation
    (:func:`~arena.engine.codec.encode` checks its compact encoding so, with the same rules
    table, and takes the fallback otherwise; the fallback is checked here): then
    its ``data`` is set and its JSON dropped, in a short transaction that changes a row only
    while it still holds no ``data`` (a second conversion running at the same time, or one
    resumed after a kill, converts each row once). Killed at any point, it loses nothing:
    rows are JSON or verified bytes, and the next run goes on from the first JSON row.
    The server may serve meanwhile: readers take either form.

    Raises:
        DatabaseError: a record does not come back identical (nothing of its batch is
            written); never expected, since :func:`~arena.engine.codec.encode` falls back
            to compressed JSON for whatever its compact form cannot hold.
    """
    started = time.perf_counter()
    table = StoredRules(store)
    last, converted, before, after = 0, 0, 0, 0
    while True:
        with store.read() as session:
            rows = session.execute(
                select(GameRecord.id, GameRecord.record)
                .where(GameRecord.id > last, GameRecord.data.is_(None))
                .order_by(GameRecord.id)
                .limit(batch)
            ).all()
        if not rows:
            break
        changes = []
        for row_id, record in rows:
            text_before = canonical(record)
            data = encode(record, table)
            # encode checked that a compact encoding decodes to the record with this table
            # (and took the fallback unless it came back identical): check the fallback here
            if data[0] == FALLBACK and canonical(decode(data, table)) != text_before:
                raise DatabaseError(
                    f"game record row {row_id} does not come back identical from its compact "
                    "bytes: nothing of its batch was converted (please report it)"
                )
            changes.append({"row": row_id, "bytes": data})
            before += len(text_before.encode())
            after += len(data)
        with store.write() as session:
            session.connection().execute(
                update(GameRecord)
                .where(GameRecord.id == bindparam("row"), GameRecord.data.is_(None))
                .values(data=bindparam("bytes"), record=null()),
                changes,
            )
        last = rows[-1].id
        converted += len(rows)
        if progress is not None:
            progress(len(rows))
    return Conversion(converted, before, after, time.perf_counter() - started)


def sqlite_free_bytes(store: Store) -> int | None:
    """The bytes of a SQLite file's free pages (reused for new rows; the file shrinks only
    by ``VACUUM``); None on PostgreSQL."""
    if store.dialect != "sqlite":
        return None
    with store.read() as session:
        pages = session.scalar(text("PRAGMA freelist_count")) or 0
        size = session.scalar(text("PRAGMA page_size")) or 0
    return int(pages) * int(size)
