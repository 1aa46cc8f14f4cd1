"""Compiling a compiled runtime's bot (``cpp``, ``c``, ``java``): in the sandbox, under limits
of its own, once per source.

A source is compiled by its runtime's :class:`~arena.match.runtimes.Compiler` steps inside the
sandbox of the slot that will run it (:meth:`arena.match.sandbox.Sandbox.build`): no
network, the toolchain read-only, the source shown under the author's file name in the
working directory (so the compiler's messages name that file, never a sandbox path), the
kit read-only in ``/kit``, and one writable directory, ``/out``, for the artefact. Its
limits are :data:`COMPILE_LIMITS` (CPU time, memory, processes, each file's size, ``/tmp``)
and :data:`COMPILE_WALL_SECONDS` of wall-clock time; what the compiler prints is kept up to
:data:`OUTPUT_KEPT_BYTES`. Whatever goes wrong -- an error in the source, a compile bomb
(``#include "/dev/random"``, a template recursion), a binary over the size limit, a
compiler that crashes or hangs -- ends in a :class:`CompileError` whose message is the
compiler's first lines (:data:`ERROR_LINES`) and, where a limit ended it, which limit.

The artefact is kept content-addressed in the compile cache (:func:`compile_cache`,
``ARENA_COMPILE_CACHE``; a directory of this user's only) under a key of the source's
SHA-256, the runtime, the toolchain's version and the kit's bytes
(:func:`artefact_key`): compiled once by the check of an upload, reused by every match of
the version on that machine (a machine that has not got it compiles it once, the same
way). The cache is bounded (:data:`CACHE_MB_ENV`, :data:`CACHE_MB_DEFAULT` MB): each use
marks an artefact's time, and after each compile the least recently used are removed until
it fits (:func:`prune_cache`; one used in the last :data:`IN_USE_SECONDS` is kept, a match
may be starting it; a version pruned is compiled again when it plays). Unsandboxed (a
developer's own bots, ``--unsandboxed``) the steps run as plain processes under the same
rlimits.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import resource
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from arena.errors import ArenaError
from arena.match.hostpaths import HostPaths, bot_paths
from arena.match.runtimes import BotRuntime, Compiler, runtime_missing
from arena.match.sandbox import Limits, Sandbox, SandboxUnavailable, kill_process_group

__all__ = [
    "CACHE_ENV",
    "CACHE_MB_DEFAULT",
    "CACHE_MB_ENV",
    "COMPILE_LIMITS",
    "COMPILE_WALL_SECONDS",
    "ERROR_LINES",
    "KITS",
    "Built",
    "CompileError",
    "artefact_key",
    "build",
    "cache_limit_mb",
    "compile_cache",
    "prune_cache",
    "toolchain_version",
]

#: The environment variable naming the compile cache's directory.
CACHE_ENV = "ARENA_COMPILE_CACHE"
#: The environment variable bounding the compile cache, in MB, and its default: a thousand
#: C++ bots (static binaries of about 2 MB), or tens of thousands of Java ones.
CACHE_MB_ENV = "ARENA_COMPILE_CACHE_MB"
CACHE_MB_DEFAULT = 2048
#: An artefact used (or a compile's partial copy written) this recently is never pruned.
IN_USE_SECONDS = 3600.0
#: The kits' directory: their files are shown read-only in ``/kit``.
KITS = Path(__file__).resolve().with_name("kits")
#: A compile's limits: generous for a bot of 256 KiB, tight for a compile bomb.
COMPILE_LIMITS = Limits(
    memory_mb=1536, cpu_seconds=60, processes=64, file_size_mb=64, open_files=256,
    tmp_size_mb=256,
)  # fmt: skip
#: A compile's wall-clock bound (a compiler blocked on a read of a device, say).
COMPILE_WALL_SECONDS = 90.0
#: Of what the compiler printed: the lines an error shows, and the most characters.
ERROR_LINES = 30
ERROR_CHARS = 4000
#: What is read of the compiler's output at most; the rest is drained and dropped.
OUTPUT_KEPT_BYTES = 64 * 1024

_SOURCE_DIR = "/src"
_KIT_DIR = "/kit"
_OUT_DIR = "/out"


class CompileError(ArenaError):
    """A source does not compile: the message is what the compiler printed (its first
    lines), or which limit the compile broke."""


@dataclass(frozen=True, slots=True)
class Built:
    """A compiled artefact: its path in the cache, the seconds its compile took (0.0 when
    it was in the cache), and whether it was."""

    path: Path
    seconds: float
    cached: bool


def compile_cache() -> Path:
    """The compile cache's directory (``ARENA_COMPILE_CACHE``, else ``arena-compiled-UID`` in
    the temporary directory), made private to this user (the artefacts are run as bots)."""
    directory = Path(
        os.environ.get(CACHE_ENV) or Path(tempfile.gettempdir()) / f"arena-compiled-{os.getuid()}"
    )
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    if directory.stat().st_uid != os.getuid() or directory.is_symlink():
        raise SandboxUnavailable(
            f"the compile cache {directory} is not this user's own directory: set {CACHE_ENV}"
        )
    return directory


def cache_limit_mb(environ: Mapping[str, str] | None = None) -> int:
    """The compile cache's bound in MB (``ARENA_COMPILE_CACHE_MB``, else
    :data:`CACHE_MB_DEFAULT`).

    Raises:
        ValueError: it is not a whole number above 0 (the message names the variable).
    """
    raw = (os.environ if environ is None else environ).get(CACHE_MB_ENV) or ""
    if not raw:
        return CACHE_MB_DEFAULT
    if not raw.isdigit() or int(raw) < 1:
        raise ValueError(f"{CACHE_MB_ENV} must be a whole number of MB above 0, not {raw!r}")
    return int(raw)


def prune_cache(cache: Path, limit_bytes: int, *, now: float | None = None) -> list[Path]:
    """Remove the least recently used artefacts of ``cache`` (by their time, which each use
    marks) until it holds at most ``limit_bytes``, and the partial copies interrupted
    compiles left; never one used in the last :data:`IN_USE_SECONDS`. Return what was
    removed (another process pruning at once is no matter: a file gone is skipped)."""
    now = time.time() if now is None else now
    kept: list[tuple[float, int, Path]] = []
    removed = []
    for path in cache.iterdir():
        try:
            found = path.lstat()
        except FileNotFoundError:
            continue
        recent = now - found.st_mtime < IN_USE_SECONDS
        if path.suffix == ".part" and not recent:
            path.unlink(missing_ok=True)
            removed.append(path)
        elif path.is_file() and not path.is_symlink():
            kept.append((found.st_mtime, found.st_size, path))
    total = sum(size for _, size, _ in kept)
    for mtime, size, path in sorted(kept):
        if total <= limit_bytes:
            break
        if now - mtime < IN_USE_SECONDS or path.suffix == ".part":
            continue
        path.unlink(missing_ok=True)
        removed.append(path)
        total -= size
    return removed


@functools.cache
def toolchain_version(program: str, argument: str = "--version") -> str:
    """The first line ``program --version`` (or ``argument``) prints (``g++-12 (Debian
    12.2.0-14) 12.2.0``)."""
    try:
        printed = subprocess.run(
            [program, argument], capture_output=True, text=True, timeout=30, check=False,
            env={"PATH": "/usr/bin:/bin"},
        )  # fmt: skip
    except (OSError, subprocess.SubprocessError) as exc:
        raise SandboxUnavailable(f"{program} cannot say its version: {exc}") from exc
    lines = (printed.stdout or printed.stderr).strip().splitlines()
    return lines[0] if lines else "unknown"


def _kit_files(compiler: Compiler) -> dict[str, Path]:
    return {f"{_KIT_DIR}/{name}": KITS / name for name in compiler.kit}


def artefact_key(source: bytes, runtime: BotRuntime) -> str:
    """The artefact's key: a SHA-256 of the source, the runtime's name, its toolchain's
    version, its compile steps and its kit's bytes (a new compiler or kit compiles anew)."""
    compiler = _compiler(runtime)
    digest = hashlib.sha256()
    for part in (
        hashlib.sha256(source).hexdigest(),
        runtime.name,
        toolchain_version(compiler.program, compiler.version),
        repr((compiler.steps, compiler.environment, compiler.source_name)),
        *(hashlib.sha256(path.read_bytes()).hexdigest() for path in _kit_files(compiler).values()),
    ):
        digest.update(part.encode() + b"\0")
    return digest.hexdigest()


