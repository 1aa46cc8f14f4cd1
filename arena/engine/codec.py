"""Game records as compact bytes, losslessly: :func:`encode` and :func:`decode`.

A record (:mod:`arena.engine.records`) is verbose JSON, about 20 KB a game; most of it
follows from the rules, the seed and the players' choices. The compact encoding keeps
only those: the rule set by its digest (or inline), the seed, the deals the seed does
not give, each play as its index among the legal moves, the decision times as varints,
the verdict of a forfeit; :func:`decode` replays them through the engine and writes the
record again with :func:`arena.engine.records.game_record`.

Every encoding starts with a byte naming it (:data:`CODEC_VERSION`, :data:`FALLBACK`):

- ``1``, compact: zlib (level 9) of a small JSON skeleton, a newline, one byte a play,
  then the times;
- ``0``, the fallback: zlib of the record's JSON (canonical, but its keys in the order
  given), for any record the compact encoding cannot reproduce (an unknown field, a
  future record version, a record the engine does not replay).

:func:`encode` checks that what it made decodes to the record, canonically serialised
(:func:`canonical`); anything short of byte-identical takes the fallback, so no record is
ever stored other than it was given. It replays the game once: the record
:func:`decode` would write is written from that replay by :func:`decode`'s own steps and
compared with the given one (:func:`_reproduces` says why that is exact).
``docs/records.md`` ("The compact encoding") describes the format.
"""

from __future__ import annotations

import json
import marshal
import zlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from arena.engine.deal import Deal
from arena.engine.events import Play, Termination
from arena.engine.game import Game
from arena.engine.records import (
    RECORD_FORMAT,
    RECORD_VERSIONS,
    deal_from_dict,
    deal_to_dict,
    game_record,
    recorded_game,
)
from arena.engine.rules import PRESETS, Rules, rules_from_record
from arena.engine.tiles import Move
from arena.errors import ArenaError, ParseError

__all__ = [
    "CODEC_VERSION",
    "FALLBACK",
    "ZDICT",
    "RulesTable",
    "canonical",
    "decode",
    "encode",
    "encoding_of",
    "rules_entry",
]

#: The first byte of a compact encoding.
CODEC_VERSION = 1
#: The first byte of the fallback: zlib of the JSON (no spaces, the keys' order kept).
FALLBACK = 0

#: Rule sets a compact record may name by digest: ``{version: {"name", "version", "params"}}``,
#: each a record's ``rules`` object (the presets are always known).
RulesTable = Mapping[str, Mapping[str, Any]]

#: The record's fields the skeleton rebuilds; any other sends a record to the fallback
#: unless it is a top-level field kept verbatim (``branch``, or a future one).
_KNOWN = frozenset(
    {"format", "version", "rules", "players", "teams", "seats", "seed", "rounds", "result"}
)
#: zlib's preset dictionary for the compact encoding's skeleton: what most skeletons say
#: (the presets' digests of this version, the built-in strategies' names, the keys). Part
#: of encoding 1 for ever: changing a byte of it makes every stored record unreadable, so
#: a new dictionary is a new encoding version (tests/engine/test_codec.py pins its checksum).
ZDICT = (
    b'"k":10,"n":,"t":[1,1,1,1,1,1,1,1,1,1,1,1,1,1],"d":null,"e":[{"hands":[["'
    b'"seat":0,"termination":"timeout","message":"","stderr":""'
    b'"r":"e73dc4682f499e22""r":"679f17275d4d95a0""r":"3ffab75c69f9cd1a"'
    b'"r":"c5c4d81d971a6a70""r":"a89d66440d0f6a47""r":"b2732041b78a6cca""r":"c00b3645860579bf"'
    b'{"v":2,"p":2,"T":false,"s":["random","greedy","fives","counter"],"d":'
)
#: The largest index a play's byte can hold.
_MAX_INDEX = 255


def canonical(record: Any) -> str:
    """A record's canonical JSON: sorted keys, no spaces (the codec's measure of equal)."""
    return json.dumps(record, sort_keys=True, separators=(",", ":"))


