"""Flask application factory and one blueprint per feature.

Dependency rule: web imports ``arena`` and never ``workers`` or ``arena.cli``; its work
reaches the workers through the service's actions (``arena.service.dispatch`` sends tasks
by name). See docs/architecture.md.

``create_app`` is what gunicorn serves: ``gunicorn 'web:create_app()'``
(docker-compose.yml, docs/deployment.md).
"""

from web.app import create_app

__all__ = ["create_app"]
