"""What an actor does to a stored bot besides uploading it (:mod:`arena.service.uploads`):
make its source public or private again."""

from __future__ import annotations

import logging

from arena.errors import NotFound
from arena.service.permissions import Actor, Target, require
from arena.service.views import bot_view, set_source_public
from arena.store.db import Store

__all__ = ["set_visibility"]

logger = logging.getLogger(__name__)


def set_visibility(store: Store, actor: Actor, owner: str, name: str, public: bool) -> None:
    """Make the sources of the bot ``owner/name`` readable by everyone (``public``), or by
    its owner and the admins only. Its owner, or an admin.

    Raises:
        NotFound: no such bot, or ``actor`` may not see its private source (it is not
            acknowledged).
    """
    view = bot_view(store, owner, name)
    hidden = f"no bot {owner}/{name}"
    if view is None:
        raise NotFound(hidden)
    require(actor, "change-visibility", Target(view.owner_id), hide=hidden)
    set_source_public(store, view.id, public)
    logger.info("bot %s/%s: source made %s", owner, name, "public" if public else "private")