def _compiler(runtime: BotRuntime) -> Compiler:
    if runtime.compiler is None:
        raise ValueError(f"the runtime {runtime.name} is not compiled")
    return runtime.compiler


def build(source: Path, runtime: BotRuntime, sandbox: Sandbox | None) -> Built:
    """The artefact of ``source`` under ``runtime``: from the cache, or compiled now in
    ``sandbox`` (None: unsandboxed, a developer's own bot) with the source shown under its
    own file name (or its compiler's ``source_name``).

    Raises:
        CompileError: the source does not compile, or its compile broke a limit.
        SandboxUnavailable: the toolchain or the sandbox is missing here (what to install).
        OSError: the cache cannot be written.
    """
    compiler = _compiler(runtime)
    missing = runtime_missing(runtime)
    if missing is not None:
        raise SandboxUnavailable(f"runtime {runtime.name}: {missing}")
    data = source.read_bytes()
    cache = compile_cache()
    kept = cache / f"{artefact_key(data, runtime)}-{compiler.artefact}"
    if kept.is_file():
        with contextlib.suppress(FileNotFoundError):  # (pruned at this instant: compiled anew)
            os.utime(kept)  # its last use: the cache keeps the most recently used
            return Built(kept, 0.0, True)
    started = time.monotonic()
    # (outside the private cache: the sandbox's uid must reach its /out)
    with tempfile.TemporaryDirectory(prefix="arena-compile-") as work:
        Path(work).chmod(0o711)
        out = Path(work) / "out"
        out.mkdir()
        shown = compiler.source_name or _shown_name(source.name, runtime)
        if sandbox is None:
            _compile_plain(data, shown, compiler, Path(work), out)
        else:
            _compile_sandboxed(source, shown, compiler, sandbox, out)
        produced = out / compiler.artefact
        if produced.is_symlink() or not produced.is_file():
            raise CompileError(f"the compiler left no {compiler.artefact} (nothing to run).")
        fd, copy = tempfile.mkstemp(dir=cache, suffix=".part")
        try:
            with os.fdopen(fd, "wb") as handle, produced.open("rb") as original:
                shutil.copyfileobj(original, handle)  # a file of ours, whoever wrote it
            os.chmod(copy, 0o755)
            os.replace(copy, kept)
        except BaseException:
            Path(copy).unlink(missing_ok=True)
            raise
    prune_cache(cache, cache_limit_mb() * 1024 * 1024)
    return Built(kept, time.monotonic() - started, False)


