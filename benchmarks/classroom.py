"""The classroom drill (issue 22, "Measure"): a class of 30 on real workers.

A teacher creates a class and an assignment (references random, greedy and counter; grades
A = beats counter, B = beats greedy, C = beats random, F). 30 students join with the
class's code, then each uploads a bot within the same minute through the API (a mix: copies
of random, greedy and counter, each with a comment of its own, and broken ones: a bot that
raises at every move, one that exits at import, one that never answers). The web app runs
under gunicorn as ``arena serve`` runs it; one ``arena worker`` (``--concurrency``
processes, sandboxed) checks the uploads and plays the gauntlets. Meanwhile the 30 students
poll their pages every ``--every`` seconds as the browser does (the assignment page's live
part; the whole page every tenth time; their submission through the API every other time).

It prints the time from the first upload until every check is done and until every grade
is in, the grades and verdicts by kind of bot, the games played, and the pages' p50/p95
(goal: every grade within 10 minutes; pages p95 under 150 ms).

    ./run python benchmarks/classroom.py [--students 30] [--elo1 50] [--max-games 200]

``--crowd`` measures a room at once instead (issue 30, item 2): while the worker plays the
gauntlets of a few uploads, ``--students`` students join the class through the join form
from one address all at once, each pressing Join once (the page's script posts, and after a
503 posts again by itself after its Retry-After: web/static/js/arena.js; the client here
does the same); after a break they all log in at once the same way; then both again beside
a flood: ``--flood`` clients at another address (127.0.0.2) posting logins with random
names, each again ``--flood-pause`` seconds after its answer (0: at once, a hammering that
costs what any flood of requests costs, hashing or not). For each: the time until all are
in, posts per student, every student's presses (1 unless a refusal asked for another), ``/healthz``
(every 50 ms) and the home page (every 250 ms) p50/p95, the flood's answers, and the web
server's CPU (its processes' seconds per second of the phase). The web app runs as
``arena serve`` runs it (gunicorn, 2 processes of 16 threads, one hashing slot file folder),
with the per-address limits (``--lift-limits`` lifts them, as if the flood came from many
addresses: only the hashing line stands).

    ./run python benchmarks/classroom.py --crowd [--students 30] [--flood 48]
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import os
import random
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import uuid
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import func, select

from arena.cli.serve import web_argv
from arena.service.accounts import create_account, create_token, password_hasher
from arena.service.assignments import NewAssignment, create_assignment
from arena.service.classes import NewClass, create_class, join_class
from arena.store.db import Store, connect, upgrade
from arena.store.models import Match, Submission, SubmissionTest

if TYPE_CHECKING:
    from argon2 import PasswordHasher

ROOT = Path(__file__).resolve().parent.parent
ARENA = Path(sys.executable).parent / "arena"
BOTS, ZOO = ROOT / "bots", ROOT / "tests" / "bots"
PASSWORD = "correct horse battery"
CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')
#: The kinds of bot the students upload, in turn (a third broken would be a bad class).
KINDS = ("greedy", "random", "counter", "greedy", "random", "counter", "greedy", "random",
         "counter", "raise_in_move", "greedy", "random", "counter", "exit_at_import",
         "infinite_loop")  # fmt: skip


def _source(kind: str, student: str) -> bytes:
    path = BOTS / f"{kind}.py" if (BOTS / f"{kind}.py").is_file() else ZOO / f"{kind}.py"
    return path.read_bytes() + f"\n# {student}'s bot\n".encode()


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@contextlib.contextmanager
def _process(argv: list[str], env: dict[str, str], log: Path, ready: str) -> Iterator[None]:
    """A program in a session of its own, until ``ready`` is in its log; stopped after."""
    with log.open("wb") as out:
        process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out,
                                   stderr=subprocess.STDOUT, env={**os.environ, **env},
                                   cwd=ROOT, start_new_session=True)  # fmt: skip
    try:
        deadline = time.monotonic() + 90
        while ready not in log.read_text(errors="replace"):
            if process.poll() is not None or time.monotonic() > deadline:
                sys.exit(f"{argv[0]} did not start:\n{log.read_text(errors='replace')[-3000:]}")
            time.sleep(0.1)
        yield
    finally:
        for signum, wait in ((signal.SIGTERM, 30.0), (signal.SIGKILL, 10.0)):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signum)
            try:
                process.wait(timeout=wait)
                break
            except subprocess.TimeoutExpired:
                continue


def _request(
    port: int, method: str, path: str, token: str = "", body: bytes = b"",
    content_type: str = "", cookie: str = "",
) -> tuple[int, bytes, float, str]:  # fmt: skip
    """One request on a new connection (as a browser after its keep-alive ran out): its
    status, body, seconds and the session cookie it set (else ``cookie``)."""
    began = time.perf_counter()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        if content_type:
            headers["Content-Type"] = content_type
        if cookie:
            headers["Cookie"] = cookie
        connection.request(method, path, body=body or None, headers=headers)
        reply = connection.getresponse()
        data = reply.read()
        set_cookie = reply.getheader("Set-Cookie") or ""
    finally:
        connection.close()
    if set_cookie.startswith("session="):
        cookie = set_cookie.split(";", 1)[0]
    return reply.status, data, time.perf_counter() - began, cookie


def _log_in(port: int, name: str) -> str:
    """The session cookie of ``name`` logged in through the login form."""
    status, page, _, cookie = _request(port, "GET", "/login")
    found = CSRF.search(page.decode())
    if status != 200 or found is None:
        raise SystemExit(f"GET /login: {status}")
    form = urllib.parse.urlencode({"name": name, "password": PASSWORD,
                                   "csrf_token": found.group(1)}).encode()  # fmt: skip
    status, answer, _, cookie = _request(port, "POST", "/login", body=form, cookie=cookie,
                                    content_type="application/x-www-form-urlencoded")  # fmt: skip
    if status != 302:
        raise SystemExit(f"{name} could not log in: {status} {answer[:300]!r}")
    return cookie


def _multipart(filename: str, data: bytes) -> tuple[bytes, str]:
    boundary = uuid.uuid4().hex
    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"source\"; "
            f"filename=\"{filename}\"\r\nContent-Type: text/x-python\r\n\r\n").encode()  # fmt: skip
    return (
        body + data + f"\r\n--{boundary}--\r\n".encode(),
        f"multipart/form-data; boundary={boundary}",
    )


class Pages:
    """The pages' times, shared by the students' threads."""

    def __init__(self) -> None:
        self.seconds: dict[str, list[float]] = {}
        self.errors: list[str] = []
        self.lock = threading.Lock()

    def add(self, page: str, seconds: float) -> None:
        with self.lock:
            self.seconds.setdefault(page, []).append(seconds)


def _student(*args: Any) -> None:
    """A student's thread: :func:`_poll`, its failure kept as an error."""
    pages: Pages = args[8]
    try:
        _poll(*args)
    except Exception as exc:
        pages.errors.append(f"{args[4]}: {exc!r}")


