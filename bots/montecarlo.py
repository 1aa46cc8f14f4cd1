"""montecarlo: sample the hidden tiles, play each move out to the end of the round, pick the best.

The bot cannot see the other hands nor the boneyard, but the public history
narrows them down. Every move it:

1. Works out what it does know: the tiles it has not seen (the set minus its
   hand minus the line), how many tiles each opponent holds, and which suits
   each opponent showed it lacks. A seat that drew or passed while the ends were
   ``a`` and ``b`` held no ``a`` and no ``b`` at that moment; tiles it drew later
   may have them, so the knowledge is kept per tile held (a list of "cannot be
   suit ..." masks per opponent, oldest tiles most constrained).
2. Deals a random world consistent with that: each opponent gets as many unseen
   tiles as it holds, each tile respecting its mask; the rest is the boneyard,
   in random order.
3. For each legal move, plays the round out in that world with a fast rollout
   policy for every seat (the heaviest tile, plus 2 pips' worth for each tile the
   seat still holds of the suit it leaves on the end; in ``muggins`` the most
   in-play points first), drawing and passing by the rule set's parameters (``draw_limit``,
   the reserve, must-play), and scores the end exactly as the rule set does
   (``scoring``, fives in play, the target).
4. Repeats with new worlds until its time budget (``TIME_BUDGET`` seconds per
   move) runs out, and plays the move with the best average: its side's points
   minus the others', plus a bonus for reaching the game's target first.

Every move is tried on the same sampled worlds, so the comparison is fair even
with few samples. With one legal move it answers at once.
"""

from __future__ import annotations

import random
import time
from typing import Any

NAME = "montecarlo"

#: Seconds of thinking per move (checked with time.perf_counter between samples).
TIME_BUDGET = 0.05
#: Rollout policy: weight of keeping the new end in a suit the seat still holds.
ROLLOUT_CONTROL = 2
#: At most this many sampled worlds per move, however much time is left.
MAX_SAMPLES = 3000

TileT = tuple[int, int]


class Tracker:
    """What the public history of a round says about the other hands.

    Feed it the observation at each of your turns (:meth:`update`); it reads only
    the events it has not seen yet, and starts over when a new round begins.

    Attributes:
        played: tiles on the line.
        slots: per seat, one mask per tile it holds: bit ``v`` set when that tile
            cannot show ``v``. Oldest tiles first (they carry the most knowledge).
    """

    def __init__(self) -> None:
        self.round = -1
        self.seen = 0
        self.ends: tuple[int, int] | None = None
        self.played: set[TileT] = set()
        self.slots: dict[int, list[int]] = {}
        self.last: tuple[int, str] = (-1, "")

    def update(self, obs: Any) -> None:
        """Read the events of ``obs.history`` not read yet."""
        if obs.round != self.round:
            self._reset(obs)
        for event in obs.history[self.seen :]:
            self._event(obs.seat, event)
        self.seen = len(obs.history)
        for seat, slots in self.slots.items():  # trust the public hand sizes
            size = obs.hand_sizes[seat]
            if len(slots) > size:
                del slots[: len(slots) - size]
            slots.extend([0] * (size - len(slots)))

    def lacks(self, seat: int) -> int:
        """The suits ``seat`` surely does not hold (a bit per suit)."""
        slots = self.slots.get(seat)
        return slots[-1] if slots else -1

    def _reset(self, obs: Any) -> None:
        self.round = obs.round
        self.seen = 0
        self.ends = None
        self.played = set()
        self.last = (-1, "")
        sizes = obs.params.get("hand_size")
        dealt = sizes.get(str(obs.players)) if isinstance(sizes, dict) else sizes
        size = dealt if isinstance(dealt, int) else max(obs.hand_sizes)
        self.slots = {s: [0] * size for s in range(obs.players) if s != obs.seat}

    def _event(self, me: int, event: Any) -> None:
        kind = type(event).__name__
        seat = event.seat
        ends = self.ends
        void = 0 if ends is None else (1 << ends[0]) | (1 << ends[1])
        slots = self.slots.get(seat)
        if kind == "Play":
            tile = (event.move.tile.high, event.move.tile.low)
            if slots:
                if self.last == (seat, "Draw"):
                    slots.pop()  # the tile it just drew is the one it played
                else:
                    _remove_slot(slots, tile)
            self.played.add(tile)
            self._place(tile, event.move.end)
        elif kind == "Draw":
            if slots is not None:
                if self.last != (seat, "Draw"):  # it could not play: it lacked both ends
                    slots[:] = [m | void for m in slots]
                slots.append(void)  # assume no match: popped again if it plays
        elif slots is not None:  # a pass
            slots[:] = [m | void for m in slots]
        self.last = (seat, kind)
        del me

    def _place(self, tile: TileT, end: str | None) -> None:
        if self.ends is None or end is None:
            self.ends = tile
        elif end == "L":
            self.ends = (_other(tile, self.ends[0]), self.ends[1])
        else:
            self.ends = (self.ends[0], _other(tile, self.ends[1]))


