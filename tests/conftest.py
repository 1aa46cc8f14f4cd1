"""Fixtures every test folder shares: databases on both backends (SQLite in a temporary
file, PostgreSQL on a throwaway server started once per test process).

Setup is paid once per test process, not once per test. Each test still gets a database of
its own, to write as it likes, but as a copy of a template:

- the schema is migrated once per backend into a template (a SQLite file; a PostgreSQL
  database), and every ``url`` is a copy of it (a file copy; ``CREATE DATABASE ... TEMPLATE``);
  a PostgreSQL template is built once per test process (its server is the process's own), a
  SQLite one once per run (the first process to need it builds it, the others copy it);
- a test (or a module, with ``pytestmark``) marked ``@pytest.mark.seed(build=build)`` starts
  from a template that ``build(store, directory)`` filled once, on top of the migrated one
  (stored bots, a played round robin); the ``seeded`` fixture is what ``build`` returned.
  ``build`` must be a module-level function (it keys the template); ids and contents are
  the same in every copy, timestamps are those of the build;
- a test marked ``@pytest.mark.empty_database`` gets an empty, unmigrated database instead
  (the migration tests).

On PostgreSQL a copy costs a ``CREATE DATABASE`` and a ``DROP DATABASE`` (a tenth of a second
each, more under load), paid off the tests' time: a thread of the test process creates the
next copy of a template while a test runs on the current one, and drops a test's database
after it; the server's session fixture waits for that thread before it stops the server.

A test's database is SQLite unless the test (or its module, with ``pytestmark``) is marked
``@pytest.mark.backends("sqlite", "postgresql")``: then it runs once on each. That is for the
tests where SQL can differ between the two (the store, migrations, claims and leases, locking,
what PostgreSQL refuses and SQLite takes); the rest of the store's callers run on SQLite.

``ARENA_TEST_FULL=1`` (``./run test --full``) runs the soak tests' full counts (:func:`soak`).
"""

from __future__ import annotations

import contextlib
import copy
import fcntl
import fnmatch
import itertools
import json
import multiprocessing
import multiprocessing.context
import multiprocessing.forkserver
import os
import pickle
import shutil
import sqlite3
import sys
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from _pytest.assertion import rewrite
from flask import Flask
from jinja2.bccache import Bucket, BytecodeCache
from sqlalchemy import Engine, event, text
from sqlalchemy.util import LRUCache
from werkzeug.routing import Rule

from arena.store import db
from arena.store.db import Store, connect, upgrade
from tests.servers import running_postgres, running_redis

# The web app's session key in tests (else it would keep one in the clone's instance
# folder); tests/web/test_auth.py checks the generated one apart.
os.environ.setdefault("ARENA_SECRET_KEY", "a key for the tests only")

#: The database backends a test marked ``backends`` may ask for; unmarked: the first.
BACKENDS = ["sqlite", "postgresql"]

#: ``ARENA_TEST_FULL=1`` (``./run test --full``): the soak tests play their full counts.
FULL = os.environ.get("ARENA_TEST_FULL", "") not in ("", "0")


def soak(trimmed: int, full: int) -> int:
    """How many rounds a soak test makes: ``trimmed`` in the default run, ``full`` with
    ``ARENA_TEST_FULL=1`` (``./run test --full``)."""
    return full if FULL else trimmed


class _SharedBytecode(BytecodeCache):
    """Jinja's compiled templates kept in memory for every app of the test process."""

    def __init__(self) -> None:
        self.codes: dict[str, bytes] = {}

    def load_bytecode(self, bucket: Bucket) -> None:
        if bucket.key in self.codes:
            bucket.bytecode_from_string(self.codes[bucket.key])

    def dump_bytecode(self, bucket: Bucket) -> None:
        self.codes[bucket.key] = bucket.bytecode_to_string()