def _poll(port: int, token: str, cookie: str, kind: str, name: str, start: float,
          every: float, stop: threading.Event, pages: Pages,
          submitted: dict[str, int]) -> None:  # fmt: skip
    time.sleep(max(0.0, start - time.monotonic()))
    body, content_type = _multipart(f"{kind}.py", _source(kind, name))
    status, data, seconds, _ = _request(port, "POST", "/api/v1/classes/drill/assignments/hw1/"
                                        "submissions", token, body, content_type)  # fmt: skip
    pages.add("submit (API)", seconds)
    if status != 202:
        pages.errors.append(f"{name}: submit {status} {data[:200]!r}")
        return
    submission = json.loads(data)["id"]
    submitted[name] = submission
    polls = 0
    while not stop.wait(every * random.uniform(0.8, 1.2)):
        # the page once in a while, its live part as the browser polls it; the API's reads
        polled = [("live part", "/classes/drill/assignments/hw1/live", "")]
        if polls % 10 == 0:
            polled.append(("assignment page", "/classes/drill/assignments/hw1", ""))
        if polls % 2 == 0:
            polled.append(("submission (API)", f"/api/v1/submissions/{submission}", token))
        polls += 1
        for page, path, bearer in polled:
            try:
                status, _, seconds, _ = _request(port, "GET", path, bearer,
                                                 cookie="" if bearer else cookie)  # fmt: skip
            except OSError as exc:
                pages.errors.append(f"{name}: {path}: {exc}")
                continue
            if status != 200:
                pages.errors.append(f"{name}: {path}: {status}")
            pages.add(page, seconds)


