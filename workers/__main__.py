"""``python -m workers ARGS``: Celery's ``celery ARGS`` for a worker of ``workers.app``, as
``arena serve`` starts its workers, through :func:`arena.service.broker.run_celery`: Celery's
worker command alone, without its root command, which imports every command of Celery's
(``python -m celery`` would, ~0.15 CPU s a start)."""

import sys

from arena.service.broker import run_celery

if __name__ == "__main__":
    run_celery(sys.argv[1:])
