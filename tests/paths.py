"""Paths the tests share: the repository, its reference bots and docs, and the tests' own
zoo of misbehaving bots and sandbox probes."""

from pathlib import Path

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
#: The reference bots (bots/), written exactly like users' bots.
REFERENCE_BOTS = REPO / "bots"
DOCS = REPO / "docs"
#: The zoo: bots that crash, hang, lie or attack, each with its expected verdict.
ZOO = TESTS / "bots"
#: Programs run inside the sandbox to probe what a bot can see and do.
PROBES = TESTS / "sandbox_probes"
