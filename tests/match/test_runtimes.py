"""The runtimes (arena/match/runtimes.py) in the real sandbox: python, python-numpy (the
numpy environment bound read-only) and javascript (Node with the kit arena/match/botkit.js).
A test that needs a runtime this machine lacks fails with the command that installs it."""

from __future__ import annotations

import re
import shutil
import tempfile
from pathlib import Path

import pytest

from arena.engine.events import Termination
from arena.engine.rules import PRESETS, find_rules
from arena.match import sandbox as sandbox_module
from arena.match.lineup import check_bot, make_players
from arena.match.newbot import declared_name, write_starter_bot
from arena.match.process import ProcessPlayer
from arena.match.referee import GameOutcome, TimeControl, play_match
from arena.match.runtimes import (
    JAVA_HOME,
    NUMPY_DEFAULT_DIR,
    NUMPY_DIR_ENV,
    RUNTIMES,
    RuntimeMissing,
    find_runtime,
    host_paths,
    java_home,
    runtime_for_upload,
    runtime_missing,
    runtime_of_file,
    runtime_version,
)
from arena.match.sandbox import Limits, Sandbox, SandboxUnavailable
from arena.match.verdicts import InfrastructureError
from tests.paths import REFERENCE_BOTS, ZOO, own_slot, write_readable


@pytest.fixture(autouse=True, scope="module")
def runtimes_installed() -> None:
    missing = [f"{r.name}: {p}" for r in RUNTIMES.values() if (p := runtime_missing(r))]
    if missing:
        pytest.fail("runtimes unavailable: " + "; ".join(missing), pytrace=False)


def _play(path: Path, runtime: str | None = None, games: int = 2) -> list[GameOutcome]:
    players = make_players([str(path), "random"], runtime=runtime)
    return list(play_match(find_rules("draw"), players, games=games, seed=5))


# --- the registry ---------------------------------------------------------------------------


def test_a_files_runtime_is_read_from_its_name() -> None:
    assert [runtime_of_file(n) for n in ("a.py", "a.numpy.py", "a.js", "a.bot")] == [
        RUNTIMES["python"], RUNTIMES["python-numpy"], RUNTIMES["javascript"], None
    ]  # fmt: skip
    assert runtime_for_upload("a.js", None).name == "javascript"
    assert runtime_for_upload("a.py", None).name == "python"
    assert runtime_for_upload("a.py", "python-numpy").name == "python-numpy"
    with pytest.raises(RuntimeMissing, match=r"a\.js is not a \.py file: a python-numpy bot"):
        runtime_for_upload("a.js", "python-numpy")
    unknown = r"a\.txt is not a \.py, \.js, \.cpp, \.c, \.go, \.rs or \.java file"
    with pytest.raises(RuntimeMissing, match=unknown):
        runtime_for_upload("a.txt", None)
    with pytest.raises(RuntimeMissing, match="no runtime 'cobol': the runtimes are python, "):
        find_runtime("cobol")


def test_a_javascript_bot_declares_its_name_as_a_python_bot_does() -> None:
    assert declared_name('const NAME = "js-heavy";\nfunction play(o) {}\n') == "js-heavy"
    assert declared_name('let NAME = "x"; // mine\n') == "x"
    assert declared_name('NAME = "py"  # mine\n') == "py"
    assert declared_name('const NAMES = "no";\n') is None


def test_the_jdk_is_found_whatever_the_machine(tmp_path: Path) -> None:
    """The java runtime's JDK is the installed java-17-openjdk-ARCH folder (amd64 was
    written in once): an arm64 machine's is found; with none, the machine's own name."""
    assert java_home(tmp_path, "aarch64") == f"{tmp_path}/java-17-openjdk-arm64"
    assert java_home(tmp_path, "x86_64") == f"{tmp_path}/java-17-openjdk-amd64"
    assert java_home(tmp_path, "riscv64") == f"{tmp_path}/java-17-openjdk-riscv64"
    installed = tmp_path / "java-17-openjdk-arm64"
    (installed / "bin").mkdir(parents=True)
    (installed / "bin" / "java").write_text("")
    (tmp_path / "java-1.17.0-openjdk-arm64").symlink_to(installed)
    (tmp_path / "java-17-openjdk-armhf").mkdir()  # no java in it
    assert java_home(tmp_path, "x86_64") == str(installed)
    assert RUNTIMES["java"].interpreter == f"{JAVA_HOME}/bin/java"
    assert java_home() == JAVA_HOME


