"""Vendored front-end files: fetched from npm once, checked, committed (no CDN, no build).

``python -m web.vendor`` downloads each library of :data:`LIBRARIES` with ``npm pack``,
checks the tarball against the registry's ``dist.integrity`` (SHA-512), copies the one file
the pages load into ``web/static/vendor/`` and writes ``MANIFEST.json`` (name, version,
license, the npm integrity, and the SHA-256 of each copied file). A test re-hashes the
committed files against the manifest, offline.
"""

from __future__ import annotations

import base64
import hashlib
import json
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

__all__ = ["LIBRARIES", "MANIFEST", "VENDOR", "Library", "file_sha256", "main"]

VENDOR = Path(__file__).resolve().parent / "static" / "vendor"
MANIFEST = VENDOR / "MANIFEST.json"


@dataclass(frozen=True)
class Library:
    """One npm package and the file of it the pages load."""

    package: str
    version: str
    license: str
    file: str  # inside the package
    target: str  # under web/static/vendor/


LIBRARIES = (
    Library("htmx.org", "2.0.11", "0BSD", "dist/htmx.min.js", "htmx.min.js"),
    Library("uplot", "1.6.32", "MIT", "dist/uPlot.iife.min.js", "uPlot.iife.min.js"),
    Library("uplot", "1.6.32", "MIT", "dist/uPlot.min.css", "uPlot.min.css"),
)


def file_sha256(path: Path) -> str:
    """The hex SHA-256 of a file."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _npm(*args: str, cwd: Path) -> str:
    return subprocess.run(
        ["npm", *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout.strip()


def fetch(library: Library, work: Path) -> dict[str, str]:
    """Download, check and copy one library; return its manifest entry."""
    spec = f"{library.package}@{library.version}"
    integrity = _npm("view", spec, "dist.integrity", cwd=work)
    tarball = work / _npm("pack", spec, cwd=work).splitlines()[-1]
    digest = base64.b64encode(hashlib.sha512(tarball.read_bytes()).digest()).decode()
    if integrity != f"sha512-{digest}":
        raise SystemExit(f"{spec}: the tarball does not match the registry's {integrity}")
    with tarfile.open(tarball) as archive:
        member = archive.extractfile(f"package/{library.file}")
        if member is None:
            raise SystemExit(f"{spec}: no {library.file} in the package")
        target = VENDOR / library.target
        target.write_bytes(member.read())
    return {
        "package": library.package,
        "version": library.version,
        "license": library.license,
        "npm_integrity": integrity,
        "file": library.file,
        "target": library.target,
        "sha256": file_sha256(target),
    }


def main() -> int:
    """Fetch every library and write the manifest."""
    VENDOR.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as work:
        entries = [fetch(library, Path(work)) for library in LIBRARIES]
    MANIFEST.write_text(json.dumps(entries, indent=2) + "\n")
    for entry in entries:
        print(f"{entry['package']} {entry['version']} -> {entry['target']} ({entry['sha256']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
