"""snoop.py's attempts, made by a kept (warm) process in its second match: the first
match (``FIRST_MATCH_GAMES`` games) it plays quietly, then it looks for secrets, a shell
and the network, reports on stderr, and plays on: no fault.

The test reads the stderr tail: inside the sandbox every attempt must fail, in a reused
process as in a fresh one.
"""

import os
import socket
import subprocess
import sys
from pathlib import Path

#: Files the test plants on the host (another bot's source, a database) and system secrets.
SECRETS = (
    "/etc/passwd",
    "/etc/shadow",
    "/var/tmp/arena-zoo-other-bot.py",
    "/var/tmp/arena-zoo-arena.db",
)
#: The test listens here on the host's loopback.
LOOPBACK_PORT = 47913
_done = False
#: Games of the first match (the test plays its first match with this many games).
FIRST_MATCH_GAMES = 2
_games = 0


def _try(label: str, action) -> None:  # type: ignore[no-untyped-def]
    try:
        result = action()
        print(f"LEAK {label}: {str(result)[:80]!r}", file=sys.stderr)
    except Exception as exc:
        print(f"ok {label}: {type(exc).__name__}", file=sys.stderr)


def _connect(host: str, port: int) -> str:
    with socket.create_connection((host, port), timeout=1):
        return "connected"


def _outside_processes() -> list[str]:
    """Command lines in /proc that belong to the host (the test runner), not the sandbox."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if b"pytest" in cmdline or b"xdist" in cmdline:
            found.append(cmdline.decode(errors="replace"))
    return found


class Bot:
    def __init__(self) -> None:
        global _games
        _games += 1
        self.number = _games

    def play(self, observation):  # type: ignore[no-untyped-def]
        if self.number > FIRST_MATCH_GAMES:
            print(f"game {self.number}", file=sys.stderr)
            return _snoop(observation)
        return observation.legal_moves[0]


def _snoop(observation):  # type: ignore[no-untyped-def]
    global _done
    if not _done:
        _done = True
        for path in SECRETS:
            _try(f"file {path}", lambda path=path: Path(path).read_text())
        _try("work", lambda: os.listdir("/work"))
        _try("root home", lambda: os.listdir("/root"))
        _try("env", lambda: [k for k in os.environ if k.startswith("ARENA_SECRET")] or 1 / 0)
        _try("referee in /proc", lambda: _outside_processes() or 1 / 0)
        _try(
            "shell",
            lambda: (
                subprocess.run(
                    ["/bin/sh", "-c", "cat /etc/passwd"], check=True, capture_output=True
                ).stdout
                or 1 / 0
            ),
        )
        _try("loopback", lambda: _connect("127.0.0.1", LOOPBACK_PORT))
        _try("outside", lambda: _connect("192.0.2.1", 80))
        _try("root", lambda: os.getuid() == 0 or 1 / 0)
    return observation.legal_moves[0]
