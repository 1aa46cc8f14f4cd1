"""Fork until the kernel refuses; every process then sleeps until killed."""

import json
import os
import sys
import time

forks = 0
error = ""
while True:
    try:
        pid = os.fork()
    except OSError as exc:
        error = exc.strerror or str(exc)
        break
    if pid == 0:
        while True:
            time.sleep(1000)
    forks += 1
print(json.dumps({"forks": forks, "error": error}))
sys.stdout.flush()
while True:
    time.sleep(1000)
