"""The ``arena`` command: the only package that imports click and rich.

May import every layer of the arena; nothing in the arena imports it back
(docs/architecture.md; tests/test_layering.py).
"""

from arena.cli.main import cli, main

__all__ = ["cli", "main"]
