"""docker-compose.yml and the Dockerfile, checked without a Docker engine.

What is validated here: the compose file, by Debian's ``docker-compose`` 1.29.2 (``config
-q`` checks the schema, types and values, and is shown to reject broken copies); the
resolved configuration's wiring (health checks, scaling, environment, dependencies); that
every command in it exists in this project's CLIs; and that the web command and its health
check work when run for real (gunicorn on a free port). Nothing here builds the image or
starts a container: no engine runs on this machine (docs/deployment.md).

The resolved configuration is read from ``docker-compose config``'s YAML, converted to JSON by
docker-compose's own interpreter (its PyYAML), so the project needs no YAML library.
"""

from __future__ import annotations

import functools
import itertools
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from click.testing import CliRunner
from sqlalchemy.engine import make_url

from arena.cli import worker as worker_cli
from arena.match.sandbox import SLOT_LOCK_DIR
from arena.service import broker
from arena.service.broker import BROKER_ENV
from arena.store.db import upgrade
from tests.paths import REPO

ROOT = REPO
COMPOSE_FILE = ROOT / "docker-compose.yml"
#: The further machines' workers (docs/deployment.md, "More hosts").
WORKERS_FILE = ROOT / "docker-compose.workers.yml"
DOCKERFILE = ROOT / "Dockerfile"
DOCKERIGNORE = ROOT / ".dockerignore"
# The project's console scripts (arena, celery, gunicorn) sit beside this interpreter.
BIN = Path(sys.executable).parent

ARENA_SERVICES = ("migrate", "worker", "fast-worker", "web")
ALL_SERVICES = {"postgres", "redis", *ARENA_SERVICES}
# One-shot services: nothing for a health check to watch.
WITHOUT_HEALTHCHECK = {"migrate"}
WORKERS = ("worker", "fast-worker")

YAML_TO_JSON = "import json, sys, yaml; json.dump(yaml.safe_load(sys.stdin), sys.stdout)"


def _docker_compose() -> str:
    path = shutil.which("docker-compose")
    if path is None:
        pytest.fail(
            "docker-compose not found: install Debian's docker-compose 1.29 with "
            "'apt-get install --no-install-recommends docker-compose' (./run test does it as root)"
        )
    return path


