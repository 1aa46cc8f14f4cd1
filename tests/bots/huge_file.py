"""Tries to write a 200 MB file, then plays on: contained (file size limit), no fault."""

import sys


def play(observation):  # type: ignore[no-untyped-def]
    try:
        with open("/tmp/huge", "wb") as handle:
            for _ in range(200):
                handle.write(b"x" * (1 << 20))
        print("WROTE 200 MB", file=sys.stderr)
    except OSError as exc:
        print(f"write refused: {exc}", file=sys.stderr)
    return observation.legal_moves[0]
