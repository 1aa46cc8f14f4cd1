"""The competitions' clock (docs/competitions.md, "Scheduling"; docs/workers.md, "The
ladder's bound"): what runs a competition from its opening to its published final, with no
one pressing a button.

:func:`tick_competitions` is called by every worker's sweep (every ``ARENA_SWEEP_SECONDS``)
and :func:`tick_competition` by the worker that just finished one of a competition's
matches (:func:`arena.service.work.play_token`), so the ladder tops up as soon as a slot is
free. A tick reads first and writes only when it has something to do; what it writes, it
writes under the competition's row lock (:func:`arena.store.clock.lock_competition`), after
re-reading what it decides on, so any number of workers ticking at once add each match once.

- **Open** (``opens`` <= now < ``deadline``): refit the ladder when a result arrived (or the
  field changed): standings, history points, first-rated notices; then top up: while fewer
  than :func:`ladder_in_flight_bound` ladder matches are in flight, ask
  :func:`arena.compete.ladder.next_pairings` for the missing pairings and add each as one
  duplicate-deal group (one match a seat rotation, one seed), and send them.
- **The deadline**: status ``final``, the ladder's pending matches void (running ones finish
  and count); once none is left running, a last refit, and the final: the ladder's top
  ``final_top`` active entries (never a disqualified one, nor one accepted after the
  deadline), its first round from :func:`arena.compete.final.assess_final`.
- **Final**: each time the final has no match in flight, assess it: the next round's
  duplicate deals (filled to the in-flight bound in whole deals, so no worker idles while
  one pair is left), or the published final table (frozen), status ``done``.
"""

from __future__ import annotations

import hashlib
import logging
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import numpy as np
import numpy.typing as npt

from arena.compete.final import FinalPolicy, FinalState, assess_final
from arena.compete.ladder import LadderEntrant, LadderPolicy, next_pairings
from arena.compete.ratings import MEAN_RATING, PRIOR_SD, Rating
from arena.service.dispatch import dispatch_match_ids
from arena.service.display import display_name
from arena.service.matches import Config, list_workers
from arena.service.results import games_matrix
from arena.store import clock as stored
from arena.store.clock import Clock, EntryState
from arena.store.db import Store, as_utc

__all__ = [
    "FAST_WORKER_PREFIX",
    "OTHER_WORK_SHARE",
    "CompetitionTick",
    "TickReport",
    "deal_seed",
    "ladder_in_flight_bound",
    "tick_competition",
    "tick_competitions",
]

logger = logging.getLogger(__name__)

#: The name prefix of ``arena worker --lanes fast`` workers (arena.cli.worker): they play no
#: ladder match, so their processes are not counted in the ladder's bound.
FAST_WORKER_PREFIX = "arena-fast-"
#: The share of the match workers' processes a ladder keeps busy while other work (another
#: tournament's matches) waits in the matches lane; all of them otherwise.
OTHER_WORK_SHARE = 0.5
#: Defaults of a competition's settings the clock reads.
DEFAULT_GAMES_PER_DEAL = 2
DEFAULT_PLACEMENT_GAMES = 8


@dataclass(frozen=True, slots=True)
class CompetitionTick:
    """What one tick did to one competition.

    Attributes:
        competition_id: the competition.
        actions: what it did, in order: ``standings`` (refitted), ``ladder`` (matches
            added), ``closed`` (the deadline), ``final`` (the final created), ``round`` (a
            final round added), ``published``; empty when there was nothing to do.
        added: the ids of the matches it added (and sent).
    """

    competition_id: int
    actions: tuple[str, ...] = ()
    added: tuple[int, ...] = ()

    def __add__(self, other: CompetitionTick) -> CompetitionTick:
        return CompetitionTick(
            self.competition_id, self.actions + other.actions, self.added + other.added
        )


@dataclass(frozen=True, slots=True)
class TickReport:
    """What :func:`tick_competitions` did: each due competition's tick (idle ones too)."""

    ticks: tuple[CompetitionTick, ...] = field(default_factory=tuple)

    @property
    def added(self) -> int:
        """Matches added, over all competitions."""
        return sum(len(t.added) for t in self.ticks)

    def did(self, action: str) -> list[int]:
        """The competitions whose tick did ``action``."""
        return [t.competition_id for t in self.ticks if action in t.actions]


