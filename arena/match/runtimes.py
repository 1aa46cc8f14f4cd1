"""The runtimes a bot may run under, declared here and nowhere else.

========================  ==========  ==========================================================
runtime                   files       how it runs (inside the sandbox)
========================  ==========  ==========================================================
``python``                ``.py``     ``/usr/bin/python3 -I /kit/botkit.py BOT``: the standard
                                      library only (today's, and the default)
``python-numpy``          ``.py``     the same, with a pinned numpy (:data:`NUMPY_VERSION`)
                                      from a read-only environment bound into the sandbox, put
                                      on ``sys.path`` by botkit (``--path DIR``)
``javascript``            ``.js``     ``/usr/bin/node FLAGS /kit/botkit.js BOT`` (Debian's Node):
                                      the file defines ``play(observation)``; a file that
                                      begins with ``#!`` speaks the protocol itself
``cpp``                   ``.cpp``    compiled first (Debian's ``g++-12``, C++17, static) with
                                      the kit ``/kit/arena.hpp``: the file defines
                                      ``play(observation)``; the binary runs as the program
``c``                     ``.c``      compiled first (Debian's ``gcc-12``, C11, static): a
                                      program speaking the protocol itself (no kit)
``go``                    ``.go``     compiled first (Debian's Go 1.19, ``go build``, no cgo):
                                      a program speaking the protocol itself (encoding/json);
                                      RLIMIT_AS 1 GB above the limit, as for Node
``rust``                  ``.rs``     compiled first (Debian's rustc 1.63, edition 2021, static,
                                      linked by gcc-12): a program speaking the protocol itself
``java``                  ``.java``   compiled first (Debian's OpenJDK 17 javac, with the kit
                                      ``kits/java``, by ``kits/JavaBuild.java``) into a jar:
                                      ``java FLAGS -Xmx.. -jar /bot/bot.jar``
========================  ==========  ==========================================================

A compiled runtime (:attr:`BotRuntime.compiler`, a :class:`Compiler`) has a compile step:
its argv templates run in the sandbox (:mod:`arena.match.compiler`, with limits of their
own and a writable ``/out``), once per source, toolchain and kit; the artefact is kept
content-addressed and reused by every match. Then the artefact runs: as the program itself
when the runtime has no interpreter (``cpp``, ``c``), else under the interpreter with the
artefact as its argument (``argv``; how ``java`` runs its classes).

The sandbox binds only what the chosen runtime needs (:func:`host_paths`): the
interpreter, the shared libraries it loads, Python's standard library, and for
``python-numpy`` the environment and the host libraries its extension modules load.

The numpy environment is a ``pip install --target`` of numpy's wheel for Debian's
``/usr/bin/python3`` (cp311), made by ``./run`` (as root), ``scripts/install-runtimes``
and the Dockerfile, at :data:`NUMPY_DEFAULT_DIR` or where ``ARENA_NUMPY_DIR`` says
(:func:`numpy_install_command`).

Node's V8 reserves about 0.8 GB of address space before running a line, so the
``javascript`` runtime's RLIMIT_AS is the memory limit plus :data:`BotRuntime.extra_address_mb`
(1 GB: node with a worker thread starts under 64 MB + 1 GB), V8's heap is capped below the
memory limit (``--max-old-space-size``), and the per-slot memory cgroup (where the host has
one) bounds what the bot really uses. Without a cgroup (rlimits only) a JavaScript bot's
buffers, which V8's heap cap does not count, may use up to that extra gigabyte as well.

The JVM reserves about 420 MB of address space besides its heap (the JDK's module image
mapped, the code cache, the class space, malloc's arenas), so the ``java`` runtime's RLIMIT_AS
is the memory limit plus 512 MB, with the heap capped at three quarters of the memory limit
(``-Xmx``). Its flags (:data:`JVM_FLAGS`) keep it small and its clock the bot's: the serial
collector (no collector threads), C1 only with one compiler thread (nothing compiling in
the background through a match, charged to its moves), no performance-data file, a 64 MB class
space (not 1 GB of address space), and the JVM's own messages on stderr (stdout is the
protocol's). The kit plays practice rounds before its handshake, so the JVM's start and JIT
warm-up are paid from the start-up budget (docs/writing-a-bot.md, section 10).

A stored version's runtime travels with its file on a worker: the file is named
``<digest><stored_suffix>`` (``.py``, ``.numpy.py``, ``.js``, ``.java``...), and
:func:`runtime_of_file` reads it back (the longest matching ending wins).
"""