def _counts(url: str) -> tuple[Counter[str], int]:
    store = connect(url)
    try:
        with store.read() as session:
            statuses = Counter(str(s) for s in session.scalars(select(Submission.status)))
            games = session.scalar(
                select(func.coalesce(func.sum(Match.games), 0))
                .join(SubmissionTest, SubmissionTest.tournament_id == Match.tournament_id)
                .where(Match.status == "done")
            )
        return statuses, int(games or 0)
    finally:
        store.close()


def _percentile(times: list[float], share: float) -> float:
    ordered = sorted(times)
    return ordered[int(share * (len(ordered) - 1))]


def _drill_class(store: Store, hasher: PasswordHasher, args: argparse.Namespace) -> str:
    """The reference bots, the teacher, the class ``drill`` and its assignment ``hw1`` under
    ``args``' test; the class's join code."""
    for bot in ("random", "greedy", "counter"):
        store.add_bot_version("reference", bot, (BOTS / f"{bot}.py").read_text(), {})
    teacher = create_account(store, "teacher", PASSWORD, role="teacher", hasher=hasher)
    row = create_class(store, teacher, NewClass(name="drill", rule_sets=("block",)))
    assert row.join_code is not None
    create_assignment(store, teacher, NewAssignment(
        class_name="drill", name="hw1", deadline=datetime.now(UTC) + timedelta(hours=2),
        elo1=args.elo1, max_games=args.max_games, alpha=args.alpha, beta=args.beta,
        move_ms=args.move_ms,
    ))  # fmt: skip
    return row.join_code


def _setup(url: str, args: argparse.Namespace) -> dict[str, str]:
    """The class, its assignment and its students (joined with the code); their tokens."""
    store = connect(url)
    try:
        hasher = password_hasher()  # the server's own cost: a real join
        code = _drill_class(store, hasher, args)
        tokens = {}
        for n in range(args.students):
            name = f"student{n + 1:02d}"
            account = join_class(store, hasher, code, name, PASSWORD)
            tokens[name] = create_token(store, account.id, "drill", ["read", "upload"])
        return tokens
    finally:
        store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--students", type=int, default=30)
    parser.add_argument("--concurrency", type=int, default=2, help="the worker's processes")
    parser.add_argument("--elo1", type=float, default=50.0)
    parser.add_argument("--alpha", type=float, default=0.05)
    parser.add_argument("--beta", type=float, default=0.05)
    parser.add_argument("--max-games", type=int, default=200)
    parser.add_argument("--move-ms", type=int, default=1000)
    parser.add_argument("--every", type=float, default=3.0, help="seconds between polls")
    parser.add_argument("--limit", type=float, default=1800.0, help="give up after (s)")
    parser.add_argument("--crowd", action="store_true", help="a room at once (see above)")
    parser.add_argument("--flood", type=int, default=48, help="--crowd: the flood's clients")
    parser.add_argument("--flood-pause", type=float, default=1.0, help="--crowd: (s)")
    parser.add_argument("--uploads", type=int, default=8, help="--crowd: bots the worker plays")
    parser.add_argument("--lift-limits", action="store_true", help="--crowd: no address limits")
    args = parser.parse_args()
    if args.crowd:
        crowd(args)
        return
    directory = Path(tempfile.mkdtemp(prefix="arena-classroom-"))
    url = f"sqlite:///{directory / 'arena.db'}"
    upgrade(url)
    began = time.monotonic()
    tokens = _setup(url, args)
    print(f"class of {args.students} joined with its code in {time.monotonic() - began:.1f} s;"
          f" test elo0 0, elo1 {args.elo1:g}, alpha {args.alpha:g}, beta {args.beta:g}, "
          f"cap {args.max_games} games a reference, block, {args.move_ms} ms a move")  # fmt: skip
    env = {"ARENA_DATABASE_URL": url, "ARENA_SECRET_KEY": "classroom drill"}
    port = _free_port()
    gunicorn = [sys.executable, "-m", "gunicorn", "--bind", f"127.0.0.1:{port}", "--workers",
                "2", "--worker-class", "gthread", "--threads", "4", "--log-level", "info",
                "web:create_app()"]  # fmt: skip
    worker = [str(ARENA), "worker", "--concurrency", str(args.concurrency), "--loglevel", "INFO"]
    with (
        _process(gunicorn, env, directory / "web.log", "Booting worker"),
        _process(worker, env, directory / "worker.log", "ready."),
    ):
        _drill(url, port, tokens, args)
    print(f"(logs in {directory})")


