"""Run untrusted bot processes in a bubblewrap sandbox.

Every uploaded bot runs as ``interpreter argv...`` inside ``bwrap`` with:

- no network (``--unshare-all``: a loopback with nothing listening), a fresh PID
  namespace, ``--die-with-parent``, ``--new-session``, ``--clearenv`` plus a tiny
  fixed environment (``SANDBOX_ENV``), no further user namespaces;
- a minimal read-only filesystem: the bot's runtime only (its interpreter, the shared
  libraries it loads and, for Python, the standard library: :mod:`arena.match.hostpaths`;
  for the ``python-numpy`` runtime also numpy's environment and the libraries it loads:
  :mod:`arena.match.runtimes`; never the rest of ``/usr``), the merged-usr ``/bin``,
  ``/lib``... links, ``/etc/ld.so.cache`` and ``/etc/localtime``, the bot's ``files``
  (copied in read-only by bwrap from file descriptors, so no host path is ever
  shown), a size-capped private ``/tmp``, ``/proc`` and a minimal ``/dev``;
- an unprivileged uid of its own per slot (``SLOT_UID_BASE + slot``): when the
  referee runs as root it drops to that uid with ``setpriv`` *before* bwrap, since
  bwrap started by root keeps the bot root;
- a seccomp filter (``DENIED_SYSCALLS`` fail with EPERM; so do ``fork``, ``vfork`` and a
  ``clone`` that is not a thread's or that asks for namespaces: a bot may start threads,
  never processes; ``clone3`` fails with ENOSYS so libc falls back to ``clone``);
- resource limits (``Limits``, set by util-linux ``prlimit`` before it execs the rest, so
  they hold from setpriv's, bwrap's and the bot's first instruction; RLIMIT_AS raised by the
  runtime's ``extra_address_mb`` for Node's reservations), and a per-slot memory cgroup
  (v1 or v2) where the host lets us create one, joined by a shell (``sh -c``) that then
  execs ``prlimit``: no Python runs between fork and exec, so ``subprocess`` starts the
  launcher with ``vfork`` instead of copying the referee's whole process.

Whether a process that ended had its program run (its failure the bot's) or the harness
failed first (the launcher's shell, prlimit, setpriv, bwrap's setup or its exec of the
program) is bwrap's own status report (``--json-status-fd``), read when it is killed:
``Sandbox.started``. Never the words on its stderr: a bot can write ``bwrap: ...`` too.

One slot runs one bot process at a time (its uid, its cgroup and its process
count are the slot's). Call ``Sandbox.kill`` on every process ``spawn`` returned,
even one that has exited: it kills the whole sandbox and reaps it. Call ``spawn``
from a thread that outlives the bot (e.g. the main thread): ``--die-with-parent``
is the kernel's parent-death signal, sent when the *thread* that forked bwrap exits.

Where isolation is unavailable ``spawn`` raises ``SandboxUnavailable`` naming
what is missing: nothing ever silently runs unsandboxed. ``plain_spawn`` is the
explicit, unsandboxed local mode, for a developer's own bots only.

Importing this module needs only the standard library; the seccomp binding
(PyPI ``pyseccomp``, or Debian's ``python3-seccomp`` module ``seccomp``) is
imported on first use.
"""

from __future__ import annotations

import ctypes
import dataclasses
import errno
import fcntl
import functools
import importlib
import logging
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import ExitStack, suppress
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from arena.errors import ArenaError
from arena.match.hostpaths import HostPaths, bot_paths, interpreter_of
from arena.match.runtimes import find_runtime, host_paths, runtime_missing

__all__ = [
    "DENIED_SYSCALLS",
    "SANDBOX_ENV",
    "SLOT_UID_BASE",
    "Limits",
    "Sandbox",
    "SandboxUnavailable",
    "check_sandbox",
    "check_sandbox_report",
    "claim_slot_block",
    "die_with_parent",
    "kill_process_group",
    "plain_spawn",
    "process_slots",
]

logger = logging.getLogger(__name__)

#: Slot ``n`` runs as uid and gid ``SLOT_UID_BASE + n`` (on the host when the
#: referee is root; inside the user namespace otherwise).
SLOT_UID_BASE = 61000

#: The whole environment a sandboxed bot sees.
SANDBOX_ENV: Mapping[str, str] = {
    "PATH": "/usr/bin:/bin",
    "HOME": "/tmp",
    "LANG": "C.UTF-8",
    "PYTHONDONTWRITEBYTECODE": "1",
    # numpy's OpenBLAS (and any OpenMP) would start a thread per core: a bot computes on
    # one, its CPU time is all charged to it, and each thread reserves address space.
    "OPENBLAS_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    # glibc reserves 64 MB of address space per malloc arena, one per thread up to 8 per
    # core: under RLIMIT_AS a bot with a dozen threads could not start more. Two arenas
    # leave the memory limit to what the bot actually uses.
    "MALLOC_ARENA_MAX": "2",
}

