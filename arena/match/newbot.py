"""Starter bot files: the template behind ``arena new-bot NAME``.

Standard library only. :func:`starter_bot` returns the text of a commented bot
file that plays legally as it is (the heaviest tile, like ``greedy``) and shows
every field of the observation, for each runtime (``python``; ``python-numpy``, whose
choice numpy scores; ``javascript``, for the kit ``botkit.js``; ``cpp``, for the kit
``kits/arena.hpp``; ``c``, ``go`` and ``rust``, programs speaking the protocol,
``kits/starter.c`` ...; ``java``, for the kit ``kits/java``);
:func:`write_starter_bot`
writes it, never over an existing file. The tutorial is ``docs/writing-a-bot.md``.
"""

from __future__ import annotations

import re
from pathlib import Path

from arena.match.runtimes import NUMPY_VERSION

__all__ = [
    "STARTER_NAME",
    "declared_name",
    "java_class_name",
    "starter_bot",
    "write_starter_bot",
]

#: What a starter bot's file may be called (its stem is the bot's name in its handshake).
STARTER_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,63}")
#: The names a Java starter's class may not take: the types its file uses by their simple
#: names (the kit's, package ``arena``, and ``Map``, ``String``, ``Object``, ``Override``),
#: which a class of the same name would hide (javac would reject the file).
_JAVA_TAKEN = frozenset(
    path.stem for path in (Path(__file__).resolve().with_name("kits") / "java").glob("*.java")
) | {"Map", "String", "Object", "Override"}

#: A bot file's own name: ``NAME = "mybot"`` on a line of its own at the top level (in
#: JavaScript ``const NAME = "mybot";``; in Java, indented, ``public static final String NAME
#: = "mybot";``).
_DECLARED = re.compile(
    r"""^(?:(?:const|let|var)\s+|[ \t]*(?:public\s+)?static\s+final\s+String\s+)?NAME\s*=\s*"""
    r"""(["'])([^"'\\\n]{1,64})\1\s*;?\s*(?:(?:#|//).*)?$""",
    re.MULTILINE,
)


def declared_name(source: str) -> str | None:
    """The name a bot file gives itself (``NAME = "mybot"`` at the top level, as the
    tutorial says; ``const NAME = "mybot";`` in JavaScript; ``public static final String NAME
    = "mybot";`` in Java), or None. Read as text, never
    run or parsed: the file may be hostile."""
    found = _DECLARED.findall(source)
    return found[-1][1] if found else None  # the last one, as when the file runs


_TEMPLATE = '''"""{name}: my domino bot.

Written from the arena's starter template. Read docs/writing-a-bot.md for the
whole story. Check it and play it with:

    ./run arena check {file}
    ./run arena play --rules draw --bots {file},greedy --games 200

Rules: one file, standard library only; no files, no network; answer within the
time limit. Your bot never draws or passes: the referee does that for it. Each
time it is asked, it has at least one legal move, and must return one of them.
"""

NAME = "{name}"


def play(observation):
    """Return one of observation.legal_moves (or its notation, like "6-4L").

    What the observation holds (the rest of the round is hidden from you):

      observation.seat            your seat, 0..players-1 (play goes to seat+1)
      observation.players         how many seats
      observation.teams           True when seats 0+2 play against 1+3
      observation.rules           the rule set's name, e.g. "draw" or "muggins"
      observation.params          its parameters: params["target"], params["max_pip"], ...
      observation.round           the round's number in this game, from 1
      observation.leader          the seat that led this round
      observation.hand            your tiles, e.g. (Tile(high=6, low=4), ...)
      observation.line            the line, left to right: ((6, 6), (6, 4), ...)
      observation.ends            the open ends (left, right), or None if you lead
      observation.hand_sizes      how many tiles each seat holds
      observation.boneyard_size   tiles in the boneyard
      observation.drawable        how many of them may still be drawn
      observation.scores          the game's scores (per seat, or per team)
      observation.history         this round so far: Play(seat, move, points),
                                  Draw(seat, tile or None), Pass(seat)
      observation.legal_moves     your legal moves, e.g. (Move(tile=Tile(6, 4), end="L"), ...)

    A tile has .high, .low, .pips, .is_double, .matches(pip) and .other(pip).
    A move has .tile and .end ("L", "R", or None for the round's first tile).
    """
    # Play the heaviest tile that fits: a fine first strategy. Make it yours.
    return max(observation.legal_moves, key=lambda move: move.tile.pips)


# A bot with memory: delete play() above and uncomment this class. A new Bot is
# made for every game, so self.* lives for one game (all its rounds).
#
# class Bot:
#     def __init__(self):
#         self.moves = 0
#
#     def start(self, game):
#         """Optional: game.seat, game.players, game.teams, game.rules, game.params."""
#
#     def play(self, observation):
#         """Required: return one of observation.legal_moves."""
#         self.moves += 1
#         return observation.legal_moves[0]
#
#     def end(self, result):
#         """Optional: the game's result, a dict (winners, scores, ...)."""
'''


