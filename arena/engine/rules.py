"""Rule sets: frozen data, the seven presets, and custom rule sets from files.

A :class:`Rules` value holds every parameter of shared ``RULES.md``; the engine
has no per-preset code. Presets are named instances (``find_rules("muggins")``);
a custom rule set is the same value built from a TOML or JSON file
(:func:`load_rules`) or a dict (:meth:`Rules.from_params`), validated with a
message that names the offending parameter.

Each rule set has a stable version hash of its parameters (not its name), so a
game record says exactly which rules produced it.
"""

from __future__ import annotations

import enum
import hashlib
import json
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from arena.engine.tiles import MAX_PIP_LIMIT, set_size, tile_set
from arena.errors import ParseError, RulesError

__all__ = [
    "MAX_PLAYERS",
    "PRESETS",
    "GameEnd",
    "InPlay",
    "Lead",
    "Rules",
    "Scoring",
    "find_rules",
    "load_rules",
    "parse_rules",
]


class Lead(enum.Enum):
    """How the first tile of every round is chosen."""

    #: The holder of the highest double leads it; no double in any hand: redeal.
    HIGHEST_DOUBLE = "highest-double"
    #: Each player draws a tile, the highest leads any tile of its hand (``wooden``).
    DRAW_FOR_LEAD = "draw-for-lead"


class Scoring(enum.Enum):
    """What the winner of a round scores, from the pip counts left in hand.

    ``own`` is the winner's count (0 after a domino), ``opp`` each opponent's.
    """

    #: Σ opp - own (``block``, ``draw``, ``three-minute``).
    OPPONENTS_MINUS_OWN = "opponents-minus-own"
    #: Σ max(0, opp - own) (``giant``).
    POSITIVE_DIFFERENCES = "positive-differences"
    #: Σ (opp - own) (``block-and-draw``).
    DIFFERENCES = "differences"
    #: (Σ opp + 2) // 5: fives, 3-4 over rounding up (``muggins``).
    ROUNDED_FIVES = "rounded-fives"
    #: No points: the winner wins the round (``wooden``).
    ROUND_WINS = "round-wins"


class InPlay(enum.Enum):
    """Points scored during play, after each tile."""

    NONE = "none"
    #: Open ends adding up to a positive multiple of 5 score count/5 (``muggins``).
    FIVES = "fives"


class GameEnd(enum.Enum):
    """What ends a game."""

    #: The first player or team to reach ``target`` points.
    POINTS = "points"
    #: The first to win ``best_of // 2 + 1`` rounds.
    ROUNDS = "rounds"


#: Parameters a preset accepts as overrides (RULES.md "Parameters every preset accepts").
PRESET_OVERRIDES = ("max_pip", "target", "best_of", "draw_limit")

_E = TypeVar("_E", bound=enum.Enum)
_NAME_RE = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,39}$")
#: The most seats a rule set may have.
MAX_PLAYERS = 9
_MAX_TARGET = 100_000