#: Syscalls the seccomp filter answers with EPERM (names unknown to the host's
#: architecture are skipped). Debugging other processes, kernel attack surface
#: (io_uring, bpf, perf, userfaultfd, keyrings), SysV IPC (not bounded by
#: RLIMIT_AS), mounts and namespaces, and host administration.
DENIED_SYSCALLS: tuple[str, ...] = (
    # other processes' memory
    "ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd", "kcmp",
    "process_madvise",
    # kernel attack surface
    "io_uring_setup", "io_uring_enter", "io_uring_register", "bpf", "perf_event_open",
    "userfaultfd", "fanotify_init", "open_by_handle_at", "name_to_handle_at",
    "lookup_dcookie", "uselib", "modify_ldt", "iopl", "ioperm",
    # keyrings
    "keyctl", "add_key", "request_key",
    # SysV IPC
    "shmget", "shmat", "shmdt", "shmctl", "semget", "semop", "semtimedop", "semctl",
    "msgget", "msgsnd", "msgrcv", "msgctl",
    # mounts and namespaces
    "mount", "umount2", "pivot_root", "chroot", "unshare", "setns", "fsopen", "fsconfig",
    "fsmount", "fspick", "move_mount", "open_tree", "mount_setattr",
    # host administration
    "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
    "personality", "reboot", "swapon", "swapoff", "acct", "quotactl", "quotactl_fd",
    "syslog", "vhangup", "settimeofday", "clock_settime", "clock_adjtime", "adjtimex",
    "sethostname", "setdomainname", "mbind", "migrate_pages", "move_pages",
    "set_mempolicy",
)  # fmt: skip

# clone(2) flags that create namespaces: denied by the filter (flags are arg 0 on
# x86-64 and arm64).
_CLONE_NAMESPACE_FLAGS = (
    0x00000080,  # CLONE_NEWTIME
    0x00020000,  # CLONE_NEWNS
    0x02000000,  # CLONE_NEWCGROUP
    0x04000000,  # CLONE_NEWUTS
    0x08000000,  # CLONE_NEWIPC
    0x10000000,  # CLONE_NEWUSER
    0x20000000,  # CLONE_NEWPID
    0x40000000,  # CLONE_NEWNET
)

#: clone(2)'s flag for a thread (shares the caller's process): the only clone allowed.
_CLONE_THREAD = 0x00010000

_TOOL_PATH = "/usr/bin:/bin:/usr/sbin:/sbin"
_CGROUP_ROOT = Path("/sys/fs/cgroup")
_CGROUP_NAME = "domino-arena"
_MERGED_USR = ("/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32")
_ETC_FILES = ("/etc/ld.so.cache", "/etc/localtime")
_MB = 1024 * 1024


@dataclass(frozen=True, slots=True)
class Limits:
    """Resource limits of one sandboxed process (and all it starts)."""

    memory_mb: int = 512  # RLIMIT_AS of every process; the slot's cgroup memory limit
    # RLIMIT_CPU: a hard backstop behind the referee's clock, for a process's whole life;
    # the referee raises it for a match's length (arena.match.process.match_cpu_seconds).
    cpu_seconds: int = 60
    processes: int = 64  # RLIMIT_NPROC: counted per uid, hence one uid per slot
    file_size_mb: int = 16  # RLIMIT_FSIZE
    open_files: int = 64  # RLIMIT_NOFILE
    tmp_size_mb: int = 16  # size of the private /tmp

    def rlimits(self) -> list[tuple[int, int]]:
        """The ``(resource, value)`` pairs set as both soft and hard limits."""
        return [
            (resource.RLIMIT_AS, self.memory_mb * _MB),
            (resource.RLIMIT_CPU, self.cpu_seconds),
            (resource.RLIMIT_NPROC, self.processes),
            (resource.RLIMIT_FSIZE, self.file_size_mb * _MB),
            (resource.RLIMIT_NOFILE, self.open_files),
            (resource.RLIMIT_CORE, 0),
        ]


class SandboxUnavailable(ArenaError):  # noqa: N818 (the name the referee expects)
    """The sandbox cannot be started here; the message says what is missing and how to get it."""


# --- what the host offers -------------------------------------------------------------


def _is_root() -> bool:
    return os.geteuid() == 0


@functools.cache
def _tool(name: str) -> str | None:
    return shutil.which(name) or shutil.which(name, path=_TOOL_PATH)


def _seccomp_module() -> Any:
    """The libseccomp binding: PyPI ``pyseccomp``, else Debian's ``seccomp``."""
    errors = []
    for name in ("pyseccomp", "seccomp"):
        try:
            return importlib.import_module(name)
        except (ImportError, OSError) as exc:  # pyseccomp raises OSError without libseccomp
            errors.append(f"{name}: {exc}")
    raise SandboxUnavailable(
        "seccomp library missing (" + "; ".join(errors) + "): pip install pyseccomp"
        " and apt-get install libseccomp2"
    )


