"""Celery app and tasks that run matches and tournaments in the background.

Dependency rule: workers import ``arena`` and never ``web``. Tasks take ids, have
explicit names and time limits, and are idempotent. See docs/architecture.md.
"""
