"""Flask application factory and one blueprint per feature.

Dependency rule: web imports ``arena`` and never ``workers``; it enqueues tasks by
name (``send_task``). See docs/architecture.md.
"""