def _shown_name(name: str, runtime: BotRuntime) -> str:
    """A file name the compiler may be given: the author's, if plain (and not a worker's
    ``<sha256>`` name), else ``bot`` with the runtime's suffix."""
    plain = Path(name).name
    ok = plain.endswith(runtime.suffix) and all(c.isalnum() or c in "._-" for c in plain)
    hashed = len(plain.split(".")[0]) == 64 and all(c in "0123456789abcdef" for c in plain[:64])
    if not ok or hashed or plain.startswith((".", "-")):
        return f"bot{runtime.suffix}"
    return plain


def _argv(step: Sequence[str], source: str, out: str, kit: str) -> list[str]:
    return [arg.format(source=source, out=out, kit=kit) for arg in step]


def _toolchain(compiler: Compiler) -> HostPaths:
    """What the compiler needs from the host: its programs, the libraries they load, and
    its directories."""
    paths = HostPaths(frozenset(), frozenset(d for d in compiler.directories if os.path.isdir(d)))
    programs = {compiler.program, *compiler.programs, *(step[0] for step in compiler.steps)}
    for program in sorted(programs):
        paths |= bot_paths(program)
    return paths


def _compile_sandboxed(
    source: Path, shown: str, compiler: Compiler, sandbox: Sandbox, out: Path
) -> None:
    limited = Sandbox(COMPILE_LIMITS, sandbox.slot)
    files = {f"{_SOURCE_DIR}/{shown}": source, **_kit_files(compiler)}
    toolchain = _toolchain(compiler)
    for step in compiler.steps:
        argv = _argv(step, shown, _OUT_DIR, _KIT_DIR)
        proc = limited.build(
            files, argv[1:], program=Path(argv[0]), toolchain=toolchain, output=out,
            extra_address_mb=compiler.extra_address_mb, environment=dict(compiler.environment),
        )  # fmt: skip
        _finish(proc, limited.kill, shown, limited.started)


def _compile_plain(data: bytes, shown: str, compiler: Compiler, work: Path, out: Path) -> None:
    sources = work / "src"
    sources.mkdir()
    (sources / shown).write_bytes(data)
    extra = compiler.extra_address_mb * 1024 * 1024
    limits = [
        (r, v + extra if r == resource.RLIMIT_AS else v)
        for r, v in COMPILE_LIMITS.rlimits()
        if r != resource.RLIMIT_NPROC
    ]

    def limit() -> None:  # pragma: no cover (in the child)
        for which, value in limits:
            resource.setrlimit(which, (value, value))

    for step in compiler.steps:
        proc = subprocess.Popen(
            _argv(step, shown, str(out), str(KITS)),
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            cwd=sources, env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": str(work),
                              **dict(compiler.environment)},
            start_new_session=True, preexec_fn=limit,
        )  # fmt: skip
        _finish(proc, kill_process_group, shown)


