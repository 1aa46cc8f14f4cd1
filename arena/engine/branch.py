"""Branches: a recorded game taken up again from one of its turns by other players.

A branch point is a round ``R`` of a game record (1-based) and a turn ``T``: the number
of round ``R``'s plays (decisions) kept. :func:`branch_game` checks that the record
verifies up to that point and returns the :class:`~arena.engine.game.Game` exactly there:
the rounds before ``R`` replayed as recorded, round ``R``'s deal (same hands, same
boneyard order) and its first ``T`` plays, with the draws and passes the engine makes
after them. Other players then play on (``arena.match.branch`` drives the referee), and
:func:`branch_record` writes the branch as a game record of its own: the rounds before
``R`` unchanged, round ``R`` as the new players finished it, nothing after it, and a
``branch`` object saying where it came from (docs/records.md). ``arena replay verify``
accepts it like any record.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from arena.engine.game import Game
from arena.engine.records import deal_from_dict, game_record, recorded_game, verify_record
from arena.engine.rules import rules_from_record
from arena.engine.tiles import Move
from arena.errors import ParseError, RulesError

__all__ = ["branch_game", "branch_record", "round_plays"]


def _rounds(record: Mapping[str, Any]) -> list[Any]:
    rounds = record.get("rounds") if isinstance(record, Mapping) else None
    if not isinstance(rounds, list) or not rounds:
        raise ParseError("the record does not verify: it has no rounds")
    return rounds


def _events(record: Mapping[str, Any], round_number: int) -> list[Any]:
    """Round ``round_number``'s events, after checking the round exists."""
    rounds = _rounds(record)
    if isinstance(round_number, bool) or not isinstance(round_number, int):
        raise RulesError(f"a round is a whole number, not {round_number!r}")
    if not 1 <= round_number <= len(rounds):
        raise RulesError(
            f"round {round_number} is out of range: the game has rounds 1 to {len(rounds)}"
        )
    data = rounds[round_number - 1]
    events = data.get("events") if isinstance(data, Mapping) else None
    if not isinstance(events, list):
        raise ParseError(f"the record does not verify: round {round_number} has no events list")
    return events


def _is_play(event: Any) -> bool:
    return isinstance(event, Mapping) and event.get("type") == "play"


def round_plays(record: Mapping[str, Any], round_number: int) -> int:
    """The number of plays (decisions) recorded in round ``round_number`` (1-based): the
    largest turn a branch of that round may keep.

    Raises:
        RulesError: no such round.
        ParseError: the record has no rounds, or the round no events.
    """
    return sum(map(_is_play, _events(record, round_number)))


def _prefix(record: Mapping[str, Any], round_number: int, turn: int) -> dict[str, Any]:
    """The record cut after round ``round_number``'s ``turn``-th play and the draws and
    passes that followed it (a whole record itself, which verifies when the game does up
    to that point)."""
    rounds = _rounds(record)
    events = _events(record, round_number)
    plays = [index for index, event in enumerate(events) if _is_play(event)]
    if isinstance(turn, bool) or not isinstance(turn, int):
        raise RulesError(f"a turn is a whole number, not {turn!r}")
    if not 0 <= turn <= len(plays):
        raise RulesError(
            f"turn {turn} is out of range: round {round_number} has "
            f"{len(plays)} play{'' if len(plays) == 1 else 's'} (turns 0 to {len(plays)})"
        )
    keep = plays[turn] if turn < len(plays) else len(events)
    prefix = dict(record)
    prefix["rounds"] = list(rounds[:round_number])
    whole = round_number == len(rounds) and keep == len(events)
    if keep < len(events):
        cut = dict(rounds[round_number - 1])
        cut["events"] = events[:keep]
        cut["result"] = None
        if isinstance(cut.get("times"), list):  # version 2: one per play, the kept ones
            cut["times"] = cut["times"][:turn]
        prefix["rounds"][-1] = cut
    if not whole:
        prefix["result"] = None
    return prefix


