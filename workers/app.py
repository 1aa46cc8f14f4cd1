"""The Celery app the workers run: ``celery -A workers.app worker`` (``arena worker`` does it).

Configured once by :func:`arena.service.broker.configure` (the broker every send of a
worker goes through) from the environment (``ARENA_BROKER_URL``,
``ARENA_DATABASE_URL``, ``ARENA_*`` timings); the tasks are in :mod:`workers.tasks`.
"""

from __future__ import annotations

import warnings

from celery.exceptions import CPendingDeprecationWarning, SecurityWarning

from arena.service.broker import configure

# The worker starts as root on a server so that each sandboxed bot runs as its own
# unprivileged uid (setpriv, cgroups: docs/deployment.md); the bots never run as root and
# the tasks accept JSON only, so Celery's warning against running as root says nothing here.
warnings.filterwarnings("ignore", message=".*superuser privileges", category=SecurityWarning)
# After a lost broker connection, a match in play goes on (its database lease decides who
# stores it: docs/workers.md), which is worker_cancel_long_running_tasks_on_connection_loss
# = False, set on purpose; Celery warns at each reconnection that its default will change.
warnings.filterwarnings(
    "ignore", message=r"\s*In Celery 5.1 we introduced", category=CPendingDeprecationWarning
)

app = configure()
app.conf.include = ["workers.tasks"]
