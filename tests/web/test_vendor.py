"""The vendored front-end files are exactly what web/static/vendor/MANIFEST.json says
(checked offline; ``python -m web.vendor`` fetches them and checks npm's integrity)."""

from __future__ import annotations

import json

from web.vendor import LIBRARIES, MANIFEST, VENDOR, file_sha256


def test_every_vendored_file_matches_its_manifest() -> None:
    entries = json.loads(MANIFEST.read_text())
    assert [(e["package"], e["version"]) for e in entries] == [
        (library.package, library.version) for library in LIBRARIES
    ]
    for entry in entries:
        assert entry["npm_integrity"].startswith("sha512-")
        assert file_sha256(VENDOR / entry["target"]) == entry["sha256"], entry["target"]
    on_disk = {path.name for path in VENDOR.iterdir()} - {"MANIFEST.json"}
    assert on_disk == {entry["target"] for entry in entries}
