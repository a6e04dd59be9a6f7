"""Bearer-key authentication, the caller's project, and a per-project rate limit.

Keys are created with ``python -m textgen keys create NAME [--project P]``
(stored as SHA-256 hashes) or passed in ``TEXTGEN_API_KEYS`` (project
``default``). A missing, unknown or revoked key is a 401; every request reads
the key's row, so a revocation applies to the very next request. The key's
project is put on ``connection.state.project``; every resource is scoped by it.
The project's rate limit (:mod:`textgen.ratelimit`) is checked here too.
"""

from __future__ import annotations

from typing import Any

from litestar.connection import ASGIConnection
from litestar.handlers.base import BaseRouteHandler
from litestar.types import ASGIApp, Message, Receive, Scope, Send

from textgen.errors import APIError
from textgen.ratelimit import Limiter, headers
from textgen.store import DEFAULT_PROJECT, Store, hash_key

__all__ = ["Authenticator", "project_of", "ratelimit_headers"]


def project_of(connection: ASGIConnection[Any, Any, Any, Any]) -> str:
    """The project the authenticated key belongs to."""
    return str(connection.state.project)


class Authenticator:
    """A Litestar guard: checks ``Authorization: Bearer <key>`` and the project's rate limit.

    Args:
        store: Where created keys live.
        static_keys: Keys accepted without the store (from settings; project ``default``).
        limiter: Counts requests per project; ``None`` disables the limit.
    """

    def __init__(self, store: Store, static_keys: tuple[str, ...], limiter: Limiter | None) -> None:
        self.store = store
        self.static = {hash_key(k) for k in static_keys}
        self.limiter = limiter

    async def __call__(
        self, connection: ASGIConnection[Any, Any, Any, Any], handler: BaseRouteHandler
    ) -> None:
        del handler  # the same rule for every route
        header = connection.headers.get("authorization", "")
        scheme, _, key = header.partition(" ")
        if scheme.lower() != "bearer" or not key.strip():
            raise APIError(
                401,
                "You didn't provide an API key. Provide it in the Authorization header "
                "(Authorization: Bearer YOUR_KEY).",
                code="missing_api_key",
            )
        digest = hash_key(key.strip())
        project = DEFAULT_PROJECT if digest in self.static else await self.store.key_project(digest)
        if project is None:
            raise APIError(401, "Incorrect API key provided.", code="invalid_api_key")
        connection.state.project = project
        if self.limiter is None:
            return
        decision = await self.limiter.hit(project)
        connection.state.ratelimit = headers(decision)
        if not decision.allowed:
            raise APIError(
                429,
                f"Rate limit reached: {decision.limit} requests per minute for this project. "
                f"Retry after {connection.state.ratelimit['Retry-After']} s.",
                code="rate_limit_exceeded",
                type="requests",
            )


def ratelimit_headers(app: ASGIApp) -> ASGIApp:
    """ASGI middleware: adds the ``x-ratelimit-*`` headers the guard computed to every answer."""

    async def middleware(scope: Scope, receive: Receive, send: Send) -> None:
        async def send_with_headers(message: Message) -> None:
            found = (scope.get("state") or {}).get("ratelimit")
            if message["type"] == "http.response.start" and found:
                present = {name.lower() for name, _ in message.get("headers", [])}
                extra = [(k.lower().encode(), v.encode()) for k, v in found.items() if k.lower().encode() not in present]
                message["headers"] = [*message.get("headers", []), *extra]
            await send(message)

        await app(scope, receive, send_with_headers)

    return middleware
