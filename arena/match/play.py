"""Local play: games between built-in strategies in this process, and their summary.

This is the runner behind ``arena play``: no bot processes, no sandbox, no
database. A strategy that answers with a move that is not legal is a bug here and
raises :class:`arena.errors.IllegalMoveError` (bots that misbehave over the bot
protocol get verdicts instead; that is the match runner's job).

Reproducibility: a run has one seed, and :func:`game_seeds` derives each game's
seed from it. A game's seed alone reproduces the game: it seeds the deals
(:class:`arena.engine.game.Game`) and, through :func:`strategy_rng`, each seat's
strategy. Game 0 of a run plays with the run's seed itself, so
``arena play --games 1 --seed S`` replays the game whose record says ``seed: S``
(with the same rules and strategies).
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from arena.engine.events import Termination
from arena.engine.game import Game
from arena.engine.rules import Rules
from arena.errors import IllegalMoveError
from arena.match.strategies import BUILTIN_CLASSES, Strategy, make_strategy

__all__ = [
    "SeatSummary",
    "Summary",
    "entrant_rng",
    "game_seeds",
    "iter_game_seeds",
    "make_strategies",
    "play_game",
    "play_games",
    "strategy_rng",
]


def _derive(tag: str, *parts: int | str) -> int:
    """Return a 63-bit seed from ``tag`` and ``parts`` (SHA-256: stable everywhere)."""
    text = ":".join(["arena", tag, *map(str, parts)])
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") >> 1


def game_seeds(seed: int, games: int) -> list[int]:
    """Return the seeds of a run's ``games`` games, derived from the run's ``seed``.

    Game 0 plays with ``seed`` itself; game ``i`` > 0 with the first 63 bits of
    ``sha256(f"arena:game:{seed}:{i}")``. A game's seed does not depend on how
    many games the run has: ``game_seeds(s, 10)[:5] == game_seeds(s, 5)``.

    Raises:
        ValueError: ``games`` is negative.
    """
    return list(iter_game_seeds(seed, games))


def iter_game_seeds(seed: int, games: int) -> Iterator[int]:
    """:func:`game_seeds`, each derived as it is needed (``arena play --games 1000000``
    plays its first game at once, not after 1.4 s of hashes).

    Raises:
        ValueError: ``games`` is negative (at once, not at the first seed).
    """
    if games < 0:
        raise ValueError(f"games must be 0 or more, not {games}")
    return (seed if i == 0 else _derive("game", seed, i) for i in range(games))


def strategy_rng(game_seed: int, seat: int) -> random.Random:
    """Return the rng of ``seat``'s strategy in the game seeded ``game_seed``.

    Seeded with the first 63 bits of ``sha256(f"arena:strategy:{game_seed}:{seat}")``,
    so it is independent of the deals (which ``random.Random(game_seed)`` shuffles).
    """
    return random.Random(_derive("strategy", game_seed, seat))


def entrant_rng(game_seed: int, entrant: str) -> random.Random:
    """Return the rng of a tournament entrant's built-in strategy in the game seeded
    ``game_seed``: the same wherever the entrant sits, different between entrants."""
    return random.Random(_derive("entrant", game_seed, entrant))


def make_strategies(names: Sequence[str], game_seed: int) -> list[Strategy]:
    """Return a fresh built-in strategy per seat, each seeded by :func:`strategy_rng`.

    Raises:
        ParseError: an unknown strategy name.
    """
    return [make_strategy(name, strategy_rng(game_seed, seat)) for seat, name in enumerate(names)]


def strategy_name(strategy: Strategy) -> str:
    """Return a strategy's name for messages: its ``name``, else its ``__name__``, else repr."""
    name = getattr(strategy, "name", None) or getattr(strategy, "__name__", None)
    return name if isinstance(name, str) else repr(strategy)


