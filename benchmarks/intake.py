"""The intake's latency: from a web upload (the ``/upload`` form posted as a browser posts it,
through the app's test client) to its placement's first match done, on a real worker
(``arena worker``, 2 processes, Redis, SQLite, bots sandboxed), ``--uploads`` times in one
run, each waiting for the last placement to end; prints each time and the median, and the
POST's own time (the intake in the web process: screening, storing, sending the check).

The script touches only what every version of the arena has had since placements began
(the form, the upload's page view, the placement's name, its matches' statuses), so the
same file measures an older tree too: export it (``git archive``) and run this script with
it first on the path, e.g.

    ./run python benchmarks/intake.py [--uploads 5] [--posts N: N POSTs alone, no worker]
    PYTHONPATH=/tmp/before ./run python benchmarks/intake.py --uploads 5
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

# Not this folder first (its web.py would shadow the web app), and the repository last: a
# tree on PYTHONPATH comes first (benchmarks.tournament, arena, web).
if sys.path and Path(sys.path[0]).resolve() == Path(__file__).resolve().parent:
    sys.path.pop(0)
sys.path.append(str(Path(__file__).resolve().parent.parent))

import arena
from arena.service.accounts import create_account, password_hasher
from arena.service.uploads import upload_view
from arena.store.db import Store, connect, upgrade
from arena.store.matches import tournament_id_named
from arena.store.queue import tournament_progress
from benchmarks.tournament import _redis, _worker

ROOT = Path(__file__).resolve().parent.parent
PASSWORD = "correct horse battery"
OPPONENTS = ("random", "greedy", "counter", "fives")


def _wait(what: str, ready: Callable[[], bool], timeout: float = 300.0) -> float:
    """Poll ``ready()`` every 20 ms until it is true; the monotonic time it became so."""
    deadline = time.monotonic() + timeout
    while not ready():
        if time.monotonic() > deadline:
            sys.exit(f"timed out waiting for {what}")
        time.sleep(0.02)
    return time.monotonic()


def _placement(store: Store, upload_id: int) -> int | None:
    view = upload_view(store, upload_id)
    if view is None or view.placement is None:
        return None
    return tournament_id_named(store, view.placement)


def measure(uploads: int, directory: Path) -> tuple[list[float], list[float]]:
    """Seconds from each upload's POST to its placement's first match done, and the
    seconds of each POST itself."""
    from web import create_app

    url = f"sqlite:///{directory / 'arena.db'}"
    upgrade(url)
    store = connect(url)
    hasher = password_hasher(cheap=True)
    try:
        for bot in OPPONENTS:
            store.add_bot_version("reference", bot, (ROOT / "bots" / f"{bot}.py").read_text(), {})
        create_account(store, "ada", PASSWORD, hasher=hasher)
        with _redis(directory) as broker:
            env = {"ARENA_DATABASE_URL": url, "ARENA_BROKER_URL": broker}
            with _worker(directory, env, 2):
                os.environ["ARENA_BROKER_URL"] = broker  # the app's broker, in every version
                app = create_app(url, {"ARENA_PASSWORD_HASHER": hasher})
                client = app.test_client()

                def token(path: str) -> str:
                    page = client.get(path).get_data(as_text=True)
                    found = re.search(r'name="csrf_token" value="([^"]+)"', page)
                    assert found is not None, path
                    return found.group(1)

                login = {"name": "ada", "password": PASSWORD, "csrf_token": token("/login")}
                assert client.post("/login", data=login).status_code == 302
                source = (ROOT / "bots" / "greedy.py").read_bytes()
                times: list[float] = []
                posted: list[float] = []  # the POST's own time: the intake in the web process
                for number in range(uploads):
                    form = {
                        "csrf_token": token("/upload"),
                        "name": "mine",
                        "source": (io.BytesIO(source + f"\n# {number}\n".encode()), "mine.py"),
                    }
                    start = time.monotonic()
                    reply = client.post("/upload", data=form, content_type="multipart/form-data")
                    posted.append(time.monotonic() - start)
                    upload_id = int(reply.headers["Location"].rsplit("/", 1)[1])

                    def first_done(upload_id: int = upload_id) -> bool:
                        found = _placement(store, upload_id)
                        return found is not None and tournament_progress(store, found)["done"] > 0

                    times.append(_wait("the first match", first_done) - start)
                    print(
                        f"upload {number + 1}: {times[-1]:.2f} s (the POST "
                        f"{posted[-1] * 1000:.0f} ms)",
                        flush=True,
                    )
                    placement = _placement(store, upload_id)
                    assert placement is not None

                    def ended(placement: int = placement) -> bool:
                        counts = tournament_progress(store, placement)
                        return counts["pending"] == counts["running"] == 0

                    _wait("the placement's end", ended)
        return times, posted
    finally:
        store.close()


def measure_posts(posts: int, directory: Path) -> list[float]:
    """Seconds of each of ``posts`` upload POSTs alone (a filesystem broker no worker reads:
    the intake in the web process, nothing after it)."""
    from web import create_app

    url = f"sqlite:///{directory / 'posts.db'}"
    upgrade(url)
    store = connect(url)
    hasher = password_hasher(cheap=True)
    try:
        create_account(store, "ada", PASSWORD, hasher=hasher)
        os.environ["ARENA_BROKER_URL"] = f"filesystem://{directory / 'q'}"
        app = create_app(url, {"ARENA_PASSWORD_HASHER": hasher})
        client = app.test_client()
        page = client.get("/login").get_data(as_text=True)
        found = re.search(r'name="csrf_token" value="([^"]+)"', page)
        assert found is not None
        login = {"name": "ada", "password": PASSWORD, "csrf_token": found.group(1)}
        assert client.post("/login", data=login).status_code == 302
        page = client.get("/upload").get_data(as_text=True)
        found = re.search(r'name="csrf_token" value="([^"]+)"', page)  # the session's now
        assert found is not None
        source = (ROOT / "bots" / "greedy.py").read_bytes()
        times = []
        for number in range(posts):
            form = {
                "csrf_token": found.group(1),
                "name": f"bot{number}",
                "source": (io.BytesIO(source + f"\n# {number}\n".encode()), "mine.py"),
            }
            start = time.monotonic()
            reply = client.post("/upload", data=form, content_type="multipart/form-data")
            times.append(time.monotonic() - start)
            assert reply.status_code == 302, reply.get_data(as_text=True)[-500:]
        return times
    finally:
        store.close()


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--uploads", type=int, default=5, help="Uploads to time.")
    parser.add_argument(
        "--posts", type=int, default=0, help="Time this many POSTs alone instead (no worker)."
    )
    args = parser.parse_args(argv)
    print(f"arena from {Path(arena.__file__).parent}")
    directory = Path(tempfile.mkdtemp(prefix="arena-intake-"))
    if args.posts:
        try:
            ms = sorted(t * 1000 for t in measure_posts(args.posts, directory))
        finally:
            shutil.rmtree(directory, ignore_errors=True)
        p95 = ms[min(len(ms) - 1, int(len(ms) * 0.95))]
        print(f"the POST: median {statistics.median(ms):.1f} ms, p95 {p95:.1f} ({len(ms)} posts)")
        return
    try:
        times, posted = measure(args.uploads, directory)
    finally:
        with contextlib.suppress(OSError):
            shutil.rmtree(directory)
    print(
        f"upload to its placement's first match: median {statistics.median(times):.2f} s, "
        f"min {min(times):.2f}, max {max(times):.2f} ({len(times)} uploads); the POST: "
        f"median {statistics.median(posted) * 1000:.0f} ms"
    )


if __name__ == "__main__":
    main()