from __future__ import annotations

import functools
import os
import platform
import re
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePath

from arena.errors import ArenaError
from arena.match.hostpaths import HostPaths, bot_paths, shared_libraries

__all__ = [
    "DEFAULT_RUNTIME",
    "JAVA_HOME",
    "JVM_FLAGS",
    "JVM_ROOT",
    "NUMPY_DEFAULT_DIR",
    "NUMPY_DIR_ENV",
    "NUMPY_VERSION",
    "RUNTIMES",
    "BotRuntime",
    "Compiler",
    "RuntimeMissing",
    "file_kinds",
    "find_runtime",
    "host_paths",
    "java_home",
    "numpy_dir",
    "numpy_install_command",
    "runtime_for_upload",
    "runtime_missing",
    "runtime_of_file",
    "runtime_version",
]

#: numpy's version in the ``python-numpy`` runtime (a cp311 manylinux2014 wheel).
NUMPY_VERSION = "2.2.6"
#: Where the numpy environment is, unless ``ARENA_NUMPY_DIR`` names another directory.
NUMPY_DEFAULT_DIR = f"/opt/arena/runtimes/python-numpy-{NUMPY_VERSION}"
NUMPY_DIR_ENV = "ARENA_NUMPY_DIR"

#: The runtime of a bot whose runtime nobody named (a ``.py`` file).
DEFAULT_RUNTIME = "python"


class RuntimeMissing(ArenaError):  # noqa: N818 (like SandboxUnavailable)
    """A runtime is unknown, or not installed on this machine (the message says how to
    install it)."""


@dataclass(frozen=True, slots=True)
class Compiler:
    """A compiled runtime's compile step, run in the sandbox (:mod:`arena.match.compiler`).

    Attributes:
        program: the toolchain's driver (host path, the same inside), asked ``--version``
            for the artefact's key.
        steps: the argv of each step, in order; ``{source}`` is the author's file (in the
            working directory, under its own name), ``{out}`` the writable output
            directory, ``{kit}`` the kit's directory (read-only).
        artefact: the file the steps leave in ``{out}``: what runs.
        package: the Debian package that installs the toolchain (pinned by ./run and the
            Dockerfile).
        directories: host directories the toolchain needs, bound whole and read-only (its
            headers, libraries, internal programs).
        programs: other host programs it runs (the assembler, the linker), bound with the
            libraries they load.
        kit: the kit's files in ``arena/match/kits`` shown in ``{kit}`` (a C++ header).
        extra_address_mb: RLIMIT_AS above the compile's memory limit (a JVM's reservations).
        environment: variables the steps run with, besides the sandbox's (Go's cache).
        version: the argument that makes :attr:`program` print its version.
        source_name: the name the source is compiled under (``Bot.java``: a language that
            names a file after what it holds); empty: the author's own (a worker's copy of a
            stored version is named by its hash, so its errors then show ``bot.cpp``).
    """

    program: str
    steps: tuple[tuple[str, ...], ...]
    artefact: str
    package: str
    directories: tuple[str, ...] = ()
    programs: tuple[str, ...] = ()
    kit: tuple[str, ...] = ()
    extra_address_mb: int = 0
    environment: tuple[tuple[str, str], ...] = ()
    version: str = "--version"
    source_name: str = ""


