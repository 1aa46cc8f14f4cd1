"""Deal groups read from their game records: NEW's game score, point margin and luck of the draw.

A deal group is one seed played once per seat rotation (2 players: two games, seats
swapped). :func:`group_margin` reads its games' records and gives what the margin test
of :mod:`arena.compete.sprt` (:class:`~arena.compete.sprt.MarginSPRT`) needs, NEW's
mean over the group's games of:

- ``score``: its normalised game score, the share of the other sides it finished ahead
  of (ties half): 1, 1/2 or 0 with two sides, as the game-level test counts it;
- ``margin``: its final score minus the mean final score of the other sides (points;
  rounds won in ``wooden``), the game's whole point margin rather than its sign;
- ``luck``: the luck of the draw, three numbers (:data:`LUCK_TERMS`) whose expectation
  is exactly 0 whatever the bots do: for every tile drawn from the boneyard,

  - ``pips``: its pips minus the mean pips of the tiles that could have been drawn;
  - ``fits``: whether it fits an open end minus the share of those that do;
  - ``value``: what it is worth to each side, by a reference rollout: every side's points
    in the round when every seat plays on from the draw with the built-in ``greedy``
    strategy (the engine's own round, the rest of the boneyard in its order), minus the
    mean of the same over :data:`VALUE_SWAPS` boneyards: the one drawn from and the same
    with the tile drawn swapped with the tile at a fixed place further down (half way),
    the rest of its order kept;

  NEW's side's sum minus the mean of the other sides'. (``pips`` and ``fits`` count for
  the side that drew; ``value`` counts for every side, the draw changes every side's
  round.)

Why the luck averages to 0: the boneyard's order is a uniform shuffle and no bot sees
it, so at every draw, given everything that happened before, the tile drawn is uniform
over the tiles left in the boneyard, and every order of the boneyard left is as likely
as any other. Swapping the next tile with the one at a given place is a one-to-one map of
those orders, so a fixed function of the order (the rollout) has the same mean before
and after the swap, whichever places are chosen, as long as the choice does not look at
the tiles. Each term is then a difference with mean 0 given the past, and so
is any sum of them, however the bots play and however long the game lasts. The test
subtracts a multiple of the luck from the margin (a control variate): the mean margin is
unchanged and its variance falls. docs/ratings.md has the argument and the figures.

Only rounds dealt from the seed count (``"dealt": "seed"``); a round dealt explicitly,
or whose draws do not match its boneyard, adds no luck, and a record without its rule
set (``rules``) no ``value``. Everything here reads plain record dictionaries
(docs/records.md), ``value`` replaying rounds with the engine, except :func:`game_lucks`
and :func:`game_seat_lucks`, which read a game just played from its rounds' own logs
(:meth:`arena.engine.round.Round.draw_rollouts`), to the same values.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from arena.engine.deal import Deal
from arena.engine.game import Game
from arena.engine.records import deal_from_dict
from arena.engine.round import Round
from arena.engine.rules import Rules, rules_from_record
from arena.engine.tiles import MAX_PIP_LIMIT, TILES, Move, Tile
from arena.errors import ArenaError

__all__ = [
    "LUCK_TERMS",
    "GroupMargin",
    "draw_luck",
    "game_lucks",
    "game_margin",
    "game_score",
    "game_seat_lucks",
    "group_margin",
    "kept_lucks",
    "seat_lucks",
    "sides_of",
]

#: The luck terms, in the order of :attr:`GroupMargin.luck`.
LUCK_TERMS = ("pips", "fits", "value")

#: ``value``'s rollouts a draw: the tile as drawn and swapped with the tile half way down
#: the rest of the boneyard (none when it was the last). Each further swap is another
#: rollout a draw for little: with three (the tiles a quarter, half and three quarters
#: down) 0.524 of the game scores' variance was left in ``draw`` against 0.534 with one,
#: 0.5095 against 0.5099 in ``three-minute``, 0.586 against 0.605 in 2v2 ``muggins``, for
#: 1.6 to 1.8 times the luck's CPU (1,000 groups of greedy against random each;
#: docs/ratings.md).
VALUE_SWAPS = 2


def _partners(undrawn: int) -> tuple[int, ...]:
    """The places (from the draw's) of the tiles swapped with a tile drawn with ``undrawn``
    tiles left, the one drawn included: :data:`VALUE_SWAPS` - 1 fixed fractions of the way
    down (none when it was the last), whatever the tiles."""
    swaps = min(undrawn, VALUE_SWAPS)
    return tuple((k * undrawn) // swaps for k in range(1, swaps))


#: :func:`_partners` of every boneyard's size.
_PARTNERS = [_partners(undrawn) for undrawn in range(len(TILES) + 1)]

Record = Mapping[str, Any]
#: A side's luck of the draw, one value per :data:`LUCK_TERMS`.
Luck = tuple[float, float, float]


@dataclass(frozen=True, slots=True)
class GroupMargin:
    """What one deal group tells the margin test, from NEW's side (means over its games).

    Attributes:
        score: NEW's normalised game score in [0, 1] (the game-level test's value).
        margin: NEW's final score minus the other sides' mean final score.
        luck: NEW's luck of the draw, one value per :data:`LUCK_TERMS` (mean 0 exactly).
            Fewer values (a luck kept before ``value`` was, ``(pips, fits)``) are padded
            with zeros: 0 is a term with mean 0 too, it only explains nothing.
        forfeit: a game of the group was forfeited for a bot fault: the test then counts
            the group by its game score alone (see :class:`arena.compete.sprt.MarginScores`).
    """

    score: float
    margin: float
    luck: Luck = (0.0, 0.0, 0.0)
    forfeit: bool = False

    def __post_init__(self) -> None:
        missing = len(LUCK_TERMS) - len(self.luck)
        if missing > 0:
            object.__setattr__(self, "luck", (*self.luck, *(0.0,) * missing))


def sides_of(record: Record) -> tuple[int, ...]:
    """Each seat's side: the seat itself, or ``seat % 2`` in team play (seats 0+2 v 1+3)."""
    players = int(record["players"])
    return tuple(seat % 2 if record.get("teams") else seat for seat in range(players))


