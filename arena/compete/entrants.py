"""Entrants: who holds a tournament's seats, one typed value from where entrants are read
to the referee.

An :class:`Entrant` is a label -- the name it plays under in records, standings and ratings
-- and exactly one of: a stored bot version (its id; a worker writes the version's source
to a file and gives :func:`arena.compete.localrun.play_one` the files), a bot file, or a
built-in strategy (:data:`arena.match.strategies.STRATEGIES`). Entrants are made where they
are read -- the command line's notation parsed once by :meth:`Entrant.parse`, a stored
tournament's entrants by the store and the service (:meth:`Entrant.stored`) -- and travel
unchanged through the schedule (:func:`arena.compete.tournaments.schedule`), the local
runner and a worker's match to the seat spec the referee's players are made from
(:meth:`Entrant.seat`).

The command line's notation is ``[LABEL=]SPEC``: SPEC is a strategy's name or a bot file's
path, LABEL (a name: arena.compete.names) defaults to the strategy or the file's stem.
``r1=random`` enters a second copy of ``random`` under a name of its own; ``./odd=name.py``
is a path (``./odd`` is no label).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from arena.errors import ParseError
from arena.match.lineup import check_specs
from arena.match.strategies import STRATEGIES

__all__ = ["Entrant", "check_entrants"]

#: ``LABEL=SPEC`` on the command line: a label is a name (arena.compete.names; any script).
_LABELLED = re.compile(r"([^\W_][\w.+-]*)=(.+)")


@dataclass(frozen=True, slots=True)
class Entrant:
    """A tournament's entrant: its label and exactly one of a stored bot version's id, a
    bot file's path or a built-in strategy's name. Make them with :meth:`stored`,
    :meth:`bot_file`, :meth:`builtin` or :meth:`parse`.

    Attributes:
        label: the name it plays under (records, standings, ratings); distinct within a
            tournament.
        version: a stored bot version's id (``bot_versions.id``).
        file: a bot file's path.
        strategy: a built-in strategy's name.

    Raises:
        ValueError: no label, or not exactly one of ``version``, ``file``, ``strategy``.
        ParseError: ``strategy`` is no built-in strategy.
    """

    label: str
    version: int | None = None
    file: Path | None = None
    strategy: str | None = None

    def __post_init__(self) -> None:
        if not self.label:
            raise ValueError("an entrant needs a label")
        given = [self.version, self.file, self.strategy]
        if sum(part is not None for part in given) != 1:
            raise ValueError(
                f"entrant {self.label!r}: give exactly one of a stored version, a bot file "
                "and a built-in strategy"
            )
        if self.strategy is not None and self.strategy not in STRATEGIES:
            raise ParseError(
                f"entrant {self.label!r}: {self.strategy!r} is not a built-in strategy "
                f"({', '.join(STRATEGIES)})"
            )

    @classmethod
    def stored(cls, label: str, version: int) -> Entrant:
        """The stored bot version ``version`` (its id), under ``label``."""
        return cls(label, version=version)

    @classmethod
    def bot_file(cls, path: str | Path, label: str | None = None) -> Entrant:
        """The bot file ``path``, under ``label`` (default: the file's stem)."""
        path = Path(path)
        return cls(label or path.stem, file=path)

    @classmethod
    def builtin(cls, name: str, label: str | None = None) -> Entrant:
        """The built-in strategy ``name``, under ``label`` (default: ``name``).

        Raises:
            ParseError: no such strategy.
        """
        return cls(label or name, strategy=name)

    @classmethod
    def parse(cls, text: str) -> Entrant:
        """The entrant the command line's ``[LABEL=]SPEC`` names: a strategy's name, else a
        bot file's path (whether the file exists is checked when it plays:
        :func:`check_entrants`).

        Raises:
            ParseError: ``text`` (or its SPEC) is empty.
        """
        found = _LABELLED.fullmatch(text)
        label, spec = found.groups() if found else (None, text)
        return cls.from_spec(spec, label)

    @classmethod
    def from_spec(cls, spec: str, label: str | None = None) -> Entrant:
        """The entrant a seat spec names (no label in it): a strategy's name, else a bot
        file's path; under ``label`` (default: the strategy, or the file's stem).

        Raises:
            ParseError: ``spec`` is empty.
        """
        if not spec.strip():
            raise ParseError("an entrant cannot be empty")
        if spec in STRATEGIES:
            return cls.builtin(spec, label)
        return cls.bot_file(spec, label)

    def seat(self, files: Mapping[int, Path] | None = None) -> str:
        """The seat spec the referee's players are made from
        (:func:`arena.match.lineup.make_players`): the strategy's name, or the bot file's
        path (a stored version's: its file in ``files``, by version id).

        Raises:
            LookupError: a stored version with no file in ``files``.
        """
        if self.strategy is not None:
            return self.strategy
        if self.file is not None:
            return str(self.file)
        assert self.version is not None
        path = (files or {}).get(self.version)
        if path is None:
            raise LookupError(f"entrant {self.label!r}: no file for stored version {self.version}")
        return str(path)

    def __str__(self) -> str:
        """What it is, for messages: ``r1 (strategy random)``, ``first (file bots/first.py)``,
        ``greedy-v2 (stored version 17)``."""
        if self.strategy is not None:
            return f"{self.label} (strategy {self.strategy})"
        if self.file is not None:
            return f"{self.label} (file {self.file})"
        return f"{self.label} (stored version {self.version})"


def check_entrants(entrants: Sequence[Entrant], files: Mapping[int, Path] | None = None) -> None:
    """Check every entrant can take a seat: its bot file exists, its stored version has a
    file in ``files``.

    Raises:
        ParseError: naming the first bot file that is not there.
        LookupError: a stored version with no file in ``files``.
    """
    check_specs([entrant.seat(files) for entrant in entrants])
