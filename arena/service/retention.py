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
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from arena.service.config import KEEP_DAYS_ENV, KEEP_GAMES_ENV, RetentionPolicy
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

#: Tournaments one sweep looks at for the games limit (the most crowded first).
TOURNAMENTS_A_SWEEP = 100


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
