"""The game: rounds until a player or team reaches the target.

A :class:`Game` deals each round from its seed (or from explicit deals), plays
it through :class:`arena.engine.round.Round`, adds up the scores and starts the next
round until the game's end condition. Same rules, players and seed: same deals.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Iterator
from typing import Any

from arena.engine.deal import Deal
from arena.engine.events import Outcome, Termination
from arena.engine.observation import Observation
from arena.engine.round import Round, sides_of
from arena.engine.rules import Rules
from arena.engine.tiles import Move

__all__ = ["Game", "new_seed"]


def new_seed() -> int:
    """Return a fresh random seed (63 bits) for a game that was given none."""
    return random.SystemRandom().getrandbits(63)


class Game:
    """A game of ``players`` seats under ``rules``.

    Args:
        rules: the rule set.
        players: the number of seats.
        teams: 4 players as two teams (seats 0+2 v 1+3), where the rules allow it.
        seed: seeds every shuffle of the game; None picks a fresh one (see ``seed``).
        deals: explicit deals for the first rounds, used in order; later rounds
            are dealt from the seed.

    Raises:
        RulesError: the player count or teams are not allowed.
        DealError: an explicit deal does not fit.
    """

    def __init__(
        self,
        rules: Rules,
        players: int = 2,
        *,
        teams: bool = False,
        seed: int | None = None,
        deals: Iterable[Deal] = (),
    ) -> None:
        rules.check_players(players, teams)
        self.rules = rules
        self.players = players
        self.teams = teams
        self.seed = new_seed() if seed is None else seed
        self.rounds: list[Round] = []
        #: For each round: whether its deal was given explicitly (else from the seed).
        self.explicit: list[bool] = []
        self._rng = random.Random(self.seed)
        self._deals: Iterator[Deal] = iter(deals)
        self._sides = sides_of(players, teams)
        self._outcome: Outcome | None = None
        self._start_round([0] * (2 if teams else players))

    def _start_round(self, scores: list[int]) -> None:
        deal = next(self._deals, None)
        number = len(self.rounds) + 1
        if deal is None:
            round_ = Round.dealt(
                self.rules, self.players, self._rng, teams=self.teams, scores=scores, number=number
            )
        else:
            round_ = Round(self.rules, deal, teams=self.teams, scores=scores, number=number)
        self.rounds.append(round_)
        self.explicit.append(deal is not None)

    @property
    def redeals(self) -> list[tuple[Deal, ...]]:
        """For each round: the deals thrown in before it (no double in any hand)."""
        return [round_.redeals for round_ in self.rounds]

    @property
    def round(self) -> Round:
        """The round being played (or the last one, when the game is over)."""
        return self.rounds[-1]

    @property
    def seat(self) -> int | None:
        """The seat to move, or None when the game is over."""
        return None if self._outcome is not None else self.round.seat

    @property
    def scores(self) -> tuple[int, ...]:
        """Each side's score (per seat, or per team in team play)."""
        return self.round.scores

    @property
    def sides(self) -> tuple[int, ...]:
        """Each seat's side: its team in team play, else the seat itself."""
        return self._sides

    def is_terminal(self) -> bool:
        """Whether the game is over."""
        return self._outcome is not None

    def outcome(self) -> Outcome | None:
        """How the game ended, or None while it goes on."""
        return self._outcome

    def legal_moves(self) -> tuple[Move, ...]:
        """Return the legal moves of the seat to move, sorted; () when over."""
        return () if self._outcome is not None else self.round.legal_moves()

    def observation(self, seat: int) -> Observation:
        """Return what ``seat`` may know now (see :class:`arena.engine.observation.Observation`)."""
        return self.round.observation(seat)

    def delta(self, seat: int, since: int) -> dict[str, Any]:
        """Protocol v2's request for ``seat``: see :meth:`arena.engine.round.Round.delta`."""
        return self.round.delta(seat, since)

    def wire(self, seat: int, since: int, start: bool) -> dict[str, Any]:
        """Protocol v3's request for ``seat``: see :meth:`arena.engine.round.Round.wire`."""
        return self.round.wire(seat, since, start)

    def wire_json(self, seat: int, since: int, start: bool) -> tuple[str, int]:
        """:meth:`wire` as JSON text: see :meth:`arena.engine.round.Round.wire_json`."""
        return self.round.wire_json(seat, since, start)

    def apply(self, move: Move) -> None:
        """Play ``move`` for the seat to move; start the next round when this one ends.

        Raises:
            IllegalMoveError: the game is over or the move is not legal now.
        """
        round_ = self.round
        round_.apply(move)
        result = round_.result
        if result is None:
            return
        scores = list(round_.scores)
        goal = self.rules.wins_needed
        leaders = [side for side, score in enumerate(scores) if score >= goal]
        if result.termination is Termination.TARGET or leaders:
            side = leaders[0]
            winners = tuple(seat for seat, s in enumerate(self._sides) if s == side)
            self._outcome = Outcome(Termination.TARGET, winners, tuple(scores))
            return
        self._start_round(scores)

    def forfeit(self, seat: int, termination: Termination) -> Outcome:
        """End the game with ``seat`` forfeiting for a bot fault; the others win.

        Raises:
            ValueError: ``termination`` is not a bot fault, or the game is over.
        """
        if not termination.is_fault:
            raise ValueError(f"{termination.value} is not a bot fault")
        if self._outcome is not None:
            raise ValueError("the game is already over")
        loser = self._sides[seat]
        winners = tuple(s for s, side in enumerate(self._sides) if side != loser)
        self._outcome = Outcome(termination, winners, self.scores)
        return self._outcome
