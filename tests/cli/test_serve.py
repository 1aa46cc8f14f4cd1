"""``arena serve``: the web app and a worker on the embedded defaults, for real (gunicorn, a
Celery worker on the filesystem broker, sandboxed bots, an SQLite file), stopped by Ctrl-C
(SIGINT) with nothing left running."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena.cli.common import UNAVAILABLE
from tests.servers import ARENA

pytestmark = pytest.mark.slow


def _get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as reply:
        text: str = reply.read().decode()
        return text


def _processes_mentioning(marker: str) -> list[str]:
    """Processes whose command line or environment mention ``marker`` (this test's own
    database path), other than this test process."""
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = Path(entry.path, "cmdline").read_bytes()
            environ = Path(entry.path, "environ").read_bytes()
        except OSError:
            continue
        if marker.encode() in cmdline or marker.encode() in environ:
            command = cmdline.replace(b"\0", b" ").decode(errors="replace")
            found.append(f"{entry.name}: {command[:120]}")
    return found


class Served:
    """An ``arena serve`` process, its output collected as it comes."""

    def __init__(self, args: list[str]) -> None:
        self.proc = subprocess.Popen(
            [str(ARENA), "serve", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line.rstrip("\n"))

    def wait_for(self, text: str, seconds: float) -> str:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            for line in self.lines:
                if text in line:
                    return line
            if self.proc.poll() is not None:
                break
            time.sleep(0.1)
        raise AssertionError(f"no {text!r} from arena serve: {self.lines}")

    def stop(self) -> int:
        self.proc.send_signal(signal.SIGINT)
        status = self.proc.wait(timeout=60)
        self._reader.join(timeout=5)
        assert self.proc.stdout is not None
        self.proc.stdout.close()
        return status


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@pytest.fixture
def database(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "served.db"
    yield path
    assert _processes_mentioning(str(path)) == [], "arena serve left processes running"


def test_serve_demo_plays_its_tournament_and_stops_on_ctrl_c(database: Path) -> None:
    port = _free_port()
    served = Served(
        ["--demo", "--demo-games", "4", "--port", str(port), "--url", f"sqlite:///{database}"]
    )
    try:
        line = served.wait_for("serving at", 180)
        address = f"http://127.0.0.1:{port}/"
        assert address in line
        assert "demo" in _get(address)
        deadline = time.monotonic() + 180
        while '<span class="status done">done</span>' not in _get(address + "tournaments/demo"):
            assert time.monotonic() < deadline, "the demo tournament did not finish"
            time.sleep(1)
        page = _get(address + "tournaments/demo")
        assert "12 of 12 matches finished" in page and "24 of 24 games" in page
        # the worker refits the ratings when the tournament finishes
        while _get(address + "leaderboards/draw").count("<circle") < 4:
            assert time.monotonic() < deadline, "the demo's ratings never appeared"
            time.sleep(1)
    finally:
        began = time.monotonic()
        status = served.stop()
        stopped_in = time.monotonic() - began
    assert status == 0, served.lines
    assert served.lines[-1] == "stopped"
    assert stopped_in < 30, f"Ctrl-C took {stopped_in:.1f} s"
    # a second start on the same database seeds nothing and serves what is there
    again = Served(["--demo", "--port", str(port), "--url", f"sqlite:///{database}"])
    try:
        again.wait_for("nothing seeded", 60)
        again.wait_for("serving at", 120)
        assert "demo" in _get(f"http://127.0.0.1:{port}/tournaments")
    finally:
        assert again.stop() == 0


def test_a_second_ctrl_c_still_stops_everything(database: Path) -> None:
    """Ctrl-C pressed twice (or a SIGTERM on top): the stop is not cut short, and nothing
    is left running (the ``database`` fixture checks)."""
    served = Served(["--port", str(_free_port()), "--url", f"sqlite:///{database}"])
    served.wait_for("serving at", 120)
    served.proc.send_signal(signal.SIGINT)
    served.wait_for("stopping the worker and the web server", 30)
    served.proc.send_signal(signal.SIGINT)
    served.proc.send_signal(signal.SIGTERM)
    assert served.stop() == 0, served.lines  # a third SIGINT, ignored as well
    assert served.lines[-1] == "stopped"


def test_serve_on_a_port_in_use_is_one_line(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            [str(ARENA), "serve", "--port", str(port), "--url", f"sqlite:///{tmp_path / 'a.db'}"],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    assert done.returncode == UNAVAILABLE, done
    assert done.stderr.strip().count("\n") == 0
    assert f"cannot listen on 127.0.0.1:{port}" in done.stderr and "--port" in done.stderr


def test_the_instance_folder_is_beside_the_database_never_the_checkout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``arena serve`` keeps the web app's generated key beside an SQLite database (wherever
    it was started from), else in the user's data directory."""
    from arena.cli.serve import instance_folder

    monkeypatch.chdir(tmp_path)
    assert instance_folder("sqlite:///data/arena.db") == tmp_path / "data" / "arena-instance"
    assert instance_folder(f"sqlite:///{tmp_path}/x.db") == tmp_path / "arena-instance"
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "share"))
    postgres = instance_folder("postgresql+psycopg://u@localhost/arena")
    assert postgres == tmp_path / "share" / "domino-arena"
