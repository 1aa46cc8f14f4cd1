"""The layers import one way (docs/architecture.md): engine <- match <- compete <- store <-
service <- cli, workers, web.

Each layer is imported whole in a fresh interpreter (so imports made by other tests cannot
leak in), and the test asserts which frameworks and which sibling layers ended up in
``sys.modules``: one interpreter imports the layers lowest first, each on top of those below
it (which it may load anyway), and forks one child per application on top of the service.
A second check reads the source: no module imports another module's private (``_name``)
names.
"""

from __future__ import annotations

import ast
import functools
import json
import re
import subprocess
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

from arena.store.db import Store
from tests.paths import REPO

#: The arena's layers, lowest first: each may import only those before it.
LAYERS = ("engine", "match", "compete", "store", "service", "cli")

#: Third-party frameworks and the layers that may load them (at import time). The engine
#: and the bot runtime load nothing outside the standard library at all (checked apart).
FRAMEWORKS: dict[str, frozenset[str]] = {
    "numpy": frozenset({"compete", "store", "service", "cli", "workers", "web"}),
    "scipy": frozenset({"compete", "store", "service", "cli", "workers", "web"}),
    "sqlalchemy": frozenset({"store", "service", "cli", "workers", "web"}),
    "alembic": frozenset({"store", "service", "cli", "workers", "web"}),
    "psycopg": frozenset({"store", "service", "cli", "workers", "web"}),
    "celery": frozenset({"service", "cli", "workers", "web"}),
    "kombu": frozenset({"service", "cli", "workers", "web"}),
    "redis": frozenset({"service", "cli", "workers", "web"}),
    # Celery's own command line pulls in click, so only the layers below the service are
    # kept free of it; rich is the CLI's alone.
    "click": frozenset({"service", "cli", "workers", "web"}),
    "rich": frozenset({"cli"}),
    "argon2": frozenset({"service", "cli", "workers", "web"}),
    "flask": frozenset({"web"}),
    "flask_wtf": frozenset({"web"}),
    "flask_limiter": frozenset({"web"}),
    "werkzeug": frozenset({"web"}),
    "jinja2": frozenset({"web"}),
}

#: The first-party packages each application may not import.
APPLICATIONS: dict[str, frozenset[str]] = {
    "workers": frozenset({"web", "arena.cli"}),
    "web": frozenset({"workers", "arena.cli"}),
}

# Imports every module of each unit named in argv[1] (JSON: [[unit, fork], ...]) in turn, on
# top of the units before it (fork: in a child process, which the later units do not see),
# then prints {unit: the sorted names of the modules loaded} as JSON.
PROBE = """
import importlib, json, os, pkgutil, sys

def load(name):
    package = importlib.import_module(name)
    for info in pkgutil.walk_packages(package.__path__, prefix=name + "."):
        if ".migrations." in info.name:  # run by Alembic inside its own context
            continue
        importlib.import_module(info.name)
    return sorted(sys.modules)

loaded = {}
for name, fork in json.loads(sys.argv[1]):
    if not fork:
        loaded[name] = load(name)
        continue
    read, write = os.pipe()
    child = os.fork()
    if child == 0:
        os.close(read)
        with os.fdopen(write, "w") as out:
            json.dump(load(name), out)
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as answer:
        text = answer.read()
    _, status = os.waitpid(child, 0)
    if status != 0 or not text:
        sys.exit(f"importing {name} failed")
    loaded[name] = json.loads(text)
print(json.dumps(loaded))
"""

FIRST_PARTY = ("arena", "bots", "workers", "web")


@functools.cache
def parse(text: str, filename: str) -> ast.Module:
    """``text``'s syntax tree, parsed once for every check that reads it (the checks walk
    the trees and change nothing)."""
    return ast.parse(text, filename=filename)


def mentions(text: str, words: Iterable[str]) -> bool:
    """Whether ``text`` has one of ``words`` as a whole word: a check that looks for a name
    (a call, an import) parses only the files that can have it, as a name is spelled out
    in the source (parsing every file is most of a check's time: a second each)."""
    pattern = "|".join(re.escape(word) for word in sorted(words))
    return re.search(rf"\b(?:{pattern})\b", text) is not None


