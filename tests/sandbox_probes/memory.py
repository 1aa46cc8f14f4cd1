"""Allocate (and touch) memory 16 MB at a time until something stops it."""

import json

hoard = []
try:
    while True:
        hoard.append(b"x" * (16 * 1024 * 1024))
except MemoryError:
    mb = 16 * len(hoard)
    hoard.clear()
    print(json.dumps({"memory_error": True, "mb": mb}))