def rules_entry(rules: Rules) -> dict[str, Any]:
    """A rule set as a record's ``rules`` object (an entry of a :data:`RulesTable`)."""
    return {"name": rules.name, "version": rules.version, "params": rules.params()}


_PRESETS: dict[str, dict[str, Any]] = {
    rules.version: rules_entry(rules) for rules in PRESETS.values()
}


def encoding_of(data: bytes) -> int:
    """The encoding an encoded record uses (its first byte).

    Raises:
        ParseError: ``data`` is empty.
    """
    if not data:
        raise ParseError("an encoded record is empty")
    return data[0]


# --- encoding -------------------------------------------------------------------------


def encode(record: Mapping[str, Any], rules_table: RulesTable | None = None) -> bytes:
    """``record`` as compact bytes: :data:`CODEC_VERSION` when the compact encoding
    reproduces it exactly, else the :data:`FALLBACK` (never lossy, never refused).

    A rule set found in ``rules_table`` (or a preset) is written as its digest: decode
    with the same table.

    The game is replayed once: :func:`decode`'s own steps after its replay
    (:func:`_finish`) write the record again from this replay, and the compact encoding
    is kept only when that record is the given one (:func:`_reproduces` says why that
    is what :func:`decode` returns).

    Raises:
        TypeError, ValueError: ``record`` is not JSON (a value ``json.dumps`` refuses).
    """
    try:
        packed = _pack(record, rules_table)
        if packed is not None and _reproduces(packed, record, rules_table):
            return packed.data
    except Exception:  # whatever the compact path cannot take, the fallback keeps
        pass
    # Refuse, as ever, what canonical JSON cannot write (such as keys of mixed types,
    # which json.dumps writes unsorted); the compact path never took such a record.
    canonical(record)
    kept = json.dumps(record, separators=(",", ":"))  # canonical but for the keys' order
    return bytes([FALLBACK]) + zlib.compress(kept.encode(), 9)


@dataclass(frozen=True, slots=True)
class _Packed:
    """A compact encoding and what :func:`encode` checks it with.

    Attributes:
        data: the encoding.
        head: its skeleton's JSON; tail: the plays' and the times' bytes after it.
        game: the game replayed from the record's plays.
    """

    data: bytes
    head: bytes
    tail: bytes
    game: Game


def _pack(record: Mapping[str, Any], table: RulesTable | None) -> _Packed | None:
    """The compact encoding of ``record``, or None where it plainly does not fit (the
    caller checks the rest: :func:`_reproduces`)."""
    version = record.get("version")
    if (
        record.get("format") != RECORD_FORMAT
        or isinstance(version, bool)
        or version not in RECORD_VERSIONS
        or not isinstance(record.get("rounds"), list)
    ):
        return None
    rounds: list[Mapping[str, Any]] = record["rounds"]
    rules_data = record["rules"]
    rules = _record_rules(rules_data["name"], rules_data["params"])
    explicit = _explicit_deals(rounds)
    if explicit is None:
        return None
    seed = record["seed"]
    game = recorded_game(rules, record["players"], record["teams"], seed, explicit)
    plays = _plays(game, rounds)
    skeleton: dict[str, Any] = {
        "v": version,
        "r": _rules_reference(rules_data, table),
        "p": record["players"],
        "T": record["teams"],
        "s": record["seats"],
        "d": seed,
        "k": len(rounds),
        "n": len(plays),
    }
    if explicit:
        skeleton["e"] = [deal_to_dict(deal) for deal in explicit]
    timed = [int("times" in r) for r in rounds]
    times = bytearray()
    if any(timed):
        skeleton["t"] = timed
        for round_ in rounds:
            if "times" in round_:
                _add_time_bytes(times, round_["times"])
    result = record["result"]
    if isinstance(result, Mapping) and "verdict" in result:
        skeleton["f"] = result["verdict"]
    extra = {key: value for key, value in record.items() if key not in _KNOWN}
    if extra:
        skeleton["x"] = extra
    head = json.dumps(skeleton, separators=(",", ":")).encode()
    tail = bytes(plays + times)
    packer = zlib.compressobj(9, zdict=ZDICT)
    body = packer.compress(head + b"\n" + tail) + packer.flush()
    return _Packed(bytes([CODEC_VERSION]) + body, head, tail, game)