def _drill(url: str, port: int, tokens: dict[str, str], args: argparse.Namespace) -> None:
    pages, stop = Pages(), threading.Event()
    submitted: dict[str, int] = {}
    kinds = {name: KINDS[n % len(KINDS)] for n, name in enumerate(tokens)}
    began = time.monotonic()
    cookies = {name: _log_in(port, name) for name in tokens}
    print(f"{len(cookies)} students logged in on the web in {time.monotonic() - began:.1f} s")
    rng = random.Random(1)
    start = time.monotonic() + 1.0
    threads = [
        threading.Thread(target=_student, daemon=True, args=(
            port, token, cookies[name], kinds[name], name, start + rng.uniform(0, 60),
            args.every, stop, pages, submitted))
        for name, token in tokens.items()
    ]  # fmt: skip
    for thread in threads:
        thread.start()
    checked = graded = None
    while time.monotonic() - start < args.limit:
        time.sleep(1.0)
        statuses, _ = _counts(url)
        total = sum(statuses.values())
        if total < len(tokens):
            continue
        if checked is None and statuses["pending"] == 0:
            checked = time.monotonic() - start
        if statuses["graded"] + statuses["rejected"] == total:
            graded = time.monotonic() - start
            break
    stop.set()
    for thread in threads:
        thread.join(timeout=60)
    _report(url, kinds, submitted, pages, checked, graded)


def _report(url: str, kinds: dict[str, str], submitted: dict[str, int], pages: Pages,
            checked: float | None, graded: float | None) -> None:  # fmt: skip
    _, games = _counts(url)
    print(f"every check done {checked if checked is None else round(checked)} s and every "
          f"grade in {graded if graded is None else round(graded)} s after the first upload "
          f"could start (uploads spread over 60 s); {games} games played; "
          f"load {os.getloadavg()[0]:.1f}")  # fmt: skip
    store = connect(url)
    try:
        with store.read() as session:
            rows = session.execute(select(Submission.id, Submission.status, Submission.grade)).all()
            tests = session.execute(
                select(SubmissionTest.submission_id, SubmissionTest.reference,
                       SubmissionTest.verdict, SubmissionTest.summary)
            ).all()  # fmt: skip
    finally:
        store.close()
    by_id = {sid: name for name, sid in submitted.items()}
    outcome: dict[str, Counter[str]] = {}
    for sid, status, grade in rows:
        kind = kinds.get(by_id.get(sid, ""), "?")
        outcome.setdefault(kind, Counter())[grade or status] += 1
    for kind, counts in sorted(outcome.items()):
        print(f"  {kind:>15}: {dict(counts)}")
    verdicts: dict[tuple[str, str], Counter[str]] = {}
    for sid, reference, verdict, summary in tests:
        key = (kinds.get(by_id.get(sid, ""), "?"), reference)
        verdicts.setdefault(key, Counter())[f"{verdict} ({(summary or {}).get('games')})"] += 1
    for (kind, reference), counts in sorted(verdicts.items()):
        print(f"  {kind:>8} v {reference:<8}: {dict(counts)}")
    everything = [s for page, times in pages.seconds.items() if "submit" not in page
                  for s in times]  # fmt: skip
    for page, times in sorted(pages.seconds.items()):
        print(f"  {page:>18}: {len(times)} requests, p50 {_percentile(times, 0.5) * 1000:.0f} ms,"
              f" p95 {_percentile(times, 0.95) * 1000:.0f} ms")  # fmt: skip
    if everything:
        print(
            f"  the polled pages: p95 {_percentile(everything, 0.95) * 1000:.0f} ms (goal 150 ms)"
        )
    if pages.errors:
        print(f"  {len(pages.errors)} errors, e.g. {pages.errors[:3]}")


