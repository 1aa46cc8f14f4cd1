"""The Celery app the workers run: ``celery -A workers.app worker`` (``arena worker`` does it).

Configured by :func:`arena.service.broker.make_app` from the environment (``ARENA_BROKER_URL``,
``ARENA_DATABASE_URL``, ``ARENA_*`` timings); the tasks are in :mod:`workers.tasks`.
"""

from __future__ import annotations

from arena.service.broker import make_app

app = make_app()
app.conf.include = ["workers.tasks"]
