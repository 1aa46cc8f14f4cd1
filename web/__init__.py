"""Flask application factory and one blueprint per feature.

Dependency rule: web imports ``arena`` and never ``workers``; it enqueues tasks by
name (``send_task``). See docs/architecture.md.

``create_app`` is what gunicorn serves: ``gunicorn 'web:create_app()'``
(docker-compose.yml, docs/deployment.md).
"""

from web.app import create_app

__all__ = ["create_app"]