def _result(record: Record) -> Mapping[str, Any]:
    result = record.get("result")
    if not isinstance(result, Mapping):
        raise ValueError("an unfinished game (its record has no result) has no score")
    return result


def _forfeiter(record: Record) -> int | None:
    """The side that forfeited the game, or None."""
    result = _result(record)
    verdict = result.get("verdict")
    sides = sides_of(record)
    if isinstance(verdict, Mapping) and verdict.get("seat") is not None:
        return sides[int(verdict["seat"])]
    if result.get("termination", "target") == "target":
        return None
    winners = set(result.get("winners") or ())
    losers = {sides[seat] for seat in range(len(sides)) if seat not in winners}
    return losers.pop() if len(losers) == 1 else None


def game_score(record: Record, seat: int) -> float:
    """The normalised score of the bot at ``seat``: the share of the other sides it finished
    ahead of, a tie counting half (as :func:`arena.compete.localrun.finishing_places` ranks
    a game: winners first, then by final score; a forfeiting side last).

    Raises:
        ValueError: the game is unfinished.
    """
    result = _result(record)
    scores = [float(s) for s in result["scores"]]
    sides = sides_of(record)
    loser = _forfeiter(record)
    winners = set() if loser is not None else {sides[s] for s in result.get("winners") or ()}
    count = len(scores)

    def place(side: int) -> int:
        if side == loser:
            return count - 1
        if side in winners:
            return 0
        ahead = [o for o in range(count) if o not in winners and o != loser]
        return len(winners) + sum(scores[o] > scores[side] for o in ahead)

    mine = place(sides[seat])
    others = [place(side) for side in range(count) if side != sides[seat]]
    return sum(1.0 if mine < p else 0.5 if mine == p else 0.0 for p in others) / len(others)


def game_margin(record: Record, seat: int) -> float:
    """The final score of ``seat``'s side minus the mean final score of the other sides.

    Raises:
        ValueError: the game is unfinished.
    """
    scores = [float(s) for s in _result(record)["scores"]]
    mine = scores[sides_of(record)[seat]]
    return mine - (sum(scores) - mine) / (len(scores) - 1)


