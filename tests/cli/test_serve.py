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
from sqlalchemy import select

from arena.cli.common import UNAVAILABLE
from arena.store.db import Store
from arena.store.models import Match
from tests.servers import ARENA, children

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


_STARTED: list[Served] = []


class Served:
    """An ``arena serve`` process, its output collected as it comes; stopped by Ctrl-C."""

    #: What :meth:`stop` sends.
    STOP_SIGNAL = signal.SIGINT

    def __init__(
        self, args: list[str], env: dict[str, str] | None = None, new_session: bool = False
    ) -> None:
        self.proc = subprocess.Popen(
            [str(ARENA), "serve", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=env,
            start_new_session=new_session,
            # A child of a shell's background job inherits SIGINT ignored (CI started as
            # `bash .ci/run &`): Ctrl-C would do nothing. Restore it, as a terminal has it.
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        _STARTED.append(self)

    def close(self) -> None:
        """Kill the process if it still runs (a failed test's) and close its pipe."""
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=30)
        self._reader.join(timeout=5)
        if self.proc.stdout is not None:
            self.proc.stdout.close()

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
        self.proc.send_signal(self.STOP_SIGNAL)
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
    try:
        yield path
    finally:  # a failed test's server is killed, its pipe closed, before the next test
        while _STARTED:
            _STARTED.pop().close()
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
        # the database says when to look (a page rendered every 0.25 s cost the server
        # more CPU than the demo's games); the pages then say it
        _wait_done(database, "demo", deadline)
        page = _until(address + "tournaments/demo", '<span class="status done">done</span>', 1)
        assert "12 of 12 matches finished" in page and "24 of 24 games" in page
        # each reference bot checked under the demo's rules; no opening before 4 games a pair
        assert sum("checking the reference bot" in line for line in served.lines) == 4
        assert all(" under draw ..." in line for line in served.lines if "checking" in line)
        assert not any("demo-opening" in line for line in served.lines), served.lines
        # the worker refits the ratings when the tournament finishes
        _wait_rated(database, 4, deadline)
        _until(address + "leaderboards/draw", "<circle", 4)
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
        # SIGTERM (as a service manager stops it), then Ctrl-C pressed during the stop:
        # the stop is not cut short, and nothing is left running (the ``database`` fixture
        # checks)
        again.proc.send_signal(signal.SIGTERM)
        again.wait_for("stopping the worker and the web server", 30)
        again.proc.send_signal(signal.SIGINT)
    finally:
        assert again.stop() == 0, again.lines  # a second SIGINT, ignored as well
    assert again.lines[-1] == "stopped"


def _wait_done(database: Path, name: str, deadline: float) -> None:
    """Wait until the tournament ``name`` is done, asking the database every 0.25 s."""

    from arena.store.db import connect
    from arena.store.models import Tournament

    store = connect(f"sqlite:///{database}")
    try:
        while True:
            with store.read() as session:
                status = session.scalar(select(Tournament.status).where(Tournament.name == name))
            if status == "done":
                return
            assert time.monotonic() < deadline, f"the tournament {name!r} did not finish"
            time.sleep(0.25)
    finally:
        store.close()


def _wait_rated(database: Path, bots: int, deadline: float) -> None:
    """Wait until ``bots`` bots are rated under the demo's rules, asking the database."""
    from arena.engine.rules import PRESETS
    from arena.service.results import rating_table
    from arena.store.db import connect

    store = connect(f"sqlite:///{database}")
    try:
        while True:
            try:
                if len(rating_table(store, PRESETS["draw"])) >= bots:
                    return
            except LookupError:  # no rating yet
                pass
            assert time.monotonic() < deadline, "the demo's ratings never appeared"
            time.sleep(0.25)
    finally:
        store.close()


def _until(url: str, text: str, count: int, seconds: float = 30) -> str:
    """The page at ``url`` once it shows ``text`` ``count`` times (within ``seconds``: the
    database already says so, the page may lag by a cache's moment)."""
    deadline = time.monotonic() + seconds
    while (page := _get(url)).count(text) < count:
        assert time.monotonic() < deadline, f"{url} never showed {count} of {text!r}"
        time.sleep(0.25)
    return page


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
    assert not (tmp_path / "a.db").exists(), "a server that cannot listen made its database"


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


# --- supervision and the fault drill (issue 19) --------------------------------------------


class Session(Served):
    """``arena serve`` in a session of its own (``setsid``: FACTS.md, a script's ``&``
    ignores SIGINT), with the tests' fast timings; stopped with SIGTERM."""

    STOP_SIGNAL = signal.SIGTERM

    def __init__(self, args: list[str]) -> None:
        from tests.servers import FAST

        super().__init__(args, env={**os.environ, **FAST}, new_session=True)


def _tree(pid: int) -> set[int]:
    found, todo = set(), [pid]
    while todo:
        here = todo.pop()
        found.add(here)
        todo.extend(children(here))
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except OSError:
        return False
    return state != "Z"


def _match_worker(store: Store, serve_pid: int) -> int | None:
    """The pid of the match worker's main process (not the fast worker's), a child of
    serve's, by the heartbeat it records under its node name (``arena-SERVEPID@HOST``)."""
    from arena.store.models import Worker

    with store.read() as session:
        pid = session.scalar(
            select(Worker.pid).where(Worker.name == f"arena-{serve_pid}@{socket.gethostname()}")
        )
    return pid if pid in children(serve_pid) else None


def _killed_with_everything_it_started(served: Served, port: int) -> None:
    """SIGKILL ``served`` (as an OOM kill would): its workers, their pools, and the web
    server with its workers die too, and the port is free again."""
    tree = _tree(served.proc.pid) - {served.proc.pid}
    assert len(tree) >= 6, tree  # 2 workers with their pools, gunicorn with its 2 workers
    served.proc.kill()
    served.proc.wait(timeout=10)
    deadline = time.monotonic() + 20
    while any(_alive(pid) for pid in tree):
        assert time.monotonic() < deadline, [p for p in tree if _alive(p)]
        time.sleep(0.2)
    with socket.socket() as probe:  # nobody listens on the port (closed connections'
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # TIME_WAIT aside)
        probe.bind(("127.0.0.1", port))
        probe.listen()


@pytest.mark.slow
def test_fault_drill_the_worker_killed_mid_tournament(database: Path) -> None:
    """Under ``arena serve --demo``, ``kill -9`` of the match worker mid-tournament: serve
    logs it and starts a new worker within 30 s, the site answers throughout, every match
    is stored once, and a tournament cancelled meanwhile has nothing played. Then ``kill
    -9`` of serve itself: every process it started dies with it."""
    from click.testing import CliRunner
    from sqlalchemy import func

    from arena.cli.main import cli
    from arena.store.db import connect
    from arena.store.models import GameRecord, Tournament
    from arena.store.queue import cancel_tournament

    port = _free_port()
    url = f"sqlite:///{database}"
    # 40 games a pair, more than the opening's 20 (so the opening is seeded): each seating
    # one match of 20 games; a worker process claims its next match as it stores one, so
    # the match worker holds a match whenever the demo plays (480 games in all with the
    # opening's; 200 games a pair played 1,440 for the same checks)
    served = Session(["--demo", "--demo-games", "40", "--port", str(port), "--url", url])
    address = f"http://127.0.0.1:{port}/"
    failures: list[str] = []
    polls = [0]
    stop_polling = threading.Event()

    def poll() -> None:
        while not stop_polling.wait(0.25):
            try:
                _get(address + "healthz")
                polls[0] += 1
            except OSError as exc:
                failures.append(str(exc))

    poller = threading.Thread(target=poll, daemon=True)
    store = connect(url)
    try:
        served.wait_for("serving at", 240)
        served.wait_for("stored the tournament 'demo-opening'", 1)  # before 200 games a pair
        poller.start()
        created = CliRunner().invoke(  # in this process: the drill is not about the command
            cli, ["tournament", "create", "doomed", "--rules", "draw", "--bots",
                  "reference/random,reference/greedy", "--games", "50", "--url", url],
        )  # fmt: skip
        assert created.exit_code == 0, created.output
        with store.read() as session:
            doomed = session.scalar(select(Tournament.id).where(Tournament.name == "doomed"))
        assert doomed is not None
        from arena.service.broker import make_app, using
        from arena.service.dispatch import dispatch_matches

        with using(make_app(None, None, url)):
            assert dispatch_matches(store, doomed)
        deadline = time.monotonic() + 120
        while not any(
            m.status == "running" for m in _tournament_matches(store, "demo")
        ):  # the worker plays
            assert time.monotonic() < deadline, served.lines
            time.sleep(0.2)
        # its heartbeat's first write may come after its first match, on a busy machine
        while (victim := _match_worker(store, served.proc.pid)) is None:
            assert time.monotonic() < deadline, served.lines
            time.sleep(0.2)
        os.kill(victim, signal.SIGKILL)
        killed = time.monotonic()
        cancel_tournament(store, doomed, by="the drill")
        served.wait_for("the worker exited (exit status -9)", 30)
        line = served.wait_for("the worker started again", 30)
        assert time.monotonic() - killed < 30, line
        _wait_done(database, "demo", deadline + 300)
        _until(address + "tournaments/demo", '<span class="status done">done</span>', 1)
        matches = _tournament_matches(store, "demo")
        with store.read() as session:
            for match in matches:
                assert match.status == "done", (match.id, match.result)
                indexes = list(
                    session.scalars(
                        select(GameRecord.game_index).where(GameRecord.match_id == match.id)
                    )
                )
                assert sorted(indexes) == list(range(match.games)), match.id
            doomed_records = session.scalar(
                select(func.count())
                .select_from(GameRecord)
                .join(Match, Match.id == GameRecord.match_id)
                .where(Match.tournament_id == doomed)
            )
        assert doomed_records == 0
        assert {m.status for m in _tournament_matches(store, "doomed")} == {"void"}
        assert any(m.attempts > 1 for m in matches), "the killed worker's match was not replayed"
    finally:
        stop_polling.set()
        store.close()
    # serve's lines say whether the web server died (and why) when the site did not answer
    assert failures == [] and polls[0] > 20, (failures, polls, served.lines[-40:])
    # however serve dies (here SIGKILL), everything it started dies with it
    _killed_with_everything_it_started(served, port)


def _tournament_matches(store: Store, name: str) -> list[Match]:

    from arena.store.models import Tournament

    with store.read() as session:
        return list(
            session.scalars(
                select(Match)
                .join(Tournament, Tournament.id == Match.tournament_id)
                .where(Tournament.name == name)
                .order_by(Match.id)
            )
        )
