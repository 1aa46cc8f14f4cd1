"""What a deployment adds to the library: the broker's configuration (Celery), playing a
claimed match and sweeping up after dead workers and lost tasks, and stored standings and
ratings (docs/workers.md).

May import :mod:`arena.store` and the layers below it, and Celery (``broker``, the
process's broker configured once at start; ``dispatch``, through which every send goes,
names kombu's errors); never Flask, click or rich. The applications on top --
:mod:`arena.cli`, ``workers`` and ``web`` -- use it (docs/architecture.md;
tests/test_layering.py).

Import from the modules: this package itself imports nothing.
"""