def test_each_runtime_says_its_versions() -> None:
    assert runtime_version("python").startswith("Python 3.")
    assert runtime_version("python-numpy").endswith(", numpy 2.2.6")
    assert runtime_version("javascript").startswith("Node.js 20.")


def test_a_missing_numpy_environment_names_the_install_command(
    monkeypatch: pytest.MonkeyPatch, readable: Path
) -> None:
    monkeypatch.setenv(NUMPY_DIR_ENV, str(readable / "nowhere"))
    problem = runtime_missing(RUNTIMES["python-numpy"])
    assert (
        problem is not None and "pip install" in problem and "scripts/install-runtimes" in problem
    )
    bot = ProcessPlayer(REFERENCE_BOTS / "numpy_greedy.py", Sandbox(Limits(), own_slot(20)),
                        "python-numpy")  # fmt: skip
    with pytest.raises(InfrastructureError, match=r"numpy environment \S+ is missing"):
        bot.open(TimeControl())
    bot.close()
    with pytest.raises(SandboxUnavailable, match="scripts/install-runtimes"):
        Sandbox(Limits(), own_slot(21)).spawn(
            {"/bot/b.py": REFERENCE_BOTS / "greedy.py"}, ["-I", "/bot/b.py"],
            runtime="python-numpy",
        )  # fmt: skip


def test_a_numpy_environment_installed_later_is_bound_at_once(
    monkeypatch: pytest.MonkeyPatch, readable: Path
) -> None:
    """host_paths never caches a missing environment: one installed while a worker runs is
    bound by its next numpy bot (before, the empty answer was kept for the process's life:
    numpy bots crashed on "No module named 'numpy'", their uploads rejected)."""
    # (not under /tmp: the sandbox's own /tmp hides anything there)
    later = Path(tempfile.mkdtemp(prefix="arena-numpy-", dir="/var/tmp")) / "later"
    later.parent.chmod(0o755)
    monkeypatch.setenv(NUMPY_DIR_ENV, str(later))
    assert str(later) not in host_paths(RUNTIMES["python-numpy"]).directories
    later.symlink_to(numpy_dir_default())
    assert str(later) in host_paths(RUNTIMES["python-numpy"]).directories
    bot = write_readable(
        readable, "np.py", "import numpy\n\ndef play(o):\n    return o.legal_moves[0]\n"
    )
    try:
        outcomes = _play(bot, "python-numpy", games=1)
    finally:
        shutil.rmtree(later.parent)
    assert [o.verdict for o in outcomes] == [None]


