"""Asking for the teacher role (docs/classes.md): a user asks, an admin grants or refuses.

What happens to a request depends on ``ARENA_TEACHER_REQUESTS`` (:func:`request_mode`):
``request`` (the default: it waits for an admin, :func:`decide_role_request`), ``open``
(granted at once: a school's own server) or ``closed`` (nobody may ask; admins still give
roles with ``arena users role``).
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from datetime import UTC, datetime

from arena.errors import ArenaError, NotFound
from arena.service.accounts import Account
from arena.service.permissions import ROLE_RANKS, Actor, actor_id, require
from arena.store import classes as stored
from arena.store.db import Store

__all__ = [
    "MODES",
    "REQUESTABLE",
    "TEACHER_REQUESTS_ENV",
    "RoleRequest",
    "RoleRequestError",
    "decide_role_request",
    "own_role_request",
    "request_mode",
    "request_role",
    "role_requests",
]

logger = logging.getLogger(__name__)

#: The environment variable that says what a request does, and its values.
TEACHER_REQUESTS_ENV = "ARENA_TEACHER_REQUESTS"
MODES = ("request", "open", "closed")
#: The roles a user may ask for.
REQUESTABLE = ("teacher",)


class RoleRequestError(ArenaError):
    """A role request is refused (the message says why, in a sentence)."""


@dataclass(frozen=True, slots=True)
class RoleRequest:
    """A pending request, as the admins' list shows it."""

    name: str
    role: str
    requested: str
    at: datetime | None


def request_mode() -> str:
    """``ARENA_TEACHER_REQUESTS``: ``request`` (default), ``open`` or ``closed``.

    Raises:
        RoleRequestError: another value.
    """
    mode = os.environ.get(TEACHER_REQUESTS_ENV, "request").strip().lower() or "request"
    if mode not in MODES:
        raise RoleRequestError(
            f"{TEACHER_REQUESTS_ENV} is {mode!r}: set it to one of {', '.join(MODES)}."
        )
    return mode


def request_role(
    store: Store, actor: Actor, role: str = "teacher", *, now: datetime | None = None
) -> str:
    """``actor`` asks for ``role``; return what happened: ``requested`` (an admin will
    decide), ``granted`` (``ARENA_TEACHER_REQUESTS=open``) or ``held`` (it has that role, or
    a stronger one, already).

    Raises:
        PermissionDenied: nobody is logged in.
        RoleRequestError: requests are closed, or ``role`` may not be asked for.
    """
    require(actor, "request-role", message="log in to ask for a role")
    if not isinstance(actor, Account):
        raise RoleRequestError("the operator has every role already.")
    if role not in REQUESTABLE:
        raise RoleRequestError(
            f"a user may ask for the role {', '.join(REQUESTABLE)}, not {role!r}."
        )
    if ROLE_RANKS[actor.role] >= ROLE_RANKS[role]:
        return "held"
    mode = request_mode()
    if mode == "closed":
        raise RoleRequestError(f"this server takes no requests for the {role} role: ask its admin.")
    stored.set_requested_role(store, actor.id, role, now or datetime.now(UTC))
    if mode == "open":
        stored.decide_request(store, actor.name, grant=True)
        logger.info("%s was given the role %s (requests are open)", actor.name, role)
        return "granted"
    logger.info("%s asked for the role %s", actor.name, role)
    return "requested"


def own_role_request(store: Store, actor: Actor) -> str | None:
    """The role ``actor`` asked for and awaits (None: none, or nobody logged in)."""
    user_id = actor_id(actor)
    found = None if user_id is None else stored.requested_role(store, user_id)
    return None if found is None else found[0]


def role_requests(store: Store, actor: Actor) -> list[RoleRequest]:
    """The pending requests, the oldest first (admins only).

    Raises:
        PermissionDenied: ``actor`` is not an admin.
    """
    require(actor, "manage-users", message="only admins see role requests")
    return [RoleRequest(*row) for row in stored.role_request_rows(store)]


def decide_role_request(store: Store, actor: Actor, name: str, grant: bool) -> str:
    """Grant or refuse the pending request of the user ``name`` (admins only); return the
    user's role afterwards.

    Raises:
        PermissionDenied: ``actor`` is not an admin.
        NotFound: no such user, or it asked for nothing.
    """
    require(actor, "manage-users", message="only admins decide role requests")
    decided = None if "\x00" in name else stored.decide_request(store, name.strip(), grant)
    if decided is None:
        raise NotFound(f"no role request of {name.strip()!r}")
    logger.info("%s's request %s by %s", decided[1], "granted" if grant else "refused",
                "anonymous" if actor is None else actor.name)  # fmt: skip
    return decided[2]
