"""Private classes (docs/classes.md, "A private class"): what the site hides from whom.

A class may be **private** (``settings["private"]``, the teacher's choice). Every bot of a
student of a private class is private to it, those made before joining as well: its page,
its rows on the leaderboards and bot lists, the games it played and the tournaments it
entered (its placement tournaments among them) are seen only by the student, the other
students and the teachers of its private classes, and the admins. Anyone else is answered
as if none existed (:class:`arena.errors.NotFound`, a 404), and lists leave them out.

:func:`hidden_from` is the set one actor may not see; the views over the store (bots,
leaderboards, games, tournaments) take the actor and filter with it, so a page or an API
route cannot forget it.

Within :func:`one_read` (a page's request: :func:`web.limits.heavy`), :func:`hidden_from`
reads the classes once for each actor and gives the same answer after (a page asks it of
each view it shows: its bot, its games, its opponents).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from arena.errors import NotFound
from arena.service.permissions import Actor, actor_id, allowed
from arena.store.classes import privacy_facts
from arena.store.db import Store

__all__ = ["NOTHING", "Hidden", "hidden_from", "one_read"]


@dataclass(frozen=True, slots=True)
class Hidden:
    """The owners whose bots one actor may not see: by account id and by user name."""

    ids: frozenset[int] = frozenset()
    names: frozenset[str] = frozenset()

    def __bool__(self) -> bool:
        return bool(self.ids)

    def owner(self, owner: int | str | None) -> bool:
        """Whether the bots of ``owner`` (an account id or a user name) are hidden."""
        if isinstance(owner, str):
            return owner in self.names
        return owner is not None and owner in self.ids

    def any(self, owners: Iterable[int | str | None]) -> bool:
        """Whether any of ``owners`` is hidden (a game or a tournament with one of them)."""
        return bool(self) and any(self.owner(o) for o in owners)

    def check(self, owner: int | str | None, message: str) -> None:
        """Raise NotFound(``message``) if ``owner``'s bots are hidden."""
        if self.owner(owner):
            raise NotFound(message)


#: Nothing hidden: the admins' and the operator's view.
NOTHING = Hidden()


def hidden_from(store: Store, actor: Actor) -> Hidden:
    """The owners whose bots ``actor`` may not see: the students of the private classes
    it neither teaches nor belongs to, except itself (an admin and the operator: none)."""
    if actor is not None and allowed(actor, "manage-class"):
        return NOTHING
    viewer = actor_id(actor)
    kept = _kept.get()
    if kept is None:
        return _hidden_from(store, viewer)
    key = (id(store), viewer)
    if key not in kept:
        kept[key] = _hidden_from(store, viewer)
    return kept[key]


#: The answers of :func:`hidden_from` kept within :func:`one_read` (None: outside one).
_kept: ContextVar[dict[tuple[int, int | None], Hidden] | None] = ContextVar(
    "hidden_kept", default=None
)


@contextmanager
def one_read() -> Iterator[None]:
    """Within the block, :func:`hidden_from` reads the classes once for each actor (a
    page's request: what a class hides does not change under it)."""
    token = _kept.set({})
    try:
        yield
    finally:
        _kept.reset(token)


def _hidden_from(store: Store, viewer: int | None) -> Hidden:
    facts = privacy_facts(store, viewer)
    seen = {viewer} if viewer is not None else set()
    for class_id in facts.viewer_classes:
        seen.update(facts.students[class_id])
    hidden = {
        user_id: name
        for students in facts.students.values()
        for user_id, name in students.items()
        if user_id not in seen
    }
    if not hidden:
        return NOTHING
    return Hidden(frozenset(hidden), frozenset(hidden.values()))