def _compose_env() -> dict[str, str]:
    """The environment minus variables that would change how compose reads the file, and
    with setuptools' distutils shim off (``SETUPTOOLS_USE_DISTUTILS=stdlib``): Debian's
    docker-compose imports ``distutils.spawn``, which the shim serves by loading setuptools
    and pkg_resources, 0.2 of the 0.5 CPU s of each run."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("COMPOSE_", "DOCKER_"))}
    return {**env, "ARENA_SECRET_KEY": "a key for the tests", "SETUPTOOLS_USE_DISTUTILS": "stdlib"}


def _config(
    path: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [_docker_compose(), "-f", str(path), "config", *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
        env=env if env is not None else _compose_env(),
        cwd=path.parent,
    )


def _yaml_to_json(text: str) -> Any:
    """Parse YAML with the interpreter docker-compose runs on (it ships PyYAML)."""
    with open(_docker_compose(), "rb") as script:
        first = script.readline().decode(errors="replace").strip()
    interpreter = shlex.split(first[2:]) if first.startswith("#!") else []
    if not interpreter or "python" not in Path(interpreter[-1]).name:
        pytest.fail(f"docker-compose is not a Python script (first line {first!r}): need 1.29")
    result = subprocess.run(
        [*interpreter, "-c", YAML_TO_JSON],
        input=text,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert result.returncode == 0, f"docker-compose's Python could not parse YAML:\n{result.stderr}"
    return json.loads(result.stdout)


#: The host's HOSTNAME while the file is resolved: a ``$HOSTNAME`` compose filled in would
#: show it (test_no_host_variable_is_interpolated).
HOST_NAME = "the-host-not-the-container"


@pytest.fixture(scope="module")
def resolving() -> subprocess.CompletedProcess[str]:
    """``docker-compose config`` of the file, run once for the module (each run is half a
    CPU second): its status and warnings are the validator's (``config -q`` validates as
    ``config`` does, without the output), its output the resolved file; with the host's
    HOSTNAME set to :data:`HOST_NAME`."""
    return _config(COMPOSE_FILE, env={**_compose_env(), "HOSTNAME": HOST_NAME})


@pytest.fixture(scope="module")
def config(resolving: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    """``docker-compose config``: the file resolved (anchors merged, values normalized)."""
    assert resolving.returncode == 0, resolving.stderr
    resolved: dict[str, Any] = _yaml_to_json(resolving.stdout)
    return resolved


def _services(config: dict[str, Any]) -> dict[str, dict[str, Any]]:
    services: dict[str, dict[str, Any]] = config["services"]
    return services


def _command(service: dict[str, Any]) -> list[str]:
    command = service["command"]
    return [str(word) for word in command] if isinstance(command, list) else shlex.split(command)


# --- the validator --------------------------------------------------------------------------


def test_compose_file_is_valid(resolving: subprocess.CompletedProcess[str]) -> None:
    assert resolving.returncode == 0, (
        f"docker-compose config rejected the file:\n{resolving.stderr}"
    )
    assert resolving.stderr == "", resolving.stderr


@pytest.mark.parametrize(
    ("old", "new", "complaint"),
    [
        ("retries: 10", "retries: many", "retries"),
        ("condition: service_completed_successfully", "condition: service_done", "service_done"),
        ("services:", "name: arena\nservices:", "name"),
    ],
    ids=["healthcheck-bad-type", "bad-condition", "compose-v2-only-key"],
)
def test_validator_rejects_a_broken_copy(
    tmp_path: Path, old: str, new: str, complaint: str
) -> None:
    text = COMPOSE_FILE.read_text()
    assert old in text
    broken = tmp_path / "docker-compose.yml"
    broken.write_text(text.replace(old, new, 1))
    result = _config(broken, "-q")
    assert result.returncode != 0, "docker-compose config -q accepted a broken file"
    assert complaint in result.stderr, result.stderr


def test_no_host_variable_is_interpolated(
    resolving: subprocess.CompletedProcess[str], tmp_path: Path
) -> None:
    """``$$HOSTNAME`` reaches the container's shell; a single ``$`` would be filled in (with
    the host's value, or blank) by compose itself, with a warning this test would see."""
    assert resolving.returncode == 0, resolving.stderr
    assert "variable is not set" not in resolving.stderr
    assert "$$HOSTNAME" in COMPOSE_FILE.read_text()
    assert HOST_NAME not in resolving.stdout
    # The check works: the same file with a single $ is interpolated on the host.
    single = tmp_path / "docker-compose.yml"
    single.write_text(COMPOSE_FILE.read_text().replace("$$HOSTNAME", "$HOSTNAME"))
    env = {**_compose_env(), "HOSTNAME": HOST_NAME}
    assert HOST_NAME in _config(single, env=env).stdout


# --- the wiring -----------------------------------------------------------------------------


def test_services(config: dict[str, Any]) -> None:
    assert set(_services(config)) == ALL_SERVICES
    assert "name" not in config and "develop" not in json.dumps(config)


def test_healthchecks(config: dict[str, Any]) -> None:
    for name, service in _services(config).items():
        if name in WITHOUT_HEALTHCHECK:
            continue
        check = service.get("healthcheck")
        assert check and check["test"][0] in ("CMD", "CMD-SHELL"), f"{name}: no health check"
        assert not check.get("disable"), name


def test_worker_is_scalable(config: dict[str, Any]) -> None:
    worker = _services(config)["worker"]
    assert "container_name" not in worker
    assert "ports" not in worker
    assert worker.get("privileged") is True, "the sandbox needs it (docs/deployment.md)"


