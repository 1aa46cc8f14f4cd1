"""Game records: one versioned JSON document per game, and their verification.

A record holds everything needed to replay a game exactly: the rule set (name,
parameters and version hash), the seed, each round's deal (every hand, the
boneyard order, redeals, the lead draw), every event in order, each round's
result and the final result; since version 2, when the referee played the game, the
time each decision took (:func:`decision_times` reads them). ``docs/records.md``
documents the format and ``docs/record.schema.json`` is its JSON Schema.

:func:`verify_record` re-simulates a record with the engine, so a record that
verifies is a game the rules allow, move for move.
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from arena.engine.deal import Deal, deal_round
from arena.engine.events import Outcome, Play, RoundResult, Termination
from arena.engine.game import Game
from arena.engine.observation import event_to_dict
from arena.engine.round import Round
from arena.engine.rules import Rules, rules_from_record
from arena.engine.tiles import Move, Tile
from arena.errors import ArenaError, ParseError

__all__ = [
    "RECORD_FORMAT",
    "RECORD_VERSION",
    "RECORD_VERSIONS",
    "DecisionTime",
    "PlayWatcher",
    "VerifyReport",
    "decision_times",
    "game_record",
    "read_records",
    "recorded_game",
    "round_times",
    "slowest_decisions",
    "verified_game",
    "verify_file",
    "verify_record",
    "without_times",
]

RECORD_FORMAT = "domino-arena/game"
#: The version :func:`game_record` writes. Version 2 added each decision's time
#: (``rounds[].times``, ``result.verdict.time``); both are optional.
RECORD_VERSION = 2
#: The versions readers and :func:`verify_record` accept (a version 1 record has no times).
RECORD_VERSIONS = (1, 2)

#: Decision times are written in milliseconds rounded to this many decimals (10 µs).
TIME_DECIMALS = 2


# --- writing ------------------------------------------------------------------------


def game_record(
    game: Game,
    names: Sequence[str],
    *,
    verdict: Mapping[str, Any] | None = None,
    times: Sequence[tuple[float, float] | None] | None = None,
) -> dict[str, Any]:
    """Return the JSON-ready record of ``game``; ``names[seat]`` names each seat's strategy.

    ``verdict`` (``arena.match.referee.Verdict.to_dict()``) explains a forfeit: the
    offending seat, the fault, a message and the tail of the bot's stderr.

    ``times`` (``arena.match.referee.GameOutcome.times``) are the decisions' times in
    seconds, ``(cpu, wall)``, one per play of the game in order, or None for a decision
    nobody timed (a built-in strategy's); with a ``verdict``, one more may follow: the
    decision that forfeited. They are written in milliseconds (``rounds[].times``,
    ``result.verdict.time``), and left out when none was timed.

    Raises:
        ValueError: ``names`` does not give one name per seat, or ``times`` one time
            per play (and the forfeit), or a time is negative or not finite.
    """
    if len(names) != game.players:
        raise ValueError(f"{len(names)} names for {game.players} seats")
    per_round, fault_time = _split_times(game, times, verdict is not None)
    outcome = game.outcome()
    return {
        "format": RECORD_FORMAT,
        "version": RECORD_VERSION,
        "rules": {
            "name": game.rules.name,
            "version": game.rules.version,
            "params": game.rules.params(),
        },
        "players": game.players,
        "teams": game.teams,
        "seats": list(names),
        "seed": game.seed,
        "rounds": [
            _round_record(game, index, None if per_round is None else per_round[index])
            for index in range(len(game.rounds))
        ],
        "result": None if outcome is None else _outcome_record(outcome, verdict, fault_time),
    }


def _round_record(game: Game, index: int, times: list[Any] | None = None) -> dict[str, Any]:
    round_ = game.rounds[index]
    record = {
        "number": round_.number,
        "dealt": "explicit" if game.explicit[index] else "seed",
        "redeals": [deal_to_dict(deal) for deal in round_.redeals],  # (this round's alone)
        "deal": deal_to_dict(round_.deal),
        "leader": round_.leader,
        "events": [event_to_dict(event) for event in round_.events],
        "result": None if round_.result is None else result_to_dict(round_.result),
        "scores": list(round_.scores),
    }
    if times is not None:
        record["times"] = times
    return record


def _split_times(
    game: Game, times: Sequence[tuple[float, float] | None] | None, forfeited: bool
) -> tuple[list[list[Any]] | None, list[float] | None]:
    """``times`` as each round's ``times`` and the forfeiting decision's (None, None when
    nothing was timed)."""
    if times is None:
        return None, None
    plays = [sum(isinstance(event, Play) for event in r.events) for r in game.rounds]
    total = sum(plays)
    fault: tuple[float, float] | None = None
    if len(times) == total + 1 and forfeited:
        fault, times = times[-1], times[:-1]
    elif len(times) != total:
        extra = " (and the decision that forfeited)" if forfeited else ""
        raise ValueError(f"{len(times)} decision times for {total} plays{extra}")
    written = [None if t is None else _milliseconds(t) for t in times]
    fault_ms = None if fault is None else _milliseconds(fault)
    if fault_ms is None and all(t is None for t in written):
        return None, None
    per_round: list[list[Any]] = []
    for count in plays:
        per_round.append(written[:count])
        written = written[count:]
    return per_round, fault_ms


def _milliseconds(time: tuple[float, float]) -> list[float]:
    """``(cpu, wall)`` seconds as ``[cpu_ms, wall_ms]``."""
    if len(time) != 2 or not all(math.isfinite(t) and t >= 0 for t in time):
        raise ValueError(f"a decision time is (cpu, wall) seconds, not {time!r}")
    return [round(t * 1000, TIME_DECIMALS) for t in time]


def deal_to_dict(deal: Deal) -> dict[str, Any]:
    """Return a deal's JSON form."""
    return {
        "hands": [[str(t) for t in hand] for hand in deal.hands],
        "boneyard": [str(t) for t in deal.boneyard],
        "lead_draw": None if deal.lead_draw is None else [str(t) for t in deal.lead_draw],
    }


def result_to_dict(result: RoundResult) -> dict[str, Any]:
    """Return a round result's JSON form."""
    return {
        "termination": result.termination.value,
        "winner": result.winner,
        "seat": result.seat,
        "pips": list(result.pips),
        "points": list(result.points),
    }


def _outcome_record(
    outcome: Outcome,
    verdict: Mapping[str, Any] | None = None,
    time: list[float] | None = None,
) -> dict[str, Any]:
    result: dict[str, Any] = {
        "termination": outcome.termination.value,
        "winners": list(outcome.winners),
        "scores": list(outcome.scores),
    }
    if verdict is not None:
        result["verdict"] = dict(verdict)
        if time is not None:
            result["verdict"]["time"] = time
    return result


# --- reading --------------------------------------------------------------------------


def deal_from_dict(data: Any) -> Deal:
    """Parse a deal's JSON form.

    Raises:
        ParseError: not a deal.
    """
    if not isinstance(data, Mapping):
        raise ParseError(f"a deal is an object, not {_kind(data)}")
    hands = _list(data.get("hands"), "deal.hands")
    lead_draw = data.get("lead_draw")
    return Deal(
        hands=tuple(_tiles(hand, "deal.hands[]") for hand in hands),
        boneyard=_tiles(data.get("boneyard"), "deal.boneyard"),
        lead_draw=None if lead_draw is None else _tiles(lead_draw, "deal.lead_draw"),
    )


def _kind(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _list(value: Any, where: str) -> list[Any]:
    if not isinstance(value, list):
        raise ParseError(f"{where} must be a list, not {_kind(value)}")
    return value


def _tiles(value: Any, where: str) -> tuple[Tile, ...]:
    items = _list(value, where)
    if not all(isinstance(item, str) for item in items):
        raise ParseError(f"{where} must list tiles as text like '6-4'")
    return tuple(Tile.parse(item) for item in items)


def read_records(path: str | Path) -> Iterator[tuple[int, dict[str, Any] | ParseError]]:
    """Yield ``(line number, record or ParseError)`` for each non-blank line of a JSON-lines file.

    Raises:
        ParseError: the file cannot be opened or is not UTF-8 text.
    """
    try:
        handle = open(path, encoding="utf-8")  # noqa: SIM115 - closed below
    except OSError as exc:
        raise ParseError(f"cannot read {str(path)!r}: {exc.strerror}") from None
    with handle:
        try:
            for number, line in enumerate(handle, start=1):
                if line.strip():
                    yield number, _parse_line(line)
        except UnicodeDecodeError:
            raise ParseError(f"{path} is not UTF-8 text") from None


def _parse_line(line: str) -> dict[str, Any] | ParseError:
    try:
        data = json.loads(line)
    except (json.JSONDecodeError, RecursionError) as exc:
        return ParseError(f"not valid JSON: {exc}")
    if not isinstance(data, dict):
        return ParseError(f"a record is a JSON object, not {_kind(data)}")
    return data


# --- decision times (version 2) ------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DecisionTime:
    """One timed decision of a record, as the referee measured it.

    Attributes:
        seat: the seat that decided.
        round: the round's number (from 1).
        event: the index of its play in the round's ``events``; None for the decision
            that forfeited the game (it never became an event).
        cpu_ms: the CPU time charged for it, in milliseconds.
        wall_ms: the wall-clock time it took, in milliseconds.
    """

    seat: int
    round: int
    event: int | None
    cpu_ms: float
    wall_ms: float


def _is_time(value: Any) -> bool:
    """Whether ``value`` is a recorded time, ``[cpu_ms, wall_ms]``."""
    return (
        isinstance(value, list)
        and len(value) == 2
        and all(
            isinstance(t, int | float) and not isinstance(t, bool) and math.isfinite(t) and t >= 0
            for t in value
        )
    )


def round_times(round_record: Mapping[str, Any]) -> list[tuple[float, float] | None]:
    """The time of each of a round record's events, aligned with its ``events``:
    ``(cpu_ms, wall_ms)`` for a timed play, None for a draw, a pass, a play nobody timed,
    and every event of a round without ``times`` (version 1, or a game the referee did
    not play) or with malformed ones (:func:`verify_record` reports those)."""
    events = round_record.get("events")
    events = events if isinstance(events, list) else []
    times = round_record.get("times")
    plays = [i for i, e in enumerate(events) if isinstance(e, Mapping) and e.get("type") == "play"]
    aligned: list[tuple[float, float] | None] = [None] * len(events)
    if not isinstance(times, list) or len(times) != len(plays):
        return aligned
    for index, time in zip(plays, times, strict=True):
        if _is_time(time):
            aligned[index] = (float(time[0]), float(time[1]))
    return aligned


def decision_times(record: Mapping[str, Any]) -> list[DecisionTime]:
    """Every timed decision of a record in order, the one that forfeited (from
    ``result.verdict.time``) last; [] for a record without times."""
    rounds = record.get("rounds")
    rounds = rounds if isinstance(rounds, list) else []
    found: list[DecisionTime] = []
    number = 0
    for data in rounds:
        if not isinstance(data, Mapping):
            continue
        given = data.get("number")
        number = given if isinstance(given, int) else number + 1
        events = data["events"] if isinstance(data.get("events"), list) else []
        for index, time in enumerate(round_times(data)):
            seat = events[index].get("seat")
            if time is not None and isinstance(seat, int):
                found.append(DecisionTime(seat, number, index, *time))
    result = record.get("result")
    verdict = result.get("verdict") if isinstance(result, Mapping) else None
    if isinstance(verdict, Mapping) and _is_time(verdict.get("time")):
        seat, time = verdict.get("seat"), verdict["time"]
        if isinstance(seat, int):
            found.append(DecisionTime(seat, number, None, float(time[0]), float(time[1])))
    return found


def slowest_decisions(record: Mapping[str, Any]) -> dict[int, DecisionTime]:
    """Each timed seat's slowest decision: the most CPU time charged (then the most wall
    time; the first of equals); seats never timed are left out."""
    slowest: dict[int, DecisionTime] = {}
    for decision in decision_times(record):
        best = slowest.get(decision.seat)
        if best is None or (decision.cpu_ms, decision.wall_ms) > (best.cpu_ms, best.wall_ms):
            slowest[decision.seat] = decision
    return slowest


def without_times(record: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``record`` without its decision times (``rounds[].times``,
    ``result.verdict.time``): what two plays of the same games have in common (the same
    seeds and deterministic bots give the same records but for the times)."""
    copied = dict(record)
    rounds = record.get("rounds")
    if isinstance(rounds, list):
        copied["rounds"] = [
            {k: v for k, v in r.items() if k != "times"} if isinstance(r, Mapping) else r
            for r in rounds
        ]
    result = record.get("result")
    verdict = result.get("verdict") if isinstance(result, Mapping) else None
    if isinstance(result, Mapping) and isinstance(verdict, Mapping):
        untimed = {k: v for k, v in verdict.items() if k != "time"}
        copied["result"] = {**result, "verdict": untimed}
    return copied


# --- verification --------------------------------------------------------------------


@dataclass
class VerifyReport:
    """What :func:`verify_file` found: records checked and one line per problem."""

    games: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Whether every record verified."""
        return not self.problems


def verify_file(path: str | Path) -> VerifyReport:
    """Re-simulate every record of a JSON-lines file; see :func:`verify_record`.

    Raises:
        ParseError: the file cannot be read at all.
    """
    report = VerifyReport()
    for number, record in read_records(path):
        report.games += 1
        if isinstance(record, ParseError):
            report.problems.append(f"line {number}: {record}")
            continue
        report.problems.extend(f"line {number}: {problem}" for problem in verify_record(record))
    return report


class _MismatchError(Exception):
    """A record that contradicts the engine; stops checking the rest of its game."""


class PlayWatcher(Protocol):
    """What a caller sees of the engine while a record is verified (the replay builds its
    frames from it, so verifying and stepping through a game is one simulation)."""

    def round_started(self, round_: Round) -> None:
        """``round_`` was dealt and is about to be checked (no play of it applied yet)."""

    def played(self, round_: Round, position: int, legal: tuple[Move, ...]) -> None:
        """The record's event ``position`` of ``round_``, a play, was applied; ``legal``
        are the moves the engine offered before it."""


def verify_record(record: Mapping[str, Any], watcher: PlayWatcher | None = None) -> list[str]:
    """Re-simulate one record with the engine; return its inconsistencies ([] if none).

    Checks the rule set's hash, that seeded deals follow from the seed, that
    every play is legal, that draws, passes, round results and scores are
    exactly what the rules produce, and the final result; of decision times
    (version 2), only their shape: one per play, ``[cpu_ms, wall_ms]`` or null.
    Checking a game stops at its first inconsistency. ``watcher`` sees each round
    and play as it is checked.
    """
    problems: list[str] = []
    _checked_game(record, problems, watcher)
    return problems


def verified_game(record: Mapping[str, Any], watcher: PlayWatcher | None = None) -> Game:
    """The engine's game after re-simulating ``record`` as :func:`verify_record` does
    (``watcher`` sees each round and play); one simulation in all.

    Raises:
        ParseError: the record does not verify (the message is its first problem).
    """
    problems: list[str] = []
    game = _checked_game(record, problems, watcher)
    if problems or game is None:
        raise ParseError(f"the record does not verify: {problems[0]}")
    return game


def _checked_game(
    record: Mapping[str, Any], problems: list[str], watcher: PlayWatcher | None
) -> Game | None:
    try:
        return _verify(record, problems, watcher)
    except _MismatchError as exc:
        problems.append(str(exc))
    except ArenaError as exc:
        problems.append(f"invalid record: {exc}")
    return None


def _verify(
    record: Mapping[str, Any], problems: list[str], watcher: PlayWatcher | None = None
) -> Game:
    version = record.get("version")
    if (
        record.get("format") != RECORD_FORMAT
        or isinstance(version, bool)
        or version not in RECORD_VERSIONS
    ):
        known = " or ".join(map(str, RECORD_VERSIONS))
        raise _MismatchError(
            f"not a {RECORD_FORMAT} record of version {known} "
            f"(format {record.get('format')!r}, version {version!r})"
        )
    rules = _record_rules(record)
    players, teams, seed = record.get("players"), record.get("teams"), record.get("seed")
    if not isinstance(players, int) or not isinstance(teams, bool):
        raise _MismatchError("players must be a number and teams true or false")
    seats = _list(record.get("seats"), "seats")
    if len(seats) != players:
        problems.append(f"{len(seats)} seat names for {players} players")
    rounds = _list(record.get("rounds"), "rounds")
    if not rounds:
        raise _MismatchError("the record has no rounds")
    deals = [
        deal_from_dict(_mapping(r, f"round {i + 1}").get("deal")) for i, r in enumerate(rounds)
    ]
    _check_seeded_deals(rules, players, seed, rounds, deals)
    game = recorded_game(rules, players, teams, seed, deals)
    for index, data in enumerate(rounds):
        _replay_round(game, index, data, watcher)
        _check_times(data, version, f"round {index + 1}")
    _check_result(game, record.get("result"), version)
    return game


def recorded_game(
    rules: Rules, players: int, teams: bool, seed: Any, deals: Sequence[Deal]
) -> Game:
    """A new game as a record sets it up: its seed, or 0 where it has none (a record whose
    deals are all written may give none), and its written deals."""
    return Game(rules, players, teams=teams, seed=seed if isinstance(seed, int) else 0, deals=deals)


def _mapping(value: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise ParseError(f"{where} must be an object, not {_kind(value)}")
    return value


def _record_rules(record: Mapping[str, Any]) -> Rules:
    data = _mapping(record.get("rules"), "rules")
    name, params = data.get("name"), _mapping(data.get("params"), "rules.params")
    if not isinstance(name, str):
        raise ParseError("rules.name must be text")
    rules = rules_from_record(name, params)
    if data.get("version") != rules.version:
        raise _MismatchError(
            f"rules {name}: version {data.get('version')!r} does not match its "
            f"parameters (their hash is {rules.version})"
        )
    return rules


def _check_seeded_deals(
    rules: Rules, players: int, seed: Any, rounds: list[Any], deals: list[Deal]
) -> None:
    rng = random.Random(seed) if isinstance(seed, int) else None
    for index, (data, deal) in enumerate(zip(rounds, deals, strict=True)):
        if data.get("dealt") == "explicit":
            continue
        if rng is None:
            raise _MismatchError(
                f"round {index + 1}: dealt from the seed, but the seed is {seed!r}"
            )
        expected, redeals = deal_round(rules, players, rng)
        recorded = [deal_from_dict(r) for r in _list(data.get("redeals", []), "redeals")]
        if expected != deal or redeals != recorded:
            raise _MismatchError(f"round {index + 1}: the deal does not follow from seed {seed}")


def _replay_round(
    game: Game, index: int, data: Mapping[str, Any], watcher: PlayWatcher | None = None
) -> None:
    where = f"round {index + 1}"
    if game.is_terminal() or len(game.rounds) != index + 1:
        raise _MismatchError(f"{where}: recorded after the game ended")
    round_ = game.round
    if data.get("leader") != round_.leader:
        raise _MismatchError(
            f"{where}: leader {data.get('leader')!r}, but seat {round_.leader} leads"
        )
    events = _list(data.get("events"), f"{where} events")
    if watcher is not None:
        watcher.round_started(round_)
    checked = 0
    for index, event in enumerate(events):
        if isinstance(event, Mapping) and event.get("type") == "play":
            _compare_events(round_, events, checked, index, where)
            legal = round_.legal_moves() if watcher is not None else ()
            _replay_play(game, round_, f"{where}, event {index + 1}", event)
            if watcher is not None:
                watcher.played(round_, index, legal)
            checked = index
    _compare_events(round_, events, checked, len(events), where)
    _check_round_result(round_, data, where)


def _compare_events(round_: Round, events: list[Any], start: int, stop: int, where: str) -> None:
    """Compare the engine's events ``start:stop`` with the record's; the engine must
    have produced exactly ``stop`` events (it waits for the next play)."""
    produced = round_.events
    for index in range(start, stop):
        mine = event_to_dict(produced[index]) if index < len(produced) else None
        if mine != events[index]:
            given = "nothing (the round is over)" if round_.is_terminal() else mine
            given = "nothing (a play is due)" if mine is None and given is None else given
            raise _MismatchError(
                f"{where}, event {index + 1}: recorded {events[index]}, the rules give {given}"
            )
    if len(produced) > stop:
        recorded = events[stop] if stop < len(events) else "the end of the round"
        raise _MismatchError(
            f"{where}, event {stop + 1}: recorded {recorded}, the rules give "
            f"{event_to_dict(produced[stop])}"
        )


def _replay_play(game: Game, round_: Round, where: str, event: Mapping[str, Any]) -> None:
    if round_.is_terminal():
        raise _MismatchError(f"{where}: play {event.get('move')!r} after the round ended")
    move_text = event.get("move")
    if not isinstance(move_text, str):
        raise _MismatchError(f"{where}: a play needs a move like '6-4L'")
    move = Move.parse(move_text)
    if event.get("seat") != round_.seat:
        raise _MismatchError(
            f"{where}: play by seat {event.get('seat')!r}, but seat {round_.seat} moves"
        )
    try:
        game.apply(move)
    except ArenaError as exc:
        raise _MismatchError(f"{where}: {exc}") from None


def _check_times(data: Mapping[str, Any], version: int, where: str) -> None:
    """A round's ``times``, when present: version 2, one ``[cpu_ms, wall_ms]`` (two
    non-negative numbers) or null per play of the round's events (already verified)."""
    if "times" not in data:
        return
    if version < 2:
        raise _MismatchError(f"{where}: times in a version {version} record (added in 2)")
    times = data["times"]
    plays = sum(isinstance(e, Mapping) and e.get("type") == "play" for e in data["events"])
    if not isinstance(times, list) or len(times) != plays:
        count = f"{len(times)} times" if isinstance(times, list) else f"times {times!r}"
        raise _MismatchError(f"{where}: {count} for {plays} plays (one per play)")
    for number, time in enumerate(times, start=1):
        if time is not None and not _is_time(time):
            raise _MismatchError(
                f"{where}, play {number}: time {time!r} is neither [cpu_ms, wall_ms] "
                "(two non-negative numbers) nor null"
            )


def _check_round_result(round_: Round, data: Mapping[str, Any], where: str) -> None:
    result = round_.result
    recorded = data.get("result")
    if result is None:
        if recorded is not None:
            raise _MismatchError(f"{where}: recorded as over ({recorded}), but the round goes on")
        return
    expected = result_to_dict(result)
    if recorded != expected:
        raise _MismatchError(f"{where}: result {recorded}, the rules give {expected}")
    if data.get("scores") != list(round_.scores):
        raise _MismatchError(
            f"{where}: scores {data.get('scores')}, the rules give {list(round_.scores)}"
        )


def _check_result(game: Game, recorded: Any, version: int) -> None:
    outcome = game.outcome()
    if isinstance(recorded, Mapping) and "verdict" in recorded:
        verdict = recorded["verdict"]
        recorded = {key: value for key, value in recorded.items() if key != "verdict"}
        if not isinstance(verdict, Mapping) or verdict.get("termination") != recorded.get(
            "termination"
        ):
            raise _MismatchError(f"verdict {verdict} does not match the result {recorded}")
        if "time" in verdict and version < 2:
            raise _MismatchError(f"a verdict time in a version {version} record (added in 2)")
        if "time" in verdict and not _is_time(verdict["time"]):
            raise _MismatchError(
                f"verdict time {verdict['time']!r} is not [cpu_ms, wall_ms] "
                "(two non-negative numbers)"
            )
        if recorded.get("termination") == Termination.TARGET.value:
            raise _MismatchError("a game played to its end has no verdict")
    if outcome is None and isinstance(recorded, Mapping):
        try:
            termination = Termination(recorded.get("termination"))
        except ValueError:
            raise _MismatchError(f"unknown termination {recorded.get('termination')!r}") from None
        if termination.is_fault:
            winners = recorded.get("winners") or []
            loser = next(seat for seat in range(game.players) if seat not in winners)
            outcome = game.forfeit(loser, termination)
    expected = None if outcome is None else _outcome_record(outcome)
    if outcome is None and recorded is not None:
        raise _MismatchError(
            f"result {recorded}, but the game goes on after its last recorded round"
        )
    if recorded != expected:
        raise _MismatchError(f"result {recorded}, the rules give {expected}")