def branch_game(record: Mapping[str, Any], round_number: int, turn: int) -> Game:
    """The game of ``record`` at round ``round_number`` (1-based) after ``turn`` of its plays.

    The rounds before are replayed as recorded; round ``round_number`` is dealt as
    recorded (hands, boneyard order, lead) and its first ``turn`` plays applied, with the
    draws and passes the rules make after them. ``turn`` may be 0 (nobody has played) up
    to :func:`round_plays` (the round is over: the game waits in the next round's lead).
    The record must verify up to that point (what follows is not looked at).

    Raises:
        ParseError: the record does not verify up to that point (the message says where).
        RulesError: no such round or turn, or the game is over there.
    """
    prefix = _prefix(record, round_number, turn)
    problems = verify_record(prefix)
    if problems:
        raise ParseError(
            f"the record does not verify up to round {round_number}, turn {turn}: {problems[0]}"
        )
    rules_data = prefix["rules"]
    rules = rules_from_record(rules_data["name"], rules_data["params"])
    rounds: list[Mapping[str, Any]] = prefix["rounds"]
    seed = prefix.get("seed")
    deals = [deal_from_dict(data["deal"]) for data in rounds]
    explicit = [data.get("dealt") == "explicit" for data in rounds]
    given = explicit.index(False) if False in explicit else len(explicit)
    if isinstance(seed, int) and not any(explicit[given:]):
        # The leading explicit deals given, the rest dealt from the seed as recorded (the
        # record verified that they follow from it): a branch keeps "dealt": "seed".
        game = Game(rules, prefix["players"], teams=prefix["teams"], seed=seed, deals=deals[:given])
    else:
        game = recorded_game(rules, prefix["players"], prefix["teams"], seed, deals)
    for data in rounds:
        for event in data["events"]:
            if _is_play(event):
                game.apply(Move.parse(event["move"]))
    if game.is_terminal():
        raise RulesError(
            f"the game is over after round {round_number}, turn {turn}: nothing is left to play"
        )
    return game


def _keep_times(last: dict[str, Any], original: Mapping[str, Any], turn: int) -> None:
    """Round ``last`` of a branch gets the ``times`` of its first ``turn`` plays from the
    ``original`` round (version 2), and none at all when no play of it was timed."""
    theirs = original.get("times")
    plays = sum(map(_is_play, last["events"]))
    times = list(last.get("times") or [None] * plays)
    if isinstance(theirs, list) and len(theirs) == sum(map(_is_play, original["events"])):
        times[:turn] = copy.deepcopy(theirs[:turn])
    last.pop("times", None)
    if any(time is not None for time in times):
        last["times"] = times


def branch_record(
    record: Mapping[str, Any],
    game: Game,
    names: Sequence[str],
    *,
    round_number: int,
    turn: int,
    seed: int | None = None,
    source: str | None = None,
    verdict: Mapping[str, Any] | None = None,
    times: Sequence[tuple[float, float] | None] | None = None,
) -> dict[str, Any]:
    """The record of a branch: ``game`` (from :func:`branch_game` with the same
    ``record``, ``round_number`` and ``turn``) played on by ``names`` (one per seat).

    Rounds before ``round_number`` are copied from ``record`` unchanged, and round
    ``round_number``'s kept events too; the rest of the round is ``game``'s. A round the
    game started after ``round_number`` is left out, so the result is null unless the
    round ended the game (or a bot forfeited: ``verdict`` as in
    :func:`arena.engine.records.game_record`, and ``times``, the decisions' times in its
    form: one per play of ``game``, None for the plays before the point). The kept plays'
    times are the original's (when it has them). ``branch`` records the point, the
    original seat names, ``seed`` (what seeded the new players) and ``source`` (free
    text such as ``"match 12 game 3"``, kept when given).

    Raises:
        ValueError: ``names`` does not give one name per seat, or ``game`` has not
            reached round ``round_number``.
    """
    data = game_record(game, names, verdict=verdict, times=times)
    if len(data["rounds"]) < round_number:
        raise ValueError(f"the game has not reached round {round_number}")
    original = _rounds(record)
    rounds = copy.deepcopy(original[: round_number - 1])
    last = data["rounds"][round_number - 1]
    mine = original[round_number - 1]
    last["dealt"], last["redeals"] = mine.get("dealt"), copy.deepcopy(mine.get("redeals", []))
    kept = _prefix(record, round_number, turn)["rounds"][-1]["events"]
    last["events"][: len(kept)] = copy.deepcopy(kept)
    _keep_times(last, mine, turn)
    data["rounds"] = [*rounds, last]
    data["seed"] = record.get("seed")
    branch: dict[str, Any] = {
        "round": round_number,
        "turn": turn,
        "seats": list(record.get("seats") or []),
        "seed": seed,
    }
    if source is not None:
        branch["source"] = source
    data["branch"] = branch
    return data
