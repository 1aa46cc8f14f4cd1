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
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from arena.compete.names import name_key
from arena.store.competitions import (
    EnteredAlready,
    entered_source,
    lock_competition,
    within_limit,
)
from arena.store.db import Store, renew_lease
from arena.store.models import (
    Bot,
    BotVersion,
    CompetitionEntry,
    RuleSet,
    Submission,
    Tournament,
    Upload,
    User,
)
from arena.store.models import Rating as RatingRow

__all__ = [
    "AcceptedVersion",
    "NewUpload",
    "Taken",
    "accepted_version",
    "bot_named_like",
    "claim_upload",
    "due_uploads",
    "finish_upload",
    "insert_upload",
    "latest_versions",
    "mark_sent",
    "placement_of_upload",
    "ratings_under",
    "release_upload",
    "renew_upload",
    "repeated_upload",
    "upload_with_version",
    "version_of_source",
]


@dataclass(frozen=True, slots=True)
class NewUpload:
    """An upload to store (:func:`insert_upload`): whose, of what, for what, and the keys
    that make it the same upload when it is sent again."""

    owner_id: int
    bot_name: str
    filename: str
    source: str
    #: The source's sha256.
    digest: str
    runtime: str = "python"
    #: ``placement``, ``competition`` (``competition_id``) or ``assignment``
    #: (``assignment_id``): a pending entry or submission is stored with it.
    purpose: str = "placement"
    competition_id: int | None = None
    assignment_id: int | None = None
    #: The client's idempotency key (unique for the owner, kept).
    client_key: str | None = None
    #: Purpose, target and source (unique for the owner while the window lasts).
    repeat_key: str | None = None
    #: The repeat window's start: a ``repeat_key`` taken before it is released.
    window_start: datetime | None = None
    #: A competition entry's daily limit (None: none), a submission's lateness.
    entry_limit: int | None = None
    late: bool = False
    now: datetime | None = None


@dataclass(frozen=True, slots=True)
class Taken:
    """What :func:`insert_upload` did: the upload's id, and whether it was stored now
    (False: the same upload had been stored before, by its client key or repeat key)."""

    upload_id: int
    created: bool


def version_of_source(
    store: Store, owner_id: int, bot_name: str, digest: str
) -> tuple[int, int, str] | None:
    """The owner's bot's version with this very source, as (id, number, runtime), or None."""
    with store.read() as session:
        return _version_of_source(session, owner_id, bot_name, digest)


def bot_named_like(store: Store, owner_id: int, bot_name: str) -> str | None:
    """The name of the owner's bot whose name differs from ``bot_name`` only in case (the
    same :func:`arena.compete.names.name_key`), or None (no such bot, or it is spelled
    ``bot_name`` exactly)."""
    with store.read() as session:
        found = session.scalar(
            select(Bot.name).where(Bot.owner_id == owner_id, Bot.name_key == name_key(bot_name))
        )
    return None if found is None or found == bot_name else str(found)


def _version_of_source(
    session: Session, owner_id: int, bot_name: str, digest: str
) -> tuple[int, int, str] | None:
    row = session.execute(
        select(BotVersion.id, BotVersion.version, BotVersion.runtime)
        .join(Bot, Bot.id == BotVersion.bot_id)
        .where(Bot.owner_id == owner_id, Bot.name == bot_name, BotVersion.sha256 == digest)
    ).first()
    return None if row is None else (int(row.id), int(row.version), str(row.runtime))


def repeated_upload(
    store: Store,
    owner_id: int,
    *,
    client_key: str | None,
    repeat_key: str | None,
    window_start: datetime,
) -> int | None:
    """The owner's upload with this client key, or with this repeat key taken since
    ``window_start``; None if there is none."""
    with store.read() as session:
        return _repeated(session, owner_id, client_key, repeat_key, window_start)


def _repeated(
    session: Session,
    owner_id: int,
    client_key: str | None,
    repeat_key: str | None,
    window_start: datetime,
) -> int | None:
    if client_key is not None:
        found = session.scalar(
            select(Upload.id).where(Upload.owner_id == owner_id, Upload.client_key == client_key)
        )
        if found is not None:
            return int(found)
    if repeat_key is None:
        return None
    found = session.scalar(
        select(Upload.id).where(
            Upload.owner_id == owner_id,
            Upload.repeat_key == repeat_key,
            Upload.created >= window_start,
        )
    )
    return None if found is None else int(found)