#: What GCC's drivers need besides themselves: headers, libraries (static ones too, in the
#: architecture's own directory under /usr/lib), their own programs (cc1plus, collect2), the
#: assembler and the linker.
_GCC_DIRECTORIES = ("/usr/include", "/usr/lib", "/usr/libexec")
_BINUTILS = ("/usr/bin/as", "/usr/bin/ld", "/usr/bin/ld.bfd")
#: GCC's flags for every compiled runtime: optimised, static (a binary needs no host
#: library in the sandbox), at most 10 errors printed.
_GCC_FLAGS = ("-O2", "-static", "-pipe", "-fmax-errors=10")
_GCC_OUT = ("-o", "{out}/bot", "{source}")
_GO = "/usr/lib/go-1.19/bin/go"
_RUSTC = "/usr/bin/rustc"
#: rustc links with GCC (named: /usr/bin/cc is an alternatives link), statically.
_RUST_STATIC = ("-C", "target-feature=+crt-static", "-C", "linker=/usr/bin/gcc-12")

#: Where Debian installs its JDKs.
JVM_ROOT = Path("/usr/lib/jvm")
#: Debian's names of machine architectures (``platform.machine()``'s), as in a JDK's folder.
_DEBIAN_ARCHITECTURES = {"x86_64": "amd64", "aarch64": "arm64", "armv7l": "armhf", "i686": "i386"}


def java_home(root: Path = JVM_ROOT, machine: str | None = None) -> str:
    """Debian's OpenJDK 17 on this machine (package openjdk-17-jdk-headless: javac; its
    -jre-headless: java): the installed ``java-17-openjdk-ARCH`` folder under ``root``
    (the first, by name, holding ``bin/java``); with none installed, this machine's
    architecture's (``amd64``, ``arm64``...), where the package would put it."""
    installed = sorted(
        path
        for path in root.glob("java-17-openjdk-*")
        if not path.is_symlink() and (path / "bin" / "java").is_file()
    )
    if installed:
        return str(installed[0])
    machine = machine or platform.machine()
    return str(root / f"java-17-openjdk-{_DEBIAN_ARCHITECTURES.get(machine, machine)}")


#: The OpenJDK 17 the java runtime runs (:func:`java_home`, found once).
JAVA_HOME = java_home()
#: What the JVM needs besides its launcher: its libraries, module image and class-data
#: archive (lib), its configuration (conf, links into /etc/java-17-openjdk).
_JAVA_DIRECTORIES = (f"{JAVA_HOME}/lib", f"{JAVA_HOME}/conf", "/etc/java-17-openjdk")
#: The JVM's own libraries (loaded with dlopen, so ldd of its launcher does not name them):
#: the libraries they load are bound.
_JVM_LIBRARIES = tuple(
    f"{JAVA_HOME}/lib/{name}"
    for name in ("server/libjvm.so", "libjava.so", "libjimage.so", "libzip.so", "libnio.so",
                 "libnet.so", "libverify.so")
)  # fmt: skip
#: The JVM's flags in the sandbox (measured: benchmarks/runtimes.py, docs/writing-a-bot.md).
JVM_FLAGS = (
    "-XX:+UseSerialGC",  # no collector threads
    "-XX:TieredStopAtLevel=1",  # C1 only: nothing compiling through the match on its clock
    "-XX:CICompilerCount=1",
    # A compiler thread that ends takes its CPU time out of the tree's sum (cputime.py reads
    # live threads): the moves after it would be charged less than nothing.
    "-XX:-UseDynamicNumberOfCompilerThreads",
    "-XX:-UsePerfData",  # no hsperfdata file in /tmp
    "-XX:CompressedClassSpaceSize=64m",  # (1 GB of address space by default)
    "-XX:MaxMetaspaceSize=128m",
    "-XX:ReservedCodeCacheSize=32m",
    # The JVM's own messages (warnings, a failed start) on stderr: stdout is the protocol's.
    "-XX:+DisplayVMOutputToStderr",
    "-Xlog:disable",
    "-Xlog:all=warning:stderr",
)
#: javac in a JVM of its own (kits/JavaBuild.java runs it through javax.tools): the
#: author's file under its own name, whatever its class is called, compiled with the kit
#: into a jar.
_JAVAC_STEP = (
    f"{JAVA_HOME}/bin/java", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-XX:-UsePerfData",
    "-Xmx512m", "-XX:CompressedClassSpaceSize=64m", "-XX:ReservedCodeCacheSize=32m",
    "-XX:+DisplayVMOutputToStderr", "{kit}/JavaBuild.java", "{source}", "{out}/bot.jar",
    "{kit}/java",
)  # fmt: skip
#: The kit's sources (package arena), compiled with every Java bot.
_JAVA_KIT = tuple(
    sorted(f"java/{p.name}" for p in (Path(__file__).with_name("kits") / "java").glob("*.java"))
)