def test_a_numpy_environment_under_tmp_is_refused_in_a_sentence(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The sandbox's /tmp is its own: an environment there would be hidden (every numpy bot
    crashing on "No module named 'numpy'"), so the runtime says it is missing, and why."""
    under_tmp = Path(tempfile.mkdtemp(prefix="arena-numpy-", dir="/tmp"))
    (under_tmp / "numpy").symlink_to(Path(NUMPY_DEFAULT_DIR) / "numpy")
    monkeypatch.setenv(NUMPY_DIR_ENV, str(under_tmp))
    try:
        problem = runtime_missing(RUNTIMES["python-numpy"])
    finally:
        shutil.rmtree(under_tmp)
    assert f"{under_tmp} is under /tmp, which the sandbox replaces" in str(problem)


def numpy_dir_default() -> Path:
    return Path(NUMPY_DEFAULT_DIR)


# --- python-numpy ---------------------------------------------------------------------------


def test_the_numpy_sample_plays_every_preset_in_the_sandbox() -> None:
    reports = list(check_bot(str(REFERENCE_BOTS / "numpy_greedy.py"), runtime="python-numpy"))
    assert [name for name, _ in reports] == list(PRESETS)
    report = reports[-1][1]
    assert report.ok, [(n, o.verdict) for n, o in report.faults]
    assert report.name == "numpy-greedy" and report.games == 2 * len(PRESETS)


def test_numpy_is_only_there_under_python_numpy(readable: Path) -> None:
    bot = write_readable(
        readable, "np.py", "import numpy\n\ndef play(o):\n    return o.legal_moves[0]\n"
    )
    [outcome, _] = _play(bot)  # python: the standard library only
    assert outcome.verdict is not None and outcome.verdict.termination is Termination.CRASH
    assert "No module named 'numpy'" in outcome.verdict.message
    assert all(o.verdict is None for o in _play(bot, "python-numpy"))


def test_a_numpy_bot_computes_on_one_thread(readable: Path) -> None:
    """OPENBLAS_NUM_THREADS=1 in the sandbox: a matrix product starts no thread."""
    source = (
        "import os, threading\nimport numpy as np\n\n"
        "def play(o):\n"
        "    a = np.ones((200, 200)) @ np.ones((200, 200))\n"
        "    assert os.environ['OPENBLAS_NUM_THREADS'] == '1', os.environ\n"
        "    threads = len(os.listdir('/proc/self/task'))\n"
        "    assert threads == 1, threads\n"
        "    return o.legal_moves[int(a[0, 0]) % len(o.legal_moves)]\n"
    )
    bot = write_readable(readable, "blas.py", source)
    outcomes = _play(bot, "python-numpy")
    assert [o.verdict for o in outcomes] == [None, None]


# --- javascript -----------------------------------------------------------------------------


def test_the_javascript_starter_plays_every_preset_and_a_class_bot_plays(readable: Path) -> None:
    """The starter passes the whole check (every preset); a bot written as a class (the
    kit calls its start, play and end as it calls a module's functions, whatever the
    rules) plays two presets of other tiles and scoring without a fault."""
    starter = readable / "starter.js"
    write_starter_bot(starter, "javascript")
    starter.chmod(0o644)
    report = list(check_bot(str(starter)))[-1][1]
    assert report.ok and report.name == "starter", report.faults
    source = (
        'const NAME = "counting";\n'
        "class Bot {\n"
        "  constructor() { this.moves = 0; }\n"
        "  start(game) { this.seat = game.seat; }\n"
        "  play(o) { this.moves += 1; return o.legal_moves[this.moves % o.legal_moves.length]; }\n"
        "  end(result) {}\n"
        "}\n"
    )
    klass = write_readable(readable, "klass.js", source)
    report = list(check_bot(str(klass), presets=("muggins", "giant")))[-1][1]
    assert report.ok and report.name == "counting" and report.games == 4, report.faults


def test_a_javascript_bot_s_faults_are_its_own(readable: Path) -> None:
    """Its exceptions are crashes with the line, a move not offered is illegal, a load
    error says what and where, and its console.log never reaches the protocol."""
    throws = write_readable(readable, "throws.js", 'console.log("noise");\n\nfunction play(o) {\n'
                    "  return o.nothing.here;\n}\n")  # fmt: skip
    [first, _] = _play(throws)
    assert first.verdict is not None and first.verdict.termination is Termination.CRASH
    assert "TypeError" in first.verdict.message and "(line 4)" in first.verdict.message
    illegal = write_readable(readable, "illegal.js", 'function play(o) { return "9-9L"; }\n')
    [first, _] = _play(illegal)
    assert first.verdict is not None and first.verdict.termination is Termination.ILLEGAL_MOVE
    broken = write_readable(readable, "broken.js", "function play(o) { return ;; }}\n")
    [first, _] = _play(broken)
    assert first.verdict is not None and first.verdict.termination is Termination.CRASH
    assert "failed at load: SyntaxError" in first.verdict.message
    empty = write_readable(readable, "empty.js", "const x = 1;\n")
    [first, _] = _play(empty)
    assert first.verdict is not None
    assert "defines neither a function play(observation) nor a class Bot" in first.verdict.message


def test_a_javascript_program_speaks_the_protocol_itself_under_node() -> None:
    """A .js file beginning with #! runs directly under the runtime's node (no kit), with
    the javascript runtime's larger address space: the default 512 MB memory suffices."""
    outcomes = _play(ZOO / "first.js")
    assert [o.verdict for o in outcomes] == [None, None]


