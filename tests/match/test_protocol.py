"""Protocol v2 (docs/protocol.md): the bot sees exactly the observation of v1, rebuilt from
deltas; v1 bots keep working."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from arena.engine.game import Game
from arena.engine.rules import PRESETS
from arena.match import botkit
from arena.match.lineup import make_players, release_kept_players
from arena.match.process import PlainLauncher, ProcessPlayer
from arena.match.referee import GameOutcome, Player, StrategyPlayer, TimeControl, play_match
from arena.match.warm import KeptPlayer
from tests.engine.test_conformance import CONFIGS
from tests.paths import REFERENCE_BOTS, ZOO


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: f"{c[0]}-{c[1]}{'t' if c[2] else ''}")
def test_deltas_rebuild_the_full_observation_at_every_decision(
    config: tuple[str, int, bool],
) -> None:
    """For seeded games of every preset and table, each seat's view rebuilt from the
    deltas it is sent (``Game.delta``, built from the engine's state) equals the v1
    observation, field by field, at each of its decisions (the deltas' safety net); the
    delta's JSON is exactly ``Observation.to_delta``'s."""
    name, players, teams = config
    rules = PRESETS[name]
    for seed in range(3):
        game = Game(rules, players, teams=teams, seed=seed)
        rng = random.Random(seed)
        views = {
            seat: botkit.GameView(
                botkit.GameInfo("g", seat, players, teams, rules.name, rules.params())
            )
            for seat in range(players)
        }
        sent: dict[int, tuple[int, int]] = {}
        while not game.is_terminal():
            seat = game.seat
            assert seat is not None
            observation = game.observation(seat)
            last = sent.get(seat)
            since = last[1] if last is not None and last[0] == observation.round else 0
            sent[seat] = (observation.round, len(observation.history))
            delta = game.delta(seat, since)
            assert _json(delta) == _json(observation.to_delta(since))
            rebuilt = views[seat].observe(json.loads(json.dumps(delta)))
            assert rebuilt == botkit.Observation.from_dict(observation.to_dict())
            game.apply(rng.choice(observation.legal_moves))


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def test_the_kit_speaks_v2_and_a_v1_bot_still_plays() -> None:
    """The Python kit takes the deltas offered; a bot that answers protocol 1 (the Node
    bot of the zoo speaks v1 itself) gets full observations and plays all its games."""
    kit = ProcessPlayer(REFERENCE_BOTS / "random.py", PlainLauncher())
    node = ProcessPlayer(ZOO / "first.js", PlainLauncher())
    outcomes = list(
        play_match(
            PRESETS["draw"],
            [kit, node, StrategyPlayer("greedy")],
            games=4,
            seed=2,
            time_control=TimeControl(),
        )
    )
    assert (kit.protocol, node.protocol) == (2, 1)
    assert len(outcomes) == 4 and all(o.verdict is None for o in outcomes)


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