def test_further_machines_run_the_same_workers_on_the_first_ones_servers(
    config: dict[str, Any],
) -> None:
    """docker-compose.workers.yml is valid; its services are docker-compose.yml's workers
    but for their environment (the first machine's PostgreSQL and Redis, which it refuses to
    start without) and their start order (nothing to wait for on that machine), so the two
    files cannot drift apart."""
    urls = {
        "ARENA_DATABASE_URL": "postgresql+psycopg://arena:secret@10.0.0.1:5432/arena",
        "ARENA_BROKER_URL": "redis://10.0.0.1:6379/0",
    }
    result = _config(WORKERS_FILE, env={**_compose_env(), **urls})
    assert result.returncode == 0 and result.stderr == "", result.stderr
    further: dict[str, Any] = _yaml_to_json(result.stdout)
    assert set(_services(further)) == set(WORKERS)
    assert set(further["volumes"]) == {"arena-slots"}
    for name in WORKERS:
        here, there = _services(config)[name], _services(further)[name]
        assert there["environment"] == urls, name
        assert "depends_on" not in there, name
        same = set(here) - {"environment", "depends_on"}
        assert {key: there.get(key) for key in same} == {key: here[key] for key in same}, name
        assert set(there) == same | {"environment"}, name
    without = {k: v for k, v in _compose_env().items() if k not in urls}
    result = _config(WORKERS_FILE, "-q", env={**without, "ARENA_BROKER_URL": "redis://x:6379/0"})
    assert result.returncode != 0
    assert "set ARENA_DATABASE_URL to the first machine's PostgreSQL" in result.stderr


def test_a_fast_worker_takes_checks_and_interactive_work_and_nobody_beats(
    config: dict[str, Any],
) -> None:
    """Upload checks and interactive work have a worker that long matches cannot take; the
    sweep runs in every worker's thread, so there is no beat service (its sweep task waited
    behind long matches)."""
    services = _services(config)
    assert "beat" not in services
    assert _command(services["fast-worker"])[:4] == ["arena", "worker", "--lanes", "fast"]
    assert "--no-sweep" not in _command(services["worker"])
    assert services["fast-worker"].get("privileged") is True


def test_workers_share_the_slot_locks(config: dict[str, Any]) -> None:
    """Scaled workers claim sandbox slot blocks from one lock directory (a shared volume at
    the path the image's ``arena.match.sandbox.SLOT_LOCK_DIR`` resolves to: no TMPDIR there), so
    two containers never seat bots under the same uid and cgroup."""
    for name in WORKERS:
        mounts = _services(config)[name]["volumes"]
        assert f"arena-slots:/tmp/{SLOT_LOCK_DIR.name}:rw" in mounts, name
    assert "arena-slots" in config["volumes"]
    assert "TMPDIR" not in DOCKERFILE.read_text()


def test_web_runs_unprivileged(config: dict[str, Any]) -> None:
    web = _services(config)["web"]
    user = str(web.get("user", "root"))
    assert user.partition(":")[0] not in ("", "0", "root"), user
    assert not web.get("privileged")
    assert [(p["published"], p["target"]) for p in web["ports"]] == [(8000, 8000)]


def test_web_needs_a_secret_key_and_shares_its_rate_limits(config: dict[str, Any]) -> None:
    env = _services(config)["web"]["environment"]
    assert env["ARENA_SECRET_KEY"] == "a key for the tests"  # from the environment
    assert env["ARENA_LIMITER_URL"] == "redis://redis:6379/1"
    assert env["ARENA_HTTPS"] == ""
    assert env["ARENA_TRUSTED_PROXIES"] == "0"  # no proxy in the file: trust no header
    without = {k: v for k, v in _compose_env().items() if k != "ARENA_SECRET_KEY"}
    result = _config(COMPOSE_FILE, env=without)
    assert result.returncode != 0
    assert "set ARENA_SECRET_KEY to a long random string" in result.stderr