def _remove_slot(slots: list[int], tile: TileT) -> None:
    """Drop the most constrained slot that could have held ``tile``."""
    for i, mask in enumerate(slots):
        if not (mask >> tile[0] & 1 or mask >> tile[1] & 1):
            del slots[i]
            return
    slots.pop()


def _other(tile: TileT, pip: int) -> int:
    return tile[1] if tile[0] == pip else tile[0]


def full_set(max_pip: int) -> list[TileT]:
    """Every tile of a double-``max_pip`` set."""
    return [(high, low) for high in range(max_pip + 1) for low in range(high + 1)]


class Sim:
    """The fixed facts of a decision: rules, seats, and the public state of the line."""

    def __init__(self, obs: Any, tracker: Tracker) -> None:
        params = obs.params
        self.me = int(obs.seat)
        self.players = int(obs.players)
        self.sides = [s % 2 if obs.teams else s for s in range(obs.players)]
        self.nsides = 2 if obs.teams else int(obs.players)
        limit = params.get("draw_limit")
        self.limit = 1_000_000 if limit is None else int(limit)
        self.fives = params.get("in_play") == "fives"
        self.scoring = str(params.get("scoring", "opponents-minus-own"))
        target = params.get("target")
        if target is None:
            target = int(params.get("best_of") or 1) // 2 + 1
        self.target = int(target)
        self.bonus = self.target / 2
        self.scores = list(obs.scores)
        self.hand: list[TileT] = [(t.high, t.low) for t in obs.hand]
        line = obs.line
        self.ends: tuple[int, int] | None = obs.ends
        self.ldbl = bool(line) and line[0][0] == line[0][1]
        self.rdbl = bool(line) and line[-1][0] == line[-1][1]
        self.drawable = obs.drawable
        self.bone_size = obs.boneyard_size
        known = set(self.hand) | tracker.played
        self.unseen = [t for t in full_set(int(params.get("max_pip", 6))) if t not in known]
        order = [(mask, seat) for seat, masks in tracker.slots.items() for mask in masks]
        order.sort(key=lambda item: -bin(item[0]).count("1"))
        self.order = order

    def sample(self, rng: random.Random) -> tuple[list[list[TileT]], list[TileT]]:
        """Deal the unseen tiles: hands that respect what each opponent lacks, then the boneyard."""
        for attempt in range(20):
            pool = self.unseen[:]
            rng.shuffle(pool)
            hands: list[list[TileT]] = [[] for _ in range(self.players)]
            hands[self.me] = self.hand[:]
            strict = attempt < 19
            for mask, seat in self.order:
                for i, tile in enumerate(pool):
                    if not strict or not (mask >> tile[0] & 1 or mask >> tile[1] & 1):
                        hands[seat].append(pool.pop(i))
                        break
                else:
                    break
            else:
                return hands, pool
        raise AssertionError("the last attempt ignores the constraints and cannot fail")

    def rollout(self, hands: list[list[TileT]], bone: list[TileT], tile: TileT, end: str) -> float:
        """Play ``tile`` on ``end`` for me, then the round out; return my side's value."""
        fives = self.fives
        control = ROLLOUT_CONTROL
        sides = self.sides
        n = self.players
        points = [0] * self.nsides
        seat = self.me
        drawable = self.drawable
        limit = self.limit
        if self.ends is None:
            left, right = tile
            ldbl = rdbl = tile[0] == tile[1]
        else:
            left, right = self.ends
            ldbl, rdbl = self.ldbl, self.rdbl
        move: TileT | None = tile
        side_end = end
        hand = hands[seat]
        hand.remove(tile)
        first = self.ends is None
        while True:
            if move is not None:
                # place the tile and score it
                a, b = move
                if first:
                    first = False
                    count = a + b
                else:
                    if side_end == "L":
                        left = b if a == left else a
                        ldbl = a == b
                    else:
                        right = b if a == right else a
                        rdbl = a == b
                    count = (left << 1 if ldbl else left) + (right << 1 if rdbl else right)
                if fives and count % 5 == 0 and count:
                    side = sides[seat]
                    points[side] += count // 5
                    if self.scores[side] + points[side] >= self.target:
                        return self._value(points, side)
                if not hand:
                    return self._domino(hands, points, seat)
                seat = seat + 1 if seat + 1 < n else 0
                hand = hands[seat]
            # choose the seat's move: heaviest (fives: most points first)
            move = None
            best = -1
            for t in hand:
                a, b = t
                if a == left or b == left:
                    key = a + b
                    if control:
                        nl = b if a == left else a
                        for x, y in hand:
                            if x == nl or y == nl:
                                key += control
                    if fives:
                        nl = b if a == left else a
                        c = (nl << 1 if a == b else nl) + (right << 1 if rdbl else right)
                        if c % 5 == 0 and c:
                            key += c * 20
                    if key > best:
                        best, move, side_end = key, t, "L"
                if a == right or b == right:
                    key = a + b
                    if control:
                        nr = b if a == right else a
                        for x, y in hand:
                            if x == nr or y == nr:
                                key += control
                    if fives:
                        nr = b if a == right else a
                        c = (left << 1 if ldbl else left) + (nr << 1 if a == b else nr)
                        if c % 5 == 0 and c:
                            key += c * 20
                    if key > best:
                        best, move, side_end = key, t, "R"
            if move is not None:
                hand.remove(move)
                continue
            drew = 0
            while drawable > 0 and drew < limit:
                t = bone.pop()
                drawable -= 1
                drew += 1
                a, b = t
                if a == left or b == left:
                    move, side_end = t, "L"
                    break
                if a == right or b == right:
                    move, side_end = t, "R"
                    break
                hand.append(t)
            if move is not None:
                continue
            if drawable <= 0 and not _any_plays(hands, left, right):
                return self._blocked(hands, points)
            seat = seat + 1 if seat + 1 < n else 0
            hand = hands[seat]

    def _domino(self, hands: list[list[TileT]], points: list[int], seat: int) -> float:
        winner = self.sides[seat]
        pips = self._side_pips(hands)
        opps = [p for s, p in enumerate(pips) if s != winner]
        points[winner] += _score(self.scoring, 0, opps)
        return self._value(points, self._reached(points))

    def _blocked(self, hands: list[list[TileT]], points: list[int]) -> float:
        pips = self._side_pips(hands)
        low = min(pips)
        tied = [s for s, p in enumerate(pips) if p == low]
        winner: int | None = tied[0]
        if len(tied) > 1:
            least = {
                s: min(
                    a + b
                    for seat in range(self.players)
                    if self.sides[seat] == s
                    for a, b in hands[seat]
                )
                for s in tied
            }
            best = min(least.values())
            firsts = [s for s in tied if least[s] == best]
            winner = firsts[0] if len(firsts) == 1 else None
        if winner is not None:
            opps = [p for s, p in enumerate(pips) if s != winner]
            points[winner] += _score(self.scoring, low, opps)
        return self._value(points, self._reached(points))

    def _side_pips(self, hands: list[list[TileT]]) -> list[int]:
        pips = [0] * self.nsides
        for seat, hand in enumerate(hands):
            pips[self.sides[seat]] += sum(a + b for a, b in hand)
        return pips

    def _reached(self, points: list[int]) -> int | None:
        best = max(range(self.nsides), key=lambda s: self.scores[s] + points[s])
        return best if self.scores[best] + points[best] >= self.target else None

    def _value(self, points: list[int], winner: int | None) -> float:
        mine = self.sides[self.me]
        others = sum(points) - points[mine]
        value = points[mine] - others / (self.nsides - 1)
        if winner is not None:
            value += self.bonus if winner == mine else -self.bonus
        return value


