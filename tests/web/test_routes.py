"""Every route goes through the permission module, and web/ has no import circle.

Each route declares its action (``web.auth.public`` or ``web.auth.guarded``): the test lists
the app's URL map and checks every endpoint is declared with an action of
:mod:`arena.service.permissions`, and every write (POST, PUT, PATCH, DELETE) with one that
is not a public read. The import graph of web/'s modules, read from their source (imports
inside functions too), must have no cycle.
"""

from __future__ import annotations

import ast
import importlib
from collections.abc import Iterator
from pathlib import Path

import pytest
from flask import Flask

from arena.service.permissions import ACTIONS
from tests.paths import REPO
from web import create_app
from web.auth import ACTION_ATTRIBUTE

WEB = REPO / "web"
#: Endpoints that are not ours: Flask's static files, spectree's OpenAPI document.
FOREIGN = {"static", "openapi_api/spec"}
WRITES = {"POST", "PUT", "PATCH", "DELETE"}


@pytest.fixture(scope="module")
def app() -> Iterator[Flask]:
    app = create_app("sqlite:///:memory:")
    yield app
    app.extensions["arena_store"].close()


def test_every_route_declares_an_action_of_the_permission_module(app: Flask) -> None:
    undeclared, unknown, unguarded = [], [], []
    for rule in app.url_map.iter_rules():
        if rule.endpoint in FOREIGN:
            continue
        action = getattr(app.view_functions[rule.endpoint], ACTION_ATTRIBUTE, None)
        if action is None:
            undeclared.append(rule.rule)
        elif action not in ACTIONS:
            unknown.append(f"{rule.rule}: {action}")
        elif (rule.methods or set()) & WRITES and action == "read-public":
            unguarded.append(rule.rule)
    assert not undeclared, f"routes declaring no action: {undeclared}"
    assert not unknown, f"actions not in arena.service.permissions: {unknown}"
    assert not unguarded, f"writes declared as public reads: {unguarded}"


