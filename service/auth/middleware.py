"""Authentication: who is calling, from ``Authorization: Token``, ``X-API-Key`` or the session cookie.

Sets ``scope["user"]`` (the :class:`~service.auth.identity.Identity`, ``None`` when
anonymous) and ``scope["auth"]`` (its :class:`~service.auth.identity.AuthMethod`) on
``/api/`` and ``/realtime/`` requests. A credential that is presented but not valid
(or a malformed ``Authorization`` header) is a 401, but it is not answered here: the
refusal is deferred (:func:`service.middleware.defer_error`) so that the rate limiter
still counts the request against the caller's IP, with its headers on the 401, and
guessing tokens is rate limited too.
"""

from __future__ import annotations

from http.cookies import SimpleCookie

from litestar.types import ASGIApp, Receive, Scope, Send

from service.auth.services import identify
from service.db import Database
from service.errors import AuthenticationRequired
from service.identity_cache import IdentityCache
from service.middleware import SESSION_COOKIE, api_path, defer_error, request_headers

__all__ = ["AuthenticationMiddleware", "credentials"]


class _BadScheme(AuthenticationRequired):
    """A malformed ``Authorization`` header."""


def credentials(headers: dict[str, str]) -> tuple[str | None, str | None, str | None]:
    """``(token, api_key, session_key)`` presented in ``headers`` (lower-case names).

    Raises:
        AuthenticationRequired: an ``Authorization`` header that is not ``Token <key>``.
    """
    token = api_key = session = None
    auth = headers.get("authorization")
    if auth is not None:
        scheme, _, value = auth.partition(" ")
        if scheme.lower() != "token" or not value.strip():
            raise _BadScheme("Use `Authorization: Token <key>`.")
        token = value.strip()
    if "x-api-key" in headers:
        api_key = headers["x-api-key"].strip()
    if "cookie" in headers:
        cookie: SimpleCookie = SimpleCookie()
        try:
            cookie.load(headers["cookie"])
        except Exception:  # malformed cookie header: treat as absent
            cookie = SimpleCookie()
        if SESSION_COOKIE in cookie:
            session = cookie[SESSION_COOKIE].value
    return token, api_key, session


class AuthenticationMiddleware:
    """Resolve the caller's identity (module docstring).

    Args:
        app: the next ASGI app.
        db: where credentials are looked up.
        cache: recently verified credentials.
    """

    def __init__(self, app: ASGIApp, db: Database, cache: IdentityCache) -> None:
        self.app = app
        self.db = db
        self.cache = cache

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            scope["user"] = None
            scope["auth"] = None
            if api_path(scope):
                try:
                    token, api_key, session = credentials(request_headers(scope))
                    identity = await identify(
                        self.db, token=token, api_key=api_key, session_key=session, cache=self.cache
                    )
                except AuthenticationRequired as refused:
                    defer_error(scope, refused)
                else:
                    scope["user"] = identity
                    scope["auth"] = identity.method if identity else None
        await self.app(scope, receive, send)