# --- a room at once (--crowd) ---------------------------------------------------------------

#: The flood's address: another than the class's (loopback answers on all of 127/8).
FLOOD_ADDRESS = "127.0.0.2"


def _call(
    port: int, method: str, path: str, cookie: str = "", form: dict[str, str] | None = None,
    headers: dict[str, str] | None = None, source: str = "127.0.0.1",
) -> tuple[int, dict[str, str], str, str]:  # fmt: skip
    """One request on a new connection from ``source``: status, headers (lower-case
    names), body and the session cookie (the one set, else ``cookie``)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120,
                                            source_address=(source, 0))  # fmt: skip
    sent = dict(headers or {})
    if cookie:
        sent["Cookie"] = cookie
    body = None
    if form is not None:
        body = urllib.parse.urlencode(form)
        sent["Content-Type"] = "application/x-www-form-urlencoded"
    try:
        connection.request(method, path, body=body, headers=sent)
        reply = connection.getresponse()
        text = reply.read().decode(errors="replace")
        answer = {name.lower(): value for name, value in reply.getheaders()}
    finally:
        connection.close()
    set_cookie = answer.get("set-cookie", "")
    if set_cookie.startswith("session="):
        cookie = set_cookie.split(";", 1)[0]
    return reply.status, answer, text, cookie


class Watch:
    """``/healthz`` every 50 ms and the home page every 250 ms, each on a new connection,
    until stopped: their times."""

    def __init__(self, port: int) -> None:
        self.port, self.stop = port, threading.Event()
        self.times: dict[str, list[float]] = {"/healthz": [], "/": []}
        self.errors: list[str] = []
        self.threads = [threading.Thread(target=self._poll, args=(path, every), daemon=True)
                        for path, every in (("/healthz", 0.05), ("/", 0.25))]  # fmt: skip
        for thread in self.threads:
            thread.start()

    def _poll(self, path: str, every: float) -> None:
        while not self.stop.wait(every):
            began = time.perf_counter()
            try:
                status, *_ = _call(self.port, "GET", path)
            except OSError as exc:
                self.errors.append(f"{path}: {exc}")
                continue
            self.times[path].append(time.perf_counter() - began)
            if status != 200:
                self.errors.append(f"{path}: {status}")

    def end(self) -> dict[str, list[float]]:
        self.stop.set()
        for thread in self.threads:
            thread.join(130)
        return self.times


def _patiently(port: int, path: str, cookie: str, form: dict[str, str]) -> tuple[int, int]:
    """Post as the page's script does (again by itself after a 503's Retry-After): the last
    answer's status (302: in) and how many posts it took."""
    posts = 0
    while True:
        posts += 1
        status, headers, _, cookie = _call(port, "POST", path, cookie, form)
        if status == 503 and "retry-after" in headers:
            time.sleep(int(headers["retry-after"]))
            continue
        return status, posts


class Room:
    """A phase's students (each a thread, pressing once, together) and its outcome."""

    def __init__(self) -> None:
        self.done: dict[str, float] = {}
        self.posts: dict[str, int] = {}
        self.failed: list[str] = []
        self.lock = threading.Lock()

    def run(self, port: int, names: list[str], path: str, form_of: Any) -> float:
        """Each student GETs ``path`` (its form, a session), then all post together."""
        prepared = []
        for name in names:
            status, _, page, cookie = _call(port, "GET", path)
            token = CSRF.search(page)
            if status != 200 or token is None:
                raise SystemExit(f"GET {path}: {status}")
            prepared.append((name, cookie, {**form_of(name), "csrf_token": token.group(1)}))
        together = threading.Barrier(len(names) + 1)

        def press(name: str, cookie: str, form: dict[str, str]) -> None:
            together.wait()
            began = time.monotonic()
            try:
                status, posts = _patiently(port, path, cookie, form)
            except OSError as exc:
                status, posts = 0, 0
                self.failed.append(f"{name}: {exc}")
            with self.lock:
                self.posts[name] = posts
                if status == 302:
                    self.done[name] = time.monotonic() - began
                elif status:
                    self.failed.append(f"{name}: {status}")

        threads = [threading.Thread(target=press, args=p, daemon=True) for p in prepared]
        for thread in threads:
            thread.start()
        together.wait()
        began = time.monotonic()
        for thread in threads:
            thread.join(300)
        return time.monotonic() - began


