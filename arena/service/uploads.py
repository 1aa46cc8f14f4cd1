"""Bot uploads over the web: read and screened where they arrive, checked on a worker.

The web process only reads the file (:func:`screen_source`: size, UTF-8, Python syntax,
all without running a line of it) and stores it as a pending :class:`Upload`
(:func:`create_upload`); a worker then runs the same sandboxed check as ``arena bots add``
(:func:`check_upload`) and stores the source as the bot's next version if it passes. An
identical source is "already version N" at once. Uploaded code never runs in the web
server's process.
"""

from __future__ import annotations

import dataclasses
import hashlib
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import select, update

from arena.compete.names import check_name
from arena.errors import ArenaError
from arena.match.lineup import CheckReport, check_bot
from arena.match.referee import TimeControl
from arena.store.db import Store, as_utc
from arena.store.models import Bot, BotVersion, Upload, User

__all__ = [
    "MAX_SOURCE_BYTES",
    "UploadError",
    "UploadView",
    "check_report_json",
    "check_upload",
    "create_upload",
    "mark_sent",
    "screen_source",
    "unsent_uploads",
    "upload_view",
]

#: The largest bot file accepted (bytes): a strategy, not a library.
MAX_SOURCE_BYTES = 256 * 1024
#: Characters of a faulting bot's stderr kept with its rejected upload (owner-only).
STDERR_KEPT = 2000


class UploadError(ArenaError):
    """An upload is refused before any check (the message says why, in a sentence)."""


