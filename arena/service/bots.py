"""What an actor does to a stored bot besides uploading it (:mod:`arena.service.uploads`):
read a version's source (:func:`read_source`: the one check every page and API route
asks), store a checked bot file under any owner (the operator's ``arena bots add``), make
its source public or private again."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from arena.errors import NotFound
from arena.match.runtimes import DEFAULT_RUNTIME, RUNTIMES
from arena.service.bot_views import bot_source, bot_view
from arena.service.class_views import bot_target
from arena.service.competitions import source_opened
from arena.service.permissions import Actor, Target, require
from arena.store import bots as stored_bots
from arena.store.db import Store

__all__ = ["BotSource", "add_checked_bot", "read_source", "set_source_public", "set_visibility"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class BotSource:
    """A version's source and the runtime it runs under (arena.match.runtimes)."""

    text: str
    runtime: str

    @property
    def media_type(self) -> str:
        """Its file's media type (``text/x-python``, ``text/x-java``...; ``text/plain`` for a
        runtime this arena no longer knows)."""
        known = RUNTIMES.get(self.runtime)
        return "text/plain" if known is None else known.media_type

    def filename(self, name: str, version: int) -> str:
        """Its file's name, ``NAME-vVERSION`` with its runtime's suffix (``greedy-v2.java``)."""
        known = RUNTIMES.get(self.runtime)
        return f"{name}-v{version}{'.txt' if known is None else known.suffix}"


def read_source(store: Store, actor: Actor, owner: str, name: str, version: int) -> BotSource:
    """The source of ``owner/name`` version ``version`` with its runtime, for ``actor``:
    everyone's once its owner made it public or a competition it entered opened its
    entries' sources at the deadline; else its owner's, the admins', and the teachers' of a
    class it was submitted to (an assignment's submission: never a student's other bots,
    nor its competition entries). A bot of a private class's student is no one else's to see at all
    (arena.service.privacy).

    Raises:
        NotFound: no such version, or not for ``actor`` (a private source is not
            acknowledged).
    """
    hidden = f"no source of {owner}/{name} version {version}"
    view = bot_view(store, owner, name, actor)
    if view is None:
        raise NotFound(hidden)
    if not view.source_public and not source_opened(store, owner, name, version):
        version_id = stored_bots.version_id(store, owner, name, version)
        if version_id is None:
            raise NotFound(hidden)
        target = bot_target(store, view.owner_id, version_id=version_id)
        require(actor, "read-source", target, hide=hidden)
    source = bot_source(store, owner, name, version)
    if source is None:
        raise NotFound(hidden)
    runtime = next((v.runtime for v in view.versions if v.version == version), DEFAULT_RUNTIME)
    return BotSource(source, runtime)


def set_visibility(store: Store, actor: Actor, owner: str, name: str, public: bool) -> None:
    """Make the sources of the bot ``owner/name`` readable by everyone (``public``), or by
    its owner and the admins only. Its owner, or an admin.

    Raises:
        NotFound: no such bot, or ``actor`` may not see its private source (it is not
            acknowledged).
    """
    view = bot_view(store, owner, name, actor)
    hidden = f"no bot {owner}/{name}"
    if view is None:
        raise NotFound(hidden)
    require(actor, "change-visibility", Target(view.owner_id), hide=hidden)
    set_source_public(store, view.id, public)
    logger.info("bot %s/%s: source made %s", owner, name, "public" if public else "private")


def set_source_public(store: Store, bot_id: int, public: bool) -> None:
    """Make a bot's sources readable by everyone, or by its owner and the admins only (the
    caller authorizes: :func:`set_visibility` does)."""
    stored_bots.set_source_public(store, bot_id, public)


def add_checked_bot(
    store: Store,
    actor: Actor,
    owner: str,
    name: str,
    source: str,
    report: dict[str, Any],
    runtime: str = "python",
) -> tuple[int, str, bool]:
    """Store ``source``, which passed its check (``report``) under ``runtime``, as the next
    version of ``owner``'s bot ``name`` (the owner is created if new); return (version
    number, sha256, whether it was new: the same source again stores nothing). An admin or
    the operator.

    Raises:
        PermissionDenied: ``actor`` is not an admin.
        ParseError: ``owner`` or ``name`` is not a valid name.
    """
    require(actor, "add-bot", message="only an admin stores bots under any owner")
    version, created = store.add_bot_version(owner, name, source, report, runtime=runtime)
    logger.info(
        "bot %s/%s: version %d stored (%s)",
        owner,
        name,
        version.version,
        "new" if created else "again",
    )
    return version.version, version.sha256, created
