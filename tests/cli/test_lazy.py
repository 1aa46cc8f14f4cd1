"""The command line starts fast: listing commands imports none of them (arena.cli.main), and
no command's --help imports what only running it needs."""

from __future__ import annotations

import gc
import importlib.metadata
import json
import subprocess
import sys
from pathlib import Path

import click
import pytest

import arena
from arena.cli.main import COMMANDS, cli, load_command

#: What no command's --help (nor ``arena --version``) may import: statistics, the database,
#: the broker, the web, the API's shapes, HTTP, password hashing, similarity (issue 33: each
#: command starts within 0.5 s, ``--version`` within 0.3 s: benchmarks/starts.py).
HEAVY = (
    "numpy", "scipy", "sqlalchemy", "alembic", "celery", "kombu", "flask", "werkzeug",
    "jinja2", "pydantic", "httpx", "argon2", "copydetect",
)  # fmt: skip

# In a fresh interpreter: `arena --version`, `arena`, then `--help` of every command and
# subcommand, walked from the root group; after each, the heavy packages it loaded first.
PROBE = """
import contextlib, io, itertools, json, sys
import click
from arena.cli.main import cli, main
heavy = set(sys.argv[1].split(","))
def run(argv):
    with contextlib.redirect_stdout(io.StringIO()):
        status = main(argv)
    assert status == 0, (argv, status)
def walk(command, path):
    yield path
    if isinstance(command, click.Group):
        ctx = click.Context(command)
        for name in command.list_commands(ctx):
            yield from walk(command.get_command(ctx, name), [*path, name])
loaded, found = set(), {}
helps = ([*path, "--help"] for path in walk(cli, []))  # (each imported as it is reached)
for argv in itertools.chain([["--version"], []], helps):
    run(argv)
    now = {name.partition(".")[0] for name in sys.modules} & heavy
    if now - loaded:
        found[" ".join(argv)] = sorted(now - loaded)
    loaded |= now
print(json.dumps(found))
"""


def test_no_commands_help_nor_the_version_loads_a_heavy_package() -> None:
    """``arena --version``, ``arena`` and every command's and subcommand's ``--help``, in
    one fresh interpreter, import no statistics, database, broker, web framework or HTTP
    client (a command imports them as it runs)."""
    probe = [sys.executable, "-c", PROBE, ",".join(HEAVY)]
    result = subprocess.run(probe, capture_output=True, text=True, check=True)
    assert json.loads(result.stdout.splitlines()[-1]) == {}


#: What neither a command's schema check nor a worker's start loads: Alembic (only a database
#: to migrate needs it; its import, mako's and pygments' ~0.1 CPU s a process), Celery's other
#: commands' REPL (click_repl, prompt_toolkit: ~0.15 CPU s), pygments (Celery's command module
#: builds a lexer with it for ``celery inspect``'s colours: ~0.085 CPU s), the web
#: (framework, templates, the API's shapes), which no worker serves, scipy (the rating fit is
#: numpy's: scipy.special was 0.2 CPU s of a worker's start) and, on the embedded default's
#: filesystem broker, Redis (only a live feed or a table's channel on Redis loads it: with
#: its asyncio, ~0.1 CPU s and 90 modules).
NOT_AT_START = (
    "alembic", "mako", "click_repl", "prompt_toolkit", "pygments", "flask", "werkzeug",
    "jinja2", "pydantic", "spectree", "scipy", "redis",
)  # fmt: skip

#: What ``arena compare --remote`` does not load (issue 33: its start is most of the time to
#: its verdict): Redis's client (the live feed's, loaded with a Redis feed: ~0.05 CPU s) and
#: what only the web's compares read (:mod:`arena.service.compare_views`: the bots' pages'
#: reads, permissions' rules, rule sets' files).
NOT_IN_REMOTE_COMPARE = (
    "redis", "tomli_w", "arena.service.compare_views", "arena.service.bot_views",
    "arena.service.permissions", "arena.service.rule_sets",
)  # fmt: skip

# A worker's start (`arena worker`): the schema check of every command, the tasks, then
# Celery's worker command as arena.service.broker.run_celery runs it (its --help: no worker).
# First what `arena compare --remote` imports (arena.cli.compare.compare_remote's), and what
# of NOT_IN_REMOTE_COMPARE it loaded.
START = """
import contextlib, io, json, sys
from arena.compete.sprt import preload_scipy
from arena.service.broker import configure, location
from arena.service.compare_start import CompareRequest, send_start
from arena.service.compares import follow_compare, open_compare, stop_compare
from arena.service.matches import Config
from arena.store.db import open_store
remote = sorted(set(sys.modules) & set(sys.argv[2].split(",")))
from arena.service.broker import run_celery
from arena.store.db import open_store, upgrade
upgrade(sys.argv[1])  # `arena serve`'s and `arena db upgrade`'s: up to date already
open_store(sys.argv[1]).close()
import workers.tasks
with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):
    run_celery(["-A", "workers.app", "worker", "--help"])
print(json.dumps(remote))
print(json.dumps(sorted({name.partition(".")[0] for name in sys.modules} & set(sys.argv[3:]))))
"""