@functools.cache
def _seccomp_bpf(processes: bool = False) -> bytes:
    """The compiled seccomp filter (BPF), built once per process; with ``processes`` (a
    toolchain's driver starts its compiler, assembler and linker) new processes are allowed,
    bounded by RLIMIT_NPROC, and namespaces still are not."""
    sc = _seccomp_module()
    flt = sc.SyscallFilter(defaction=sc.ALLOW)
    for name in DENIED_SYSCALLS:
        try:
            flt.add_rule(sc.ERRNO(errno.EPERM), name)
        except (OSError, ValueError, RuntimeError):
            logger.debug("seccomp: syscall %s unknown here, not filtered", name)
    for flag in _CLONE_NAMESPACE_FLAGS:
        flt.add_rule(sc.ERRNO(errno.EPERM), "clone", sc.Arg(0, sc.MASKED_EQ, flag, flag))
    # No new processes, threads only: a clone without CLONE_THREAD is a fork (os.fork,
    # subprocess, multiprocessing, a daemonising bot), and fork/vfork are denied outright.
    if not processes:
        flt.add_rule(sc.ERRNO(errno.EPERM), "clone", sc.Arg(0, sc.MASKED_EQ, _CLONE_THREAD, 0))
    for name in () if processes else ("fork", "vfork"):
        try:
            flt.add_rule(sc.ERRNO(errno.EPERM), name)
        except (OSError, ValueError, RuntimeError):
            logger.debug("seccomp: syscall %s unknown here, not filtered", name)
    # clone3 passes its flags in memory the filter cannot read: make libc fall back.
    flt.add_rule(sc.ERRNO(errno.ENOSYS), "clone3")
    with tempfile.TemporaryFile() as f:
        flt.export_bpf(f)
        f.seek(0)
        return f.read()


def _userns_problem() -> str | None:
    """Why unprivileged user namespaces cannot be created here, if a sysctl says so."""
    checks = (
        ("/proc/sys/user/max_user_namespaces", "0", "sysctl -w user.max_user_namespaces=15000"),
        ("/proc/sys/kernel/unprivileged_userns_clone", "0",
         "sysctl -w kernel.unprivileged_userns_clone=1"),
        ("/proc/sys/kernel/apparmor_restrict_unprivileged_userns", "1",
         "sysctl -w kernel.apparmor_restrict_unprivileged_userns=0"),
    )  # fmt: skip
    for path, bad, fix in checks:
        try:
            value = Path(path).read_text().strip()
        except OSError:
            continue
        if value == bad:
            return f"unprivileged user namespaces disabled ({path} = {value}): {fix}"
    return None


def _static_problems() -> list[str]:
    if not sys.platform.startswith("linux"):
        return [f"the sandbox needs Linux (this is {sys.platform}): use the unsandboxed local mode"]
    missing = []
    if _tool("bwrap") is None:
        missing.append("bwrap not found: apt-get install bubblewrap")
    if _is_root() and _tool("setpriv") is None:
        missing.append("setpriv not found (needed to drop root): apt-get install util-linux")
    if _tool("prlimit") is None:
        missing.append("prlimit not found (it sets the rlimits): apt-get install util-linux")
    try:
        _seccomp_bpf()
    except SandboxUnavailable as exc:
        missing.append(str(exc))
    except OSError as exc:
        missing.append(f"seccomp filter cannot be built: {exc}")
    problem = _userns_problem()
    if problem:
        missing.append(problem)
    return missing


def check_sandbox() -> list[str]:
    """The missing pieces, each with how to get it; ``[]`` when a sandbox starts here.

    Cached: the first call starts one trivial sandboxed process (about 15 ms).
    """
    return list(_check_sandbox())


@functools.cache
def _check_sandbox() -> tuple[str, ...]:
    missing = _static_problems()
    if missing:
        return tuple(missing)
    # The trial runs in the first slot of this process's block (the registry's), so that
    # no other run's slot can make it fail, and it leaves nothing behind.
    try:
        trial = Sandbox(Limits(), slot=process_slots())
    except SandboxUnavailable as exc:
        return (str(exc),)
    try:
        proc = trial._start({}, ["-I", "-S", "-c", "print('ok')"], Path("/usr/bin/python3"))
    except (OSError, subprocess.SubprocessError) as exc:
        return (f"the sandbox cannot start: {exc}",)
    try:
        out, err = proc.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        out, err = b"", b"timed out after 20 s"
    finally:
        trial.kill(proc)
        for pipe in (proc.stdin, proc.stdout, proc.stderr):
            if pipe is not None:
                pipe.close()
    if proc.returncode != 0 or out.strip() != b"ok":
        detail = err.decode(errors="replace").strip()[-500:]
        hint = _userns_problem() or "are unprivileged user namespaces allowed?"
        return (f"bwrap cannot create a sandbox here ({hint}): {detail}",)
    return ()


def check_sandbox_report() -> str:
    """One paragraph describing the isolation ``spawn`` gives on this host."""
    missing = check_sandbox()
    if missing:
        return "sandbox unavailable: " + "; ".join(missing)
    version = subprocess.run(
        [_tool("bwrap") or "bwrap", "--version"], capture_output=True, text=True, check=False
    ).stdout.strip()
    cgroup = _cgroup_kind()
    if _is_root():
        who = f"setpriv to uid/gid {SLOT_UID_BASE}+slot, then bwrap"
    else:
        who = f"bwrap as uid {os.getuid()} (uid {SLOT_UID_BASE}+slot inside)"
    memory = (
        f"memory cgroup {cgroup} per slot"
        if cgroup
        else "no memory cgroup (not offered or not writable here): rlimits only"
    )
    return (
        f"sandbox: {version}, {who}; namespaces: all (no network), fresh pid namespace; "
        f"seccomp: {len(DENIED_SYSCALLS)} syscalls denied + namespace clone flags; "
        f"rlimits: AS, CPU, NPROC, FSIZE, NOFILE, CORE; {memory}"
    )