def _any_plays(hands: list[list[TileT]], left: int, right: int) -> bool:
    for hand in hands:
        for a, b in hand:
            if a in (left, right) or b in (left, right):
                return True
    return False


def _score(scoring: str, own: int, opps: list[int]) -> int:
    """What a round's winner scores (docs/rules.md "Scoring")."""
    if scoring == "positive-differences":
        return sum(max(0, p - own) for p in opps)
    if scoring == "differences":
        return sum(p - own for p in opps)
    if scoring == "rounded-fives":
        return (sum(opps) + 2) // 5
    if scoring == "round-wins":
        return 1
    return sum(opps) - own


def _heuristic(obs: Any, move: Any) -> tuple[int, int]:
    """Fallback order: in-play fives points (where they count), then pips."""
    points = 0
    if obs.params.get("in_play") == "fives":
        tile = move.tile
        if obs.ends is None:
            count = tile.pips
        else:
            left, right = obs.ends
            line = obs.line
            ldbl = line[0][0] == line[0][1]
            rdbl = line[-1][0] == line[-1][1]
            if move.end == "L":
                left, ldbl = tile.other(left), tile.is_double
            else:
                right, rdbl = tile.other(right), tile.is_double
            count = left * (2 if ldbl else 1) + right * (2 if rdbl else 1)
        points = count // 5 if count and count % 5 == 0 else 0
    return points, move.tile.pips


