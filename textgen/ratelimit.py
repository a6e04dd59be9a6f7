"""Per-project request limits over a sliding minute: in process memory, or shared through Redis.

With ``TEXTGEN_REDIS_URL`` set, every instance counts in the same Redis sorted
set per project (one atomic script, Redis's own clock), so N instances allow the
limit once, not N times. Each answer carries OpenAI's headers
``x-ratelimit-limit-requests``, ``x-ratelimit-remaining-requests`` and
``x-ratelimit-reset-requests`` (the time until the window is empty again); a
refused request gets ``Retry-After``: the seconds until the oldest counted
request leaves the window, the true wait.
"""

from __future__ import annotations

import asyncio
import math
import secrets
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

__all__ = ["Decision", "Limiter", "MemoryLimiter", "RedisLimiter", "headers", "make_limiter"]

WINDOW_SECONDS = 60.0


@dataclass(frozen=True, slots=True)
class Decision:
    """The outcome of one request against the limit."""

    allowed: bool
    limit: int
    remaining: int
    reset_seconds: float  # until every counted request has left the window
    retry_after: float  # until the next request would be allowed (0 when allowed)


class Limiter(Protocol):
    """Counts a project's requests."""

    async def hit(self, project: str) -> Decision:
        """Count one request of ``project`` if the limit allows it."""
        ...

    async def close(self) -> None:
        """Release connections."""
        ...


def _decision(limit: int, hits_after: int, oldest: float, newest: float, now: float, allowed: bool) -> Decision:
    reset = max(0.0, newest + WINDOW_SECONDS - now) if hits_after else 0.0
    retry = 0.0 if allowed else max(0.0, oldest + WINDOW_SECONDS - now)
    return Decision(allowed, limit, max(0, limit - hits_after), reset, retry)


class MemoryLimiter:
    """A sliding-window log per project in this process.

    Args:
        per_minute: Requests per project per minute.
        clock: Seconds, monotonic (tests inject their own).
    """

    def __init__(self, per_minute: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.per_minute = per_minute
        self.clock = clock
        self._hits: dict[str, deque[float]] = {}
        self._lock = asyncio.Lock()

    async def hit(self, project: str) -> Decision:
        """Count one request of ``project`` if the limit allows it."""
        async with self._lock:
            now = self.clock()
            hits = self._hits.setdefault(project, deque())
            while hits and hits[0] <= now - WINDOW_SECONDS:
                hits.popleft()
            allowed = len(hits) < self.per_minute
            if allowed:
                hits.append(now)
            return _decision(self.per_minute, len(hits), hits[0] if hits else now, hits[-1] if hits else now,
                             now, allowed)

    async def close(self) -> None:
        """Nothing to release."""


# KEYS[1]: the project's sorted set; ARGV: limit, window in ms, a unique member.
# Returns {allowed, count after, oldest ms, newest ms, now ms}, all on Redis's clock.
_SCRIPT = """
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
local window = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local count = redis.call('ZCARD', KEYS[1])
local allowed = 0
if count < tonumber(ARGV[1]) then
  redis.call('ZADD', KEYS[1], now, ARGV[3])
  count = count + 1
  allowed = 1
end
redis.call('PEXPIRE', KEYS[1], window)
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
local newest = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
return {allowed, count, oldest[2] or tostring(now), newest[2] or tostring(now), now}
"""


class RedisLimiter:
    """The sliding-window log in Redis, shared by every instance using the same server."""

    def __init__(self, url: str, per_minute: int) -> None:
        import redis.asyncio as redis

        self.per_minute = per_minute
        self._redis: Any = redis.from_url(url)
        self._script = self._redis.register_script(_SCRIPT)

    async def hit(self, project: str) -> Decision:
        """Count one request of ``project`` if the limit allows it."""
        member = f"{time.time_ns()}-{secrets.token_hex(4)}"
        allowed, count, oldest, newest, now = await self._script(
            keys=[f"textgen:ratelimit:{project}"], args=[self.per_minute, int(WINDOW_SECONDS * 1000), member])
        return _decision(self.per_minute, int(count), float(oldest) / 1000, float(newest) / 1000,
                         float(now) / 1000, bool(int(allowed)))

    async def close(self) -> None:
        """Close the connection pool."""
        await self._redis.aclose()


def make_limiter(per_minute: int, redis_url: str) -> Limiter | None:
    """The limiter the settings ask for; ``None`` when the limit is off (0)."""
    if not per_minute:
        return None
    return RedisLimiter(redis_url, per_minute) if redis_url else MemoryLimiter(per_minute)


def _duration(seconds: float) -> str:
    """OpenAI's reset format: ``"1s"``, ``"6m0s"``, ``"250ms"``."""
    if seconds < 1:
        return f"{math.ceil(seconds * 1000)}ms"
    minutes, rest = divmod(math.ceil(seconds), 60)
    return f"{minutes}m{rest}s" if minutes else f"{rest}s"


def headers(decision: Decision) -> dict[str, str]:
    """The ``x-ratelimit-*`` headers of a decision (and ``Retry-After`` when refused)."""
    out = {
        "x-ratelimit-limit-requests": str(decision.limit),
        "x-ratelimit-remaining-requests": str(decision.remaining),
        "x-ratelimit-reset-requests": _duration(decision.reset_seconds),
    }
    if not decision.allowed:
        out["Retry-After"] = str(max(1, math.ceil(decision.retry_after)))
    return out
