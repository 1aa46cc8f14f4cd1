"""Print who the probe runs as and its resource limits, then echo stdin to stdout line by
line."""

import json
import os
import resource
import sys

LIMITS = ("RLIMIT_AS", "RLIMIT_CPU", "RLIMIT_NPROC", "RLIMIT_FSIZE", "RLIMIT_NOFILE", "RLIMIT_CORE")
limits = {name: resource.getrlimit(getattr(resource, name)) for name in LIMITS}
ids = {"uid": os.getuid(), "euid": os.geteuid(), "gid": os.getgid(), "pid": os.getpid()}
print(json.dumps({**ids, "limits": limits}))
sys.stdout.flush()
for line in sys.stdin:
    sys.stdout.write(line)
    sys.stdout.flush()
