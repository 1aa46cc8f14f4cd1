"""Protocols v2 and v3 (docs/protocol.md): the bot sees exactly the observation of v1,
rebuilt from deltas (v2) or folded from events into the round's start (v3); v1 and v2 bots
keep working."""

from __future__ import annotations

import io
import json
import random
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from arena.engine.events import Play
from arena.engine.game import Game
from arena.engine.rules import PRESETS
from arena.match import botkit
from arena.match.compiler import build
from arena.match.lineup import make_players, release_kept_players
from arena.match.process import PlainLauncher, ProcessPlayer
from arena.match.referee import (
    GameOutcome,
    InProcessPlayer,
    Player,
    TimeControl,
    play_match,
)
from arena.match.runtimes import RUNTIMES
from arena.match.warm import KeptPlayer
from tests.engine.test_conformance import CONFIGS
from tests.paths import REFERENCE_BOTS, ZOO


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: f"{c[0]}-{c[1]}{'t' if c[2] else ''}")
def test_deltas_and_events_rebuild_the_full_observation_at_every_decision(
    config: tuple[str, int, bool],
) -> None:
    """For seeded games of every preset and table, each seat's view rebuilt from what it is
    sent equals the v1 observation, field by field, at each of its decisions: from v2's
    deltas (``Game.delta``) and from v3's events folded into the round's start
    (``Game.wire``, and ``Game.wire_json``'s text that ``ProcessPlayer`` sends, counting
    what it sent as it does), both built from the engine's state; their JSON is exactly
    what ``Observation.to_delta`` and ``Observation.to_wire`` (which works the round's
    start out backwards) give."""
    name, players, teams = config
    rules = PRESETS[name]
    for seed in range(3):
        game = Game(rules, players, teams=teams, seed=seed)
        rng = random.Random(seed)
        infos = [
            botkit.GameInfo("g", seat, players, teams, rules.name, rules.params())
            for seat in range(players)
        ]
        views = [botkit.GameView(info) for info in infos]
        folds = [botkit.GameView(info) for info in infos]
        sent: dict[int, tuple[int, int]] = {}
        while not game.is_terminal():
            seat = game.seat
            assert seat is not None
            observation = game.observation(seat)
            expected = botkit.Observation.from_dict(observation.to_dict())
            last = sent.get(seat)
            start = last is None or last[0] != observation.round
            since = 0 if start or last is None else last[1]
            sent[seat] = (observation.round, len(observation.history))
            delta = game.delta(seat, since)
            assert _json(delta) == _json(observation.to_delta(since))
            assert views[seat].observe(json.loads(json.dumps(delta))) == expected
            wire = game.wire(seat, since, start)
            assert _json(wire) == _json(observation.to_wire(since, start))
            text, events = game.wire_json(seat, since, start)
            assert json.loads("{" + text + "}") == wire  # the text ProcessPlayer sends
            assert events == len(observation.history)
            assert folds[seat].fold(json.loads("{" + text + "}")) == expected
            game.apply(rng.choice(observation.legal_moves))


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: f"{c[0]}-{c[1]}{'t' if c[2] else ''}")
def test_an_in_process_bot_sees_the_v1_observation_at_every_decision(
    config: tuple[str, int, bool], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``InProcessPlayer`` (the kit's v3 path in the referee's process) hands its bot,
    at every decision of every preset and table, the observation v1 would have sent."""
    name, players, teams = config
    bot = tmp_path / "checks.py"
    bot.write_text(
        "import random\n"
        "from arena_protocol_probe import seen\n"
        "class Bot:\n"
        "    def start(self, game):\n"
        "        self.views = seen[game.game, game.seat] = []\n"
        "    def play(self, observation):\n"
        "        self.views.append(observation)\n"
        "        return random.choice(observation.legal_moves)\n"
    )
    seen: dict[tuple[str, int], list[botkit.Observation]] = {}
    monkeypatch.setitem(sys.modules, "arena_protocol_probe", types.SimpleNamespace(seen=seen))
    rules = PRESETS[name]
    checked = [InProcessPlayer(bot) for _ in range(players)]
    outcomes = list(play_match(rules, list[Player](checked), games=3, seed=5, teams=teams))
    assert len(outcomes) == 3 and all(o.verdict is None for o in outcomes)
    for outcome in outcomes:  # each game again, each decision's v1 observation
        replay = Game(rules, players, teams=teams, seed=outcome.game.seed)
        views = [iter(seen[f"g{outcome.index}", seat]) for seat in range(players)]
        for event in [e for r in outcome.game.rounds for e in r.events if isinstance(e, Play)]:
            seat = replay.seat
            assert seat is not None
            expected = botkit.Observation.from_dict(replay.observation(seat).to_dict())
            assert next(views[seat]) == expected
            replay.apply(event.move)
        assert replay.is_terminal()
        assert all(next(view, None) is None for view in views)  # nothing more was seen


#: muggins (scoring plays) in teams and a drawing game: protocol 2's deltas are checked there.
DELTA_CONFIGS = [("muggins", 4, True), ("draw", 3, False)]
#: Decisions of each game a kit is checked at (a few rounds of each).
KIT_DECISIONS = 120


@pytest.mark.parametrize(("protocol", "configs"), [(3, CONFIGS), (2, DELTA_CONFIGS)])
def test_the_javascript_kit_hands_its_bot_the_v1_observation_at_every_decision(
    protocol: int, configs: list[tuple[str, int, bool]], tmp_path: Path
) -> None:
    """The JavaScript kit (arena/match/botkit.js), offered ``protocol``, answers it and
    hands its bot, at each of the first KIT_DECISIONS decisions of a seeded game of every
    preset and table (every seat a game of its own, all in one node process), the v1
    observation: folded from v3's events into the round's start; rebuilt from v2's deltas
    (two of them)."""
    messages, expected = _kit_session(protocol, configs)
    bot = tmp_path / "seen.js"
    bot.write_text(
        'const fs = require("fs");\n'
        "function play(o) {\n"
        '  fs.writeSync(2, JSON.stringify(o) + "\\n");\n'
        "  return o.legal_moves[o.legal_moves.length - 1];\n"
        "}\n"
    )
    javascript = RUNTIMES["javascript"]
    kit = Path(botkit.__file__).with_name(javascript.kit)
    done = subprocess.run(
        [javascript.interpreter, str(kit), str(bot)],
        input="".join(json.dumps(m) + "\n" for m in messages),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    _check_seen(done, protocol, configs, expected, "seen")


def test_the_java_kit_hands_its_bot_the_v1_observation_at_every_decision(tmp_path: Path) -> None:
    """The Java kit (arena/match/kits/java), offered v3, answers it and hands its bot an
    Observation whose JSON (``toString``) is the v1 observation, at each of the first
    KIT_DECISIONS decisions of a seeded game of every preset and table (all in one JVM);
    its practice games before the handshake are never seen (their output is discarded)."""
    messages, expected = _kit_session(3, CONFIGS)
    source = tmp_path / "Seen.java"
    source.write_text(
        "import arena.*;\n"
        "public class Seen implements Player {\n"
        "    public Move play(Observation o) {\n"
        "        System.out.println(o);\n"  # (System.out is the bot's stderr)
        "        return o.legalMoves.get(o.legalMoves.size() - 1);\n"
        "    }\n"
        "}\n"
    )
    java = RUNTIMES["java"]
    jar = build(source, java, None).path  # (once a machine: the compile cache keeps it)
    done = subprocess.run(
        [java.interpreter, *java.program_argv(str(jar), 512)],
        input="".join(json.dumps(m) + "\n" for m in messages),
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    _check_seen(done, 3, CONFIGS, expected, "Seen")


def _kit_session(
    protocol: int, configs: list[tuple[str, int, bool]]
) -> tuple[list[dict[str, Any]], list[tuple[dict[str, Any], str]]]:
    """A kit's session offered ``protocol``: the referee's messages for the first
    KIT_DECISIONS decisions of a seeded game of each of ``configs`` (every seat a game of
    its own), and what the bot must see at each: (the v1 observation but its rules, preset)."""
    messages: list[dict[str, Any]] = [{"type": "hello", "protocol": 1, "max_protocol": protocol}]
    expected: list[tuple[dict[str, Any], str]] = []
    for name, players, teams in configs:
        rules = PRESETS[name]
        game = Game(rules, players, teams=teams, seed=7)
        ids = [f"{name}-{players}{'t' if teams else ''}-{seat}" for seat in range(players)]
        for index, game_id in enumerate(ids):
            start = {"game": game_id, "seat": index, "players": players, "teams": teams}
            messages.append({"type": "start", **start, "rules": _rules(name)})
        rng = random.Random(7)
        sent: dict[int, tuple[int, int]] = {}
        for _ in range(KIT_DECISIONS):  # (several rounds: the kit starts each afresh)
            if game.is_terminal():
                break
            seat = game.seat
            assert seat is not None
            observation = game.observation(seat)
            last = sent.get(seat)
            fresh = last is None or last[0] != observation.round
            since = 0 if fresh or last is None else last[1]
            sent[seat] = (observation.round, len(observation.history))
            if protocol == 3:
                request = {"game": ids[seat], **game.wire(seat, since, fresh)}
            else:
                request = {"game": ids[seat], "delta": game.delta(seat, since)}
            messages.append({"type": "act", "seq": len(expected) + 1, "requests": [request]})
            v1 = observation.to_delta(0)  # to_dict()'s fields but the rules, as lists
            del v1["history_from"]
            v1["history"] = v1.pop("events")
            expected.append((v1, name))
            game.apply(rng.choice(observation.legal_moves))
    messages.append({"type": "quit"})
    return messages, expected


def _check_seen(
    done: subprocess.CompletedProcess[str],
    protocol: int,
    configs: list[tuple[str, int, bool]],
    expected: list[tuple[dict[str, Any], str]],
    bot: str,
) -> None:
    """The kit answered the handshake and every request, and its bot printed (a line of
    stderr each) the v1 observation at each decision."""
    replies = done.stdout.splitlines()
    assert json.loads(replies[0]) == {"type": "hello", "protocol": protocol, "bot": bot}
    assert len(replies) == len(expected) + 1
    assert json.loads(replies[-1])["seq"] == len(expected)
    started = {name: json.loads(json.dumps(_rules(name))) for name, _, _ in configs}
    seen = done.stderr.splitlines()
    assert len(seen) == len(expected)
    for line, (v1, name) in zip(seen, expected, strict=True):
        observation = json.loads(line)
        assert observation.pop("rules") == started[name]
        assert observation == v1


def _rules(name: str) -> dict[str, Any]:
    """A preset as ``start`` names it (its name and parameters)."""
    return {"name": name, "params": PRESETS[name].params()}


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def test_the_kit_speaks_v3_and_v1_and_v2_bots_still_play(tmp_path: Path) -> None:
    """The Python kit takes the events offered (v3); a bot that answers protocol 1 (the
    Node bot of the zoo speaks v1 itself) gets full observations, and a kit that knows
    only v2 (a referee's offer above it is answered with 2) gets deltas: all play every
    game, none faults."""
    v2 = tmp_path / "kit-v2"
    v2.write_text(
        f"#!{sys.executable}\n"
        "import sys\n"
        f"sys.path.insert(0, {str(Path(botkit.__file__).parent)!r})\n"
        "import botkit\n"
        "botkit.PROTOCOL_VERSION = 2\n"
        f"sys.exit(botkit.main([{str(REFERENCE_BOTS / 'random.py')!r}]))\n"
    )
    v2.chmod(0o755)
    kit = ProcessPlayer(REFERENCE_BOTS / "random.py", PlainLauncher())
    node = ProcessPlayer(ZOO / "first.js", PlainLauncher())
    old = ProcessPlayer(v2, PlainLauncher())
    outcomes = list(
        play_match(PRESETS["draw"], [kit, node, old], games=6, seed=2, time_control=TimeControl())
    )
    assert (kit.protocol, node.protocol, old.protocol) == (3, 1, 2)
    assert len(outcomes) == 6 and all(o.verdict is None for o in outcomes)


@pytest.mark.parametrize(("offered", "chosen"), [(None, 1), (1, 1), (2, 2), (3, 3), (9, 3)])
def test_the_kit_answers_the_newest_protocol_both_speak(offered: int | None, chosen: int) -> None:
    """The kit answers ``hello`` with the newest version the referee offers that it
    knows: an older referee (``max_protocol`` 2, or none: v1) is never answered 3."""
    hello: dict[str, Any] = {"type": "hello", "protocol": 1}
    if offered is not None:
        hello["max_protocol"] = offered
    out = io.StringIO()
    runner = botkit.load_bot(REFERENCE_BOTS / "random.py")
    botkit.serve(runner, io.StringIO(json.dumps(hello) + "\n"), out)
    assert json.loads(out.getvalue())["protocol"] == chosen


def test_the_kit_refuses_an_unknown_event_notation() -> None:
    """An event the kit cannot read is an error, never a guess."""
    info = botkit.GameInfo("g", 0, 2, False, "draw", dict(PRESETS["draw"].params()))
    view = botkit.GameView(info)
    start = {"number": 1, "leader": 0, "hand": ["6-6"], "hand_sizes": [1, 1]}
    start |= {"boneyard_size": 10, "drawable": 8, "scores": [0, 0]}
    for text in ("jump 0 6-6", "play x 6-6", "play 0", "draw", "pass 0 1"):
        with pytest.raises(ValueError):
            view.fold({"round": start, "events": [text], "legal_moves": []})


def test_the_kits_notation_parsers_give_the_same_values_from_their_cache() -> None:
    """Tile and move notations are parsed once and remembered: either order, either case,
    the same value each time; a bad notation is an error every time (never remembered)."""
    assert botkit.Tile.parse("4-6") == botkit.Tile.parse("6-4") == botkit.Tile(6, 4)
    assert botkit.Tile.parse("4-6") is botkit.Tile.parse("4-6")
    assert botkit.Move.parse("6-4l") == botkit.Move(botkit.Tile(6, 4), "L")
    assert botkit.Move.parse(" 6-4R ") == botkit.Move(botkit.Tile(6, 4), "R")
    assert botkit.Move.parse("5-5") == botkit.Move(botkit.Tile(5, 5), None)
    for _ in range(2):
        with pytest.raises(ValueError):
            botkit.Tile.parse("6/x")
        with pytest.raises(ValueError):
            botkit.Move.parse("six-four")


def _kept_match(players: list[Player], seed: int) -> list[GameOutcome]:
    return list(
        play_match(PRESETS["draw"], players, games=6, seed=seed, time_control=TimeControl())
    )


def test_kept_bots_play_match_after_match_in_one_process() -> None:
    """``make_players(keep_games=N)`` (arena compare's looks): the same bot processes play
    every match, seats swapped or not, and each match's games are complete and sound."""
    specs = [str(REFERENCE_BOTS / "greedy.py"), str(REFERENCE_BOTS / "random.py")]
    try:
        first = make_players(specs, sandboxed=False, keep_games=100)
        assert all(isinstance(p, KeptPlayer) for p in first)
        outcomes = _kept_match(first, 1)
        swapped = make_players(specs[::-1], sandboxed=False, keep_games=100)
        assert swapped == first[::-1]  # the same players, whatever the seat
        outcomes += _kept_match(swapped, 2)
        outcomes += _kept_match(make_players(specs, sandboxed=False, keep_games=100), 3)
        assert [p.starts for p in first if isinstance(p, KeptPlayer)] == [1, 1]
        assert len(outcomes) == 18 and all(o.verdict is None for o in outcomes)
        assert all(o.game.is_terminal() for o in outcomes)
    finally:
        release_kept_players()
    again = make_players(specs, sandboxed=False, keep_games=100)
    try:
        assert again[0] is not first[0]  # released: the next ones are new
    finally:
        release_kept_players()


def test_a_kept_bot_that_failed_is_started_afresh(tmp_path: Path) -> None:
    """A kept bot that crashed is not reused: the next match starts a new process (and a
    match that did not end every game it started would not reuse it either)."""
    bot = tmp_path / "dies.py"
    bot.write_text(
        "import os, pathlib\n"
        "mark = pathlib.Path(__file__).with_suffix('.crashed')\n"
        "calls = 0\n"
        "def play(observation):\n"
        "    global calls\n"
        "    calls += 1\n"
        "    if calls == 30 and not mark.exists():  # once only\n"
        "        mark.touch()\n"
        "        os._exit(3)\n"
        "    return observation.legal_moves[0]\n"
    )
    specs = [str(bot), "random"]
    try:
        players = make_players(specs, sandboxed=False, keep_games=100)
        kept = players[0]
        assert isinstance(kept, KeptPlayer)
        crashed = _kept_match(players, 1)
        assert any(o.verdict is not None for o in crashed)  # it died in this match
        again = _kept_match(make_players(specs, sandboxed=False, keep_games=100), 2)
        assert kept.starts == 2
        assert all(o.verdict is None for o in again)
    finally:
        release_kept_players()


def test_the_python_kit_answers_the_handshake_without_modules_it_needs_only_for_faults() -> None:
    """The Python kit, run as in a sandbox (``python3 -I botkit.py BOT``), answers the
    handshake without importing pathlib (it uses os.path) or traceback (only a bot's fault
    needs it): every match starts a bot, and its start-up is CPU the bot's host pays."""
    python = RUNTIMES["python"]
    kit = Path(botkit.__file__)
    probe = (
        "import runpy, sys\n"
        f"sys.argv = [{str(kit)!r}, {str(REFERENCE_BOTS / 'greedy.py')!r}]\n"
        "try:\n"
        "    runpy.run_path(sys.argv[0], run_name='__main__')\n"
        "finally:\n"
        "    loaded = sorted(m for m in ('pathlib', 'traceback') if m in sys.modules)\n"
        "    print('loaded:', loaded, file=sys.stderr)\n"
    )
    hello = json.dumps({"type": "hello", "protocol": 1, "max_protocol": 3})
    done = subprocess.run(
        [python.interpreter, *python.arguments, "-c", probe],
        input=hello + "\n",
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert json.loads(done.stdout)["type"] == "hello", done.stderr
    assert "loaded: []" in done.stderr, done.stderr