# --- cgroups --------------------------------------------------------------------------


@functools.cache
def _cgroup_kind() -> str | None:
    """``"v2"`` or ``"v1"`` when this process can make a slot's memory cgroup and set its
    limit here (tried on a cgroup of its own, then removed), else None: rlimits only. A
    cgroup another user made (root's, say) is never assumed to be writable."""
    for kind in ("v2", "v1"):
        probe = f"probe-{os.getpid()}"
        try:
            if _cgroup_dir(probe, 64 * _MB, kind) is not None:
                return kind
        except OSError:
            continue
        finally:
            _remove_cgroup(probe)
    return None


def _cgroup_path(name: str, kind: str) -> Path:
    if kind == "v2":
        return _CGROUP_ROOT / _CGROUP_NAME / name
    return _CGROUP_ROOT / "memory" / _CGROUP_NAME / name


def _remove_cgroup(name: str) -> None:
    """Remove a slot's (or a probe's) cgroup once its processes are gone; a cgroup still
    in use, or another user's, is left alone."""
    for kind in ("v2", "v1"):
        with suppress(OSError):
            _cgroup_path(name, kind).rmdir()


def _cgroup_dir(name: str, memory_bytes: int | None, kind: str) -> Path | None:
    """Create (or reuse) the memory cgroup ``name`` (``slot-N``) and set its limit; None
    if the host offers no such controller.

    Raises OSError when the host offers the controller but refuses the writes (then the
    cgroup is unusable).
    """
    if kind == "v2":
        if "memory" not in _read(_CGROUP_ROOT / "cgroup.controllers").split():
            return None
        base = _CGROUP_ROOT / _CGROUP_NAME
        if "memory" not in _read(_CGROUP_ROOT / "cgroup.subtree_control").split():
            (_CGROUP_ROOT / "cgroup.subtree_control").write_text("+memory")
        base.mkdir(exist_ok=True)
        if "memory" not in _read(base / "cgroup.subtree_control").split():
            (base / "cgroup.subtree_control").write_text("+memory")
        path = _cgroup_path(name, kind)
        path.mkdir(exist_ok=True)
        if memory_bytes is not None:
            (path / "memory.max").write_text(str(memory_bytes))
            if (path / "memory.swap.max").exists():
                (path / "memory.swap.max").write_text("0")
        return path
    root = _CGROUP_ROOT / "memory"
    if not (root / "memory.limit_in_bytes").exists():
        return None
    path = _cgroup_path(name, kind)
    path.mkdir(parents=True, exist_ok=True)
    if memory_bytes is not None:
        # memory + swap gets the same cap (no swapping past it). The kernel wants
        # memsw >= memory at every step: raise memsw first, or lower it last.
        memsw = path / "memory.memsw.limit_in_bytes"
        with suppress(OSError):
            memsw.write_text(str(memory_bytes))
        (path / "memory.limit_in_bytes").write_text(str(memory_bytes))
        with suppress(OSError):
            memsw.write_text(str(memory_bytes))
    return path


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


# --- processes ------------------------------------------------------------------------


#: util-linux ``prlimit``'s option for each resource limit :class:`Limits` sets.
_PRLIMIT_OPTIONS = {
    resource.RLIMIT_AS: "--as",
    resource.RLIMIT_CPU: "--cpu",
    resource.RLIMIT_NPROC: "--nproc",
    resource.RLIMIT_FSIZE: "--fsize",
    resource.RLIMIT_NOFILE: "--nofile",
    resource.RLIMIT_CORE: "--core",
}

#: The shell's words that move the shell itself into the memory cgroup whose ``cgroup.procs``
#: is ``$0`` (``0`` is the writer), then become the rest of the command: everything it
#: starts is in the cgroup. On failure it says so in a line beginning ``sandbox:``.
_JOIN_CGROUP = (
    '{ echo 0 >"$0"; } 2>/dev/null'
    ' || { echo "sandbox: cannot join the memory cgroup $0" >&2; exit 125; }; exec "$@"'
)


def _limited(rlimits: Sequence[tuple[int, int]]) -> list[str]:
    """The words of a command prefix setting ``rlimits`` (soft and hard) before it execs
    the rest: util-linux ``prlimit``."""
    words = [_tool("prlimit") or "prlimit"]
    words += [f"{_PRLIMIT_OPTIONS[res]}={value}:{value}" for res, value in rlimits]
    return [*words, "--"]


def _joined(cgroup_procs: str | None, command: list[str]) -> list[str]:
    """``command`` run in the memory cgroup of ``cgroup_procs`` (joined by a shell before it
    execs the command; the command as it is without a cgroup)."""
    if cgroup_procs is None:
        return command
    return [_tool("sh") or "/bin/sh", "-c", _JOIN_CGROUP, cgroup_procs, *command]


def _user_process_count(uid: int) -> int:
    """How many processes ``uid`` owns (RLIMIT_NPROC counts them all)."""
    return sum(1 for _ in _pids_of(uid))


def _pids_of(uid: int) -> Iterator[int]:
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                if entry.stat().st_uid == uid:
                    yield int(entry.name)
            except OSError:
                continue


