"""Storage: the only package that imports SQLAlchemy (docs/storage.md).

Import from the modules (``arena.store.db``: ``connect``, ``upgrade``, ``Store``;
``arena.store.models``: the tables): this package itself imports nothing, so the layering
test can walk the core without loading SQLAlchemy.
"""
