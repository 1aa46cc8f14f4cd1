"""Branches played: other bots take a recorded game up from one of its turns.

:func:`play_branches` positions the recorded game at round ``R``, turn ``T``
(:func:`arena.engine.branch.branch_game`: the same deal, the same boneyard order, the
prefix verified), seats the given players (built-in strategies, or bot files in the
sandbox through :func:`arena.match.lineup.make_players`, exactly as in a match) and lets
the referee play the rest of round ``R``, ``times`` times; each repetition's bots are
seeded by :func:`arena.match.play.game_seeds` from ``seed``, so random bots play
differently in each and the same ``seed`` repeats them all. A bot's fault ends its
repetition with a verdict, as in any game. Each repetition becomes a game record of its
own (:func:`arena.engine.branch.branch_record`), which ``arena replay verify`` accepts.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from arena.engine.branch import branch_game, branch_record
from arena.engine.events import RoundResult
from arena.engine.game import Game
from arena.errors import RulesError
from arena.match.play import game_seeds
from arena.match.referee import Player, TimeControl, Verdict, play_match

__all__ = ["Branch", "play_branches"]

#: Repetitions of one branch at most.
MAX_TIMES = 10_000


@dataclass
class Branch:
    """One repetition of a branch.

    Attributes:
        index: which repetition, from 0.
        seed: the seed its bots were given (``game_seeds(seed, times)[index]``).
        game: the game, stopped once the branch's round was over (or ended by a forfeit).
        verdict: the forfeit's verdict when a bot faulted, else None.
        record: its game record, with the ``branch`` object (docs/records.md).
    """

    index: int
    seed: int
    game: Game
    verdict: Verdict | None
    record: dict[str, Any]

    def round_result(self, round_number: int) -> RoundResult | None:
        """How round ``round_number`` ended, or None when a forfeit cut it short."""
        return self.game.rounds[round_number - 1].result


def play_branches(
    record: Mapping[str, Any],
    round_number: int,
    turn: int,
    players: Sequence[Player],
    *,
    times: int = 1,
    seed: int,
    names: Sequence[str] | None = None,
    source: str | None = None,
    time_control: TimeControl | None = None,
) -> Iterator[Branch]:
    """Play round ``round_number`` of ``record`` on from ``turn`` (its plays kept) with
    ``players[seat]`` at each seat, ``times`` times; yield each repetition as it ends (in
    any order: see ``Branch.index``).

    ``names`` (default: the players' names once they are open) are the seat names of the
    branch records; ``source`` says where ``record`` came from, kept in them. The point is
    checked (and the record verified up to it) before any bot is started.

    Raises:
        ParseError: the record does not verify up to the point.
        RulesError: no such round or turn, the game is over there, or the players do
            not fit its seats.
        ValueError: ``times`` out of range, or ``names`` not one per seat.
        InfrastructureError: the harness failed (the repetitions not yet yielded are void).
    """
    if not 1 <= times <= MAX_TIMES:
        raise ValueError(f"times must be 1 to {MAX_TIMES}, not {times}")
    first = branch_game(record, round_number, turn)
    if len(players) != first.players:
        raise RulesError(f"{len(players)} bots for the {first.players} seats of this game")
    if names is not None and len(names) != len(players):
        raise ValueError(f"{len(names)} names for {len(players)} seats")
    games = [first] + [branch_game(record, round_number, turn) for _ in range(times - 1)]
    seeds = game_seeds(seed, times)
    match = play_match(
        first.rules,
        players,
        games=times,
        seed=seed,
        teams=first.teams,
        time_control=time_control,
        start=games,
        until_round=round_number,
    )
    for outcome in match:
        seat_names = list(names) if names is not None else [player.name for player in players]
        verdict = None if outcome.verdict is None else outcome.verdict.to_dict()
        data = branch_record(
            record,
            outcome.game,
            seat_names,
            round_number=round_number,
            turn=turn,
            seed=seeds[outcome.index],
            source=source,
            verdict=verdict,
            times=outcome.times,
        )
        yield Branch(outcome.index, seeds[outcome.index], outcome.game, outcome.verdict, data)