def _children(pid: int) -> list[int]:
    """The direct children of ``pid``."""
    try:
        return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except (OSError, ValueError):
        pass
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                stat = Path(entry.path, "stat").read_text()
            except OSError:
                continue
            if int(stat.rpartition(")")[2].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def kill_process_group(proc: subprocess.Popen[bytes], *, grace: float = 2.0) -> None:
    """SIGKILL ``proc``'s process group (``proc`` leads it) and reap ``proc``."""
    if proc.returncode is None:
        with suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=max(grace, 1.0) * 5)


class _Sandboxed(subprocess.Popen[bytes]):
    """A process :meth:`Sandbox._start` started: with the read end of bwrap's status
    report (``--json-status-fd``) until :meth:`Sandbox.kill` reads it."""

    status = -1
    #: Whether bwrap reported the exit of the program it ran (read by :meth:`Sandbox.kill`).
    program_ran = False

    def read_status(self) -> None:
        """Read bwrap's report (once its writer, bwrap, has exited: all of it) and close it.

        bwrap 0.8 writes ``{"child-pid": N, ...}`` once it has cloned the sandbox's first
        process, *before* setting the sandbox up, and ``{"exit-code": N}`` when that process
        exits, only if it had set the sandbox up and executed the program (a pipe of its own
        tells it, closed by the exec): so nothing before that exec -- the launcher's shell,
        prlimit, setpriv, bwrap's setup, its exec of the interpreter -- writes the second,
        and nothing after it (the bot) can write or withhold it.
        """
        if self.status < 0:
            return
        fd, self.status = self.status, -1
        data = b""
        try:
            while chunk := os.read(fd, 4096):
                data += chunk
        except BlockingIOError:  # (bwrap still running: the exit not reported yet)
            pass
        finally:
            os.close(fd)
        self.program_ran = b'"exit-code"' in data