#: Each tile's pips, and each end value's mask of the tiles that match it (by tile id;
#: ``[-1]``, no line yet, matches nothing).
_PIPS = [tile.pips for tile in TILES]
_BITS = [1 << tile.id for tile in TILES]
_SUIT = [sum(1 << t.id for t in TILES if t.matches(v)) for v in range(MAX_PIP_LIMIT + 1)] + [0]


#: A round's event as the luck reads it: ``("play", seat, Move)``, ``("draw", seat, tile
#: id)``, or ``("pass", seat, None)``, from a record's events (:func:`_record_events`) or
#: a played game's (:func:`game_lucks`).
_Event = tuple[str, int, Any]


def _record_events(round_: Mapping[str, Any]) -> Iterator[_Event]:
    """A record's round's events, parsed as they are read (a play's seat is not read)."""
    for event in round_["events"]:
        kind = event["type"]
        if kind == "play":
            yield kind, -1, Move.parse(event["move"])
        elif kind == "draw":
            yield kind, int(event["seat"]), Tile.parse(event["tile"]).id


def _round_luck(
    boneyard: Sequence[int], events: Iterable[_Event], sides: Sequence[int], count: int
) -> list[list[float]]:
    """Each side's luck of the draw in one round dealt from the seed, whose boneyard holds
    the tile ids ``boneyard``: ``[pips, fits]`` per side."""
    luck = [[0.0, 0.0] for _ in range(count)]
    rest_pips = sum(_PIPS[tile] for tile in boneyard)  # of the tiles not drawn yet
    rest = sum(1 << tile for tile in boneyard)  # their mask
    place = 0  # the next to draw
    left = right = -1
    for kind, seat, item in events:
        if kind == "play":
            tile = item.tile
            if item.end is None:
                left, right = tile.high, tile.low
            elif item.end == "L":
                left = tile.other(left)
            else:
                right = tile.other(right)
        elif kind == "draw":
            drawn = item
            if place == len(boneyard) or boneyard[place] != drawn:  # not the seed's: no luck
                return [[0.0, 0.0] for _ in range(count)]
            size = len(boneyard) - place
            side = luck[sides[seat]]
            rest, rest_pips = _add_draw(side, drawn, left, right, rest, rest_pips, size)
            place += 1
    return luck


def _rules_of(record: Record) -> Rules | None:
    data = record.get("rules")
    if not isinstance(data, Mapping):
        return None
    try:
        return rules_from_record(str(data["name"]), data["params"])
    except (ArenaError, KeyError, TypeError, ValueError):
        return None


def _round_values(
    rules: Rules,
    teams: bool,
    deal: Deal,
    events: Iterable[_Event],
    number: int,
    scores: Sequence[int],
    count: int,
) -> list[float]:
    """Each side's ``value`` luck in one round dealt from the seed (``deal``; see the
    module's docstring)."""
    values = [0.0] * count
    if not rules.draws:
        return values
    boneyard = [tile.id for tile in deal.boneyard]
    plays: list[Move] = []
    draws: list[int] = []  # per play: the draws the engine made after it
    drawn = 0
    for kind, _, item in events:
        if kind == "play":
            plays.append(item)
            draws.append(0)
        elif kind == "draw":
            if not plays or drawn >= len(boneyard) or boneyard[drawn] != item:
                return [0.0] * count  # not the seed's boneyard: no luck
            draws[-1] += 1
            drawn += 1
    last = max((played for played, made in enumerate(draws) if made), default=-1)
    if last < 0:
        return values
    main = Round(rules, deal, teams=teams, scores=scores, number=number, check=False)
    place = 0  # the boneyard's place of the draw
    for played, made in enumerate(draws[: last + 1]):
        if made:
            # The rollouts start from the round just before the play that drew (with the
            # boneyard's order changed behind the draws made so far: exactly the round
            # dealt with that order, nothing undrawn has been seen), on the round's own
            # bitmasks (Round.greedy_points). The order as drawn gives the same rollout
            # for every draw after this play.
            if main.undrawn != len(boneyard) - place:  # the engine drew otherwise
                return [0.0] * count
            move = plays[played]
            as_drawn = main.greedy_points(move)
            before = place  # the draws made before this play
            for _ in range(made):
                outcomes = [as_drawn]
                left = len(boneyard) - place
                for offset in _PARTNERS[left]:
                    swap = (place - before, place + offset - before)  # (undrawn places)
                    outcomes.append(main.greedy_points(move, swap=swap))
                rollouts = len(outcomes)
                for side, total in enumerate(map(sum, zip(*outcomes, strict=True))):
                    values[side] += as_drawn[side] - total / rollouts
                place += 1
        if played < last:
            main.apply(plays[played])
    return values


