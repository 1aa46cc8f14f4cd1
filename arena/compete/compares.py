"""A compare's duplicate deals without the store: its schedule, and NEW's values in each
deal group that the regression test reads.

``arena compare`` plays these here (:mod:`arena.cli.compare`) and the workers play them
as a stored tournament (:mod:`arena.service.compares`): the same seed deals the same
games in both. Kept below the service layer, so that the local command loads neither the
store nor the broker.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Sequence
from typing import Any

from arena.compete.entrants import Entrant
from arena.compete.localrun import GameResult, MatchResult
from arena.compete.margins import LUCK_TERMS, GroupMargin, draw_luck, game_margin, game_score
from arena.compete.testspec import group_size
from arena.compete.tournaments import Match as ScheduledMatch
from arena.compete.tournaments import deal_seed, schedule
from arena.engine.rules import Rules
from arena.errors import VerdictError

__all__ = [
    "batch_seed",
    "check_seats",
    "compare_entrants",
    "compare_schedule",
    "deal_groups",
    "group_of",
    "group_size",
    "new_game",
    "same_source_refusal",
]


def batch_seed(seed: int, batch: int) -> int:
    """The seed of a compare's batch ``batch``: the same deals whoever plays them."""
    digest = hashlib.sha256(f"arena:compare:{seed}:{batch}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def compare_entrants(new: Entrant, old: Entrant, size: int) -> list[Entrant]:
    """A compare's entrants for deal groups of ``size`` games: NEW labelled ``new``, and
    ``size - 1`` copies of OLD labelled ``old1``, ``old2``..."""
    return [
        dataclasses.replace(new, label="new"),
        *(dataclasses.replace(old, label=f"old{i}") for i in range(1, size)),
    ]


def compare_schedule(
    rules: Rules,
    players: int,
    *,
    new: Entrant,
    old: Entrant,
    max_games: int,
    batch: int,
    seed: int,
    teams: bool = False,
) -> list[ScheduledMatch]:
    """Every match of a compare of ``new`` against ``old``: ``batch`` deal groups a batch
    (the last has what is left of ``max_games // group_size`` groups), keyed ``bNNNNN-...``
    by batch, each batch its own deal group; the entrants are :func:`compare_entrants`'s
    (in team play ``new`` and ``old1``, each partnering a copy of itself).

    Raises:
        RulesError: ``players`` or ``teams`` not allowed by ``rules``.
    """
    size = group_size(players, teams)
    deals = max_games // size
    # Every batch seats the same (one table of the entrants, a match a seat rotation),
    # only its games and seeds differ: the generic schedule (which checks the players and
    # the labels) is made once, and its matches copied a batch (625 schedules were a
    # quarter of storing a compare of 20,000 games).
    template = schedule(
        "duplicate",
        compare_entrants(new, old, size),
        rules=rules,
        players=players,
        teams=teams,
        games_per_match=batch,
        seed=0,
    )
    matches: list[ScheduledMatch] = []
    for number in range(-(-deals // batch)):
        tag = f"b{number:05d}"
        games = min(batch, deals - number * batch)
        seed_of = batch_seed(seed, number)
        for match in template:
            assert match.deal_group is not None  # (every match of duplicate deals has one)
            matches.append(
                ScheduledMatch(
                    f"{tag}-{match.id}",
                    match.seats,
                    games,
                    deal_seed(seed_of, match.deal_group),
                    tag,
                    match.rotation,
                    match.teams,
                )
            )
    return matches


def same_source_refusal(new: str, old: str, source: str) -> str:
    """Why a compare of ``new`` and ``old``, whose sources both hash to ``source``, is
    refused unless asked for."""
    return (
        f"NEW {new} and OLD {old} have the same source (sha256 {source[:12]}): a bot "
        "measured against itself tests nothing (a deterministic one gives every deal group "
        "a margin of exactly 0); compare two different sources, or allow it explicitly "
        "(--allow-same-source; allow_same_source in the API)"
    )


def check_seats(
    result: MatchResult,
    sources: tuple[str, str] | None = None,
    allow_same_source: bool = False,
) -> None:
    """Check what a compare's match ran (:attr:`MatchResult.sources`, each seat's source
    as it was read when the match began) before its games count: each seat the source of
    its entrant, NEW's (``sources[0]``) where the label is ``new`` and OLD's
    (``sources[1]``) elsewhere, when ``sources`` are known; and NEW's side and OLD's side
    different sources, unless ``allow_same_source``. A match that did not keep its
    sources (stored before they were), or is void, is not checked.

    Raises:
        VerdictError: a seat ran another source than its entrant's, or both sides ran the
            same source (the message names the match, the seats and the sources).
    """
    if result.void is not None or not result.sources:
        return
    labels = [entrant.label for entrant in result.match.seats]
    ran = result.sources
    if len(ran) != len(labels):
        raise VerdictError(
            f"match {result.id}: {len(ran)} sources kept for its {len(labels)} seats"
        )
    if sources is not None:
        for seat, (label, source) in enumerate(zip(labels, ran, strict=True)):
            wanted = sources[0] if label == "new" else sources[1]
            if source != wanted:
                raise VerdictError(
                    f"match {result.id}: seat {seat} ({label}) ran source {source[:12]}, "
                    f"not its entrant's {wanted[:12]}: its games give no verdict"
                )
    if allow_same_source:
        return
    new = {source for label, source in zip(labels, ran, strict=True) if label == "new"}
    old = {source for label, source in zip(labels, ran, strict=True) if label != "new"}
    both = sorted(new & old)
    if both:
        raise VerdictError(
            f"match {result.id}: NEW and OLD ran the same source ({both[0][:12]}): a bot "
            "measured against itself gives no verdict (allow it explicitly with "
            "--allow-same-source)"
        )


def _result_record(game: GameResult, teams: bool) -> dict[str, Any]:
    """The game's record, or the part of one that its stored result holds (who won, the
    final scores, the verdict): enough for :func:`arena.compete.margins.game_score` and
    :func:`~arena.compete.margins.game_margin`."""
    if game.record:
        return game.record
    players = len(game.points)
    sides = [seat % 2 if teams else seat for seat in range(players)]
    return {
        "players": players,
        "teams": teams,
        "result": {
            "termination": game.termination,
            "winners": list(game.winners),
            "scores": [game.points[sides.index(side)] for side in range(max(sides) + 1)],
            "verdict": game.verdict,
        },
    }


def new_game(game: GameResult, seat: int, teams: bool = False, luck: bool = True) -> GroupMargin:
    """NEW's game score, point margin and luck of the draw in one game, NEW at ``seat``
    (:mod:`arena.compete.margins`). The luck is the stored result's (``GameResult.luck``),
    else read from the record, else 0 (a game stored before its luck was kept, or
    ``luck=False``: the game-level test reads none)."""
    record = _result_record(game, teams)
    lucks: tuple[float, ...]
    if game.luck:
        lucks = tuple(game.luck[seat])
    elif luck and record.get("rounds") is not None:
        lucks = draw_luck(record, seat)
    else:
        lucks = (0.0,) * len(LUCK_TERMS)
    return GroupMargin(
        score=game_score(record, seat),
        margin=game_margin(record, seat),
        luck=lucks,  # type: ignore[arg-type]
        forfeit=game.termination != "target",
    )


def group_of(games: Sequence[GroupMargin]) -> GroupMargin:
    """A deal group's values for the test: the means of its games'.

    Raises:
        ValueError: no games.
    """
    if not games:
        raise ValueError("a deal group has at least one game")
    count = len(games)
    terms = len(games[0].luck)
    return GroupMargin(
        score=sum(game.score for game in games) / count,
        margin=sum(game.margin for game in games) / count,
        luck=tuple(sum(game.luck[k] for game in games) / count for k in range(terms)),  # type: ignore[arg-type]
        forfeit=any(game.forfeit for game in games),
    )


def deal_groups(
    results: Sequence[MatchResult],
    luck: bool = True,
    *,
    sources: tuple[str, str] | None = None,
    allow_same_source: bool = False,
) -> dict[tuple[str, int], list[GroupMargin]]:
    """NEW's values in each game of each deal group (the same deal, seats rotated), by
    (deal group, game index); ``luck=False``: no luck read from the records (:func:`new_game`).
    Each match's seats are checked first (:func:`check_seats`, with ``sources`` and
    ``allow_same_source``).

    Raises:
        VerdictError: as :func:`check_seats`.
    """
    groups: dict[tuple[str, int], list[GroupMargin]] = {}
    for result in results:
        if result.match.deal_group is None or result.void is not None:
            continue
        check_seats(result, sources, allow_same_source)
        seat = [entrant.label for entrant in result.match.seats].index("new")
        for game in result.games:
            key = (result.match.deal_group, game.index)
            groups.setdefault(key, []).append(new_game(game, seat, result.match.teams, luck))
    return groups
