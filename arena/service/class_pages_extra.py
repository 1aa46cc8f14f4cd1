"""What the class pages need beyond arena.service.classes (issue 22): the bots of a class's
students (the bots list and the
tournament form filtered to a class), the role one asked for (the classes page) and a
tournament's name (the class tournament's page, after the one click). A class's
assignments are arena.service.assignment_views.class_assignments.

Every function checks what :mod:`arena.service.classes` checks: members see their class.
"""

from __future__ import annotations

from arena.errors import NotFound
from arena.service.classes import class_for_member
from arena.service.permissions import Actor, actor_id
from arena.service.views import REFERENCE_OWNER, bot_list
from arena.store import classes as stored
from arena.store.bots import BotRow
from arena.store.db import Store
from arena.store.models import Tournament

__all__ = [
    "class_bots",
    "own_role_request",
    "student_names",
    "tournament_name",
]


def student_names(store: Store, actor: Actor, name: str) -> list[str]:
    """The pseudonyms of the students of the class ``name``, by name (its members and
    teachers only).

    Raises:
        NotFound: no such class, or ``actor`` is a stranger to it.
        PermissionDenied: nobody is logged in.
    """
    row = class_for_member(store, actor, name)
    return [member.name for member in stored.member_rows(store, row.id)]


def class_bots(store: Store, actor: Actor, name: str, *, reference: bool = False) -> list[BotRow]:
    """The bots of the class's students (and the reference bots with ``reference``), the
    most recently updated first (as :func:`student_names` checks).

    Raises:
        NotFound: no such class, or ``actor`` is a stranger to it.
        PermissionDenied: nobody is logged in.
    """
    owners = set(student_names(store, actor, name))
    if reference:
        owners.add(REFERENCE_OWNER)
    return [row for row in bot_list(store) if row.owner in owners]


def own_role_request(store: Store, actor: Actor) -> str | None:
    """The role ``actor`` asked for and awaits (None: none, or nobody logged in)."""
    user_id = actor_id(actor)
    found = None if user_id is None else stored.requested_role(store, user_id)
    return None if found is None else found[0]


def tournament_name(store: Store, tournament_id: int) -> str:
    """The name of the tournament ``tournament_id``.

    Raises:
        NotFound: there is none.
    """
    with store.read() as session:
        found = session.get(Tournament, tournament_id)
        if found is None:
            raise NotFound(f"no tournament {tournament_id}")
        return str(found.name)
