"""Fixed-window rate limiting shared across workers (Redis) or per process (memory), and its middleware.

Windows are aligned on multiples of the period since the Unix epoch, so every worker
agrees on when a window ends. ``X-RateLimit-Reset`` is the number of **seconds**
until the current window ends (a delta, as in the IETF RateLimit header draft).
"""

from __future__ import annotations

import asyncio
import math
import time
from typing import NamedTuple, Protocol

from litestar.types import ASGIApp, Receive, Scope, Send

from service.errors import RateLimited
from service.middleware import (
    add_response_headers,
    api_path,
    deferred_error,
    proxy_trust,
    scope_client_ip,
)
from service.settings import RateLimit, Settings

__all__ = [
    "Hit",
    "MemoryRateLimiter",
    "RateLimitMiddleware",
    "RateLimiter",
    "RedisRateLimiter",
    "rate_limit_header_pairs",
    "rate_limit_headers",
]


class Hit(NamedTuple):
    """The outcome of counting one request against a limit."""

    limit: int
    remaining: int
    reset: int  # seconds until the window ends
    allowed: bool


def rate_limit_headers(hit: Hit) -> dict[str, str]:
    """The ``X-RateLimit-*`` headers (and ``Retry-After`` when refused)."""
    headers = {
        "X-RateLimit-Limit": str(hit.limit),
        "X-RateLimit-Remaining": str(hit.remaining),
        "X-RateLimit-Reset": str(hit.reset),
    }
    if not hit.allowed:
        headers["Retry-After"] = str(hit.reset)
    return headers


def rate_limit_header_pairs(hit: Hit) -> list[tuple[bytes, bytes]]:
    """:func:`rate_limit_headers` as raw ASGI header pairs (lower-case names)."""
    pairs = [
        (b"x-ratelimit-limit", str(hit.limit).encode()),
        (b"x-ratelimit-remaining", str(hit.remaining).encode()),
        (b"x-ratelimit-reset", str(hit.reset).encode()),
    ]
    if not hit.allowed:
        pairs.append((b"retry-after", str(hit.reset).encode()))
    return pairs


class RateLimiter(Protocol):
    async def hit(self, key: str, rate: RateLimit) -> Hit:
        """Count one request for ``key`` and say whether it is within ``rate``."""
        ...

    async def close(self) -> None: ...


def _window(rate: RateLimit, now: float) -> tuple[int, int]:
    index = int(now // rate.period)
    reset = max(1, math.ceil((index + 1) * rate.period - now))
    return index, reset


def _hit(rate: RateLimit, count: int, reset: int) -> Hit:
    return Hit(rate.limit, max(rate.limit - count, 0), reset, count <= rate.limit)


class MemoryRateLimiter:
    """Counters in this process's memory (one worker, or tests)."""

    def __init__(self) -> None:
        self._counts: dict[tuple[str, int, int], int] = {}
        self._lock = asyncio.Lock()
        self._sweep_at = 0.0

    async def hit(self, key: str, rate: RateLimit) -> Hit:
        now = time.time()
        index, reset = _window(rate, now)
        slot = (key, rate.period, index)
        count = self._counts.get(slot, 0) + 1
        self._counts[slot] = count
        if now >= self._sweep_at:
            self._sweep(now)
        return _hit(rate, count, reset)

    def _sweep(self, now: float) -> None:
        self._sweep_at = now + 60
        stale = [s for s in self._counts if s[2] < int(now // s[1])]
        for s in stale:
            del self._counts[s]

    async def close(self) -> None:
        self._counts.clear()


class RedisRateLimiter:
    """Counters in Redis (``INCR`` + ``EXPIRE`` in one round trip), shared by all workers."""

    def __init__(self, url: str, prefix: str = "qc:") -> None:
        import redis.asyncio as redis

        self._redis = redis.from_url(url)
        self._prefix = f"{prefix}rl:"

    async def hit(self, key: str, rate: RateLimit) -> Hit:
        index, reset = _window(rate, time.time())
        name = f"{self._prefix}{key}:{rate.period}:{index}"
        async with self._redis.pipeline(transaction=False) as pipe:
            pipe.incr(name)
            pipe.expire(name, rate.period + 5)
            count, _ = await pipe.execute()
        return _hit(rate, int(count), reset)

    async def ping(self) -> None:
        await self._redis.ping()

    async def close(self) -> None:
        await self._redis.aclose()


class RateLimitMiddleware:
    """Count every ``/api/`` and ``/realtime/`` request against its caller's budget.

    The caller is the authenticated user (``scope["user"]``, set by
    :class:`~service.auth.middleware.AuthenticationMiddleware`), else the client IP
    (:func:`service.middleware.client_ip`: anonymous requests, and those whose
    credential was refused). Real-time endpoints have their own budget.
    ``X-RateLimit-*`` headers go on every such response (errors included); beyond
    the limit the answer is a 429 with ``Retry-After``. A refusal deferred by an
    earlier middleware (a bad credential) is raised once the request is counted.

    Args:
        app: the next ASGI app.
        limiter: the counters.
        settings: limits (``QC_RATE_LIMIT_*``) and proxy trust.
    """

    def __init__(self, app: ASGIApp, limiter: RateLimiter, settings: Settings) -> None:
        self.app = app
        self.limiter = limiter
        self.settings = settings
        self.trust = proxy_trust(settings)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and api_path(scope) and self.settings.rate_limit_enabled:
            identity = scope.get("user")
            path: str = scope["path"]
            who = f"u{identity.id}" if identity else f"ip{scope_client_ip(scope, self.trust)}"
            if path.startswith(("/realtime/", "/api/realtime/")):
                rate, key = self.settings.realtime_rate, f"rt:{who}"
            elif identity is not None:
                rate, key = self.settings.authenticated_rate, who
            else:
                rate, key = self.settings.anonymous_rate, who
            hit = await self.limiter.hit(key, rate)
            if not hit.allowed:
                raise RateLimited(
                    f"Rate limit of {rate.limit} requests per {rate.period} s exceeded; retry in {hit.reset} s.",
                    details={
                        "limit": rate.limit,
                        "period_seconds": rate.period,
                        "retry_after": hit.reset,
                    },
                    headers=rate_limit_headers(hit),
                )
            add_response_headers(scope, rate_limit_header_pairs(hit))
        if (refused := deferred_error(scope)) is not None:
            raise refused
        await self.app(scope, receive, send)