def _share_compiled_app_parts() -> None:
    """Tests make an app each (about 560 web tests), and each app compiled its ~400 routes'
    URL builders (werkzeug: an ``ast`` and a ``compile`` each, three quarters of
    ``create_app``'s 0.36 s) and every template it rendered, the same as the last app's.
    The test process compiles each once: Flask's documented ``jinja_options`` take a shared
    bytecode cache, and werkzeug's builder, a function of the rule's parts, its defaults and
    ``append_unknown`` only, is kept per those (the apps behave as before: the same
    functions, made once)."""
    Flask.jinja_options = {**Flask.jinja_options, "bytecode_cache": _SharedBytecode()}
    compile_builder = Rule._compile_builder
    builders: dict[tuple[object, ...], Callable[..., tuple[str, str]]] = {}

    def remembered(rule: Rule, append_unknown: bool = True) -> Callable[..., tuple[str, str]]:
        defaults = rule.defaults or {}
        key = (
            tuple(rule._trace),
            tuple(sorted((name, repr(value)) for name, value in defaults.items())),
            tuple(
                (name, type(rule._converters[name]), rule._converters[name].to_url(value))
                for name, value in sorted(defaults.items())
                if name in rule._converters
            ),
            append_unknown,
        )
        if key not in builders:
            builders[key] = compile_builder(rule, append_unknown)
        return builders[key]

    Rule._compile_builder = remembered  # type: ignore[method-assign,assignment]

    # Each app also parsed the text of its ~180 routes into werkzeug's regular-expression
    # parts (``Rule.compile``: two thirds of the 25 ms an app costs once its builders are
    # shared), the same as the last app's. The parts, the trace and the converters depend
    # only on the rule's text, its domain part, ``merge_slashes`` and the map's converter
    # classes (the key here), so a rule compiled again takes them from the first
    # (converters hold no state of their map).
    parsed: dict[tuple[object, ...], tuple[list[Any], list[Any], dict[str, Any], set[str]]] = {}
    compile_rule = Rule.compile

    def compile(rule: Rule) -> None:
        assert rule.map is not None, "rule not bound"
        domain = (rule.host if rule.map.host_matching else rule.subdomain) or ""
        converters = tuple(sorted(rule.map.converters.items()))
        key = (type(rule), rule.rule, domain, rule.merge_slashes, converters)
        if key not in parsed:
            arguments = set(rule.arguments)
            compile_rule(rule)
            added = rule.arguments - arguments
            parsed[key] = (rule._parts, rule._trace, rule._converters, added)
            return
        parts, trace, found, added = parsed[key]
        rule._parts, rule._trace, rule._converters = list(parts), list(trace), dict(found)
        rule.arguments.update(added)
        rule._build = rule._compile_builder(False).__get__(rule, None)
        rule._build_unknown = rule._compile_builder(True).__get__(rule, None)

    Rule.compile = compile  # type: ignore[method-assign,assignment]


_share_compiled_app_parts()


def _share_compiled_statements() -> None:
    """Tests open a store each (``connect(url)``: a new engine on the test's own database),
    and each engine compiled every statement it ran again, the same as the last test's
    (SQLAlchemy keeps compiled statements in a cache of the engine's, keyed by the
    engine's dialect). The test process compiles each once: an engine is given the dialect
    and the cache of the first engine of its kind (its driver, on the same server) that has
    connected (so its dialect is initialised: the server's version read); its own dialect
    only initialises its first connection, as before. The statements, the SQL sent and the
    connections are the engine's as before; only their compiling is shared."""
    make_engine = db.make_engine
    #: (driver, host, port) -> an engine that has connected (its dialect initialised)
    kinds: dict[tuple[str, str | None, int | None], Engine] = {}

    def shared(url: str | None = None) -> Engine:
        engine = make_engine(url)
        kind = (engine.url.drivername, engine.url.host, engine.url.port)
        first = kinds.get(kind)
        if first is not None:
            engine.dialect = first.dialect
            engine.pool._dialect = first.dialect
            engine._compiled_cache = first._compiled_cache
            return engine
        # (500 by default: every test's statements; set before the engine is returned, as a
        # store's reader, made from it at once, keeps the engine's cache of that moment)
        engine._compiled_cache = LRUCache(5000)

        def connected(*_: object) -> None:
            # after the engine's own first_connect: its dialect is initialised
            kinds.setdefault(kind, engine)

        event.listen(engine, "first_connect", connected)
        return engine

    db.make_engine = shared


_share_compiled_statements()