def _side_values(record: Record, sides: Sequence[int], count: int) -> list[float]:
    """Each side's ``value`` luck over the game (0 without the record's rule set, or where
    the engine cannot replay a round)."""
    totals = [0.0] * count
    rules = _rules_of(record)
    if rules is None:
        return totals
    teams = bool(record.get("teams"))
    scores = [0] * count
    for round_ in record.get("rounds") or ():
        values = [0.0] * count
        try:
            if round_.get("dealt", "seed") == "seed" and rules.draws:
                deal = deal_from_dict(round_["deal"])
                number = int(round_.get("number", 1))
                events = _record_events(round_)
                values = _round_values(rules, teams, deal, events, number, scores, count)
        except (ArenaError, KeyError, TypeError, ValueError):
            values = [0.0] * count
        for side, value in enumerate(values):
            totals[side] += value
        scores = [int(score) for score in round_.get("scores") or scores]
    return totals


def _seat_lucks(
    sides: Sequence[int],
    count: int,
    values: Sequence[float],
    pips_fits: Iterable[list[list[float]]],
) -> list[Luck]:
    """Every seat's luck from each side's ``value`` over the game and each round's
    ``[pips, fits]`` per side."""
    totals = [[0.0, 0.0, value] for value in values]
    for round_luck in pips_fits:
        for side, (pips, fits) in enumerate(round_luck):
            totals[side][0] += pips
            totals[side][1] += fits
    lucks: list[Luck] = []
    for mine in sides:
        others = [totals[side] for side in range(count) if side != mine]
        pips, fits, value = (
            totals[mine][term] - sum(o[term] for o in others) / len(others) for term in range(3)
        )
        lucks.append((pips, fits, value))
    return lucks


def seat_lucks(record: Record) -> list[Luck]:
    """Every seat's :func:`draw_luck` in one pass (the ``value`` rollouts are the costly
    part, and they serve every seat at once)."""
    sides = sides_of(record)
    count = max(sides) + 1
    values = _side_values(record, sides, count)
    pips_fits = (
        _round_luck(
            [Tile.parse(text).id for text in round_["deal"]["boneyard"]],
            _record_events(round_),
            sides,
            count,
        )
        if round_.get("dealt", "seed") == "seed"
        else [[0.0, 0.0] for _ in range(count)]
        for round_ in record.get("rounds") or ()
    )
    return _seat_lucks(sides, count, values, pips_fits)


def game_lucks(game: Game) -> tuple[tuple[float, ...], ...]:
    """:func:`kept_lucks` of a game just played, read from the game itself: the same values
    as from its record (``kept_lucks(game_record(game, ...))``), without making the record
    and parsing it back (what a duplicate match's worker keeps with each game)."""
    lucks = game_seat_lucks(game)
    return tuple(tuple(round(value, 6) for value in luck) for luck in lucks)