@dataclass(frozen=True, slots=True)
class BotRuntime:
    """One runtime: how a bot file of it is named, started and sandboxed.

    Attributes:
        name: its name in settings, the API and the database (``python-numpy``).
        label: for people (``Python 3 + numpy``).
        suffix: what an uploaded file of it ends with (``.py``).
        media_type: its file's media type, as the API serves a version's source
            (``text/x-python``).
        stored_suffix: what a worker's copy of a stored version is named with.
        interpreter: the host program, shown at the same path inside the sandbox.
        kit: the bot kit's file in ``arena/match`` (``botkit.py``), run as ``/kit/<kit>``.
        arguments: the interpreter's arguments before the kit.
        packages: whether a package environment (numpy's) is bound and put on the path.
        extra_address_mb: RLIMIT_AS above the memory limit (V8's, the JVM's reservations).
        heap_flag: an interpreter flag taking a heap cap in MB (``--max-old-space-size=``,
            ``-Xmx``), followed by ``heap_unit`` (``m``).
        launch: the interpreter's arguments just before the bot (java's ``-jar``).
        directories: host directories its interpreter needs, bound whole and read-only.
        libraries: host libraries its interpreter loads itself (dlopen, which ldd of the
            interpreter does not see): the libraries they load are bound.
        package: the Debian package of its interpreter (what to install where it is missing).
        program: its toolchain for people (``Python``, ``g++``), with the version its
            :attr:`toolchain` prints.
        compiler: its compile step, for a compiled runtime (None: the source runs as it is).
    """

    name: str
    label: str
    suffix: str
    stored_suffix: str
    interpreter: str
    kit: str
    media_type: str = "text/x-python"
    arguments: tuple[str, ...] = ()
    packages: bool = False
    extra_address_mb: int = 0
    heap_flag: str = ""
    heap_unit: str = ""
    launch: tuple[str, ...] = ()
    directories: tuple[str, ...] = ()
    libraries: tuple[str, ...] = ()
    package: str = "python3"
    program: str = "Python"
    compiler: Compiler | None = None

    @property
    def toolchain(self) -> tuple[str, str]:
        """The host program and argument that print the runtime's version: the compiler's
        of a compiled runtime, else the interpreter's ``--version``."""
        if self.compiler is None:
            return self.interpreter, "--version"
        return self.compiler.program, self.compiler.version

    def argv(self, kit: str, bot: str, memory_mb: int) -> list[str]:
        """The interpreter's arguments that run ``bot`` under the kit at ``kit`` (inside
        paths), for a sandbox of ``memory_mb``."""
        path = ["--path", numpy_dir()] if self.packages else []
        return [*self.arguments, *self._heap(memory_mb), kit, *path, bot]

    def program_argv(self, bot: str, memory_mb: int) -> list[str]:
        """The interpreter's arguments that run ``bot`` as a program speaking the protocol
        (or, for java, a jar holding the kit)."""
        return [*self.arguments, *self._heap(memory_mb), *self.launch, bot]

    def _heap(self, memory_mb: int) -> list[str]:
        """The heap cap flag, three quarters of ``memory_mb`` (at least 16 MB), if any."""
        if not self.heap_flag:
            return []
        return [f"{self.heap_flag}{max(16, memory_mb * 3 // 4)}{self.heap_unit}"]


