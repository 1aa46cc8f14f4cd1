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

import contextlib
import functools
import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["HostPaths", "bot_paths", "cache_file", "interpreter_of", "shared_libraries"]

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
    an ``ldd`` each was a second of every process that started a sandbox. Kept on disk
    (:func:`_cached`) while the binaries, the libraries found and the loader's cache are
    unchanged: the one ``ldd`` is still a hundred processes, seconds on a loaded machine."""
    ldd = shutil.which("ldd", path=_SEARCH_PATH)
    if ldd is None or not binaries:
        return frozenset()
    key = "libraries\0" + "\0".join(binaries)
    kept = _cached(key, binaries)
    if kept is not None:
        return frozenset(kept)
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
    _keep(key, binaries, sorted(found))
    return frozenset(found)


# --- the cache on disk ----------------------------------------------------------------

#: The files whose change makes a cached answer stale besides the binaries and libraries
#: themselves: the loader's cache (``ldconfig``).
_LOADER_FILES = ("/etc/ld.so.cache",)


def cache_file() -> Path:
    """Where the host paths found are kept: ``$XDG_CACHE_HOME/arena`` (default
    ``~/.cache/arena``), one file per user."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "arena" / f"hostpaths-{os.geteuid()}.json"


def _stamps(paths: Iterable[str]) -> list[list[Any]]:
    """Each path's identity (device, inode, size, modification time), None where gone."""
    stamps: list[list[Any]] = []
    for path in paths:
        try:
            info = os.stat(path)
            stamps.append([path, info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns])
        except OSError:
            stamps.append([path, None])
    return stamps


def _trusted(path: Path) -> bool:
    """Whether ``path`` (and its directory) is this user's and no one else may write it:
    what it says chooses what a sandbox shows its bot."""
    try:
        for item in (path.parent, path):
            info = item.stat()
            if info.st_uid != os.geteuid() or info.st_mode & 0o022:
                return False
    except OSError:
        return False
    return True


def _read_cache() -> dict[str, Any]:
    path = cache_file()
    if not _trusted(path):
        return {}
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _cached(key: str, inputs: Sequence[str]) -> list[str] | None:
    """The answer kept for ``key``, if its ``inputs``, its answer's files and the loader's
    cache are as they were when it was kept (else None: found again)."""
    entry = _read_cache().get(key)
    if not isinstance(entry, dict):
        return None
    answer = entry.get("answer")
    if not isinstance(answer, list) or not all(isinstance(item, str) for item in answer):
        return None
    if entry.get("stamps") != _stamps([*inputs, *_LOADER_FILES, *answer]):
        return None
    return answer


def _keep(key: str, inputs: Sequence[str], answer: list[str]) -> None:
    """Keep ``answer`` for ``key`` (best effort: a cache that cannot be written is left)."""
    path = cache_file()
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        data = _read_cache()
        data[key] = {"answer": answer, "stamps": _stamps([*inputs, *_LOADER_FILES, *answer])}
        with tempfile.NamedTemporaryFile(
            "w", dir=path.parent, prefix=".hostpaths-", delete=False
        ) as handle:
            json.dump(data, handle)
    except OSError:
        return
    try:
        os.replace(handle.name, path)  # (atomic: a reader sees the old file or the new)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(handle.name)


@functools.cache
def _python_stdlib(program: str) -> str | None:
    """The standard library directory of ``program`` if it is a Python, else None."""
    if not Path(program).name.startswith("python"):
        return None
    key = f"stdlib\0{program}"
    kept = _cached(key, [program])
    if kept is not None:
        return kept[0] if kept else None
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
    found = stdlib if isinstance(stdlib, str) and os.path.isdir(stdlib) else None
    _keep(key, [program], [] if found is None else [found])
    return found
