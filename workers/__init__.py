"""Celery app and tasks that run matches and tournaments in the background.

Dependency rule: workers import ``arena`` and never ``web``. Tasks take ids, have
explicit names and time limits, and are idempotent. See docs/architecture.md.
"""

import os

# One BLAS thread a worker process (set before anything imports numpy): the pool already has
# a process a core, and OpenBLAS's spinning threads on a busy machine made a refit's fit of
# 200 bots take 0.7 s instead of 0.07 s (benchmarks/live_ratings.py, docs/ratings.md).
for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")
