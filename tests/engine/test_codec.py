"""The compact record codec: every record comes back byte-identical (canonically), in
the compact encoding where the engine can replay it, in the fallback where not."""

from __future__ import annotations

import copy
import json
import random
import zlib
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena import Game, find_rules
from arena.engine.branch import branch_game, branch_record
from arena.engine.codec import (
    CODEC_VERSION,
    FALLBACK,
    ZDICT,
    canonical,
    decode,
    encode,
    encoding_of,
    rules_entry,
)
from arena.engine.deal import deal_round
from arena.engine.events import Termination
from arena.engine.records import game_record
from arena.engine.rules import PRESETS, Rules, rules_from_record
from arena.errors import ParseError
from arena.match.play import play_games
from arena.match.players import InProcessPlayer, Player, StrategyPlayer
from arena.match.referee import play_match
from tests.paths import ZOO

SETUPS = [
    (name, players, teams)
    for name, rules in PRESETS.items()
    for players in rules.players
    for teams in ([False, True] if rules.team_play and players == 4 else [False])
]


def as_json(record: dict[str, Any]) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(json.dumps(record))
    return data


def random_game(rules: Rules, players: int, seed: int, *, teams: bool = False) -> Game:
    rng = random.Random(seed)
    game = Game(rules, players, teams=teams, seed=seed)
    while not game.is_terminal():
        game.apply(rng.choice(game.legal_moves()))
    return game


def assert_round_trip(record: dict[str, Any], encoding: int = CODEC_VERSION, **table: Any) -> bytes:
    data = encode(record, **table)
    assert encoding_of(data) == encoding
    assert canonical(decode(data, **table)) == canonical(record)
    return data


@pytest.mark.parametrize(("name", "players", "teams"), SETUPS)
def test_every_preset_and_player_count_round_trips_compactly(
    name: str, players: int, teams: bool
) -> None:
    """Games of the reference strategies, each preset, player count and team play: the
    compact encoding, a tenth of zlib's size or less."""
    names = ["greedy", "random", "greedy", "random", "greedy"][:players]
    for game in play_games(find_rules(name), names, games=2, seed=players, teams=teams):
        record = as_json(game_record(game, names))
        data = assert_round_trip(record)
        assert len(data) * 5 < len(zlib.compress(canonical(record).encode(), 9))


def test_custom_rules_round_trip_inline_or_by_the_table() -> None:
    """A preset with an override and a custom rule set are written inline, or by digest
    when the table holds them; decoding without that table is a clear error."""
    custom = rules_from_record("house", find_rules("block").params() | {"target": 50})
    for rules in (find_rules("draw", target=60), custom):
        record = as_json(game_record(random_game(rules, 3, 4), ["a", "b", "c"]))
        inline = assert_round_trip(record)
        table = {rules.version: rules_entry(rules)}
        by_digest = assert_round_trip(record, rules_table=table)
        assert len(by_digest) < len(inline)
        with pytest.raises(ParseError, match=f"names rule set {rules.version}"):
            decode(by_digest)


def test_a_table_entry_under_another_name_is_not_used() -> None:
    """A custom rule set with a preset's parameters has the preset's digest but its own
    name: it stays inline, so the name comes back."""
    rules = rules_from_record("copy", find_rules("draw").params())
    assert rules.version == find_rules("draw").version
    record = as_json(game_record(random_game(rules, 2, 5), ["a", "b"]))
    assert_round_trip(record)
    assert decode(encode(record))["rules"]["name"] == "copy"


def forfeited_record(seat: int, termination: Termination, *, timed: bool) -> dict[str, Any]:
    """A muggins team game a seat forfeits in its second round, with a stderr tail, a message and
    (``timed``) every play's time and the forfeiting decision's."""
    rng = random.Random(9)
    game = Game(find_rules("muggins"), 4, teams=True, seed=9)
    while len(game.rounds) < 2 or len(game.round.events) < 5:
        game.apply(rng.choice(game.legal_moves()))
    game.forfeit(seat, termination)
    plays = sum(type(e).__name__ == "Play" for r in game.rounds for e in r.events)
    times = [(rng.random() / 50, rng.random() / 20) for _ in range(plays + 1)] if timed else None
    verdict = {
        "seat": seat,
        "termination": termination.value,
        "message": "no move within 1.00 s (bank spent) — ü",
        "stderr": "Traceback (most recent call last):\n  ...\nZeroDivisionError\n" * 40,
    }
    names = ["bot", "greedy", "bot", "greedy"]
    return as_json(game_record(game, names, verdict=verdict, times=times))


