"""CSRF protection of cookie-authenticated requests (double submit of the session's token).

A session-authenticated (``qc_session`` cookie) request with an unsafe method must
echo the session's CSRF token in ``X-CSRFToken``; else it is a 403 ``csrf_failed``.
Token and API-key requests are not cookie-borne, so they are exempt, and so is
``POST /api/auth/login/`` (a stale cookie must not block logging in again). The
token is issued at login (``qc_csrftoken`` cookie and the login response).
"""

from __future__ import annotations

import hmac

from litestar.types import ASGIApp, Receive, Scope, Send

from service.auth.identity import AuthMethod
from service.errors import PermissionDenied
from service.middleware import CSRF_HEADER, request_headers

__all__ = ["CSRFMiddleware"]

_SAFE = frozenset({"GET", "HEAD", "OPTIONS", "TRACE"})
_EXEMPT = frozenset({"/api/auth/login/"})


class CSRFMiddleware:
    """Refuse an unsafe session-authenticated request without the session's CSRF token."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            identity = scope.get("user")
            if (
                identity is not None
                and identity.method is AuthMethod.SESSION
                and scope.get("method", "GET") not in _SAFE
                and scope["path"] not in _EXEMPT
            ):
                sent = request_headers(scope).get(CSRF_HEADER, "")
                if not hmac.compare_digest(sent.encode(), (identity.csrf_token or "").encode()):
                    raise PermissionDenied(
                        "CSRF check failed: send the session's CSRF token in the X-CSRFToken header.",
                        details={"code": "csrf_failed"},
                    )
        await self.app(scope, receive, send)
