"""The rules' part of the JSON API (docs/api.md), on the API's blueprint (:mod:`web.api`):
every rule set, and one with its parameters' meanings, its file's document and the URLs of
its files, what the pages ``/rules`` and ``/rules/NAME`` show (docs/web.md, "Rules").

Imported by web.app before the blueprint is registered (its routes join it then).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from flask import url_for
from spectree import Response as Responses

from arena.engine.rulebook import rule_document
from arena.service.rule_sets import (
    RuleSetSummary,
    RuleSetView,
    find_rules,
    rule_set_list,
    rule_set_view,
)
from arena.service.shapes import about, extend
from web.api import ERRORS, ApiError, api, spec
from web.api import caller as _caller
from web.auth import public
from web.extensions import get_store

__all__ = ["RuleSetAnswer", "RuleSetList"]

TAGS = ["rules"]


@dataclass(frozen=True, slots=True)
class RuleSetList:
    rule_sets: list[RuleSetSummary]


@dataclass(frozen=True, slots=True)
class RuleSetAnswer(RuleSetView):
    """A rule set: its page's view, its file's document and the URLs of its files."""

    document: dict[str, Any] = field(
        default_factory=dict, metadata=about("the rule file's document (docs/rules.md)")
    )
    toml: str = field(default="", metadata=about("the URL of its TOML file"))
    json: str = field(default="", metadata=about("the URL of its JSON file"))


@api.get("/rules")
@public
@spec.validate(resp=Responses(HTTP_200=RuleSetList, **ERRORS), tags=TAGS)
def api_rules() -> RuleSetList:
    """Every rule set: the seven presets, then the stored ones (custom ones included), each
    with the reference that names it (``NAME`` or ``NAME@VERSION``)."""
    _caller("read")
    return RuleSetList(rule_sets=rule_set_list(get_store()))


@api.get("/rules/<reference>")
@public
@spec.validate(resp=Responses(HTTP_200=RuleSetAnswer, HTTP_404=ApiError, **ERRORS), tags=TAGS)
def api_rule_set(reference: str) -> RuleSetAnswer:
    """One rule set (``NAME`` or ``NAME@VERSION``): each parameter's value and meaning, the
    competitions under it, its file's document and its files' URLs. 404 with a sentence
    for a name that names none."""
    _caller("read")
    store = get_store()
    view = rule_set_view(store, reference)  # 404: the handler
    ref = view.summary.reference
    return extend(
        view, RuleSetAnswer,
        document=rule_document(find_rules(store, ref)),
        toml=url_for("rules.rule_download", reference=ref, kind="toml"),
        json=url_for("rules.rule_download", reference=ref, kind="json"),
    )  # fmt: skip
