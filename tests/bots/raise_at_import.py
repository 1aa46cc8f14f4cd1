"""Raises while it is imported: CRASH."""

raise RuntimeError("this bot is broken at import")
