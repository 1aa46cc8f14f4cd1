"""Uploads for tests: one stored straight in the store, for tests of what comes after the
intake (a worker's check, the sweep, a page: no screening, no quota, no broker); and an
entry or a submission taken through the intake, as the pages and the API take them."""

import hashlib
from datetime import datetime

from arena.service.assignments import SubmissionView
from arena.service.competitions import EntryView
from arena.service.intake import Purpose, take_upload
from arena.service.permissions import Actor
from arena.store.db import Store
from arena.store.uploads import NewUpload, Taken, insert_upload


def store_upload(
    store: Store,
    owner_id: int,
    bot: str,
    filename: str,
    source: str,
    runtime: str = "python",
    *,
    purpose: str = "placement",
) -> int:
    """Store an upload of ``source`` for the owner's bot ``bot``, for ``purpose`` (no entry
    or submission is made); return its id (``pending``, or ``already``)."""
    digest = hashlib.sha256(source.encode()).hexdigest()
    taken = insert_upload(
        store, NewUpload(owner_id, bot, filename, source, digest, runtime, purpose=purpose)
    )
    assert isinstance(taken, Taken) and taken.created
    return taken.upload_id


def enter_upload(
    store: Store,
    actor: Actor,
    competition: str,
    filename: str,
    data: bytes,
    bot: str = "",
    *,
    runtime: str | None = None,
    now: datetime | None = None,
) -> EntryView:
    """Enter an uploaded file in ``competition`` through the intake; the entry."""
    received = take_upload(
        store, actor, filename, data, purpose=Purpose.entry(competition), name=bot,
        runtime=runtime, now=now,
    )  # fmt: skip
    assert received.entry is not None
    return received.entry


def submit_upload(
    store: Store,
    actor: Actor,
    class_name: str,
    assignment: str,
    filename: str,
    data: bytes,
    bot: str = "",
    *,
    runtime: str | None = None,
    now: datetime | None = None,
) -> SubmissionView:
    """Submit an uploaded file to ``assignment`` through the intake (under ``runtime``,
    default by its suffix); the submission."""
    received = take_upload(
        store, actor, filename, data,
        purpose=Purpose.submission(class_name, assignment), name=bot, runtime=runtime, now=now,
    )  # fmt: skip
    assert received.submission is not None
    return received.submission
