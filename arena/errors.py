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
    └── DatabaseError         a database that cannot be used as asked: missing,
                              unreachable, not a database, another schema; the
                              message says the fix

"Cannot parse" (``ParseError``) is kept apart from "not allowed here" (the
others). Every message names the offending input. Faults of bots (timeouts,
crashes, illegal replies) are not exceptions: they become verdicts in the
game record.
"""

from __future__ import annotations


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


class DatabaseError(ArenaError):
    """A database that cannot be used as asked (missing, unreachable, foreign, another
    schema); the message names it and the fix."""
