"""The command line starts fast: listing commands imports none of them (arena.cli.main)."""

from __future__ import annotations

import subprocess
import sys

import click
import pytest

from arena.cli.main import COMMANDS, cli, load_command

HEAVY = ("numpy", "scipy", "sqlalchemy", "celery", "kombu", "alembic")

# Runs the command line in a fresh interpreter, then prints the heavy packages it loaded.
PROBE = """
import sys
from arena.cli import main
heavy = set(sys.argv[1].split(","))
main(sys.argv[2:])
loaded = {name.partition(".")[0] for name in sys.modules} & heavy
print("LOADED", ",".join(sorted(loaded)), file=sys.stderr)
"""


@pytest.mark.parametrize(
    "argv", [["--help"], ["--version"], ["tournament"], [], ["compare", "--help"]]
)
def test_help_and_version_load_no_heavy_package(argv: list[str]) -> None:
    """``arena --help``, ``--version`` and ``arena compare --help`` import no statistics,
    database or broker (the compare's are imported as it runs)."""
    probe = [sys.executable, "-c", PROBE, ",".join(HEAVY), *argv]
    result = subprocess.run(probe, capture_output=True, text=True, check=True)
    loaded = result.stderr.strip().splitlines()[-1]
    assert loaded == "LOADED", f"arena {' '.join(argv)}: {loaded}"


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
    (repeated in arena.cli.compare, which loads no scipy for its --help)."""
    from arena.cli import compare
    from arena.compete import sprt

    assert compare.STATISTICS == sprt.STATISTICS