def test_environment_points_at_the_services(config: dict[str, Any]) -> None:
    services = _services(config)
    postgres_env = services["postgres"]["environment"]
    for name in ARENA_SERVICES:
        env = services[name]["environment"]
        database = make_url(env["ARENA_DATABASE_URL"])
        assert database.drivername == "postgresql+psycopg", name
        assert (database.host, database.port) == ("postgres", 5432), name
        assert database.username == postgres_env["POSTGRES_USER"], name
        assert database.password == postgres_env["POSTGRES_PASSWORD"], name
        assert database.database == postgres_env["POSTGRES_DB"], name
        broker = urlsplit(env["ARENA_BROKER_URL"])
        assert (broker.scheme, broker.hostname, broker.port) == ("redis", "redis", 6379), name


def test_start_order(config: dict[str, Any]) -> None:
    def conditions(name: str) -> dict[str, str]:
        depends = _services(config)[name]["depends_on"]
        return {dep: spec["condition"] for dep, spec in depends.items()}

    healthy, done = "service_healthy", "service_completed_successfully"
    assert conditions("migrate") == {"postgres": healthy}
    for worker in WORKERS:
        assert conditions(worker) == {"postgres": healthy, "redis": healthy, "migrate": done}
    assert conditions("web")["migrate"] == done


def test_data_lives_in_named_volumes(config: dict[str, Any]) -> None:
    services = _services(config)
    assert set(config["volumes"]) == {"postgres-data", "redis-data", "arena-slots"}
    assert "postgres-data:/var/lib/postgresql/data:rw" in services["postgres"]["volumes"]
    assert "redis-data:/data:rw" in services["redis"]["volumes"]
    assert _command(services["redis"]) == ["redis-server", "--appendonly", "yes"]


def test_arena_services_share_the_image(config: dict[str, Any]) -> None:
    services = _services(config)
    for name in ARENA_SERVICES:
        assert Path(services[name]["build"]["context"]) == ROOT, name
        assert services[name]["image"] == services["migrate"]["image"], name


# --- the commands exist ---------------------------------------------------------------------


def _commands(config: dict[str, Any]) -> list[tuple[str, list[str]]]:
    """Every command the arena services run: their ``command`` and health checks."""
    found = []
    for name in ARENA_SERVICES:
        service = _services(config)[name]
        found.append((name, _command(service)))
        check = service.get("healthcheck", {}).get("test")
        if check and check[0] == "CMD-SHELL":
            found.append((f"{name} healthcheck", shlex.split(check[1])))
        elif check:
            found.append((f"{name} healthcheck", check[1:]))
    return found


def _run_help(argv: list[str]) -> str:
    """The output of ``argv`` (a help), run once for the test process: the worker's and the
    fast worker's commands ask for the same helps (``celery -A workers.app inspect --help``
    loads the app: seconds of CPU)."""
    return _help(tuple(argv))


@functools.cache
def _help(argv: tuple[str, ...]) -> str:
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    result = subprocess.run(
        argv, capture_output=True, text=True, check=False, timeout=120, env=env, cwd=ROOT
    )
    assert result.returncode == 0, f"{shlex.join(argv)} failed:\n{result.stdout}{result.stderr}"
    return result.stdout


def _long_options(argv: list[str]) -> list[str]:
    return [word.partition("=")[0] for word in argv if word.startswith("--")]


def test_arena_commands_exist(config: dict[str, Any]) -> None:
    """``arena <subcommand> --help`` exits 0 and lists every option the file passes."""
    arena = [(where, argv) for where, argv in _commands(config) if argv[0] == "arena"]
    assert {where for where, _ in arena} == {"migrate", "worker", "fast-worker"}
    for where, argv in arena:
        subcommand = list(itertools.takewhile(lambda word: not word.startswith("-"), argv[1:]))
        usage = _run_help([str(BIN / "arena"), *subcommand, "--help"])
        for option in _long_options(argv):
            assert option in usage, f"{where}: {shlex.join(argv)}: no {option} in its --help"


