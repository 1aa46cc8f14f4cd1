"""Tries to write a 200 MB file at its first move, then plays on: contained (file size
limit), no fault. (Once, not at every move: each try writes up to the limit.)"""

import sys

TRIED = []


def play(observation):  # type: ignore[no-untyped-def]
    if not TRIED:
        TRIED.append(True)
        try:
            with open("/tmp/huge", "wb") as handle:
                for _ in range(200):
                    handle.write(b"x" * (1 << 20))
            print("WROTE 200 MB", file=sys.stderr)
        except OSError as exc:
            print(f"write refused: {exc}", file=sys.stderr)
    return observation.legal_moves[0]
