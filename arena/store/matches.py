"""Reads and writes that :mod:`arena.service.matches` needs beside the match queue: stored
bot versions by reference, their sources, a match's status, a tournament by name, and the
workers' heartbeat rows.

Queries live in the store (docs/architecture.md): callers get plain values and detached
rows, never a session.
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime

from sqlalchemy import select

from arena.store.db import Store, as_utc
from arena.store.models import Bot, BotVersion, Match, Tournament, User, Worker

__all__ = [
    "bot_sources",
    "finished_rule_set",
    "latest_tournament_names",
    "match_status",
    "record_worker_alive",
    "record_worker_stopped",
    "tournament_id_named",
    "tournament_named",
    "versions_named",
    "worker_rows",
]


def versions_named(store: Store, names: Collection[str]) -> list[tuple[str, str, int, int]]:
    """Every stored version of the bots called one of ``names``, in one query, as (owner's
    name, bot name, version number, bot version id), the highest version first."""
    if not names:
        return []
    query = (
        select(User.name, Bot.name, BotVersion.version, BotVersion.id)
        .join(Bot, Bot.owner_id == User.id)
        .join(BotVersion, BotVersion.bot_id == Bot.id)
        .where(Bot.name.in_(set(names)))
        .order_by(BotVersion.version.desc(), BotVersion.id.desc())
    )
    with store.read() as session:
        rows = session.execute(query).all()
    return [(str(o), str(b), int(v), int(i)) for o, b, v, i in rows]


def bot_sources(store: Store, version_ids: Collection[int]) -> list[tuple[int, str, str, str]]:
    """The stored ones of these bot versions as (id, source's sha256, source, runtime)."""
    with store.read() as session:
        rows = session.execute(
            select(BotVersion.id, BotVersion.sha256, BotVersion.source, BotVersion.runtime).where(
                BotVersion.id.in_(set(version_ids))
            )
        ).all()
    return [
        (int(version_id), str(digest), str(source), str(runtime))
        for version_id, digest, source, runtime in rows
    ]


def match_status(store: Store, match_id: int) -> str | None:
    """The match's status (None: no such match)."""
    with store.read() as session:
        status: str | None = session.scalar(select(Match.status).where(Match.id == match_id))
        return status


def finished_rule_set(store: Store, match_id: int) -> int | None:
    """The rule set's id if the match's tournament is done (its ratings are due for a
    refit), else None."""
    with store.read() as session:
        row = session.execute(
            select(Tournament.status, Tournament.rule_set_id)
            .join(Match, Match.tournament_id == Tournament.id)
            .where(Match.id == match_id)
        ).first()
    return int(row[1]) if row is not None and row[0] == "done" else None


def tournament_named(store: Store, name: str) -> Tournament | None:
    """The tournament called ``name`` (detached: read its columns only), or None."""
    with store.read() as session:
        return session.scalar(select(Tournament).where(Tournament.name == name))


def latest_tournament_names(store: Store, limit: int = 5) -> list[str]:
    """The names of the ``limit`` newest tournaments, newest first."""
    with store.read() as session:
        return list(
            session.scalars(select(Tournament.name).order_by(Tournament.id.desc()).limit(limit))
        )


def record_worker_alive(
    store: Store,
    name: str,
    *,
    host: str,
    pid: int,
    concurrency: int,
    now: datetime,
    started: datetime | None = None,
) -> None:
    """Worker ``name`` is alive (``online``, ``last_seen`` now), registered (``started``: its
    start, by default now) if it is new, was stopped, or is a new life of a worker that died
    under that name (a container restarted after a crash keeps its host name and its pids:
    the row's start is older than ``started``); one transaction, the row locked on
    PostgreSQL."""
    with store.write() as session:
        worker = session.get(Worker, name, with_for_update=store.dialect == "postgresql")
        reborn = worker is not None and started is not None and as_utc(worker.started) < started
        if worker is None or worker.status != "online" or reborn:
            session.merge(
                Worker(
                    name=name,
                    host=host,
                    pid=pid,
                    concurrency=concurrency,
                    status="online",
                    started=now if started is None else started,
                    last_seen=now,
                )
            )
        else:
            worker.last_seen = now


def record_worker_stopped(store: Store, name: str, now: datetime) -> None:
    """Worker ``name`` stopped cleanly at ``now`` (nothing if it was never recorded)."""
    with store.write() as session:
        worker = session.get(Worker, name)
        if worker is not None:
            worker.status, worker.last_seen = "stopped", now


_WORKERS = select(Worker).order_by(Worker.last_seen.desc())


def worker_rows(store: Store) -> list[Worker]:
    """Every worker ever recorded (detached rows), the most recently seen first."""
    with store.read() as session:
        return list(session.scalars(_WORKERS))


def tournament_id_named(store: Store, name: str) -> int | None:
    """The id of the tournament called ``name``, or None."""
    with store.read() as session:
        found = session.scalar(select(Tournament.id).where(Tournament.name == name))
    return None if found is None else int(found)