def game_seat_lucks(game: Game) -> list[Luck]:
    """:func:`seat_lucks` of a game just played, read from the game itself: the same
    values as from its record, to the bit. Each round's draws and rollouts come from its
    own log (:meth:`arena.engine.round.Round.draw_rollouts`): no round is replayed, no
    event made, and a rollout as drawn serves every draw it can."""
    sides = game.sides
    count = max(sides) + 1
    values = [0.0] * count
    pips_fits = []
    for round_, explicit in zip(game.rounds, game.explicit, strict=True):
        if explicit:
            continue
        draws = round_.draw_rollouts(_PARTNERS.__getitem__)
        if not draws:
            continue  # (adds nothing: no term of a round without draws is other than 0)
        # One pass over the draws for all three terms (each sum gets its terms in the
        # same order as apart, so the same floats): ``pips`` and ``fits`` as _add_draw's,
        # written out (a call a draw cost about as much as its arithmetic).
        luck = [[0.0, 0.0] for _ in range(count)]
        boneyard = [draw.tile for draw in draws] + [tile.id for tile in round_.boneyard]
        rest_pips = sum(map(_PIPS.__getitem__, boneyard))  # of the tiles not drawn yet
        rest = sum(map(_BITS.__getitem__, boneyard))  # their mask
        gained = [0.0] * count  # (summed a round at a time, as the record's rounds are)
        for seat, drawn, left, right, size, outcomes in draws:
            side_luck = luck[sides[seat]]
            ends = _SUIT[left] | _SUIT[right]
            side_luck[0] += _PIPS[drawn] - rest_pips / size
            side_luck[1] += (ends >> drawn & 1) - (ends & rest).bit_count() / size
            rest ^= 1 << drawn
            rest_pips -= _PIPS[drawn]
            as_drawn, rollouts = outcomes[0], len(outcomes)
            if rollouts == 2:  # (VALUE_SWAPS' column sums written out: the same ints)
                swapped = outcomes[1]
                for side in range(count):
                    gained[side] += as_drawn[side] - (as_drawn[side] + swapped[side]) / 2
            elif rollouts > 1:  # (one, the last tile's: as drawn minus itself adds 0.0)
                for side, total in enumerate(map(sum, zip(*outcomes, strict=True))):
                    gained[side] += as_drawn[side] - total / rollouts
        pips_fits.append(luck)
        for side, value in enumerate(gained):
            values[side] += value
    return _seat_lucks(sides, count, values, pips_fits)


def _add_draw(
    side: list[float], drawn: int, left: int, right: int, rest: int, rest_pips: int, size: int
) -> tuple[int, int]:
    """Add a draw's ``[pips, fits]`` luck to ``side``'s (the tile ``drawn`` from the
    ``size`` tiles not drawn yet, ``rest`` their mask and ``rest_pips`` their pips, with
    the line's ends ``left`` and ``right``: its pips above the mean's, and whether it fits
    the ends above the chance a tile did); return the rest's mask and pips after it."""
    ends = _SUIT[left] | _SUIT[right]
    side[0] += _PIPS[drawn] - rest_pips / size
    side[1] += (ends >> drawn & 1) - (ends & rest).bit_count() / size
    return rest ^ 1 << drawn, rest_pips - _PIPS[drawn]


def kept_lucks(record: Record) -> tuple[tuple[float, ...], ...]:
    """:func:`seat_lucks` rounded to 6 decimals, as a duplicate match's result keeps it
    (``GameResult.luck``, the stored result's ``luck``)."""
    return tuple(tuple(round(value, 6) for value in luck) for luck in seat_lucks(record))


def draw_luck(record: Record, seat: int) -> Luck:
    """The luck of the draw of ``seat``'s side over the whole game, minus the mean of the
    other sides': ``(pips, fits, value)`` (see the module's docstring). Its expectation
    is 0."""
    return seat_lucks(record)[seat]


def group_margin(records: Sequence[Record], seats: Sequence[int]) -> GroupMargin:
    """A deal group's values for NEW: ``records[i]`` is a game of the group and ``seats[i]``
    NEW's seat in it (any one of its team's seats in team play).

    Raises:
        ValueError: no games, lengths that differ, or an unfinished game.
    """
    if not records or len(records) != len(seats):
        raise ValueError(f"need one seat per game, got {len(records)} games, {len(seats)} seats")
    count = len(records)
    lucks = [draw_luck(record, seat) for record, seat in zip(records, seats, strict=True)]
    pips, fits, value = (sum(luck[term] for luck in lucks) / count for term in range(3))
    return GroupMargin(
        score=sum(game_score(r, s) for r, s in zip(records, seats, strict=True)) / count,
        margin=sum(game_margin(r, s) for r, s in zip(records, seats, strict=True)) / count,
        luck=(pips, fits, value),
        forfeit=any(_forfeiter(record) is not None for record in records),
    )
