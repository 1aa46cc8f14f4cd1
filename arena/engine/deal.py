"""Deals: the shuffled tiles of one round, seeded or given explicitly.

A :class:`Deal` is everything chance decides in a round: each seat's hand, the
boneyard in draw order, and for ``wooden`` the tiles drawn for the lead. It is
recorded with every round, and a round can be started from any valid deal
(tests, re-running a deal with other bots).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from operator import itemgetter

from arena.engine.rules import Lead, Rules
from arena.engine.tiles import MAX_PIP_LIMIT, TILES, Tile, set_size, tile_set
from arena.errors import DealError

__all__ = [
    "Deal",
    "deal_from_ids",
    "deal_round",
    "highest_double_holder",
    "lead_draw_winner",
    "shuffle_ids",
]


@dataclass(frozen=True, slots=True)
class Deal:
    """The tiles of one round as chance dealt them.

    Attributes:
        hands: the tiles dealt to each seat, in dealing order.
        boneyard: the undealt tiles, the next one to be drawn first.
        lead_draw: for draw-for-lead rule sets (``wooden``), the tile each seat
            drew to decide who leads (then returned and reshuffled); else None.
    """

    hands: tuple[tuple[Tile, ...], ...]
    boneyard: tuple[Tile, ...]
    lead_draw: tuple[Tile, ...] | None = None

    @classmethod
    def of(
        cls,
        hands: Sequence[Sequence[Tile | str]],
        boneyard: Sequence[Tile | str] = (),
        lead_draw: Sequence[Tile | str] | None = None,
    ) -> Deal:
        """Build a deal from tiles or their notation (``"6-4"``)."""
        return cls(
            hands=tuple(tuple(_tile(t) for t in hand) for hand in hands),
            boneyard=tuple(_tile(t) for t in boneyard),
            lead_draw=None if lead_draw is None else tuple(_tile(t) for t in lead_draw),
        )

    @classmethod
    def complete(
        cls,
        rules: Rules,
        hands: Sequence[Sequence[Tile | str]],
        boneyard_top: Sequence[Tile | str] = (),
        lead_draw: Sequence[Tile | str] | None = None,
    ) -> Deal:
        """Build a deal from hands and the first boneyard tiles; the rest of the
        set follows in id order (handy for scripted tests)."""
        partial = cls.of(hands, boneyard_top, lead_draw)
        used = {t for hand in partial.hands for t in hand} | set(partial.boneyard)
        rest = tuple(t for t in tile_set(rules.max_pip) if t not in used)
        return cls(partial.hands, partial.boneyard + rest, partial.lead_draw)

    @property
    def players(self) -> int:
        """The number of seats dealt to."""
        return len(self.hands)

    def check(self, rules: Rules) -> None:
        """Check the deal fits ``rules``: set, player count, hand sizes, lead draw.

        Raises:
            DealError: with the first problem found.
        """
        players = self.players
        if players not in rules.players:
            raise DealError(f"deal for {players} players, but {rules.name} is for {rules.players}")
        size = rules.hand_size(players)
        for seat, hand in enumerate(self.hands):
            if len(hand) != size:
                raise DealError(
                    f"seat {seat} was dealt {len(hand)} tiles, {rules.name} deals {size}"
                )
        full = tile_set(rules.max_pip)
        dealt = [t for hand in self.hands for t in hand] + list(self.boneyard)
        _check_is_set(dealt, full, rules.max_pip)
        _check_lead_draw(self.lead_draw, rules, players)
        if rules.lead is Lead.HIGHEST_DOUBLE and highest_double_holder(self.hands) is None:
            raise DealError("no hand holds a double: this deal must be redealt")


def _tile(value: Tile | str) -> Tile:
    return value if isinstance(value, Tile) else Tile.parse(value)


def _check_is_set(dealt: list[Tile], full: Sequence[Tile], max_pip: int) -> None:
    seen: set[Tile] = set()
    for tile in dealt:
        if tile.high > max_pip:
            raise DealError(f"tile {tile} is not in the double-{max_pip} set")
        if tile in seen:
            raise DealError(f"tile {tile} is dealt twice")
        seen.add(tile)
    missing = [str(t) for t in full if t not in seen]
    if missing:
        raise DealError(f"tiles missing from the deal: {', '.join(missing)}")


def _check_lead_draw(lead_draw: tuple[Tile, ...] | None, rules: Rules, players: int) -> None:
    if rules.lead is not Lead.DRAW_FOR_LEAD:
        if lead_draw is not None:
            raise DealError(f"{rules.name} has no draw for the lead")
        return
    if lead_draw is None or len(lead_draw) != players:
        raise DealError(f"{rules.name} needs one lead-draw tile per seat")
    if len(set(lead_draw)) != players or any(t.high > rules.max_pip for t in lead_draw):
        raise DealError(
            f"lead draw {', '.join(map(str, lead_draw))} is not distinct tiles of the set"
        )


def highest_double_holder(hands: Sequence[Sequence[Tile]]) -> tuple[int, Tile] | None:
    """Return (seat, double) for the highest double in any hand, or None."""
    best: tuple[int, Tile] | None = None
    for seat, hand in enumerate(hands):
        for tile in hand:
            if tile.is_double and (best is None or tile.high > best[1].high):
                best = (seat, tile)
    return best


def lead_draw_winner(lead_draw: Sequence[Tile]) -> int:
    """Return the seat whose lead-draw tile is highest: most pips, then larger half."""
    return max(range(len(lead_draw)), key=lambda seat: (lead_draw[seat].pips, lead_draw[seat].high))


def deal_round(rules: Rules, players: int, rng: random.Random) -> tuple[Deal, list[Deal]]:
    """Shuffle and deal one round with ``rng``.

    Returns the deal played and the deals thrown in before it (no hand held a
    double, under the highest-double lead), in order. The same rules, player
    count and rng state always give the same deals (and the same as
    :meth:`arena.engine.round.Round.dealt`).
    """
    lead_draw, ids, thrown_in = shuffle_ids(rules, players, rng)
    size = rules.hand_size(players)
    deal = deal_from_ids(ids, players, size, lead_draw)
    return deal, [deal_from_ids(other, players, size, lead_draw) for other in thrown_in]


def shuffle_ids(
    rules: Rules, players: int, rng: random.Random
) -> tuple[list[int] | None, list[int], list[list[int]]]:
    """Shuffle one round as tile ids: (lead draw or None, the deal, the deals thrown in).

    The set, in id order, is shuffled (first once for the lead draw, under
    draw-for-lead: seat i draws tile i); seat i is dealt the i-th block of hand
    size; the rest is the boneyard. Under the highest-double lead, a deal with
    no double in any hand is thrown in and the same list shuffled again.
    """
    dealt = players * rules.hand_size(players)
    ids = _ID_LISTS[rules.max_pip][:]
    if rules.lead is Lead.DRAW_FOR_LEAD:
        rng.shuffle(ids)
        lead_draw = ids[:players]
        rng.shuffle(ids)
        return lead_draw, ids, []
    thrown_in: list[list[int]] = []
    rng.shuffle(ids)
    while _DOUBLE_IDS.isdisjoint(ids[:dealt]):
        thrown_in.append(ids[:])
        rng.shuffle(ids)
    return None, ids, thrown_in


def deal_from_ids(ids: list[int], players: int, size: int, lead_draw: list[int] | None) -> Deal:
    """Build the :class:`Deal` of a shuffled list of tile ids."""
    tiles = itemgetter(*ids)(TILES)
    dealt = players * size
    return Deal(
        tuple(tiles[start : start + size] for start in range(0, dealt, size)),
        tiles[dealt:],
        None if lead_draw is None else tuple(TILES[i] for i in lead_draw),
    )


_DOUBLE_IDS = frozenset(t.id for t in TILES if t.is_double)
_ID_LISTS = [list(range(set_size(max_pip))) for max_pip in range(MAX_PIP_LIMIT + 1)]