#: What ``@pytest.mark.seed(build=build)`` runs once on a migrated template database: it stores
#: what the tests start from and returns a value for the ``seeded`` fixture.
Seed = Callable[[Store, Path], object]

_SEEDED = pytest.StashKey[object]()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--count-assertions",
        nargs="?",
        const="",
        default=None,
        metavar="JSON",
        help="count the assert statements that pass in the tests and print the total at the "
        "end (with -o enable_assertion_pass_hook=true); JSON: also write each test's count "
        "there",
    )
    parser.addoption(
        "--store-durations",
        action="store_true",
        help="write each test's wall seconds (a second or more) to tests/durations.json, "
        "which orders the next runs longest first; run the whole suite, on a quiet machine",
    )
    parser.addoption(
        "--cpu-durations",
        type=int,
        default=None,
        metavar="N",
        help="print the N tests that took the most CPU seconds (the test process's and the "
        "processes it started and reaped: workers, servers, bots), setup and teardown "
        "included, and the run's total (0: every test); on a loaded machine these compare "
        "where --durations' wall seconds do not",
    )


class AssertionCounter:
    """Counts the assert statements that pass (``--count-assertions``), by test: a test's
    checks, not its parameters; with xdist each worker counts its own and sends them back."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.counts: dict[str, int] = {}

    def pytest_assertion_pass(self, item: pytest.Item) -> None:
        self.counts[item.nodeid] = self.counts.get(item.nodeid, 0) + 1

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        output = getattr(session.config, "workeroutput", None)
        if output is not None:  # an xdist worker: the controller adds them up
            output["assertions_passed"] = json.dumps(self.counts)

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any) -> None:
        self.counts.update(json.loads(node.workeroutput.get("assertions_passed", "{}")))

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        total = sum(self.counts.values())
        terminalreporter.write_line(f"{total} assertions passed in {len(self.counts)} tests")
        if self.path:
            Path(self.path).write_text(json.dumps(self.counts, indent=0, sort_keys=True))


def _fork_server_seconds() -> float:
    """The CPU seconds so far of the test process's fork server (:func:`processes`) and of
    the processes it forked and reaped (0 before it starts): its processes are its children,
    not the test process's, so ``os.times`` does not see them."""
    pid = getattr(multiprocessing.forkserver._forkserver, "_forkserver_pid", None)
    if pid is None:
        return 0.0
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:  # gone (the session is ending)
        return 0.0
    return sum(int(field) for field in fields[11:15]) / os.sysconf("SC_CLK_TCK")


class CpuClock:
    """CPU seconds by test (``--cpu-durations``): user and system time of the test process
    and of the children it reaped, and of its fork server's processes (:func:`processes`),
    over the test's setup, call and teardown; with xdist each worker measures its own and
    sends them back."""

    def __init__(self, shown: int) -> None:
        self.shown = shown
        self.seconds: dict[str, float] = {}

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> Iterator[None]:
        began = sum(os.times()[:4]) + _fork_server_seconds()
        try:
            return (yield)
        finally:
            ended = sum(os.times()[:4]) + _fork_server_seconds()
            self.seconds[item.nodeid] = ended - began

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        output = getattr(session.config, "workeroutput", None)
        if output is not None:  # an xdist worker: the controller adds them up
            output["cpu_seconds"] = json.dumps(self.seconds)

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any) -> None:
        self.seconds.update(json.loads(node.workeroutput.get("cpu_seconds", "{}")))

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        ranked = sorted(self.seconds.items(), key=lambda pair: -pair[1])
        terminalreporter.write_sep("=", "CPU seconds by test (with the processes it reaped)")
        for nodeid, seconds in ranked[: self.shown or None]:
            terminalreporter.write_line(f"{seconds:8.2f} {nodeid}")
        total = sum(self.seconds.values())
        terminalreporter.write_line(f"{total:.1f} CPU seconds in {len(self.seconds)} tests")


#: The parts of pytest's assertion rewriting that :func:`_rewrite_share_ahead` calls.
_REWRITE_PARTS = (
    "assertstate_key",
    "get_cache_dir",
    "PYC_TAIL",
    "try_makedirs",
    "_read_pyc",
    "_rewrite_test",
    "_write_pyc",
)