def insert_upload(store: Store, new: NewUpload) -> Taken | EnteredAlready | None:
    """Store ``new`` for the owner's bot, with its competition entry or assignment
    submission (pending), in one transaction; return it. An upload with the same client
    key, or the same repeat key since the window's start, is returned instead (``created``
    False): the keys are unique for an owner, so of two sent at the same instant one is
    stored and the other returns it. Nothing is stored for a competition entry whose
    source the owner entered already (that entry is returned: an identical source is no
    new entry), nor over its daily limit (None).

    The upload is ``pending``, or ``already`` (finished now, with the version) when the bot
    has a version with this very source: an ``already`` upload takes that version's
    runtime, which stays what it was; if it is not ``new.runtime``, its message says so.
    """
    now = new.now or datetime.now(UTC)
    start = new.window_start or now
    try:
        with store.write() as session:
            if new.purpose == "competition" and new.competition_id is not None:
                lock_competition(store, session, new.competition_id)  # the limit's count
            found = _repeated(session, new.owner_id, new.client_key, new.repeat_key, start)
            if found is not None:
                return Taken(found, False)
            if new.purpose == "competition" and new.competition_id is not None:
                same = entered_source(session, new.competition_id, new.owner_id, new.digest)
                if same is not None:
                    return same
            if new.purpose == "competition" and not within_limit(
                store, session, new.competition_id or 0, new.owner_id, new.entry_limit, now
            ):
                return None
            if new.repeat_key is not None:  # taken before the window: released
                session.execute(
                    update(Upload)
                    .where(
                        Upload.owner_id == new.owner_id,
                        Upload.repeat_key == new.repeat_key,
                        Upload.created < start,
                    )
                    .values(repeat_key=None)
                )
            upload_id = _add(session, new, now)
    except IntegrityError:  # the same key, stored at the same instant by another request
        found = repeated_upload(
            store,
            new.owner_id,
            client_key=new.client_key,
            repeat_key=new.repeat_key,
            window_start=start,
        )
        if found is None:
            raise
        return Taken(found, False)
    return Taken(upload_id, True)


def _add(session: Session, new: NewUpload, now: datetime) -> int:
    existing = _version_of_source(session, new.owner_id, new.bot_name, new.digest)
    message = None
    if existing is not None and existing[2] != new.runtime:
        _, number, runtime = existing
        message = (
            f"This source is already version {number}, a {runtime} bot: it stays {runtime} "
            f"(a version's runtime never changes; to run it under {new.runtime}, upload it "
            "as another bot)."
        )
    upload = Upload(
        owner_id=new.owner_id,
        bot_name=new.bot_name,
        filename=new.filename[:200],
        source=new.source,
        sha256=new.digest,
        runtime=new.runtime if existing is None else existing[2],
        status="pending" if existing is None else "already",
        message=message,
        bot_version_id=None if existing is None else existing[0],
        finished=None if existing is None else now,
        purpose=new.purpose,
        competition_id=new.competition_id,
        assignment_id=new.assignment_id,
        client_key=new.client_key,
        repeat_key=new.repeat_key,
        created=now,
    )
    session.add(upload)
    session.flush()
    if new.purpose == "competition":
        session.add(
            CompetitionEntry(
                competition_id=new.competition_id,
                user_id=new.owner_id,
                upload_id=upload.id,
                status="pending",
                created=now,
            )
        )
    elif new.purpose == "assignment":
        session.add(
            Submission(
                assignment_id=new.assignment_id,
                user_id=new.owner_id,
                upload_id=upload.id,
                bot_version_id=None,
                status="pending",
                late=new.late,
                created=now,
            )
        )
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


def placement_of_upload(store: Store, upload_id: int) -> tuple[int, str] | None:
    """The placement tournament of this upload (its foreign key), as (id, name), or None."""
    with store.read() as session:
        row = session.execute(
            select(Tournament.id, Tournament.name).where(Tournament.upload_id == upload_id)
        ).first()
    return None if row is None else (int(row.id), str(row.name))
