"""Start /bin/sh with subprocess and os.system; report what the shell could do."""

import json
import os
import subprocess

script = "id -u; cat /etc/shadow /etc/passwd; ls /root /work; echo pwned > /bot/x; kill -9 1"
try:
    run = subprocess.run(["/bin/sh", "-c", script], capture_output=True, text=True, timeout=10)
    result = {"returncode": run.returncode, "stdout": run.stdout, "stderr": run.stderr}
except OSError as exc:
    result = {"error": str(exc)}
status = os.system("exit 7")
print(json.dumps({"subprocess": result, "os_system": status}))
