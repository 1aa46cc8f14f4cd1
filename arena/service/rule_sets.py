"""Rule sets anyone can read: the presets and every stored rule set, by name, with each
parameter's meaning (:mod:`arena.engine.rulebook`, as ``arena rules`` prints them) and their
files (TOML and JSON, what ``arena`` reads for custom rules).

A rule set is named by a **reference**: ``NAME`` or ``NAME@VERSION`` (its version hash,
:attr:`arena.engine.rules.Rules.version`). ``NAME`` is the preset of that name, else the
newest stored rule set called so; ``NAME@VERSION`` is exactly that one (a preset with
overrides keeps the preset's name, and two organisers may name different rule sets alike).
The pages, the API, the compares and the competitions' kits read rule sets here.

Rule sets are parameters, nobody's private data: every actor reads them all (the classes
play presets only, so no rule set belongs to a private class).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Literal

import tomli_w

from arena.engine.rulebook import Parameter, end_text, parameters, players_text, rule_document
from arena.engine.rules import PRESETS, Rules, rules_from_record
from arena.errors import NotFound, RulesError
from arena.service.shapes import about
from arena.store.db import Store
from arena.store.rulesets import RuleSetRow, competitions_under, rule_set_rows, rule_sets_named

__all__ = [
    "FileKind",
    "RuleSetSummary",
    "RuleSetView",
    "find_rules",
    "reference_of",
    "rule_file",
    "rule_file_name",
    "rule_set_list",
    "rule_set_view",
]

#: A rule file's format: what ``arena`` reads (docs/rules.md "Custom rule sets").
FileKind = Literal["toml", "json"]

_REFERENCE = re.compile(r"(?P<name>[a-z0-9][a-z0-9_.-]{0,39})(?:@(?P<version>[0-9a-f]{16}))?")


@dataclass(frozen=True, slots=True)
class RuleSetSummary:
    """A rule set as the index lists it."""

    name: str
    reference: str = field(metadata=about("NAME, or NAME@VERSION where others share NAME"))
    version: str = field(metadata=about("the hash of its parameters"))
    preset: bool = field(metadata=about("one of the seven presets, exactly as published"))
    description: str
    players: str = field(metadata=about("the allowed player counts in words, e.g. 2-4"))
    seats: tuple[int, ...] = field(metadata=about("the allowed player counts"))
    end: str = field(metadata=about("what wins a game, e.g. first to 100"))


@dataclass(frozen=True, slots=True)
class RuleSetView:
    """One rule set for its page: each parameter with its value and meaning, the
    competitions played under it, and the other rule sets that share its name."""

    summary: RuleSetSummary
    parameters: tuple[Parameter, ...]
    competitions: tuple[str, ...] = field(metadata=about("played under these rules"))
    others: tuple[str, ...] = field(
        metadata=about("references of the other rule sets called the same")
    )


def _not_found(reference: str) -> NotFound:
    return NotFound(
        f"no rule set called {reference[:60]!r}: a preset ({', '.join(PRESETS)}) or a stored "
        "rule set's NAME or NAME@VERSION, as /rules lists them."
    )


def _rules_of(row: RuleSetRow) -> Rules:
    return rules_from_record(row.name, row.params)


def _resolve(store: Store, reference: str) -> tuple[Rules, RuleSetRow | None]:
    """The rules ``reference`` names and their stored row (None: a preset never stored).

    Raises:
        NotFound: it names none (the message says what does).
    """
    parsed = _REFERENCE.fullmatch(reference.strip())
    if parsed is None:
        raise _not_found(reference)
    name, version = parsed["name"], parsed["version"]
    rows = rule_sets_named(store, name)
    preset = PRESETS.get(name)
    if preset is not None and version in (None, preset.version):
        stored = [row for row in rows if row.version == preset.version]
        return preset, stored[0] if stored else None
    custom = [row for row in rows if version in (None, row.version) and not row.is_preset]
    if not custom:
        raise _not_found(reference)
    try:
        return _rules_of(custom[0]), custom[0]
    except RulesError:  # stored before a rule the engine checks now: no page
        raise _not_found(reference) from None


def find_rules(store: Store, reference: str) -> Rules:
    """The rule set ``reference`` names: a preset, or a stored one (custom ones included).

    Raises:
        NotFound: none is called so, in a sentence naming what is.
    """
    return _resolve(store, reference)[0]


def _reference(rules: Rules, newest: dict[str, str]) -> str:
    """``NAME`` when it names ``rules`` (given the newest version stored under each
    non-preset name), else ``NAME@VERSION``."""
    if rules.name in PRESETS:
        return rules.name if rules.is_preset else f"{rules.name}@{rules.version}"
    if newest.get(rules.name) == rules.version:
        return rules.name
    return f"{rules.name}@{rules.version}"


def _newest(rows: list[RuleSetRow]) -> dict[str, str]:
    """The newest stored custom version under each name (``rows`` the newest first)."""
    newest: dict[str, str] = {}
    for row in rows:
        if not row.is_preset:
            newest.setdefault(row.name, row.version)
    return newest


def reference_of(store: Store, rules: Rules) -> str:
    """The reference that names ``rules`` exactly: ``NAME``, or ``NAME@VERSION`` when
    ``NAME`` names another rule set."""
    return _reference(rules, _newest(rule_sets_named(store, rules.name)))


def _summary(rules: Rules, reference: str) -> RuleSetSummary:
    return RuleSetSummary(
        name=rules.name, reference=reference, version=rules.version, preset=rules.is_preset,
        description=rules.description, players=players_text(rules), seats=rules.players,
        end=end_text(rules),
    )  # fmt: skip


def rule_set_list(store: Store) -> list[RuleSetSummary]:
    """The seven presets (RULES.md's order), then every other stored rule set by name."""
    rows = rule_set_rows(store)
    newest = _newest(rows)
    listed = [_summary(rules, rules.name) for rules in PRESETS.values()]
    for row in rows:
        if row.is_preset:
            continue
        try:
            rules = _rules_of(row)
        except RulesError:
            continue
        listed.append(_summary(rules, _reference(rules, newest)))
    return listed


def rule_set_view(store: Store, reference: str) -> RuleSetView:
    """The rule set ``reference`` names, for its page and the API.

    Raises:
        NotFound: none is called so (the message says what is).
    """
    rules, row = _resolve(store, reference)
    rows = rule_sets_named(store, rules.name)
    newest = _newest(rows)
    others = []
    for other in rows:
        if other.version != rules.version and not other.is_preset:
            try:
                others.append(_reference(_rules_of(other), newest))
            except RulesError:
                continue
    if rules.name in PRESETS and not rules.is_preset:
        others.insert(0, rules.name)  # the preset itself, as published
    return RuleSetView(
        summary=_summary(rules, _reference(rules, newest)),
        parameters=parameters(rules),
        competitions=tuple(competitions_under(store, row.id)) if row is not None else (),
        others=tuple(others),
    )


def rule_file(rules: Rules, kind: FileKind) -> str:
    """``rules`` as a rule file of ``kind``, which ``arena`` (``--rules FILE``,
    :func:`arena.engine.rules.load_rules`) reads back to equal rules."""
    if kind == "toml":
        return tomli_w.dumps(rule_document(rules, toml=True))
    return json.dumps(rule_document(rules), indent=2) + "\n"


def rule_file_name(rules: Rules, kind: FileKind) -> str:
    """The file's name: the rule set's, with the suffix that says how to read it."""
    return f"{rules.name}.{kind}"