def loaded_by(units: list[tuple[str, bool]]) -> dict[str, set[str]]:
    """The modules a fresh interpreter has loaded after importing each of ``units`` whole
    (name, fork), in turn, each on top of those before it that were not forked (PROBE)."""
    result = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(units)],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
        cwd=REPO,
    )
    assert result.returncode == 0, f"importing {units} failed:\n{result.stderr}"
    return {unit: set(modules) for unit, modules in json.loads(result.stdout).items()}


def loaded_by_layer() -> dict[str, set[str]]:
    """The modules loaded by each layer of arena and each application, imported whole: the
    layers lowest first in one interpreter, each on top of those below it (which it may
    load anyway), and each application (the CLI too) in a child forked from it after the
    service (an application does not see another)."""
    units = [(unit_of(layer), False) for layer in LAYERS if layer != "cli"]
    units += [(unit_of(application), True) for application in ("cli", *APPLICATIONS)]
    return loaded_by(units)


def third_party(modules: set[str]) -> set[str]:
    """The top-level names of ``modules`` that are neither the standard library nor ours."""
    tops = {name.partition(".")[0] for name in modules}
    return {
        top
        for top in tops
        if top not in sys.stdlib_module_names
        and top not in FIRST_PARTY
        and not top.startswith("_")  # interpreter and extension internals
        and top != "cython_runtime"
    }


def unit_of(layer: str) -> str:
    return f"arena.{layer}" if layer in LAYERS else layer


def layer_offences(layer: str, modules: set[str]) -> list[str]:
    """What ``layer`` loaded (``modules``) that it may not: a layer above it, an
    application it may not import, a framework it may not use."""
    offences: list[str] = []
    if layer in LAYERS:
        above = LAYERS[LAYERS.index(layer) + 1 :]
        for other in [*above, "workers", "web"]:
            name = unit_of(other)
            if any(m == name or m.startswith(name + ".") for m in modules):
                offences.append(f"imports the layer above it: {name}")
    for package in sorted(APPLICATIONS.get(layer, ())):
        if any(m == package or m.startswith(package + ".") for m in modules):
            offences.append(f"imports {package}")
    loaded = third_party(modules)
    if layer in ("engine", "match"):
        offences += [f"imports a third-party package: {top}" for top in sorted(loaded)]
    for framework, allowed in FRAMEWORKS.items():
        if framework in loaded and layer not in allowed:
            offences.append(f"imports {framework}")
    return offences


def test_each_layer_imports_only_what_is_below_it() -> None:
    """Importing a layer whole loads no layer above it and no framework it may not use
    (every layer and application, one interpreter for all: :func:`loaded_by_layer`; an
    offence is named at the lowest layer that has it, not again at those on top of it)."""
    loaded = loaded_by_layer()
    offences: list[str] = []
    named: set[str] = set()  # the offences of the layers below the service's applications
    for layer in [*LAYERS, *APPLICATIONS]:
        found = layer_offences(layer, loaded[unit_of(layer)])
        offences += [f"{unit_of(layer)} {offence}" for offence in found if offence not in named]
        if layer in LAYERS[:-1]:
            named.update(found)
    assert not offences, "\n".join(offences)


def test_every_arena_module_belongs_to_a_layer() -> None:
    """A module at arena/'s root is one of the few shared by every layer."""
    root = {p.name for p in (REPO / "arena").iterdir() if not p.name.startswith((".", "__py"))}
    assert root == {"__init__.py", "__main__.py", "errors.py", *LAYERS}


def test_the_root_package_loads_only_the_engine() -> None:
    """``import arena`` (the public API) costs the engine and the standard library only."""
    modules = loaded_by([("arena.engine", False)])["arena.engine"]
    arena_modules = {m for m in modules if m.startswith("arena.")}
    assert all(m.startswith(("arena.engine", "arena.errors")) for m in arena_modules)