def test_celery_commands_exist(config: dict[str, Any]) -> None:
    """``celery -A workers.app <subcommand> --help`` loads the app and exits 0."""
    celery = [(where, argv) for where, argv in _commands(config) if argv[0] == "celery"]
    assert {where for where, _ in celery} == {"worker healthcheck", "fast-worker healthcheck"}
    for where, argv in celery:
        assert argv[1:3] == ["-A", "workers.app"], where
        usage = _run_help([str(BIN / "celery"), *argv[1:4], "--help"])
        for option in _long_options(argv):
            assert option in usage, f"{where}: {shlex.join(argv)}: no {option} in its --help"


@pytest.mark.parametrize("name", WORKERS)
def test_worker_healthcheck_pings_the_worker_node(
    config: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    """The health check's ``-d`` names the node ``arena worker`` starts in the container:
    ``arena worker`` runs celery's worker command with ``--hostname arena-<pid>@<host>``,
    and it runs as PID 1 there. Runs the real command up to Celery's (the sandbox check
    skipped)."""

    from arena.cli.main import cli

    worker = _services(config)[name]
    assert "init" not in worker, "an init process would make the worker's PID other than 1"
    # `config` prints values re-escaped: $$ is the $ the container's shell sees.
    check = shlex.split(worker["healthcheck"]["test"][1].replace("$$", "$"))
    destination = check[check.index("-d") + 1]

    url = f"sqlite:///{tmp_path / 'arena.db'}"
    upgrade(url)
    runs: list[list[str]] = []

    def fake_run(args: list[str]) -> None:
        runs.append(list(args))
        raise SystemExit(0)

    monkeypatch.setattr(broker, "run_celery", fake_run)
    monkeypatch.setattr(worker_cli, "Forked", _InProcess)  # the Celery worker run here
    # the command hands the worker its settings in this process's environment: restored after
    for key in ("ARENA_DATABASE_URL", BROKER_ENV, "ARENA_WORKER_UNSANDBOXED", "ARENA_WORKER_SWEEP"):
        monkeypatch.setenv(key, os.environ.get(key, ""))
    argv = [*_command(worker)[1:], "--url", url, "--broker", "redis://127.0.0.1:1/0"]
    result = CliRunner().invoke(cli, [*argv, "--unsandboxed"])
    assert result.exit_code == 0 and runs, result.output
    node = runs[0][runs[0].index("--hostname") + 1]
    in_container = re.sub(rf"-{os.getpid()}@", "-1@", node, count=1)
    assert destination.replace("$HOSTNAME", socket.gethostname()) == in_container


class _InProcess:
    """:class:`arena.cli.supervise.Forked`'s stand-in: ``run()`` in this process, at once."""

    pid = os.getpid()

    def __init__(self, run: Callable[[], object]) -> None:
        try:
            run()
            self.returncode: int | None = 0
        except SystemExit as exc:
            self.returncode = exc.code if isinstance(exc.code, int) else 1

    def poll(self) -> int | None:
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        assert self.returncode is not None
        return self.returncode


# --- the web server, for real ---------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _answers(port: int) -> bool:
    """Whether an HTTP request to the port gets an answer (any status) within 10 s."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=10):
            return True
    except urllib.error.HTTPError:
        return True  # e.g. 503 from an unreachable database: the app answered
    except OSError:
        return False


@contextmanager
def _gunicorn(argv: list[str], database_url: str, log: Path) -> Iterator[int]:
    """Run the web service's command on a free loopback port; yield the port."""
    port = _free_port()
    assert "0.0.0.0:8000" in argv
    argv = [
        str(BIN / "gunicorn"),
        *(w.replace("0.0.0.0:8000", f"127.0.0.1:{port}") for w in argv[1:]),
    ]
    env = {**os.environ, "ARENA_DATABASE_URL": database_url}
    with open(log, "wb") as out:
        process = subprocess.Popen(
            argv, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=log.parent
        )
    try:
        deadline = time.monotonic() + 90
        while not _answers(port):  # a worker has loaded the app (a busy machine: seconds)
            assert process.poll() is None, f"gunicorn exited:\n{log.read_text()}"
            assert time.monotonic() < deadline, f"gunicorn did not answer:\n{log.read_text()}"
            time.sleep(0.2)
        yield port
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _healthcheck(config: dict[str, Any], port: int) -> subprocess.CompletedProcess[str]:
    test = _services(config)["web"]["healthcheck"]["test"]
    assert test[:3] == ["CMD", "python", "-c"]
    code = test[3].replace("127.0.0.1:8000", f"127.0.0.1:{port}")
    assert code != test[3]
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=30
    )


