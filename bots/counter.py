"""counter: count the tiles, remember who lacks what, block, and keep a varied hand.

A class ``Bot`` (one instance per game) that keeps track of the round:

- the tiles it has not seen: the whole set (``params["max_pip"]``) minus its
  hand minus the line; a suit with no unseen tile left is one nobody else can
  play;
- the suits each opponent showed it lacks: a seat that drew or passed while
  the ends were ``a`` and ``b`` held neither ``a`` nor ``b`` (the ends are
  rebuilt from the history of plays). Tiles drawn later may have them, so
  this knowledge is kept per tile held, and a suit counts as lacking only while
  every tile of that seat is known not to show it.

It scores every legal move and plays the best:

- **block**: leaving two ends the next opponent lacks (or that no unseen tile
  shows) makes it draw or pass; a single such end helps too;
- **control the ends**: it leaves ends in suits it holds many of and the next
  opponent probably holds few of (by the unseen count), so that it keeps
  answers for both ends while the opponent runs short;
- **keep a varied hand**: it wants tiles of its own for the new ends, and many
  different suits left in hand (it sheds from the suits it holds many of);
- **heavy and doubles first**: pips left in hand are what a round is scored
  from, and doubles are the hardest tiles to place later;
- **fives** (``muggins``): in-play points, minus the best points the next
  player could answer with.
"""

from __future__ import annotations

from typing import Any

NAME = "counter"

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


class Bot:
    """One game's counter player: a :class:`Tracker` per round and a scored choice per move."""

    #: Weights, in pips: a pip shed is worth 1 (tuned against greedy, 2 players).
    DOUBLE = 3.0  # a double placed
    STUCK = 6.0  # no tile of mine fits the new ends
    FOLLOW = 1.5  # per tile of mine that fits the new ends (up to 3)
    VARIETY = 1.0  # per suit still in my hand
    CONTROL = 2.5  # per tile of mine showing a new end's suit
    THEIRS = 4.0  # per tile of that suit the next opponent may hold (expected)
    BLOCK_BOTH = 20.0  # the opponent lacks both new ends (or nobody else holds them)
    BLOCK_ONE = 5.0  # ... one of them
    THREAT = 1.0  # per in-play point the next opponent may answer with (muggins)

    def __init__(self) -> None:
        self.tracker = Tracker()

    def play(self, obs: Any) -> Any:
        """Return the legal move with the best score."""
        self.tracker.update(obs)
        legal = obs.legal_moves
        if len(legal) == 1:
            return legal[0]
        view = _View(obs, self.tracker)
        return max(legal, key=lambda move: self.score(view, move))

    def score(self, view: _View, move: Any) -> float:
        """How good ``move`` looks, in pips' worth."""
        tile: TileT = (move.tile.high, move.tile.low)
        a, b = tile
        left, right, ldbl, rdbl = view.after(tile, move.end)
        rest = list(view.hand)
        rest.remove(tile)
        value = view.pip_weight * (a + b) + (self.DOUBLE if a == b else 0.0)
        follow = sum(1 for x, y in rest if left in (x, y) or right in (x, y))
        if rest and not follow:
            value -= self.STUCK
        value += self.FOLLOW * min(follow, 3)
        value += self.VARIETY * len({pip for t in rest for pip in t})
        for end in (left, right):  # ends in suits I hold and they probably do not
            mine = sum(1 for t in rest if end in t)
            theirs = view.unseen_suit[end] * view.next_size / max(1, len(view.unseen))
            value += self.CONTROL * mine - self.THEIRS * theirs
        for seat, weight in view.opponents:
            lacks = self.tracker.lacks(seat)
            dead_l = bool(lacks >> left & 1) or not view.unseen_suit[left]
            dead_r = bool(lacks >> right & 1) or not view.unseen_suit[right]
            if dead_l and dead_r:
                value += self.BLOCK_BOTH * weight
            elif dead_l or dead_r:
                value += self.BLOCK_ONE * weight
        if view.fives:
            value += 5 * _points(_count(left, right, ldbl, rdbl, view.lead))
            value -= 5 * self.THREAT * view.threat(left, right, ldbl, rdbl, self.tracker)
        return float(value)


class _View:
    """The facts every move's score needs, computed once per decision."""

    def __init__(self, obs: Any, tracker: Tracker) -> None:
        params = obs.params
        self.hand: list[TileT] = [(t.high, t.low) for t in obs.hand]
        max_pip = int(params.get("max_pip", 6))
        known = set(self.hand) | tracker.played
        self.unseen = [
            (h, low) for h in range(max_pip + 1) for low in range(h + 1) if (h, low) not in known
        ]
        self.unseen_suit = [0] * (max_pip + 1)
        for x, y in self.unseen:
            self.unseen_suit[x] += 1
            if x != y:
                self.unseen_suit[y] += 1
        self.fives = params.get("in_play") == "fives"
        self.lead = obs.ends is None
        self.ends = obs.ends
        line = obs.line
        self.ldbl = bool(line) and line[0][0] == line[0][1]
        self.rdbl = bool(line) and line[-1][0] == line[-1][1]
        partner = (obs.seat + 2) % 4 if obs.teams else None
        weights = (1.0, 0.5, 0.3, 0.2)
        seats = [(obs.seat + k) % obs.players for k in range(1, obs.players)]
        opponents = [s for s in seats if s != partner]
        self.opponents = list(zip(opponents, weights, strict=False))
        self.next = opponents[0]
        self.next_size = int(obs.hand_sizes[self.next])
        smallest = min(obs.hand_sizes[s] for s in opponents)
        # Heavy tiles cost most when an opponent may go out (or block) soon.
        self.pip_weight = 1.0 if smallest > 2 else 2.0
        if self.fives:
            self.pip_weight *= 0.6

    def after(self, tile: TileT, end: str | None) -> tuple[int, int, bool, bool]:
        """The ends (and whether each shows a double) after ``tile`` goes on ``end``."""
        double = tile[0] == tile[1]
        if self.ends is None:
            return tile[0], tile[1], double, double
        left, right = self.ends
        if end == "L":
            return _other(tile, left), right, double, self.rdbl
        return left, _other(tile, right), self.ldbl, double

    def threat(self, left: int, right: int, ldbl: bool, rdbl: bool, tracker: Tracker) -> float:
        """Expected best in-play points the next opponent can answer with."""
        lacks = tracker.lacks(self.next)
        best = 0
        scoring = 0
        for x, y in self.unseen:
            if lacks >> x & 1 and lacks >> y & 1:
                continue
            pts = 0
            if left in (x, y):
                pts = _points(_count(_other((x, y), left), right, x == y, rdbl, False))
            if right in (x, y):
                pts = max(pts, _points(_count(left, _other((x, y), right), ldbl, x == y, False)))
            if pts:
                scoring += 1
                best = max(best, pts)
        if not self.unseen:
            return 0.0
        return best * min(1.0, scoring * self.next_size / len(self.unseen))


def _count(left: int, right: int, ldbl: bool, rdbl: bool, lead: bool) -> int:
    """The muggins count: the ends' sum, a double on an end counting twice (a lead: its pips)."""
    if lead:
        return left + right
    return (left * 2 if ldbl else left) + (right * 2 if rdbl else right)


def _points(count: int) -> int:
    return count // 5 if count and count % 5 == 0 else 0
