"""What a sandboxed bot's interpreter needs from the host, and nothing else.

The sandbox shows a bot its own files and the runtime that runs them: the interpreter's
executable, the shared libraries it loads (found with ``ldd``, not hard-coded), and for
Python its standard library (``sysconfig``'s ``stdlib`` directory, whose extension modules'
libraries are found the same way). Never the rest of ``/usr``: no shell, no other
programs, no third-party packages (the host's ``site-packages`` and ``dist-packages`` are
not bound), no configuration. docs/writing-a-bot.md says what a bot can use.

A bot file that is not Python runs by its ``#!`` line; ``#!/usr/bin/env NAME`` binds
``env`` and the ``NAME`` found on ``/usr/bin:/bin``.

The host's programs are trusted here (``ldd`` runs the host's loader on them); bot files
are only read (their first line).
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

__all__ = ["HostPaths", "bot_paths", "interpreter_of", "shared_libraries"]

_SEARCH_PATH = "/usr/bin:/bin"
#: An ``ldd`` line naming a library file: ``libm.so.6 => /lib/.../libm.so.6 (0x...)`` or
#: the loader's ``/lib64/ld-linux-x86-64.so.2 (0x...)``.
_LDD_PATH = re.compile(r"(?:=>\s*)?(/\S+)\s+\(0x[0-9a-f]+\)")
_PACKAGE_DIRS = ("site-packages", "dist-packages")


@dataclass(frozen=True, slots=True)
class HostPaths:
    """Host paths bound read-only at the same place in the sandbox.

    Attributes:
        files: single files (executables, shared libraries), as their callers name them.
        directories: whole directories (Python's standard library).
        hidden: directories inside those to hide (package directories), by a tmpfs.
    """

    files: frozenset[str]
    directories: frozenset[str] = frozenset()
    hidden: frozenset[str] = frozenset()

    def __or__(self, other: HostPaths) -> HostPaths:
        return HostPaths(
            self.files | other.files,
            self.directories | other.directories,
            self.hidden | other.hidden,
        )


def interpreter_of(program: Path) -> list[str]:
    """The interpreter a bot file that is a program names on its ``#!`` line (the program
    itself if it has none), ``/usr/bin/env NAME`` resolved to ``env`` and NAME's path.

    Raises:
        OSError: the file cannot be read.
    """
    with program.open("rb") as handle:
        first = handle.readline(256)
    if not first.startswith(b"#!"):
        return []
    words = first[2:].decode("utf-8", "replace").split()
    if not words:
        return []
    if Path(words[0]).name == "env" and len(words) > 1:
        found = shutil.which(words[1], path=_SEARCH_PATH)
        return [words[0], *([found] if found else [])]
    return [words[0]]


@functools.cache
def bot_paths(program: str) -> HostPaths:
    """Everything ``program`` (a host executable, e.g. ``/usr/bin/python3``) needs: itself,
    its shared libraries and, for a Python, its standard library."""
    if not os.path.isfile(program):
        return HostPaths(frozenset())
    runtime = HostPaths(frozenset({program, os.path.realpath(program)}) | shared_libraries(program))
    stdlib = _python_stdlib(program)
    if stdlib is None:
        return runtime
    root = Path(stdlib)
    modules = [str(path) for path in root.glob("lib-dynload/*.so")]
    hidden = frozenset(str(root / name) for name in _PACKAGE_DIRS if (root / name).is_dir())
    libraries = shared_libraries(*modules)
    return runtime | HostPaths(libraries, frozenset({stdlib}), hidden)


@functools.cache
def shared_libraries(*binaries: str) -> frozenset[str]:
    """The shared libraries the ``binaries`` load (and the loader), as ``ldd`` names them,
    their directories' symlinks resolved (``/lib`` is ``/usr/lib`` on merged-/usr systems).
    One ``ldd`` for them all: a Python's standard library has about 50 modules of C, and
    an ``ldd`` each was a second of every process that started a sandbox."""
    ldd = shutil.which("ldd", path=_SEARCH_PATH)
    if ldd is None or not binaries:
        return frozenset()
    listed = subprocess.run(
        [ldd, *binaries],
        capture_output=True,
        text=True,
        check=False,
        env={"PATH": _SEARCH_PATH, "LC_ALL": "C"},
        timeout=30,
    ).stdout
    found = set()
    for match in _LDD_PATH.finditer(listed):
        path = match.group(1)
        found.add(os.path.join(os.path.realpath(os.path.dirname(path)), os.path.basename(path)))
        found.add(os.path.realpath(path))
    return frozenset(found)


@functools.cache
def _python_stdlib(program: str) -> str | None:
    """The standard library directory of ``program`` if it is a Python, else None."""
    if not Path(program).name.startswith("python"):
        return None
    probe = "import json, sysconfig; print(json.dumps(sysconfig.get_path('stdlib')))"
    try:
        printed = subprocess.run(
            [program, "-I", "-S", "-c", probe],
            capture_output=True,
            text=True,
            check=True,
            env={"PATH": _SEARCH_PATH},
            timeout=30,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    stdlib = json.loads(printed)
    return stdlib if isinstance(stdlib, str) and os.path.isdir(stdlib) else None