def test_botkit_is_self_contained() -> None:
    """botkit is copied alone into a bot's sandbox: it imports only the standard library."""
    tree = ast.parse((REPO / "arena" / "match" / "botkit.py").read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, "botkit uses a relative import"
            names = [node.module or ""]
        else:
            continue
        for name in names:
            top = name.partition(".")[0]
            assert top in sys.stdlib_module_names or top == "__future__", name


def private_imports(path: Path) -> list[str]:
    """``from first_party import _name`` and ``module._name`` on an imported first-party
    module, in one file: the lines that reach into another module's privates."""
    tree = parse(path.read_text(), str(path))
    modules: set[str] = set()  # local names bound to first-party modules
    found: list[str] = []
    reached: list[ast.Attribute] = []  # name._private, kept until every import is known
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(FIRST_PARTY):
            for alias in node.names:
                if alias.name.startswith("_") and not alias.name.startswith("__"):
                    found.append(f"{path}:{node.lineno}: from {node.module} import {alias.name}")
                else:
                    modules.add(alias.asname or alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith(FIRST_PARTY) and alias.asname:
                    modules.add(alias.asname)
        elif (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
        ):
            reached.append(node)
    found += [
        f"{path}:{node.lineno}: {node.value.id}.{node.attr}"
        for node in reached
        if isinstance(node.value, ast.Name) and node.value.id in modules
    ]
    return found


def test_no_module_imports_another_modules_private_names() -> None:
    """What two modules share is public in one of them (tests may still look inside)."""
    offences: list[str] = []
    for folder in ("arena", "workers", "web", "bots", "benchmarks"):
        for path in sorted((REPO / folder).rglob("*.py")):
            offences += private_imports(path)
    assert not offences, "private names imported across modules:\n" + "\n".join(offences)


def documented_tree() -> set[str]:
    """The paths docs/architecture.md's tree names (its second code block), relative to the
    repository: ``arena/engine/tiles.py``, ``arena/store/migrations/``, ..."""
    text = (REPO / "docs" / "architecture.md").read_text()
    block = text.split("## The tree", 1)[1].split("```", 2)[1]
    paths: set[str] = set()
    stack: list[str] = []
    for line in block.splitlines():
        if not line.strip():
            continue
        depth = (len(line) - len(line.lstrip())) // 2
        name = line.split()[0]
        del stack[depth:]
        paths.add("".join(stack) + name)
        if name.endswith("/"):
            stack.append(name)
    return paths


def test_the_documented_tree_is_the_tree_on_disk() -> None:
    """docs/architecture.md lists every module of arena/, and nothing that is not there
    (``__init__.py`` files may be left out; Alembic's folder is listed whole)."""
    documented = documented_tree()
    on_disk = {"arena/"}
    for path in (REPO / "arena").rglob("*"):
        relative = path.relative_to(REPO)
        if "__pycache__" in relative.parts or "migrations" in relative.parts[:-1]:
            continue
        if path.is_dir():
            on_disk.add(f"{relative}/")
        elif path.suffix == ".py":
            on_disk.add(str(relative))
    missing = {p for p in on_disk - documented if not p.endswith("__init__.py")}
    assert not missing, f"modules missing from docs/architecture.md: {sorted(missing)}"
    assert not documented - on_disk, f"documented but absent: {sorted(documented - on_disk)}"


#: Frameworks and the folders whose source may import them (docs/architecture.md): queries
#: live in the store, the broker's client in the service and the workers.
SOURCE_IMPORTS: dict[str, tuple[str, ...]] = {
    "sqlalchemy": ("arena/store",),
    "alembic": ("arena/store",),
    "psycopg": ("arena/store",),
    "kombu": ("arena/service", "workers"),
    "celery": ("arena/service", "workers"),
}

#: The folders and files held to SOURCE_IMPORTS: the whole arena (issue 19 moved every query
#: of the service, the CLI, the web and the workers into the store), the applications and the
#: reference bots. The benchmarks and the tests may seed a database with SQL of their own.
SOURCE_CHECKED = (
    "arena/engine",
    "arena/match",
    "arena/compete",
    "arena/store",
    "arena/service",
    "arena/cli",
    "web",
    "workers",
    "bots",
)


def imported_tops(path: Path) -> set[str]:
    """The top-level names of every package the file imports (at any depth in it)."""
    tree = parse(path.read_text(), str(path))
    tops: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            tops.update(alias.name.partition(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            tops.add(node.module.partition(".")[0])
    return tops


@pytest.mark.parametrize("checked", SOURCE_CHECKED)
def test_frameworks_are_imported_only_where_the_architecture_says(checked: str) -> None:
    """No module outside ``arena/store`` imports SQLAlchemy, and none outside the service
    and the workers imports Celery or kombu, even lazily inside a function (``checked``: a
    folder, every module under it, or one module)."""
    root = REPO / checked
    assert root.exists(), f"{checked} is not in the repository"
    offences = []
    for path in [root] if root.is_file() else sorted(root.rglob("*.py")):
        if not mentions(path.read_text(), SOURCE_IMPORTS):
            continue
        relative = path.relative_to(REPO).as_posix()
        for top in sorted(imported_tops(path) & SOURCE_IMPORTS.keys()):
            if not relative.startswith(SOURCE_IMPORTS[top]):
                offences.append(f"{relative} imports {top}")
    assert not offences, "\n".join(offences)


# --- inside the service: no cycle, one send --------------------------------------------------

SERVICE = REPO / "arena" / "service"


def service_imports(path: Path) -> list[tuple[str, int, bool]]:
    """The modules of the service ``path`` imports: (name, line, whether inside a function).
    ``from arena.service import broker`` names ``broker``; imports under ``TYPE_CHECKING``
    count (a cycle of types is a cycle of design)."""
    tree = parse(path.read_text(), str(path))
    found: list[tuple[str, int, bool]] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inside = in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef)
            names: list[str] = []
            if isinstance(child, ast.Import):
                names = [alias.name for alias in child.names]
            elif isinstance(child, ast.ImportFrom) and child.level == 0 and child.module:
                names = [child.module, *(f"{child.module}.{a.name}" for a in child.names)]
            modules = {
                parts[2]
                for parts in (name.split(".") for name in names)
                if parts[:2] == ["arena", "service"] and len(parts) > 2
            }
            for module in sorted(modules):
                if (SERVICE / f"{module}.py").exists():
                    found.append((module, getattr(child, "lineno", 0), inside))
            visit(child, inside)

    visit(tree, False)
    return found


def service_graph() -> dict[str, set[str]]:
    """Each module of the service and the modules of the service it imports at module
    level."""
    return {
        path.stem: {name for name, _, inside in service_imports(path) if not inside} - {path.stem}
        for path in sorted(SERVICE.glob("*.py"))
    }


def a_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` as the path that closes it (``a -> b -> a``), or None."""
    state: dict[str, int] = {}  # 1: on the path, 2: done
    path: list[str] = []

    def walk(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for target in sorted(graph.get(node, ())):
            if state.get(target) == 1:
                return [*path[path.index(target) :], target]
            if target not in state and (found := walk(target)) is not None:
                return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := walk(node)) is not None:
            return found
    return None


def test_a_cycle_is_found() -> None:
    """The cycle finder finds what it is for (so the test below can fail)."""
    assert a_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert a_cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None


def test_the_service_imports_no_module_in_a_circle() -> None:
    """No module of the service imports, by way of others, itself (docs/architecture.md):
    what two modules both need lives below both of them."""
    cycle = a_cycle(service_graph())
    assert cycle is None, "an import cycle inside arena/service: " + " -> ".join(cycle or ())


def test_no_service_module_imports_the_service_inside_a_function() -> None:
    """Imports of the service sit at the top of a module: one inside a function is only
    ever there to hide a cycle."""
    offences = [
        f"arena/service/{path.name}:{line}: imports arena.service.{name} in a function"
        for path in sorted(SERVICE.glob("*.py"))
        for name, line, inside in service_imports(path)
        if inside
    ]
    assert not offences, "\n".join(offences)


def test_dispatch_is_a_leaf_of_the_service() -> None:
    """Every send goes through arena.service.dispatch, which imports no module of the
    service but the broker's (so every module may send through it)."""
    assert service_graph()["dispatch"] <= {"broker"}


#: The calls that put a message on the broker: Celery's, and the broker module's senders.
SENDS = frozenset({
    "send_task", "send_matches", "send_uploads", "send_branches", "send_table",
    "send_compare_start",
})  # fmt: skip
#: The one send outside dispatch, and why: ``arena compare --remote``'s start goes before the
#: command loads the store, which dispatch imports (docs/architecture.md, "One send").
SENDS_ELSEWHERE = {SERVICE / "compare_start.py"}


def sends(path: Path) -> list[str]:
    """The lines of ``path`` that call one of :data:`SENDS`."""
    text = path.read_text()
    if not mentions(text, SENDS):
        return []
    tree = parse(text, str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name in SENDS:
                found.append(f"{path.relative_to(REPO)}:{node.lineno}: {name}")
    return found


def test_every_send_goes_through_dispatch() -> None:
    """Only arena/service/dispatch.py sends (and arena/service/broker.py, whose senders it
    calls): the web, the CLI, the workers and the rest of the service ask it."""
    offences = [
        line
        for folder in ("arena", "web", "workers")
        for path in sorted((REPO / folder).rglob("*.py"))
        if path not in (SERVICE / "dispatch.py", SERVICE / "broker.py", *SENDS_ELSEWHERE)
        for line in sends(path)
    ]
    assert not offences, "sends outside arena.service.dispatch:\n" + "\n".join(offences)


# --- the applications: every write the service's, the web's reads the service's --------------

STORE = REPO / "arena" / "store"
#: ``arena.store`` as an import spells it (the dots may have spaces around them).
NAMES_THE_STORE = re.compile(r"\barena\s*\.\s*store\b")


def opens_a_write(node: ast.AST) -> bool:
    """Whether ``node`` is ``something.write()``: a write session of the store opened."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "write"
        and not node.args
        and not node.keywords
    )


def called_names(function: ast.AST) -> set[str]:
    """The names ``function`` calls: ``f(...)`` and ``anything.f(...)`` both name ``f``."""
    names = set()
    for node in ast.walk(function):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            names.add(name)
    return names


def store_writes(sources: Mapping[str, str]) -> frozenset[str]:
    """The public functions and ``Store`` methods of the store (``sources``: a module's name
    and its text) that write: they open a write session, or call, by name, one that does."""
    functions: dict[str, list[ast.AST]] = {}
    for name, text in sources.items():
        tree = parse(text, name)
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                functions.setdefault(node.name, []).append(node)
    writes = {
        name
        for name, nodes in functions.items()
        if any(opens_a_write(n) for node in nodes for n in ast.walk(node))
    }
    while True:  # what calls a write writes
        more = {
            name
            for name, nodes in functions.items()
            if name not in writes and any(called_names(node) & writes for node in nodes)
        }
        if not more:
            return frozenset(name for name in writes if not name.startswith("_"))
        writes |= more


def the_stores_sources() -> dict[str, str]:
    return {
        str(path.relative_to(REPO)): path.read_text()
        for path in sorted(STORE.glob("*.py"))  # Alembic's versions are the migration's own
    }


def writes_outside_the_service(path: str, text: str, writes: frozenset[str]) -> list[str]:
    """The lines of one module of an application that write through the store, not the
    service: a write session opened, a write function of the store imported or called on an
    imported module of the store, or one of ``Store``'s writing methods called."""
    if not NAMES_THE_STORE.search(text) and not mentions(text, {"write", *writes}):
        return []  # (an import of the store names it, a call names what it calls)
    tree = parse(text, path)
    store_modules: set[str] = set()  # local names bound to modules of arena.store
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("arena.store"):
            for alias in node.names:
                if alias.name in writes:
                    found.append(f"{path}:{node.lineno}: imports {node.module}.{alias.name}")
                elif node.module == "arena.store":
                    store_modules.add(alias.asname or alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("arena.store."):
                    store_modules.add(alias.asname or alias.name)
    store_methods = {  # Store's own writes, called on any name that holds a Store
        name for name in writes if hasattr(Store, name) and callable(getattr(Store, name))
    }
    for node in ast.walk(tree):
        if opens_a_write(node):
            found.append(f"{path}:{getattr(node, 'lineno', 0)}: opens a write session")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            owner, name = ast.unparse(node.func.value), node.func.attr
            if name in writes and (owner in store_modules or name in store_methods):
                found.append(f"{path}:{node.lineno}: calls the store's {owner}.{name}")
    return found


def test_a_write_outside_the_service_is_found() -> None:
    """The checks below can fail: a store function that writes (directly or through another)
    is found, and so is an application calling one."""
    store = {
        "db.py": "class Store:\n    def add_user(self, name):\n"
        "        with self.write() as session:\n            pass\n",
        "queue.py": "def _void(store):\n    with store.write() as s:\n        pass\n"
        "def void_pending(store):\n    _void(store)\n"
        "def progress(store):\n    with store.read() as s:\n        pass\n",
    }
    writes = store_writes(store)
    assert writes == {"add_user", "void_pending"}
    command = (
        "from arena.store.queue import void_pending, progress\n"
        "from arena.store import queue\n"
        "progress(store)\nqueue.void_pending(store)\nstore.add_user('x')\n"
        "with store.write() as session:\n    pass\n"
    )
    assert writes_outside_the_service("cli.py", command, writes) == [
        "cli.py:1: imports arena.store.queue.void_pending",
        "cli.py:4: calls the store's queue.void_pending",
        "cli.py:5: calls the store's store.add_user",
        "cli.py:6: opens a write session",
    ]


def test_the_applications_write_through_the_service_only() -> None:
    """The command line, the web and the workers write nothing through the store: every
    write is a service action (docs/architecture.md, "Every write and every permission is
    the service's"); migrating the schema (``arena.store.db.upgrade``) is the store's own."""
    writes = store_writes(the_stores_sources())
    assert {"void_pending", "add_bot_version", "mark_queued", "insert_upload"} <= writes
    offences = [
        line
        for folder in ("arena/cli", "web", "workers")
        for path in sorted((REPO / folder).rglob("*.py"))
        for line in writes_outside_the_service(
            str(path.relative_to(REPO)), path.read_text(), writes
        )
    ]
    assert not offences, "writes outside the service:\n" + "\n".join(offences)


def store_imports(path: str, text: str) -> list[str]:
    """What one module of the web imports of the store that is neither the connection
    (``arena.store.db``: the Store, its health, its errors) nor a row type (a CapWords name,
    which the API's answers may hold): a read, which the service does for it."""
    found: list[str] = []
    if not NAMES_THE_STORE.search(text):
        return found
    for node in ast.walk(parse(text, path)):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("arena.store"):
            if node.module == "arena.store.db":
                continue
            for alias in node.names:
                if not alias.name[:1].isupper() or alias.name.isupper():
                    found.append(f"{path}:{node.lineno}: {node.module}.{alias.name}")
        elif isinstance(node, ast.Import):
            found += [
                f"{path}:{node.lineno}: {alias.name}"
                for alias in node.names
                if alias.name.startswith("arena.store")
            ]
    return found


def test_a_read_of_the_store_is_found() -> None:
    text = (
        "from arena.store.db import DATABASE_ERRORS, Store, ping\n"
        "from arena.store.games import MatchRow, game_list\n"
        "import arena.store.bots\n"
    )
    assert store_imports("web/x.py", text) == [
        "web/x.py:2: arena.store.games.game_list",
        "web/x.py:3: arena.store.bots",
    ]


def test_the_web_reads_through_the_service_only() -> None:
    """The web's pages and API read the database through the service's functions (and
    render what they get): of the store they import only the connection and row types."""
    offences = [
        line
        for path in sorted((REPO / "web").rglob("*.py"))
        for line in store_imports(str(path.relative_to(REPO)), path.read_text())
    ]
    assert not offences, "the web reads the store itself:\n" + "\n".join(offences)
