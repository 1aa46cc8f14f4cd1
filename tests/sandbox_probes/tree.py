"""List every file, symlink and directory the sandbox shows (but /proc, /dev and /tmp),
and try a few programs a bot should not find."""

import json
import os

seen = []
for root, dirs, files in os.walk("/"):
    if root == "/":
        dirs[:] = [d for d in dirs if d not in ("proc", "dev", "tmp", "sys")]
    for name in dirs:
        path = os.path.join(root, name)
        if os.path.islink(path):
            seen.append(path)
    seen.extend(os.path.join(root, name) for name in files)
print(json.dumps({"paths": sorted(seen), "dirs": sorted(r for r, _, _ in os.walk("/"))[:5000]}))
