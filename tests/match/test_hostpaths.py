"""The host paths a sandbox binds, kept on disk: read back while nothing they were found
from has changed, found again otherwise, and never read from a file others may write."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from arena.match import hostpaths
from arena.match.hostpaths import cache_file, shared_libraries

PYTHON = "/usr/bin/python3"


@pytest.fixture
def runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[list[str]]]:
    """A cache of its own; the commands the module runs, listed as they run."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    ran: list[list[str]] = []
    real = subprocess.run

    def counted(command: list[str], *args: Any, **kwargs: Any) -> Any:
        ran.append(command)
        return real(command, *args, **kwargs)

    monkeypatch.setattr(subprocess, "run", counted)
    clear()
    yield ran
    clear()


def clear() -> None:
    shared_libraries.cache_clear()
    hostpaths._python_stdlib.cache_clear()


def test_what_was_found_is_read_back_from_disk(runs: list[list[str]]) -> None:
    found = shared_libraries(PYTHON)
    stdlib = hostpaths._python_stdlib(PYTHON)
    assert found and stdlib is not None and len(runs) == 2  # ldd, and the interpreter
    assert cache_file().stat().st_mode & 0o077 == 0
    clear()  # (a new process)
    assert shared_libraries(PYTHON) == found
    assert hostpaths._python_stdlib(PYTHON) == stdlib
    assert len(runs) == 2  # nothing run again


def test_a_changed_binary_is_looked_at_again(runs: list[list[str]], tmp_path: Path) -> None:
    binary = tmp_path / "python3"
    shutil.copy(PYTHON, binary)
    found = shared_libraries(str(binary))
    clear()
    os.utime(binary, ns=(0, 0))  # (another build at the same path)
    assert shared_libraries(str(binary)) == found
    assert len(runs) == 2


def test_a_cache_others_may_write_is_not_read(runs: list[list[str]]) -> None:
    found = shared_libraries(PYTHON)
    cache_file().chmod(0o666)
    clear()
    assert shared_libraries(PYTHON) == found
    assert len(runs) == 2  # found again, not read