class Flood:
    """``clients`` threads at :data:`FLOOD_ADDRESS` posting logins with random names, each
    again ``pause`` seconds after its answer, until stopped: the answers by status."""

    def __init__(self, port: int, clients: int, pause: float) -> None:
        self.port, self.stop, self.pause = port, threading.Event(), pause
        self.answers: Counter[int] = Counter()
        self.lock = threading.Lock()
        self.threads = [threading.Thread(target=self._attack, daemon=True)
                        for _ in range(clients)]  # fmt: skip
        for thread in self.threads:
            thread.start()

    def _attack(self) -> None:
        _, _, page, cookie = _call(self.port, "GET", "/login", source=FLOOD_ADDRESS)
        token = CSRF.search(page)
        assert token is not None
        while not self.stop.is_set():
            form = {"name": uuid.uuid4().hex[:12], "password": "a guess",
                    "csrf_token": token.group(1)}  # fmt: skip
            try:
                status, *_ = _call(self.port, "POST", "/login", cookie, form,
                                   source=FLOOD_ADDRESS)  # fmt: skip
            except OSError:
                status = 0
            with self.lock:
                self.answers[status] += 1
            self.stop.wait(self.pause)

    def end(self) -> Counter[int]:
        self.stop.set()
        for thread in self.threads:
            thread.join(130)
        return self.answers