class Bot:
    """One game's montecarlo player (keeps the round's tracker between moves)."""

    def __init__(self) -> None:
        self.budget = TIME_BUDGET
        self.rng = random.Random()
        self.tracker = Tracker()

    def play(self, obs: Any) -> Any:
        """Return the legal move with the best average rollout within the time budget."""
        start = time.perf_counter()
        self.tracker.update(obs)
        legal = obs.legal_moves
        fallback = max(legal, key=lambda m: _heuristic(obs, m))
        candidates = _distinct(obs, legal)
        if len(candidates) == 1:
            return candidates[0]
        sim = Sim(obs, self.tracker)
        tiles = [((m.tile.high, m.tile.low), m.end or "L") for m in candidates]
        totals = [0.0] * len(candidates)
        deadline = start + self.budget
        samples = 0
        rng = self.rng
        while samples < MAX_SAMPLES and time.perf_counter() < deadline:
            hands, bone = sim.sample(rng)
            for i, (tile, end) in enumerate(tiles):
                totals[i] += sim.rollout([h[:] for h in hands], bone[:], tile, end)
            samples += 1
        if not samples:
            return fallback
        order = range(len(candidates))
        best = max(order, key=lambda i: (totals[i], candidates[i] == fallback))
        return candidates[best]


def _distinct(obs: Any, legal: Any) -> list[Any]:
    """The legal moves minus those that leave the same line ends as an earlier one."""
    if obs.ends is None or obs.ends[0] != obs.ends[1]:
        return list(legal)
    line = obs.line
    if (line[0][0] == line[0][1]) != (line[-1][0] == line[-1][1]):
        return list(legal)
    out: list[Any] = []
    tiles: set[Any] = set()
    for move in legal:
        if move.tile not in tiles:
            tiles.add(move.tile)
            out.append(move)
    return out