#: Every runtime, by name: the one place they are declared.
RUNTIMES: Mapping[str, BotRuntime] = {
    runtime.name: runtime
    for runtime in (
        BotRuntime(
            name="python",
            label="Python 3 (standard library)",
            suffix=".py",
            stored_suffix=".py",
            interpreter="/usr/bin/python3",
            kit="botkit.py",
            arguments=("-I",),
        ),
        BotRuntime(
            name="python-numpy",
            label=f"Python 3 + numpy {NUMPY_VERSION}",
            suffix=".py",
            stored_suffix=".numpy.py",
            interpreter="/usr/bin/python3",
            kit="botkit.py",
            arguments=("-I",),
            packages=True,
        ),
        BotRuntime(
            name="javascript",
            label="JavaScript (Node.js)",
            suffix=".js",
            media_type="text/javascript",
            stored_suffix=".js",
            interpreter="/usr/bin/node",
            kit="botkit.js",
            # One thread for V8's platform work: a bot's CPU is its own, and each thread
            # reserves address space.
            arguments=("--single-threaded", "--max-semi-space-size=8"),
            extra_address_mb=1024,
            heap_flag="--max-old-space-size=",
            package="nodejs",
            program="Node.js",
        ),
        BotRuntime(
            name="cpp",
            label="C++17 (g++)",
            suffix=".cpp",
            media_type="text/x-c++src",
            stored_suffix=".cpp",
            interpreter="",  # the artefact is the program
            kit="",
            package="g++-12",
            program="g++",
            compiler=Compiler(
                program="/usr/bin/g++-12",
                steps=(("/usr/bin/g++-12", "-std=c++17", *_GCC_FLAGS, "-I{kit}", *_GCC_OUT),),
                artefact="bot",
                package="g++-12",
                directories=_GCC_DIRECTORIES,
                programs=_BINUTILS,
                kit=("arena.hpp",),
            ),
        ),
        BotRuntime(
            name="c",
            label="C11 (gcc), a program speaking the protocol",
            suffix=".c",
            media_type="text/x-csrc",
            stored_suffix=".c",
            interpreter="",
            kit="",
            package="gcc-12",
            program="gcc",
            compiler=Compiler(
                program="/usr/bin/gcc-12",
                steps=(("/usr/bin/gcc-12", "-std=c11", *_GCC_FLAGS, *_GCC_OUT, "-lm"),),
                artefact="bot",
                package="gcc-12",
                directories=_GCC_DIRECTORIES,
                programs=_BINUTILS,
            ),
        ),
        BotRuntime(
            name="go",
            label="Go 1.19, a program speaking the protocol",
            suffix=".go",
            media_type="text/x-go",
            stored_suffix=".go",
            interpreter="",
            kit="",
            package="golang-1.19-go",
            program="Go",
            # Go's runtime reserves about 720 MB of address space before main (its heap's
            # maps): RLIMIT_AS is the memory limit plus this; the cgroup bounds real use.
            extra_address_mb=1024,
            compiler=Compiler(
                program=_GO,
                # (no -trimpath: it would make the standard library's packages, installed
                # built, stale: a minute of rebuilding them at every compile)
                steps=((_GO, "build", "-o", "{out}/bot", "{source}"),),
                artefact="bot",
                package="golang-1.19-go",
                directories=("/usr/lib/go-1.19", "/usr/share/go-1.19"),
                # static, and nothing fetched (the build cache goes to $HOME, the sandbox's /tmp)
                environment=(("CGO_ENABLED", "0"), ("GOPROXY", "off")),
                version="version",
            ),
        ),
        BotRuntime(
            name="rust",
            label="Rust 1.63 (rustc), a program speaking the protocol",
            suffix=".rs",
            media_type="text/x-rust",
            stored_suffix=".rs",
            interpreter="",
            kit="",
            package="rustc",
            program="rustc",
            compiler=Compiler(
                program=_RUSTC,
                steps=((_RUSTC, "--edition=2021", "-O", *_RUST_STATIC, *_GCC_OUT),),
                artefact="bot",
                package="rustc",
                directories=_GCC_DIRECTORIES,  # its libraries, and GCC's as its linker
                programs=("/usr/bin/gcc-12", *_BINUTILS),
            ),
        ),
        BotRuntime(
            name="java",
            label="Java 17 (OpenJDK)",
            suffix=".java",
            media_type="text/x-java",
            stored_suffix=".java",
            interpreter=f"{JAVA_HOME}/bin/java",
            kit="",  # compiled into the jar
            arguments=JVM_FLAGS,
            extra_address_mb=512,
            heap_flag="-Xmx",
            heap_unit="m",
            launch=("-jar",),
            directories=_JAVA_DIRECTORIES,
            libraries=_JVM_LIBRARIES,
            package="openjdk-17-jre-headless",
            program="Java",
            compiler=Compiler(
                program=f"{JAVA_HOME}/bin/javac",
                steps=(_JAVAC_STEP,),
                artefact="bot.jar",
                package="openjdk-17-jdk-headless",
                directories=(JAVA_HOME, "/etc/java-17-openjdk"),
                programs=_JVM_LIBRARIES,  # (bound with the libraries they load)
                kit=("JavaBuild.java", *_JAVA_KIT),
            ),
        ),
    )
}


