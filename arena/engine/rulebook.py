"""A rule set in words and as a file: standard library only.

:func:`parameters` gives each parameter's value and its meaning, as ``arena rules NAME``
prints them and the rule set's page (``/rules/NAME``) shows them: one source for the
meanings. :func:`rule_document` is the rule set as a custom rule file holds it (``name``,
``description`` and every parameter, docs/rules.md "Custom rule sets"), in the shape TOML
or JSON can hold; :func:`arena.engine.rules.rules_from_document` reads it back to equal
rules, a preset's too (a file named like a preset is that preset, with the overrides
RULES.md allows).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from arena.engine.rules import GameEnd, InPlay, Lead, Rules, Scoring

__all__ = [
    "Parameter",
    "draw_text",
    "end_text",
    "parameters",
    "per_players_text",
    "players_text",
    "rule_document",
]

_LEADS = {
    Lead.HIGHEST_DOUBLE: "the holder of the highest double leads it (no double in any hand: "
    "the tiles are dealt again)",
    Lead.DRAW_FOR_LEAD: "each player draws a tile; the highest leads any tile of its hand",
}

_SCORINGS = {
    Scoring.OPPONENTS_MINUS_OWN: "the round's winner scores the opponents' pips less its own",
    Scoring.POSITIVE_DIFFERENCES: "the round's winner scores, for each opponent, the pips "
    "it holds beyond the winner's (none if fewer)",
    Scoring.DIFFERENCES: "the round's winner scores the sum of each opponent's pips less its own",
    Scoring.ROUNDED_FIVES: "the round's winner scores a point for every 5 of the opponents' "
    "pips, rounded (3 or 4 over: up)",
    Scoring.ROUND_WINS: "no points for a round: the winner wins the round",
}

_IN_PLAY = {
    InPlay.NONE: "no points during play",
    InPlay.FIVES: "after each tile, open ends adding up to a multiple of 5 score a point "
    "for every 5",
}


@dataclass(frozen=True, slots=True)
class Parameter:
    """One parameter of a rule set: its name, its value (as JSON holds it) and what it
    means for a game."""

    name: str
    value: Any
    meaning: str


def players_text(rules: Rules) -> str:
    """The allowed player counts (``2-4``, ``2, 4``), with ``(4 as teams)`` when they may."""
    counts = rules.players
    if len(counts) > 1 and counts == tuple(range(counts[0], counts[-1] + 1)):
        text = f"{counts[0]}-{counts[-1]}"
    else:
        text = ", ".join(map(str, counts))
    return text + (" (4 as teams)" if rules.team_play else "")


def per_players_text(pairs: tuple[tuple[int, int], ...], players: tuple[int, ...]) -> str:
    """A per-player-count table in words: one number when all agree, else ``2p:7 3p:5``."""
    table = dict(pairs)
    values = [table.get(n, 0) for n in players]
    if len(set(values)) == 1:
        return str(values[0])
    return " ".join(f"{n}p:{value}" for n, value in zip(players, values, strict=True))


def draw_text(rules: Rules) -> str:
    """What a player who cannot play draws: ``none: pass``, ``until playable``, ``up to 3
    a turn``."""
    if rules.draw_limit == 0:
        return "none: pass"
    if rules.draw_limit is None:
        return "until playable"
    return f"up to {rules.draw_limit} a turn"


def end_text(rules: Rules) -> str:
    """What ends a game: ``first to 100`` or ``best of 3 rounds``."""
    if rules.end is GameEnd.ROUNDS:
        return f"best of {rules.best_of} rounds"
    return f"first to {rules.target}"


def _end_meaning(rules: Rules) -> str:
    if rules.end is GameEnd.ROUNDS:
        return f"the first to win {rules.wins_needed} rounds (best of {rules.best_of}) wins"
    return f"the first to {rules.target} points wins the game"


def _meanings(rules: Rules) -> dict[str, str]:
    return {
        "max_pip": f"double-{rules.max_pip} set, {rules.tile_count} tiles",
        "players": f"players at a table: {players_text(rules)}",
        "hand_size": "tiles dealt to each player: "
        + per_players_text(rules.hand_sizes, rules.players),
        "reserve": "boneyard tiles never drawn: " + per_players_text(rules.reserves, rules.players),
        "lead": _LEADS[rules.lead],
        "draw_limit": "a player who cannot play draws " + draw_text(rules),
        "scoring": _SCORINGS[rules.scoring],
        "in_play": _IN_PLAY[rules.in_play],
        "team_play": "seats 0+2 v 1+3 with 4 players" if rules.team_play else "no teams",
        "end": _end_meaning(rules),
        "target": "points that win the game" if rules.target is not None else "not used",
        "best_of": "rounds of the game" if rules.best_of is not None else "not used",
    }


def parameters(rules: Rules) -> tuple[Parameter, ...]:
    """Every parameter of ``rules`` (in :meth:`Rules.params`' order) with its meaning."""
    meanings = _meanings(rules)
    return tuple(Parameter(key, value, meanings[key]) for key, value in rules.params().items())


def rule_document(rules: Rules, *, toml: bool = False) -> dict[str, Any]:
    """``rules`` as a rule file's document: ``name``, ``description`` (when it has one) and
    every parameter. With ``toml``, what TOML cannot hold is written as docs/rules.md says:
    unlimited drawing as ``"unlimited"``, the unused ``target`` or ``best_of`` left out."""
    document: dict[str, Any] = {"name": rules.name}
    if rules.description:
        document["description"] = rules.description
    for key, value in rules.params().items():
        if toml and value is None:
            if key != "draw_limit":
                continue
            value = "unlimited"
        document[key] = value
    return document
