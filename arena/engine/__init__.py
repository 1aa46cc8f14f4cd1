"""The rules engine: tiles, rule sets, deals, rounds, games, what a bot sees, game records.

Imports the standard library and :mod:`arena.errors` only: no other layer of the arena and
no third-party package (docs/architecture.md; checked by tests/test_layering.py). The names a
user needs are re-exported by :mod:`arena` itself (``from arena import Game, find_rules``).
"""