class Sandbox:
    """Starts bot processes in the sandbox of one slot, under one set of limits.

    Raises ``SandboxUnavailable`` (from ``spawn``) where the sandbox cannot run.
    """

    def __init__(self, limits: Limits = Limits(), slot: int = 0) -> None:
        if slot < 0:
            raise ValueError(f"slot must be >= 0, not {slot}")
        self.limits = limits
        self.slot = slot
        self.uid = SLOT_UID_BASE + slot

    def __repr__(self) -> str:
        return f"Sandbox({self.limits!r}, slot={self.slot})"

    def with_cpu_seconds(self, seconds: int) -> Sandbox:
        """The same sandbox with its CPU backstop raised to ``seconds`` (never lowered):
        a bot process lives for a whole match, so its lifetime limit must cover them all."""
        if seconds <= self.limits.cpu_seconds:
            return self
        return type(self)(dataclasses.replace(self.limits, cpu_seconds=seconds), self.slot)

    def spawn(
        self,
        files: Mapping[str, Path],
        argv: Sequence[str],
        *,
        interpreter: Path = Path("/usr/bin/python3"),
        runtime: str | None = None,
    ) -> subprocess.Popen[bytes]:
        """Start ``interpreter argv...`` in the sandbox, with binary stdin/stdout/stderr pipes.

        ``runtime`` (a name of :data:`arena.match.runtimes.RUNTIMES`) binds what that runtime
        needs besides its interpreter (numpy's environment) and sets its address-space
        limit (the memory limit plus its ``extra_address_mb``).

        ``files`` maps absolute paths inside the sandbox (``"/bot/bot.py"``) to host
        files, copied in read-only; the working directory is the first file's
        directory (``/tmp`` without files). ``argv`` are the interpreter's
        arguments, e.g. ``["-I", "/kit/botkit.py", "/bot/bot.py"]``. The
        interpreter must be a path inside the sandbox (under ``/usr``, or one of
        ``files``). Raises SandboxUnavailable, or ValueError for bad arguments.
        """
        missing = check_sandbox()
        if missing:
            raise SandboxUnavailable("; ".join(missing))
        if argv and argv[0] == str(interpreter):
            raise ValueError("argv holds the interpreter's arguments, not the interpreter")
        inside = str(interpreter)
        if runtime is not None:
            problem = runtime_missing(find_runtime(runtime))
            if problem is not None:
                raise SandboxUnavailable(f"runtime {runtime}: {problem}")
        if inside not in files and not Path(inside).exists():
            raise SandboxUnavailable(f"interpreter {inside} not found: apt-get install python3")
        try:
            return self._start(files, argv, interpreter, runtime)
        except subprocess.SubprocessError as exc:
            raise SandboxUnavailable(f"the sandbox cannot start: {exc}") from exc

    def build(
        self,
        files: Mapping[str, Path],
        argv: Sequence[str],
        *,
        program: Path,
        toolchain: HostPaths,
        output: Path,
        extra_address_mb: int = 0,
        environment: Mapping[str, str] | None = None,
    ) -> subprocess.Popen[bytes]:
        """Start a toolchain's ``program argv...`` (a compiler) in the sandbox: as
        :meth:`spawn`, but it may start processes (its compiler, assembler, linker: at most
        the limits' ``processes``), sees ``toolchain`` (host paths, read-only) and writes
        only to the host directory ``output``, shown at ``/out`` (each file it writes at
        most the limits' ``file_size_mb``); its RLIMIT_AS is the memory limit plus
        ``extra_address_mb`` (a JVM's reservations); ``environment`` is set besides
        :data:`SANDBOX_ENV`. Raises SandboxUnavailable."""
        missing = check_sandbox()
        if missing:
            raise SandboxUnavailable("; ".join(missing))
        if _is_root():
            os.chown(output, self.uid, self.uid)  # the slot's uid writes it
        try:
            return self._start(
                files, argv, program, toolchain=toolchain, output=output,
                extra_mb=extra_address_mb, environment=environment,
            )  # fmt: skip
        except subprocess.SubprocessError as exc:
            raise SandboxUnavailable(f"the sandbox cannot start: {exc}") from exc

    def _start(
        self,
        files: Mapping[str, Path],
        argv: Sequence[str],
        interpreter: Path,
        runtime_name: str | None = None,
        *,
        toolchain: HostPaths | None = None,
        output: Path | None = None,
        extra_mb: int = 0,
        environment: Mapping[str, str] | None = None,
    ) -> subprocess.Popen[bytes]:
        paths = [_inside_path(p) for p in files]
        cwd = str(PurePosixPath(paths[0]).parent) if paths else "/tmp"
        with ExitStack() as stack:
            fds: list[int] = []

            def track(fd: int) -> int:
                stack.callback(os.close, fd)
                fds.append(fd)
                return fd

            seccomp_fd = track(_pipe_with(_seccomp_bpf(toolchain is not None)))
            runtime = _runtime(files, interpreter) if toolchain is None else toolchain
            if runtime_name is not None:
                chosen = find_runtime(runtime_name)
                runtime |= host_paths(chosen)
                extra_mb = chosen.extra_address_mb
            args = [_tool("bwrap") or "bwrap", *self._bwrap_options(runtime)]
            for key, value in (environment or {}).items():
                args += ["--setenv", key, value]
            for inside, host in zip(paths, files.values(), strict=True):
                fd = track(os.open(host, os.O_RDONLY | os.O_CLOEXEC))
                perms = "0555" if inside == str(interpreter) else "0444"  # a bot binary runs
                args += ["--perms", perms, "--ro-bind-data", str(fd), inside]
            if output is not None:
                args += ["--bind", str(output), "/out"]
            args += ["--remount-ro", "/", "--chdir", cwd, "--seccomp", str(seccomp_fd)]
            # No preexec_fn: it would make subprocess fork this whole (often large) process
            # and run Python in the child; the launcher's programs set the same limits
            # before they exec the next one, so they hold from the bot's first instruction.
            launch = _joined(self._cgroup_procs(), _limited(self._rlimits(extra_mb)))
            # bwrap's status report (Sandbox.started): this process keeps its read end.
            status, status_write = os.pipe()
            stack.callback(os.close, status)
            args += ["--json-status-fd", str(track(status_write))]
            args += ["--", str(interpreter), *argv]
            proc = _Sandboxed(
                launch + self._privilege_drop() + args,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env={"PATH": _TOOL_PATH},
                cwd="/",
                pass_fds=fds,
                start_new_session=True,
            )
            proc.status = os.dup(status)  # (closed by kill; the pipe's other fds here)
            os.set_blocking(proc.status, False)
        return proc

    def _bwrap_options(self, runtime: HostPaths) -> list[str]:
        # --as-pid-1: the bot is the namespace's pid 1, so the outer bwrap waits for it
        # and reaps it. With bwrap's own reaper as pid 1, the outer bwrap exits on its
        # status report without reaping it: the reaper then becomes the host init's
        # zombie, counted against the slot's RLIMIT_NPROC until that init reaps it.
        opts = ["--unshare-all", "--unshare-user", "--disable-userns", "--as-pid-1"]
        opts += ["--die-with-parent"]
        opts += ["--new-session", "--hostname", "sandbox", "--clearenv"]
        opts += ["--uid", str(self.uid), "--gid", str(self.uid)]
        for key, value in SANDBOX_ENV.items():
            opts += ["--setenv", key, value]
        # Only the bot's runtime, never the rest of /usr (arena.match.hostpaths).
        for directory in sorted(runtime.directories):
            opts += ["--ro-bind", directory, directory]
        for directory in sorted(runtime.hidden):
            opts += ["--tmpfs", directory]
        for file in sorted(runtime.files):
            target = _link_within(file, runtime)
            if target is None:
                opts += ["--ro-bind", file, file]
            else:  # a symlink to a file bound anyway: made as a link, not one more mount
                opts += ["--symlink", target, file]
        for top in _MERGED_USR:
            if os.path.islink(top):
                opts += ["--symlink", os.readlink(top), top]
            elif os.path.isdir(top):
                opts += ["--ro-bind", top, top]
        for etc in _ETC_FILES:
            opts += ["--ro-bind-try", etc, etc]
        opts += ["--proc", "/proc", "--dev", "/dev"]
        opts += ["--size", str(self.limits.tmp_size_mb * _MB), "--tmpfs", "/tmp"]
        opts += ["--size", str(_MB), "--tmpfs", "/dev/shm"]
        return opts

    def _privilege_drop(self) -> list[str]:
        if not _is_root():
            return []
        return [
            _tool("setpriv") or "setpriv",
            f"--reuid={self.uid}",
            f"--regid={self.uid}",
            "--clear-groups",
            "--inh-caps=-all",
            "--bounding-set=-all",
            "--no-new-privs",
            "--",
        ]

    def _rlimits(self, extra_address_mb: int = 0) -> list[tuple[int, int]]:
        limits = [
            (r, v + extra_address_mb * _MB if r == resource.RLIMIT_AS else v)
            for r, v in self.limits.rlimits()
        ]
        if _is_root():
            return limits
        # Not root: the processes run as the user's own uid, whose other processes
        # count against RLIMIT_NPROC too.
        extra = _user_process_count(os.getuid())
        return [(r, v + extra if r == resource.RLIMIT_NPROC else v) for r, v in limits]

    def _cgroup_procs(self) -> str | None:
        """The slot's ``cgroup.procs`` with its memory limit set; None without cgroups."""
        kind = _cgroup_kind()
        if kind is None:
            return None
        try:
            path = _cgroup_dir(f"slot-{self.slot}", self.limits.memory_mb * _MB, kind)
        except OSError as exc:
            raise SandboxUnavailable(f"memory cgroup {kind} of slot {self.slot}: {exc}") from exc
        return None if path is None else str(path / "cgroup.procs")

    def kill(self, proc: subprocess.Popen[bytes], *, grace: float = 2.0) -> None:
        """Kill the whole sandbox of ``proc`` (every process in it) and reap it.

        Safe to call on a process that has exited. The sandbox's pid 1 (the bot) is
        killed first, which kills its whole PID namespace, and bwrap reaps it
        before exiting, so no zombie is left counting against the slot's
        RLIMIT_NPROC; then bwrap's process group is killed and reaped.
        """
        if proc.returncode is None and proc.poll() is None:
            for child in _children(proc.pid):
                with suppress(ProcessLookupError, PermissionError):
                    os.kill(child, signal.SIGKILL)
            with suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=grace)
        kill_process_group(proc, grace=grace)
        if isinstance(proc, _Sandboxed):
            proc.read_status()
        _remove_cgroup(f"slot-{self.slot}")

    def started(self, proc: subprocess.Popen[bytes]) -> bool:
        """Whether the sandbox of ``proc`` was set up and its program ran, so that its failure
        is the program's (the bot's) whatever it wrote; False: the harness failed first (the
        launcher's shell could not join the cgroup, prlimit, setpriv or bwrap failed, or
        bwrap could not execute the program), as their words on its stderr say. Ask once
        :meth:`kill` has reaped ``proc``: bwrap's own status report says which
        (:meth:`_Sandboxed.read_status`), never what the program prints."""
        return isinstance(proc, _Sandboxed) and proc.program_ran


