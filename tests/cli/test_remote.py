"""``arena remote push`` (arena/cli/remote.py) against a real server: the web app on a real
socket, with a thread doing a worker's jobs through the service's own code (the upload's
check and the compare's matches, unsandboxed: the bots are the reference ones), and the
command run as a bot author's CI runs it, as a program with the token in its environment."""

from __future__ import annotations

import os
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import select
from werkzeug.serving import make_server

from arena.cli.common import FAILED, OK, UNAVAILABLE, USAGE_ERROR
from arena.service.accounts import create_account, create_token
from arena.service.compares import stop_if_decided
from arena.service.matches import Config, run_match
from arena.service.uploads import check_upload
from arena.store.db import Store
from arena.store.models import Match, Upload
from tests.paths import REFERENCE_BOTS, ZOO
from tests.servers import ARENA
from tests.web.conftest import HASHER, PASSWORD, make_app

pytestmark = pytest.mark.parametrize("url", ["sqlite"], indirect=True)


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
            check_upload(store, upload, sandboxed=False)
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


def test_a_ci_pushes_a_version_and_compares_it(store: Store, server: str, tmp_path: Path) -> None:
    ada = create_account(store, "ada", PASSWORD, hasher=HASHER)
    token = create_token(store, ada.id, "ci", ["read", "upload", "run"])
    store.add_bot_version("bob", "first", (ZOO / "first.py").read_text(), {})
    mybot = tmp_path / "mybot.py"
    mybot.write_text((REFERENCE_BOTS / "greedy.py").read_text())
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
    again = _push(tmp_path, str(mybot), "--server", server, token=token)
    assert again.returncode == OK
    assert "ada/mybot: already stored as version 1" in again.stdout
    broken = tmp_path / "broken.py"
    broken.write_text("def play(observation):\n    return observation.legal_moves[99]\n")
    rejected = _push(tmp_path, str(broken), "--server", server, token=token)
    assert rejected.returncode == FAILED, rejected.stdout + rejected.stderr
    assert "ada/broken: rejected: " in rejected.stdout


def test_remote_push_mistakes_are_one_line(store: Store, server: str, tmp_path: Path) -> None:
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
        ((*bot, "--rules", "draw"), reader, USAGE_ERROR, "--rules is for --compare"),
        (("nofile.py", "--server", server), reader, USAGE_ERROR, "does not exist"),
    ]
    for args, token, status, message in cases:
        ran = _push(tmp_path, *args, token=token)
        assert ran.returncode == status, (args, ran.returncode, ran.stderr)
        assert message in ran.stderr, (args, ran.stderr)
        assert "Traceback" not in ran.stderr
