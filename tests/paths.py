"""Paths the tests share: the repository, its reference bots and docs, and the tests' own
zoo of misbehaving bots and sandbox probes; and the sandbox slots of tests that choose
their own."""

import os
from pathlib import Path

from arena.match.sandbox import SLOT_BLOCK, SLOT_BLOCKS

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
#: The reference bots (bots/), written exactly like users' bots.
REFERENCE_BOTS = REPO / "bots"
DOCS = REPO / "docs"
#: The zoo: bots that crash, hang, lie or attack, each with its expected verdict.
ZOO = TESTS / "bots"
#: Programs run inside the sandbox to probe what a bot can see and do.
PROBES = TESTS / "sandbox_probes"

#: The sandbox slots of tests that pick their own: above every slot the machine-wide
#: registry hands out (arena.match.sandbox: SLOT_BLOCKS * SLOT_BLOCK), so a test's slot is
#: never a runner's (a cgroup or uid shared with a concurrent `arena play` would make
#: either fail), and a range per pytest-xdist worker.
_TEST_SLOTS = SLOT_BLOCKS * SLOT_BLOCK + 1000


def own_slot(offset: int) -> int:
    """A sandbox slot of this test process's own range (``offset`` 0-999)."""
    assert 0 <= offset < 1000, offset
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw")
    return _TEST_SLOTS + 1000 * int(worker or 0) + offset


def write_readable(folder: Path, name: str, text: str) -> Path:
    """Write ``text`` to ``folder/name``, readable by every user (the sandbox's uid)."""
    path = folder / name
    path.write_text(text, encoding="utf-8")
    path.chmod(0o644)
    return path
