"""Flask application factory and one blueprint per feature.

Dependency rule: web imports ``arena`` and never ``workers`` or ``arena.cli``; its work
reaches the workers through the service's actions (``arena.service.dispatch`` sends tasks
by name). See docs/architecture.md.

``create_app`` is what gunicorn serves: ``gunicorn 'web:create_app()'``
(docker-compose.yml, docs/deployment.md).
"""

import os

# One BLAS thread a web process (set before anything imports numpy): a page that fits
# ratings (a tournament's standings) runs on one of the server's threads, and OpenBLAS's
# spinning threads on a busy 2-core machine made each solve of 200 entrants take 90 ms
# instead of 1 ms (benchmarks/web.py --mode load), as they did in the workers.
for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

from web.app import create_app  # noqa: E402

__all__ = ["create_app"]