def _plays(game: Game, rounds: Sequence[Mapping[str, Any]]) -> bytearray:
    """Play the rounds' plays in ``game``: each one's index among the legal moves.

    Raises:
        ArenaError, ValueError: a play the rules do not allow here, or one past
            :data:`_MAX_INDEX`.
    """
    plays = bytearray()
    legal_moves, apply, parse = game.legal_moves, game.apply, Move.parse
    for round_ in rounds:
        for event in round_["events"]:
            if event.get("type") == "play":
                move = parse(event["move"])
                legal = legal_moves()
                plays.append(0 if legal and legal[0] is move else _index_of(move, legal))
                apply(move)
    return plays


def _index_of(move: Move, legal: tuple[Move, ...]) -> int:
    """``legal.index(move)``, found by identity first: the engine's moves are interned,
    and comparing moves for equality costs a call each (legal moves are distinct, so the
    identical one is the first equal one).

    Raises:
        ValueError: ``move`` is not legal, or its index is past :data:`_MAX_INDEX`.
    """
    for position, candidate in enumerate(legal):
        if candidate is move:
            index = position
            break
    else:
        index = legal.index(move)
    if index > _MAX_INDEX:
        raise ValueError(f"move {move} is legal move {index}: past {_MAX_INDEX}")
    return index


def _reproduces(packed: _Packed, record: Mapping[str, Any], table: RulesTable | None) -> bool:
    """Whether :func:`decode` gives ``record`` back from ``packed.data`` (canonically).

    :func:`decode` replays the plays' indices in a game set up from the skeleton, then
    writes the record (:func:`_finish`). When ``record`` set up ``packed.game`` with values
    the skeleton gives back exactly (:func:`_set_up_alike`), that game is :func:`decode`'s:
    the same rules, players, teams, seed and deals, and the same moves (the legal move at
    each index is the one played). So :func:`_finish` on it, with the skeleton as
    :func:`decode` reads it, is what :func:`decode` returns, without a second replay. That
    record is compared first as the same values of the same types, keys in the same order
    (:func:`_identical`, what a record :func:`game_record` wrote passes), then as canonical
    JSON (the measure of equal: keys in another order); any other setup is checked by
    decoding, as before.

    Raises:
        Exception: whatever :func:`decode` would raise on ``packed.data`` (the record
            takes the fallback).
    """
    skeleton = _json_object(packed.head)
    rules_data = _rules_of(skeleton["r"], table)
    if not _set_up_alike(record, rules_data):
        return canonical(decode(packed.data, table)) == canonical(record)
    count = skeleton["n"]
    written = _finish(packed.game, skeleton, rules_data, packed.tail[count:])
    return _identical(written, record) or canonical(written) == canonical(record)


def _set_up_alike(record: Mapping[str, Any], rules_data: Mapping[str, Any]) -> bool:
    """Whether :func:`decode` sets its game up as :func:`_pack` did from ``record``: an
    ``int`` player count, a ``bool`` for teams and an ``int`` seed or none (values that
    come back from the skeleton's JSON as they went in), and rules from the very name and
    parameters (the same types, in the same order) that :func:`decode` reads,
    ``rules_data``. The explicit deals need no check: a deal read back from its JSON form
    is the same deal."""
    seed, given = record["seed"], record["rules"]
    return (
        type(record["players"]) is int
        and type(record["teams"]) is bool
        and (seed is None or type(seed) is int)
        and _identical(given["name"], rules_data["name"])
        and _identical(given["params"], rules_data["params"])
    )


def _identical(first: Any, second: Any) -> bool:
    """Whether two JSON values are the same values of the same types (``1`` is not
    ``1.0`` nor ``true``, ``0.0`` is not ``-0.0``, as in canonical JSON), their keys in the
    same order: a sufficient test of canonical equality, a fraction of its cost (and of a
    decode's). Python's ``==`` would not do: ``1 == 1.0 == True``."""
    form = _plain(first)
    return form is not None and form == _plain(second)