def _runtime(files: Mapping[str, Path], interpreter: Path) -> HostPaths:
    """What the bot's interpreter needs from the host: ``interpreter`` itself, or, when
    the bot file is the program, the interpreter its ``#!`` line names."""
    host = files.get(str(interpreter))
    programs = [str(interpreter)] if host is None else interpreter_of(Path(host))
    runtime = HostPaths(frozenset())
    for program in programs:
        runtime |= bot_paths(program)
    return runtime


def _link_within(file: str, runtime: HostPaths) -> str | None:
    """Where ``file`` leads when it is a symlink to another of the runtime's files in its own
    directory (bound anyway, or itself such a link: a library's ``libz.so.1 ->
    libz.so.1.2.13``, ``python3 -> python3.11``), so that the sandbox may show it as that
    link (about a quarter of a millisecond of CPU less a start than a bind mount) and still
    shows nothing else; None otherwise (it is bound)."""
    try:
        link = os.readlink(file)
    except OSError:  # not a symlink (or gone: bwrap then says so)
        return None
    if "/" in link:  # (elsewhere: the path it names may not be the file it leads to)
        return None
    target = os.path.join(os.path.dirname(file), link)
    if target not in runtime.files or any(
        file.startswith(directory + "/") for directory in runtime.directories
    ):
        return None
    return target


def _inside_path(path: str) -> str:
    pure = PurePosixPath(path)
    if not pure.is_absolute() or ".." in pure.parts or str(pure) in ("/",):
        raise ValueError(f"sandbox path must be absolute and plain: {path!r}")
    for top in ("/usr", "/proc", "/dev", "/etc", *_MERGED_USR):
        if pure == PurePosixPath(top) or PurePosixPath(top) in pure.parents:
            raise ValueError(f"sandbox path {path!r} would shadow {top}")
    return str(pure)


def _pipe_with(data: bytes) -> int:
    """A pipe's read end holding ``data`` (then EOF)."""
    read, write = os.pipe()
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(write, view) :]
    finally:
        os.close(write)
    return read


# --- unsandboxed local mode -----------------------------------------------------------


