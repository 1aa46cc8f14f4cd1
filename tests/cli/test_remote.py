"""``arena remote push`` (arena/cli/remote.py) against a real server: the web app on a real
socket, with a thread doing a worker's jobs through the service's own code (the upload's
check and the compare's matches, unsandboxed: the bots are the reference ones), and the
command run as a bot author's CI runs it, as a program with the token in its environment."""

from __future__ import annotations

import http.client
import http.server
import os
import socket
import struct
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import select
from werkzeug.serving import make_server

from arena.cli import remote
from arena.cli.common import FAILED, OK, UNAVAILABLE, USAGE_ERROR
from arena.cli.main import main
from arena.service import intake
from arena.service.accounts import create_account, create_token
from arena.service.compares import stop_if_decided
from arena.service.matches import Config, run_match
from arena.service.uploads import check_in_sandbox
from arena.store.db import Store
from arena.store.models import Match, Upload
from tests.paths import REFERENCE_BOTS, ZOO
from tests.servers import ARENA
from tests.web.conftest import HASHER, PASSWORD, make_app


def _work(store: Store, cache: Path, stop: threading.Event) -> None:
    """Check pending uploads and play pending matches until ``stop``."""
    config = Config(bot_cache=cache)
    while not stop.wait(0.1):
        with store.read() as session:
            upload = session.scalar(select(Upload.id).where(Upload.status == "pending"))
            match = session.scalar(
                select(Match.id).where(Match.status == "pending").order_by(Match.id).limit(1)
            )
        if upload is not None:
            check_in_sandbox(store, upload, sandboxed=False)
        if match is not None:
            run_match(store, match, config=config, sandboxed=False)
            stop_if_decided(store, match)


@pytest.fixture
def server(store: Store, url: str, tmp_path: Path) -> Iterator[str]:
    app = make_app(url, tmp_path / "broker")
    web = make_server("127.0.0.1", 0, app, threaded=True)
    threading.Thread(target=web.serve_forever, daemon=True).start()
    stop = threading.Event()
    worker = threading.Thread(target=_work, args=(store, tmp_path / "cache", stop))
    worker.start()
    try:
        yield f"http://127.0.0.1:{web.server_port}"
    finally:
        stop.set()
        worker.join()
        web.shutdown()
        app.extensions["arena_store"].close()


def _push(tmp_path: Path, *args: str, token: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "ARENA_TOKEN": token or ""}
    return subprocess.run(
        [str(ARENA), "remote", "push", *args],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300, check=False,
    )  # fmt: skip


