"""An entrant's versions in a competition (docs/competitions.md, "Your versions"): which
of them go to the final, and how long a new one takes to be placed now.

- :func:`choose_final` (the page's control, the API's ``PUT .../final-choice`` and
  ``arena competition final-choice`` all call it) stores the versions an entrant sends to
  the final: at most the competition's ``final_versions``, of its entered versions
  (active, being placed, or superseded: a placed version keeps its rating), until the final
  is made; none chosen, its best-rated placed version and its latest placed one go
  (arena.compete.finalists). :func:`final_choice` reads it with what goes as things stand.
- :func:`placement_outlook`: the median time from acceptance to placement of the latest
  placements, and the warning the page gives when a version sent now may not be placed
  before the deadline.
"""

from __future__ import annotations

import logging
import statistics
from dataclasses import dataclass, field
from datetime import UTC, datetime

from arena.compete.finalists import Candidate, default_choice
from arena.errors import NotFound
from arena.service.accounts import Account
from arena.service.clock import (
    DEFAULT_FINAL_VERSIONS,
    DEFAULT_PLACEMENT_GAMES,
    DEFAULT_PLACEMENT_GRACE,
    FINAL_STATUSES,
)
from arena.service.competitions import CompetitionError, find_competition, local_time
from arena.service.display import display_name
from arena.service.permissions import Actor, Operator, require
from arena.service.shapes import ELO, about
from arena.store import competitions as stored
from arena.store import entries as stored_entries
from arena.store.accounts import user_id_named
from arena.store.competitions import CompetitionRow, EntryRow
from arena.store.db import Store

__all__ = [
    "CHECK_SECONDS",
    "ChoiceVersion",
    "FinalChoice",
    "PlacementOutlook",
    "choose_final",
    "final_choice",
    "final_versions",
    "placement_outlook",
]

logger = logging.getLogger(__name__)

#: How long an upload's check takes, about (it comes before the placement).
CHECK_SECONDS = 60.0
#: Placements the outlook's median is taken over (the latest).
RECENT_PLACEMENTS = 10
#: The placement time assumed before any version was placed.
ASSUMED_PLACEMENT_SECONDS = 300.0


@dataclass(frozen=True, slots=True)
class ChoiceVersion:
    """One of the entrant's versions, as the final's choice shows it."""

    version_id: int
    name: str = field(metadata=about("owner/bot vN"))
    status: str = field(metadata=about("active, placing or superseded"))
    rating: float | None = field(metadata=ELO)
    games: int
    placed: bool = field(metadata=about("it has played its placement games"))
    chosen: bool = field(metadata=about("the entrant chose it for the final"))
    goes: bool = field(metadata=about("it goes to the final as things stand"))


@dataclass(frozen=True, slots=True)
class FinalChoice:
    """An entrant's versions and which go to the final: ``chosen`` the ones it chose
    (empty: the default, its best-rated placed and its latest placed versions)."""

    competition: str
    limit: int = field(metadata=about("versions an entrant may send to the final"))
    chosen: tuple[int, ...]
    versions: tuple[ChoiceVersion, ...]
    open: bool = field(metadata=about("the choice may still change (no final yet)"))


@dataclass(frozen=True, slots=True)
class PlacementOutlook:
    """How long a new version takes to be placed now: the median ``seconds`` of the
    latest ``samples`` placements (None: no placement yet), and what the page says."""

    seconds: float | None
    samples: int
    sentence: str
    warning: str | None


def final_versions(row: CompetitionRow) -> int:
    """The versions an entrant may send to the competition's final."""
    return int(row.settings.get("final_versions") or DEFAULT_FINAL_VERSIONS)


def _entrant_id(store: Store, actor: Actor, owner: str | None) -> int:
    """The entrant ``actor`` acts for: itself, or the operator's ``owner``.

    Raises:
        PermissionDenied: anonymous.
        CompetitionError, NotFound: the operator named no owner, or no such user.
    """
    if isinstance(actor, Operator):
        if owner is None:
            raise CompetitionError("name the entrant (--owner USER).")
        user_id = user_id_named(store, owner)
        if user_id is None:
            raise NotFound(f"no user called {owner!r}")
        return user_id
    require(actor, "enter-competition", message="log in to choose your versions for the final")
    assert isinstance(actor, Account)  # (the anonymous actor may not enter)
    return actor.id


def _versions(store: Store, row: CompetitionRow, user_id: int) -> dict[int, EntryRow]:
    """The user's entered versions that may go to the final, by id (each one's latest
    entry), the latest first."""
    found: dict[int, EntryRow] = {}
    for entry in stored.entries_of(store, row.id, user_id):
        if entry.version_id is not None and entry.version_id not in found:
            found[entry.version_id] = entry
    return {v: e for v, e in found.items() if e.status in FINAL_STATUSES}


def _open(row: CompetitionRow) -> bool:
    return row.status == "open" or (row.status == "final" and row.final_id is None)


def final_choice(store: Store, actor: Actor, name: str, *, owner: str | None = None) -> FinalChoice:
    """The entrant's versions in competition ``name`` and which go to the final.

    Raises:
        NotFound, PermissionDenied, CompetitionError: as :func:`choose_final`.
    """
    row = find_competition(store, name)
    return _choice(store, row, _entrant_id(store, actor, owner))