def plain_spawn(
    files: Mapping[str, Path],
    argv: Sequence[str],
    *,
    interpreter: Path | None = None,
) -> subprocess.Popen[bytes]:
    """UNSANDBOXED: start ``interpreter argv...`` as a plain subprocess.

    Only for a developer's own bots on their own machine (the explicit local
    mode): the bot can read and write everything the caller can. Same interface
    as ``Sandbox.spawn``: each ``argv`` item naming a key of ``files`` is replaced
    by its host path, the working directory is the first file's directory, the
    interpreter defaults to the current one; the bot dies with the thread that started it
    (as ``--die-with-parent``; asked for by ``setpriv --pdeathsig`` where util-linux is
    installed, else by :func:`die_with_parent` in a forked child). Kill with
    ``kill_process_group``.
    """
    host = {inside: str(Path(path).resolve()) for inside, path in files.items()}
    args = [str(interpreter or sys.executable), *(host.get(a, a) for a in argv)]
    cwd = str(Path(next(iter(host.values()))).parent) if host else None
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "TMPDIR")}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    # The parent-death signal: without it a bot whose worker was killed (-9) outlives it,
    # stopped for ever if it was a kept bot paused between matches. util-linux setpriv asks
    # for it before it execs the bot, so subprocess starts setpriv with vfork; only without
    # setpriv does a preexec_fn (a fork of this whole process) ask for it.
    setpriv = _tool("setpriv")
    if setpriv is not None:
        args = [setpriv, "--pdeathsig", "KILL", "--", *args]
    return subprocess.Popen(
        args,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=cwd,
        start_new_session=True,
        preexec_fn=None if setpriv else functools.partial(die_with_parent, os.getpid()),
    )


#: prctl(2)'s option: the signal the kernel sends a process when the thread that started it
#: exits.
PR_SET_PDEATHSIG = 1
#: libc's prctl(2), looked up as this module is imported: before any fork, never in a child
#: between fork and exec (the dynamic loader's lock may be held there by another thread of
#: the parent's at the fork).
_PRCTL = ctypes.CDLL(None, use_errno=True).prctl


def die_with_parent(parent: int | None = None) -> None:
    """In a child (between fork and exec, or a forked Python process): SIGKILL when the
    thread that started it exits, what bwrap's ``--die-with-parent`` gives a sandboxed bot.
    With ``parent`` (the starter's pid, taken before the fork), a starter already gone before
    the signal was asked for is checked for too."""
    _PRCTL(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if parent is not None and os.getppid() != parent:
        os.kill(os.getpid(), signal.SIGKILL)


# --- the machine-wide slot registry -------------------------------------------------------

#: Where :func:`claim_slot_block` keeps its lock files (one per block; machine-wide, shared by
#: every user: sticky and world-writable like /tmp, so root's runs and others' coexist).
SLOT_LOCK_DIR = Path(tempfile.gettempdir()) / "arena-slots"


#: Slots in a block of :func:`claim_slot_block` (a match has at most 5 seats). One size for
#: every caller, so blocks never overlap.
SLOT_BLOCK = 8
#: Blocks in the registry: slots 0 .. SLOT_BLOCKS * SLOT_BLOCK - 1 (uids up to 65095).
SLOT_BLOCKS = 512


def claim_slot_block(
    *, first: int = 0, blocks: int = SLOT_BLOCKS, directory: Path | None = None
) -> int:
    """Claim :data:`SLOT_BLOCK` consecutive sandbox slots for this process, for as long as
    it lives; return the first one.

    Every runner of sandboxed bots on a machine -- ``arena play`` and ``check``, the local
    runner's pool processes, the workers' pool processes -- claims its slots here, so two
    runs never share a slot (its uid, its cgroup, its process limit). Block ``b`` covers
    slots ``first + b * SLOT_BLOCK`` onwards; it is held with an exclusive ``flock`` on its
    lock file, which the kernel releases when the process dies however it dies. Call it
    after ``fork`` (a child inherits its parent's lock, it does not get one of its own):
    :func:`process_slots` does.

    Raises:
        SandboxUnavailable: all ``blocks`` blocks are held, or the directory cannot be used
            (the message names it).
    """
    directory = SLOT_LOCK_DIR if directory is None else directory
    try:
        directory.mkdir(mode=0o1777, exist_ok=True)
        if directory.stat().st_uid == os.geteuid():
            directory.chmod(0o1777)  # mkdir's mode is cut by the umask
    except OSError as exc:
        raise SandboxUnavailable(f"the sandbox slot registry {directory}: {exc}") from exc
    for block in range(blocks):
        path = directory / f"block-{first}-{block}.lock"
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
        except OSError:
            continue  # another user's lock file we may not open: that block is theirs
        with suppress(OSError):
            os.fchmod(fd, 0o666)  # others must be able to lock it after us
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        _held_slot_locks.append(fd)  # kept open (so locked) until the process exits
        return first + block * SLOT_BLOCK
    raise SandboxUnavailable(f"all {blocks} sandbox slot blocks in {directory} are in use")


_held_slot_locks: list[int] = []
_process_block: dict[int, int] = {}


def process_slots() -> int:
    """The first of this process's :data:`SLOT_BLOCK` slots, claimed from the registry on
    first use (again in a forked child, which must not use its parent's)."""
    pid = os.getpid()
    if pid not in _process_block:
        _process_block.clear()
        first = _process_block[pid] = claim_slot_block()
        # A process killed outright (SIGKILL) leaves its slots' memory cgroups behind, empty:
        # the block's new owner removes them (one still holding processes is left alone).
        for slot in range(first, first + SLOT_BLOCK):
            _remove_cgroup(f"slot-{slot}")
    return _process_block[pid]