def test_node_runs_within_the_memory_limit_plus_its_reservations(readable: Path) -> None:
    """A bot that allocates far more than its memory limit is stopped (V8's heap cap or the
    cgroup), its game forfeited; the referee is fine."""
    source = (
        "const hog = [];\n"
        "function play(o) {\n"
        "  for (let i = 0; i < 4000; i++) hog.push(new Array(1 << 20).fill(i));\n"
        "  return o.legal_moves[0];\n"
        "}\n"
    )
    first, _ = _hog_game(write_readable(readable, "hog.js", source), 256)
    assert first.verdict is not None
    assert first.verdict.termination in (Termination.CRASH, Termination.TIMEOUT)


def test_without_a_memory_cgroup_a_javascript_bot_stays_within_a_gigabyte_over_its_limit(
    monkeypatch: pytest.MonkeyPatch, readable: Path
) -> None:
    """Where the host offers no memory cgroup (rlimits only), a bot's buffers (which V8's heap
    cap does not count) stop at its address space: the memory limit + 1 GB (it was + 2 GB:
    1.84 GB of buffers under a 512 MB limit)."""
    monkeypatch.setattr(sandbox_module, "_cgroup_kind", lambda: None)
    source = (
        'const fs = require("fs");\n'
        "const hog = [];\n"
        "function play(o) {\n"
        "  for (let i = 1; i <= 20; i++) {\n"
        "    hog.push(Buffer.alloc(100 << 20, 1));\n"
        "    fs.writeSync(2, `held ${i * 100} MB\\n`);\n"
        "  }\n"
        "  return o.legal_moves[0];\n"
        "}\n"
    )
    first, stderr = _hog_game(write_readable(readable, "buffers.js", source), 128)
    assert first.verdict is not None and first.verdict.seat == 0
    held = [int(m) for m in re.findall(r"held (\d+) MB", stderr)]
    assert held and max(held) < 128 + 1024, max(held)


def test_a_javascript_bot_may_start_a_worker_thread(readable: Path) -> None:
    """The address space over the limit (1 GB) leaves room for one worker thread (V8
    reserves address space for each; a second does not fit, docs/writing-a-bot.md)."""
    source = (
        'const { Worker } = require("worker_threads");\n'
        "let failed = null;\n"
        'const worker = new Worker("setInterval(() => {}, 1000)", { eval: true });\n'
        'worker.on("error", (error) => { failed = error; });\n'
        "function play(o) { if (failed) throw failed; return o.legal_moves[0]; }\n"
    )
    outcomes = _play(write_readable(readable, "worker.js", source))
    assert [o.verdict for o in outcomes] == [None, None]


def test_a_javascript_bot_replacing_json_or_fs_keeps_its_protocol(readable: Path) -> None:
    """The kit writes and reads with its own references: a bot that replaces JSON.stringify,
    JSON.parse and fs.writeSync for its own use still plays (before, its hello was garbled)."""
    source = (
        'JSON.stringify = () => \'{"type": "moves", "seq": 0, "moves": ["6-6"]}\';\n'
        'JSON.parse = () => ({ type: "quit" });\n'
        'require("fs").writeSync = () => 0;\n'
        "function play(o) { return o.legal_moves[0]; }\n"
    )
    outcomes = _play(write_readable(readable, "patcher.js", source))
    assert [o.verdict for o in outcomes] == [None, None]


def _hog_game(bot: Path, memory_mb: int) -> tuple[GameOutcome, str]:
    """One game of ``bot`` (seat 0) against random under ``memory_mb``, 5 s a move: its
    outcome and the bot's stderr."""
    players = make_players([str(bot), "random"], limits=Limits(memory_mb=memory_mb))
    clock = TimeControl(move_seconds=5.0)
    [first] = list(play_match(find_rules("draw"), players, games=1, seed=5, time_control=clock))
    return first, players[0].stderr_tail()
