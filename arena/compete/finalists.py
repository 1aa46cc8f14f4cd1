"""Who plays a competition's final: each entrant's chosen versions, the ladder's top
entrants (docs/competitions.md, "The final's field").

An entrant may send many versions; each is rated on the ladder once placed. The final
takes, of every entrant, the versions the entrant chose (at most the competition's
``per_entrant``), or by default its best-rated placed version and its latest placed one;
then the ``top`` entrants whose best such version rates highest, with all their chosen
versions. Only placed versions count (a version still playing its placement games, or left
unplaced at the close, never displaces a placed one): a chosen version that is not is
dropped, and an entrant none of whose chosen versions is placed goes with the default.

    >>> field = [Candidate(1, "ann", 1600.0, 1.0), Candidate(2, "ann", 1550.0, 2.0),
    ...          Candidate(3, "bob", 1580.0, 1.0)]
    >>> final_field(field, {}, per_entrant=2, top=2)
    [1, 3, 2]
    >>> final_field(field, {"ann": [2]}, per_entrant=2, top=1)
    [2]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

__all__ = ["Candidate", "default_choice", "final_field"]


@dataclass(frozen=True, slots=True)
class Candidate:
    """A placed version that may play the final: its id, its entrant, its ladder rating
    and when it was accepted (any increasing number: the latest is the largest)."""

    version: int
    entrant: str
    rating: float
    accepted: float


def default_choice(versions: Sequence[Candidate], per_entrant: int) -> list[Candidate]:
    """An entrant's versions for the final when it chose none: its best-rated, then its
    latest, then the next best, up to ``per_entrant``."""
    best = sorted(versions, key=lambda c: (-c.rating, c.version))
    latest = max(versions, key=lambda c: (c.accepted, c.version), default=None)
    order = best[:1] + ([latest] if latest is not None else []) + best[1:]
    chosen: list[Candidate] = []
    for candidate in order:
        if candidate not in chosen and len(chosen) < per_entrant:
            chosen.append(candidate)
    return chosen


def final_field(
    candidates: Sequence[Candidate],
    choices: Mapping[str, Sequence[int]],
    *,
    per_entrant: int,
    top: int,
) -> list[int]:
    """The final's versions, best-rated first: of the ``top`` entrants whose best chosen
    version rates highest, their chosen versions (``choices`` by entrant, else
    :func:`default_choice`), at most ``per_entrant`` each."""
    by_entrant: dict[str, list[Candidate]] = {}
    for candidate in candidates:
        by_entrant.setdefault(candidate.entrant, []).append(candidate)
    picks: list[list[Candidate]] = []
    for entrant, versions in by_entrant.items():
        placed = {c.version: c for c in versions}
        chosen = [placed[v] for v in dict.fromkeys(choices.get(entrant, ())) if v in placed]
        picks.append(chosen[:per_entrant] or default_choice(versions, per_entrant))
    picks.sort(key=lambda p: (-max(c.rating for c in p), min(c.version for c in p)))
    field = [c for pick in picks[:top] for c in pick]
    return [c.version for c in sorted(field, key=lambda c: (-c.rating, c.version))]
