"""Bearer-key authentication, the caller's project, and a per-project rate limit.

Keys are created with ``python -m textgen keys create NAME [--project P]``
(stored as SHA-256 hashes) or passed in ``TEXTGEN_API_KEYS`` (project
``default``). A missing, unknown or revoked key is a 401; every request reads
the key's row, so a revocation applies to the very next request. The key's
project is put on ``connection.state.project``; every resource is scoped by it.
"""

from __future__ import annotations

import time
from collections import deque
from typing import Any

from litestar.connection import ASGIConnection
from litestar.handlers.base import BaseRouteHandler

from textgen.errors import APIError
from textgen.store import DEFAULT_PROJECT, Store, hash_key

__all__ = ["Authenticator", "project_of"]


def project_of(connection: ASGIConnection[Any, Any, Any, Any]) -> str:
    """The project the authenticated key belongs to."""
    return str(connection.state.project)


class Authenticator:
    """A Litestar guard: checks ``Authorization: Bearer <key>`` and the rate limit.

    Args:
        store: Where created keys live.
        static_keys: Keys accepted without the store (from settings).
        per_minute: Requests per key per minute; ``0`` disables the limit.
    """

    def __init__(self, store: Store, static_keys: tuple[str, ...], per_minute: int) -> None:
        self.store = store
        self.static = {hash_key(k) for k in static_keys}
        self.per_minute = per_minute
        self._hits: dict[str, deque[float]] = {}

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
        self._limit(project)

    def _limit(self, digest: str) -> None:
        if not self.per_minute:
            return
        now = time.monotonic()
        hits = self._hits.setdefault(digest, deque())
        while hits and hits[0] <= now - 60.0:
            hits.popleft()
        if len(hits) >= self.per_minute:
            raise APIError(
                429,
                f"Rate limit reached: {self.per_minute} requests per minute for this project. "
                "Retry after a minute.",
                code="rate_limit_exceeded",
                type="requests",
            )
        hits.append(now)
