"""Storage: users, bots and their versions, rule sets, tournaments, matches, game records
and ratings in a database (SQLite by default, PostgreSQL for deployments), its Alembic
migrations, and the match queue the workers claim from (docs/storage.md).

The only package that imports SQLAlchemy. May import :mod:`arena.compete`,
:mod:`arena.match` and :mod:`arena.engine`; never Celery, Flask, click or rich
(docs/architecture.md; tests/test_layering.py).

Import from the modules (``arena.store.db``: ``connect``, ``upgrade``, ``Store``;
``arena.store.models``: the tables): this package itself imports nothing.
"""