def screen_source(filename: str, data: bytes) -> str:
    """The upload's text if it can be a Python bot: at most :data:`MAX_SOURCE_BYTES`, UTF-8,
    no NUL byte, valid Python (compiled, never run).

    Raises:
        UploadError: naming what is wrong (and the line, for a syntax error).
    """
    if not filename.endswith(".py"):
        raise UploadError(f"{filename or 'the file'} is not a .py file: a bot is one Python file.")
    if not data.strip():
        raise UploadError(f"{filename} is empty.")
    if len(data) > MAX_SOURCE_BYTES:
        raise UploadError(
            f"{filename} has {len(data):,} bytes; a bot may have at most {MAX_SOURCE_BYTES:,}."
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UploadError(
            f"{filename} is not UTF-8 text (byte {exc.start} is {data[exc.start]:#04x})."
        ) from None
    if "\x00" in text:
        raise UploadError(f"{filename} holds a NUL byte: it is not a text file.")
    try:
        compile(text, filename, "exec", dont_inherit=True)
    except SyntaxError as exc:
        where = f" on line {exc.lineno}" if exc.lineno else ""
        raise UploadError(f"{filename} has a syntax error{where}: {exc.msg}.") from None
    except ValueError as exc:
        raise UploadError(f"{filename} cannot be compiled: {exc}.") from None
    return text


@dataclass(frozen=True, slots=True)
class UploadView:
    """An upload as its page shows it."""

    id: int
    owner_id: int
    owner: str
    bot: str
    filename: str
    sha256: str
    status: str
    message: str | None
    report: dict[str, Any] | None
    version: int | None
    created: datetime
    finished: datetime | None

    @property
    def pending(self) -> bool:
        """Whether it still waits for its check."""
        return self.status == "pending"


def create_upload(store: Store, owner_id: int, bot_name: str, filename: str, source: str) -> int:
    """Store an upload of ``source`` as the next version of the owner's bot ``bot_name``;
    return its id. It is ``pending`` (send it to a worker), or ``already`` when the bot
    has a version with this very source.

    Raises:
        ParseError: ``bot_name`` is not a valid name.
    """
    bot_name = check_name(bot_name, "bot name")
    digest = hashlib.sha256(source.encode()).hexdigest()
    with store.write() as session:
        existing = session.scalar(
            select(BotVersion.id)
            .join(Bot, Bot.id == BotVersion.bot_id)
            .where(Bot.owner_id == owner_id, Bot.name == bot_name, BotVersion.sha256 == digest)
        )
        upload = Upload(
            owner_id=owner_id,
            bot_name=bot_name,
            filename=filename[:200],
            source=source,
            sha256=digest,
            status="pending" if existing is None else "already",
            bot_version_id=existing,
            finished=None if existing is None else datetime.now(UTC),
        )
        session.add(upload)
        session.flush()
        return upload.id


def unsent_uploads(store: Store, *, older_than: float = 0.0) -> list[int]:
    """Pending uploads never sent to a worker, or last sent more than ``older_than``
    seconds ago (a lost task: the sweep sends them again)."""
    cutoff = datetime.now(UTC) - timedelta(seconds=older_than)
    with store.read() as session:
        return list(
            session.scalars(
                select(Upload.id)
                .where(Upload.status == "pending")
                .where((Upload.sent.is_(None)) | (Upload.sent < cutoff))
                .order_by(Upload.id)
            )
        )


def mark_sent(store: Store, upload_ids: Sequence[int]) -> None:
    """Record that these uploads' checks were sent now."""
    if upload_ids:
        with store.write() as session:
            session.execute(
                update(Upload).where(Upload.id.in_(upload_ids)).values(sent=datetime.now(UTC))
            )


def check_report_json(report: CheckReport, sandboxed: bool) -> dict[str, Any]:
    """The parts of a check report worth keeping with a bot version, as JSON (each fault
    with its rule set, verdict, message and the tail of the bot's stderr)."""
    fields = dataclasses.asdict(dataclasses.replace(report, faults=[]))
    fields["faults"] = [
        {
            "rules": name,
            "termination": o.verdict.termination.value,
            "message": o.verdict.message,
            "stderr": o.verdict.stderr[-STDERR_KEPT:],
        }
        for name, o in report.faults
        if o.verdict is not None
    ]
    fields["sandboxed"] = sandboxed
    return fields


def check_upload(store: Store, upload_id: int, *, sandboxed: bool = True) -> str:
    """Check a pending upload in the sandbox (as ``arena bots add``) and store it as the
    bot's next version if it passes; return its status afterwards (``accepted``,
    ``rejected``, ``already``; a finished or unknown upload is left as it is).

    Raises:
        SandboxUnavailable, InfrastructureError: the check could not run; the upload stays
            pending (the task is retried).
    """
    with store.read() as session:
        row = session.execute(
            select(Upload, User.name)
            .join(User, User.id == Upload.owner_id)
            .where(Upload.id == upload_id)
        ).first()
        if row is None:
            return "missing"
        upload, owner = row
        if upload.status != "pending":
            return upload.status
        source, bot_name, filename = upload.source, upload.bot_name, upload.filename
    with tempfile.TemporaryDirectory(prefix="arena-upload-") as directory:
        path = Path(directory) / (Path(filename).name if filename.endswith(".py") else "bot.py")
        path.write_text(source, encoding="utf-8")
        path.chmod(0o644)
        Path(directory).chmod(0o755)  # the sandbox's unprivileged uid reads it
        reports = list(check_bot(str(path), sandboxed=sandboxed, time_control=TimeControl()))
    report = reports[-1][1]
    report_json = check_report_json(report, sandboxed)
    report_json["bot"] = filename
    if not report.ok:
        first = report.faults[0][1].verdict if report.faults else None
        reason = (
            "it played no game"
            if first is None
            else f"{first.termination.value} under {report.faults[0][0]}: {first.message}"
        )
        _finish(store, upload_id, "rejected", report_json, f"Rejected: {reason}", None)
        return "rejected"
    version, created = store.add_bot_version(owner, bot_name, source, report_json)
    status = "accepted" if created else "already"
    note = f"Stored as version {version.version}." if created else None
    _finish(store, upload_id, status, report_json, note, version.id)
    return status


def _finish(
    store: Store,
    upload_id: int,
    status: str,
    report: dict[str, Any],
    message: str | None,
    version_id: int | None,
) -> None:
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
            )
        )


def upload_view(store: Store, upload_id: int) -> UploadView | None:
    """The upload for its page, or None."""
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
        return UploadView(
            id=upload.id,
            owner_id=upload.owner_id,
            owner=owner,
            bot=upload.bot_name,
            filename=upload.filename,
            sha256=upload.sha256,
            status=upload.status,
            message=upload.message,
            report=upload.report,
            version=version,
            created=as_utc(upload.created),
            finished=None if upload.finished is None else as_utc(upload.finished),
        )
