"""Retention a deployment chooses: how long full game records are kept, and their pruning.

A done match keeps its result (each game's places, points, winners, termination, luck)
and every rating made from it forever; what retention deletes is its games' records (the
rows of ``game_records``: what the viewer steps through and the exports write). Two
limits, each unset by default (every record kept):

- ``ARENA_KEEP_RECORDS_DAYS``: the records of matches finished in the last N days;
- ``ARENA_KEEP_RECORDS_GAMES``: the records of each tournament's newest N games (its
  newest done matches that hold N games together; the match crossing N is kept whole).

A record goes once a set limit no longer keeps it (with both set, it must be within both).
Whatever the limits, the records of competitions' finals (the current one and those a
rerun replaced), of assignments' gauntlets, and of the games a branch ("What if...") was
taken from are kept. The workers' sweep prunes (:func:`prune_records` from
:func:`arena.service.work.sweep_all`), in transactions of about
:attr:`RetentionPolicy.batch_records` records and at most
:attr:`RetentionPolicy.sweep_records` a sweep, the oldest first; a pruned match is stamped
(``matches.records_pruned``), so the readers say "record pruned" (:class:`RecordPruned`)
where a record never stored stays "not found". Nothing that computes ratings, standings or
a compare's verdict reads records (they read results), so pruning changes none of them.
"""

from __future__ import annotations

import logging
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from arena.store.db import Store
from arena.store.retention import (
    Prunable,
    crowded_tournaments,
    newest_beyond,
    older_than,
    prune_matches,
    pruned_count,
)

__all__ = [
    "KEEP_DAYS_ENV",
    "KEEP_GAMES_ENV",
    "PruneReport",
    "RetentionPolicy",
    "prune_records",
    "pruned_note",
]

logger = logging.getLogger(__name__)

#: The environment variables of :meth:`RetentionPolicy.from_env`.
KEEP_DAYS_ENV = "ARENA_KEEP_RECORDS_DAYS"
KEEP_GAMES_ENV = "ARENA_KEEP_RECORDS_GAMES"

#: Tournaments one sweep looks at for the games limit (the most crowded first).
TOURNAMENTS_A_SWEEP = 100


@dataclass(frozen=True, slots=True)
class RetentionPolicy:
    """Which game records a deployment keeps (None: no such limit).

    Attributes:
        keep_days: keep the records of matches finished in the last this many days.
        keep_games: keep the records of each tournament's newest this many games.
        batch_records: records deleted in one transaction, about (a match's records go
            together: a bigger match is a batch of its own).
        sweep_records: records one sweep deletes at most (the next sweep goes on).
    """

    keep_days: float | None = None
    keep_games: int | None = None
    batch_records: int = 1000
    sweep_records: int = 20000

    @property
    def active(self) -> bool:
        """Whether any limit is set (else every record is kept)."""
        return self.keep_days is not None or self.keep_games is not None

    def describe(self) -> str:
        """The policy in words: ``records are kept for 30 days``, ``... forever``."""
        limits = []
        if self.keep_days is not None:
            limits.append(f"for {self.keep_days:g} days")
        if self.keep_games is not None:
            limits.append(f"for the newest {self.keep_games} games of each tournament")
        return "game records are kept " + (" and ".join(limits) or "forever")

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> RetentionPolicy:
        """The policy of ``ARENA_KEEP_RECORDS_DAYS`` and ``ARENA_KEEP_RECORDS_GAMES``
        (unset or empty: no such limit).

        Raises:
            ValueError: a variable is not a number above 0 (a whole one for the games);
                the message names it.
        """
        env = os.environ if environ is None else environ
        days = (env.get(KEEP_DAYS_ENV) or "").strip()
        games = (env.get(KEEP_GAMES_ENV) or "").strip()
        return cls(
            keep_days=_days(days) if days else None, keep_games=_games(games) if games else None
        )


def _days(raw: str) -> float:
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise ValueError(
            f"{KEEP_DAYS_ENV} must be a number of days above 0 (leave it unset to keep "
            f"every game record), not {raw!r}"
        )
    return value


def _games(raw: str) -> int:
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1:
        raise ValueError(
            f"{KEEP_GAMES_ENV} must be a whole number of games, 1 or more (leave it unset "
            f"to keep every game record), not {raw!r}"
        )
    return value


@dataclass(frozen=True, slots=True)
class PruneReport:
    """What one pruning did: matches whose records went, records deleted, transactions."""

    matches: int = 0
    records: int = 0
    batches: int = 0


def prune_records(
    store: Store, policy: RetentionPolicy, *, now: datetime | None = None
) -> PruneReport:
    """Delete the game records ``policy`` no longer keeps, the oldest first: at most
    ``policy.sweep_records`` of them (whole matches), in transactions of about
    ``policy.batch_records``. Idempotent, and safe to run from every worker at once (a
    match pruned by another is skipped). Nothing to do when the policy has no limit."""
    if not policy.active:
        return PruneReport()
    now = now or datetime.now(UTC)
    budget = max(1, policy.sweep_records)
    chosen: dict[int, int] = {}
    if policy.keep_days is not None:
        before = now - timedelta(days=policy.keep_days)
        _choose(chosen, older_than(store, before, budget), budget)
    if policy.keep_games is not None:
        for tournament_id in crowded_tournaments(store, policy.keep_games, TOURNAMENTS_A_SWEEP):
            room = budget - sum(chosen.values())
            if room <= 0:
                break
            found = newest_beyond(store, tournament_id, policy.keep_games, room)
            _choose(chosen, found, budget)
    records = batches = 0
    for batch in _batches(chosen, max(1, policy.batch_records)):
        records += prune_matches(store, batch, now)
        batches += 1
    report = PruneReport(len(chosen), records, batches)
    if report.records:
        logger.info(
            "retention: %d game records of %d matches pruned in %d transactions (%s)",
            report.records, report.matches, report.batches, policy.describe(),
        )  # fmt: skip
    return report


def _choose(chosen: dict[int, int], found: list[Prunable], budget: int) -> None:
    """Add ``found`` to ``chosen`` (match id -> games) while its games fit the budget (the
    first match always: one bigger than the budget is pruned alone)."""
    held = sum(chosen.values())
    for match in found:
        if match.match_id in chosen:
            continue
        if chosen and held + match.games > budget:
            return
        chosen[match.match_id] = match.games
        held += match.games


def _batches(chosen: dict[int, int], size: int) -> list[list[int]]:
    """The chosen matches in groups of about ``size`` games (at least one match each)."""
    batches: list[list[int]] = []
    current: list[int] = []
    held = 0
    for match_id, games in chosen.items():
        if current and held + games > size:
            batches.append(current)
            current, held = [], 0
        current.append(match_id)
        held += games
    if current:
        batches.append(current)
    return batches


def pruned_note(store: Store, tournament_ids: list[int]) -> str | None:
    """A sentence for an export of these tournaments' records when retention pruned some
    (how many matches' records it leaves out, their results kept), else None."""
    count = pruned_count(store, tournament_ids)
    if not count:
        return None
    matches = "match's" if count == 1 else "matches'"
    return (
        f"record pruned: the game records of {count} {matches} are not in this export "
        "(the deployment's retention deleted them; their results and ratings are kept)"
    )
