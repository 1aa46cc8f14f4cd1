"""Password hashing under attack, and a classroom behind one address (issue 20, finding 2).

    ./run python benchmarks/logins.py [--attackers 50] [--bursts 5] [--seconds 10]
                                      [--students 30]

Serves the app with ``arena serve --unsandboxed`` (gunicorn, 2 processes of 4 threads, the
real argon2 parameters, the workers idle) on a fresh SQLite database, and prints, for
``/healthz`` (one request every 50 ms, each on a new connection), p50/p95 while idle and
during each burst:

1. **the classroom**: ``--students`` users from this one address, all at once, each signs
   up then logs in (a new session), pressing again after ``Retry-After`` when told the
   server is busy (503), as a person would: all must succeed; the total seconds.
2. **the attack from one address**: ``--bursts`` bursts (a second apart) of ``--attackers``
   logins with random names at once (as issue 20 measured), then a flood: as many clients,
   each posting again as soon as answered, for ``--seconds``: the bound answers 503 at
   once, then the per-address limits 429.
3. **the attack from many addresses**: the same on a second server whose per-address limits
   are lifted (``ARENA_LOGIN_ADDRESS_LIMIT``, ``ARENA_LOGIN_LIMIT``,
   ``ARENA_PASSWORD_FORM_LIMIT``), as if each request came from another address: only the
   bound on concurrent hashes stands (503).
4. **without the bound**, for comparison: the burst on a third server whose bound is
   lifted too (``ARENA_HASH_SLOTS=1000``): every login hashes, as before issue 20; and a
   flood of as many clients asking for the login page (no hash): what any flood costs.

Goal: ``/healthz`` p95 under 200 ms during the bursts, on 2 cores; the classroom within a
minute. Before the bound, 48 concurrent logins took ``/healthz`` from ~50 ms to 49 s.
"""

from __future__ import annotations

import argparse
import collections
import http.client
import os
import re
import secrets
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