def test_the_writes_are_the_expected_actions(app: Flask) -> None:
    """A route's action names what it does (so a new write is a deliberate entry)."""
    writes = {
        rule.rule: getattr(app.view_functions[rule.endpoint], ACTION_ATTRIBUTE)
        for rule in app.url_map.iter_rules()
        if (rule.methods or set()) & WRITES
    }
    assert writes == {
        "/login": "log-in",
        "/signup": "sign-up",
        "/logout": "log-out",
        "/account/password": "change-password",
        "/account/tokens": "manage-tokens",
        "/account/tokens/<int:token_id>/revoke": "manage-tokens",
        "/api/v1/bots": "upload",
        "/api/v1/tournaments": "create-tournament",
        "/api/v1/tournaments/<name>/cancel": "cancel-tournament",
        "/api/v1/compares": "start-compare",
        "/api/v1/competitions": "create-competition",
        "/api/v1/competitions/<name>/entries": "enter-competition",
        "/api/v1/competitions/<name>/final-choice": "enter-competition",
        "/api/v1/competitions/<name>/close": "manage-competition",
        "/api/v1/competitions/<name>/deadline": "manage-competition",
        "/api/v1/competitions/<name>/disqualify": "manage-competition",
        "/api/v1/competitions/<name>/final/rerun": "manage-competition",
        "/api/v1/competitions/<name>/announcements": "manage-competition",
        "/api/v1/competitions/<name>/settings": "manage-competition",
        "/api/v1/competitions/<name>/<any(pause, resume):act>": "manage-competition",
        "/api/v1/competitions/<name>/withdraw": "enter-competition",
        "/api/v1/classes/<class_name>/assignments": "manage-class",
        "/api/v1/classes/<class_name>/assignments/<name>/submissions": "upload",
        "/api/v1/classes": "create-class",
        "/api/v1/join/<code>": "join-class",
        "/api/v1/classes/<name>/roster": "manage-class",
        "/api/v1/classes/<name>/roster/preview": "manage-class",
        "/api/v1/classes/<name>/join-code": "manage-class",
        "/api/v1/classes/<name>/teachers": "manage-class",
        "/api/v1/classes/<name>/privacy": "manage-class",
        "/api/v1/classes/<name>/students/<student>/password": "manage-class",
        "/api/v1/classes/<name>/tournaments": "manage-class",
        "/api/v1/role-requests": "request-role",
        "/api/v1/role-requests/<name>": "manage-users",
        "/upload": "upload",
        "/bots/<owner>/<name>/visibility": "change-visibility",
        "/tournaments/new": "create-tournament",
        "/tournaments/<name>/cancel": "cancel-tournament",
        "/compares/new": "start-compare",
        "/games/<int:match_id>/<int:index>/branch": "start-branch",
        "/admin/users/<name>/role": "manage-users",
        "/competitions/new": "create-competition",
        "/competitions/<name>/enter": "enter-competition",
        "/competitions/<name>/final-choice": "enter-competition",
        "/competitions/<name>/deadline": "manage-competition",
        "/competitions/<name>/disqualify": "manage-competition",
        "/competitions/<name>/close": "manage-competition",
        "/competitions/<name>/rerun": "manage-competition",
        "/competitions/<name>/settings": "manage-competition",
        "/competitions/<name>/<any(pause, resume):act>": "manage-competition",
        "/competitions/<name>/announcements": "manage-competition",
        "/competitions/<name>/withdraw": "enter-competition",
        "/classes/new": "create-class",
        "/classes/<name>/join-code": "manage-class",
        "/classes/<name>/roster": "manage-class",
        "/classes/<name>/login": "change-password",
        "/classes/<name>/logins.csv": "manage-class",
        "/classes/<name>/students/<student>/password": "manage-class",
        "/classes/<name>/teachers": "manage-class",
        "/classes/<name>/privacy": "manage-class",
        "/classes/<name>/tournament": "manage-class",
        "/classes/<name>/assignments/new": "manage-class",
        "/classes/<name>/assignments/<assignment>/submit": "upload",
        "/join/<code>": "sign-up",
        "/account/teacher-request": "change-password",
        "/admin/users/<name>/request": "manage-users",
        "/tables/new": "play-table",
        "/tables/<int:table_id>/move": "play-table",
        "/tables/<int:table_id>/join/<code>": "play-table",
        "/api/v1/tables": "play-table",
        "/api/v1/tables/<int:table_id>/join": "play-table",
        "/api/v1/tables/<int:table_id>/moves": "play-table",
    }


def _imports(path: Path) -> set[str]:
    """The web modules ``path`` imports, anywhere in it (``web.x`` names)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        found |= {name for name in names if (WEB / f"{name[4:]}.py").is_file()}
    return {name for name in found if name.startswith("web.")}


def _graph() -> dict[str, set[str]]:
    return {
        f"web.{path.stem}": _imports(path) - {f"web.{path.stem}"}
        for path in sorted(WEB.glob("*.py"))
        if path.stem != "__init__"  # the package imports web.app: that is no cycle
    }


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """A cycle of ``graph`` (its modules in order), or None."""
    state: dict[str, int] = {}  # 1: on the path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_the_web_modules_import_each_other_without_a_cycle() -> None:
    graph = _graph()
    assert "web.app" in graph and graph["web.app"] >= {"web.api", "web.pages", "web.extensions"}
    assert _cycle(graph) is None, " -> ".join(_cycle(graph) or [])
    importers = sorted(name for name, imported in graph.items() if "web.app" in imported)
    assert importers == [], f"web.app is imported by {importers}: import web.extensions"


def test_the_cycle_finder_finds_one() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


@pytest.mark.parametrize("module", sorted(_graph()))
def test_each_web_module_imports_on_its_own(module: str) -> None:
    assert importlib.import_module(module).__name__ == module
