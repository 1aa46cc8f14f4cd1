"""Try to write 100 MB to /tmp, /dev/shm and the working directory; report each outcome."""

import json
import os

CHUNK = b"x" * (1024 * 1024)


def fill(path: str) -> dict[str, object]:
    written = 0
    try:
        with open(path, "wb") as f:
            for _ in range(100):
                f.write(CHUNK)
                f.flush()
                written += len(CHUNK)
        outcome = "wrote 100 MB"
    except OSError as exc:
        outcome = f"{type(exc).__name__}: {exc.strerror}"
    finally:
        if os.path.exists(path):
            os.unlink(path)
    return {"outcome": outcome, "mb": written // len(CHUNK)}


print(json.dumps({path: fill(path) for path in ("/tmp/big", "/dev/shm/big", "big")}))