def _now(now: datetime | None) -> datetime:
    return datetime.now(UTC) if now is None else as_utc(now)


def deal_seed(seed: int, tag: str, number: int) -> int:
    """A deal group's 63-bit seed from the competition's ``seed``, a ``tag`` (the ladder's,
    a final's) and the group's number (SHA-256, as the tournaments' seeds are derived)."""
    text = f"arena:{tag}:{seed}:{number}"
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") >> 1


def tick_competitions(
    store: Store, now: datetime | None = None, *, config: Config | None = None
) -> TickReport:
    """Tick every competition that has work (open and opened, or playing its final):
    idempotent and cheap when nothing is due (reads only), safe from every worker at once.
    A competition whose tick fails is logged and left to the next tick.

    Raises:
        OperationalError: the database cannot be reached (the next sweep will do).
    """
    now = _now(now)
    ticks = []
    for clock in stored.due_competitions(store, now):
        try:
            ticks.append(_tick(store, clock, now, config))
        except Exception:
            logger.exception("competition %d (%s): the tick failed", clock.id, clock.name)
    return TickReport(tuple(ticks))


def tick_competition(
    store: Store,
    competition_id: int,
    now: datetime | None = None,
    *,
    config: Config | None = None,
) -> CompetitionTick:
    """Tick one competition (module docstring); a competition not stored, not yet open or
    done does nothing."""
    now = _now(now)
    clock = stored.clock_of(store, competition_id)
    if clock is None:
        return CompetitionTick(competition_id)
    return _tick(store, clock, now, config)


def _tick(store: Store, clock: Clock, now: datetime, config: Config | None) -> CompetitionTick:
    if clock.status == "open" and clock.opens <= now:
        if now >= clock.deadline:
            closed = _close(store, clock, now)
            fresh = stored.clock_of(store, clock.id)
            if fresh is None or fresh.status != "final":
                return closed
            return closed + _final(store, fresh, now)
        return _ladder(store, clock, now, config)
    if clock.status == "final":
        return _final(store, clock, now)
    return CompetitionTick(clock.id)


# --- the ladder ----------------------------------------------------------------------------


def ladder_in_flight_bound(
    store: Store,
    competition_id: int,
    *,
    config: Config | None = None,
    now: datetime | None = None,
) -> int:
    """The most ladder matches the competition keeps in flight (pending or running): its
    settings' ``in_flight`` if set; else the live match workers' processes (``arena
    worker``s seen within the lease, the fast lanes' excepted), times
    :data:`OTHER_WORK_SHARE` while another tournament's match waits in the matches lane;
    at least 1.

    Raises:
        LookupError: no such competition.
    """
    clock = stored.clock_of(store, competition_id)
    if clock is None:
        raise LookupError(f"no competition with id {competition_id}")
    return _bound(store, clock, config, _now(now)).limit


@dataclass(frozen=True, slots=True)
class _Bound:
    """The ladder's bound, and whether it may be rounded up to whole deal groups (nothing
    else waits in the matches lane and no ``in_flight`` setting overrides it)."""

    limit: int
    round_up: bool


def _bound(store: Store, clock: Clock, config: Config | None, now: datetime) -> _Bound:
    override = clock.settings.get("in_flight")
    if override:
        return _Bound(max(1, int(override)), False)
    capacity = sum(
        worker.concurrency
        for worker in list_workers(store, config=config, now=now)
        if worker.alive and not worker.name.startswith(FAST_WORKER_PREFIX)
    )
    waiting = stored.other_work_waiting(store, clock.ladder_id)
    share = OTHER_WORK_SHARE if waiting else 1.0
    return _Bound(max(1, math.floor(capacity * share)), not waiting)


def _table_size(clock: Clock) -> int:
    """Entrants at one table: 2 in team play (self-partnered), else the players."""
    return 2 if clock.teams else clock.players


def _games_per_deal(clock: Clock) -> int:
    return max(1, int(clock.settings.get("games_per_deal") or DEFAULT_GAMES_PER_DEAL))