def _choice(store: Store, row: CompetitionRow, user_id: int) -> FinalChoice:
    versions = _versions(store, row, user_id)
    chosen = tuple(stored_entries.final_choices(store, row.id).get(user_id, []))
    fits = {int(r["version_id"]): r for r in row.standings or () if r.get("version_id")}
    placed = {
        v: Candidate(v, "", float(fits[v]["rating"]), e.accepted.timestamp())
        for v, e in versions.items()
        if e.placed is not None and e.accepted is not None and v in fits
        and fits[v].get("rating") is not None
    }  # fmt: skip
    limit = final_versions(row)
    goes = [v for v in chosen if v in placed][:limit]
    if not goes:
        goes = [c.version for c in default_choice(list(placed.values()), limit)]
    shown = tuple(
        ChoiceVersion(
            version_id=v, name=display_name(e.user, e.bot or "?", e.version),
            status=e.status, rating=None if v not in fits else fits[v].get("rating"),
            games=int((fits.get(v) or {}).get("games") or 0), placed=v in placed,
            chosen=v in chosen, goes=v in goes,
        )
        for v, e in versions.items()
    )  # fmt: skip
    return FinalChoice(row.name, limit, chosen, shown, _open(row))


def choose_final(
    store: Store,
    actor: Actor,
    name: str,
    version_ids: list[int],
    *,
    owner: str | None = None,
) -> FinalChoice:
    """Send ``version_ids`` of the entrant's (``actor``, or the operator's ``owner``) to
    competition ``name``'s final, in place of its earlier choice; none: the default goes
    (its best-rated placed version and its latest placed one). Return the choice.

    Raises:
        PermissionDenied: anonymous.
        NotFound: no such competition, or (the operator's) no such user.
        CompetitionError: the final is made already, more versions than the competition
            takes, or a version that is not one of the entrant's there (each in a sentence).
    """
    row = find_competition(store, name)
    user_id = _entrant_id(store, actor, owner)
    if not _open(row):
        raise CompetitionError(
            f"the final of {row.name} has begun: the versions that play it are fixed."
        )
    wanted = list(dict.fromkeys(version_ids))
    limit = final_versions(row)
    if len(wanted) > limit:
        raise CompetitionError(
            f"{row.name} takes at most {limit} of an entrant's versions to its final: you "
            f"chose {len(wanted)}."
        )
    versions = _versions(store, row, user_id)
    for version in wanted:
        if version not in versions:
            yours = ", ".join(str(v) for v in versions) or "none yet"
            raise CompetitionError(
                f"version {version} is not one of your versions in {row.name} that may go "
                f"to its final (yours: {yours})."
            )
    stored_entries.set_final_choices(store, row.id, user_id, wanted)
    logger.info("competition %s: user %d sends %s to the final", row.name, user_id, wanted)
    return _choice(store, row, user_id)


def _duration(seconds: float) -> str:
    """A duration as the page says it: ``45 s``, ``3 min``, ``1 h 10 min``."""
    if seconds < 90:
        return f"{max(1, round(seconds))} s"
    minutes = round(seconds / 60)
    return f"{minutes} min" if minutes < 60 else f"{minutes // 60} h {minutes % 60} min"


def placement_outlook(store: Store, name: str, *, now: datetime | None = None) -> PlacementOutlook:
    """How long placement takes now in competition ``name`` (the median of its latest
    placements) and, while it is open, whether a version sent now may miss the deadline.

    Raises:
        NotFound: no competition is called ``name``.
    """
    row = find_competition(store, name)
    now = datetime.now(UTC) if now is None else now
    times = stored_entries.placement_times(store, row.id, RECENT_PLACEMENTS)
    games = int(row.settings.get("placement_games") or DEFAULT_PLACEMENT_GAMES)
    median = statistics.median(times) if times else None
    if median is None:
        sentence = (
            f"A new version is placed once it has played {games} ladder games; no version "
            "has been placed yet."
        )
    else:
        sentence = (
            f"A new version is placed once it has played {games} ladder games: about "
            f"{_duration(median)} after its check now (the median of the latest "
            f"{len(times)} placements); your placed version plays on until then."
        )
    expected = CHECK_SECONDS + (ASSUMED_PLACEMENT_SECONDS if median is None else median)
    left = (row.deadline - now).total_seconds()
    warning = None
    if row.status == "open" and 0 < left < 2 * expected:
        grace = float(row.settings.get("placement_grace_seconds", DEFAULT_PLACEMENT_GRACE))
        warning = (
            f"The deadline is in {_duration(left)}: a version sent now may not be placed in "
            f"time (its check and placement take about {_duration(expected)}). The ladder "
            f"places the versions accepted before the deadline "
            f"({local_time(row.deadline, row.time_zone)}) for {_duration(grace)} after it at "
            "most; one not placed by then stays out of the final, and your placed version "
            "goes."
        )
    return PlacementOutlook(median, len(times), sentence, warning)