def _finish(
    proc: subprocess.Popen[bytes],
    kill: Callable[[subprocess.Popen[bytes]], None],
    shown: str,
    ran: Callable[[subprocess.Popen[bytes]], bool] | None = None,
) -> None:
    """Wait for one compile step within :data:`COMPILE_WALL_SECONDS`, keeping the head of
    what it prints; kill it in any case. ``ran`` (a sandbox's ``started``) says, once it is killed,
    whether the compiler ran (else the sandbox failed to start).

    Raises:
        CompileError: it failed (its output, and the limit it broke, if one did).
        SandboxUnavailable: the sandbox failed to start (what its tools said).
    """
    if proc.stdin is not None:
        proc.stdin.close()  # nothing to read: a source including /dev/stdin reads its end
    heads = [_Head(proc.stdout), _Head(proc.stderr)]
    started = time.monotonic()
    try:
        proc.wait(timeout=COMPILE_WALL_SECONDS)
        timed_out = False
    except subprocess.TimeoutExpired:
        timed_out = True
    finally:
        kill(proc)
        for head in heads:
            head.join()
    elapsed = time.monotonic() - started
    printed = "".join(head.text() for head in heads[::-1])  # stderr first: the errors
    if timed_out:
        raise CompileError(
            f"the compile took longer than {COMPILE_WALL_SECONDS:g} s (wall clock), its "
            f"limit: a compile bomb or a read that never ends.{_first(printed, shown, 10)}"
        )
    if proc.returncode == 0:
        return
    if ran is not None and not ran(proc):  # (bwrap's report, not what the compiler printed)
        raise SandboxUnavailable(f"the compile sandbox failed to start: {printed[:300]}")
    raise CompileError(
        _first(printed, shown, ERROR_LINES).lstrip("\n") + _limit(printed, elapsed, proc.returncode)
    )


def _first(printed: str, shown: str, lines: int) -> str:
    """The first ``lines`` lines of what the compiler printed, at most :data:`ERROR_CHARS`
    characters, sandbox paths shown as the author sees them; "" when it printed nothing."""
    text = printed.replace(f"{_SOURCE_DIR}/{shown}", shown).replace(f"{_OUT_DIR}/", "")
    kept = text.strip("\n").splitlines()
    head = "\n".join(kept[:lines])[:ERROR_CHARS]
    more = len(kept) > lines or len(head) < len("\n".join(kept[:lines]))
    return f"\n{head}" + ("\n..." if more else "") if head else ""


#: What compilers print when a limit stopped them, and the limit it was.
_LIMIT_SIGNS = (
    (("out of memory", "memory exhausted", "std::bad_alloc", "cannot allocate"), "memory"),
    (("Killed signal", "terminated signal", "CPU time limit", "signal 24"), "time"),
    (("File size limit", "file too big", "signal 25", "No space left"), "size"),
)


def _limit(printed: str, elapsed: float, status: int) -> str:
    """Which limit the compile broke, as a sentence after its output ("" if none did); for
    a compiler that printed nothing, how it ended (``status``: its exit status, negative
    for a signal, or 128 + the signal as the sandbox reports it)."""
    limits = COMPILE_LIMITS
    said = {
        "memory": f"{limits.memory_mb} MB of memory",
        "time": f"{limits.cpu_seconds} s of CPU time",
        "size": f"{limits.file_size_mb} MB a file it writes",
    }
    for signs, which in _LIMIT_SIGNS:
        if any(sign in printed for sign in signs):
            return (
                f"\n(the compile went over its limit of {said[which]}: limits are "
                f"{said['memory']}, {said['time']}, {said['size']})"
            )
    if printed.strip():
        return ""
    number = -status if status < 0 else status - 128 if status > 128 else 0
    limits_said = f"{said['memory']}, {said['time']}, {said['size']}"
    if number in (signal.SIGKILL, signal.SIGXCPU, signal.SIGXFSZ):
        return f"the compiler was killed after {elapsed:.1f} s by its limits ({limits_said})"
    if number:
        try:
            name = signal.Signals(number).name
        except ValueError:
            name = f"signal {number}"
        return f"the compiler crashed ({name}) after {elapsed:.1f} s, printing nothing"
    return f"the compiler failed (exit status {status}) after {elapsed:.1f} s, printing nothing"


class _Head:
    """Drains a pipe in a thread, keeping its first :data:`OUTPUT_KEPT_BYTES`."""

    def __init__(self, stream: IO[bytes] | None) -> None:
        self._kept = bytearray()
        self._thread = threading.Thread(target=self._drain, args=(stream,), daemon=True)
        self._thread.start()

    def _drain(self, stream: IO[bytes] | None) -> None:
        if stream is None:
            return
        with stream:
            while chunk := os.read(stream.fileno(), 1 << 16):
                if len(self._kept) < OUTPUT_KEPT_BYTES:
                    self._kept += chunk[: OUTPUT_KEPT_BYTES - len(self._kept)]

    def join(self) -> None:
        self._thread.join(timeout=5)

    def text(self) -> str:
        return self._kept.decode("utf-8", "replace")
