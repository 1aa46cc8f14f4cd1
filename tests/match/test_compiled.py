"""The compiled runtimes (cpp, c, go, rust: arena/match/compiler.py, the C++ kit
arena/match/kits/arena.hpp, the others' starters speaking the protocol themselves):
compiled in the real sandbox once per source, the compiler's errors shown as it printed
them, compile bombs ended in a sentence, and bots/greedy.cpp playing exactly as
bots/greedy.py. The hostile compiled bots that run (fork, huge maps, SIGTERM) are in
tests/match/test_referee.py's zoo."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.cli.main import cli
from arena.engine.records import game_record
from arena.engine.rules import PRESETS, find_rules
from arena.match import compiler
from arena.match.compiler import CompileError, build
from arena.match.lineup import check_bot, make_players
from arena.match.newbot import starter_bot, write_starter_bot
from arena.match.referee import play_match
from arena.match.runtimes import (
    RUNTIMES,
    find_runtime,
    runtime_for_upload,
    runtime_missing,
    runtime_of_file,
    runtime_version,
)
from arena.match.sandbox import Limits, Sandbox, SandboxUnavailable, check_sandbox
from arena.service.matches import Config
from arena.service.uploads import rejection, rejection_cause
from tests.match.kept import assert_kept_between_matches
from tests.paths import REFERENCE_BOTS, REPO, own_slot, write_readable

CPP, C = RUNTIMES["cpp"], RUNTIMES["c"]
#: A source with two errors, on lines 5 and 6.
BROKEN = (
    '#include "arena.hpp"\n\n'
    "arena::Move play(const arena::Observation& observation) {\n"
    "    int unused = 0;\n"
    "    return observation.legal_moves[0] + missing;\n"
    "    no_such_function();\n"
    "}\n"
)


@pytest.fixture(autouse=True, scope="module")
def toolchains_installed() -> None:
    missing = [f"{r.name}: {p}" for r in (CPP, C) if (p := runtime_missing(r))]
    if missing:
        pytest.fail("compilers unavailable: " + "; ".join(missing), pytrace=False)


@pytest.fixture(scope="module")
def greedy_cpp() -> Path:
    """bots/greedy.cpp, compiled once in the sandbox (every later build takes the cache's)."""
    path = REFERENCE_BOTS / "greedy.cpp"
    build(path, CPP, Sandbox(Limits(), own_slot(300)))
    return path


#: The runtimes whose starter (``arena new-bot NAME --runtime R``) is a program speaking the
#: protocol itself, greedy as it is, and its file's suffix.
PROGRAMS = {"c": ".c", "go": ".go", "rust": ".rs"}


@pytest.fixture(scope="module")
def starters() -> Iterator[dict[str, Path]]:
    """The c, go and rust starters, each compiled once in the sandbox."""
    folder = Path(tempfile.mkdtemp(prefix="arena-compiled-test-"))
    folder.chmod(0o755)
    made = {}
    for offset, (runtime, suffix) in enumerate(PROGRAMS.items()):
        path = made[runtime] = folder / f"{runtime}greedy{suffix}"
        write_starter_bot(path, runtime)
        path.chmod(0o644)
        build(path, RUNTIMES[runtime], Sandbox(Limits(), own_slot(295 + offset)))
    yield made
    shutil.rmtree(folder, ignore_errors=True)


# --- the registry ---------------------------------------------------------------------------


def test_the_compiled_runtimes_are_declared_with_their_toolchains() -> None:
    assert runtime_for_upload("a.cpp", None) is CPP and runtime_for_upload("a.c", None) is C
    assert runtime_of_file("0f3a.cpp") is CPP and runtime_of_file("0f3a.c") is C
    assert runtime_version("cpp").startswith("g++ 12.")
    assert runtime_version("c").startswith("gcc 12.")
    assert runtime_version("go") == "Go 1.19.8" and runtime_version("rust") == "rustc 1.63.0"
    assert runtime_of_file("0f3a.go") is RUNTIMES["go"]
    assert runtime_of_file("0f3a.rs") is RUNTIMES["rust"]
    assert CPP.compiler is not None
    gone = dataclasses.replace(
        CPP, compiler=dataclasses.replace(CPP.compiler, program="/usr/bin/g++-99")
    )
    assert runtime_missing(gone) == "/usr/bin/g++-99 is missing: apt-get install g++-12"
    assert '"bot\\":\\"mine\\"' in starter_bot("mine", "c")  # the c starter's own name
    with pytest.raises(ValueError, match=r"no starter bot for runtime 'cobol': python, .*, rust"):
        starter_bot("mine", "cobol")


def test_every_runtimes_package_is_installed_by_run_and_the_dockerfile() -> None:
    """Each runtime's Debian package (its toolchain's, else its interpreter's) is one ./run
    installs as root for `arena serve` and the tests alike (its missing_runtimes), and one
    the Dockerfile installs."""
    run = (REPO / "run").read_text()
    listed = run[run.index("missing_runtimes() {") :]
    listed = listed[: listed.index("\n}\n")]
    dockerfile = (REPO / "Dockerfile").read_text()
    for runtime in RUNTIMES.values():
        # (a compiled one's toolchain brings its interpreter: javac's JDK, java's JRE)
        package = runtime.compiler.package if runtime.compiler else runtime.package
        if package != "python3":  # (the bots' Python: ./run's own interpreter's)
            assert f"missing+=({package})" in listed, (runtime.name, package)
            assert f" {package} " in dockerfile, (runtime.name, package)
    for tools in ("ensure_test_tools() {", "ensure_sandbox_tools() {"):
        body = run[run.index(tools) :]
        assert "missing_runtimes" in body[: body.index("\n}\n")], tools


# --- the reference bot and the starter ------------------------------------------------------


@pytest.mark.parametrize(("rules", "seats"), [("draw", 2), ("block", 3), ("block-and-draw", 4)])
def test_greedy_cpp_and_the_program_starters_play_exactly_as_greedy_py(
    greedy_cpp: Path, starters: dict[str, Path], rules: str, seats: int
) -> None:
    others = ["random"] * (seats - 1)

    def records(bot: Path) -> list[str]:
        players = make_players([str(bot), *others])
        games = play_match(find_rules(rules), players, games=3, seed=11)
        names = ["greedy", *others]
        ordered = sorted(games, key=lambda o: o.index)
        return [json.dumps(game_record(o.game, names)) for o in ordered]

    python = records(REFERENCE_BOTS / "greedy.py")
    assert records(greedy_cpp) == python
    for runtime, path in starters.items():
        assert records(path) == python, runtime


def test_an_artefact_is_compiled_once_and_kept_by_its_content(
    greedy_cpp: Path, readable: Path
) -> None:
    again = build(greedy_cpp, CPP, Sandbox(Limits(), own_slot(301)))
    assert again.cached and again.seconds == 0.0
    copy = write_readable(readable, "renamed.cpp", greedy_cpp.read_text())
    assert build(copy, CPP, None).path == again.path  # same bytes: the same artefact
    players = make_players([str(copy), "random"])
    [outcome] = play_match(find_rules("draw"), players, games=1, seed=2)
    assert outcome.verdict is None


def test_the_cpp_starter_passes_its_check(readable: Path) -> None:
    starter = readable / "starter.cpp"
    write_starter_bot(starter, "cpp")
    starter.chmod(0o644)
    reports = list(check_bot(str(starter), games=1))
    assert [name for name, _ in reports] == list(PRESETS)
    report = reports[-1][1]
    assert report.ok, [(n, o.verdict) for n, o in report.faults]
    assert report.name == "starter"


def test_a_c_program_compiles_unsandboxed_too(readable: Path) -> None:
    # (a source never seen: the cache is the machine's)
    source = write_readable(
        readable, "tiny.c", f"int main(void) {{ return 0; }} /* {uuid.uuid4()} */\n"
    )
    built = build(source, C, None)
    assert built.path.is_file() and not built.cached and built.seconds > 0
    assert build(source, C, None) == dataclasses.replace(built, seconds=0.0, cached=True)


def test_the_compile_cache_keeps_the_most_recently_used_within_its_bound(
    readable: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After a compile, the least recently used artefacts go until the cache fits its
    bound (ARENA_COMPILE_CACHE_MB), with interrupted compiles' partial copies; one used in
    the last hour stays whatever; a use marks an artefact's time."""
    import os
    import time

    cache = tmp_path / "compiled"
    monkeypatch.setenv(compiler.CACHE_ENV, str(cache))
    monkeypatch.setenv(compiler.CACHE_MB_ENV, "2")  # (the C binary: about 0.8 MB, static)
    cache.mkdir(mode=0o700)
    long_ago = time.time() - 2 * compiler.IN_USE_SECONDS

    def artefact(name: str, kib: int, when: float) -> Path:
        path = cache / name
        path.write_bytes(b"x" * kib * 1024)
        os.utime(path, (when, when))
        return path

    oldest = artefact("a" * 64 + "-bot", 600, long_ago - 10)
    older = artefact("b" * 64 + "-bot", 300, long_ago)
    recent = artefact("c" * 64 + "-bot.jar", 700, time.time() - 60)  # a match may start it
    partial = artefact("tmp1.part", 1, long_ago)
    source = write_readable(
        readable, "tiny.c", f"int main(void) {{ return 0; }} /* {uuid.uuid4()} */\n"
    )
    built = build(source, C, None)
    assert not built.cached and built.path.parent == cache
    assert sorted(p.name for p in cache.iterdir()) == sorted([older.name, recent.name,
                                                               built.path.name])  # fmt: skip
    assert not oldest.exists() and not partial.exists()
    os.utime(built.path, (long_ago, long_ago))
    assert build(source, C, None).cached and built.path.stat().st_mtime > long_ago + 60
    assert compiler.prune_cache(cache, 0) == [older]  # the used ones stay an hour
    for wrong in ("0", "-5", "lots", "1.5"):
        with pytest.raises(ValueError, match="ARENA_COMPILE_CACHE_MB must be a whole number"):
            compiler.cache_limit_mb({compiler.CACHE_MB_ENV: wrong})
    assert compiler.cache_limit_mb({}) == compiler.CACHE_MB_DEFAULT
    with pytest.raises(ValueError, match="ARENA_COMPILE_CACHE_MB must be"):  # a worker's start
        Config.from_env({compiler.CACHE_MB_ENV: "0"})


# --- compiler errors ------------------------------------------------------------------------


def test_a_compile_error_reaches_the_check_as_the_compiler_printed_it(readable: Path) -> None:
    broken = write_readable(readable, "mine.cpp", BROKEN)
    [(name, report)] = list(check_bot(str(broken)))
    assert name == "compile" and not report.ok and report.games == 0
    error = report.compile_error
    # (GCC's quotes in a UTF-8 locale, as it printed them)
    assert "mine.cpp:5:" in error and "\u2018missing\u2019 was not declared" in error, error
    assert "mine.cpp:6:" in error and "/src/" not in error and "/out/" not in error
    reason = rejection(report, "the check's limit")
    assert reason.startswith("it does not compile:\nmine.cpp: In function")
    assert rejection_cause(f"Rejected: {reason}") == "compile error"
    # `arena check` says it too (a C program's error: a compile a tenth of the C++ kit's)
    mine = write_readable(readable, "mine.c", "int main(void) {\n    return missing;\n}\n")
    shown = CliRunner().invoke(cli, ["check", str(mine)])
    assert shown.exit_code == 1
    assert f"{mine} does not compile:\nmine.c: In function \u2018main\u2019" in shown.output
    assert "mine.c:2:" in shown.output and shown.output.endswith("failed\n")


@pytest.fixture
def tight_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    """Compile limits a bomb reaches in seconds (the defaults would take a minute)."""
    tight = Limits(memory_mb=128, cpu_seconds=5, processes=16, file_size_mb=8, tmp_size_mb=16)
    monkeypatch.setattr(compiler, "COMPILE_LIMITS", tight)
    monkeypatch.setattr(compiler, "COMPILE_WALL_SECONDS", 20.0)


BOMBS = {
    "random.cpp": ('#include "/dev/random"\n', "128 MB of memory"),
    "templates.cpp": (
        "#include <utility>\n"
        "template <class T> struct Bomb { using type = typename Bomb<std::pair<T, T>>::type; };\n"
        "using Boom = Bomb<int>::type;\nint main() { return 0; }\n",
        "of memory",  # the doubling types' names, before the depth limit of 900
    ),
    "huge.c": (
        "char big[1 << 30] = {1};\n"
        "int main(int argc, char **argv) { (void)argv; return big[argc * 12345]; }\n",
        "8 MB a file it writes",
    ),
}


@pytest.mark.parametrize("sandboxed", [True, False], ids=["sandboxed", "plain"])
def test_a_compiler_that_crashes_ends_in_a_sentence(readable: Path, sandboxed: bool) -> None:
    assert C.compiler is not None
    segfault = ("/usr/bin/python3", "-c", "import ctypes; ctypes.string_at(0)")
    crashing = dataclasses.replace(C, compiler=dataclasses.replace(C.compiler, steps=(segfault,)))
    source = write_readable(
        readable, "any.c", f"int main(void) {{ return 0; }} /* {uuid.uuid4()} */\n"
    )
    sandbox = Sandbox(Limits(), own_slot(308)) if sandboxed else None
    with pytest.raises(CompileError, match=r"^the compiler crashed \(SIGSEGV\) after [0-9.]+ s, "):
        build(source, crashing, sandbox)


def test_a_compile_over_its_wall_clock_is_stopped_in_a_sentence(
    monkeypatch: pytest.MonkeyPatch, readable: Path
) -> None:
    monkeypatch.setattr(compiler, "COMPILE_WALL_SECONDS", 0.05)
    source = write_readable(
        readable, "slow.c", f"int main(void) {{ return 0; }} /* {uuid.uuid4()} */\n"
    )
    with pytest.raises(CompileError, match=r"the compile took longer than 0\.05 s \(wall clock\)"):
        build(source, C, Sandbox(Limits(), own_slot(309)))


def test_a_compile_sandbox_that_cannot_start_is_the_harness_s_failure(
    monkeypatch: pytest.MonkeyPatch, readable: Path
) -> None:
    """Not the source's compile error: bwrap never reported running the compiler (here the
    launcher could not join the slot's memory cgroup), so the sandbox is unavailable."""
    assert not check_sandbox()  # (its trial, cached, before the cgroup is broken)
    monkeypatch.setattr(Sandbox, "_cgroup_procs", lambda self: "/no/such/cgroup/cgroup.procs")
    source = write_readable(
        readable, "fine.c", f"int main(void) {{ return 0; }} /* {uuid.uuid4()} */\n"
    )
    said = "sandbox: cannot join the memory cgroup /no/such/cgroup/cgroup.procs"
    with pytest.raises(SandboxUnavailable, match=f"compile sandbox failed to start: {said}"):
        build(source, C, Sandbox(Limits(), own_slot(312)))


@pytest.mark.parametrize("bomb", sorted(BOMBS))
def test_a_compile_bomb_ends_in_a_sentence(tight_limits: None, readable: Path, bomb: str) -> None:
    text, limit = BOMBS[bomb]
    source = write_readable(readable, bomb, text)
    runtime = find_runtime("cpp" if bomb.endswith(".cpp") else "c")
    with pytest.raises(CompileError) as raised:
        build(source, runtime, Sandbox(Limits(), own_slot(302 + sorted(BOMBS).index(bomb))))
    message = str(raised.value)
    assert "(the compile went over its limit of" in message and limit in message, message
    assert "/src/" not in message


def test_a_compiled_bot_is_kept_warm_between_matches(greedy_cpp: Path) -> None:
    """arena.match.warm keeps a compiled bot's process as it keeps a Python one's."""
    limits = Limits(memory_mb=256, processes=32, file_size_mb=8, tmp_size_mb=8)
    assert_kept_between_matches(greedy_cpp, "compiled", own_slot(310), limits)


def test_a_workers_hashed_copy_compiles_under_a_plain_name(readable: Path) -> None:
    """A worker's copy of a stored version is named by its SHA-256: its errors say bot.c."""
    text = f"int main(void) {{ return nothing; }} /* {uuid.uuid4()} */\n"
    hashed = write_readable(readable, f"{hashlib.sha256(text.encode()).hexdigest()}.c", text)
    with pytest.raises(CompileError, match=r"^bot\.c: In function .main.:\nbot\.c:1:"):
        build(hashed, C, Sandbox(Limits(), own_slot(311)))
