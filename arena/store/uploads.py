"""The uploads table: a bot file uploaded over the web, its check's lease on a worker, its
outcome; and the reads behind a new version's placement tournament.

Queries live in the store (docs/architecture.md): callers get plain values and detached
rows, never a session. Each function is one transaction.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import and_, func, or_, select, update

from arena.store.db import Store, renew_lease
from arena.store.models import Bot, BotVersion, RuleSet, Upload, User
from arena.store.models import Rating as RatingRow

__all__ = [
    "AcceptedVersion",
    "accepted_version",
    "claim_upload",
    "due_uploads",
    "finish_upload",
    "insert_upload",
    "latest_versions",
    "mark_sent",
    "ratings_under",
    "release_upload",
    "renew_upload",
    "upload_with_version",
]


def insert_upload(
    store: Store,
    owner_id: int,
    bot_name: str,
    filename: str,
    source: str,
    digest: str,
    runtime: str = "python",
) -> int:
    """Store an upload of ``source`` (its sha256 ``digest``, to run under ``runtime``) for the
    owner's bot ``bot_name``; return its id. It is ``pending``, or ``already`` (finished now,
    with the version) when the bot has a version with this very source: one transaction.
    An ``already`` upload takes that version's runtime, which stays what it was; if it is
    not ``runtime``, the upload's message says so."""
    with store.write() as session:
        existing = session.execute(
            select(BotVersion.id, BotVersion.version, BotVersion.runtime)
            .join(Bot, Bot.id == BotVersion.bot_id)
            .where(Bot.owner_id == owner_id, Bot.name == bot_name, BotVersion.sha256 == digest)
        ).first()
        message = None
        if existing is not None and existing.runtime != runtime:
            message = (
                f"This source is already version {existing.version}, a {existing.runtime} bot: "
                f"it stays {existing.runtime} (a version's runtime never changes; to run it "
                f"under {runtime}, upload it as another bot)."
            )
        upload = Upload(
            owner_id=owner_id,
            bot_name=bot_name,
            filename=filename[:200],
            source=source,
            sha256=digest,
            runtime=runtime if existing is None else existing.runtime,
            status="pending" if existing is None else "already",
            message=message,
            bot_version_id=None if existing is None else existing.id,
            finished=None if existing is None else datetime.now(UTC),
        )
        session.add(upload)
        session.flush()
        return int(upload.id)


def due_uploads(store: Store, *, cutoff: datetime, now: datetime) -> list[int]:
    """Pending uploads never sent, or last sent before ``cutoff`` and holding no lease, or
    whose lease ran out before ``now``; by id."""
    with store.read() as session:
        return list(
            session.scalars(
                select(Upload.id)
                .where(Upload.status == "pending")
                .where(
                    or_(
                        and_(
                            Upload.lease_expires.is_(None),
                            or_(Upload.sent.is_(None), Upload.sent < cutoff),
                        ),
                        Upload.lease_expires < now,
                    )
                )
                .order_by(Upload.id)
            )
        )


def mark_sent(store: Store, upload_ids: Sequence[int]) -> None:
    """Record that these uploads' checks were sent now (a lease that ran out is dropped:
    the check starts afresh)."""
    if upload_ids:
        now = datetime.now(UTC)
        with store.write() as session:
            session.execute(update(Upload).where(Upload.id.in_(upload_ids)).values(sent=now))
            session.execute(
                update(Upload)
                .where(Upload.id.in_(upload_ids), Upload.lease_expires < now)
                .values(lease_expires=None)
            )


def claim_upload(store: Store, upload_id: int, *, lease_seconds: float) -> bool:
    """Lease a pending upload's check to the caller for ``lease_seconds``; return False if
    it is not pending or another worker's lease on it holds."""
    now = datetime.now(UTC)
    with store.write() as session:
        taken = session.execute(
            update(Upload)
            .where(
                Upload.id == upload_id,
                Upload.status == "pending",
                or_(Upload.lease_expires.is_(None), Upload.lease_expires < now),
            )
            .values(lease_expires=now + timedelta(seconds=lease_seconds))
        )
        return bool(getattr(taken, "rowcount", 0))