def find_runtime(name: str) -> BotRuntime:
    """The runtime called ``name``.

    Raises:
        RuntimeMissing: there is none (the sentence lists those there are).
    """
    try:
        return RUNTIMES[name]
    except KeyError:
        raise RuntimeMissing(
            f"no runtime {name[:40]!r}: the runtimes are {', '.join(RUNTIMES)}."
        ) from None


def runtime_of_file(path: str | PurePath) -> BotRuntime | None:
    """The runtime a bot file runs under by its name (``.numpy.py``: python-numpy, ``.py``:
    python, ``.js``: javascript; the longest ending wins), or None (a program)."""
    name = PurePath(path).name
    found = [r for r in RUNTIMES.values() if name.endswith(r.stored_suffix)]
    return max(found, key=lambda r: len(r.stored_suffix)) if found else None


def runtime_for_upload(filename: str, runtime: str | None) -> BotRuntime:
    """The runtime of an upload named ``filename``: ``runtime`` if given (its files must end
    with its suffix), else the one its suffix names (``.py``: python, ``.js``: javascript,
    ``.cpp``: cpp, ``.c``: c, ``.java``: java).

    Raises:
        RuntimeMissing: an unknown runtime, or a file of none (the sentence says which).
    """
    suffix = PurePath(filename).suffix
    if runtime:
        found = find_runtime(runtime)
        if suffix != found.suffix:
            raise RuntimeMissing(
                f"{filename or 'the file'} is not a {found.suffix} file: a {found.name} bot is "
                f"one {found.suffix} file."
            )
        return found
    for candidate in RUNTIMES.values():  # the first of a suffix is its default
        if candidate.suffix == suffix:
            return candidate
    raise RuntimeMissing(
        f"{filename or 'the file'} is not {file_kinds()}: "
        f"a bot is one file of a runtime ({', '.join(RUNTIMES)})."
    )