def _cpu_seconds(group: int) -> float:
    """User and system CPU seconds of the processes in process group ``group``."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == group:  # pgrp
            total += (int(fields[11]) + int(fields[12])) / ticks
    return total


def _p(times: list[float], share: float) -> str:
    return f"{_percentile(times, share) * 1000:.0f}" if times else "-"


def _phase(label: str, port: int, web: int, names: list[str], path: str, form_of: Any,
           flood: int, pause: float) -> None:  # fmt: skip
    """One phase: the students at once (beside a flood of ``flood`` clients), watched."""
    watch, room = Watch(port), Room()
    attack = Flood(port, flood, pause) if flood else None
    if attack:
        time.sleep(2.0)  # the flood is under way when the class presses
    cpu, began = _cpu_seconds(web), time.monotonic()
    took = room.run(port, names, path, form_of)
    cores = (_cpu_seconds(web) - cpu) / (time.monotonic() - began)
    answers = attack.end() if attack else Counter()
    times = watch.end()
    posts = sorted(room.posts.values())
    print(f"{label}: {len(room.done)} of {len(names)} in within {took:.1f} s "
          f"(each pressed once; posts a student: median {posts[len(posts) // 2]}, "
          f"max {posts[-1]}, {sum(posts)} in all); "
          f"/healthz p50 {_p(times['/healthz'], 0.5)} p95 {_p(times['/healthz'], 0.95)} ms, "
          f"home page p50 {_p(times['/'], 0.5)} p95 {_p(times['/'], 0.95)} ms; "
          f"web CPU {cores:.2f} cores; load {os.getloadavg()[0]:.1f}")  # fmt: skip
    if attack:
        others = {s: n for s, n in answers.items() if s not in (401, 503, 429)}
        print(f"  the flood ({flood} clients at {FLOOD_ADDRESS}, each again {pause:g} s after "
              f"its answer): {sum(answers.values())} "
              f"posts, {answers[401]} hashed (401), {answers[503]} refused busy (503), "
              f"{answers[429]} over a limit (429), others {others}")  # fmt: skip
    if room.failed or watch.errors:
        print(f"  failed ({len(room.failed)}): {room.failed[:5]}; page errors: {watch.errors[:5]}")


def crowd(args: argparse.Namespace) -> None:
    """``--crowd``: a room at once, and beside a flood (the module's docstring)."""
    directory = Path(tempfile.mkdtemp(prefix="arena-crowd-"))
    url = f"sqlite:///{directory / 'arena.db'}"
    upgrade(url)
    code, tokens = _crowd_setup(url, args)
    env = {"ARENA_DATABASE_URL": url, "ARENA_SECRET_KEY": "classroom crowd",
           "ARENA_INSTANCE_PATH": str(directory / "instance")}  # fmt: skip
    if args.lift_limits:
        env |= {"ARENA_LOGIN_ADDRESS_LIMIT": "100000 per minute",
                "ARENA_LOGIN_LIMIT": "100000 per minute",
                "ARENA_SIGNUP_LIMIT": "100000 per minute",
                "ARENA_PASSWORD_FORM_LIMIT": "100000 per minute"}  # fmt: skip
    port = _free_port()
    gunicorn = web_argv("127.0.0.1", port)
    gunicorn[gunicorn.index("warning")] = "info"
    worker = [str(ARENA), "worker", "--concurrency", str(args.concurrency), "--loglevel", "INFO"]
    with (
        _process(gunicorn, env, directory / "web.log", "Booting worker"),
        _process(worker, env, directory / "worker.log", "ready."),
    ):
        for n, (name, token) in enumerate(tokens.items()):  # the worker plays meanwhile
            body, content_type = _multipart(f"{KINDS[n % 9]}.py", _source(KINDS[n % 9], name))
            status, data, *_ = _request(port, "POST", "/api/v1/classes/drill/assignments/hw1/"
                                        "submissions", token, body, content_type)  # fmt: skip
            if status != 202:
                raise SystemExit(f"{name}: submit {status} {data[:200]!r}")
        time.sleep(10.0)  # the worker is playing
        web = os.getpgid(_gunicorn_pid(directory / "web.log"))
        print(f"{args.uploads} uploads being played; {args.students} students, the flood "
              f"{args.flood} clients; per-address limits "
              f"{'lifted' if args.lift_limits else 'kept'}")  # fmt: skip
        secret = "a classroom passphrase"
        for flood, round_ in ((0, "a"), (args.flood, "b")):
            names = [f"pupil{round_}{n:02d}" for n in range(args.students)]
            beside = f" beside a {flood}-login flood" if flood else ""
            _phase(f"{args.students} joins at once{beside}", port, web, names,
                   f"/join/{code}", lambda n: {"pseudonym": n, "password": secret,
                                               "confirm": secret}, flood,
                   args.flood_pause)  # fmt: skip
            time.sleep(5.0)  # a break
            _phase(f"{args.students} logins at once{beside}", port, web, names, "/login",
                   lambda n: {"name": n, "password": secret}, flood,
                   args.flood_pause)  # fmt: skip
            time.sleep(5.0)
        statuses, games = _counts(url)
        print(f"the worker meanwhile: {games} games played, submissions {dict(statuses)}")
    print(f"(logs in {directory})")


def _gunicorn_pid(log: Path) -> int:
    """The gunicorn master's pid, from its log ("Listening at ... (PID)")."""
    found = re.search(r"Booting worker with pid: (\d+)", log.read_text(errors="replace"))
    if found is None:
        raise SystemExit(f"no gunicorn worker in {log}")
    return int(found.group(1))


def _crowd_setup(url: str, args: argparse.Namespace) -> tuple[str, dict[str, str]]:
    """The class and its assignment, and ``--uploads`` students (joined through the
    service) whose uploads the worker plays; the join code and their tokens."""
    store = connect(url)
    try:
        hasher = password_hasher(cheap=True)  # the set-up's own accounts: not measured
        code = _drill_class(store, hasher, args)
        tokens = {}
        for n in range(args.uploads):
            account = join_class(store, hasher, code, f"early{n}", PASSWORD)
            tokens[f"early{n}"] = create_token(store, account.id, "drill", ["read", "upload"])
        return code, tokens
    finally:
        store.close()


if __name__ == "__main__":
    main()