@pytest.mark.parametrize("termination", [t for t in Termination if t.is_fault])
def test_forfeits_keep_their_verdict_stderr_and_times(termination: Termination) -> None:
    record = forfeited_record(2, termination, timed=termination is Termination.ILLEGAL_MOVE)
    assert record["result"]["verdict"]["stderr"].startswith("Traceback")
    assert_round_trip(record)


@pytest.mark.parametrize("bot", ["raise_in_move.py", "illegal.py"])
def test_the_referees_records_round_trip(bot: str) -> None:
    """Records as the referee writes them: a bot's every play timed (the built-in's
    null), forfeits with the referee's verdicts and the forfeiting decision's time."""
    players: list[Player] = [InProcessPlayer(ZOO / bot), StrategyPlayer("greedy")]
    outcomes = list(play_match(find_rules("draw"), players, games=2, seed=3))
    assert any(outcome.verdict is not None for outcome in outcomes)
    for outcome in outcomes:
        verdict = None if outcome.verdict is None else outcome.verdict.to_dict()
        record = game_record(outcome.game, [bot, "greedy"], verdict=verdict, times=outcome.times)
        assert_round_trip(as_json(record))


def test_decision_times_round_trip_with_untimed_plays() -> None:
    """Version 2's times (null for a built-in's plays), and a time the codec cannot hold
    in hundredths of a millisecond, which takes the fallback."""
    game = random_game(find_rules("draw"), 2, 3)
    plays = [e.seat for r in game.rounds for e in r.events if type(e).__name__ == "Play"]
    times = [(0.00123 * i, 0.5 + 0.001 * i) if s == 0 else None for i, s in enumerate(plays)]
    record = as_json(game_record(game, ["bot", "greedy"], times=times))
    assert_round_trip(record)
    record["rounds"][0]["times"][0] = [0.125, 3.0]
    assert_round_trip(record, FALLBACK)


def version_1(record: dict[str, Any]) -> dict[str, Any]:
    old = copy.deepcopy(record)
    old["version"] = 1
    for round_ in old["rounds"]:
        round_.pop("times", None)
    if old["result"] is not None:
        old["result"].get("verdict", {}).pop("time", None)
    return old


def test_version_1_records_stay_version_1() -> None:
    for record in (
        version_1(as_json(game_record(random_game(find_rules("wooden"), 3, 2), list("abc")))),
        version_1(forfeited_record(1, Termination.TIMEOUT, timed=True)),
    ):
        assert record["version"] == 1
        assert decode(assert_round_trip(record))["version"] == 1


def test_explicit_deals_and_a_null_seed() -> None:
    """Rounds dealt explicitly are kept (the seed cannot give them), the rest re-dealt."""
    rules = find_rules("block")
    deals = [deal_round(rules, 2, random.Random(n))[0] for n in (11, 12)]
    game = Game(rules, 2, seed=77, deals=deals)
    rng = random.Random(1)
    while not game.is_terminal():
        game.apply(rng.choice(game.legal_moves()))
    record = as_json(game_record(game, ["a", "b"]))
    assert [r["dealt"] for r in record["rounds"]][:3] == ["explicit", "explicit", "seed"]
    assert_round_trip(record)
    record["seed"] = None
    record["rounds"] = record["rounds"][:2]
    record["result"] = None
    assert_round_trip(record)


def test_a_branch_keeps_its_branch_field_and_stops_where_it_stopped() -> None:
    original = as_json(game_record(random_game(find_rules("draw"), 2, 8), ["a", "b"]))
    game = branch_game(original, 2, 3)
    rng = random.Random(2)
    while not game.is_terminal() and len(game.rounds) == 2:
        game.apply(rng.choice(game.legal_moves()))
    branch = as_json(
        branch_record(original, game, ["c", "d"], round_number=2, turn=3, seed=4, source="x")
    )
    assert "branch" in branch and len(branch["rounds"]) == 2
    assert_round_trip(branch)


