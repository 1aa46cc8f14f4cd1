"""One display name for a stored bot and its versions, on every page that names them.

A stored bot version is shown as ``owner/bot v2`` (:func:`display_name`), whatever the
page: the leaderboard, a tournament's standings and crosstable, a game's seats, the game
lists, a bot's page, a compare. An entrant's *label* (``greedy-v1``, ``alice.alicebot``) is
the key its tournament's links and filters use, and is shown only for an entrant that is no
stored version. Names (arena.compete.names) hold no ``/``, ``@`` or space, so the parts of a
display name never run together.

- :class:`BotName`: a stored bot, or one of its versions, with its display name.
- :func:`seat_name`: the name behind a game row's seat (``owner/bot@vN``) or a bot's
  ``owner/bot``.
- :func:`entrant_names`: a tournament's labels → the versions they stand for, in one query.
- :func:`seat_names`: each seat's shown name in one game, told apart where two seats hold
  the same version.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from arena.store import boards
from arena.store.db import Store

__all__ = ["BotName", "display_name", "entrant_names", "names_of", "seat_name", "seat_names"]

#: A game row's seat as the store writes it, ``owner/bot@vN``, or a bot, ``owner/bot``.
_SEAT = re.compile(r"(?P<owner>[^/@\s]+)/(?P<bot>[^/@\s]+)(?:@v(?P<version>[0-9]+))?")


def display_name(owner: str, bot: str, version: int | None = None) -> str:
    """The one form pages show a stored bot in: ``owner/bot v2`` for a version,
    ``owner/bot`` for the bot itself."""
    return f"{owner}/{bot}" if version is None else f"{owner}/{bot} v{version}"


@dataclass(frozen=True, slots=True)
class BotName:
    """A stored bot (``version`` None) or one of its versions, as pages name it.

    Attributes:
        owner, bot: its owner's name and its name (the bot page's address).
        version: the version's number, or None for the bot as a whole.
    """

    owner: str
    bot: str
    version: int | None = None

    @property
    def display(self) -> str:
        """Its display name (:func:`display_name`)."""
        return display_name(self.owner, self.bot, self.version)

    def __str__(self) -> str:
        return self.display


def seat_name(seat: str) -> BotName | None:
    """The version a game row's seat (``owner/bot@vN``) names, or the bot ``owner/bot``
    names (an opponent on a bot's page); None when it names no stored bot (the store's
    ``version 12`` for a version it could not find)."""
    found = _SEAT.fullmatch(seat)
    if found is None:
        return None
    version = found["version"]
    return BotName(found["owner"], found["bot"], None if version is None else int(version))


def _shown(seat: str) -> str:
    name = seat_name(seat)
    return seat if name is None else name.display


def seat_names(seats: Sequence[str], labels: Sequence[str] = ()) -> tuple[str, ...]:
    """What each seat of one game is shown as: its display name, the label after it where
    two seats hold the same version (``reference/random v1 (r2)``); the seat's text as it
    is where it names no stored version."""
    shown = [_shown(seat) for seat in seats]
    twice = Counter(shown)
    return tuple(
        f"{text} ({labels[i]})" if twice[text] > 1 and i < len(labels) else text
        for i, text in enumerate(shown)
    )


def names_of(rows: Mapping[str, tuple[str, str, int]]) -> dict[str, BotName]:
    """Labels → names, from the store's (owner, bot, version number) by label."""
    return {label: BotName(owner, bot, number) for label, (owner, bot, number) in rows.items()}


def entrant_names(store: Store, tournament: str) -> dict[str, BotName]:
    """The tournament's entrant labels → the stored versions they stand for (one query;
    {} when there is no such tournament)."""
    return names_of(boards.entrant_names(store, tournament))