#: The python-numpy starter: the same bot, its choice scored with numpy.
_NUMPY_TEMPLATE = '''"""{name}: my domino bot, with numpy (the python-numpy runtime).

Written from the arena's starter template. Read docs/writing-a-bot.md for the
whole story. Check it and play it with:

    ./run arena check --runtime python-numpy {file}
    ./run arena play --runtime python-numpy --rules draw --bots {file},greedy --games 200

Rules: one file, the standard library and numpy ({numpy}) only; no files, no network;
answer within the time limit. The observation is the Python kit's, as in the python
starter (``arena new-bot NAME``): observation.hand, .ends, .legal_moves, ...
"""

import numpy as np

NAME = "{name}"

#: What keeping a suit you still hold at the open end is worth, in pips.
CONTROL = 2.0


def play(observation):
    """Return one of observation.legal_moves: the most pips, plus CONTROL for each tile
    of yours that will still match the end the move leaves."""
    moves = observation.legal_moves
    tiles = np.array([(move.tile.high, move.tile.low) for move in moves])
    hand = np.array([(tile.high, tile.low) for tile in observation.hand])
    # how many of your tiles show each pip (a double once)
    suits = np.bincount(hand[:, 0], minlength=13) + np.bincount(
        hand[:, 1][hand[:, 0] != hand[:, 1]], minlength=13
    )
    if observation.ends is None:  # you lead: either half may stay open
        left = tiles[:, 0]
    else:
        end = np.array([observation.ends[0 if move.end == "L" else 1] for move in moves])
        left = np.where(tiles[:, 0] == end, tiles[:, 1], tiles[:, 0])
    score = tiles.sum(axis=1) + CONTROL * (suits[left] - 1)
    return moves[int(np.argmax(score))]
'''

#: The javascript starter (the kit arena/match/botkit.js).
_JS_TEMPLATE = """// {name}: my domino bot, in JavaScript (the javascript runtime: Node.js).
//
// Written from the arena's starter template. Read docs/writing-a-bot.md for the
// whole story. Check it and play it with:
//
//     ./run arena check {file}
//     ./run arena play --rules draw --bots {file},greedy --games 200
//
// Rules: one file, Node's standard modules only; no files, no network; answer within
// the time limit. Your bot never draws or passes: the referee does that for it.

const NAME = "{name}";

// Return one of observation.legal_moves (notations such as "6-4L").
//
//   observation.seat, .players, .teams, .rules ({{name, params}}), .round, .leader
//   observation.hand         your tiles, e.g. ["6-4", "3-3"]
//   observation.line         the line, left to right: [[6, 6], [6, 4]]
//   observation.ends         the open ends [left, right], or [null, null] if you lead
//   observation.hand_sizes, .boneyard_size, .drawable, .scores, .history
//   observation.legal_moves  your legal moves, e.g. ["6-4L", "6-4R"]
function play(observation) {{
  // Play the heaviest tile that fits: a fine first strategy. Make it yours.
  const pips = (move) => move.split(/[-LR]/).slice(0, 2).reduce((a, b) => a + Number(b), 0);
  let best = observation.legal_moves[0];
  for (const move of observation.legal_moves) if (pips(move) > pips(best)) best = move;
  return best;
}}

// A bot with memory: delete play() above and uncomment this class. A new Bot is
// made for every game, so this.* lives for one game (all its rounds).
//
// class Bot {{
//   constructor() {{ this.moves = 0; }}
//   start(game) {{}}          // optional: game.seat, game.players, game.teams, game.rules
//   play(observation) {{      // required: return one of observation.legal_moves
//     this.moves += 1;
//     return observation.legal_moves[0];
//   }}
//   end(result) {{}}          // optional: the game's result (winners, scores, ...)
// }}
"""

