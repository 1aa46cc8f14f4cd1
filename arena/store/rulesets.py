"""Reads of the stored rule sets for their pages: every one, those of one name, one by its
version hash, and the competitions played under one.

Queries live in the store (docs/architecture.md): callers get plain values and frozen
dataclasses, never a session.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import select

from arena.store.db import Store
from arena.store.models import Competition, RuleSet

__all__ = ["RuleSetRow", "competitions_under", "rule_set_rows", "rule_sets_named"]


@dataclass(frozen=True, slots=True)
class RuleSetRow:
    """A stored rule set: its id, name, version hash, parameters, and whether it is a
    preset exactly as published."""

    id: int
    name: str
    version: str
    params: dict[str, Any]
    is_preset: bool


def _row(found: RuleSet) -> RuleSetRow:
    return RuleSetRow(
        id=found.id, name=found.name, version=found.version, params=dict(found.params),
        is_preset=bool(found.is_preset),
    )  # fmt: skip


def rule_set_rows(store: Store) -> list[RuleSetRow]:
    """Every stored rule set, by name, the newest of a name first."""
    with store.read() as session:
        found = session.scalars(select(RuleSet).order_by(RuleSet.name, RuleSet.id.desc()))
        return [_row(r) for r in found]


def rule_sets_named(store: Store, name: str) -> list[RuleSetRow]:
    """The stored rule sets called ``name``, the newest first."""
    with store.read() as session:
        found = session.scalars(
            select(RuleSet).where(RuleSet.name == name).order_by(RuleSet.id.desc())
        )
        return [_row(r) for r in found]


def competitions_under(store: Store, rule_set_id: int) -> list[str]:
    """The names of the competitions played under rule set ``rule_set_id``, the latest
    deadline first."""
    with store.read() as session:
        found = session.scalars(
            select(Competition.name)
            .where(Competition.rule_set_id == rule_set_id)
            .order_by(Competition.deadline.desc(), Competition.id.desc())
        )
        return list(found)
