"""The errors the arena raises, as one small tree.

::

    ArenaError
    ├── ParseError            text that cannot be read: a tile, a move, a rule-set
    │                         file, a game record (also a ValueError)
    ├── RulesError            a rule set or game setup that is not allowed: unknown
    │                         preset, invalid parameter combination, wrong player
    │                         count (also a ValueError)
    ├── DealError             an explicit deal that does not fit the rule set
    │                         (also a ValueError)
    ├── IllegalMoveError      a move that is not legal in the current position
    ├── NameTaken             a name whose key (case-folded) another one of its kind
    │                         holds: ``D9CUP`` beside ``d9cup`` (also a ValueError)
    ├── DatabaseError         a database that cannot be used as asked: missing,
    │                         unreachable, not a database, another schema; the
    │                         message says the fix
    ├── VerdictError          games that cannot give a compare's verdict: NEW and
    │                         OLD ran the same source, or a seat ran another source
    │                         than its entrant's (arena.service.compares)
    ├── PermissionDenied      an actor may not do this action to this object
    │                         (arena.service.permissions; also a PermissionError):
    │                         the web answers 403 (anonymous: the login page), the
    │                         API 403 in its JSON error shape
    └── NotFound              the object an action names does not exist, or is
        │                     hidden from this actor (also a LookupError): 404
        └── RecordPruned      a stored game whose record the deployment's retention
                              deleted (its result is kept): 410, "record pruned"

"Cannot parse" (``ParseError``) is kept apart from "not allowed here" (the
others), and "not allowed here" from "not allowed to you" (``PermissionDenied``).
Every message names the offending input. Faults of bots (timeouts, crashes,
illegal replies) are not exceptions: they become verdicts in the game record.
"""

from __future__ import annotations

from datetime import datetime


class ArenaError(Exception):
    """Base class of every error the arena raises on purpose."""


class ParseError(ArenaError, ValueError):
    """Text that cannot be parsed: tile or move notation, rule-set file, record."""


class RulesError(ArenaError, ValueError):
    """A rule set or a game setup (players, teams) that is not allowed."""


class DealError(ArenaError, ValueError):
    """An explicit deal that does not fit the rule set and player count."""


class IllegalMoveError(ArenaError):
    """A move that is not legal in the current position."""


class NameTaken(ArenaError, ValueError):  # noqa: N818 (what it says)
    """A competition, class or bot name that differs only in case (its key,
    arena.compete.names.name_key) from one that exists: the message names the existing one."""


class DatabaseError(ArenaError):
    """A database that cannot be used as asked (missing, unreachable, foreign, another
    schema); the message names it and the fix."""


class VerdictError(ArenaError):
    """A compare's games cannot give its verdict: its two sides ran the same source (a bot
    measured against itself, not asked for), or a seat ran another source than the entrant
    it was scheduled for. The message names the match and the sources."""


class PermissionDenied(ArenaError, PermissionError):  # noqa: N818 (the HTTP name)
    """An actor may not do an action (to an object): the message says what is refused.

    Attributes:
        action: the permission module's action that was refused.
        anonymous: nobody was logged in (the web sends such a visitor to log in).
        stated: the message was written for this refusal (the web shows it; else it shows
            its generic 403 text).
    """

    def __init__(
        self, message: str, *, action: str, anonymous: bool = False, stated: bool = True
    ) -> None:
        super().__init__(message)
        self.action = action
        self.anonymous = anonymous
        self.stated = stated


class NotFound(ArenaError, LookupError):  # noqa: N818 (the HTTP name)
    """The object an action names does not exist, or is not acknowledged to this actor (a
    private upload, branch or source): the message names it."""


class RecordPruned(NotFound):
    """A stored game's record was deleted by the deployment's retention
    (arena.service.retention); the game's result and the ratings made from it are kept. The
    web answers 410 Gone with the message (the API in its JSON error shape).

    Attributes:
        match_id, index: the game.
        pruned: when its record was deleted.
    """

    def __init__(self, match_id: int, index: int, pruned: datetime) -> None:
        super().__init__(
            f"record pruned: the record of game {index} of match {match_id} was deleted on "
            f"{pruned:%Y-%m-%d} by this deployment's retention (its result and the ratings "
            "made from it are kept)"
        )
        self.match_id = match_id
        self.index = index
        self.pruned = pruned
