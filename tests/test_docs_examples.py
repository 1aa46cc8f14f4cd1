"""docs/rules.md and docs/examples/ agree with the engine, so the docs cannot drift."""

from __future__ import annotations

import random
import re
from pathlib import Path
from typing import Any

import pytest

from arena import PRESETS, Game, load_rules
from arena.engine.rules import find_rules
from arena.errors import ArenaError
from tests.paths import DOCS

RULES_MD = DOCS / "rules.md"
EXAMPLES = sorted((DOCS / "examples").glob("*.toml")) + sorted((DOCS / "examples").glob("*.json"))

# --- the preset table -------------------------------------------------------------


def _counts(text: str) -> list[int]:
    """Parse ``"2-4"`` or ``"3"`` into the player counts it names."""
    low, _, high = text.partition("-")
    return list(range(int(low), int(high or low) + 1))


def _per_players(text: str, players: list[int]) -> dict[str, int]:
    """Parse ``"5"`` or ``"2: 7, 3-4: 5"`` into params' ``{"2": 7, ...}`` form."""
    if ":" not in text:
        return {str(n): int(text) for n in players}
    table: dict[str, int] = {}
    for entry in text.split(","):
        counts, _, size = entry.partition(":")
        for n in _counts(counts.strip()):
            table[str(n)] = int(size)
    return table


def _optional(text: str) -> int | None:
    return None if text in ("-", "unlimited") else int(text)


def _cells(line: str) -> list[str]:
    return [cell.strip().strip("`") for cell in line.strip().strip("|").split("|")]


def preset_table() -> tuple[list[str], list[dict[str, str]]]:
    """Return the header and the rows of the table under "## Presets" in docs/rules.md."""
    section = RULES_MD.read_text(encoding="utf-8").split("\n## Presets\n", 1)[1]
    lines = [line for line in section.split("\n## ", 1)[0].splitlines() if line.startswith("|")]
    header = _cells(lines[0])
    rows = [dict(zip(header, _cells(line), strict=True)) for line in lines[2:]]
    return header, rows


def documented_params(row: dict[str, str]) -> dict[str, Any]:
    """Turn a table row into the shape of :meth:`arena.Rules.params`."""
    players = _counts(row["players"])
    return {
        "max_pip": 6,
        "players": players,
        "hand_size": _per_players(row["hand_size"], players),
        "reserve": _per_players(row["reserve"], players),
        "lead": row["lead"],
        "draw_limit": _optional(row["draw_limit"]),
        "scoring": row["scoring"],
        "in_play": row["in_play"],
        "team_play": {"yes": True, "no": False}[row["team_play"]],
        "end": row["end"],
        "target": _optional(row["target"]),
        "best_of": _optional(row["best_of"]),
    }


def test_the_table_has_a_column_per_parameter() -> None:
    header, _ = preset_table()
    params = set(PRESETS["block"].params()) - {"max_pip"}  # max_pip: stated below the table
    assert params <= set(header), params - set(header)


def test_the_table_lists_every_preset_once() -> None:
    _, rows = preset_table()
    names = [row["name"] for row in rows]
    assert sorted(names) == sorted(PRESETS)
    assert len(names) == len(set(names))


@pytest.mark.parametrize("row", preset_table()[1], ids=lambda row: row["name"])
def test_the_table_matches_the_preset(row: dict[str, str]) -> None:
    assert documented_params(row) == PRESETS[row["name"]].params()


def test_every_preset_has_a_section() -> None:
    text = RULES_MD.read_text(encoding="utf-8")
    for name in PRESETS:
        assert re.search(rf"^### `{re.escape(name)}`", text, re.MULTILINE), name


# --- the example rule sets ----------------------------------------------------------


def test_there_are_examples_and_the_docs_name_each() -> None:
    text = RULES_MD.read_text(encoding="utf-8")
    assert len(EXAMPLES) >= 2
    for path in EXAMPLES:
        assert f"(examples/{path.name})" in text, path.name


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda path: path.name)
def test_example_loads_and_plays(path: Path) -> None:
    rules = load_rules(path)
    assert rules.name == path.stem
    assert rules.description
    assert not rules.is_preset
    rng = random.Random(path.name)
    for players in rules.players:
        game = Game(rules, players, seed=rng.getrandbits(32))
        while not game.is_terminal():
            game.apply(rng.choice(game.legal_moves()))
        outcome = game.outcome()
        assert outcome is not None and outcome.winners


def test_examples_say_what_their_names_say() -> None:
    loaded = {path.stem: load_rules(path) for path in EXAMPLES}
    unlimited = loaded["unlimited-block-and-draw"]
    assert unlimited.version == find_rules("block-and-draw", draw_limit=None).version
    assert loaded["block-to-200"].version == find_rules("block", target=200).version
    muggins = loaded["quick-muggins"]
    assert (muggins.players, muggins.target, muggins.in_play.value) == ((2,), 31, "fives")
    classroom = loaded["classroom-double-nine"]
    assert (classroom.max_pip, classroom.players, classroom.draw_limit) == (9, (4, 5), None)


# --- the quoted validation errors -----------------------------------------------------

_ERROR_EXAMPLE = re.compile(r"```toml\n(.*?)```\n\n```text\n(.*?)\n```", re.DOTALL)


def error_examples() -> list[tuple[str, str]]:
    """Return (file text, message) pairs from docs/rules.md's "Validation errors"."""
    text = RULES_MD.read_text(encoding="utf-8").split("### Validation errors", 1)[1]
    return _ERROR_EXAMPLE.findall(text)


def test_there_are_error_examples() -> None:
    assert len(error_examples()) >= 10


@pytest.mark.parametrize(
    "document, message",
    [pytest.param(doc, msg, id=doc.strip().splitlines()[-1]) for doc, msg in error_examples()],
)
def test_error_example_gives_the_quoted_message(
    document: str, message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("my-rules.toml").write_text(document, encoding="utf-8")
    with pytest.raises(ArenaError) as caught:
        load_rules("my-rules.toml")
    assert f"{type(caught.value).__name__}: {caught.value}" == message


def test_the_quoted_override_error_is_real() -> None:
    text = RULES_MD.read_text(encoding="utf-8")
    with pytest.raises(ArenaError) as caught:
        find_rules("draw", hand_size=6)
    assert f"RulesError: {caught.value}" in text
