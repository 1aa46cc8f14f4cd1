"""The real sandbox (arena/match/sandbox.py) against probe scripts: no mocks.

Each probe in tests/sandbox_probes/ runs under Debian's /usr/bin/python3 through
``Sandbox.spawn`` and prints JSON. Where the sandbox cannot start here, every test
fails (never skips) with the missing pieces. Each test uses a slot of its own
(``SLOT + n``, in this test process's range of ``tests.paths.own_slot``, apart from
the referee's tests and from every slot the registry hands out), so that processes
are counted per slot uid even with pytest -n 2.

Shells: a bot may start ``/bin/sh`` (``subprocess``, ``os.system``); the shell
runs inside the same sandbox, as the same uid, under the same limits and filter.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import sysconfig
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from arena.match.hostpaths import HostPaths, bot_paths, shared_libraries
from arena.match.runtimes import find_runtime, host_paths, numpy_dir, runtime_missing
from arena.match.sandbox import (
    SANDBOX_ENV,
    SLOT_UID_BASE,
    Limits,
    Sandbox,
    SandboxUnavailable,
    _joined,
    check_sandbox,
    check_sandbox_report,
    kill_process_group,
    plain_spawn,
)
from tests.paths import PROBES, REPO, own_slot

SLOT = own_slot(900)  # first slot of these tests; each test adds its own offset
DEFAULT_LIMITS = Limits()
#: The names of Limits.rlimits()'s resources, in its order (the identity probe's keys).
LIMIT_NAMES = (
    "RLIMIT_AS", "RLIMIT_CPU", "RLIMIT_NPROC", "RLIMIT_FSIZE", "RLIMIT_NOFILE", "RLIMIT_CORE"
)  # fmt: skip


@pytest.fixture(autouse=True, scope="module")
def sandbox_available() -> None:
    missing = check_sandbox()
    if missing:
        pytest.fail("sandbox unavailable: " + "; ".join(missing), pytrace=False)


def spawn_probe(
    name: str, args: Sequence[str] = (), *, slot: int, limits: Limits = DEFAULT_LIMITS
) -> tuple[Sandbox, subprocess.Popen[bytes]]:
    sandbox = Sandbox(limits, slot=slot)
    proc = sandbox.spawn(
        {f"/bot/{name}.py": PROBES / f"{name}.py"}, ["-I", f"/bot/{name}.py", *args]
    )
    return sandbox, proc


def finish(sandbox: Sandbox, proc: subprocess.Popen[bytes]) -> None:
    """Kill and reap the sandbox, close the pipes, and check nothing of the slot is left."""
    sandbox.kill(proc)
    for pipe in (proc.stdin, proc.stdout, proc.stderr):
        if pipe is not None:
            pipe.close()
    assert proc.returncode is not None
    assert slot_processes(sandbox.slot) == [], "processes of the slot survived kill()"


def run_probe(
    name: str,
    args: Sequence[str] = (),
    *,
    slot: int,
    limits: Limits = DEFAULT_LIMITS,
    stdin: bytes = b"",
) -> tuple[dict[str, Any], int]:
    """Run a probe to its end; its JSON result and exit status."""
    sandbox, proc = spawn_probe(name, args, slot=slot, limits=limits)
    try:
        out, err = proc.communicate(stdin, timeout=20)
    finally:
        finish(sandbox, proc)
    lines = out.decode().splitlines()
    assert lines, f"probe {name} printed nothing (status {proc.returncode}): {err.decode()[-800:]}"
    result: dict[str, Any] = json.loads(lines[0])
    return result, proc.returncode


def slot_processes(slot: int) -> list[int]:
    """Host pids of the slot's sandboxed processes.

    As root: every process of the slot's uid. Otherwise the sandbox runs as our
    own uid: our processes in another PID namespace.
    """
    own_ns = os.readlink("/proc/self/ns/pid")
    pids = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            uid = entry.stat().st_uid
            ns = os.readlink(f"/proc/{entry.name}/ns/pid") if os.geteuid() else ""
        except OSError:
            continue
        if os.geteuid() == 0:
            if uid == SLOT_UID_BASE + slot:
                pids.append(int(entry.name))
        elif uid == os.getuid() and ns != own_ns:
            pids.append(int(entry.name))
    return pids


def host_uid(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Uid:"):
            return int(line.split()[1])
    raise AssertionError(f"no Uid line for {pid}")


@pytest.fixture
def listening_port() -> Iterator[int]:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        yield server.getsockname()[1]


#: Forks of this test process (os.register_at_fork's hook: subprocess runs it when it must
#: fork the whole process to run a preexec_fn, never when it starts a program with vfork).
_forks: list[int] = []
os.register_at_fork(before=lambda: _forks.append(1))


def test_runs_and_echoes_stdin_as_an_unprivileged_uid_under_its_limits() -> None:
    forks = len(_forks)
    sandbox, proc = spawn_probe("identity", slot=SLOT)
    assert len(_forks) == forks, "starting a sandboxed bot forked the whole referee process"
    try:
        out, err = proc.communicate(b"hello\n\xc3\xa9 two\n", timeout=20)
    finally:
        finish(sandbox, proc)
    first, *echo = out.splitlines()
    who = json.loads(first)
    assert who["uid"] != 0 and who["euid"] != 0
    assert who["uid"] == who["gid"] == SLOT_UID_BASE + SLOT
    assert who["pid"] == 1  # a fresh PID namespace, where the bot is pid 1
    # the limits hold from the bot's first instruction on (set before bwrap is started)
    limits = {
        name: [value, value]
        for name, value in zip(LIMIT_NAMES, (v for _, v in DEFAULT_LIMITS.rlimits()), strict=True)
    }
    if os.geteuid() != 0:  # the user's own processes count too (Sandbox._rlimits)
        del limits["RLIMIT_NPROC"], who["limits"]["RLIMIT_NPROC"]
    assert who["limits"] == limits
    assert echo == [b"hello", b"\xc3\xa9 two"]
    assert proc.returncode == 0, err


def own_slots_get_different_uids_on_the_host_too() -> None:
    spawned = [spawn_probe("identity", slot=SLOT + n) for n in (1, 2)]
    try:
        uids = [json.loads(proc.stdout.readline())["uid"] for _, proc in spawned if proc.stdout]
        host = [sorted({host_uid(pid) for pid in slot_processes(s.slot)}) for s, _ in spawned]
    finally:
        for sandbox, proc in spawned:
            finish(sandbox, proc)
    assert uids == [SLOT_UID_BASE + SLOT + 1, SLOT_UID_BASE + SLOT + 2]
    if os.geteuid() == 0:  # dropped with setpriv before bwrap: not root on the host either
        assert host == [[SLOT_UID_BASE + SLOT + 1], [SLOT_UID_BASE + SLOT + 2]]
    else:
        assert host == [[os.getuid()], [os.getuid()]]


def test_memory_cgroup_when_the_host_offers_one() -> None:
    report = check_sandbox_report()
    sandbox, proc = spawn_probe("identity", slot=SLOT + 3)
    try:
        assert proc.stdout is not None
        proc.stdout.readline()
        cgroups = {Path(f"/proc/{pid}/cgroup").read_text() for pid in slot_processes(SLOT + 3)}
    finally:
        finish(sandbox, proc)
    if "memory cgroup v" in report:
        assert all(f"domino-arena/slot-{SLOT + 3}\n" in text for text in cgroups), cgroups
    else:
        assert "rlimits only" in report


def test_a_cgroup_that_cannot_be_joined_stops_the_launcher_as_the_harness_s_failure(
    tmp_path: Path,
) -> None:
    """The launcher joins the slot's cgroup before anything else runs, or runs nothing and
    says why (bwrap never runs, so never reports a program run: the harness's failure,
    test_referee's test_a_sandbox_that_cannot_start_is_an_infrastructure_failure)."""
    missing = tmp_path / "no-such-cgroup" / "cgroup.procs"
    done = subprocess.run(
        _joined(str(missing), ["/bin/echo", "ran"]), capture_output=True, text=True, check=False
    )
    assert (done.returncode, done.stdout) == (125, "")
    assert done.stderr == f"sandbox: cannot join the memory cgroup {missing}\n"


def test_host_files_environment_and_processes_are_invisible(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "s3cr3t-" + os.urandom(8).hex()
    monkeypatch.setenv("ARENA_TEST_SECRET", secret)
    other_bot = tmp_path / "other_bot.py"
    other_bot.write_text(f"# {secret}\n")
    paths = ["/etc/passwd", "/etc/shadow", "/root", "/work", "/home", "/sys", str(REPO)]
    paths += [str(other_bot), str(REPO / "pyproject.toml")]
    result, status = run_probe("visibility", paths, slot=SLOT + 4)
    assert status == 0
    assert result["paths"] == {path: "absent" for path in paths}
    assert result["root"] == [
        "bin",
        "bot",
        "dev",
        "etc",
        "lib",
        "lib64",
        "proc",
        "sbin",
        "tmp",
        "usr",
    ]
    assert result["environ"] == {**SANDBOX_ENV, "PWD": "/bot"}
    # Only the sandbox's own process: the probe is pid 1 and has no visible parent.
    own_command = " ".join(["/usr/bin/python3", "-I", "/bot/visibility.py", *paths, ""])
    assert result["processes"] == {"1": own_command}
    assert (result["pid"], result["ppid"]) == (1, 0)
    assert secret not in json.dumps(result["environ"])


def test_no_network(listening_port: int) -> None:
    result, status = run_probe("network", [str(listening_port)], slot=SLOT + 5)
    assert status == 0
    # The test listens on the host's loopback; the sandbox's own loopback is empty.
    assert result["loopback"]["outcome"] == "ConnectionRefusedError: Connection refused"
    for outside in ("outside", "outside_http"):  # no route at all: fails at once
        assert result[outside]["outcome"] == "OSError: Network is unreachable"
        assert result[outside]["seconds"] < 0.1
    assert result["dns"].startswith("gaierror")


def test_no_shell_and_no_process_can_be_started() -> None:
    """No /bin/sh is there to run, and starting any process is denied (seccomp): both
    subprocess and os.system fail; the bot itself carries on."""
    result, status = run_probe("shell", slot=SLOT + 6)
    assert status == 0
    error = result["subprocess"]["error"]
    assert "Operation not permitted" in error or "No such file" in error
    assert result["os_system"] != 7 << 8  # the shell never ran


def test_writing_a_huge_file_fails() -> None:
    result, status = run_probe("bigfile", slot=SLOT + 7)
    assert status == 0
    assert result["/tmp/big"] == {"outcome": "OSError: File too large", "mb": 16}  # RLIMIT_FSIZE
    assert result["/dev/shm/big"]["outcome"] == "OSError: No space left on device"
    assert result["/dev/shm/big"]["mb"] <= 1
    assert result["big"] == {"outcome": "OSError: Read-only file system", "mb": 0}


@pytest.mark.slow
def test_memory_bomb_dies_alone() -> None:
    sandbox, proc = spawn_probe("memory", slot=SLOT + 8, limits=Limits(memory_mb=128))
    try:
        out, _ = proc.communicate(timeout=20)
    finally:
        finish(sandbox, proc)
    if proc.returncode == 0:
        assert json.loads(out) == {"memory_error": True, "mb": pytest.approx(100, abs=28)}
    else:  # killed (cgroup OOM): never the test process
        assert proc.returncode != 0
    assert bytearray(64 * 1024 * 1024)  # the test process can still allocate


@pytest.mark.slow
def test_a_fork_bomb_cannot_fork_at_all() -> None:
    limits = Limits(processes=32)
    sandbox, proc = spawn_probe("forkbomb", slot=SLOT + 9, limits=limits)
    try:
        assert proc.stdout is not None
        result = json.loads(proc.stdout.readline())
        alive = slot_processes(SLOT + 9)
    finally:
        finish(sandbox, proc)  # checks that none of them is left
    assert result["error"] == "Operation not permitted"  # seccomp: no process creation
    assert result["forks"] == 0
    assert len(alive) <= limits.processes
    assert slot_processes(SLOT + 9) == []


def test_seccomp_denies_dangerous_syscalls() -> None:
    result, status = run_probe("syscalls", slot=SLOT + 10)
    assert status == 0
    assert result == {name: "EPERM" for name in result}
    assert {"ptrace", "io_uring_setup", "keyctl", "shmget", "unshare"} <= set(result)


def test_kill_takes_the_whole_sandbox_and_is_idempotent() -> None:
    sandbox, proc = spawn_probe("identity", slot=SLOT + 11)
    assert proc.stdout is not None
    proc.stdout.readline()
    assert len(slot_processes(SLOT + 11)) == 2  # bwrap outside, the probe inside
    start = time.perf_counter()
    finish(sandbox, proc)
    assert time.perf_counter() - start < 2
    sandbox.kill(proc)  # again, on a reaped process: nothing happens


def test_spawn_rejects_bad_requests_and_missing_interpreters() -> None:
    sandbox = Sandbox(slot=SLOT + 12)
    probe = PROBES / "identity.py"
    for bad in ("bot.py", "/usr/lib/x.py", "/bot/../etc/x"):
        with pytest.raises(ValueError, match="sandbox path"):
            sandbox.spawn({bad: probe}, ["-I", bad])
    with pytest.raises(ValueError, match="interpreter's arguments"):
        sandbox.spawn({"/bot/a.py": probe}, ["/usr/bin/python3", "/bot/a.py"])
    with pytest.raises(SandboxUnavailable, match="/usr/bin/nonexistent-python not found"):
        sandbox.spawn(
            {"/bot/a.py": probe}, ["/bot/a.py"], interpreter=Path("/usr/bin/nonexistent-python")
        )
    with pytest.raises(ValueError, match="slot"):
        Sandbox(slot=-1)


def test_report_names_the_isolation() -> None:
    report = check_sandbox_report()
    assert report.startswith("sandbox: bubblewrap ")
    assert "seccomp" in report and "rlimits" in report


def test_plain_spawn_is_unsandboxed_with_the_same_interface() -> None:
    forks = len(_forks)
    proc = plain_spawn({"/bot/identity.py": PROBES / "identity.py"}, ["-I", "/bot/identity.py"])
    assert len(_forks) == forks, "starting a plain bot forked the whole referee process"
    try:
        out, _ = proc.communicate(b"ping\n", timeout=20)
    finally:
        kill_process_group(proc)
    first, echo = out.splitlines()
    assert json.loads(first)["uid"] == os.getuid()  # the caller's own uid: no isolation
    assert echo == b"ping"


def test_an_unsandboxed_bot_dies_with_the_process_that_started_it() -> None:
    """A kept bot waits stopped (SIGSTOP) between matches, so it never reads the end of its
    closed pipe: a worker killed -9 must not leave it stopped for ever (plain_spawn's bots
    get the kernel's parent-death signal, as bwrap's --die-with-parent gives sandboxed ones)."""
    files = {"/bot/identity.py": str(PROBES / "identity.py")}
    starter = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time\n"
            "from arena.match.sandbox import plain_spawn\n"
            f"bot = plain_spawn({files!r}, ['-I', '/bot/identity.py'])\n"
            "bot.stdout.readline()\n"  # it runs (as a kept bot stopped after a match would)
            "print(bot.pid, flush=True)\n"
            "time.sleep(60)\n",
        ],
        stdout=subprocess.PIPE,
        cwd=REPO,
    )
    assert starter.stdout is not None
    bot = int(starter.stdout.readline())
    try:
        os.kill(bot, signal.SIGSTOP)
        starter.kill()
        starter.wait()
        starter.stdout.close()
        deadline = time.monotonic() + 10
        while _alive(bot) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert not _alive(bot), "the stopped bot outlived the process that started it"
    finally:
        if _alive(bot):
            os.kill(bot, signal.SIGKILL)


