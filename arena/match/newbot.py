"""Starter bot files: the template behind ``arena new-bot NAME``.

Standard library only. :func:`starter_bot` returns the text of a commented bot
file that plays legally as it is (the heaviest tile, like ``greedy``) and shows
every field of the observation; :func:`write_starter_bot` writes it, never over
an existing file. The tutorial is ``docs/writing-a-bot.md``.
"""

from __future__ import annotations

import re
from pathlib import Path

__all__ = ["STARTER_NAME", "declared_name", "starter_bot", "write_starter_bot"]

#: What a starter bot's file may be called (its stem is the bot's name in its handshake).
STARTER_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,63}")

#: A bot file's own name: ``NAME = "mybot"`` on a line of its own at the top level.
_DECLARED = re.compile(r"""^NAME\s*=\s*(["'])([^"'\\\n]{1,64})\1\s*(?:#.*)?$""", re.MULTILINE)


def declared_name(source: str) -> str | None:
    """The name a bot file gives itself (``NAME = "mybot"`` at the top level, as the
    tutorial says), or None. Read as text, never run or parsed: the file may be hostile."""
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


def starter_bot(name: str) -> str:
    """Return the text of a starter bot file for a bot called ``name``.

    Raises:
        ValueError: ``name`` is empty or not one line of printable text.
    """
    file = name if name.endswith(".py") else f"{name}.py"
    stem = file[: -len(".py")]
    if not STARTER_NAME.fullmatch(stem):
        raise ValueError(
            f"{name!r} cannot name a bot: use a letter, then letters, digits, '_' or '-' "
            "(at most 64; e.g. mybot)"
        )
    return _TEMPLATE.format(name=stem, file=file)


def write_starter_bot(path: Path) -> None:
    """Write a starter bot to ``path``, named after the file (``mybot.py``: ``mybot``).

    Raises:
        FileExistsError: ``path`` already exists (it is never overwritten).
        ValueError: the file name does not make a bot name, or its directory is missing.
    """
    text = starter_bot(path.name)
    if not path.parent.is_dir():
        raise ValueError(f"no directory {str(path.parent)!r} to write {path.name} in")
    with path.open("x", encoding="utf-8") as handle:
        handle.write(text)