def _plain(value: Any) -> bytes | None:
    """``value``'s :mod:`marshal` form (version 2, which writes no back-references, so
    equal values give equal bytes whatever objects they share), or None for a value
    marshal refuses: anything but plain JSON-like values, subclasses included."""
    try:
        return marshal.dumps(value, 2)
    except ValueError:
        return None


def _explicit_deals(rounds: Sequence[Mapping[str, Any]]) -> list[Deal] | None:
    """The deals of the rounds dealt explicitly, which must come first (the engine deals
    the rest from the seed); None when an explicit round follows a seeded one."""
    dealt = [r["dealt"] for r in rounds]
    count = next((i for i, how in enumerate(dealt) if how != "explicit"), len(dealt))
    if any(how != "seed" for how in dealt[count:]):
        return None
    return [deal_from_dict(r["deal"]) for r in rounds[:count]]


def _record_rules(name: str, params: Mapping[str, Any]) -> Rules:
    """``rules_from_record(name, params)``, kept for the same name and parameters (the
    same values of the same types, in the same order: :func:`_identical`), since a
    match's records all name the same rules.

    Raises:
        RulesError: the parameters are invalid.
    """
    key = _plain((name, params))
    if key is None:  # not plain JSON values: not kept
        return rules_from_record(name, params)
    rules = _RULES.get(key)
    if rules is None:
        rules = rules_from_record(name, params)
        if len(_RULES) >= _RULES_KEPT:
            _RULES.clear()
        _RULES[key] = rules
    return rules


#: :func:`_record_rules`' rule sets, by the marshal form of their name and parameters.
_RULES: dict[bytes, Rules] = {}
_RULES_KEPT = 64


def _rules_reference(rules: Mapping[str, Any], table: RulesTable | None) -> Any:
    """The rule set's digest when ``table`` or the presets hold exactly it, else inline."""
    version = rules["version"]
    for known in ({} if table is None else table, _PRESETS):
        entry = known.get(version)
        if entry is not None and canonical(entry) == canonical(rules):
            return version
    return dict(rules)


def _add_time_bytes(out: bytearray, times: Iterable[Any]) -> None:
    """Append a round's decision times to ``out`` as varints of hundredths of a
    millisecond: 0 for null, else ``cpu + 1`` and ``wall``.

    Raises:
        ValueError, TypeError: a time that is not two non-negative hundredths of a
            millisecond (its record takes the fallback).
    """
    for time in times:
        if time is None:
            out.append(0)
            continue
        cpu, wall = time
        if not (isinstance(cpu, float) and isinstance(wall, float)) or cpu < 0 or wall < 0:
            raise ValueError(f"not a recorded time: {time!r}")
        cpu_count, wall_count = round(cpu * 100), round(wall * 100)
        if cpu_count / 100 != cpu or wall_count / 100 != wall:
            raise ValueError(f"not in hundredths of a millisecond: {time!r}")
        cpu_count += 1
        if cpu_count < 0x80 and wall_count < 0x80:  # (most times: under 1.27 ms)
            out.append(cpu_count)
            out.append(wall_count)
        else:
            out += _varint(cpu_count) + _varint(wall_count)