def test_what_the_engine_cannot_replay_takes_the_fallback() -> None:
    """An unknown field, a future version, a tampered deal or play, a dealt seed round
    after an explicit one: each stored as canonical JSON, losslessly."""
    base = as_json(game_record(random_game(find_rules("draw"), 2, 6), ["a", "b"]))
    cases: list[dict[str, Any]] = []
    changes: list[Callable[[dict[str, Any]], object]] = [
        lambda r: r["rounds"][0].update(note="hi"),
        lambda r: r.update(version=3),
        lambda r: r["rounds"][0]["deal"]["boneyard"].reverse(),
        lambda r: r["rounds"][0]["events"][0].update(move="9-9"),
        lambda r: r["rounds"][0].update(dealt="explicit"),
        lambda r: r["result"].update(winners=[1]),
        lambda r: r.update(format="something/else"),
        lambda r: r.update(rules="draw"),
    ]
    for change in changes:
        record = copy.deepcopy(base)
        change(record)
        cases.append(record)
    cases.append({"not": "a record", "n": [1.5, None, True, "é"]})
    for record in cases:
        assert_round_trip(record, FALLBACK)
        # even the keys' order comes back (an export writes them unsorted)
        assert json.dumps(decode(encode(record))) == json.dumps(record)


def test_an_unknown_top_level_field_is_kept_compactly() -> None:
    record = as_json(game_record(random_game(find_rules("giant"), 3, 1), ["a", "b", "c"]))
    record["annotations"] = {"by": "someone", "notes": [1, 2.5]}
    assert_round_trip(record)


def timed_record() -> dict[str, Any]:
    """A forfeited game with every play timed, a preset's rules and no extra field."""
    return forfeited_record(1, Termination.CRASH, timed=True)


#: Changes Python's ``==`` does not see (``1 == 1.0 == True``, ``0.0 == -0.0``) but JSON
#: does: the compact form would give the engine's value back, so each takes the fallback.
EQUAL_BUT_NOT_THE_SAME: list[Callable[[dict[str, Any]], object]] = [
    lambda r: r["rounds"][0]["events"][0].update(seat=float(r["rounds"][0]["events"][0]["seat"])),
    lambda r: r["rounds"][0]["events"][1].update(seat=bool(r["rounds"][0]["events"][1]["seat"])),
    lambda r: r["rounds"][0].update(leader=float(r["rounds"][0]["leader"])),
    lambda r: r["rounds"][0]["scores"].__setitem__(0, float(r["rounds"][0]["scores"][0])),
    lambda r: r["rounds"][0]["times"].__setitem__(0, [-0.0, r["rounds"][0]["times"][0][1]]),
    lambda r: r["result"].update(winners=[float(w) for w in r["result"]["winners"]]),
    lambda r: r.update(players=4.0),
    lambda r: r["rounds"][1].update(number=2.0),
    lambda r: r.update(seed=9.0),
    lambda r: r["rules"]["params"].update(max_pip=6.0),
    lambda r: r["result"]["verdict"].update(seat=1.0),
]


@pytest.mark.parametrize("change", EQUAL_BUT_NOT_THE_SAME)
def test_a_value_of_another_json_type_takes_the_fallback(
    change: Callable[[dict[str, Any]], object],
) -> None:
    """encode checks its one replay's record as values of the same types: a record that
    equals the engine's in Python but not in JSON is never stored compactly."""
    record = timed_record()
    assert_round_trip(record)
    change(record)
    assert_round_trip(record, FALLBACK)


def reordered(value: Any) -> Any:
    """``value`` with every object's keys in reverse order and every list inside the
    rounds a tuple."""
    if isinstance(value, dict):
        return {
            key: [reordered(item) for item in value[key]]
            if key == "rounds"
            else reordered(value[key])
            for key in reversed(value)
        }
    if isinstance(value, list):
        return tuple(reordered(item) for item in value)
    return value


def test_the_same_json_in_another_shape_stays_compact() -> None:
    """Keys in another order and tuples for lists serialise to the same canonical JSON:
    the compact form (whose record has the engine's key order and lists) is kept."""
    record = reordered(timed_record())
    assert next(iter(record)) == "result"
    assert isinstance(record["rounds"][0]["events"], tuple)
    assert_round_trip(record)