def play_game(
    rules: Rules, strategies: Sequence[Strategy], *, teams: bool = False, seed: int
) -> Game:
    """Play one game to its end, one strategy per seat, and return it.

    Each seat to move is asked with ``game.observation(seat)``; a built-in strategy's seat
    with its ``choose(legal moves)`` (the same move, without building the observation:
    three quarters of a game's CPU were the observations).

    Raises:
        RulesError: the number of strategies (players) or teams is not allowed.
        IllegalMoveError: a strategy answered with a move not in its legal moves
            (the message names the strategy and the seat).
    """
    game = Game(rules, len(strategies), teams=teams, seed=seed)
    choosers = [s.choose if isinstance(s, BUILTIN_CLASSES) else None for s in strategies]
    while (seat := game.seat) is not None:
        choose = choosers[seat]
        if choose is not None:
            game.apply(choose(game.legal_moves()))
            continue
        observation = game.observation(seat)
        move = strategies[seat](observation)
        if move not in observation.legal_moves:
            legal = ", ".join(map(str, observation.legal_moves))
            raise IllegalMoveError(
                f"strategy {strategy_name(strategies[seat])!r} (seat {seat}) chose {move!r} "
                f"in round {observation.round} of game seed {seed}; legal: {legal}"
            )
        game.apply(move)
    return game


def play_games(
    rules: Rules, names: Sequence[str], *, games: int, seed: int, teams: bool = False
) -> Iterator[Game]:
    """Play ``games`` games of the built-in strategies ``names`` (one per seat), lazily.

    The setup is checked at once, before any game is played.

    Raises:
        RulesError: the player count (``len(names)``) or teams are not allowed.
        ParseError: an unknown strategy name.
        ValueError: ``games`` is negative.
    """
    rules.check_players(len(names), teams)
    seeds = iter_game_seeds(seed, games)
    make_strategies(names, seed)  # fail now on an unknown name
    return _play(rules, list(names), seeds, teams)


def _play(rules: Rules, names: list[str], seeds: Iterator[int], teams: bool) -> Iterator[Game]:
    for game_seed in seeds:
        yield play_game(rules, make_strategies(names, game_seed), teams=teams, seed=game_seed)


@dataclass(slots=True)
class SeatSummary:
    """One seat's figures over a run (its team's figures in team play).

    Attributes:
        name: the seat's strategy.
        games_won: games the seat (or its team) won.
        points: points scored in total (round wins in round-won games such as ``wooden``).
        rounds: rounds played (finished rounds only).
    """

    name: str
    games_won: int = 0
    points: int = 0
    rounds: int = 0

    @property
    def points_per_round(self) -> float:
        """Average points per round played (0.0 before any round)."""
        return self.points / self.rounds if self.rounds else 0.0


class Summary:
    """Figures of a run, updated from each finished game with :meth:`add`.

    Per seat: a :class:`SeatSummary`. In team play every seat reports its team's
    figures (both partners show the same games won and points). Overall: games,
    rounds, blocked rounds and drawn rounds (blocked with no winner).

    Args:
        names: each seat's strategy name.
        teams: whether the games are team games (seats 0+2 v 1+3).
    """

    def __init__(self, names: Sequence[str], *, teams: bool = False) -> None:
        self.teams = teams
        self.seats = [SeatSummary(name) for name in names]
        self.games = 0
        self.rounds = 0
        self.blocked = 0
        self.drawn = 0

    def add(self, game: Game) -> None:
        """Count a finished (or forfeited) game.

        Raises:
            ValueError: the game is not over, or has another number of seats.
        """
        outcome = game.outcome()
        if outcome is None:
            raise ValueError("cannot summarise a game that is not over")
        if game.players != len(self.seats):
            raise ValueError(f"a {game.players}-player game in a {len(self.seats)}-seat summary")
        sides = game.sides
        self.games += 1
        for round_ in game.rounds:
            result = round_.result
            if result is None:  # the round a forfeit interrupted
                continue
            self.rounds += 1
            self.blocked += result.termination is Termination.BLOCKED
            self.drawn += result.winner is None
            for seat, summary in enumerate(self.seats):
                summary.rounds += 1
                summary.points += result.points[sides[seat]]
        for seat in outcome.winners:
            self.seats[seat].games_won += 1

    def win_rate(self, seat: int) -> float:
        """The share of games ``seat`` (or its team) won, 0.0 to 1.0 (0.0 before any game)."""
        return self.seats[seat].games_won / self.games if self.games else 0.0
