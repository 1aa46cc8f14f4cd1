"""Reference bots, written only against arena's public bot interface.

Dependency rule: bots import ``arena`` (its public API) and the standard library only;
never ``arena`` internals, ``web`` or ``workers``. See docs/architecture.md.
"""