def file_kinds() -> str:
    """The files a bot may be, for sentences: ``a .py, .js, ... or .rs file``."""
    suffixes = list(dict.fromkeys(runtime.suffix for runtime in RUNTIMES.values()))
    return f"a {', '.join(suffixes[:-1])} or {suffixes[-1]} file"


def numpy_dir() -> str:
    """The numpy environment's directory (host path, the same inside the sandbox)."""
    return os.environ.get(NUMPY_DIR_ENV) or NUMPY_DEFAULT_DIR


def numpy_install_command() -> str:
    """The command that installs the numpy environment where :func:`numpy_dir` looks."""
    return (
        f"/usr/bin/python3 -m pip install --no-deps --only-binary=:all: --target "
        f"{numpy_dir()} numpy=={NUMPY_VERSION} (or scripts/install-runtimes; ./run test does it "
        "as root)"
    )


def runtime_missing(runtime: BotRuntime) -> str | None:
    """Why ``runtime`` cannot run here (what to install), or None."""
    if runtime.compiler is not None and not os.path.isfile(runtime.compiler.program):
        return f"{runtime.compiler.program} is missing: apt-get install {runtime.compiler.package}"
    if runtime.interpreter and not os.path.isfile(runtime.interpreter):
        return f"{runtime.interpreter} is missing: apt-get install {runtime.package}"
    if runtime.packages and not (Path(numpy_dir()) / "numpy" / "__init__.py").is_file():
        return f"the numpy environment {numpy_dir()} is missing: {numpy_install_command()}"
    if runtime.packages and any(
        Path(p).is_relative_to("/tmp") for p in (numpy_dir(), os.path.realpath(numpy_dir()))
    ):
        return (
            f"the numpy environment {numpy_dir()} is under /tmp, which the sandbox replaces "
            f"with its own: set {NUMPY_DIR_ENV} to a directory elsewhere"
        )
    return None


def host_paths(runtime: BotRuntime) -> HostPaths:
    """What ``runtime`` needs from the host: its interpreter's runtime (and its directories:
    the JDK's) and, with packages, the environment's directory and the host libraries its
    extension modules load."""
    paths = bot_paths(runtime.interpreter) if runtime.interpreter else HostPaths(frozenset())
    paths |= HostPaths(frozenset(), frozenset(d for d in runtime.directories if os.path.isdir(d)))
    if runtime.libraries:
        paths |= HostPaths(shared_libraries(*runtime.libraries))
    if runtime.packages and os.path.isdir(numpy_dir()):
        # (a missing environment is never cached: one installed later is bound at once)
        paths |= _environment(numpy_dir())
    return paths


@functools.cache
def _environment(directory: str) -> HostPaths:
    """The environment ``directory`` (bound whole) and the host libraries outside it that
    its extension modules load."""
    root = os.path.realpath(directory)
    modules = [str(p) for p in Path(root).rglob("*.so*") if p.is_file()]
    libraries = shared_libraries(*modules)
    outside = frozenset(p for p in libraries if not p.startswith(root + "/"))
    return HostPaths(outside, frozenset({directory, root}))


_VERSION = re.compile(r"(\d+\.\d+(?:\.\d+)?)")


@functools.cache
def runtime_version(name: str) -> str:
    """The versions ``name`` runs with, for a bot's page: ``Python 3.11.2, numpy 2.2.6``,
    ``g++ 12.2.0`` (its toolchain asked once; ``unknown`` where it cannot say)."""
    runtime = find_runtime(name)
    program = runtime.program
    try:
        printed = subprocess.run(
            list(runtime.toolchain),
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
            env={"PATH": "/usr/bin:/bin"},
        )
        found = _VERSION.search(printed.stdout + printed.stderr)
        version = f"{program} {found.group(1) if found else 'unknown'}"
    except (OSError, subprocess.SubprocessError):
        version = f"{program} unknown"
    return f"{version}, numpy {NUMPY_VERSION}" if runtime.packages else version