def _alive(pid: int) -> bool:
    """Whether ``pid`` is a process that has not exited (a zombie has)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


def test_the_sandbox_shows_the_runtime_and_nothing_else() -> None:
    """Walk the sandbox's whole tree: every path is the bot's file, a file or directory of
    the interpreter's runtime (arena.match.hostpaths), /etc's two files or a merged-/usr
    link; no shell, no other program, no third-party package, nothing of /usr/local."""
    result, status = run_probe("tree", slot=SLOT + 12)
    assert status == 0
    runtime = bot_paths("/usr/bin/python3")
    allowed_files = set(runtime.files) | {"/bot/tree.py", "/etc/ld.so.cache", "/etc/localtime"}
    allowed_files |= {top for top in ("/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32")}

    def allowed(path: str) -> bool:
        if path in allowed_files:
            return True
        return any(
            path.startswith(directory + "/")
            and not any(path.startswith(hidden + "/") for hidden in runtime.hidden)
            for directory in runtime.directories
        )

    strays = [path for path in result["paths"] if not allowed(path)]
    assert not strays, f"the sandbox shows more than the runtime: {strays[:20]}"
    paths = set(result["paths"])
    for absent in ("/usr/bin/sh", "/bin/sh", "/usr/bin/id", "/usr/bin/env", "/usr/bin/node"):
        assert absent not in paths
    assert not any(p.startswith(("/usr/local/", "/usr/src/", "/usr/etc/", "/root/")) for p in paths)
    assert not any("-packages/" in p for p in paths)
    assert "/usr/lib/python3.11/json/__init__.py" in paths  # the standard library is there


def _tree_of(runtime_name: str, files: dict[str, Path], argv: list[str], slot: int) -> set[str]:
    """The paths a bot of ``runtime_name`` sees (tree.py or tree.js run in its sandbox)."""
    runtime = find_runtime(runtime_name)
    problem = runtime_missing(runtime)
    if problem is not None:
        pytest.fail(f"runtime {runtime_name} unavailable: {problem}", pytrace=False)
    sandbox = Sandbox(DEFAULT_LIMITS, slot=slot)
    proc = sandbox.spawn(files, argv, interpreter=Path(runtime.interpreter), runtime=runtime_name)
    try:
        out, err = proc.communicate(b"", timeout=30)
    finally:
        finish(sandbox, proc)
    assert proc.returncode == 0, err.decode()[-800:]
    return set(json.loads(out.decode().splitlines()[0])["paths"])


def _strays(paths: set[str], runtime: HostPaths, own: set[str]) -> list[str]:
    """The paths that are neither the bot's files, nor its runtime's, nor /etc's two files
    nor a merged-/usr link."""
    allowed_files = set(runtime.files) | own | {"/etc/ld.so.cache", "/etc/localtime"}
    allowed_files |= {"/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32"}

    def allowed(path: str) -> bool:
        return path in allowed_files or any(
            path.startswith(directory + "/")
            and not any(path.startswith(hidden + "/") for hidden in runtime.hidden)
            for directory in runtime.directories
        )

    return sorted(path for path in paths if not allowed(path))


def test_a_numpy_bot_sees_the_numpy_environment_besides_python_and_nothing_else() -> None:
    """python-numpy: Python's runtime plus the numpy environment (read-only) and the host
    libraries its extension modules load; still no shell, no node, no site-packages."""
    paths = _tree_of(
        "python-numpy",
        {"/bot/tree.py": PROBES / "tree.py"},
        ["-I", "/bot/tree.py"],
        slot=SLOT + 13,
    )
    runtime = host_paths(find_runtime("python-numpy"))
    strays = _strays(paths, runtime, {"/bot/tree.py"})
    assert not strays, f"the sandbox shows more than the runtime: {strays[:20]}"
    assert f"{numpy_dir()}/numpy/__init__.py" in paths
    assert any(p.startswith(f"{numpy_dir()}/numpy.libs/") for p in paths)  # OpenBLAS
    for absent in ("/usr/bin/sh", "/bin/sh", "/usr/bin/env", "/usr/bin/node"):
        assert absent not in paths
    assert not any("-packages/" in p for p in paths)


def test_a_python_bot_does_not_see_the_numpy_environment() -> None:
    result, status = run_probe("tree", slot=SLOT + 14)
    assert status == 0
    assert not any(p.startswith(numpy_dir()) for p in result["paths"])


def test_a_javascript_bot_sees_node_and_nothing_else() -> None:
    """javascript: node and the libraries it loads (ldd), the kit and the bot; no Python,
    no shell, no npm."""
    paths = _tree_of(
        "javascript", {"/bot/tree.js": PROBES / "tree.js"}, ["/bot/tree.js"], slot=SLOT + 15
    )
    runtime = host_paths(find_runtime("javascript"))
    strays = _strays(paths, runtime, {"/bot/tree.js"})
    assert not strays, f"the sandbox shows more than the runtime: {strays[:20]}"
    assert "/usr/bin/node" in paths
    for absent in ("/usr/bin/python3", "/usr/bin/sh", "/bin/sh", "/usr/bin/env", "/usr/bin/npm"):
        assert absent not in paths
    assert not any(p.startswith(("/usr/lib/python3", "/usr/share/nodejs/")) for p in paths)


def test_one_ldd_names_the_libraries_of_each_binary() -> None:
    """``shared_libraries`` of several binaries (one ``ldd``: a Python's modules of C, at
    every sandbox's first start) is the union of each one's."""
    dynload = Path(sysconfig.get_path("stdlib")) / "lib-dynload"
    modules = sorted(str(path) for path in dynload.glob("*.so"))[:6]
    assert len(modules) == 6, f"no modules of C in {dynload}"
    each = frozenset().union(*(shared_libraries(module) for module in modules))
    assert any("libc.so" in path for path in each)
    assert shared_libraries(*modules) == each
    assert shared_libraries() == frozenset()
