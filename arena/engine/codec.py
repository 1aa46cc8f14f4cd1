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

:func:`encode` decodes what it made and compares it with the record, canonically
serialised (:func:`canonical`); anything short of byte-identical takes the fallback, so
no record is ever stored other than it was given. ``docs/records.md`` ("The compact
encoding") describes the format.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Iterator, Mapping, Sequence
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

    Raises:
        TypeError, ValueError: ``record`` is not JSON (a value ``json.dumps`` refuses).
    """
    text = canonical(record)
    try:
        compact = _compact(record, rules_table)
        if compact is not None and canonical(decode(compact, rules_table)) == text:
            return compact
    except Exception:  # whatever the compact path cannot take, the fallback keeps
        pass
    kept = json.dumps(record, separators=(",", ":"))  # canonical but for the keys' order
    return bytes([FALLBACK]) + zlib.compress(kept.encode(), 9)


def _compact(record: Mapping[str, Any], table: RulesTable | None) -> bytes | None:
    """The compact encoding of ``record``, or None where it plainly does not fit (the
    caller checks the rest by decoding)."""
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
    rules = rules_from_record(rules_data["name"], rules_data["params"])
    explicit = _explicit_deals(rounds)
    if explicit is None:
        return None
    seed = record["seed"]
    game = recorded_game(rules, record["players"], record["teams"], seed, explicit)
    plays = bytearray()
    for round_ in rounds:
        for event in round_["events"]:
            if event.get("type") == "play":
                index = game.legal_moves().index(Move.parse(event["move"]))
                if index > _MAX_INDEX:
                    return None
                plays.append(index)
                game.apply(Move.parse(event["move"]))
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
                for time in round_["times"]:
                    times += _time_bytes(time)
    result = record["result"]
    if isinstance(result, Mapping) and "verdict" in result:
        skeleton["f"] = result["verdict"]
    extra = {key: value for key, value in record.items() if key not in _KNOWN}
    if extra:
        skeleton["x"] = extra
    head = json.dumps(skeleton, separators=(",", ":")).encode()
    packer = zlib.compressobj(9, zdict=ZDICT)
    body = packer.compress(head + b"\n" + bytes(plays) + times) + packer.flush()
    return bytes([CODEC_VERSION]) + body


def _explicit_deals(rounds: Sequence[Mapping[str, Any]]) -> list[Deal] | None:
    """The deals of the rounds dealt explicitly, which must come first (the engine deals
    the rest from the seed); None when an explicit round follows a seeded one."""
    dealt = [r["dealt"] for r in rounds]
    count = next((i for i, how in enumerate(dealt) if how != "explicit"), len(dealt))
    if any(how != "seed" for how in dealt[count:]):
        return None
    return [deal_from_dict(r["deal"]) for r in rounds[:count]]


def _rules_reference(rules: Mapping[str, Any], table: RulesTable | None) -> Any:
    """The rule set's digest when ``table`` or the presets hold exactly it, else inline."""
    version = rules["version"]
    for known in ({} if table is None else table, _PRESETS):
        entry = known.get(version)
        if entry is not None and canonical(entry) == canonical(rules):
            return version
    return dict(rules)


def _time_bytes(time: Any) -> bytes:
    """A decision time as varints of hundredths of a millisecond: 0 for null, else
    ``cpu + 1`` and ``wall``.

    Raises:
        ValueError: a time that is not two non-negative hundredths of a millisecond
            (its record takes the fallback).
    """
    if time is None:
        return b"\x00"
    cpu, wall = (_hundredths(t) for t in time)
    return _varint(cpu + 1) + _varint(wall)


def _hundredths(value: Any) -> int:
    if not isinstance(value, float) or value < 0:
        raise ValueError(f"not a recorded time: {value!r}")
    count = round(value * 100)
    if count / 100 != value:
        raise ValueError(f"not in hundredths of a millisecond: {value!r}")
    return count


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
    seed = skeleton["d"]
    deals = [deal_from_dict(deal) for deal in skeleton.get("e", [])]
    game = recorded_game(rules, skeleton["p"], skeleton["T"], seed, deals)
    count = skeleton["n"]
    if len(tail) < count:
        raise ParseError(f"an encoded record is corrupt: {len(tail)} bytes for {count} plays")
    for index in tail[:count]:
        game.apply(game.legal_moves()[index])
    verdict = skeleton.get("f")
    if verdict is not None and not game.is_terminal():
        game.forfeit(verdict["seat"], Termination(verdict["termination"]))
    record = game_record(game, skeleton["s"], verdict=verdict)
    record["version"] = skeleton["v"]
    record["seed"] = seed
    record["rules"] = dict(rules_data)
    record["rounds"] = record["rounds"][: skeleton["k"]]
    if "t" in skeleton:
        _add_times(record["rounds"], game, skeleton["t"], tail[count:])
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
    """Put each timed round's ``times`` back, read from ``data`` (one entry a play)."""
    values = _varints(data)
    for round_, flag, played in zip(rounds, timed, game.rounds, strict=False):
        if not flag:
            continue
        times: list[list[float] | None] = []
        for _ in range(sum(isinstance(event, Play) for event in played.events)):
            cpu = next(values)
            times.append(None if cpu == 0 else [(cpu - 1) / 100, next(values) / 100])
        round_["times"] = times
    if next(values, None) is not None:
        raise ParseError("an encoded record is corrupt: times left over")


def _varints(data: bytes) -> Iterator[int]:
    value = shift = 0
    for byte in data:
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            yield value
            value = shift = 0