#: The cpp starter (the kit arena/match/kits/arena.hpp).
_CPP_TEMPLATE = """// {name}: my domino bot, in C++17 (the cpp runtime: g++ and the kit arena.hpp).
//
// Written from the arena's starter template. Read docs/writing-a-bot.md for the
// whole story. The arena compiles it (g++ -std=c++17 -O2 -static, arena.hpp in the include
// path) in the sandbox, and shows the compiler's errors as it printed them. Check it and
// play it with:
//
//     ./run arena check {file}
//     ./run arena play --rules draw --bots {file},greedy --games 200
//
// Rules: one file, the C++ standard library only; no files, no network, no processes
// (threads are fine); answer within the time limit. Your bot never draws or passes: the
// referee does that for it. What you print (std::cout, printf) goes to standard error.

#define ARENA_NAME "{name}"
#include "arena.hpp"

// Return one of observation.legal_moves.
//
//   observation.seat, .players, .teams, .rules, .params["target"].as_int(), .round, .leader
//   observation.hand         your tiles (arena::Tile: .high, .low, .pips()), ascending
//   observation.line         the line, left to right: pairs (left half, right half)
//   observation.ends         std::optional pair (left, right); empty when you lead
//   observation.hand_sizes, .boneyard_size, .drawable, .scores, .history, .game
//   observation.legal_moves  your legal moves (arena::Move: .tile, .end 'L', 'R' or 0)
arena::Move play(const arena::Observation& observation) {{
    // Play the heaviest tile that fits: a fine first strategy. Make it yours.
    const arena::Move* best = &observation.legal_moves.front();
    for (const arena::Move& move : observation.legal_moves) {{
        if (move.tile.pips() > best->tile.pips()) best = &move;
    }}
    return *best;
}}
"""

#: The starters of the runtimes without a kit (c, go, rust): programs speaking the protocol
#: themselves, files in ``kits/`` with ``@NAME@`` and ``@FILE@`` to fill in (all braces).
_STARTER_FILES = {
    runtime: Path(__file__).resolve().with_name("kits") / f"starter{suffix}"
    for runtime, suffix in (("c", ".c"), ("go", ".go"), ("rust", ".rs"))
}

#: The java starter (the kit arena/match/kits/java, package ``arena``).
_JAVA_TEMPLATE = """// {name}: my domino bot, in Java (the java runtime: OpenJDK 17, the kit arena).
//
// Written from the arena's starter template. Read docs/writing-a-bot.md for the
// whole story. The arena compiles it (javac, with the kit) in the sandbox, and shows
// javac's errors as it printed them. Check it and play it with:
//
//     ./run arena check {file}
//     ./run arena play --rules draw --bots {file},greedy --games 200
//
// Rules: one file, one public class implementing Player, Java's standard library only; no
// files, no network, no processes (threads are fine); answer within the time limit. Your
// bot never draws or passes: the referee does that for it. What you print goes to stderr.

import arena.*;
import java.util.Map;

// The class is {cls}, made from the bot's name {name}: the arena runs the public class
// implementing Player, whatever it is called; NAME below is what the arena calls the bot.
public class {cls} implements Player {{
    public static final String NAME = "{name}";

    // A new {cls} plays each game: its fields live for one game (all its rounds).

    // Return one of observation.legalMoves.
    //
    //   observation.seat, .players, .teams, .rules, .intParam("target", 100), .round, .leader
    //   observation.hand         your tiles (List<Tile>: tile.high(), .low(), .pips()), ascending
    //   observation.line         the line, left to right: List<int[]> of {{left half, right half}}
    //   observation.ends         the open ends {{left, right}}, or null when you lead
    //   observation.handSizes, .boneyardSize, .drawable, .scores, .history (List<Event>)
    //   observation.legalMoves   your legal moves (List<Move>: move.tile(), move.end() "L",
    //                            "R", or null for the round's first tile)
    @Override
    public Move play(Observation observation) {{
        // Play the heaviest tile that fits: a fine first strategy. Make it yours.
        Move best = observation.legalMoves.get(0);
        for (Move move : observation.legalMoves) {{
            if (move.tile().pips() > best.tile().pips()) {{
                best = move;
            }}
        }}
        return best;
    }}

    @Override
    public void start(GameInfo game) {{
        // Optional: game.seat(), game.players(), game.teams(), game.rules(), game.params()
    }}

    @Override
    public void end(Map<String, Object> result) {{
        // Optional: the game's result ("winners", "scores", ...)
    }}
}}
"""

