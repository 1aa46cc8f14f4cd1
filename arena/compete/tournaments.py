"""Tournament formats: pure functions from entrants and settings to a schedule of matches.

A schedule is a list of :class:`Match` values, each naming the entrant at every
seat, its number of games and its own seed. The same arguments always give the
same schedule, so the local runner (:mod:`arena.compete.localrun`) and the workers play
exactly the same matches. ``docs/tournaments.md`` describes the formats.

An entrant is an :class:`arena.compete.entrants.Entrant`: a label and a stored bot version,
a bot file or a built-in strategy; copies of one bot enter under labels of their own.
Entrants' labels must be distinct.

Formats:

- ``round-robin``: every table (pair, or combination of ``players`` entrants)
  once; a balanced sample of tables when there are more than ``max_matches``.
- ``gauntlet``: each candidate against a reference pool (one candidate per table).
- ``duplicate``: the round robin played as duplicate deals; ``duplicate=True``
  does the same for a gauntlet. Every table becomes a deal group: the same
  seed played once per seat rotation, so each entrant holds each seat's hands.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from arena.engine.rules import Rules

if TYPE_CHECKING:  # (not imported to run: its bot files' checks are the referee's imports,
    # and the command line's --help names FORMATS: tests/cli/test_lazy.py)
    from arena.compete.entrants import Entrant

__all__ = [
    "DEFAULT_MAX_MATCHES",
    "FORMATS",
    "Match",
    "arrange_seats",
    "balanced_tables",
    "deal_seed",
    "in_legs",
    "schedule",
]

#: The format names :func:`schedule` accepts.
FORMATS = ("round-robin", "gauntlet", "duplicate")
#: Above this many tables a round robin is sampled (see :func:`balanced_tables`).
DEFAULT_MAX_MATCHES = 2000
#: Tries of the greedy balanced design; the best-balanced one is kept.
BALANCE_ATTEMPTS = 16
#: At most this many improving sweeps of :func:`arrange_seats`.
ARRANGE_SWEEPS = 8


@dataclass(frozen=True, slots=True)
class Match:
    """One match of a schedule: the same entrants in the same seats for ``games`` games.

    Attributes:
        id: stable within the schedule (the same arguments give the same ids).
        seats: the entrant at each seat (in team play, seats 0+2 v 1+3).
        games: the number of games; game ``i`` is seeded by
            ``arena.match.play.game_seeds(seed, games)[i]``.
        seed: the match's seed, from the tournament seed and the match's identity
            (its deal group's, for duplicate deals).
        deal_group: for duplicate deals, the group of matches that share ``seed``
            and so every deal; None otherwise.
        rotation: the match's seat rotation within its deal group (0 otherwise).
        teams: whether the games are team games.
    """

    id: str
    seats: tuple[Entrant, ...]
    games: int
    seed: int
    deal_group: str | None = None
    rotation: int = 0
    teams: bool = False


def _derive(tag: str, seed: int, identity: str) -> int:
    """A 63-bit seed from ``tag``, ``seed`` and ``identity`` (SHA-256, as arena.match.play does)."""
    text = ":".join(["arena", tag, str(seed), identity])
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") >> 1


def deal_seed(seed: int, deal_group: str) -> int:
    """The seed of the duplicate deal group ``deal_group`` (a table id, as ``d0003``) of a
    tournament seeded ``seed``: every match of the group plays its deals."""
    return _derive("deal", seed, deal_group)


# --- balanced designs -------------------------------------------------------------------


def balanced_tables(entrants: int, size: int, count: int, seed: int) -> list[tuple[int, ...]]:
    """Return ``count`` tables of ``size`` distinct entrants out of ``range(entrants)``.

    A greedy design: each seat of a table goes to an entrant with the fewest
    tables so far (so appearances differ by at most 1), among those the one that
    has met the table's members least (so pairs meet about equally often), ties
    broken by a seeded shuffle. The best of several tries (smallest spread of
    pair meetings) is kept. Tables are sorted tuples of entrant indices.

    Raises:
        ValueError: ``size`` is not between 1 and ``entrants``, or ``count`` < 0.
    """
    if not 1 <= size <= entrants:
        raise ValueError(f"cannot seat {size} of {entrants} entrants at a table")
    if count < 0:
        raise ValueError(f"count must be 0 or more, not {count}")
    best: list[tuple[int, ...]] = []
    best_key: tuple[int, int] | None = None
    for attempt in range(BALANCE_ATTEMPTS):
        rng = random.Random(_derive("balance", seed, str(attempt)))
        tables = _greedy_tables(entrants, size, count, rng)
        meetings = _pair_meetings(entrants, tables)
        key = (max(meetings) - min(meetings), sum(m * m for m in meetings)) if meetings else (0, 0)
        if best_key is None or key < best_key:
            best, best_key = tables, key
    return best


def _greedy_tables(
    entrants: int, size: int, count: int, rng: random.Random
) -> list[tuple[int, ...]]:
    appearances = [0] * entrants
    met = [[0] * entrants for _ in range(entrants)]
    tables: list[tuple[int, ...]] = []
    for _ in range(count):
        order = list(range(entrants))
        rng.shuffle(order)
        table: list[int] = []
        for _ in range(size):
            pick = min(
                (e for e in order if e not in table),
                key=lambda e: (appearances[e], sum(met[e][t] for t in table)),
            )
            table.append(pick)
        for a, b in itertools.combinations(table, 2):
            met[a][b] += 1
            met[b][a] += 1
        for e in table:
            appearances[e] += 1
        tables.append(tuple(sorted(table)))
    return tables


def _pair_meetings(entrants: int, tables: Sequence[Sequence[int]]) -> list[int]:
    """How often each pair of entrants met, for every pair (in combinations order)."""
    met: dict[tuple[int, int], int] = dict.fromkeys(itertools.combinations(range(entrants), 2), 0)
    for table in tables:
        for pair in itertools.combinations(sorted(table), 2):
            met[pair] += 1
    return list(met.values())


def arrange_seats(tables: Sequence[Sequence[int]]) -> list[tuple[int, ...]]:
    """Order each table's entrants into seats, balancing positions over the schedule.

    Minimises the sum of squares of how often each entrant sits at each seat
    (weighted 4 times) plus how often each entrant sits right after each other
    one, so that nobody always sits first or always plays after the same
    entrant: a greedy pass (each table takes the seat order, of all
    permutations, that adds least; the first on a tie), then sweeps that
    re-order one table at a time against all the others, until nothing changes
    (at most :data:`ARRANGE_SWEEPS`). Deterministic.
    """
    if not tables:
        return []
    counts = _SeatCounts(1 + max(max(table) for table in tables), max(map(len, tables)))
    arranged: list[tuple[int, ...]] = []
    for table in tables:
        arranged.append(counts.best(sorted(table)))
        counts.add(arranged[-1], 1)
    for _ in range(ARRANGE_SWEEPS):
        changed = False
        for index, order in enumerate(arranged):
            counts.add(order, -1)
            best = counts.best(sorted(order))
            counts.add(best, 1)
            if best != order:
                arranged[index], changed = best, True
        if not changed:
            break
    return arranged


class _SeatCounts:
    """How often each entrant sat at each seat, and right after each other entrant."""

    def __init__(self, entrants: int, seats: int) -> None:
        self.seat = [[0] * seats for _ in range(entrants)]
        self.after = [[0] * entrants for _ in range(entrants)]

    def add(self, order: tuple[int, ...], step: int) -> None:
        n = len(order)
        for p, e in enumerate(order):
            self.seat[e][p] += step
            self.after[e][order[(p + 1) % n]] += step

    def best(self, table: list[int]) -> tuple[int, ...]:
        """The permutation of ``table`` adding least to the sum of squares (first on a tie)."""
        n = len(table)
        # Seats weigh 4 times: a balanced seat is worth more than a balanced neighbour.
        seat = {e: [4 * c for c in self.seat[e][:n]] for e in table}
        after = {a: {b: self.after[a][b] for b in table} for a in table}
        best_order, best_cost = tuple(table), -1
        for order in itertools.permutations(table):
            cost = 0
            for p in range(n):
                e = order[p]
                cost += seat[e][p] + after[e][order[p + 1 - n]]
            if best_cost < 0 or cost < best_cost:
                best_order, best_cost = order, cost
        return best_order


# --- the schedule ---------------------------------------------------------------------


def schedule(
    format: str,
    entrants: Sequence[Entrant],
    *,
    rules: Rules,
    players: int,
    teams: bool = False,
    games_per_match: int,
    seed: int,
    pool: Sequence[Entrant] = (),
    duplicate: bool = False,
    max_matches: int = DEFAULT_MAX_MATCHES,
) -> list[Match]:
    """Return the matches of a tournament, in a fixed order.

    Args:
        format: ``round-robin``, ``gauntlet`` or ``duplicate`` (a duplicate round robin).
        entrants: the entrants; a gauntlet's candidates.
        rules: the rule set, for the player count and team play.
        players: seats per game (``teams``: 4, as two self-partnered teams).
        teams: team play: each table is two entrants, each partnering a copy of
            itself (seats 0+2 v 1+3).
        games_per_match: games per table (per deal group's match, for duplicate deals).
        seed: the tournament seed; every match's seed is derived from it.
        pool: a gauntlet's reference entrants.
        duplicate: play every table as duplicate deals (implied by ``duplicate``).
        max_matches: the most tables; more combinations than this are sampled
            by :func:`balanced_tables` to exactly this many tables.

    Raises:
        RulesError: ``players`` or ``teams`` not allowed by ``rules``.
        ValueError: unknown format, too few entrants or two with one label, a pool given
            to a round robin (or none to a gauntlet), or counts below 1.
    """
    rules.check_players(players, teams)
    if format not in FORMATS:
        raise ValueError(f"unknown tournament format {format!r} (formats: {', '.join(FORMATS)})")
    if games_per_match < 1:
        raise ValueError(f"games per match must be 1 or more, not {games_per_match}")
    if max_matches < 1:
        raise ValueError(f"max matches must be 1 or more, not {max_matches}")
    _check_names([*entrants, *pool])
    size = 2 if teams else players
    if format == "gauntlet":
        tables = _gauntlet_tables(entrants, pool, size, max_matches, seed)
        everyone = [*entrants, *pool]
    else:
        if pool:
            raise ValueError(f"a {format} has no reference pool (that is a gauntlet)")
        tables = _round_robin_tables(entrants, size, max_matches, seed)
        everyone = list(entrants)
    duplicate = duplicate or format == "duplicate"
    return _matches(
        format, everyone, arrange_seats(tables), teams, games_per_match, seed, duplicate
    )


def in_legs(matches: Sequence[Match], most: int) -> list[Match]:
    """The schedule with every match of more than ``most`` games played as legs of at most
    ``most`` games (the same seats; ids ``ID.L``, each leg seeded from its id, a duplicate
    deal's legs on the group's seed with the leg in the group's name), so that no match
    holds a worker for long: a worker is taken from one tournament's turn to another's only
    between matches (docs/workers.md, "Fair shares"). Matches of ``most`` games or fewer
    are kept as they are.

    Raises:
        ValueError: ``most`` < 1.
    """
    if most < 1:
        raise ValueError(f"games a leg must be 1 or more, not {most}")
    legs: list[Match] = []
    for match in matches:
        if match.games <= most:
            legs.append(match)
            continue
        for leg, start in enumerate(range(0, match.games, most)):
            leg_id = f"{match.id}.{leg}"
            group = None if match.deal_group is None else f"{match.deal_group}.{leg}"
            seed = _derive("match", match.seed, leg_id)
            if group is not None:  # a duplicate deal's legs share their group's deals
                seed = deal_seed(match.seed, group)
            games = min(most, match.games - start)
            legs.append(Match(leg_id, match.seats, games, seed, group, match.rotation, match.teams))
    return legs


def _check_names(entrants: Sequence[Entrant]) -> None:
    seen: dict[str, Entrant] = {}
    for entrant in entrants:
        name = entrant.label
        if name in seen:
            like = "LABEL=..." if entrant.version is not None else f"{name}2={entrant.seat()}"
            raise ValueError(
                f"duplicate entrant name {name!r} ({seen[name]} and {entrant}); "
                f"give copies names of their own, like {like}"
            )
        seen[name] = entrant


def _round_robin_tables(
    entrants: Sequence[Entrant], size: int, max_matches: int, seed: int
) -> list[tuple[int, ...]]:
    if len(entrants) < size:
        raise ValueError(
            f"a round robin of {size}-entrant tables needs at least {size} entrants, "
            f"not {len(entrants)}"
        )
    if math.comb(len(entrants), size) <= max_matches:
        return list(itertools.combinations(range(len(entrants)), size))
    return balanced_tables(len(entrants), size, max_matches, seed)


def _gauntlet_tables(
    candidates: Sequence[Entrant], pool: Sequence[Entrant], size: int, max_matches: int, seed: int
) -> list[tuple[int, ...]]:
    """Tables of one candidate and ``size - 1`` pool members (indices: candidates, then pool)."""
    if not candidates:
        raise ValueError("a gauntlet needs at least 1 candidate")
    if len(pool) < size - 1:
        raise ValueError(
            f"a gauntlet of {size}-entrant tables needs a pool of at least {size - 1}, "
            f"not {len(pool)}"
        )
    combos = math.comb(len(pool), size - 1)
    per_candidate = max(1, max_matches // len(candidates))
    tables: list[tuple[int, ...]] = []
    for c in range(len(candidates)):
        if combos <= per_candidate:
            others: list[tuple[int, ...]] = list(itertools.combinations(range(len(pool)), size - 1))
        else:
            others = balanced_tables(
                len(pool), size - 1, per_candidate, _derive("pool", seed, str(c))
            )
        tables.extend((c, *(len(candidates) + p for p in group)) for group in others)
    return tables


def _matches(
    format: str,
    entrants: Sequence[Entrant],
    tables: Sequence[tuple[int, ...]],
    teams: bool,
    games: int,
    seed: int,
    duplicate: bool,
) -> list[Match]:
    prefix = {"round-robin": "r", "gauntlet": "g", "duplicate": "d"}[format]
    width = max(4, len(str(len(tables) - 1)))
    matches: list[Match] = []
    for number, table in enumerate(tables):
        table_id = f"{prefix}{number:0{width}d}"
        orders = _rotations(table) if duplicate or len(table) == 2 else [table]
        if duplicate:
            group_seed = deal_seed(seed, table_id)
            for rotation, order in enumerate(orders):
                seats = _seats(entrants, order, teams)
                matches.append(
                    Match(
                        f"{table_id}-{rotation}",
                        seats,
                        games,
                        group_seed,
                        table_id,
                        rotation,
                        teams,
                    )
                )
            continue
        # Pairs play both seat orders, the games split between them (the first order
        # takes the odd game); larger tables play one arrangement (see arrange_seats).
        for part, order in enumerate(orders):
            share = games // len(orders) + (part < games % len(orders))
            if share:
                match_id = f"{table_id}-{part}"
                seats = _seats(entrants, order, teams)
                matches.append(
                    Match(match_id, seats, share, _derive("match", seed, match_id), teams=teams)
                )
    return matches


def _rotations(order: tuple[int, ...]) -> list[tuple[int, ...]]:
    """Every cyclic rotation of a seat order: rotation ``r`` seats ``order[r:] + order[:r]``."""
    return [order[r:] + order[:r] for r in range(len(order))]


def _seats(entrants: Sequence[Entrant], order: tuple[int, ...], teams: bool) -> tuple[Entrant, ...]:
    seats = tuple(entrants[i] for i in order)
    return seats + seats if teams else seats