def _rewrite_share_ahead(config: pytest.Config) -> None:
    """In a run's test process (xdist's gwN of M), rewrite the asserts of every Mth test
    module, starting at the Nth, into pytest's cache of rewritten modules, before
    collection: the processes start together and collect the same modules, and on a fresh
    clone each rewrote all of them (a third of collection's CPU each, 6 CPU s or so); so
    each rewrites its share, and finds the others' shares made as it collects. pytest reads
    these files as its own (a source-hash checked pyc, written as pytest writes it: its
    ``_rewrite_test`` and ``_write_pyc``); a module not made yet is rewritten by pytest as
    before."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    count = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    if (
        not worker.startswith("gw")
        or count < 2
        or sys.dont_write_bytecode
        or config.getoption("assertmode") != "rewrite"
        or not all(hasattr(rewrite, name) for name in _REWRITE_PARTS)
    ):
        return  # (a pytest without these parts: it rewrites everything itself, as before)
    patterns = [*config.getini("python_files"), "conftest.py"]
    modules: set[Path] = set()
    for argument in config.args:
        path = Path(config.invocation_params.dir, argument.split("::")[0])
        found = path.rglob("*.py") if path.is_dir() else [path]
        modules.update(p for p in found if any(fnmatch.fnmatch(p.name, n) for n in patterns))
    state = config.stash[rewrite.assertstate_key]
    for module in sorted(modules)[int(worker.removeprefix("gw")) :: count]:
        pyc = rewrite.get_cache_dir(module) / (module.name[:-3] + rewrite.PYC_TAIL)
        if rewrite._read_pyc(module, pyc) is None and rewrite.try_makedirs(pyc.parent):
            source_hash, code = rewrite._rewrite_test(module, config)
            rewrite._write_pyc(state, code, source_hash, pyc)


def pytest_configure(config: pytest.Config) -> None:
    _rewrite_share_ahead(config)
    shown = config.getoption("cpu_durations")
    if shown is not None:
        config.pluginmanager.register(CpuClock(shown), "arena-cpu-clock")
    path = config.getoption("count_assertions")
    if path is not None:
        if not config.getini("enable_assertion_pass_hook"):
            # off by default: it makes rewriting the tests' asserts a third dearer
            raise pytest.UsageError(
                "--count-assertions needs pytest's assertion-pass hook: add "
                "-o enable_assertion_pass_hook=true"
            )
        config.pluginmanager.register(AssertionCounter(path), "arena-assertion-counter")
    if config.getoption("store_durations"):
        config.pluginmanager.register(StoredDurations(), "arena-stored-durations")
    config.addinivalue_line(
        "markers",
        "seed(build=f): the test's database is a copy of a migrated one that f(store, "
        "directory) filled once per test process (tests/conftest.py)",
    )
    config.addinivalue_line(
        "markers", "empty_database: the url fixture gives an empty, unmigrated database"
    )
    config.addinivalue_line(
        "markers",
        "backends(*names): the test runs once on each database backend named (sqlite, "
        "postgresql); unmarked, on SQLite only (tests/conftest.py)",
    )


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """A test that uses a database and is marked ``backends`` runs once on each backend."""
    marker = metafunc.definition.get_closest_marker("backends")
    if marker is None or "url" not in metafunc.fixturenames:
        return
    unknown = [name for name in marker.args if name not in BACKENDS]
    if unknown or not marker.args:
        raise pytest.UsageError(
            f"{metafunc.definition.nodeid}: backends({', '.join(map(repr, marker.args))}) "
            f"names no backend or an unknown one; they are {', '.join(BACKENDS)}"
        )
    metafunc.parametrize("url", marker.args, indirect=True)


#: Each long test's wall seconds (setup, call and teardown) in a whole quiet run of the suite,
#: those of a second or more (``--store-durations`` writes it again).
DURATIONS = Path(__file__).with_name("durations.json")
#: Fixtures that start real ``arena worker`` processes (tests/workers/test_tasks.py).
WORKER_FIXTURES = {"service", "deployment"}
#: Fixtures that drive a real browser (tests/web/conftest.py).
BROWSER_FIXTURES = {"page", "browser"}


def _expected_seconds(item: pytest.Item, known: dict[str, float]) -> float:
    """How long ``item`` should take: its measured wall seconds, else a guess from what it
    uses (a test new since the last measurement)."""
    if item.nodeid in known:
        return known[item.nodeid]
    fixtures = set(getattr(item, "fixturenames", ()))
    if WORKER_FIXTURES & fixtures:
        return 10.0
    if BROWSER_FIXTURES & fixtures:
        return 6.0
    if item.get_closest_marker("slow"):
        return 5.0
    return 0.0


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Start the longest tests first (their measured seconds, :data:`DURATIONS`): xdist hands
    tests out as its processes free up (``--maxschedchunk=1`` in pyproject.toml), so a run
    ends on short tests, not with one long test running alone on one process. The short
    ones keep their collection order (a module's fixtures stay together)."""
    known: dict[str, float] = {}
    if DURATIONS.exists():
        known = json.loads(DURATIONS.read_text())
    expected = {item.nodeid: _expected_seconds(item, known) for item in items}
    # A module whose tests share a fixture of a wider scope than the test (a server, bots
    # compiled once) stays together, at the place of its longest test: apart, each part
    # would set the fixture up again.
    for _, members in itertools.groupby(items, key=lambda item: item.nodeid.split("::")[0]):
        grouped = [item for item in members if _shares_a_fixture(item)]
        if grouped:
            longest = max(expected[item.nodeid] for item in grouped)
            expected.update((item.nodeid, longest) for item in grouped)
    items.sort(key=lambda item: -expected[item.nodeid] if expected[item.nodeid] >= 1 else 0)