HEALTH_EVERY = 0.05
CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def serve(folder: Path, extra_env: dict[str, str]) -> tuple[subprocess.Popen[bytes], int]:
    """``arena serve`` on a fresh database in ``folder``; returns once it answers."""
    port = _free_port()
    env = {**os.environ, "ARENA_SECRET_KEY": "benchmark", **extra_env}
    for name in ("ARENA_LIMITER_URL", "ARENA_BROKER_URL", "ARENA_INSTANCE_PATH"):
        env.pop(name, None)
    arena = str(Path(sys.executable).parent / "arena")
    argv = [arena, "serve", "--unsandboxed", "--port", str(port), "--concurrency", "1"]
    argv += ["--url", f"sqlite:///{folder / 'arena.db'}"]
    log = (folder / "serve.log").open("wb")
    server = subprocess.Popen(
        argv, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        try:
            if _get("127.0.0.1", port, "/healthz")[0] == 200:
                return server, port
        except OSError:
            pass
        time.sleep(0.3)
    stop(server)
    raise SystemExit(f"arena serve did not start: see {folder / 'serve.log'}")


def stop(server: subprocess.Popen[bytes]) -> None:
    """SIGTERM to ``arena serve`` (which stops what it started), SIGKILL if it lingers."""
    server.send_signal(signal.SIGTERM)
    try:
        server.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(server.pid, signal.SIGKILL)
        server.wait()


def _get(host: str, port: int, path: str) -> tuple[int, str]:
    connection = http.client.HTTPConnection(host, port, timeout=120)
    try:
        connection.request("GET", path)
        reply = connection.getresponse()
        return reply.status, reply.read().decode()
    finally:
        connection.close()


class Browser:
    """One person's browser: a kept-alive connection and the session cookie."""

    def __init__(self, port: int) -> None:
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        self.cookie = ""

    def request(
        self, method: str, path: str, form: dict[str, str] | None = None
    ) -> tuple[int, dict[str, str], str]:
        """One request: its status, headers and body (the session cookie kept)."""
        headers = {"Cookie": self.cookie} if self.cookie else {}
        body = None
        if form is not None:
            body = urllib.parse.urlencode(form)
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        try:
            self.connection.request(method, path, body=body, headers=headers)
            reply = reply_of(self.connection)
        except (http.client.HTTPException, OSError):
            self.connection.close()  # the server closed a kept-alive connection: again
            self.connection.request(method, path, body=body, headers=headers)
            reply = reply_of(self.connection)
        status, answer_headers, text = reply
        cookie = answer_headers.get("set-cookie", "")
        if cookie.startswith("session="):
            self.cookie = cookie.split(";", 1)[0]
        return status, answer_headers, text

    def form(self, path: str) -> str:
        """The CSRF token of the form at ``path``."""
        status, _, page = self.request("GET", path)
        found = CSRF.search(page)
        if status != 200 or found is None:
            raise SystemExit(f"GET {path}: {status}, no form")
        return found.group(1)


def reply_of(connection: http.client.HTTPConnection) -> tuple[int, dict[str, str], str]:
    reply = connection.getresponse()
    text = reply.read().decode()
    return reply.status, {k.lower(): v for k, v in reply.getheaders()}, text


@dataclass
class Health:
    """``/healthz`` asked every :data:`HEALTH_EVERY` seconds on a new connection, in a
    thread, until stopped: the times in seconds."""

    port: int
    seconds: list[float]
    running: threading.Event

    @classmethod
    def start(cls, port: int) -> Health:
        health = cls(port, [], threading.Event())
        health.running.set()
        threading.Thread(target=health._run, daemon=True).start()
        return health

    def _run(self) -> None:
        while self.running.is_set():
            began = time.perf_counter()
            status, _ = _get("127.0.0.1", self.port, "/healthz")
            if status != 200:
                print(f"/healthz answered {status}")
            self.seconds.append(time.perf_counter() - began)
            time.sleep(max(0.0, HEALTH_EVERY - (time.perf_counter() - began)))

    def stop(self) -> str:
        """Stop; p50/p95 in ms and the count."""
        self.running.clear()
        time.sleep(0.3)
        return percentiles(self.seconds)


def percentiles(seconds: list[float]) -> str:
    if len(seconds) < 2:
        return f"{len(seconds)} requests"
    cuts = statistics.quantiles(seconds, n=20)
    median = statistics.median(seconds)
    return (
        f"p50 {median * 1000:.0f} ms, p95 {cuts[18] * 1000:.0f} ms, "
        f"max {max(seconds) * 1000:.0f} ms ({len(seconds)} requests)"
    )


def idle(port: int, seconds: float = 5.0) -> str:
    health = Health.start(port)
    time.sleep(seconds)
    return health.stop()


def with_retries(action: Callable[[], tuple[int, dict[str, str], str]], counts: list[int]) -> int:
    """``action`` again after ``Retry-After`` while the server is busy (503); the final
    status. ``counts[0]`` counts the retries."""
    while True:
        status, headers, _ = action()
        if status != 503:
            return status
        counts[0] += 1
        time.sleep(float(headers.get("retry-after", "1")) + secrets.randbelow(500) / 1000)


def student(port: int, name: str, statuses: list[tuple[int, int]], retries: list[int]) -> None:
    """Sign up, then log in from a new session: the two final statuses."""
    password = secrets.token_urlsafe(12)
    browser = Browser(port)

    def sign_up() -> tuple[int, dict[str, str], str]:
        form = {"name": name, "password": password, "confirm": password}
        return browser.request("POST", "/signup", {**form, "csrf_token": browser.form("/signup")})

    signed = with_retries(sign_up, retries)
    browser = Browser(port)

    def log_in() -> tuple[int, dict[str, str], str]:
        form = {"name": name, "password": password, "csrf_token": browser.form("/login")}
        return browser.request("POST", "/login", form)

    statuses.append((signed, with_retries(log_in, retries)))


def classroom(port: int, students: int) -> str:
    health = Health.start(port)
    statuses: list[tuple[int, int]] = []
    retries = [0]
    began = time.perf_counter()
    threads = [
        threading.Thread(target=student, args=(port, f"student{n:02d}", statuses, retries))
        for n in range(1, students + 1)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    total = time.perf_counter() - began
    ok = sum(1 for signed, logged in statuses if signed == 302 and logged == 302)
    failed = [s for s in statuses if s != (302, 302)]
    return (
        f"{ok}/{students} signed up and logged in in {total:.1f} s "
        f"({retries[0]} presses again after a 503{'; failed: ' + str(failed) if failed else ''})"
        f"; /healthz meanwhile: {health.stop()}"
    )


def attack(
    port: int, attackers: int, seconds: float | None, bursts: int = 1, *, pages: bool = False
) -> str:
    """``attackers`` clients posting logins with random names, all at once: for
    ``seconds``, each as soon as the last was answered; or (None) ``bursts`` times one each,
    a second apart. With ``pages``, they ask for the login page instead (no hash at all)."""
    statuses: collections.Counter[int] = collections.Counter()
    answers: list[float] = []
    deadline = time.monotonic() + (seconds or 0.0)
    together = threading.Barrier(attackers)

    def attacker() -> None:
        browser = Browser(port)
        token = browser.form("/login")
        for burst in range(bursts):
            together.wait()
            if burst:
                time.sleep(1.0)
            while True:
                form = {"name": secrets.token_hex(6), "password": "guess", "csrf_token": token}
                began = time.perf_counter()
                if pages:
                    status, _, _ = browser.request("GET", "/login")
                else:
                    status, _, _ = browser.request("POST", "/login", form)
                answers.append(time.perf_counter() - began)
                statuses[status] += 1
                if seconds is None or time.monotonic() >= deadline:
                    break

    health = Health.start(port)
    threads = [threading.Thread(target=attacker) for _ in range(attackers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    shown = ", ".join(f"{status}: {count}" for status, count in sorted(statuses.items()))
    return (
        f"/healthz {health.stop()}; logins answered {shown}; "
        f"a login's answer {percentiles(answers)}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--attackers", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--students", type=int, default=30)
    parser.add_argument("--bursts", type=int, default=5)
    options = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory() as temporary:
        folder = Path(temporary) / "one-address"
        folder.mkdir()
        server, port = serve(folder, {})
        try:
            print(f"idle:                      /healthz {idle(port)}")
            print(
                f"classroom ({options.students}, one address): {classroom(port, options.students)}"
            )
            print(f"idle again:                /healthz {idle(port)}")
            result = attack(port, options.attackers, None, options.bursts)
            print(f"bursts, one address:       {result}")
            result = attack(port, options.attackers, options.seconds)
            print(f"flood, one address:        {result}")
        finally:
            stop(server)
        folder = Path(temporary) / "many-addresses"
        folder.mkdir()
        lifted = {
            "ARENA_LOGIN_ADDRESS_LIMIT": "1000000 per minute",
            "ARENA_LOGIN_LIMIT": "1000000 per minute",
            "ARENA_PASSWORD_FORM_LIMIT": "1000000 per minute",
        }
        server, port = serve(folder, lifted)
        try:
            print(f"idle:                      /healthz {idle(port)}")
            result = attack(port, options.attackers, None, options.bursts)
            print(f"bursts, many addresses:    {result}")
            result = attack(port, options.attackers, options.seconds)
            print(f"flood, many addresses:     {result}")
        finally:
            stop(server)
        folder = Path(temporary) / "unbounded"
        folder.mkdir()
        server, port = serve(folder, {**lifted, "ARENA_HASH_SLOTS": "1000"})
        try:
            print(f"idle:                      /healthz {idle(port)}")
            result = attack(port, options.attackers, None, options.bursts)
            print(f"bursts, no hashing bound:  {result}")
            result = attack(port, options.attackers, options.seconds, pages=True)
            print(f"flood of page views:       {result}")
        finally:
            stop(server)


if __name__ == "__main__":
    main()