def renew_upload(store: Store, upload_id: int, *, lease_seconds: float) -> bool:
    """Extend the check's lease; return False once the upload is no longer pending."""
    return renew_lease(store, Upload, upload_id, "pending", lease_seconds=lease_seconds)


def release_upload(store: Store, upload_id: int) -> None:
    """Drop the check's lease (it failed to run: the retry, or the sweep, takes it)."""
    with store.write() as session:
        session.execute(
            update(Upload)
            .where(Upload.id == upload_id, Upload.status == "pending")
            .values(lease_expires=None)
        )


def finish_upload(
    store: Store,
    upload_id: int,
    status: str,
    report: dict[str, Any],
    message: str | None,
    version_id: int | None,
) -> None:
    """Store a pending upload's outcome (nothing if it is no longer pending)."""
    with store.write() as session:
        session.execute(
            update(Upload)
            .where(Upload.id == upload_id, Upload.status == "pending")
            .values(
                status=status,
                report=report,
                message=message,
                bot_version_id=version_id,
                finished=datetime.now(UTC),
                lease_expires=None,
            )
        )


def upload_with_version(store: Store, upload_id: int) -> tuple[Upload, str, int | None] | None:
    """The upload (detached), its owner's name and its bot version's number (None: not
    stored as a version), or None."""
    with store.read() as session:
        row = session.execute(
            select(Upload, User.name, BotVersion.version)
            .join(User, User.id == Upload.owner_id)
            .outerjoin(BotVersion, BotVersion.id == Upload.bot_version_id)
            .where(Upload.id == upload_id)
        ).first()
    if row is None:
        return None
    upload, owner, version = row
    return upload, str(owner), None if version is None else int(version)


@dataclass(frozen=True, slots=True)
class AcceptedVersion:
    """The bot version an accepted upload was stored as."""

    owner: str
    bot: str
    bot_id: int
    version: int
    #: The version's id (``bot_versions.id``).
    version_id: int


def accepted_version(store: Store, upload_id: int) -> AcceptedVersion | None:
    """The version the upload was stored as, or None (no such upload, or not accepted)."""
    with store.read() as session:
        row = session.execute(
            select(User.name, Bot.name, Bot.id, BotVersion.version, BotVersion.id)
            .join(Bot, Bot.id == BotVersion.bot_id)
            .join(User, User.id == Bot.owner_id)
            .join(Upload, Upload.bot_version_id == BotVersion.id)
            .where(Upload.id == upload_id, Upload.status == "accepted")
        ).first()
    if row is None:
        return None
    owner, bot, bot_id, version, version_id = row
    return AcceptedVersion(str(owner), str(bot), int(bot_id), int(version), int(version_id))


def ratings_under(store: Store, rules_version: str) -> dict[int, float]:
    """Each rated bot version's rating under the rule sets of ``rules_version``."""
    with store.read() as session:
        return {
            int(version_id): float(rating)
            for version_id, rating in session.execute(
                select(RatingRow.bot_version_id, RatingRow.rating)
                .join(RuleSet, RuleSet.id == RatingRow.rule_set_id)
                .where(RuleSet.version == rules_version)
            )
        }


def latest_versions(store: Store, *, except_bot: int) -> list[tuple[str, str, int, int]]:
    """Every other bot's latest version as (owner, bot, version number, version id)."""
    with store.read() as session:
        rows = session.execute(
            select(User.name, Bot.name, func.max(BotVersion.version), func.max(BotVersion.id))
            .join(Bot, Bot.id == BotVersion.bot_id)
            .join(User, User.id == Bot.owner_id)
            .where(Bot.id != except_bot)
            .group_by(User.name, Bot.name)
        ).all()
    return [(str(o), str(b), int(v), int(i)) for o, b, v, i in rows]