@pytest.mark.slow
def test_web_command_and_healthcheck(config: dict[str, Any], tmp_path: Path) -> None:
    """gunicorn serves ``web:create_app()`` as the web service does; its health check passes
    on a good database and fails on an unreachable one."""
    argv = _command(_services(config)["web"])
    assert argv[0] == "gunicorn"
    url = f"sqlite:///{tmp_path / 'arena.db'}"
    upgrade(url)
    # the command with one process (gunicorn's last --workers wins, the first still parsed):
    # each loads the app, seconds of CPU, and the health check's answer does not depend on
    # how many there are
    one = [*argv, "--workers", "1"]
    with _gunicorn(one, url, tmp_path / "good.log") as port:
        result = _healthcheck(config, port)
        assert result.returncode == 0, result.stderr
    unreachable = "postgresql+psycopg://x@127.0.0.1:1/x?connect_timeout=1"
    with _gunicorn(one, unreachable, tmp_path / "bad.log") as port:
        result = _healthcheck(config, port)
        assert result.returncode != 0
        assert "503" in result.stderr, result.stderr


# --- the Dockerfile -------------------------------------------------------------------------


def _instructions() -> list[tuple[str, str]]:
    """The Dockerfile's instructions as (KEYWORD, arguments), continuation lines joined."""
    text = re.sub(r"\\\n", " ", DOCKERFILE.read_text())
    lines = [line.strip() for line in text.splitlines()]
    return [
        (keyword.upper(), rest.strip())
        for keyword, _, rest in (line.partition(" ") for line in lines)
        if keyword and not keyword.startswith("#")
    ]


def test_dockerfile_installs_the_project() -> None:
    instructions = _instructions()
    assert instructions[0] == ("FROM", "python:3.11-slim-bookworm")
    pip = [args for keyword, args in instructions if keyword == "RUN" and "pip install" in args]
    assert len(pip) == 1 and pip[0].split()[-1] == ".", pip
    apt = " ".join(args for keyword, args in instructions if "apt-get install" in args)
    for package in ("bubblewrap", "libseccomp2", "util-linux"):
        assert package in apt.split(), package
    assert ("CMD", '["arena", "--help"]') in instructions


def test_dockerfile_copies_what_exists() -> None:
    """Every ``COPY`` source exists and is not excluded by .dockerignore."""
    ignored = {
        line.strip() for line in DOCKERIGNORE.read_text().splitlines()
        if line.strip() and not line.startswith("#")
    }  # fmt: skip
    sources = [
        source
        for keyword, args in _instructions()
        if keyword == "COPY"
        for source in args.split()[:-1]
    ]
    assert {"pyproject.toml", "arena"} <= set(sources)
    for source in sources:
        assert (ROOT / source).exists(), source
        assert source not in ignored, f"{source} is copied but .dockerignore excludes it"
    for local_state in (".venv", ".git", "*.db", "arena-broker"):
        assert local_state in ignored, local_state
