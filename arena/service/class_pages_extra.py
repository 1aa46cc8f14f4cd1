"""What the class pages need beyond arena.service.classes (issue 22): the class a join code
opens (for the join page's title), and the bots of a class's students (the bots list and the
tournament form filtered to a class).

Every function checks what :mod:`arena.service.classes` checks: members see their class.
"""

from __future__ import annotations

from datetime import UTC, datetime

from arena.service.classes import ClassError, ClassRow, class_for_member, normalise_code
from arena.service.permissions import Actor
from arena.service.views import REFERENCE_OWNER, bot_list
from arena.store import classes as stored
from arena.store.bots import BotRow
from arena.store.db import Store

__all__ = ["class_bots", "class_of_code", "student_names"]


def class_of_code(store: Store, code: str, *, now: datetime | None = None) -> ClassRow:
    """The class the join code ``code`` opens (typed in any case, with or without spaces
    and dashes).

    Raises:
        ClassError: no class has this code, or it expired (the sentences joining gives).
    """
    shown = code.strip()[:40]
    row = stored.class_row_by_code(store, normalise_code(code)) if shown else None
    if row is None:
        raise ClassError(f"no class has the join code {shown!r}: check it with your teacher.")
    if row.join_expires is not None and row.join_expires <= (now or datetime.now(UTC)):
        raise ClassError("this join code has expired: ask your teacher for the new one.")
    return row


def student_names(store: Store, actor: Actor, name: str) -> list[str]:
    """The pseudonyms of the students of the class ``name``, by name (its members and
    teachers only).

    Raises:
        NotFound: no such class, or ``actor`` is a stranger to it.
        PermissionDenied: nobody is logged in.
    """
    row = class_for_member(store, actor, name)
    return [member.name for member in stored.member_rows(store, row.id)]


def class_bots(
    store: Store, actor: Actor, name: str, *, reference: bool = False
) -> list[BotRow]:
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