#: Each runtime's template and file suffix (and :data:`_STARTER_FILES`).
_TEMPLATES = {
    "python": (_TEMPLATE, ".py"),
    "python-numpy": (_NUMPY_TEMPLATE, ".py"),
    "javascript": (_JS_TEMPLATE, ".js"),
    "cpp": (_CPP_TEMPLATE, ".cpp"),
    "java": (_JAVA_TEMPLATE, ".java"),
}


def starter_bot(name: str, runtime: str = "python") -> str:
    """Return the text of a starter bot file for a bot called ``name``, written for
    ``runtime`` (``python``, ``python-numpy``, ``javascript``, ``cpp``, ``c``, ``go``,
    ``rust``, ``java``).

    Raises:
        ValueError: ``name`` is empty or not one line of printable text, or ``runtime``
            is none of those.
    """
    starter = _STARTER_FILES.get(runtime)
    if starter is not None:
        template, suffix = starter.read_text(encoding="utf-8"), starter.suffix
    elif runtime in _TEMPLATES:
        template, suffix = _TEMPLATES[runtime]
    else:
        runtimes = ", ".join([*_TEMPLATES, *_STARTER_FILES])
        raise ValueError(f"no starter bot for runtime {runtime!r}: {runtimes}")
    file = name if name.endswith(suffix) else f"{name}{suffix}"
    stem = file[: -len(suffix)]
    if not STARTER_NAME.fullmatch(stem):
        raise ValueError(
            f"{name!r} cannot name a bot: use a letter, then letters, digits, '_' or '-' "
            "(at most 64; e.g. mybot)"
        )
    if starter is not None:
        return template.replace("@NAME@", stem).replace("@FILE@", file)
    cls = java_class_name(stem)
    return template.format(name=stem, cls=cls, file=file, numpy=f"numpy {NUMPY_VERSION}")


def java_class_name(name: str) -> str:
    """The Java starter's class for bot ``name`` (a :data:`STARTER_NAME`): its parts, split
    at ``-`` and ``_``, each begun with a capital and joined (``my-bot`` and ``my_bot``:
    ``MyBot``; ``mybot``: ``Mybot``), with ``Bot`` added to a name the file's own types
    take (``move``: ``MoveBot``). A capital first letter is no Java keyword."""
    cls = "".join(part[:1].upper() + part[1:] for part in re.split(r"[-_]+", name) if part)
    return f"{cls}Bot" if cls in _JAVA_TAKEN else cls


def write_starter_bot(path: Path, runtime: str = "python") -> None:
    """Write a starter bot for ``runtime`` to ``path``, named after the file (``mybot.py``:
    ``mybot``).

    Raises:
        FileExistsError: ``path`` already exists (it is never overwritten).
        ValueError: the file name does not make a bot name, or its directory is missing.
    """
    text = starter_bot(path.name, runtime)
    if not path.parent.is_dir():
        raise ValueError(f"no directory {str(path.parent)!r} to write {path.name} in")
    with path.open("x", encoding="utf-8") as handle:
        handle.write(text)
