"""Playing a match: the bot runtime.

The referee (the host side of the bot protocol, time control, verdicts), the sandbox that
runs an uploaded bot (bubblewrap, seccomp, rlimits, cgroups), the bot kit (the bot side of
the protocol: the only arena file copied into a bot's sandbox, so it is self-contained and
imports nothing from the arena), the built-in strategies, seating a lineup of bots, local
play of built-in strategies and the starter bot.

May import :mod:`arena.engine` and the standard library (``pyseccomp``, lazily, inside
``sandbox``); never a framework (docs/architecture.md; tests/test_layering.py).
"""
