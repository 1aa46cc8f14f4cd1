"""Fixtures of the match layer's tests: Java bots compiled once a session."""

from __future__ import annotations

import pytest

from tests.match.java import JarMaker, Jars


@pytest.fixture(scope="session")
def java_jar(tmp_path_factory: pytest.TempPathFactory) -> JarMaker:
    """Compiles a Java bot's source with the kit, once a session (tests/match/java.py)."""
    return Jars(tmp_path_factory.mktemp("java"))
