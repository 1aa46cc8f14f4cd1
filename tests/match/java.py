"""Java bots for the tests, compiled once a session: the ``java_jar`` fixture
(tests/match/conftest.py) is a :class:`JarMaker`, which compiles a source with the kit
(arena/match/kits/JavaBuild.java) the first time it is asked for it, and hands back the same
jar after."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Protocol

KITS = Path(__file__).resolve().parents[2] / "arena" / "match" / "kits"

#: Debian's java (the java runtime's interpreter).
JAVA = "/usr/lib/jvm/java-17-openjdk-amd64/bin/java"


class JarMaker(Protocol):
    def __call__(self, name: str, source: str) -> Path:
        """The jar of ``source`` (the author's file ``name``), compiled once a session."""


class Jars:
    """Compiles each (name, source) once into ``folder``."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._made: dict[tuple[str, str], Path] = {}

    def __call__(self, name: str, source: str) -> Path:
        made = self._made.get((name, source))
        if made is None:
            work = self.folder / f"{len(self._made)}"
            work.mkdir()
            (work / name).write_text(source, encoding="utf-8")
            made = work / "bot.jar"
            subprocess.run(
                [JAVA, "-XX:TieredStopAtLevel=1", str(KITS / "JavaBuild.java"), name,
                 str(made), str(KITS / "java")],
                cwd=work, check=True, timeout=120,
            )  # fmt: skip
            self._made[(name, source)] = made
        return made