@dataclass(frozen=True, slots=True)
class Rules:
    """A rule set: every parameter the engine needs, immutable.

    Build custom ones with :meth:`from_params` or :func:`load_rules` so they are
    validated; the constructor itself does not validate.

    Attributes:
        name: the preset's name (``"draw"``) or the custom rule set's.
        max_pip: the set, double-``max_pip`` (6, 9, 12 in the presets).
        players: the allowed player counts.
        hand_sizes: ``(players, tiles dealt to each)`` pairs, one per player count.
        reserves: ``(players, tiles)`` pairs: how many boneyard tiles may never be drawn.
        lead: how each round's first tile is chosen.
        draw_limit: tiles a player may draw in one turn when it cannot play;
            0 never draws (``block``), None draws until playable.
        scoring: what a round's winner scores.
        in_play: points scored during play.
        team_play: whether 4 players may play as two teams (seats 0+2 v 1+3).
        end: what ends a game.
        target: points that win a game (``end`` is POINTS), else None.
        best_of: rounds of the match-up (``end`` is ROUNDS), else None.
        description: one line for people; not a parameter.
    """

    name: str
    max_pip: int
    players: tuple[int, ...]
    hand_sizes: tuple[tuple[int, int], ...]
    reserves: tuple[tuple[int, int], ...]
    lead: Lead
    draw_limit: int | None
    scoring: Scoring
    in_play: InPlay
    team_play: bool
    end: GameEnd
    target: int | None
    best_of: int | None
    description: str = field(default="", compare=False)

    def hand_size(self, players: int) -> int:
        """Return the tiles dealt to each of ``players`` players.

        Raises:
            RulesError: the rule set does not allow that many players.
        """
        for count, size in self.hand_sizes:
            if count == players:
                return size
        self.check_players(players)
        raise AssertionError("validated rules give a hand size for every player count")

    def reserve(self, players: int) -> int:
        """Return how many boneyard tiles may never be drawn with ``players`` players.

        Raises:
            RulesError: the rule set does not allow that many players.
        """
        self.check_players(players)
        for count, size in self.reserves:
            if count == players:
                return size
        return 0

    @property
    def tile_count(self) -> int:
        """The number of tiles in the set."""
        return set_size(self.max_pip)

    @property
    def draws(self) -> bool:
        """Whether a player who cannot play draws from the boneyard."""
        return self.draw_limit != 0

    @property
    def wins_needed(self) -> int:
        """Points (``end`` POINTS) or round wins (``end`` ROUNDS) that win a game."""
        if self.end is GameEnd.ROUNDS:
            assert self.best_of is not None
            return self.best_of // 2 + 1
        assert self.target is not None
        return self.target

    def check_players(self, players: int, teams: bool = False) -> None:
        """Check a game setup against the rule set.

        Raises:
            RulesError: player count not allowed, or teams not allowed.
        """
        if players not in self.players:
            allowed = ", ".join(map(str, self.players))
            raise RulesError(f"{self.name} is for {allowed} players, not {players!r}")
        if teams and not (self.team_play and players == 4):
            raise RulesError(
                f"{self.name} has no team play with {players} players"
                + ("" if self.team_play else " (team play: muggins with 4 players)")
            )

    def params(self) -> dict[str, Any]:
        """Return the parameters as a JSON-ready dict (everything but name and description)."""
        return {
            "max_pip": self.max_pip,
            "players": list(self.players),
            "hand_size": {str(n): size for n, size in self.hand_sizes},
            "reserve": {str(n): size for n, size in self.reserves},
            "lead": self.lead.value,
            "draw_limit": self.draw_limit,
            "scoring": self.scoring.value,
            "in_play": self.in_play.value,
            "team_play": self.team_play,
            "end": self.end.value,
            "target": self.target,
            "best_of": self.best_of,
        }

    @property
    def version(self) -> str:
        """A stable hash of :meth:`params` (16 hex digits); equal params, equal hash."""
        canonical = json.dumps(self.params(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canonical.encode()).hexdigest()[:16]

    @property
    def is_preset(self) -> bool:
        """Whether this is a preset exactly as published (same name and parameters)."""
        preset = PRESETS.get(self.name)
        return preset is not None and preset == self

    @classmethod
    def from_params(cls, name: str, params: Mapping[str, Any], *, description: str = "") -> Rules:
        """Build and validate a rule set from :meth:`params`-shaped data.

        Every parameter is required. Use :func:`load_rules` or
        :meth:`with_overrides` to start from a preset.

        Raises:
            RulesError: a parameter is missing, unknown, of the wrong type, or
                the combination cannot be played (e.g. hands larger than the set).
        """
        return _build(name, params, description)

    def with_overrides(self, **overrides: Any) -> Rules:
        """Return a copy with some parameters changed, validated.

        A preset accepts only the overrides RULES.md allows: ``max_pip``,
        ``target`` (points games), ``best_of`` (``wooden``) and ``draw_limit``
        (``block-and-draw``: 3 or unlimited); a custom rule set accepts any parameter.

        Raises:
            RulesError: an override that is unknown, not allowed, or invalid.
        """
        if not overrides:
            return self
        if self.name in PRESETS:
            _check_preset_overrides(self, overrides)
        params = self.params()
        for key, value in overrides.items():
            if key not in params:
                raise RulesError(f"unknown parameter {key!r} (known: {', '.join(params)})")
            params[key] = value
        return _build(self.name, params, self.description)

    def __str__(self) -> str:
        return self.name


def _check_preset_overrides(rules: Rules, overrides: Mapping[str, Any]) -> None:
    for key, value in overrides.items():
        if key not in PRESET_OVERRIDES:
            raise RulesError(
                f"preset {rules.name!r} does not take {key!r} "
                f"(overrides: {', '.join(PRESET_OVERRIDES)}; use a custom rule set file)"
            )
        if key == "target" and rules.end is not GameEnd.POINTS:
            raise RulesError(f"{rules.name} is won by rounds: set best_of, not target")
        if key == "best_of" and rules.end is not GameEnd.ROUNDS:
            raise RulesError(f"{rules.name} is won by points: set target, not best_of")
        if key == "draw_limit" and rules.name != "block-and-draw":
            raise RulesError(
                f"{rules.name} takes no draw_limit (block-and-draw does: 3 or unlimited)"
            )
        if key == "draw_limit" and value not in (3, None, "unlimited"):
            raise RulesError(f"block-and-draw's draw_limit is 3 or unlimited, not {value!r}")
        if key == "max_pip" and value not in (6, 9, 12):
            raise RulesError(f"max_pip must be 6, 9 or 12 for a preset, not {value!r}")


# --- validation -------------------------------------------------------------------

_PARAM_NAMES = (
    "max_pip",
    "players",
    "hand_size",
    "reserve",
    "lead",
    "draw_limit",
    "scoring",
    "in_play",
    "team_play",
    "end",
    "target",
    "best_of",
)


def _int(params: Mapping[str, Any], key: str, low: int, high: int) -> int:
    value = params[key]
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise RulesError(f"{key} must be a whole number from {low} to {high}, not {value!r}")
    return value


def _optional_int(params: Mapping[str, Any], key: str, low: int, high: int) -> int | None:
    return None if params[key] is None else _int(params, key, low, high)


def _draw_limit(params: Mapping[str, Any]) -> int | None:
    # TOML has no null: "unlimited" spells None in files and on the command line.
    if params["draw_limit"] in (None, "unlimited"):
        return None
    value = params["draw_limit"]
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 1000:
        raise RulesError(
            f"draw_limit must be a whole number from 0 to 1000 or 'unlimited', not {value!r}"
        )
    return value


def _enum(params: Mapping[str, Any], key: str, kind: type[_E]) -> _E:
    value = params[key]
    try:
        return kind(value)
    except ValueError:
        choices = ", ".join(repr(member.value) for member in kind)
        raise RulesError(f"{key} must be one of {choices}, not {value!r}") from None


def _per_players(
    params: Mapping[str, Any], key: str, players: tuple[int, ...], *, required: bool
) -> tuple[tuple[int, int], ...]:
    raw = params[key]
    if isinstance(raw, int) and not isinstance(raw, bool):
        raw = {str(n): raw for n in players}
    if not isinstance(raw, Mapping):
        raise RulesError(
            f"{key} must be a number or a table of player count -> number, not {raw!r}"
        )
    table: dict[int, int] = {}
    for count, size in raw.items():
        try:
            n = int(count)
        except (TypeError, ValueError):
            raise RulesError(f"{key}: {count!r} is not a player count") from None
        if n not in players:
            raise RulesError(f"{key} has an entry for {n} players, who are not allowed")
        table[n] = _int({f"{key}[{n}]": size}, f"{key}[{n}]", 0, set_size(MAX_PIP_LIMIT))
    missing = [n for n in players if n not in table]
    if missing and required:
        raise RulesError(f"{key} gives no size for {', '.join(map(str, missing))} players")
    return tuple(sorted(table.items()))


def _players(params: Mapping[str, Any]) -> tuple[int, ...]:
    raw = params["players"]
    if isinstance(raw, int) and not isinstance(raw, bool):
        raw = [raw]
    if not isinstance(raw, list | tuple) or not raw:
        raise RulesError(f"players must be a non-empty list of player counts, not {raw!r}")
    counts = [_int({"players": n}, "players", 2, MAX_PLAYERS) for n in raw]
    if len(set(counts)) != len(counts):
        raise RulesError(f"players lists a count twice: {raw!r}")
    return tuple(sorted(counts))


def _build(name: str, params: Mapping[str, Any], description: str) -> Rules:
    if not isinstance(name, str) or not _NAME_RE.match(name):
        raise RulesError(
            f"rule set name must be 1-40 lower-case letters, digits, '-', '_' or '.', not {name!r}"
        )
    unknown = [key for key in params if key not in _PARAM_NAMES]
    if unknown:
        raise RulesError(f"unknown parameter {unknown[0]!r} (known: {', '.join(_PARAM_NAMES)})")
    missing = [key for key in _PARAM_NAMES if key not in params]
    if missing:
        raise RulesError(f"rule set {name!r} is missing {', '.join(missing)}")
    players = _players(params)
    team_play = params["team_play"]
    if not isinstance(team_play, bool):
        raise RulesError(f"team_play must be true or false, not {team_play!r}")
    rules = Rules(
        name=name,
        max_pip=_int(params, "max_pip", 1, MAX_PIP_LIMIT),
        players=players,
        hand_sizes=_per_players(params, "hand_size", players, required=True),
        reserves=_per_players(params, "reserve", players, required=False),
        lead=_enum(params, "lead", Lead),
        draw_limit=_draw_limit(params),
        scoring=_enum(params, "scoring", Scoring),
        in_play=_enum(params, "in_play", InPlay),
        team_play=team_play,
        end=_enum(params, "end", GameEnd),
        target=_optional_int(params, "target", 1, _MAX_TARGET),
        best_of=_optional_int(params, "best_of", 1, 99),
        description=description,
    )
    _check_combination(rules)
    return rules


def _check_combination(rules: Rules) -> None:
    tiles = rules.tile_count
    for n, size in rules.hand_sizes:
        if size < 1:
            raise RulesError(f"hand_size for {n} players must be at least 1")
        reserve = dict(rules.reserves).get(n, 0)
        if n * size + reserve > tiles:
            raise RulesError(
                f"hands need more tiles than the set has: {n} players x {size} tiles"
                + (f" + {reserve} reserved" if reserve else "")
                + f" = {n * size + reserve}, but double-{rules.max_pip} has {tiles}"
            )
    if rules.lead is Lead.DRAW_FOR_LEAD and max(rules.players) > tiles:
        raise RulesError(
            f"draw for lead needs a tile per player; double-{rules.max_pip} is too small"
        )
    _check_can_score(rules)
    if rules.team_play and 4 not in rules.players:
        raise RulesError("team_play needs 4 players among players")
    if rules.end is GameEnd.POINTS:
        if rules.target is None or rules.best_of is not None:
            raise RulesError("a game won by points needs target (and no best_of)")
        if rules.scoring is Scoring.ROUND_WINS and rules.in_play is InPlay.NONE:
            raise RulesError("scoring round-wins scores no points: end the game by rounds")
    else:
        if rules.best_of is None or rules.target is not None:
            raise RulesError("a game won by rounds needs best_of (and no target)")
        if rules.best_of % 2 == 0:
            raise RulesError(f"best_of must be odd, not {rules.best_of}")
        if rules.scoring is not Scoring.ROUND_WINS or rules.in_play is not InPlay.NONE:
            raise RulesError("a game won by rounds needs scoring round-wins and in_play none")


def _check_can_score(rules: Rules) -> None:
    """Reject points games in which no round can ever score (they would never end).

    ``round-wins`` scores only in play (its rounds end with no points), so it needs fives
    that a count can reach; ``rounded-fives`` can round every result to 0: its best round
    is the opponents holding the heaviest tiles, and in-play fives need a count of 5.
    """
    if rules.end is not GameEnd.POINTS:
        return
    fives_reachable = rules.in_play is InPlay.FIVES and 4 * rules.max_pip >= 5
    if rules.scoring is Scoring.ROUND_WINS and rules.in_play is InPlay.FIVES:
        if not fives_reachable:
            raise RulesError(
                f"scoring round-wins scores only in play, and no count can reach 5 with "
                f"double-{rules.max_pip}, so the game would never end"
            )
        return
    if rules.scoring is not Scoring.ROUNDED_FIVES or fives_reachable:
        return
    heaviest = sorted((t.pips for t in tile_set(rules.max_pip)), reverse=True)
    for players, size in rules.hand_sizes:
        if (sum(heaviest[: (players - 1) * size]) + 2) // 5 == 0:
            raise RulesError(
                f"no round can score with {players} players: the opponents hold at most "
                f"{sum(heaviest[: (players - 1) * size])} pips, which round to 0, "
                "so the game would never end"
            )


# --- presets --------------------------------------------------------------------------


def _preset(name: str, description: str, **params: Any) -> Rules:
    defaults: dict[str, Any] = {
        "max_pip": 6,
        "players": [2, 3, 4],
        "reserve": 0,
        "lead": Lead.HIGHEST_DOUBLE.value,
        "draw_limit": None,
        "scoring": Scoring.OPPONENTS_MINUS_OWN.value,
        "in_play": InPlay.NONE.value,
        "team_play": False,
        "end": GameEnd.POINTS.value,
        "target": 100,
        "best_of": None,
    }
    return _build(name, defaults | params, description)


_SEVEN_FIVE = {"2": 7, "3": 5, "4": 5}

#: The seven presets of RULES.md, by name.
PRESETS: dict[str, Rules] = {
    rules.name: rules
    for rules in (
        _preset(
            "block",
            "Block (seed 001 #1): no drawing, pass when stuck; first to 100.",
            hand_size=_SEVEN_FIVE,
            draw_limit=0,
        ),
        _preset(
            "draw",
            "Draw (seed 001 #2): draw until playable, last 2 (2p) / 1 (3-4p) stay; first to 100.",
            hand_size=_SEVEN_FIVE,
            reserve={"2": 2, "3": 1, "4": 1},
        ),
        _preset(
            "muggins",
            "Muggins (seed 001 #3): fives scored in play, rounded end count; first to 61.",
            hand_size=5,
            reserve={"2": 2, "3": 1, "4": 1},
            scoring=Scoring.ROUNDED_FIVES.value,
            in_play=InPlay.FIVES.value,
            team_play=True,
            target=61,
        ),
        _preset(
            "giant",
            "Giant (seed 000): draw until playable or empty; blocked scores positive differences.",
            hand_size=5,
            scoring=Scoring.POSITIVE_DIFFERENCES.value,
        ),
        _preset(
            "block-and-draw",
            "Block and draw (seed 002): 2-5 players, up to 3 draws a turn; first to 100.",
            players=[2, 3, 4, 5],
            hand_size={"2": 7, "3": 7, "4": 5, "5": 5},
            draw_limit=3,
            scoring=Scoring.DIFFERENCES.value,
        ),
        _preset(
            "wooden",
            "Wooden (seed 003): draw for lead, free first tile, lowest hand wins; best of 3.",
            hand_size=_SEVEN_FIVE,
            lead=Lead.DRAW_FOR_LEAD.value,
            scoring=Scoring.ROUND_WINS.value,
            end=GameEnd.ROUNDS.value,
            target=None,
            best_of=3,
        ),
        _preset(
            "three-minute",
            "Three-minute (seed 004): 5 tiles (2p) / 7 tiles (3-4p), draw until playable; to 100.",
            hand_size={"2": 5, "3": 7, "4": 7},
        ),
    )
}


def find_rules(name: str, **overrides: Any) -> Rules:
    """Return the preset called ``name``, with optional validated overrides.

    Raises:
        RulesError: no preset by that name, or a bad override.
    """
    try:
        rules = PRESETS[name]
    except KeyError:
        raise RulesError(f"unknown rule set {name!r} (presets: {', '.join(PRESETS)})") from None
    return rules.with_overrides(**overrides)


def load_rules(path: str | Path) -> Rules:
    """Load a custom rule set from a ``.toml`` or ``.json`` file.

    The file holds ``name``, optionally ``base`` (a preset to start from) and
    ``description``, and any parameters of :meth:`Rules.params`; without a
    base, every parameter is required. See ``docs/rules.md``.

    Raises:
        ParseError: the file cannot be read or parsed.
        RulesError: the rule set is invalid.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ParseError(f"cannot read rule set file {str(path)!r}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise ParseError(f"rule set file {str(path)!r} is not UTF-8 text") from None
    return parse_rules(text, str(path))


def parse_rules(text: str, filename: str) -> Rules:
    """A custom rule set from a file's text (an upload, say): ``filename``'s suffix,
    ``.toml`` or ``.json``, says how to parse it; the document is :func:`load_rules`'.

    Raises:
        ParseError: not TOML or JSON as the suffix says, or not an object.
        RulesError: the rule set is invalid.
    """
    data = _parse_rules_text(text, Path(filename))
    return rules_from_document(data, source=filename)


def _parse_rules_text(text: str, path: Path) -> dict[str, Any]:
    suffix = path.suffix.lower()
    try:
        if suffix == ".toml":
            return tomllib.loads(text)
        if suffix == ".json":
            data = json.loads(text)
        else:
            raise ParseError(f"rule set file {str(path)!r} must end in .toml or .json")
    except tomllib.TOMLDecodeError as exc:
        raise ParseError(f"{path}: not valid TOML: {exc}") from None
    except (json.JSONDecodeError, RecursionError) as exc:
        raise ParseError(f"{path}: not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ParseError(f"{path}: a rule set is a JSON object, not {type(data).__name__}")
    return data


def rules_from_document(data: Mapping[str, Any], *, source: str = "rule set") -> Rules:
    """Build a custom rule set from a parsed file (``name``, ``base``, parameters).

    With a ``base`` preset, the file changes only what it names: a new
    ``players`` list drops the base's hand sizes and reserves for other player
    counts, and a new ``end`` clears the base's ``target`` or ``best_of``
    (TOML cannot write null).

    Raises:
        RulesError: the document is not a valid rule set.
    """
    try:
        return _from_document(dict(data))
    except RulesError as exc:
        raise RulesError(f"{source}: {exc}") from None


def _from_document(document: dict[str, Any]) -> Rules:
    name = document.pop("name", None)
    if name is None:
        raise RulesError("a rule set needs a name")
    if not isinstance(name, str):
        raise RulesError("name must be text")
    description = document.pop("description", "")
    if not isinstance(description, str):
        raise RulesError("description must be text")
    if name in PRESETS:
        return _preset_document(name, document)
    base = document.pop("base", None)
    if base is None:
        return _build(name, _with_end_defaults(document), description)
    if not isinstance(base, str):
        raise RulesError(f"base must be a preset's name ({', '.join(PRESETS)})")
    params = find_rules(base).params()
    if "players" in document and isinstance(document["players"], list):
        allowed = {str(n) for n in document["players"]}
        for table in ("hand_size", "reserve"):
            if table not in document:
                params[table] = {n: v for n, v in params[table].items() if n in allowed}
    params.update(document)
    if "end" in document:
        params = _with_end_defaults(params, keep=document)
    return _build(name, params, description)


def _preset_document(name: str, document: dict[str, Any]) -> Rules:
    """A file named like a preset: that preset, changed only by the overrides RULES.md
    allows (a preset's downloaded file reads back to it); its description is the preset's."""
    base = document.pop("base", name)
    preset = PRESETS[name]
    params = preset.params() | document
    if "end" in document:
        params = _with_end_defaults(params, keep=document)
    built = _build(name, params, preset.description)
    changed = {key: value for key, value in built.params().items() if value != preset.params()[key]}
    refused = [key for key in changed if key not in PRESET_OVERRIDES]
    if base != name or refused:
        raise RulesError(
            f"{name!r} is a preset's name; name your rule set otherwise "
            f"(and write base = {name!r} to start from it)"
        )
    return preset.with_overrides(**changed)


def _with_end_defaults(
    params: dict[str, Any], keep: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """Clear the parameter the game end does not use (``best_of`` for points
    games, ``target`` for rounds games) unless the document sets it itself."""
    keep = params if keep is None else keep
    unused = "best_of" if params.get("end") == GameEnd.POINTS.value else "target"
    if params.get("end") in (GameEnd.POINTS.value, GameEnd.ROUNDS.value) and unused not in keep:
        return params | {unused: None}
    return params


def rules_from_record(name: str, params: Mapping[str, Any]) -> Rules:
    """Rebuild the rule set a game record names (preset or custom).

    Raises:
        RulesError: the parameters are invalid.
    """
    return _build(name, params, PRESETS[name].description if name in PRESETS else "")
