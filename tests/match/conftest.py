"""Fixtures of the match layer's tests."""

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture
def readable() -> Iterator[Path]:
    """A folder in /tmp that every user can read (pytest's own are 0700; the sandbox's uid
    reads the bots written there), removed after."""
    folder = Path(tempfile.mkdtemp(prefix="arena-readable-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)
