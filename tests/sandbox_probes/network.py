"""Try TCP connections to 127.0.0.1:PORT (argv[1]) and to outside addresses; report
each outcome and how long it took."""

import json
import socket
import sys
import time


def connect(host: str, port: int) -> dict[str, object]:
    start = time.perf_counter()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.settimeout(5)
    try:
        sock.connect((host, port))
        outcome = "connected"
    except OSError as exc:
        outcome = f"{type(exc).__name__}: {exc.strerror or exc}"
    finally:
        sock.close()
    return {"outcome": outcome, "seconds": time.perf_counter() - start}


def resolve(name: str) -> str:
    try:
        return str(socket.getaddrinfo(name, 80))
    except OSError as exc:
        return f"{type(exc).__name__}: {exc}"


print(
    json.dumps(
        {
            "loopback": connect("127.0.0.1", int(sys.argv[1])),
            "outside": connect("1.1.1.1", 53),
            "outside_http": connect("8.8.8.8", 443),
            "dns": resolve("pypi.org"),
        }
    )
)