def _placement_games(clock: Clock) -> int:
    return max(1, int(clock.settings.get("placement_games") or DEFAULT_PLACEMENT_GAMES))


def _wanted(bound: _Bound, flight: int, group: int) -> int:
    """Deal groups to add while fewer than the bound's matches are in flight: as many as
    fit under it, at least one when none is in flight; rounded up to whole groups when
    nothing else waits (no worker idles while a deal's last rotation is played: the
    ladder then has at most ``group - 1`` matches more than the bound in flight)."""
    room = bound.limit - flight
    if room <= 0:
        return 0
    if bound.round_up:
        return -(-room // group)
    return max(room // group, 1 if flight == 0 else 0)


@dataclass(frozen=True, slots=True)
class _Fit:
    """A fit of one tournament's done games: ratings by version id, and their covariance
    (Elo^2) in the order of ``codes``."""

    ratings: dict[int, Rating]
    covariance: npt.NDArray[np.float64] | None
    codes: dict[int, int]
    games: int


def _fit(store: Store, tournament_id: int) -> tuple[_Fit, Any]:
    """The fit of the tournament's done games, and their result matrix."""
    matrix, games = games_matrix(stored.games_histogram(store, tournament_id))
    if len(matrix.bots) < 2:
        return _Fit({}, None, {}, games), matrix
    ratings, covariance = matrix.fit_with_covariance()
    codes = {int(bot): k for k, bot in enumerate(matrix.bots)}
    return _Fit({int(r.bot): r for r in ratings}, covariance, codes, games), matrix


def _standings(
    fit: _Fit,
    entries: Mapping[int, EntryState],
    labels: Mapping[int, str],
    last: Mapping[int, datetime],
    placement: int,
) -> list[dict[str, Any]]:
    """The ladder's standings (JSON): every rated version best first (rank range from the
    intervals, as the leaderboard's), then the active entrants not rated yet."""
    rows: list[dict[str, Any]] = []
    for r in sorted(fit.ratings.values(), key=lambda r: (r.rank, r.bot)):
        version = int(r.bot)
        entry = entries.get(version)
        when = last.get(version)
        rows.append(
            {"version_id": version, "label": labels.get(version), "rank": r.rank,
             "rank_best": r.rank_best, "rank_worst": r.rank_worst, "rating": round(r.rating, 2),
             "low": round(r.low, 2), "high": round(r.high, 2), "stderr": round(r.stderr, 2),
             "games": r.games, "provisional": r.games < placement,
             "last_game": None if when is None else when.isoformat(),
             "status": None if entry is None else entry.status,
             "reason": None if entry is None else entry.reason}
        )  # fmt: skip
    for version, entry in sorted(entries.items()):
        if entry.status == "active" and version not in fit.ratings:
            rows.append(
                {"version_id": version, "label": labels.get(version), "rank": None,
                 "rank_best": None, "rank_worst": None, "rating": None, "low": None,
                 "high": None, "stderr": None, "games": 0, "provisional": True,
                 "last_game": None, "status": entry.status, "reason": entry.reason}
            )  # fmt: skip
    return rows


def _field_changed(clock: Clock, entries: Mapping[int, EntryState]) -> bool:
    """Whether the stored standings miss an active entrant or show a stale entry status."""
    shown = {int(row["version_id"]): row.get("status") for row in clock.standings or ()}
    for version, entry in entries.items():
        if version in shown and shown[version] != entry.status:
            return True
        if entry.status == "active" and version not in shown:
            return True
    return False


def _stale(clock: Clock, entries: Mapping[int, EntryState]) -> bool:
    """Whether the ladder's standings need a refit: a result since, or the field changed."""
    if clock.last_result is not None and (
        clock.standings_computed is None or clock.last_result > clock.standings_computed
    ):
        return True
    return _field_changed(clock, entries)


def _active(entries: Mapping[int, EntryState], labels: Mapping[int, str]) -> list[int]:
    """The versions that play: active entries with a label on the ladder."""
    return sorted(v for v, e in entries.items() if e.status == "active" and v in labels)


def _ladder(store: Store, clock: Clock, now: datetime, config: Config | None) -> CompetitionTick:
    entries = stored.entry_states(store, clock.id)
    labels = stored.tournament_labels(store, clock.ladder_id)
    active = _active(entries, labels)
    group = _table_size(clock)
    with store.read() as session:
        flight = stored.in_flight(session, clock.ladder_id)
    playable = len(active) >= group and not clock.paused  # paused: no match added
    bound = _bound(store, clock, config, now) if playable else _Bound(0, False)
    stale = _stale(clock, entries)
    if not stale and _wanted(bound, flight, group) == 0:
        return CompetitionTick(clock.id)  # the cheap path: nothing written
    fit, _ = _fit(store, clock.ladder_id)
    standings = _standings(
        fit, entries, labels, stored.last_games(store, clock.ladder_id), _placement_games(clock)
    )
    actions: list[str] = []
    with store.write() as session:
        row = stored.lock_competition(store, session, clock.id)
        if row is None or row.status != "open" or as_utc(row.deadline) <= now:
            return CompetitionTick(clock.id)
        if stale:
            stored.write_standings(session, row, standings, clock.last_result, now)
            actions.append("standings")
        flight = stored.in_flight(session, clock.ladder_id)
        wanted = _wanted(bound, flight, group)
        ids: list[int] = []
        if wanted and playable:
            busy = stored.in_flight_games(session, clock.ladder_id)
            groups = _pairing_groups(clock, fit, active, entries, busy, wanted, now)
            ids = stored.add_deal_groups(
                session,
                clock.ladder_id,
                groups,
                games=_games_per_deal(clock),
                seed_of=lambda n: deal_seed(clock.seed, "ladder", n),
                prefix="L",
                now=now,
            )
            if ids:
                actions.append("ladder")
    if ids:
        dispatch_match_ids(store, ids)
        logger.info("competition %s: %d ladder matches added", clock.name, len(ids))
    return CompetitionTick(clock.id, tuple(actions), tuple(ids))


def _pairing_groups(
    clock: Clock,
    fit: _Fit,
    active: Sequence[int],
    entries: Mapping[int, EntryState],
    busy: Mapping[int, int],
    wanted: int,
    now: datetime,
) -> list[list[tuple[int, ...]]]:
    """``wanted`` pairings from :func:`next_pairings` as deal groups (seat rotations)."""
    size = _table_size(clock)
    unit = size * _games_per_deal(clock)  # games one deal group gives each of its entrants
    policy = LadderPolicy(placement_games=max(1, math.ceil(_placement_games(clock) / unit)))
    start = clock.opens
    field_ = []
    for version in active:
        r = fit.ratings.get(version)
        games = (0 if r is None else r.games) + busy.get(version, 0)
        accepted = entries[version].accepted
        field_.append(
            LadderEntrant(
                id=str(version),
                rating=MEAN_RATING if r is None else r.rating,
                stderr=PRIOR_SD if r is None else r.stderr,
                games=games // unit,
                joined=max(0.0, ((accepted or start) - start).total_seconds()),
            )
        )
    covariance = _covariance(fit, active)
    seed = deal_seed(clock.seed, "pairing", int(now.timestamp() * 1000))
    pairings = next_pairings(
        field_,
        wanted,
        seed=seed,
        policy=policy,
        now=(now - start).total_seconds(),
        covariance=covariance,
    )
    rating = {v: (MEAN_RATING if v not in fit.ratings else fit.ratings[v].rating) for v in active}
    return [
        _rotations(_table(int(p.first), int(p.second), active, rating, size), clock.teams)
        for p in pairings
    ]


def _covariance(fit: _Fit, versions: Sequence[int]) -> npt.NDArray[np.float64]:
    """The ratings' covariance (Elo^2) in ``versions``' order; an unrated version's is the
    prior's variance, independent of the others."""
    size = len(versions)
    matrix = np.diag(np.full(size, PRIOR_SD**2))
    if fit.covariance is None:
        return matrix
    rated = [(k, fit.codes[v]) for k, v in enumerate(versions) if v in fit.codes]
    if rated:
        rows = np.array([k for k, _ in rated])
        codes = np.array([c for _, c in rated])
        matrix[np.ix_(rows, rows)] = fit.covariance[np.ix_(codes, codes)]
    return matrix


def _table(
    first: int, second: int, others: Sequence[int], rating: Mapping[int, float], size: int
) -> tuple[int, ...]:
    """A pairing's table: the pair, filled to ``size`` with the nearest-rated others."""
    centre = (rating[first] + rating[second]) / 2
    rest = sorted(
        (v for v in others if v not in (first, second)),
        key=lambda v: (abs(rating[v] - centre), v),
    )
    return (first, second, *rest[: size - 2])


def _rotations(table: tuple[int, ...], teams: bool) -> list[tuple[int, ...]]:
    """A deal group's seats: one tuple a cyclic rotation of the table (team play: each
    entrant partners itself, seats 0+2 v 1+3, as arena.compete.tournaments seats it)."""
    orders = [table[r:] + table[:r] for r in range(len(table))]
    return [order + order if teams else order for order in orders]


# --- the deadline and the final --------------------------------------------------------------


def _close(store: Store, clock: Clock, now: datetime) -> CompetitionTick:
    """The deadline: status final, the ladder's pending matches void (under the lock)."""
    with store.write() as session:
        row = stored.lock_competition(store, session, clock.id)
        if row is None or row.status != "open" or as_utc(row.deadline) > now:
            return CompetitionTick(clock.id)
        voided = stored.close(session, row, now)
    logger.info(
        "competition %s: closed at its deadline (%d ladder matches void)", clock.name, voided
    )
    return CompetitionTick(clock.id, ("closed",))


def _finalists(
    standings: Sequence[Mapping[str, Any]],
    entries: Mapping[int, EntryState],
    deadline: datetime,
    top: int,
) -> list[int]:
    """The ladder's top ``top`` rated versions whose entry is active (not disqualified,
    superseded or late) and was accepted by the deadline, best first."""
    chosen: list[int] = []
    for row in standings:
        entry = entries.get(int(row["version_id"]))
        if row.get("rating") is None or entry is None or entry.status != "active":
            continue
        if entry.accepted is not None and entry.accepted > deadline:
            continue
        chosen.append(int(row["version_id"]))
        if len(chosen) == top:
            break
    return chosen


def _policy(clock: Clock, round_matches: int = 0) -> FinalPolicy:
    """The final's policy; a later round fills ``round_matches`` matches (the in-flight
    bound: no worker idles while one pair is left), in whole deals."""
    return FinalPolicy(
        confidence=clock.final_confidence,
        max_games=clock.final_max_games,
        round_deals=-(-round_matches // _table_size(clock)),
    )


def _final(store: Store, clock: Clock, now: datetime) -> CompetitionTick:
    if clock.final_id is None:
        return _create_final(store, clock, now)
    with store.read() as session:
        if stored.in_flight(session, clock.final_id):
            return CompetitionTick(clock.id)
        count = stored.match_count(session, clock.final_id)
    settings = stored.tournament_settings(store, clock.final_id)
    entries = stored.entry_states(store, clock.id)
    finalists = [  # a finalist disqualified (or withdrawn) meanwhile plays no more, nor is placed
        str(v) for v in settings.get("finalists", [])
        if getattr(entries.get(int(v)), "status", None) not in ("disqualified", "withdrawn")
    ]  # fmt: skip
    fit, matrix = _fit(store, clock.final_id)
    policy = _policy(clock, _bound(store, clock, None, now).limit)
    state = assess_final(finalists, matrix if fit.ratings else None, fit.games, policy)
    return _next_round(store, clock, state, fit, count, now)


def _create_final(store: Store, clock: Clock, now: datetime) -> CompetitionTick:
    """Once the ladder has no match left running: a last refit, then the final and its
    first round (or, with fewer than two finalists, the table at once)."""
    with store.read() as session:
        if stored.in_flight(session, clock.ladder_id):
            return CompetitionTick(clock.id)  # running ladder matches finish and count first
    entries = stored.entry_states(store, clock.id)
    labels = stored.tournament_labels(store, clock.ladder_id)
    fit, _ = _fit(store, clock.ladder_id)
    last = stored.last_games(store, clock.ladder_id)
    standings = _standings(fit, entries, labels, last, _placement_games(clock))
    finalists = _finalists(standings, entries, clock.deadline, clock.final_top)
    names = [str(v) for v in finalists]
    first_round = assess_final(names, None, 0, _policy(clock))
    ids: list[int] = []
    actions = ["standings"]
    with store.write() as session:
        row = stored.lock_competition(store, session, clock.id)
        if row is None or row.status != "final" or row.final_id is not None:
            return CompetitionTick(clock.id)
        stored.write_standings(session, row, standings, clock.last_result, now)
        if len(finalists) < 2:
            table = _table_rows(store, first_round, labels)
            stored.publish(session, row, table, now)
            actions.append("published")
        else:
            settings = {
                "move_seconds": float(clock.settings.get("move_seconds", 1.0)),
                "memory_mb": int(clock.settings.get("memory_mb", 256)),
                "finalists": finalists,
            }
            final_id = stored.create_final(
                session,
                row,
                finalists=[(v, labels[v]) for v in finalists],
                settings=settings,
                games_per_match=_games_per_deal(clock),
                now=now,
            )
            ids = _add_round(session, clock, final_id, first_round, finalists, fit, now)
            actions += ["final", "round"]
    if ids:
        dispatch_match_ids(store, ids)
    logger.info("competition %s: final of %d created", clock.name, len(finalists))
    return CompetitionTick(clock.id, tuple(actions), tuple(ids))


def _add_round(
    session: Any,
    clock: Clock,
    final_id: int,
    state: FinalState,
    finalists: Sequence[int],
    fit: _Fit,
    now: datetime,
) -> list[int]:
    """The round's pairs as duplicate-deal groups of the final (caller's transaction)."""
    size = _table_size(clock)
    rating = {v: (fit.ratings[v].rating if v in fit.ratings else MEAN_RATING) for v in finalists}
    policy = _policy(clock)
    groups = [
        _rotations(_table(int(a), int(b), finalists, rating, size), clock.teams)
        for a, b in state.next_pairs
        for _ in range(policy.deals_per_round)
    ]
    return stored.add_deal_groups(
        session,
        final_id,
        groups,
        games=_games_per_deal(clock),
        seed_of=lambda n: deal_seed(clock.seed, f"final-{final_id}", n),
        prefix="F",
        now=now,
    )


def _next_round(
    store: Store,
    clock: Clock,
    state: FinalState,
    fit: _Fit,
    count: int,
    now: datetime,
) -> CompetitionTick:
    """Add the final's next round, or publish its table (under the lock, if no one did)."""
    assert clock.final_id is not None
    final_id = clock.final_id
    labels = stored.tournament_labels(store, final_id)
    ids: list[int] = []
    with store.write() as session:
        row = stored.lock_competition(store, session, clock.id)
        if (
            row is None
            or row.status != "final"
            or row.final_id != final_id
            or stored.match_count(session, final_id) != count
        ):
            return CompetitionTick(clock.id)  # another tick moved it on
        if state.done or not state.next_pairs:
            stored.publish(session, row, _table_rows(store, state, labels), now)
            action = "published"
        else:
            finalists = [int(s.id) for s in state.standings]
            ids = _add_round(session, clock, final_id, state, finalists, fit, now)
            action = "round"
    if ids:
        dispatch_match_ids(store, ids)
    logger.info("competition %s: final %s", clock.name, action)
    return CompetitionTick(clock.id, (action,), tuple(ids))


def _table_rows(store: Store, state: FinalState, labels: Mapping[int, str]) -> list[dict[str, Any]]:
    """The final table (frozen JSON): place, display name, version, rating and interval,
    games, and whether the place is shared (a tie at the cap)."""
    versions = [int(s.id) for s in state.standings]
    owners = stored.version_owners(store, versions)
    places = [s.place for s in state.standings]
    rows = []
    for s in state.standings:
        version = int(s.id)
        owner, bot, number = owners.get(version, ("?", s.id, 0))
        tie = places.count(s.place) > 1
        rows.append(
            {"place": s.place, "tie": tie, "name": display_name(owner, bot, number),
             "version_id": version, "label": labels.get(version), "rating": round(s.rating, 2),
             "low": round(s.low, 2), "high": round(s.high, 2), "games": s.games,
             "separated_from_next": s.separated_from_next}
        )  # fmt: skip
    return rows
