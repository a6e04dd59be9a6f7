"""The request pipeline around the whole ASGI app, composed in one place.

The middlewares are described in :mod:`service.middleware`; this module only puts
them in order, outermost first, so that none of their modules imports another's.
"""

from __future__ import annotations

from litestar.types import ASGIApp

from service.auth.middleware import AuthenticationMiddleware
from service.csrf import CSRFMiddleware
from service.middleware import RateLimitMiddleware, RequestContextMiddleware
from service.state import Resources

__all__ = ["request_pipeline"]


def request_pipeline(app: ASGIApp, resources: Resources) -> ASGIApp:
    """``app`` wrapped in the pipeline (:mod:`service.middleware`), outermost first."""
    app = CSRFMiddleware(app)
    app = RateLimitMiddleware(app, resources.limiter, resources.settings)
    app = AuthenticationMiddleware(app, resources.db, resources.identities)
    return RequestContextMiddleware(app)
