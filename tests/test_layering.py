"""The core ``arena`` package imports only the standard library (docs/architecture.md)."""

import subprocess
import sys

# Application-layer packages that must never be pulled in by importing the core.
FORBIDDEN = ("click", "rich", "flask", "celery", "sqlalchemy", "kombu", "redis")

# Modules allowed to import application-layer packages.
EXEMPT = frozenset(
    {
        "arena.__main__",
        "arena.cli",
        "arena.cli_bots",
        "arena.cli_store",
        "arena.cli_tournament",
        "arena.cli_service",
        "arena.cli_ratings",
        # The Celery side shared by the workers and the CLI (docs/architecture.md).
        "arena.broker",
        # The storage layer: the only place that imports SQLAlchemy (docs/architecture.md).
        "arena.store.db",
        "arena.store.models",
        "arena.store.queue",
        "arena.store.service",
        "arena.store.results",
        "arena.store.migrations.env",
        "arena.store.migrations.versions.0001_initial_schema",
        "arena.store.migrations.versions.0002_service_columns",
        "arena.store.migrations.versions.0003_workers",
    }
)

# Runs in a fresh interpreter, so imports made by other tests cannot leak in.
# Prints one line per offence: "<arena module that first loaded it> <forbidden package>".
PROBE = """
import importlib
import pkgutil
import sys

exempt = set(sys.argv[1].split(","))
forbidden = set(sys.argv[2].split(","))
seen = set()


def report(importer):
    for top in sorted({name.partition(".")[0] for name in sys.modules} & forbidden - seen):
        seen.add(top)
        print(importer, top)


import arena

report("arena")
for info in pkgutil.walk_packages(arena.__path__, prefix="arena."):
    if info.name not in exempt:
        importlib.import_module(info.name)
        report(info.name)
"""


def test_core_imports_no_application_packages() -> None:
    """Importing every ``arena`` module except the exempt ones loads no forbidden package."""
    result = subprocess.run(
        [sys.executable, "-c", PROBE, ",".join(sorted(EXEMPT)), ",".join(FORBIDDEN)],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert result.returncode == 0, f"importing arena modules failed:\n{result.stderr}"
    offences = result.stdout.splitlines()
    assert not offences, "arena core imported application packages (importer, package):\n" + (
        "\n".join(offences)
    )