#: What ``arena compare --remote`` has not loaded when it sends its start to the workers
#: (arena.service.compare_start): the store (SQLAlchemy, the arena's tables), the service's
#: reads and the statistics, which it loads while a worker stores the compare.
NOT_BEFORE_THE_START = (
    "sqlalchemy", "numpy", "scipy", "arena.store", "arena.service.matches",
    "arena.service.compares", "arena.compete.sprt", "arena.compete.localrun",
)  # fmt: skip


def test_a_remote_compares_start_is_sent_before_the_store_is_loaded(tmp_path: Path) -> None:
    """What ``arena compare --remote`` loads to send its start (a broker named, as a
    deployment's is: the serverless default's folder is named after the database's URL,
    which SQLAlchemy's URL parser reads) loads no database, service or statistics."""
    probe = (
        "import json, sys\n"
        "from arena.service.compare_start import CompareRequest, send_start\n"
        "request = CompareRequest.make(new='a', old='b', rules='draw', rules_version='v', "
        "players=2, teams=False, statistic='margin', elo0=0.0, elo1=10.0, alpha=0.05, "
        "beta=0.05, max_games=100, batch=8, seed=1, move_seconds=1.0, memory_mb=512, "
        "allow_same_source=False)\n"
        f"assert send_start(request, 'filesystem://{tmp_path}', None)\n"
        "heavy = sys.argv[1].split(',')\n"
        "print(json.dumps(sorted(m for m in sys.modules if any(m == h or "
        "m.startswith(h + '.') for h in heavy))))\n"
    )
    ran = subprocess.run(
        [sys.executable, "-c", probe, ",".join(NOT_BEFORE_THE_START)],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert json.loads(ran.stdout.splitlines()[-1]) == []
    assert list((tmp_path / "queue").glob("*.msg")), "the start was not sent"


def test_the_schema_check_and_a_workers_start_load_no_alembic_repl_nor_web(url: str) -> None:
    """Upgrading a database at the current schema (``arena serve``), opening it (what every
    command and worker does first), importing the worker's tasks and running Celery's worker
    command, in a fresh interpreter, loads no Alembic, none of Celery's REPL, no pygments,
    nothing of the web, no scipy and, on the filesystem broker, no Redis; ``arena compare
    --remote``'s imports, before them, load neither
    Redis's client nor the web's compares and what they read."""
    remote = ",".join(NOT_IN_REMOTE_COMPARE)
    probe = [sys.executable, "-c", START, url, remote, *NOT_AT_START]
    result = subprocess.run(probe, capture_output=True, text=True, check=True)
    assert [json.loads(line) for line in result.stdout.splitlines()[-2:]] == [[], []]


def test_the_version_is_the_installed_distributions() -> None:
    """``arena --version`` says the package's ``__version__`` (read without the installed
    metadata, which is slow to scan): the distribution's version."""
    assert arena.__version__ == importlib.metadata.version("domino-arena")


def test_the_defaults_repeated_for_the_help_are_the_services() -> None:
    """The values a command's --help shows, repeated in arena.cli so that the help imports
    no service, are the service's own."""
    from datetime import datetime

    from arena.cli import assignment, similarity
    from arena.service import competition_copies, gradebooks
    from arena.service import similarity as service_similarity
    from arena.service.assignments import NewAssignment

    made = NewAssignment(class_name="", name="", deadline=datetime.min)
    defaults = assignment.CREATE_DEFAULTS._asdict()
    assert {name: getattr(made, name) for name in defaults} == defaults
    assert assignment.GRADEBOOKS == gradebooks.FORMATS
    assert assignment.MOODLE_KEYS == gradebooks.MOODLE_KEYS
    assert similarity.THRESHOLD == service_similarity.THRESHOLD == competition_copies.THRESHOLD


@pytest.mark.parametrize(
    ("group", "name"), [(group, name) for group, names in COMMANDS.items() for name in names]
)
def test_the_listed_help_is_the_commands_own(group: str, name: str) -> None:
    """Every command named in COMMANDS exists, under that name, with that one-line help."""
    target, listed = COMMANDS[group][name]
    command = load_command(target)
    assert command.name == name
    assert command.get_short_help_str(limit=200) == listed


def test_every_group_of_the_root_is_lazy() -> None:
    """The root lists exactly COMMANDS['arena'], and ``tournament``'s commands load."""
    ctx = click.Context(cli)
    assert cli.list_commands(ctx) == sorted(COMMANDS["arena"])
    tournament = cli.get_command(ctx, "tournament")
    assert isinstance(tournament, click.Group)
    assert tournament.list_commands(ctx) == sorted(COMMANDS["tournament"])


def test_the_compare_commands_statistics_are_the_tests() -> None:
    """``arena compare --statistic`` offers exactly the statistics of arena.compete.sprt
    (arena.compete.testspec's, which loads no numpy or scipy for its --help)."""
    from arena.cli.compare import compare_command
    from arena.compete import sprt

    (option,) = [p for p in compare_command.params if p.name == "statistic"]
    assert isinstance(option.type, click.Choice)
    assert tuple(option.type.choices) == sprt.STATISTICS


def test_compare_collects_garbage_again_once_its_imports_are_in() -> None:
    """``arena compare`` turns the garbage collector off while its imports load (they make
    none worth collecting) and :func:`arena.cli.compare.freeze_heap` turns it on again, with
    what is loaded frozen: the games and matches that follow are collected as ever."""
    from arena.cli.compare import freeze_heap

    gc.disable()
    try:
        freeze_heap()
        assert gc.isenabled() and gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
        gc.enable()