def test_a_ci_pushes_a_version_and_compares_it(
    store: Store,
    server: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # the push again below falls within the intake's window however long the compare took
    # on a loaded machine (the server is this process; the window's own test: test_intake)
    monkeypatch.setattr(intake, "REPEAT_WINDOW_SECONDS", 3600.0)
    ada = create_account(store, "ada", PASSWORD, hasher=HASHER)
    token = create_token(store, ada.id, "ci", ["read", "upload", "run"])
    store.add_bot_version("bob", "first", (ZOO / "first.py").read_text(), {})
    mybot = tmp_path / "mybot.py"
    source = (REFERENCE_BOTS / "greedy.py").read_text()
    mybot.write_text(source.replace('NAME = "greedy"', 'NAME = "mybot"'))  # the file's name
    pushed = _push(
        tmp_path, str(mybot), "--server", server, "--compare", "bob/first", "--rules", "draw",
        "--elo1", "25", token=token,
    )  # fmt: skip
    assert pushed.returncode == OK, pushed.stdout + pushed.stderr
    lines = pushed.stdout.splitlines()
    assert lines[0] == "uploaded mybot.py as ada/mybot (upload 1)"
    assert lines[1] == "ada/mybot: accepted as version 1"
    assert lines[2].startswith(f"compare ada/mybot@1 against bob/first under draw: {server}/")
    assert any(line.startswith("games ") and "LLR" in line for line in lines)
    assert lines[-1].startswith("NEW passed (")
    # the next pushes through the same ``main`` in this process (a program's start: 0.3 s
    # of CPU each; the program's own run is the one above)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ARENA_TOKEN", token)
    assert main(["remote", "push", str(mybot), "--server", server]) == OK
    # the same file pushed again within the intake's window: the first upload, said so
    assert capsys.readouterr().out.splitlines() == [
        "already received mybot.py as ada/mybot (upload 1)",
        "ada/mybot: accepted as version 1",
    ]
    broken = tmp_path / "broken.py"
    broken.write_text("def play(observation):\n    return observation.legal_moves[99]\n")
    rejected = main(["remote", "push", str(broken), "--server", server])
    out, err = capsys.readouterr()
    assert rejected == FAILED, out + err
    assert "ada/broken: rejected: " in out


def test_remote_push_mistakes_are_one_line(
    store: Store,
    server: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Each mistake is one line and its exit status: the first through the console script,
    the rest through the same ``main`` in this process (a program's start is 1.5 s of CPU)."""
    ada = create_account(store, "ada", PASSWORD, hasher=HASHER)
    reader = create_token(store, ada.id, "r", ["read"])
    mybot = tmp_path / "mybot.py"
    mybot.write_text((REFERENCE_BOTS / "greedy.py").read_text())
    bot = (str(mybot), "--server", server)
    cases = [
        (bot, None, USAGE_ERROR, "set ARENA_TOKEN to an API token"),
        (bot, "da_wrong", USAGE_ERROR, "the server refused: a bearer token is needed"),
        (bot, reader, USAGE_ERROR, "the server refused: this token lacks the 'upload' scope"),
        ((str(mybot), "--server", "ftp://x"), reader, USAGE_ERROR, "must be an http:// or"),
        ((str(mybot), "--server", "http://127.0.0.1:9"), reader, UNAVAILABLE, "cannot reach"),
        ((*bot, "--compare", "bob/first"), reader, USAGE_ERROR, "--compare needs --rules"),
        ((*bot, "--rules", "draw"), reader, USAGE_ERROR, "--rules, --players, --teams and"),
        (("nofile.py", "--server", server), reader, USAGE_ERROR, "does not exist"),
    ]
    monkeypatch.chdir(tmp_path)
    # the unreachable server is tried as often as ever, without the 3.7 s of waits between
    # (the waits' own test: test_polling_survives_dropped_connections)
    monkeypatch.setattr(remote, "RETRY_DELAYS", (0.0,) * len(remote.RETRY_DELAYS))
    for number, (args, token, status, message) in enumerate(cases):
        if number == 0:
            ran = _push(tmp_path, *args, token=token)
            returncode, stderr = ran.returncode, ran.stderr
        else:
            monkeypatch.setenv("ARENA_TOKEN", token or "")
            returncode = main(["remote", "push", *args])
            stderr = capsys.readouterr().err
        assert returncode == status, (args, returncode, stderr)
        assert message in stderr, (args, stderr)
        assert "Traceback" not in stderr and stderr.strip().count("\n") == 0, stderr


# --- a server that drops connections ---------------------------------------------------------

#: A connection idle this long when its next request comes is closed instead of answered.
IDLE_SECONDS = 0.5


class _Dropping(http.server.BaseHTTPRequestHandler):
    """A proxy to the app that drops requests as a real server does when its keep-alive
    time runs out just as a request arrives: it closes the connection without an answer
    (every other time with a reset, RST) when a GET comes on a connection idle more than
    :data:`IDLE_SECONDS`, and when a GET is the first request of every other new
    connection. Everything else it forwards, kept alive. (GETs only: a POST is sent once,
    by design, and a slow machine must not make the test drop one.)"""

    protocol_version = "HTTP/1.1"
    upstream: tuple[str, int]
    connections: list[int]
    drops: list[str]

    def setup(self) -> None:
        super().setup()
        self.answered: float | None = None
        self.number = len(self.connections)
        self.connections.append(self.number)

    def log_message(self, format: str, *args: object) -> None:
        """Quiet."""

    def _forward(self) -> None:
        idle = self.answered is not None and time.monotonic() - self.answered > IDLE_SECONDS
        first = self.answered is None and self.number % 2 == 1
        if self.command == "GET" and (idle or first):
            self._drop()
            return
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else None
        skipped = {"connection", "keep-alive", "host", "transfer-encoding", "content-length"}
        headers = {k: v for k, v in self.headers.items() if k.lower() not in skipped}
        upstream = http.client.HTTPConnection(*self.upstream, timeout=30)
        upstream.request(self.command, self.path, body=body, headers=headers)
        reply = upstream.getresponse()
        data = reply.read()
        upstream.close()
        self.send_response(reply.status, reply.reason)
        for key, value in reply.getheaders():
            if key.lower() not in {*skipped, "date", "server"}:
                self.send_header(key, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        self.answered = time.monotonic()

    do_GET = do_POST = _forward  # noqa: N815 (http.server's names)

    def _drop(self) -> None:
        self.drops.append(f"{self.command} {self.path}")
        if len(self.drops) % 2 == 0:  # a reset rather than a close
            linger = struct.pack("ii", 1, 0)
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, linger)
            self.connection.close()
        self.close_connection = True


@pytest.fixture
def dropping(server: str) -> Iterator[tuple[str, list[str]]]:
    """The app behind :class:`_Dropping`: its URL, and the requests it dropped."""
    host, port = server.removeprefix("http://").split(":")
    drops: list[str] = []
    handler = type(
        "Handler", (_Dropping,), {"upstream": (host, int(port)), "drops": drops, "connections": []}
    )
    proxy = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=proxy.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{proxy.server_port}", drops
    finally:
        proxy.shutdown()
        proxy.server_close()


def test_polling_survives_dropped_connections(
    store: Store,
    dropping: tuple[str, list[str]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The push and its compare go through a server that drops kept-alive and new
    connections: each dropped GET is sent again, the command ends as it would without the
    drops, and ARENA_DEBUG=1 shows each drop's cause. Through ``main`` in this process (the
    program's own run: test_a_ci_pushes_a_version_and_compares_it)."""
    proxy, drops = dropping
    ada = create_account(store, "ada", PASSWORD, hasher=HASHER)
    token = create_token(store, ada.id, "ci", ["read", "upload", "run"])
    store.add_bot_version("bob", "first", (ZOO / "first.py").read_text(), {})
    mybot = tmp_path / "mybot.py"
    mybot.write_text((REFERENCE_BOTS / "greedy.py").read_text())
    args = (str(mybot), "--server", proxy, "--compare", "bob/first", "--rules", "draw")
    monkeypatch.setenv("ARENA_DEBUG", "1")
    monkeypatch.setenv("ARENA_TOKEN", token)
    monkeypatch.chdir(tmp_path)
    status = main(["remote", "push", *args, "--elo1", "25"])
    out, err = capsys.readouterr()
    assert status == OK, out + err
    assert out.splitlines()[-1].startswith("NEW passed (")
    assert len(drops) >= 2 and all(drop.startswith("GET /api/v1/") for drop in drops), drops
    retries = [line for line in err.splitlines() if "; again in " in line]
    assert len(retries) == len(drops), err
    assert "RemoteProtocolError: Server disconnected without sending a response" in err
    assert "Connection reset by peer" in err, err