def _shares_a_fixture(item: pytest.Item) -> bool:
    """Whether ``item`` uses a fixture set up once for its module or class (not per test,
    not per process)."""
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return False
    return any(
        definition.scope in ("module", "class", "package")
        for definitions in info.name2fixturedefs.values()
        for definition in definitions
    )


class StoredDurations:
    """``--store-durations``: writes every test's wall seconds of a second or more to
    :data:`DURATIONS` at the end of the run (the scheduling's measurement; run it on a quiet
    machine, the whole suite)."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.seconds[report.nodeid] = self.seconds.get(report.nodeid, 0.0) + report.duration

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if getattr(session.config, "workeroutput", None) is not None:
            return  # an xdist worker: the controller sees every report
        long = {nodeid: round(s, 1) for nodeid, s in sorted(self.seconds.items()) if s >= 1}
        DURATIONS.write_text(json.dumps(long, indent=0) + "\n")


class Databases:
    """Template databases built once per test process (the SQLite ones once per run), and
    the copies tests get of them."""

    def __init__(self, root: Path, shared: Path | None = None) -> None:
        self.root = root
        #: where the run's test processes share their SQLite templates (None: not shared)
        self.shared = shared
        self._names = itertools.count(1)
        #: (backend, server, seed) -> (the template's URL, what its seed returned)
        self._templates: dict[tuple[str, str | None, Seed | None], tuple[str, object]] = {}
        #: PostgreSQL's creations and drops, one at a time, beside the tests (started on use)
        self._background: ThreadPoolExecutor | None = None
        #: (server, template) -> the next copy's name, being created or made
        self._spares: dict[tuple[str, str], Future[str]] = {}
        #: the drops under way (their errors are raised by :meth:`settle`)
        self._drops: list[Future[None]] = []
        #: server -> a store on its ``postgres`` database, for the creations and drops (a
        #: connection kept: each statement made its engine and connection anew)
        self._admins: dict[str, Store] = {}

    def empty(self, server: str | None, directory: Path) -> str:
        """A new empty database: on ``server`` (PostgreSQL), else a file in ``directory``."""
        if server is None:
            return f"sqlite:///{directory / 'arena.db'}"
        return self._create(server, self._name())

    def copy(self, server: str | None, directory: Path, seed: Seed | None) -> tuple[str, object]:
        """A new copy of the template for ``seed`` (built first if need be): its URL and
        what the seed returned."""
        template, value = self._template(server, seed)
        if server is None:
            path = directory / "arena.db"
            shutil.copyfile(template.removeprefix("sqlite:///"), path)
            return f"sqlite:///{path}", value
        return f"{server}/{self._spare(server, template.rsplit('/', 1)[1])}", value

    def _spare(self, server: str, template: str) -> str:
        """A new copy of ``template`` on ``server`` (the one made in the background if there
        is one, else one made now), its name; starts making the next in the background."""
        spare = self._spares.pop((server, template), None)
        name = spare.result() if spare is not None else self._copy_now(server, template)
        self._spares[(server, template)] = self._thread().submit(self._copy_now, server, template)
        return name

    def _copy_now(self, server: str, template: str) -> str:
        name = self._name()
        self._create(server, name, template=template)
        return name

    def _thread(self) -> ThreadPoolExecutor:
        if self._background is None:
            self._background = ThreadPoolExecutor(1, thread_name_prefix="test-databases")
        return self._background

    def _template(self, server: str | None, seed: Seed | None) -> tuple[str, object]:
        key = ("sqlite" if server is None else "postgresql", server, seed)
        if key not in self._templates:
            if server is None and self.shared is not None:
                self._templates[key] = self._shared_template(self.shared, seed)
            else:
                self._templates[key] = self._build(server, seed)
        return self._templates[key]

    def _shared_template(self, shared: Path, seed: Seed | None) -> tuple[str, object]:
        """The SQLite template for ``seed`` that the run's first test process to need it
        built (this one, if none has): the others wait for it and copy it."""
        name = "migrated" if seed is None else f"{seed.__module__}.{seed.__qualname__}"
        path, saved = shared / f"{name}.db", shared / f"{name}.pickle"
        with open(shared / f"{name}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
            if not saved.exists():
                url, value = self._build(None, seed)
                shutil.copyfile(url.removeprefix("sqlite:///"), path)
                saved.write_bytes(pickle.dumps(value))
        return f"sqlite:///{path}", pickle.loads(saved.read_bytes())

    def _build(self, server: str | None, seed: Seed | None) -> tuple[str, object]:
        directory = self.root / f"template-{next(self._names)}"
        directory.mkdir()
        value: object = None
        if seed is None:
            url = self.empty(server, directory)
            upgrade(url)
        else:
            url, _ = self.copy(server, directory, None)
            store = connect(url)
            try:
                value = seed(store, directory)
            finally:
                store.close()
        if server is None:  # one self-contained file: the WAL checkpointed into it
            path = url.removeprefix("sqlite:///")
            with contextlib.closing(sqlite3.connect(path)) as connection:
                connection.execute("PRAGMA journal_mode=DELETE")
        return url, value

    def _name(self) -> str:
        return f"arena_test_{os.getpid()}_{next(self._names)}"

    def drop(self, server: str, name: str) -> None:
        """Drop the database ``name`` in the background, closing the connections a test may
        have left open (:meth:`settle` waits for it)."""
        self._drops = [drop for drop in self._drops if not drop.done() or drop.exception()]
        self._drops.append(self._thread().submit(self._drop_now, server, name))

    def _drop_now(self, server: str, name: str) -> None:
        self._admin(server, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def settle(self, server: str) -> None:
        """Wait for the background's work on ``server``, drop its unused copies, and raise
        the first error a background creation or drop met."""
        errors: list[BaseException] = []
        for key in [key for key in self._spares if key[0] == server]:
            spare = self._spares.pop(key)
            error = spare.exception()
            if error is None:
                self._drop_now(server, spare.result())
            else:
                errors.append(error)
        errors += [error for drop in self._drops if (error := drop.exception()) is not None]
        self._drops = []
        admin = self._admins.pop(server, None)
        if admin is not None:
            admin.close()
        if errors:
            raise errors[0]

    def _create(self, server: str, name: str, template: str | None = None) -> str:
        """``CREATE DATABASE name [TEMPLATE template]`` (the template must have no open
        connection); its URL. A copy is a copy of the template's files (``STRATEGY
        FILE_COPY``), not PostgreSQL 15's default of writing every block of it to the WAL: the
        server runs with ``fsync=off``, so the checkpoint that a file copy costs is cheap (20
        copies and drops of a migrated database: 0.6-0.9 CPU s of the server's against
        0.85-1.6)."""
        copy = f' TEMPLATE "{template}" STRATEGY FILE_COPY' if template else ""
        self._admin(server, f'CREATE DATABASE "{name}"{copy}')
        return f"{server}/{name}"

    def _admin(self, server: str, statement: str) -> None:
        admin = self._admins.get(server)
        if admin is None:
            admin = self._admins.setdefault(server, connect(server + "/postgres"))
        with admin.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            conn.execute(text(statement))


@pytest.fixture(scope="session")
def postgres_server(databases: Databases) -> Iterator[str]:
    """A PostgreSQL server for the whole session: its URL without a database name (stopped
    once the template databases' background work on it is done)."""
    with running_postgres() as server:
        yield server
        databases.settle(server)


@pytest.fixture(scope="session")
def databases(tmp_path_factory: pytest.TempPathFactory) -> Databases:
    """This test process's template databases (the SQLite ones shared by the run's test
    processes: each is built once a run, by the first process to need it)."""
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID")  # the same in every worker of a run
    shared = None
    if run is not None:
        shared = tmp_path_factory.getbasetemp().parent / f"templates-{run}"
        shared.mkdir(exist_ok=True)
    return Databases(tmp_path_factory.mktemp("templates"), shared)


@pytest.fixture
def url(request: pytest.FixtureRequest, tmp_path: Path, databases: Databases) -> Iterator[str]:
    """A database of the test's own, on SQLite (on each backend its ``backends`` marker
    names): migrated, and holding what the test's ``seed`` marker's build stored; empty if
    the test is marked ``empty_database``. A PostgreSQL one is dropped after the test (else
    the server's gigabytes of copies make the whole run slow to write and to stop)."""
    server: str | None = None
    if getattr(request, "param", BACKENDS[0]) != "sqlite":
        server = request.getfixturevalue("postgres_server")
    if request.node.get_closest_marker("empty_database"):
        url = databases.empty(server, tmp_path)
    else:
        marker = request.node.get_closest_marker("seed")
        build = marker.kwargs["build"] if marker else None
        url, request.node.stash[_SEEDED] = databases.copy(server, tmp_path, build)
    yield url
    if server is not None:
        databases.drop(server, url.rsplit("/", 1)[1])


@pytest.fixture
def seeded(url: str, request: pytest.FixtureRequest) -> object:
    """A copy of what the test's ``seed`` marker's build returned (a fixture that relies on
    a seed asks for this one: it fails a test without the marker)."""
    if request.node.get_closest_marker("seed") is None:
        pytest.fail(f"{request.node.name} needs a seed marker: @pytest.mark.seed(build=...)")
    return copy.deepcopy(request.node.stash[_SEEDED])


#: What the processes of :func:`processes` find imported (their fork server imports these
#: once): the store, the broker, and pytest (which the tests' modules import).
PROCESS_PRELOAD = ["arena.store.db", "arena.service.broker", "pytest"]


@pytest.fixture(scope="session")
def processes() -> multiprocessing.context.ForkServerContext:
    """The multiprocessing context for a test's own processes (concurrent uploaders,
    claimers, a broker's producers and consumers): each is forked from a server process
    that imported :data:`PROCESS_PRELOAD` once (``forkserver``), where ``spawn`` started a
    new interpreter that imported them again (0.6 CPU s or so each). The fork server is
    started clean by this test process (no thread, connection or open file of the test's
    is inherited); its processes are real processes, with their own connections."""
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(PROCESS_PRELOAD)
    return context


@pytest.fixture(scope="session")
def tables_redis() -> Iterator[str]:
    """A redis-server for the tables' channel (arena.service.table_channel), once a
    session: its URL."""
    with running_redis() as server:
        yield server.url


@pytest.fixture
def tables_channel(tables_redis: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """The tables' channel on the session's Redis (``ARENA_TABLES_URL``): its URL."""
    monkeypatch.setenv("ARENA_TABLES_URL", tables_redis)
    return tables_redis


@pytest.fixture
def store(url: str) -> Iterator[Store]:
    """The test's database (``url``), opened."""
    store = connect(url)
    yield store
    store.close()