def _varint(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


# --- decoding -------------------------------------------------------------------------


def decode(data: bytes, rules_table: RulesTable | None = None) -> dict[str, Any]:
    """The record ``data`` encodes (:func:`encode`), as JSON-ready data.

    Raises:
        ParseError: ``data`` is not an encoded record, names an unknown encoding, is
            corrupt, or names a rule set by a digest neither ``rules_table`` nor the
            presets hold.
    """
    kind = encoding_of(data)
    if kind not in (FALLBACK, CODEC_VERSION):
        raise ParseError(
            f"unknown record encoding {kind} (this arena reads {FALLBACK} and {CODEC_VERSION})"
        )
    try:
        if kind == FALLBACK:
            body = zlib.decompress(data[1:])
        else:
            unpacker = zlib.decompressobj(zdict=ZDICT)
            body = unpacker.decompress(data[1:]) + unpacker.flush()
            if not unpacker.eof:
                raise ParseError("an encoded record is corrupt: it is cut short")
    except zlib.error as exc:
        raise ParseError(f"an encoded record is corrupt: {exc}") from None
    if kind == FALLBACK:
        return _json_object(body)
    head, _, tail = body.partition(b"\n")
    try:
        return _rebuild(_json_object(head), tail, rules_table)
    except ParseError:
        raise
    except (ArenaError, ValueError, KeyError, IndexError, TypeError, StopIteration) as exc:
        raise ParseError(f"an encoded record is corrupt: {exc}") from None


def _json_object(text: bytes) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise ParseError(f"an encoded record is corrupt: {exc}") from None
    if not isinstance(value, dict):
        raise ParseError("an encoded record is corrupt: not a JSON object")
    return value


def _rebuild(skeleton: dict[str, Any], tail: bytes, table: RulesTable | None) -> dict[str, Any]:
    rules_data = _rules_of(skeleton["r"], table)
    rules = rules_from_record(rules_data["name"], rules_data["params"])
    deals = [deal_from_dict(deal) for deal in skeleton.get("e", [])]
    game = recorded_game(rules, skeleton["p"], skeleton["T"], skeleton["d"], deals)
    count = skeleton["n"]
    if len(tail) < count:
        raise ParseError(f"an encoded record is corrupt: {len(tail)} bytes for {count} plays")
    for index in tail[:count]:
        game.apply(game.legal_moves()[index])
    return _finish(game, skeleton, rules_data, tail[count:])


def _finish(
    game: Game, skeleton: Mapping[str, Any], rules_data: Mapping[str, Any], times: bytes
) -> dict[str, Any]:
    """The record of ``game``, its plays replayed: the skeleton's forfeit, the record
    :func:`game_record` writes, then the skeleton's version, seed, rules, number of rounds,
    ``times`` (the bytes after the plays) and extra fields put back. :func:`encode` calls
    it too, on its own replay, to see what :func:`decode` will return."""
    verdict = skeleton.get("f")
    if verdict is not None and not game.is_terminal():
        game.forfeit(verdict["seat"], Termination(verdict["termination"]))
    record = game_record(game, skeleton["s"], verdict=verdict)
    record["version"] = skeleton["v"]
    record["seed"] = skeleton["d"]
    record["rules"] = dict(rules_data)
    record["rounds"] = record["rounds"][: skeleton["k"]]
    if "t" in skeleton:
        _add_times(record["rounds"], game, skeleton["t"], times)
    record.update(skeleton.get("x", {}))
    return record


def _rules_of(reference: Any, table: RulesTable | None) -> Mapping[str, Any]:
    if not isinstance(reference, str):
        return _mapping(reference)
    entry = ({} if table is None else table).get(reference) or _PRESETS.get(reference)
    if entry is None:
        raise ParseError(
            f"the record names rule set {reference}, which neither the rules table "
            "nor the presets hold"
        )
    return entry


def _mapping(value: Any) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise ParseError("an encoded record is corrupt: its rules are not an object")
    return value


def _add_times(rounds: list[dict[str, Any]], game: Game, timed: Sequence[int], data: bytes) -> None:
    """Put each timed round's ``times`` back, read from ``data`` (one entry a play).

    Raises:
        StopIteration: ``data`` ends before the times do.
        ParseError: times are left over.
    """
    values = iter(_varint_list(data))
    for round_, flag, played in zip(rounds, timed, game.rounds, strict=False):
        if not flag:
            continue
        times: list[list[float] | None] = []
        for _ in range(sum(type(event) is Play for event in played.events)):
            cpu = next(values)
            times.append(None if cpu == 0 else [(cpu - 1) / 100, next(values) / 100])
        round_["times"] = times
    if next(values, None) is not None:
        raise ParseError("an encoded record is corrupt: times left over")


def _varint_list(data: bytes) -> list[int]:
    """The varints ``data`` holds (a last one cut short left out)."""
    if not data or max(data) < 0x80:  # each a byte: most times are under 1.27 ms
        return list(data)
    return list(_varints(data))


def _varints(data: bytes) -> Iterator[int]:
    value = shift = 0
    for byte in data:
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            yield value
            value = shift = 0
