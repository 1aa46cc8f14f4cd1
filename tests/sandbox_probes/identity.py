"""Print who the probe runs as, then echo stdin to stdout line by line."""

import json
import os
import sys

print(
    json.dumps({"uid": os.getuid(), "euid": os.geteuid(), "gid": os.getgid(), "pid": os.getpid()})
)
sys.stdout.flush()
for line in sys.stdin:
    sys.stdout.write(line)
    sys.stdout.flush()
