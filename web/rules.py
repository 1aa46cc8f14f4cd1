"""The rules anyone can read (docs/web.md, "Rules"): every rule set, preset or stored
(custom ones a competition or a tournament plays), its parameters with their meanings, and
its file to download as TOML or JSON (what ``arena --rules FILE`` reads).

The pages render :mod:`arena.service.rule_sets`' views; a reference is ``NAME`` or
``NAME@VERSION``. Nobody needs to log in: entrants must read the rules they play.
"""

from __future__ import annotations

from flask import Blueprint, Response, render_template

from arena.service.rule_sets import (
    FileKind,
    find_rules,
    rule_file,
    rule_file_name,
    rule_set_list,
    rule_set_view,
)
from web.auth import public
from web.downloads import disposition
from web.extensions import get_store

__all__ = ["rules"]

rules = Blueprint("rules", __name__)

#: Each file's media type.
MEDIA_TYPES: dict[str, str] = {"toml": "application/toml", "json": "application/json"}


@rules.get("/rules")
@public
def rule_index() -> str:
    """Every rule set: the presets, then the stored ones."""
    return render_template("rules.html", rule_sets=rule_set_list(get_store()))


@rules.get("/rules/<reference>")
@public
def rule_page(reference: str) -> str:
    """One rule set: its parameters with their meanings, its files, its competitions."""
    view = rule_set_view(get_store(), reference)
    return render_template("rule_set.html", r=view, s=view.summary)


@rules.get("/rules/<reference>/download.<any(toml, json):kind>")
@public
def rule_download(reference: str, kind: FileKind) -> Response:
    """The rule set's file (TOML or JSON), named after it."""
    found = find_rules(get_store(), reference)
    response = Response(rule_file(found, kind), mimetype=MEDIA_TYPES[kind])
    response.headers["Content-Disposition"] = disposition(rule_file_name(found, kind))
    return response