def packed(body: bytes) -> bytes:
    packer = zlib.compressobj(9, zdict=ZDICT)
    return bytes([CODEC_VERSION]) + packer.compress(body) + packer.flush()


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "is empty"),
        (b"\x07abc", "unknown record encoding 7"),
        (b"\x01not zlib", "is corrupt"),
        (bytes([FALLBACK]) + zlib.compress(b"[1, 2]"), "not a JSON object"),
        (bytes([CODEC_VERSION]) + zlib.compress(b'{"r": 5}\n'), "is corrupt"),
        (bytes([CODEC_VERSION]) + zlib.compress(b"{}\n"), "is corrupt"),
        (packed(b'{"r": 5}\n'), "not an object"),
        (packed(b'{"r":"c00b3645860579bf","d":1,"p":2,"T":false,"n":3}\n\x00'), "1 bytes for 3"),
        (
            packed(
                b'{"r":"c00b3645860579bf","d":1,"p":2,"T":false,"n":0,"s":["a","b"],'
                b'"v":2,"k":1,"t":[1]}\n\x00'
            ),
            "times left over",
        ),
    ],
)
def test_bad_data_is_refused_with_a_sentence(data: bytes, message: str) -> None:
    with pytest.raises(ParseError, match=message):
        decode(data)


def test_a_truncated_encoding_is_refused() -> None:
    record = forfeited_record(0, Termination.CRASH, timed=True)
    data = encode(record)
    with pytest.raises(ParseError, match="corrupt"):
        decode(data[:-9])


@settings(max_examples=50, deadline=None)
@given(
    setup=st.sampled_from(SETUPS),
    seed=st.integers(min_value=0, max_value=2**63),
    cut=st.integers(min_value=0, max_value=400),
    forfeit=st.sampled_from([None, *(t for t in Termination if t.is_fault)]),
)
def test_any_game_prefix_round_trips(
    setup: tuple[str, int, bool], seed: int, cut: int, forfeit: Termination | None
) -> None:
    """Random games of any preset, stopped after any number of plays (unfinished, or
    forfeited there), compactly and exactly."""
    name, players, teams = setup
    rng = random.Random(seed)
    game = Game(find_rules(name), players, teams=teams, seed=seed)
    for _ in range(cut):
        if game.is_terminal():
            break
        game.apply(rng.choice(game.legal_moves()))
    verdict = None
    if forfeit is not None and not game.is_terminal():
        seat = rng.randrange(players)
        game.forfeit(seat, forfeit)
        verdict = {"seat": seat, "termination": forfeit.value, "message": "m", "stderr": ""}
    record = as_json(game_record(game, [str(s) for s in range(players)], verdict=verdict))
    assert_round_trip(record)


#: A forfeited team game (``forfeited_record(3, TIMEOUT, timed=True)``) as encoding 1
#: wrote it when the codec was made: stored records must stay readable.
STORED = bytes.fromhex(
    "0178f904215eab831982d53560b34dc066971495c28c4eca2f413617850b31d45247291b6c2a3084"
    "8d8ce0f106944c03d908890a6362a2222f5f2137bf2c55a13cb32423334fc150cfc040a158412329"
    "312f5ba1b82035af445321a6d4c8c0d004481918a42523475d485162726a526272b682466e7e7189"
    "42516a3250834272624e8e424e627189a6554c9e82829e9e5e4c5e546a51be4b66596631d025ae45"
    "45f9453179a3ba47758fea1ed53daa7b54f7a8ee51dda3ba69ad1bd876033501416d45233d430b1d"
    "13733d4ba3d8da5a2e0626062060646204510ccc0c10f08dbd5b651ee77cb906b649b2671837701f"
    "e55a2b73966d3bf33496991c9b592ec84f60bea0f4807712d377d6d9c2066704a6f16d6059cd798f"
    "a58df3afd27466cd158cdda22a2b981fb1ff553ec9769cff1fe765e64ecefb6c00f18cde71"
)


def test_a_stored_encoding_still_decodes() -> None:
    """The preset dictionary and the engine's replay are part of encoding 1: a record
    encoded by the first version of the codec decodes to the same record today."""
    assert zlib.adler32(ZDICT) == 69295787
    record = forfeited_record(3, Termination.TIMEOUT, timed=True)
    assert canonical(decode(STORED)) == canonical(record)


def test_the_presets_are_the_ones_encoding_1_knows() -> None:
    """Compact records name a preset by its digest and decode it from the presets of the
    code that reads them: a preset whose parameters change leaves the records stored under
    its old digest unreadable unless the rules table keeps the old rule set (and the
    dictionary loses it). This fails first."""
    for rules in PRESETS.values():
        assert f'"r":"{rules.version}"'.encode() in ZDICT, f"preset {rules.name} changed"
